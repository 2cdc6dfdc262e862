package gate

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/ibdoctor/ibdoctor/internal/snapshot"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// WhatNodeGUID is what a gate lists unread for a job HCA whose NodeInfo
// answered with a GUID the snapshot does not have.
const WhatNodeGUID = "NodeGUID"

// Why a WhatNodeGUID entry's HCA answered another GUID, as its reason
// says it (the prolog's one-line summary groups the HCAs by it).
const (
	// LIDsChanged: its snapshot LID answers as another node, its place
	// in the snapshot as itself.
	LIDsChanged = "the LIDs changed since the sweep"
	// PlaceChanged: its place in the snapshot (or the other node's)
	// holds another node now (a CloneUntold reason says it too).
	PlaceChanged = "place in the snapshot"
	// CloneUntold: a place could not be read to tell a clone from a change.
	CloneUntold = "to tell a clone from a change since the sweep"
	// BoardChanged: a GUID the snapshot does not have at all.
	BoardChanged = "the adapter changed since the sweep"
)

// guids re-reads the NodeInfo of the job's HCAs (one SMP each, addressed
// as reach says) and compares each NodeGUID with the snapshot's: an HCA
// that now answers with another node's GUID (a bad firmware burn, a board
// flashed with a copied image) is a duplicate GUID, which the subnet
// manager and the job's collective library key on. It returns those as
// the fabric model records duplicates (topology.duplicate-guid judges
// them, as in a sweep), and as unread the HCAs that did not answer or
// answer with a GUID the snapshot does not have (the board changed since
// the sweep: the snapshot no longer describes it). HCAs in skip (their
// PortInfo was not read) are not asked again.
//
// It also returns the HCAs whose snapshot LID now answers as another
// node while their place in the snapshot answers as themselves: their
// LIDs moved (an SM reassigned them since the sweep), with the directed
// route that reached them.
func (r *reach) guids(ctx context.Context, e *transport.Engine, snap *snapshot.Snapshot, hcas []*fabric.Node, skip map[*fabric.Node]bool) ([]fabric.DuplicateGUID, []report.Unreached, []movedLID) {
	type answer struct {
		n   *fabric.Node
		ni  mad.NodeInfo
		err error
	}
	answers := make([]answer, len(hcas))
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, e.Options().Window))
	for i, n := range hcas {
		answers[i].n = n
		if skip[n] {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func(a *answer) {
			defer func() { <-sem; wg.Done() }()
			a.err = r.nodeInfo(ctx, e, a.n, &a.ni)
		}(&answers[i])
	}
	wg.Wait()
	var dups []fabric.DuplicateGUID
	var bad []report.Unreached
	var moved []movedLID
	pl := placer{r: r, e: e, snap: snap}
	pathless := map[int]string{} // dups whose first claimant has no directed route
	for _, a := range answers {
		n := a.n
		switch {
		case skip[n]:
			continue
		case a.err != nil:
			bad = append(bad, report.Unreached{What: "NodeInfo", Where: n.Description,
				Reason: fmt.Sprintf("%s (its NodeGUID could not be compared with the snapshot's)", a.err)}.ReadFailed(a.err))
			continue
		case a.ni.NodeGUID == n.GUID:
			continue
		}
		g := a.ni.NodeGUID
		if has, _ := snap.HasNode(g); r.f.NodeByGUID(g) == nil && !has {
			bad = append(bad, report.Unreached{What: WhatNodeGUID, Where: n.Description,
				Reason: fmt.Sprintf("answers NodeGUID 0x%016x, not the snapshot's 0x%016x: %s, which no longer describes it; run 'ibdoctor sweep'", g, n.GUID, BoardChanged)})
			continue
		}
		// Another known node's GUID is a clone only when the node at
		// n's place answers it and the other node's place still does:
		// a LID read meets whoever owns the LID now (an SM failover
		// reassigns LIDs), a directed route whoever is cabled there
		// now (review V1).
		if why, path := pl.clone(ctx, n, g, r.lid(n)); why != "" {
			bad = append(bad, report.Unreached{What: WhatNodeGUID, Where: n.Description, Reason: why})
			if path != nil {
				moved = append(moved, movedLID{node: n, lid: lidPort(n).LID, now: pl.name(g), path: path})
			}
			continue
		}
		k := -1
		for i, d := range dups {
			if d.GUID == g {
				k = i
			}
		}
		if k < 0 {
			// The node the snapshot has under that GUID first: the
			// claimant the sweep knew, as the snapshot has it.
			d := fabric.DuplicateGUID{GUID: g}
			desc, path := pl.name(g), mad.Path(nil)
			if other := r.f.NodeByGUID(g); other != nil {
				path = other.Path
			} else if _, p, ok := snap.Node(g); ok {
				path = p
			}
			if path != nil {
				d.Paths, d.Descs = append(d.Paths, path), append(d.Descs, desc)
			} else {
				// Named last: checks pairs paths with the first
				// names, and this one has none (review V3: it was
				// shown "at path 0", this port's).
				pathless[len(dups)] = desc
			}
			dups = append(dups, d)
			k = len(dups) - 1
		}
		dups[k].Paths = append(dups[k].Paths, n.Path)
		dups[k].Descs = append(dups[k].Descs, n.Description)
	}
	for k, desc := range pathless {
		dups[k].Descs = append(dups[k].Descs, desc)
	}
	return dups, bad, moved
}

// movedLID is a job HCA (or a switch on its routes) whose snapshot LID
// now answers as another node (now), found at its place in the snapshot
// by path; path is nil when its place did not answer as itself.
type movedLID struct {
	node   *fabric.Node
	lid    uint16
	now    string
	lidNow uint16 // its new LID, when no other port has it (now is then "")
	path   mad.Path
}

// says what moved, as the routing checks' reason and the unread list say it.
func (m movedLID) says() string {
	if m.lidNow != 0 {
		return fmt.Sprintf("%s now has LID %d, not %d", m.node.Description, m.lidNow, m.lid)
	}
	return fmt.Sprintf("LID %d now answers as %s", m.lid, m.now)
}

// placer reads NodeInfo by directed routes over the snapshot's links, from
// the gate's port: at a node's place as the sweep saw it, whatever LID
// owns it now.
type placer struct {
	r     *reach
	e     *transport.Engine
	snap  *snapshot.Snapshot
	links *fabric.Fabric // the snapshot's whole fabric, made on first need
	err   error
	// avoid, when set, is what the routes made over links must not
	// cross (the gate found it down or silent).
	avoid *avoidSet
}

// clone says why n's answer of g (another known node's GUID) is not
// shown to be a duplicate, "" when it is: the node at n's place answers
// g too and the node at g's place in the snapshot still answers g. When
// n's LID moved (n answers at its place) it also returns the directed
// route that reached n.
func (p *placer) clone(ctx context.Context, n *fabric.Node, g uint64, byLID bool) (string, mad.Path) {
	name := p.name(g)
	if byLID {
		lid := lidPort(n).LID
		var ni mad.NodeInfo
		err := p.read(ctx, n.GUID, &ni)
		switch {
		case err != nil:
			return fmt.Sprintf("LID %d now answers as %s, and its place in the snapshot could not be read %s (%s); run 'ibdoctor sweep'", lid, name, CloneUntold, err), nil
		case ni.NodeGUID == n.GUID:
			path, _ := p.path(n.GUID) // read just now
			return fmt.Sprintf("LID %d now answers as %s: %s; run 'ibdoctor sweep'", lid, name, LIDsChanged), path
		case ni.NodeGUID != g:
			return fmt.Sprintf("LID %d now answers as %s and its place in the snapshot as %s: the fabric changed since the sweep; run 'ibdoctor sweep'", lid, name, p.name(ni.NodeGUID)), nil
		}
	}
	var ni mad.NodeInfo
	if err := p.read(ctx, g, &ni); err != nil {
		return fmt.Sprintf("its place in the snapshot answers as %s, and %s's place could not be read %s (%s); run 'ibdoctor sweep'", name, name, CloneUntold, err), nil
	}
	if ni.NodeGUID != g {
		return fmt.Sprintf("its place in the snapshot answers as %s, and %s's place as %s: the cabling changed since the sweep; run 'ibdoctor sweep'", name, name, p.name(ni.NodeGUID)), nil
	}
	return "", nil
}

// name is how the snapshot names the node with GUID g.
func (p *placer) name(g uint64) string {
	if n := p.r.f.NodeByGUID(g); n != nil && n.Description != "" {
		return n.Description
	}
	if desc, _, ok := p.snap.Node(g); ok && desc != "" {
		return desc
	}
	return fmt.Sprintf("0x%016x", g)
}

// read reads the NodeInfo at the place the snapshot has the node with
// GUID g, by a directed route from the gate's port.
func (p *placer) read(ctx context.Context, g uint64, ni *mad.NodeInfo) error {
	path, err := p.path(g)
	if err != nil {
		return err
	}
	_, err = p.e.GetSMP(ctx, path, ni, 0)
	return err
}

// path is a directed route from the gate's port to the snapshot's node
// with GUID g: the snapshot's own when the gate reads by directed routes
// (it runs at the sweep's port), else one made over the snapshot's links.
func (p *placer) path(g uint64) (mad.Path, error) {
	if !p.r.byLID {
		if n := p.r.f.NodeByGUID(g); n != nil && n.Path != nil {
			return n.Path, nil
		}
		if _, path, ok := p.snap.Node(g); ok && path != nil {
			return path, nil
		}
		return nil, fmt.Errorf("the snapshot has no directed route to 0x%016x", g)
	}
	if p.links == nil && p.err == nil {
		p.links, p.err = p.snap.Links()
	}
	if p.err != nil {
		return nil, p.err
	}
	l := p.e.Local()
	var path mad.Path
	if me, to := p.links.NodeByGUID(l.NodeGUID), p.links.NodeByGUID(g); me != nil && to != nil {
		if local := portOf(me, l.PortNum); local != nil && local.Remote != nil {
			path = (&reach{local: local}).pathTo(to, p.avoid.in(p.links))
		}
	}
	if path == nil {
		return nil, fmt.Errorf("no directed route from this port to 0x%016x over the snapshot's links", g)
	}
	return path, nil
}

// nodeInfo reads n's NodeInfo by LID (its first port with one) or by its
// directed route, as reach addresses n.
func (r *reach) nodeInfo(ctx context.Context, e *transport.Engine, n *fabric.Node, ni *mad.NodeInfo) error {
	if !r.lid(n) {
		if n.Path == nil {
			return fmt.Errorf("node %q has no directed route in the snapshot", n.Description)
		}
		_, err := e.GetSMP(ctx, n.Path, ni, 0)
		return err
	}
	lid := lidPort(n).LID
	if lid == 0 {
		return fmt.Errorf("node %q has no LID to address it by", n.Description)
	}
	_, err := e.GetSMPByLID(ctx, lid, ni, 0)
	return err
}

// switchIDs re-reads by LID the NodeInfo of the switches in sws that the
// gate reads by LID (one SMP each; not those in skip, whose reads already
// went unanswered) and returns those whose LID now answers as another
// node: what was read of them by LID (forwarding tables, PortInfo,
// counters) was that node's. Each is checked at its place in the
// snapshot by directed route: one answering there is returned with that
// route; one that does not, without. A read that fails says nothing of
// the LID map: the switch's other reads are listed already, or answered.
func (r *reach) switchIDs(ctx context.Context, e *transport.Engine, snap *snapshot.Snapshot, sws map[*fabric.Node]bool, skip map[*fabric.Node]bool) ([]movedLID, []report.Unreached) {
	type answer struct {
		n   *fabric.Node
		ni  mad.NodeInfo
		err error
	}
	var answers []*answer
	for n := range sws {
		if r.lid(n) && !skip[n] && lidPort(n).LID != 0 {
			answers = append(answers, &answer{n: n})
		}
	}
	slices.SortFunc(answers, func(a, b *answer) int { return cmp.Compare(a.n.GUID, b.n.GUID) })
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, e.Options().Window))
	for _, a := range answers {
		wg.Add(1)
		sem <- struct{}{}
		go func(a *answer) {
			defer func() { <-sem; wg.Done() }()
			_, a.err = e.GetSMPByLID(ctx, lidPort(a.n).LID, &a.ni, 0)
		}(a)
	}
	wg.Wait()
	var moved []movedLID
	var bad []report.Unreached
	pl := placer{r: r, e: e, snap: snap}
	for _, a := range answers {
		if a.err != nil || a.ni.NodeGUID == a.n.GUID {
			continue
		}
		n, lid, name := a.n, lidPort(a.n).LID, pl.name(a.ni.NodeGUID)
		var ni mad.NodeInfo
		err := pl.read(ctx, n.GUID, &ni)
		switch {
		case err == nil && ni.NodeGUID == n.GUID:
			path, _ := pl.path(n.GUID) // read just now
			moved = append(moved, movedLID{node: n, lid: lid, now: name, path: path})
			bad = append(bad, report.Unreached{What: WhatNodeGUID, Where: n.Description,
				Reason: fmt.Sprintf("LID %d now answers as %s: %s; run 'ibdoctor sweep'", lid, name, LIDsChanged)})
		case err == nil:
			moved = append(moved, movedLID{node: n, lid: lid, now: name})
			bad = append(bad, report.Unreached{What: WhatNodeGUID, Where: n.Description,
				Reason: fmt.Sprintf("LID %d now answers as %s and its place in the snapshot as %s: the fabric changed since the sweep; run 'ibdoctor sweep'", lid, name, pl.name(ni.NodeGUID))})
		default:
			moved = append(moved, movedLID{node: n, lid: lid, now: name})
			bad = append(bad, report.Unreached{What: WhatNodeGUID, Where: n.Description,
				Reason: fmt.Sprintf("LID %d now answers as %s, and its place in the snapshot could not be read %s (%s); run 'ibdoctor sweep'", lid, name, CloneUntold, err)})
		}
	}
	// A switch silent at its snapshot LID may have been given a LID no
	// port had (review R4: "leaf01 did not answer", where it answers at
	// LID 900 and by directed route): asked at its place in the snapshot,
	// one answering as itself with a free LID of its own has moved, as
	// lidsGone finds HCAs moved.
	var silent []*fabric.Node
	for n := range sws {
		// Or silent at it and read since by the directed route around
		// that (its reads are the switch's, its LID may have moved all
		// the same; one silent that way too is not asked again).
		if (r.lid(n) && skip[n] || r.dr[n] && r.first[n] != nil && !skip[n]) && lidPort(n).LID != 0 {
			silent = append(silent, n)
		}
	}
	slices.SortFunc(silent, func(a, b *fabric.Node) int { return cmp.Compare(a.GUID, b.GUID) })
	for _, n := range silent {
		// Only a switch silent at that LID: one that refused a read
		// answered there (review R7: not asked another way). A LID the
		// engine knows silent is not sent to again.
		var ni mad.NodeInfo
		if _, err := e.GetSMPByLID(ctx, lidPort(n).LID, &ni, 0); !transport.Unanswered(err) {
			continue
		}
		path, err := pl.path(n.GUID)
		if err != nil {
			continue
		}
		if _, err := e.Once().GetSMP(ctx, path, &ni, 0); err != nil || ni.NodeGUID != n.GUID {
			continue
		}
		var pi mad.PortInfo
		if _, err := e.Once().GetSMP(ctx, path, &pi, 0); err != nil || pi.LID == 0 || pi.LID == lidPort(n).LID || r.f.PortByLID(pi.LID) != nil {
			continue
		}
		m := movedLID{node: n, lid: lidPort(n).LID, lidNow: pi.LID, path: path}
		moved = append(moved, m)
		bad = append(bad, report.Unreached{What: WhatLID, Where: n.Description,
			Reason: fmt.Sprintf("%s: %s (what was sent to LID %d went unanswered); run 'ibdoctor sweep'", m.says(), LIDsChanged, m.lid)})
	}
	return moved, bad
}

// WhatLID is what a gate lists unread for a job HCA that answers at its
// place in the snapshot with a LID no other port has, not the snapshot's.
const WhatLID = "LID"

// lidsGone finds the job HCAs whose LID moved to one no other
// port has (an SM restart without its guid2lid cache gives new LIDs as
// often as another node's): the snapshot's LID then answers nobody, so
// the HCA's PortInfo went unread, or its PortInfo read shows the new LID.
// guids and switchIDs see only LIDs now answering as another node. Each
// candidate (was holds its LID port and the snapshot's LID) is read at its
// place in the snapshot by directed route: answering there as itself with
// a LID of its own, not the snapshot's, it is returned with that route
// (those in known, found moved already, are not read again).
// cabled is the snapshot's far end of each port. Anything else says
// nothing: the unread entry stands, or a LID now also
// another port's is addr.duplicate-lid's to judge.
func (r *reach) lidsGone(ctx context.Context, e *transport.Engine, snap *snapshot.Snapshot, hcas []*fabric.Node, was map[*fabric.Node]snapLID, unread map[*fabric.Port]bool, cabled map[*fabric.Port]*fabric.Port, known []movedLID) ([]movedLID, []report.Unreached) {
	type answer struct {
		n    *fabric.Node
		w    snapLID
		path mad.Path
		lid  uint16 // the LID its place answers with; 0 when not itself
	}
	pl := placer{r: r, e: e, snap: snap}
	var answers []*answer
	for _, n := range hcas {
		w, ok := was[n]
		if !ok || w.port == nil || slices.ContainsFunc(known, func(m movedLID) bool { return m.node == n }) {
			continue
		}
		// Unread by LID, or read with another LID. One unread by its
		// directed route would not answer it again, nor one whose cable's
		// switch end reads down (the gate reports that link).
		if q := cabled[w.port]; q != nil && !unread[q] && !q.PhysState.LinkUp() {
			continue
		}
		if (unread[w.port] && r.lid(n)) || (!unread[w.port] && w.port.LID != w.lid) {
			path, err := pl.path(n.GUID) // before the reads: placer is not safe for concurrent use
			if err == nil {
				answers = append(answers, &answer{n: n, w: w, path: path})
			}
		}
	}
	// In parallel, as guids: each HCA behind a down cable waits its
	// timeout (16 such HCAs read one by one added a minute to a gate).
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, e.Options().Window))
	for _, a := range answers {
		wg.Add(1)
		sem <- struct{}{}
		go func(a *answer) {
			defer func() { <-sem; wg.Done() }()
			var ni mad.NodeInfo
			if _, err := e.GetSMP(ctx, a.path, &ni, 0); err != nil || ni.NodeGUID != a.n.GUID {
				return
			}
			var pi mad.PortInfo
			if _, err := e.GetSMP(ctx, a.path, &pi, uint32(a.w.port.Num)); err == nil {
				a.lid = pi.LID
			}
		}(a)
	}
	wg.Wait()
	var moved []movedLID
	var bad []report.Unreached
	for _, a := range answers {
		if a.lid == 0 || a.lid == a.w.lid {
			continue
		}
		if o := r.f.PortByLID(a.lid); (o != nil && o != a.w.port) || (o == a.w.port && r.f.LIDShared(a.w.port) != "") {
			continue
		}
		m := movedLID{node: a.n, lid: a.w.lid, lidNow: a.lid, path: a.path}
		moved = append(moved, m)
		bad = append(bad, report.Unreached{What: WhatLID, Where: a.n.Description,
			Reason: fmt.Sprintf("%s: %s; run 'ibdoctor sweep'", m.says(), LIDsChanged)})
	}
	return moved, bad
}

// snapLID is a job HCA's LID port and the LID the snapshot gave it.
type snapLID struct {
	port *fabric.Port
	lid  uint16
}
