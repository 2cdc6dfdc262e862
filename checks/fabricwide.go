package checks

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/route"
	"github.com/ibdoctor/ibdoctor/internal/words"
	"github.com/ibdoctor/ibdoctor/mad"
)

// fabricWide are the checks whose verdict on a switch needs the whole
// fabric, not only a job's part: every destination it routes
// (routing.ecmp-imbalance), every leaf of its spines and the typical
// leaf (topology.oversubscribed), every port's M_Key policy against the
// fabric's (sm.mkey-policy: the snapshot keeps no M_Key fields, so a
// gate's part read its re-read HCAs against switches at lease 0, trial
// A9), every leaf of a switch model (topology.missing-sharp-an). A gate
// cannot make it on its part of the fabric, so it takes the
// sweep's (FabricVerdicts). The subnet managers' state (smFromSweep) is
// the whole fabric's too, whatever a job's hosts.
var fabricWide = []string{"routing.ecmp-imbalance", "topology.oversubscribed", "sm.mkey-policy",
	"sm.multiple-masters", "sm.priority", "sm.stale-master-lid", "sm.stalled", "topology.missing-sharp-an"}

// smFromSweep are the fabricWide checks of SMInfo, which a sweep reads
// and a gate does not: a gate reports the sweep's verdict whatever the
// job's hosts (two masters reprogram every job's routes, trial B15), and
// a sweep that skipped one (no --interval for sm.stalled) says why in
// NotJudged, where the others' skip means the gate lacks the same data.
var smFromSweep = []string{"sm.multiple-masters", "sm.priority", "sm.stale-master-lid", "sm.stalled"}

// FabricVerdicts are the findings of the fabricWide checks on a whole
// fabric (a sweep's), kept with the snapshot for the gates that follow.
type FabricVerdicts struct {
	Taken    time.Time `json:"taken_at"`
	Findings []Finding `json:"findings"`
	// Checks are the fabricWide checks the sweep judged (ran, or skipped
	// for data a gate's part lacks too). Empty in the verdicts of an
	// older ibdoctor, which judged routing.ecmp-imbalance only.
	Checks []string `json:"checks,omitempty"`
	// NotJudged says, by check, why the sweep did not judge one of
	// smFromSweep (its skip reason): a gate gives it as its own.
	NotJudged map[string]string `json:"not_judged,omitempty"`
	// Folds are the findings of the sweep's report that a
	// topology.oversubscribed count was folded into (their "uplinks"
	// evidence holds it, foldShortUplinks): what a gate shows for that
	// count when its own findings do not fold it (trial B5).
	Folds []Finding `json:"folds,omitempty"`
	// MasterLIDs are, by title, the master SM LIDs the sm.stale-master-lid
	// findings name (a gate checks whether a port owns one now); empty in
	// the verdicts of an older ibdoctor.
	MasterLIDs map[string]uint16 `json:"master_lids,omitempty"`
	// PortTotals are the sweep's per-port destination totals of every
	// switch whose table it read (Snapshot.PortTotals), kept in a file
	// of their own beside the verdicts (a gate reads them only for a
	// switch whose table changed since the sweep).
	PortTotals *PortTotals `json:"-"`
}

// Judged reports whether v holds the sweep's verdict of check id: a
// check it did not judge is not known, which is not "no finding".
func (v *FabricVerdicts) Judged(id string) bool {
	switch {
	case v == nil:
		return false
	case len(v.Checks) == 0:
		return id == "routing.ecmp-imbalance"
	}
	return slices.Contains(v.Checks, id)
}

// notJudged is why the sweep skipped check id, "" when it did not say.
func (v *FabricVerdicts) notJudged(id string) string {
	if v == nil {
		return ""
	}
	return v.NotJudged[id]
}

// FabricWide returns the verdicts of the fabricWide checks in res, a Run
// over s, a whole fabric taken at taken, with its switches' per-port
// destination totals (PortTotals); nil when one was not selected
// (then nothing is known about it, which is not the same as no finding).
// A check skipped for lack of data has nothing to carry: a gate's part
// lacks the same data.
func FabricWide(s *Snapshot, res *Result, taken time.Time) *FabricVerdicts {
	v := &FabricVerdicts{Taken: taken.UTC(), Findings: []Finding{}}
	for _, id := range fabricWide {
		i := slices.IndexFunc(res.Skipped, func(s Skipped) bool { return s.Check == id })
		switch {
		case slices.Contains(res.Ran, id):
			v.Checks = append(v.Checks, id)
		case i >= 0 && slices.Contains(smFromSweep, id):
			if v.NotJudged == nil {
				v.NotJudged = map[string]string{}
			}
			v.NotJudged[id] = res.Skipped[i].Reason
		case i >= 0:
			v.Checks = append(v.Checks, id)
		}
	}
	if len(v.Checks) == 0 && len(v.NotJudged) == 0 {
		return nil
	}
	for _, f := range res.Findings {
		switch {
		case f.ecmpGroups != nil:
			// A gate judges the groups one by one (jobECMP).
			v.Findings = append(v.Findings, f.ecmpGroups...)
		case f.Check == "routing.ecmp-imbalance" || f.Check == "sm.mkey-policy" || f.Check == "topology.missing-sharp-an" || slices.Contains(smFromSweep, f.Check):
			v.Findings = append(v.Findings, f)
		}
		if f.masterLID != 0 {
			if v.MasterLIDs == nil {
				v.MasterLIDs = map[string]uint16{}
			}
			v.MasterLIDs[f.Title] = f.masterLID
		}
	}
	// Before the folds: a leaf's missing uplinks folded into the
	// link.down of each cable are the gate's own fold to make, when it
	// has those findings; without them the count is all it has.
	v.Findings = append(v.Findings, res.unfolded...)
	for _, u := range res.unfolded {
		if g := foldOf(res.Findings, u); g != nil {
			v.Folds = append(v.Folds, *g)
		}
	}
	v.PortTotals = res.portTotals
	if v.PortTotals == nil && hasLFTs(s.Fabric) && slices.Contains(v.Checks, "routing.ecmp-imbalance") {
		v.PortTotals = portTotalsOf(s, res.lost)
	}
	return v
}

// foldOf is the finding among fs that topology.oversubscribed finding u
// was folded into (foldShortUplinks: a cause naming u's leaf, with the
// count as its "uplinks" evidence), nil when none.
func foldOf(fs []Finding, u Finding) *Finding {
	if len(u.Entities) == 0 {
		return nil
	}
	leaf := entityGUID(u.Entities[0])
	for i, g := range fs {
		if g.Check == "topology.oversubscribed" || !slices.ContainsFunc(g.Evidence, func(e Evidence) bool {
			return e.Name == "uplinks" && strings.Contains(e.Text, foldedHere)
		}) {
			continue
		}
		if slices.ContainsFunc(g.Entities, func(e Entity) bool { return entityGUID(e) == leaf && e.Port != 0 }) {
			return &fs[i]
		}
	}
	return nil
}

// sweepFolds replaces each topology.oversubscribed finding of a gate
// (the sweep's count) that its own findings did not fold by the finding
// the sweep's report folded it into: one judgement, where the gate
// showed "2 cables missing or down" (warning) for the sweep's "swapped"
// (error, trial B5). One the gate already has is not repeated.
func sweepFolds(fs []Finding) []Finding {
	out := fs[:0:0]
	for _, f := range fs {
		if f.sweepFold == nil {
			out = append(out, f)
		}
	}
	for _, f := range fs {
		if g := f.sweepFold; g != nil && !slices.ContainsFunc(out, func(h Finding) bool { return h.Check == g.Check && h.Title == g.Title }) {
			out = append(out, *g)
		}
	}
	return out
}

// sweepOversubscribed is a gate's topology.oversubscribed: the sweep's
// findings that name a switch of the job's part. The gate holds part of
// the snapshot, in which a spine's other leaves and the typical leaf
// are not all there: judged on it, a leaf short of 4 cables read as
// short of 2 against "5 of its 5 leaves" (trial T7).
func (s *Snapshot) sweepOversubscribed() []Finding {
	fs := s.sweepVerdicts("topology.oversubscribed", true, "a leaf's peers are every leaf of its spines, which the gate's part of the snapshot does not hold")
	for i, fd := range fs {
		if g := foldOf(s.FabricRouting.Folds, fd); g != nil {
			fold := *g
			fold.Entities = slices.Clone(g.Entities)
			for j := range fold.Entities {
				fold.Entities[j].NodeGUID = entityGUID(fold.Entities[j])
			}
			fold.Evidence = append(slices.Clone(g.Evidence), Evidence{Name: "judged", Text: fmt.Sprintf("the sweep's verdict of %s on the whole fabric: its topology.oversubscribed count, folded here by the sweep's report; a leaf's peers are every leaf of its spines, which the gate's part of the snapshot does not hold", s.FabricRouting.Taken.Format(time.RFC3339))})
			fs[i].sweepFold = &fold
		}
	}
	return fs
}

// sweepMKeyPolicies is a gate's sm.mkey-policy: the sweep's finding when
// it names a node of the job's part. The policy a port runs is judged
// against every port's; the gate's part of the snapshot holds no M_Key
// fields of the switches it did not re-read (trial A9: every gate warned
// that the job's own HCAs, at lease 4089 s, differed from switches read
// as lease 0, while the sweep of the same fabric said nothing).
func (s *Snapshot) sweepMKeyPolicies() []Finding {
	return s.sweepVerdicts("sm.mkey-policy", false, "every port's M_Key policy is compared with the fabric's, which the gate's part of the snapshot does not hold")
}

// sweepSM is a gate's verdict of an SMInfo check (smFromSweep): the
// sweep's findings, whatever the job's hosts. A gate reads no SMInfo,
// and the SMs' state is the fabric's: a second master reprograms the
// routes of every job, not only of those on its host (trial B15: the
// sweep's critical sm.multiple-masters, and every gate said healthy).
func (s *Snapshot) sweepSM(id string) []Finding {
	var out []Finding
	for _, fd := range s.FabricRouting.Findings {
		if fd.Check != id {
			continue
		}
		fd.Entities = slices.Clone(fd.Entities)
		for i := range fd.Entities {
			fd.Entities[i].NodeGUID = entityGUID(fd.Entities[i])
		}
		if why, p := s.ownedSince(fd); why != "" {
			// The master LID no port owned at the sweep may be a
			// port's now (the SM host's cable back, trial B1): the
			// sweep's verdict is not the fabric's.
			s.couldNotDecide(id, fmt.Sprintf("the sweep of %s found no port owning the master SM LID it names (%s), but %s: run 'ibdoctor sweep'",
				s.FabricRouting.Taken.Format(time.RFC3339), fd.Title, why), s.entityOf(p, "named-master"))
			continue
		}
		fd.Evidence = append(slices.Clone(fd.Evidence), Evidence{Name: "judged", Text: fmt.Sprintf("the sweep's verdict of %s on the whole fabric: a gate reads no SMInfo, and the subnet managers' state is every job's, whatever its hosts", s.FabricRouting.Taken.Format(time.RFC3339))})
		out = append(out, fd)
	}
	return out
}

// ownedSince says, for the sweep's sm.stale-master-lid finding fd on a
// LID no port owned then, why the gate cannot repeat it, with the port
// it is about: a port the gate re-read owns the LID now, or one the
// sweep saw without a link is up now (the owner may be behind it, as a
// sweep skips the LID when a node did not answer). "" when neither.
func (s *Snapshot) ownedSince(fd Finding) (string, *fabric.Port) {
	if fd.Check != "sm.stale-master-lid" || slices.ContainsFunc(fd.Entities, func(e Entity) bool { return e.Role == "named-master" }) {
		return "", nil
	}
	lid, ok := s.FabricRouting.MasterLIDs[fd.Title]
	if !ok {
		// Verdicts saved before MasterLIDs: their titles have this
		// wording, which is fixed now that they are written.
		var n int
		if _, err := fmt.Sscanf(fd.Title, "%d active ports name master SM LID %d,", &n, &lid); err != nil {
			return "", nil
		}
	}
	if lid == 0 {
		return "", nil
	}
	if p := s.Fabric.PortByLID(lid); p != nil {
		return s.entityOf(p, "").String() + " has that LID now", p
	}
	for _, nd := range s.Fabric.Nodes {
		for _, p := range nd.Ports {
			if p != nil && p.Num != 0 && p.Remote == nil && p.Unreached&fabric.UnreachedPeer != 0 && p.PhysState == mad.PhysLinkUp {
				return s.entityOf(p, "").String() + ", without a link then, is up now and the LID's owner may be behind it", p
			}
		}
	}
	return "", nil
}

// sweepVerdicts returns the sweep's findings of check id that name a
// node of the job's part (a switch only, with switchesOnly), each with
// evidence saying whose verdict it is and why.
func (s *Snapshot) sweepVerdicts(id string, switchesOnly bool, why string) []Finding {
	var out []Finding
	for _, fd := range s.FabricRouting.Findings {
		if fd.Check != id {
			continue
		}
		ents := slices.Clone(fd.Entities)
		job := false
		for i := range ents {
			ents[i].NodeGUID = entityGUID(ents[i])
			if n := s.Fabric.NodeByGUID(ents[i].NodeGUID); n != nil && (!switchesOnly || ents[i].Role == "switch") && s.nodeInScope(n) {
				job = true
			}
		}
		if !job {
			continue
		}
		// A port of a switch it names, without a link in the snapshot,
		// up now (the gate re-read it: a cable back since the sweep):
		// the sweep's count of cables or Aggregation Nodes is not the
		// fabric's, and the gate's part cannot count again (trial B1).
		// A port's M_Key policy does not hang on a cable.
		p := backUp(s, ents)
		switch {
		case p == nil || id == "sm.mkey-policy":
		case id == "topology.missing-sharp-an":
			s.couldNotDecide(id, fmt.Sprintf("the sweep of %s found %s without a SHARP Aggregation Node, but %s, without a link then, is up now (its Aggregation Node may be back): the sweep's verdict is not the fabric's; run 'ibdoctor sweep'",
				s.FabricRouting.Taken.Format(time.RFC3339), s.nodeName(p.Node), s.entityOf(p, "").String()), s.nodeEntity(p.Node, "switch"))
			continue
		default:
			s.couldNotDecide(id, fmt.Sprintf("the sweep of %s found %s short of cables, but %s, without a link then, is up now (a cable back since the sweep): its count is not the fabric's; run 'ibdoctor sweep'",
				s.FabricRouting.Taken.Format(time.RFC3339), s.nodeName(p.Node), s.entityOf(p, "").String()), s.nodeEntity(p.Node, "switch"))
			continue
		}
		fd.Entities = ents
		fd.Evidence = append(slices.Clone(fd.Evidence), Evidence{Name: "judged", Text: fmt.Sprintf("the sweep's verdict of %s on the whole fabric: %s", s.FabricRouting.Taken.Format(time.RFC3339), why)})
		out = append(out, fd)
	}
	return out
}

// backUp is a port of a switch among ents that a gate found up with no
// known peer (up now, without a link in the snapshot), nil when none.
func backUp(s *Snapshot, ents []Entity) *fabric.Port {
	for _, en := range ents {
		n := s.Fabric.NodeByGUID(en.NodeGUID)
		if n == nil || en.Role != "switch" {
			continue
		}
		for _, p := range n.Ports {
			if p != nil && p.Num != 0 && p.Remote == nil && p.Unreached&fabric.UnreachedPeer != 0 && p.PhysState == mad.PhysLinkUp {
				return p
			}
		}
	}
	return nil
}

// RunFabricWide runs the fabricWide checks over s, a whole fabric, and
// returns their verdicts (FabricWide).
func RunFabricWide(s *Snapshot) (*FabricVerdicts, error) {
	res, err := Run(s, fabricWide...)
	if err != nil {
		return nil, err
	}
	return FabricWide(s, res, s.Taken), nil
}

// EntityGUID is an entity's node GUID, also after a JSON round trip
// (NodeGUID is not encoded).
func EntityGUID(e Entity) uint64 { return entityGUID(e) }

func entityGUID(e Entity) uint64 {
	if e.NodeGUID != 0 {
		return e.NodeGUID
	}
	g, _ := strconv.ParseUint(strings.TrimPrefix(e.GUID, "0x"), 16, 64)
	return g
}

// jobECMP returns the fabric-wide routing.ecmp-imbalance findings whose
// busiest port the job's routes leave by (over the tables as read now),
// each with the job's share of it, and the switch/port pairs they cover.
// A job's own destinations are often too few for the group to be judged
// on them, but its traffic still shares the overloaded port with every
// other job routed there.
func (s *Snapshot) jobECMP(g *routeGraph) (out []Finding, covered map[*fabric.Port]bool) {
	covered = map[*fabric.Port]bool{}
	var dsts []*fabric.Port
	leafSet := map[*fabric.Node]bool{}
	var jobLeaves []*fabric.Node
	for _, h := range g.hosts {
		if !s.Scope.Hosts[h.Node] {
			continue
		}
		dsts = append(dsts, h)
		if l := leafOf(h); l != nil && !leafSet[l] {
			leafSet[l] = true
			jobLeaves = append(jobLeaves, l)
		}
	}
	// The findings whose busiest port is in the job's part, by port.
	type cand struct {
		fd Finding
		b  *fabric.Port
	}
	var cands []cand
	busiest := map[*fabric.Port]bool{}
	for _, fd := range s.FabricRouting.Findings {
		if fd.Check != "routing.ecmp-imbalance" {
			continue
		}
		var swGUID uint64
		busiestNum := -1
		for _, e := range fd.Entities {
			switch e.Role {
			case "switch":
				swGUID = entityGUID(e)
			case "busiest":
				busiestNum = e.Port
			}
		}
		sw := s.Fabric.NodeByGUID(swGUID)
		if sw == nil || busiestNum < 0 || busiestNum >= len(sw.Ports) || sw.Ports[busiestNum] == nil {
			continue // not in the job's part of the fabric
		}
		if s.TablesChanged[sw] != nil {
			continue // of its old table: the gate judged it again
		}
		cands = append(cands, cand{fd, sw.Ports[busiestNum]})
		busiest[sw.Ports[busiestNum]] = true
	}
	if len(cands) == 0 {
		return nil, covered
	}
	// One walk to each of the job's destinations from each of its
	// leaves, whatever the number of findings: how many destinations
	// each busiest port is on the way to.
	crossed := map[*fabric.Port]int{}
	var w *route.Walk
	on := map[*fabric.Port]bool{}
	for _, dst := range dsts {
		if w == nil {
			w = g.a.WalkTo(dst)
		} else {
			w.Reset(dst)
		}
		clear(on)
		for _, leaf := range jobLeaves {
			for _, p := range w.Path(leaf) {
				if busiest[p] {
					on[p] = true
				}
			}
		}
		for p := range on {
			crossed[p]++
		}
	}
	for _, c := range cands {
		fd, b := c.fd, c.b
		n := crossed[b]
		if n == 0 {
			continue
		}
		covered[b] = true
		f := fd
		f.Entities = slices.Clone(fd.Entities)
		for i := range f.Entities {
			f.Entities[i].NodeGUID = entityGUID(f.Entities[i])
		}
		f.Evidence = append(slices.Clone(fd.Evidence), Evidence{Name: "job", Value: float64(n),
			Text: fmt.Sprintf("the job's routes to %d of its %s leave %s by port %d; the group was judged by the sweep of %s on every destination the switch routes (a job's own are often too few to judge it)",
				n, words.Count(len(dsts), "destination"), s.nodeName(b.Node), b.Num, s.FabricRouting.Taken.Format(time.RFC3339))})
		sh := s.pathShare(b)
		share := sh.v
		f.Impact.PathShare, f.Impact.PathShareLowerBound = share, sh.atLeast
		if f.Impact.Slowdown > 0 {
			f.Impact.Score = share * (1 - 1/f.Impact.Slowdown)
		}
		out = append(out, f)
	}
	return out, covered
}
