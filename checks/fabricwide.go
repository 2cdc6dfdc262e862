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
)

// fabricWide are the checks whose verdict on a switch needs every
// destination it routes, not only a job's: a gate cannot make it on its
// part of the fabric, so it takes the sweep's (FabricVerdicts).
var fabricWide = []string{"routing.ecmp-imbalance"}

// FabricVerdicts are the findings of the fabricWide checks on a whole
// fabric (a sweep's), kept with the snapshot for the gates that follow.
type FabricVerdicts struct {
	Taken    time.Time `json:"taken_at"`
	Findings []Finding `json:"findings"`
}

// FabricWide returns the verdicts of the fabricWide checks in res, a Run
// over a whole fabric taken at taken; nil when one was not selected
// (then nothing is known about it, which is not the same as no finding).
// A check skipped for lack of data has nothing to carry: a gate's part
// lacks the same data.
func FabricWide(res *Result, taken time.Time) *FabricVerdicts {
	for _, id := range fabricWide {
		skipped := slices.ContainsFunc(res.Skipped, func(s Skipped) bool { return s.Check == id })
		if !slices.Contains(res.Ran, id) && !skipped {
			return nil
		}
	}
	v := &FabricVerdicts{Taken: taken.UTC(), Findings: []Finding{}}
	for _, f := range res.Findings {
		if slices.Contains(fabricWide, f.Check) {
			v.Findings = append(v.Findings, f)
		}
	}
	return v
}

// RunFabricWide runs the fabricWide checks over s, a whole fabric, and
// returns their verdicts (FabricWide).
func RunFabricWide(s *Snapshot) (*FabricVerdicts, error) {
	res, err := Run(s, fabricWide...)
	if err != nil {
		return nil, err
	}
	return FabricWide(res, s.Taken), nil
}

// entityGUID is an entity's node GUID, also after a JSON round trip
// (NodeGUID is not encoded).
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
