package gate

import (
	"context"
	"fmt"
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
func (r *reach) guids(ctx context.Context, e *transport.Engine, snap *snapshot.Snapshot, hcas []*fabric.Node, skip map[*fabric.Node]bool) ([]fabric.DuplicateGUID, []report.Unreached) {
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
		other := r.f.NodeByGUID(g)
		if has, _ := snap.HasNode(g); other == nil && !has {
			bad = append(bad, report.Unreached{What: WhatNodeGUID, Where: n.Description,
				Reason: fmt.Sprintf("answers NodeGUID 0x%016x, not the snapshot's 0x%016x: the adapter changed since the sweep, which no longer describes it; run 'ibdoctor sweep'", g, n.GUID)})
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
			// claimant the sweep knew.
			d := fabric.DuplicateGUID{GUID: g, Paths: []mad.Path{nil}, Descs: []string{""}}
			if other != nil {
				d.Paths[0], d.Descs[0] = other.Path, other.Description
			}
			dups = append(dups, d)
			k = len(dups) - 1
		}
		dups[k].Paths = append(dups[k].Paths, n.Path)
		dups[k].Descs = append(dups[k].Descs, n.Description)
	}
	return dups, bad
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
