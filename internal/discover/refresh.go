package discover

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Refresh re-reads PortInfo of the given ports (of a fabric from an
// earlier discovery or a snapshot) and updates their state, width and
// speed in place. It is what a gate does instead of a whole discovery:
// only the ports a job uses. With byLID the SMPs are LID-routed to each
// node (a switch's port-0 LID, a CA port's own LID), which works from any
// port of the subnet; otherwise they follow the nodes' directed routes,
// which are only valid from the port the fabric was discovered from.
// Ports that cannot be addressed or do not answer are returned as
// Unreachable, with their error, and keep their old values. e is the
// request engine (or its Once: each read sent once).
func Refresh(ctx context.Context, e SMPReader, ports []*fabric.Port, byLID bool, parallel int) []fabric.Unreachable {
	return RefreshCaps(ctx, e, ports, byLID, parallel, map[*fabric.Node]*mad.PortInfo{})
}

// RefreshCaps is Refresh for a caller that re-reads ports again and
// again (top): caps holds the switches' port-0 PortInfo, whose
// capability masks decode the speeds; a switch in it is not asked again,
// one read is added to it. A switch's capabilities do not change while
// it runs.
func RefreshCaps(ctx context.Context, e SMPReader, ports []*fabric.Port, byLID bool, parallel int, caps map[*fabric.Node]*mad.PortInfo) []fabric.Unreachable {
	if parallel <= 0 {
		parallel = e.Options().Window
	}
	var (
		mu  sync.Mutex
		bad []fabric.Unreachable
		wg  sync.WaitGroup
		sem = make(chan struct{}, parallel)
		// via holds, for a CA port without a link, the LID of a port of
		// its node that has one, taken before any re-read: the re-reads
		// below change Remote and LID under mu, concurrently.
		via = map[*fabric.Port]uint16{}
	)
	if byLID {
		for _, p := range ports {
			if q := linkedPort(p); q != nil {
				via[p] = q.LID
			}
		}
	}
	fail := func(n *fabric.Node, num uint8, what string, err error) {
		mu.Lock()
		defer mu.Unlock()
		u := fabric.Unreachable{What: what, Reason: errString(err), Err: err}
		if n.Path != nil {
			u.Path = n.Path
		}
		u.FromGUID, u.FromPort = n.GUID, num
		bad = append(bad, u)
	}
	get := func(p *fabric.Port, pi *mad.PortInfo, num uint8) error {
		if !byLID {
			if p.Node.Path == nil {
				return fmt.Errorf("node %q has no directed route in the snapshot", p.Node.Description)
			}
			_, err := e.GetSMP(ctx, p.Node.Path, pi, uint32(num))
			return err
		}
		lid := p.LID
		if p.Node.Type == mad.NodeSwitch && len(p.Node.Ports) > 0 && p.Node.Ports[0] != nil {
			lid = p.Node.Ports[0].LID
		} else if l, ok := via[p]; ok {
			// A CA's port without a link is read through one that has
			// a link: its own LID leads to no path (trial A15).
			lid = l
		}
		if lid == 0 {
			return fmt.Errorf("node %q has no LID to address it by: %w", p.Node.Description, errNoLID)
		}
		_, err := e.GetSMPByLID(ctx, lid, pi, uint32(num))
		return err
	}
	// A switch's capability masks come from port 0: read those first,
	// all switches at once (one after another cost a round trip each).
	asked := map[*fabric.Node]bool{}
	for _, p := range ports {
		n := p.Node
		if n.Type != mad.NodeSwitch {
			continue
		}
		mu.Lock()
		known := caps[n] != nil
		mu.Unlock()
		if asked[n] || known {
			continue
		}
		asked[n] = true
		wg.Add(1)
		sem <- struct{}{}
		go func(p *fabric.Port) {
			defer func() { <-sem; wg.Done() }()
			pi := new(mad.PortInfo)
			if err := get(p, pi, 0); err != nil {
				fail(p.Node, 0, what(0, err), err)
				return
			}
			mu.Lock()
			caps[p.Node] = pi
			mu.Unlock()
		}(p)
	}
	wg.Wait()
	for _, p := range ports {
		wg.Add(1)
		sem <- struct{}{}
		go func(p *fabric.Port) {
			defer func() { <-sem; wg.Done() }()
			pi := new(mad.PortInfo)
			if err := get(p, pi, p.Num); err != nil {
				fail(p.Node, p.Num, what(p.Num, err), err)
				return
			}
			c := pi
			if p.Node.Type == mad.NodeSwitch {
				c = caps[p.Node]
				if c == nil {
					c = pi
				}
			}
			mu.Lock()
			applyPortInfo(p, pi, c)
			mu.Unlock()
		}(p)
	}
	wg.Wait()
	return bad
}

// SMPReader is what Refresh reads through: a *transport.Engine or its
// transport.Once.
type SMPReader interface {
	Options() transport.Options
	GetSMP(ctx context.Context, path mad.Path, a mad.Attribute, mod uint32) (*mad.SMP, error)
	GetSMPByLID(ctx context.Context, lid uint16, a mad.Attribute, mod uint32) (*mad.SMP, error)
}

// errNoLID: a by-LID read of a node without a LID sends nothing.
var errNoLID = errors.New("no SM has assigned one")

// what names a failed PortInfo read for the report: fabric.WhatNoLID when
// nothing could be sent for want of a LID.
func what(port uint8, err error) string {
	if errors.Is(err, errNoLID) {
		return fabric.WhatNoLID
	}
	return fmt.Sprintf("PortInfo %d", port)
}

// applyPortInfo copies what can change on a live port from pi into p.
// FDR10 needs the Mellanox extended PortInfo, which Refresh does not
// re-read: a port that was FDR10 and still signals QDR stays FDR10.
func applyPortInfo(p *fabric.Port, pi, caps *mad.PortInfo) {
	wasFDR10 := p.SpeedActive == mad.SpeedFDR10
	p.LID, p.LMC = pi.LID, pi.LMC
	p.State, p.PhysState = pi.PortState, pi.PhysState
	p.WidthActive = pi.LinkWidthActive
	p.WidthEnabled = pi.WidthEnabled()
	p.WidthSupported = pi.LinkWidthSupported
	p.SpeedActive = pi.SpeedActive(caps, false)
	if wasFDR10 && p.SpeedActive == mad.SpeedQDR {
		p.SpeedActive = mad.SpeedFDR10
	}
	p.SpeedEnabled = pi.SpeedEnabled(caps) | (p.SpeedEnabled & mad.SpeedFDR10)
	p.SpeedSupported = pi.SpeedSupported(caps) | (p.SpeedSupported & mad.SpeedFDR10)
	p.NeighborMTU, p.MTUCap = pi.NeighborMTU, pi.MTUCap
	// As the MTUs: a gate judges config.vl-mismatch on what it re-read,
	// not on the VLs the sweep saw (trial B16).
	p.VLCap, p.OperVLs = pi.VLCap, pi.OperationalVLs
	p.PKeyEnforce = pkeyEnforce(pi)
	p.MKeyProtect, p.MKeyLease = pi.MKeyProtectBits, pi.MKeyLeasePeriod
	if !p.PhysState.LinkUp() && p.Remote != nil {
		// the cable is gone or the link dropped: no peer any more, by
		// the rule discovery follows
		p.Remote.Remote = nil
		p.Remote = nil
	}
}

// linkedPort returns, for a CA port p without a link, another port of its
// node that has one and a LID, or nil.
func linkedPort(p *fabric.Port) *fabric.Port {
	if p.Node.Type == mad.NodeSwitch || p.Remote != nil {
		return nil
	}
	for _, q := range p.Node.Ports {
		if q != nil && q != p && q.Remote != nil && q.LID != 0 {
			return q
		}
	}
	return nil
}
