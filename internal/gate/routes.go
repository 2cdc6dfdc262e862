package gate

import (
	"context"
	"errors"
	"fmt"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/ibdoctor/ibdoctor/internal/route"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// maxHops bounds a walk, as a switch bounds a packet's life (a loop).
const maxHops = 64

type blockKey struct {
	sw    *fabric.Node
	index int
}

// liveRoutes brings the snapshot's forwarding tables up to date where the
// job's traffic goes: it follows every route from the job's leaf switches
// to each of the job's LIDs, and on each switch a route reaches it
// re-reads the LFT block holding that LID before taking the next hop, so
// the routes followed are the live ones (an SM may have moved them since
// the sweep). Rounds go hop by hop, each round's blocks read at once. It
// returns the blocks it read and what could not be read.
func liveRoutes(ctx context.Context, e *transport.Engine, f *fabric.Fabric, hosts []*fabric.Node, r *reach) (int, []report.Unreached, error) {
	var (
		lids   []uint16
		leaves []*fabric.Node
		seen   = map[*fabric.Node]bool{}
	)
	for _, h := range hosts {
		for _, p := range h.Ports {
			if p == nil || p.Num == 0 {
				continue
			}
			if p.LID != 0 && p.LID < 0xc000 {
				for i := 0; i < 1<<p.LMC; i++ {
					lids = append(lids, p.LID+uint16(i))
				}
			}
			if p.Remote != nil && p.Remote.Node.Type == mad.NodeSwitch && !seen[p.Remote.Node] {
				seen[p.Remote.Node] = true
				leaves = append(leaves, p.Remote.Node)
			}
		}
	}
	if !hasLFT(f) {
		return 0, nil, nil // the snapshot has no tables: nothing to follow
	}
	state := map[blockKey]bool{} // read: true; failed: false
	var (
		un   []report.Unreached
		read int
	)
	for {
		var need []route.Block
		queued := map[blockKey]bool{}
		for _, lid := range lids {
			for _, leaf := range leaves {
				sw := leaf
				for hop := 0; sw != nil && hop < maxHops; hop++ {
					k := blockKey{sw, int(lid) / mad.LFTBlockSize}
					ok, done := state[k]
					if !done {
						if !queued[k] {
							queued[k] = true
							need = append(need, route.Block{Switch: sw, Index: k.index})
						}
						break
					}
					if !ok {
						break // not readable: reported already
					}
					if p := egress(sw, lid); p != nil {
						r.egress[p] = true // its cable is checked once re-read (cables)
					}
					sw = nextSwitch(sw, lid)
				}
			}
		}
		if len(need) == 0 {
			return read, un, nil
		}
		bad, err := r.readBlocks(ctx, e, need)
		if err != nil {
			return read, un, err
		}
		for _, se := range bad {
			un = append(un, report.Unreached{What: se.What, Where: fmt.Sprintf("switch %s (0x%016x)", se.Switch.Description, se.Switch.GUID), Reason: se.Err.Error()}.ReadFailed(se.Err))
		}
		for _, b := range need {
			k := blockKey{b.Switch, b.Index}
			state[k] = !failedBlock(bad, b)
			if state[k] {
				read++
				r.blocks[k] = true
			} else if b.Switch.Switch != nil {
				// The snapshot's table is not the switch's now: routes
				// through it are not known (as check leaves a table with
				// a block unread), not followed on the sweep's entries.
				b.Switch.Switch.LFT = nil
			}
		}
	}
}

// nextSwitch is the switch sw's table sends lid to, or nil when the route
// ends there (at a CA, a missing entry, an uncabled port).
func nextSwitch(sw *fabric.Node, lid uint16) *fabric.Node {
	p := egress(sw, lid)
	if p == nil || p.Remote == nil || p.Remote.Node.Type != mad.NodeSwitch {
		return nil
	}
	return p.Remote.Node
}

// egress is the port switch sw's table sends lid out of, or nil (no
// table, no entry, a port the switch does not have).
func egress(sw *fabric.Node, lid uint16) *fabric.Port {
	if sw.Switch == nil || int(lid) >= sw.Switch.LFT.Len() {
		return nil
	}
	out := sw.Switch.LFT.At(lid)
	if out == 0 || out == fabric.NoRoute || int(out) >= len(sw.Ports) {
		return nil
	}
	return sw.Ports[out]
}

func switchErrors(err error) []*route.SwitchError {
	var out []*route.SwitchError
	var walk func(error)
	walk = func(err error) {
		if err == nil {
			return
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		var se *route.SwitchError
		if errors.As(err, &se) {
			out = append(out, se)
		}
	}
	walk(err)
	return out
}

// failedBlock reports whether bad holds the failure of block b.
func failedBlock(bad []*route.SwitchError, b route.Block) bool {
	want := fmt.Sprintf("LinearForwardingTable block %d", b.Index)
	for _, se := range bad {
		if se.Switch == b.Switch && se.What == want {
			return true
		}
	}
	return false
}

func hasLFT(f *fabric.Fabric) bool {
	for _, n := range f.Nodes {
		if n.Switch != nil && n.Switch.LFT != nil {
			return true
		}
	}
	return false
}

// readBlocks reads blocks as route.ReadBlocks does, each switch the way r
// says, and the blocks of a switch that did not answer once more by a
// directed route around the way that failed, each sent once (a switch
// that answered with a status error is not retried). It returns what
// failed both ways; an error only when ctx ended.
func (r *reach) readBlocks(ctx context.Context, e *transport.Engine, need []route.Block) ([]*route.SwitchError, error) {
	var byLID, byPath []route.Block
	for _, b := range need {
		if r.lid(b.Switch) {
			byLID = append(byLID, b)
		} else {
			byPath = append(byPath, b)
		}
	}
	var bad []*route.SwitchError
	for _, g := range []struct {
		blocks []route.Block
		byLID  bool
	}{{byLID, true}, {byPath, false}} {
		if len(g.blocks) == 0 {
			continue
		}
		err := route.ReadBlocks(ctx, e, g.blocks, g.byLID, 0)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		bad = append(bad, switchErrors(err)...)
	}
	again := map[*fabric.Node]bool{}
	for _, se := range bad {
		if !again[se.Switch] && transport.Unanswered(se.Err) && r.retry(se.Switch) {
			again[se.Switch] = true
			r.first[se.Switch] = se.Err
		}
	}
	if len(again) == 0 {
		return r.blocksBothWays(bad), nil
	}
	var kept []*route.SwitchError
	for _, se := range bad {
		if !again[se.Switch] {
			kept = append(kept, se)
		}
	}
	var retried []route.Block
	for _, b := range need {
		if again[b.Switch] {
			retried = append(retried, b)
		}
	}
	err := route.ReadBlocks(ctx, e.Once(), retried, false, 0)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return r.blocksBothWays(append(kept, switchErrors(err)...)), nil
}

// blocksBothWays words the failures of switches read by a directed
// route after their first way failed with both ways (bothWays).
func (r *reach) blocksBothWays(bad []*route.SwitchError) []*route.SwitchError {
	for _, se := range bad {
		se.Err = r.bothWays(se.Switch, se.Err)
	}
	return bad
}
