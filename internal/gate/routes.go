package gate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/ibdoctor/ibdoctor/checks"
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
		bad, err := r.readCompare(ctx, e, need)
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

// blockDiffers reports whether two blocks of a table route some LID
// differently; no entry (0) and no route (NoRoute) are one.
func blockDiffers(a, b *fabric.LFTBlock) bool {
	for i := range a {
		x, y := a[i], b[i]
		if x != y && !((x == 0 || x == fabric.NoRoute) && (y == 0 || y == fabric.NoRoute)) {
			return true
		}
	}
	return false
}

// readCompare reads blocks as readBlocks does and keeps the snapshot's
// entries of those read that differ from the live ones (r.was): the
// switches whose table changed since the sweep.
func (r *reach) readCompare(ctx context.Context, e *transport.Engine, need []route.Block) ([]*route.SwitchError, error) {
	old := make([]*fabric.LFTBlock, len(need))
	for i, b := range need {
		if lft := b.Switch.Switch.LFT; lft != nil && b.Index < lft.NumBlocks() {
			blk := *lft.Block(b.Index)
			old[i] = &blk
		}
	}
	bad, err := r.readBlocks(ctx, e, need)
	if err != nil {
		return nil, err
	}
	for i, b := range need {
		if lft := b.Switch.Switch.LFT; old[i] != nil && lft != nil && !failedBlock(bad, b) && b.Index < lft.NumBlocks() && blockDiffers(old[i], lft.Block(b.Index)) {
			if r.was[b.Switch] == nil {
				r.was[b.Switch] = map[int]fabric.LFTBlock{}
			}
			r.was[b.Switch][b.Index] = *old[i]
		}
	}
	return bad, nil
}

// wholeTables reads, on each switch whose table changed since the sweep
// (a block liveRoutes read differs from the snapshot's), the blocks
// holding every destination behind the job's leaves, so its groups
// toward them are judged on all of them (checks.Snapshot.TablesChanged):
// the sweep's routing.ecmp-imbalance verdict on it is of the old table.
// It returns the switches read whole that way, the blocks read, and what
// could not be read (such a switch is not judged again, and the gate is
// undecided).
func (r *reach) wholeTables(ctx context.Context, e *transport.Engine, f *fabric.Fabric, hosts []*fabric.Node) (map[*fabric.Node]*checks.TableChange, int, []report.Unreached, error) {
	if len(r.was) == 0 {
		return nil, 0, nil, nil
	}
	leaves := map[*fabric.Node]bool{}
	for _, h := range hosts {
		for _, p := range h.Ports {
			if p != nil && p.Remote != nil && p.Remote.Node.Type == mad.NodeSwitch {
				leaves[p.Remote.Node] = true
			}
		}
	}
	idx := map[int]bool{}
	for _, n := range f.Nodes {
		if n.Type == mad.NodeSwitch {
			continue
		}
		for _, p := range n.Ports {
			if p == nil || p.Remote == nil || !leaves[p.Remote.Node] || p.LID == 0 || p.LID >= 0xc000 {
				continue
			}
			for i := 0; i < 1<<min(p.LMC, 7); i++ {
				idx[(int(p.LID)+i)/mad.LFTBlockSize] = true
			}
		}
	}
	var sws []*fabric.Node
	for sw := range r.was {
		sws = append(sws, sw)
	}
	slices.SortFunc(sws, func(a, b *fabric.Node) int { return cmp.Compare(a.GUID, b.GUID) })
	var need []route.Block
	for _, sw := range sws {
		if sw.Switch == nil || sw.Switch.LFT == nil {
			continue
		}
		for i := range idx {
			if !r.blocks[blockKey{sw, i}] {
				need = append(need, route.Block{Switch: sw, Index: i})
			}
		}
	}
	slices.SortFunc(need, func(a, b route.Block) int {
		if c := cmp.Compare(a.Switch.GUID, b.Switch.GUID); c != 0 {
			return c
		}
		return cmp.Compare(a.Index, b.Index)
	})
	bad, err := r.readCompare(ctx, e, need)
	if err != nil {
		return nil, 0, nil, err
	}
	var un []report.Unreached
	whole := map[*fabric.Node]bool{}
	for _, sw := range sws {
		whole[sw] = sw.Switch != nil && sw.Switch.LFT != nil
	}
	read := 0
	for _, b := range need {
		if failedBlock(bad, b) {
			whole[b.Switch] = false
			continue
		}
		read++
		r.blocks[blockKey{b.Switch, b.Index}] = true
	}
	for _, se := range bad {
		un = append(un, report.Unreached{What: se.What, Where: fmt.Sprintf("switch %s (0x%016x)", se.Switch.Description, se.Switch.GUID),
			Reason: se.Err.Error() + " (its table changed since the sweep: its groups are not judged again)"}.ReadFailed(se.Err))
	}
	out := map[*fabric.Node]*checks.TableChange{}
	for sw, ok := range whole {
		if ok {
			out[sw] = &checks.TableChange{Was: r.was[sw]}
		}
	}
	return out, read, un, nil
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
		if !again[se.Switch] && transport.Unanswered(se.Err) && r.retry(ctx, e, se.Switch) {
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
