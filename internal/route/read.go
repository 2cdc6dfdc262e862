package route

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// SMPGetter is what ReadLFTs needs from the request engine
// (*transport.Engine implements it).
type SMPGetter interface {
	GetSMP(ctx context.Context, path mad.Path, a mad.Attribute, mod uint32) (*mad.SMP, error)
	GetSMPByLID(ctx context.Context, lid uint16, a mad.Attribute, mod uint32) (*mad.SMP, error)
}

// ReadOptions tune ReadLFTs.
type ReadOptions struct {
	// Parallel bounds the requests ReadLFTs keeps going at once (the
	// engine's own windows still apply); zero means 64.
	Parallel int
	// Switches, if set, limits reading to these switches (nodes of the
	// fabric given to ReadLFTs); the others are left as they are.
	Switches []*fabric.Node
}

// SwitchError is a switch whose table could not be read.
type SwitchError struct {
	Switch *fabric.Node
	What   string // "SwitchInfo", "LinearForwardingTable block 3"
	Err    error
}

func (e *SwitchError) Error() string {
	return fmt.Sprintf("route: reading %s of switch %q (GUID %#016x): %v", e.What, e.Switch.Description, e.Switch.GUID, e.Err)
}

func (e *SwitchError) Unwrap() error { return e.Err }

type getter struct {
	g SMPGetter
}

func (g getter) get(ctx context.Context, n *fabric.Node, a mad.Attribute, mod uint32) error {
	if n.Path != nil {
		_, err := g.g.GetSMP(ctx, n.Path, a, mod)
		return err
	}
	if p := n.Ports[0]; p != nil && p.LID != 0 {
		_, err := g.g.GetSMPByLID(ctx, p.LID, a, mod)
		return err
	}
	return errors.New("switch has neither a directed route nor a LID to address it by")
}

// ReadLFTs reads every switch's SwitchInfo, then LinearForwardingTable
// blocks 0..LinearFDBTop/64, all switches in parallel, and fills
// Switch.LFT (LinearFDBTop+1 entries) and the SwitchInfo fields of
// fabric.Switch. Switches are addressed by their discovery Path, or by
// their LID when they have none. It returns every switch's failure
// joined (each a *SwitchError); those switches keep LFT nil.
func ReadLFTs(ctx context.Context, g SMPGetter, f *fabric.Fabric, o ReadOptions) error {
	par := o.Parallel
	if par <= 0 {
		par = 64
	}
	var sws []*fabric.Node
	nodes := f.Nodes
	if o.Switches != nil {
		nodes = o.Switches
	}
	for _, n := range nodes {
		if n.Type == mad.NodeSwitch && len(n.Ports) > 0 {
			if n.Switch == nil {
				n.Switch = &fabric.Switch{}
			}
			sws = append(sws, n)
		}
	}
	gt := getter{g}
	errs := make([]error, len(sws))
	infos := make([]mad.SwitchInfo, len(sws))
	run(par, len(sws), func(i int) {
		if err := gt.get(ctx, sws[i], &infos[i], 0); err != nil {
			errs[i] = &SwitchError{Switch: sws[i], What: "SwitchInfo", Err: err}
		}
	})
	type job struct {
		sw    int
		block uint32
	}
	// Jobs go block-major — block 0 of every switch, then block 1, ... —
	// so the workers spread over many switches at once. Switch-major
	// order piled them onto one or two switches at a time, where the
	// engine's per-node window let only two proceed.
	var jobs []job
	lfts := make([][]uint8, len(sws))
	maxBlocks := 0
	for i := range sws {
		if errs[i] != nil {
			continue
		}
		si := &infos[i]
		lfts[i] = make([]uint8, int(si.LinearFDBTop)+1)
		maxBlocks = max(maxBlocks, si.LFTBlocks())
	}
	for b := 0; b < maxBlocks; b++ {
		for i := range sws {
			if lfts[i] != nil && b < infos[i].LFTBlocks() {
				jobs = append(jobs, job{i, uint32(b)})
			}
		}
	}
	var mu sync.Mutex
	run(par, len(jobs), func(k int) {
		j := jobs[k]
		var blk mad.LFTBlock
		err := gt.get(ctx, sws[j.sw], &blk, j.block)
		if err != nil {
			mu.Lock()
			if errs[j.sw] == nil {
				errs[j.sw] = &SwitchError{Switch: sws[j.sw], What: fmt.Sprintf("LinearForwardingTable block %d", j.block), Err: err}
			}
			mu.Unlock()
			return
		}
		first := int(j.block) * mad.LFTBlockSize
		copy(lfts[j.sw][first:], blk.Ports[:]) // blocks are disjoint: no lock needed
	})
	for i, s := range sws {
		if errs[i] != nil {
			continue
		}
		si := &infos[i]
		sw := s.Switch
		sw.LinearFDBCap, sw.LinearFDBTop = si.LinearFDBCap, si.LinearFDBTop
		sw.MulticastCap, sw.MulticastTop = si.MulticastFDBCap, si.MulticastFDBTop
		sw.LIDsPerPort, sw.EnhancedPort0 = si.LIDsPerPort, si.EnhancedPort0
		sw.LifeTimeValue, sw.DefaultPort = si.LifeTimeValue, si.DefaultPort
		sw.PartitionCap = si.PartitionEnforcementCap
		sw.LFT = lfts[i]
	}
	return errors.Join(errs...)
}

// run calls fn(0..n-1) on at most par goroutines.
func run(par, n int, fn func(int)) {
	if n == 0 {
		return
	}
	var wg sync.WaitGroup
	ch := make(chan int)
	for w := 0; w < min(par, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ch {
				fn(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		ch <- i
	}
	close(ch)
	wg.Wait()
}
