package gate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/internal/words"
	"github.com/ibdoctor/ibdoctor/mad"
)

// WhatCable is what a gate lists unread for a port on the job's routes
// whose cable leads elsewhere now than in the snapshot, or whose far end
// could not be checked.
const WhatCable = "cable"

// CablingChanged starts the reason of a WhatCable entry whose cable was
// found leading elsewhere (the prolog's summary groups them by it).
const CablingChanged = "the cabling changed since the sweep"

// cables checks the far end of every port the job's live routes leave a
// switch by (r.egress) against the snapshot's: one NodeInfo by directed
// route out of the port, its NodeGUID and LocalPortNum. The gate follows
// the switches' live tables, but the cables it follows them over are the
// sweep's: a cable moved since (host cables swapped at a leaf, a spine
// cable moved to another port, the SM having re-routed or not) makes a
// live table look wrong over the old cable map, or a real loop look fine
// (trial B17, B4). It returns the ports whose cable leads elsewhere now
// or could not be checked, as unread, and the reason the routing checks
// do not run ("" when every cable checked out). Ports whose PortInfo was
// not read or is not up now (skip, the re-read state), or without a peer
// in the snapshot (listed already), are not checked. movedAt are the
// ports of each cable found moved (its ends in the snapshot and the far
// end now), with why (checks.Snapshot.MovedCables).
func (r *reach) cables(ctx context.Context, e *transport.Engine, pl *placer, skip map[*fabric.Port]bool) (unread []report.Unreached, stale string, movedAt map[fabric.PortID]string) {
	var ports []*fabric.Port
	for p := range r.egress {
		if p.Remote != nil && p.PhysState == mad.PhysLinkUp && !skip[p] && !skip[p.Remote] {
			ports = append(ports, p)
		}
	}
	if len(ports) == 0 {
		return nil, "", nil
	}
	slices.SortFunc(ports, func(a, b *fabric.Port) int {
		if a.Node.GUID != b.Node.GUID {
			if a.Node.GUID < b.Node.GUID {
				return -1
			}
			return 1
		}
		return int(a.Num) - int(b.Num)
	})
	type answer struct {
		p    *fabric.Port
		path mad.Path
		ni   mad.NodeInfo
		err  error
	}
	type way struct {
		path mad.Path
		over drWay
		err  error
	}
	ways := map[*fabric.Node]*way{}
	an := &anchor{}
	answers := make([]answer, len(ports))
	for i, p := range ports {
		answers[i].p = p
		w := ways[p.Node]
		if w == nil {
			w = &way{}
			w.path, w.over, w.err = r.drPath(ctx, e, p.Node, pl, an)
			ways[p.Node] = w
		}
		if w.path == nil {
			answers[i].err = w.err
			continue
		}
		answers[i].path = w.path
	}
	read := func(e smpGetter, which []int) {
		var wg sync.WaitGroup
		sem := make(chan struct{}, max(1, e.Options().Window))
		for _, i := range which {
			wg.Add(1)
			sem <- struct{}{}
			go func(a *answer) {
				defer func() { <-sem; wg.Done() }()
				a.err = nil
				_, a.err = e.GetSMP(ctx, a.path.Extend(a.p.Num), &a.ni, 0)
			}(&answers[i])
		}
		wg.Wait()
	}
	var first []int
	for i := range answers {
		if answers[i].path != nil {
			first = append(first, i)
		}
	}
	read(e, first)
	// A far end that did not answer, or another node than the snapshot's,
	// may only say the way there changed: a cable down or moved, a node
	// dead, on the directed route to the switch, which the snapshot's
	// links do not show. The switch is asked who it is by that route
	// (once per switch with a far end that differs); when it is not
	// itself, or a far end did not answer, its ports are read once more,
	// each read sent once, by a way around every cable the first crossed
	// (as reach.retry does for a node's reads).
	differs := func(a *answer) bool {
		return a.err == nil && (a.ni.NodeGUID != a.p.Remote.Node.GUID || a.ni.LocalPortNum != a.p.Remote.Num)
	}
	self := map[*fabric.Node]bool{} // the switch answered as itself by its way
	checkSelf := func(e smpGetter) {
		asked := map[*fabric.Node]bool{}
		for i := range answers {
			a := &answers[i]
			n := a.p.Node
			if !differs(a) || asked[n] || self[n] {
				continue
			}
			asked[n] = true
			var ni mad.NodeInfo
			_, err := e.GetSMP(ctx, ways[n].path, &ni, 0)
			self[n] = err == nil && ni.NodeGUID == n.GUID
		}
	}
	checkSelf(e)
	var again []int
	rerouted := map[*fabric.Node]bool{}
	for i := range answers {
		a := &answers[i]
		n := a.p.Node
		w := ways[n]
		if a.path == nil || w.over.first == nil || !(transport.Unanswered(a.err) || differs(a) && !self[n]) {
			continue
		}
		if !rerouted[n] {
			rerouted[n] = true
			avoid := w.over.along(w.path)
			for q := range pl.avoid.in(w.over.fab) {
				avoid[q] = true
			}
			alt := w.over.pathTo(n.GUID, avoid)
			if alt == nil {
				continue
			}
			w.path = alt
		}
		if !slices.Equal(w.path, a.path) {
			a.path = w.path
			again = append(again, i)
		}
	}
	if len(again) > 0 {
		read(e.Once(), again)
		checkSelf(e.Once())
	}
	var (
		bad              []report.Unreached
		moved, unchecked []string
	)
	where := func(p *fabric.Port) string { return fmt.Sprintf("%s port %d", p.Node.Description, p.Num) }
	for _, a := range answers {
		p := a.p
		switch {
		case ctx.Err() != nil:
			return nil, "", nil
		case a.err != nil:
			bad = append(bad, report.Unreached{What: WhatCable, Where: where(p),
				Reason: fmt.Sprintf("its far end could not be read by directed route (%s), so the cable could not be checked against the snapshot's (%s)", a.err, portName(p.Remote))}.ReadFailed(a.err))
			unchecked = append(unchecked, portName(p))
			continue
		case a.ni.NodeGUID == p.Remote.Node.GUID && a.ni.LocalPortNum == p.Remote.Num:
			continue
		}
		// Another node, or another port, at the far end: the cable moved
		// when the switch answered as itself by the same way.
		if !self[p.Node] {
			bad = append(bad, report.Unreached{What: WhatCable, Where: where(p),
				Reason: fmt.Sprintf("%s: the directed route to %s does not reach it now, and out of port %d it meets %s where the snapshot has %s; run 'ibdoctor sweep'", CablingChanged, p.Node.Description, p.Num, farName(pl, a.ni), portName(p.Remote))})
			moved = append(moved, "the way to "+p.Node.Description)
			continue
		}
		now := farName(pl, a.ni)
		why := fmt.Sprintf("%s: %s now leads to %s (the snapshot has %s); run 'ibdoctor sweep'", CablingChanged, portName(p), now, portName(p.Remote))
		bad = append(bad, report.Unreached{What: WhatCable, Where: where(p), Reason: why})
		moved = append(moved, portName(p)+" now leads to "+now)
		if movedAt == nil {
			movedAt = map[fabric.PortID]string{}
		}
		for _, id := range []fabric.PortID{{GUID: p.Node.GUID, Port: p.Num}, {GUID: p.Remote.Node.GUID, Port: p.Remote.Num}, {GUID: a.ni.NodeGUID, Port: a.ni.LocalPortNum}} {
			if movedAt[id] == "" {
				movedAt[id] = why
			}
		}
	}
	var why []string
	if len(moved) > 0 {
		why = append(why, CablingChanged+" ("+firstFew(moved)+"): the routes were followed over the snapshot's cables; run 'ibdoctor sweep'")
	}
	if len(unchecked) > 0 {
		why = append(why, "the cables out of "+firstFew(unchecked)+" on the job's routes could not be checked against the snapshot's")
	}
	return bad, strings.Join(why, "; "), movedAt
}

// firstFew joins the first three of said, "and N more" for the rest.
func firstFew(said []string) string { return words.First(said, 3) }

// drPath is a directed route from the gate's port to switch n: the one n
// is read by when it is read by directed route, else one made from the
// gate's switch (anchor) over the part of the snapshot the gate holds,
// else over the snapshot's whole fabric (placer), either avoiding what
// the gate found down or silent (pl.avoid).
func (r *reach) drPath(ctx context.Context, e *transport.Engine, n *fabric.Node, pl *placer, an *anchor) (mad.Path, drWay, error) {
	if !r.lid(n) {
		if n.Path == nil {
			return nil, drWay{}, fmt.Errorf("%s has no directed route in the snapshot", n.Description)
		}
		w := drWay{fab: r.f}
		if r.local != nil && r.local.Remote != nil {
			w.first, w.start = r.local.Remote.Node, mad.Path{r.local.Num}
		}
		return n.Path, w, nil
	}
	if err := an.find(ctx, e, r); err != nil {
		return nil, drWay{}, err
	}
	if first := r.f.NodeByGUID(an.guid); first != nil {
		w := drWay{r.f, first, an.start}
		if path := an.tree(w, pl).to(r.f.NodeByGUID(n.GUID)); path != nil {
			return path, w, nil
		}
	}
	if pl.links == nil && pl.err == nil {
		pl.links, pl.err = pl.snap.Links()
	}
	if pl.err != nil {
		return nil, drWay{}, pl.err
	}
	w := drWay{fab: pl.links, first: pl.links.NodeByGUID(an.guid), start: an.start}
	if w.first != nil {
		if path := an.tree(w, pl).to(pl.links.NodeByGUID(n.GUID)); path != nil {
			return path, w, nil
		}
	}
	return nil, drWay{}, fmt.Errorf("no directed route from this port to %s over the snapshot's links", n.Description)
}

// anchor is the switch the gate's port is cabled to, where its directed
// routes are made from: the snapshot's, or when the snapshot does not
// have the gate's port cabled (its link was down at the sweep) the one
// its NodeInfo by directed route says now (one SMP).
type anchor struct {
	done  bool
	guid  uint64
	start mad.Path
	err   error
	// trees are the searches from the anchor over each fabric routes
	// were made over, avoiding pl.avoid (which stays the same while a
	// gate checks its cables).
	trees map[*fabric.Fabric]*drTree
}

// tree is the search from w's first node over w's fabric avoiding what
// pl avoids, made once per fabric.
func (a *anchor) tree(w drWay, pl *placer) *drTree {
	if t := a.trees[w.fab]; t != nil {
		return t
	}
	if a.trees == nil {
		a.trees = map[*fabric.Fabric]*drTree{}
	}
	t := searchFrom(w.first, w.start, pl.avoid.in(w.fab), nil)
	a.trees[w.fab] = t
	return t
}

func (a *anchor) find(ctx context.Context, e *transport.Engine, r *reach) error {
	if a.done {
		return a.err
	}
	a.done = true
	l := e.Local()
	a.start = mad.Path{l.PortNum}
	if r.local != nil && r.local.Remote != nil {
		a.guid = r.local.Remote.Node.GUID
		return nil
	}
	var ni mad.NodeInfo
	if _, err := e.GetSMP(ctx, a.start, &ni, 0); err != nil {
		a.err = fmt.Errorf("the switch of this port could not be read (%w)", err)
		return a.err
	}
	a.guid = ni.NodeGUID
	return nil
}

// drWay is the fabric a directed route was made over and where it starts
// in it: start reaches first (nil: no other route can be made).
type drWay struct {
	fab   *fabric.Fabric
	first *fabric.Node
	start mad.Path
}

// pathTo is a directed route over w to the node with GUID g, avoiding
// the ports in avoid; nil when there is none.
func (w drWay) pathTo(g uint64, avoid map[*fabric.Port]bool) mad.Path {
	to := w.fab.NodeByGUID(g)
	if to == nil || w.first == nil {
		return nil
	}
	return pathFrom(w.first, w.start, to, avoid)
}

// along is the ports path crosses in w, both ends of each cable, but the
// gate's own cable (no way around it).
func (w drWay) along(path mad.Path) map[*fabric.Port]bool {
	out := map[*fabric.Port]bool{}
	if len(path) < 2 || w.first == nil {
		return out
	}
	sw := w.first
	for _, num := range path[1:] {
		p := portOf(sw, num)
		if p == nil {
			break
		}
		out[p] = true
		if p.Remote == nil {
			break
		}
		out[p.Remote] = true
		sw = p.Remote.Node
	}
	return out
}

// portName names a port as the findings do: "leaf01/33", "gpu001 mlx5_0/1".
func portName(p *fabric.Port) string {
	return fmt.Sprintf("%s/%d", p.Node.Description, p.Num)
}

// farName names what a NodeInfo answered from, as the snapshot names the
// node, with the port it arrived on.
func farName(pl *placer, ni mad.NodeInfo) string {
	return fmt.Sprintf("%s/%d", pl.name(ni.NodeGUID), ni.LocalPortNum)
}

// avoidSet is what a directed route made over the snapshot's links must
// not cross: the nodes with a port the gate could not re-read (silent, or
// refusing), and the ports it re-read not up, by GUID and number (the
// fabric they are looked up in may be a copy).
type avoidSet struct {
	nodes map[uint64]bool
	ports map[[2]uint64]bool
}

// avoidOf is the avoidSet of a gate's re-read: unread are the ports whose
// PortInfo was not read, ports those re-read.
func avoidOf(ports []*fabric.Port, unread map[*fabric.Port]bool) *avoidSet {
	a := &avoidSet{nodes: map[uint64]bool{}, ports: map[[2]uint64]bool{}}
	for p := range unread {
		a.nodes[p.Node.GUID] = true
	}
	for _, p := range ports {
		if !unread[p] && p.PhysState != mad.PhysLinkUp {
			a.ports[[2]uint64{p.Node.GUID, uint64(p.Num)}] = true
		}
	}
	return a
}

// in is the set as ports of fab, both ends of each cable.
func (a *avoidSet) in(fab *fabric.Fabric) map[*fabric.Port]bool {
	if a == nil {
		return nil
	}
	m := map[*fabric.Port]bool{}
	add := func(p *fabric.Port) {
		if p != nil {
			m[p] = true
			if p.Remote != nil {
				m[p.Remote] = true
			}
		}
	}
	for g := range a.nodes {
		if n := fab.NodeByGUID(g); n != nil {
			for _, p := range n.Ports {
				add(p)
			}
		}
	}
	for k := range a.ports {
		if n := fab.NodeByGUID(k[0]); n != nil {
			add(portOf(n, uint8(k[1])))
		}
	}
	return m
}

// smpGetter is an Engine or its Once.
type smpGetter interface {
	GetSMP(ctx context.Context, path mad.Path, a mad.Attribute, mod uint32) (*mad.SMP, error)
	Options() transport.Options
}
