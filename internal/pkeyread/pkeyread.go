// Package pkeyread reads the P_Key tables the partition checks need: every
// host port's, and those of the switch ports whose PortInfo says they
// enforce partitions. It only sends Gets (SMP P_KeyTable), through the
// request engine and its read-only guard.
package pkeyread

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Getter is what Read needs from the request engine (*transport.Engine
// implements it).
type Getter interface {
	GetSMP(ctx context.Context, path mad.Path, a mad.Attribute, mod uint32) (*mad.SMP, error)
	GetSMPByLID(ctx context.Context, lid uint16, a mad.Attribute, mod uint32) (*mad.SMP, error)
}

// NoLID is the reason a port without a LID was not read by LID (no
// master SM has assigned one).
const NoLID = "no LID to address the port by"

// workers bounds the ports read at once; the engine's own window and
// per-destination limit still apply.
const workers = 32

// Ports returns the ports of f whose tables the checks judge: CA ports
// with a link, and switch ports that enforce partitions and have a link.
// only, when not nil, limits them to those ports (a gate's job).
func Ports(f *fabric.Fabric, only map[*fabric.Port]bool) []*fabric.Port {
	var out []*fabric.Port
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil || p.Num == 0 || p.Remote == nil || p.PhysState != mad.PhysLinkUp {
				continue
			}
			if n.Type == mad.NodeSwitch && p.PKeyEnforce == 0 {
				continue
			}
			if only != nil && !only[p] {
				continue
			}
			out = append(out, p)
		}
	}
	return out
}

// pathTo returns the directed route and attribute modifier port that
// reach p's table: a CA answers for the port an SMP comes in by, so the
// route ends through p; a switch answers for any of its ports.
func pathTo(p *fabric.Port, local *fabric.Node, localPort uint8) (mad.Path, uint8, bool) {
	path, ok := fabric.DRPathTo(p, local, localPort)
	if !ok {
		return nil, 0, false
	}
	if p.Node.Type == mad.NodeSwitch {
		return path, p.Num, true // a switch answers for any of its ports
	}
	return path, 0, true
}

// Read reads the tables of ports. Block 0 first, then the next block
// while the one before was full: subnet managers fill the table from
// index 0 (OpenSM, UFM), so entries past a block with a free entry are
// not read (docs/checks.md says so). A port that does not answer is in
// Unread with the reason: could not decide. localPort is the port
// ibdoctor sends from (f.Nodes[0] is the local node in a discovery);
// byLID sends LID-routed SMPs instead of directed routes (a gate on a
// snapshot whose routes are stale).
func Read(ctx context.Context, g Getter, f *fabric.Fabric, ports []*fabric.Port, localPort uint8, byLID bool) *checks.PartitionView {
	var local *fabric.Node
	if len(f.Nodes) > 0 && f.Nodes[0].Path != nil && len(f.Nodes[0].Path) == 0 {
		local = f.Nodes[0]
	}
	v := &checks.PartitionView{Tables: map[*fabric.Port][]mad.PKey{}, Unread: map[*fabric.Port]string{}, Errs: map[*fabric.Port]error{}}
	var mu sync.Mutex
	next := make(chan *fabric.Port)
	var wg sync.WaitGroup
	for range min(workers, len(ports)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range next {
				keys, why, err := readPort(ctx, g, p, local, localPort, byLID)
				mu.Lock()
				if why != "" {
					v.Unread[p] = why
					if err != nil {
						v.Errs[p] = err
					}
				} else {
					v.Tables[p] = keys
				}
				mu.Unlock()
			}
		}()
	}
	for _, p := range ports {
		if ctx.Err() != nil {
			mu.Lock()
			v.Unread[p] = ctx.Err().Error()
			mu.Unlock()
			continue
		}
		next <- p
	}
	close(next)
	wg.Wait()
	return v
}

// readPort returns the port's valid P_Keys, or why they were not read
// and the read's error when one was sent.
func readPort(ctx context.Context, g Getter, p *fabric.Port, local *fabric.Node, localPort uint8, byLID bool) ([]mad.PKey, string, error) {
	get := func(t *mad.PKeyTable, block uint16) error { return nil }
	if byLID {
		// A CA answers for the port its LID names; a switch for any of
		// its ports, at port 0's LID.
		lid, modPort := p.LID, uint8(0)
		if p.Node.Type == mad.NodeSwitch && p.Node.Ports[0] != nil {
			lid, modPort = p.Node.Ports[0].LID, p.Num
		}
		if lid == 0 {
			return nil, NoLID, nil
		}
		get = func(t *mad.PKeyTable, block uint16) error {
			_, err := g.GetSMPByLID(ctx, lid, t, mad.PKeyTableMod(modPort, block))
			return err
		}
	} else {
		path, modPort, ok := pathTo(p, local, localPort)
		if !ok {
			return nil, "no directed route to the port", nil
		}
		get = func(t *mad.PKeyTable, block uint16) error {
			_, err := g.GetSMP(ctx, path, t, mad.PKeyTableMod(modPort, block))
			return err
		}
	}
	// A switch's external ports hold SwitchInfo.PartitionEnforcementCap
	// entries; a CA's capacity (NodeInfo.PartitionCap) is not kept, and
	// the full-block rule stops first.
	maxBlocks := 2048 / mad.PKeyBlockSize
	if p.Node.Switch != nil && p.Node.Switch.PartitionCap > 0 {
		maxBlocks = mad.PKeyBlocks(p.Node.Switch.PartitionCap)
	}
	var keys []mad.PKey
	for b := 0; b < maxBlocks; b++ {
		var t mad.PKeyTable
		if err := get(&t, uint16(b)); err != nil {
			var se *transport.StatusError
			if b > 0 && errors.As(err, &se) {
				break // past the table's capacity: the agent refused the block
			}
			if b == 0 {
				return nil, err.Error(), err
			}
			return nil, fmt.Sprintf("P_KeyTable block %d: %v", b, err), err
		}
		full := true
		for _, k := range t.Keys {
			if k.Valid() {
				keys = append(keys, k)
			} else {
				full = false
			}
		}
		if !full {
			break
		}
	}
	return keys, "", nil
}
