package checks

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/words"
	"github.com/ibdoctor/ibdoctor/mad"
)

func init() {
	register(Check{
		ID:      "routing.traffic-imbalance",
		Summary: "measured over --interval, one of a switch's parallel uplinks carries far more data than its siblings while they idle (whatever the tables say: a hash or adaptive-routing fault)",
		Needs:   []string{"interval"},
		run:     (*Snapshot).trafficImbalance,
	})
}

// trafficImbalance compares the data each switch sent up each of its
// uplinks (ports cabled to a switch of a higher tier: a leaf's spine
// links, a spine's core links) over the sampled interval. The forwarding
// tables can look balanced while the switches send one communicator's
// flows down one path (an ECMP hash or adaptive-routing bug): only the
// counters show it.
func (s *Snapshot) trafficImbalance() []Finding {
	iv := s.Counters.Interval()
	if iv <= 0 {
		return nil
	}
	// Rates, not byte counts: each port's delta spans its own time
	// between readings.
	sent := map[*fabric.Port]float64{} // Gb/s
	s.Counters.Ports(func(r PortReading) {
		if span := r.SpanOf(iv).Seconds(); !r.Reset && r.DataUnknown == "" && span > 0 {
			sent[r.Port] = float64(r.XmitBytes) * 8 / span / 1e9
		}
	})
	tiers := SwitchTiers(s.Fabric)
	ratioBar := s.Expect.ImbalanceRatio
	if ratioBar == 0 {
		ratioBar = 1.2
	}
	var out []Finding
	for _, n := range s.Fabric.Nodes {
		if n.Type != mad.NodeSwitch || !s.nodeInScope(n) {
			continue
		}
		var group, unread []*fabric.Port
		for _, p := range n.Ports {
			if p == nil || p.Num == 0 || !interSwitch(p) || !linkUp(p) || tiers[p.Remote.Node] <= tiers[n] {
				continue
			}
			// A gate judges the uplinks on the job's routes: it reads no
			// others, and a part of the fabric tiers the switches beside
			// it wrongly (a leaf whose hosts are not in the part looks
			// like a tier above the spine it hangs from). Trial T13.
			if s.Scope != nil && !s.inScope(p) {
				continue
			}
			if _, ok := sent[p]; !ok {
				unread = append(unread, p)
			}
			group = append(group, p)
		}
		if len(group) < 2 {
			continue
		}
		if len(unread) > 0 {
			// This switch's spread depends on what was not read; the
			// other switches' do not.
			s.couldNotDecide("routing.traffic-imbalance", fmt.Sprintf("the data sent up %d of its %d uplinks (ports %s) was not read: its spread over them is not known", len(unread), len(group), portNums(unread)), s.nodeEntity(n, "switch"))
			continue
		}
		var total, most float64
		var busiest *fabric.Port
		for _, p := range group {
			total += sent[p]
			if sent[p] > most {
				most, busiest = sent[p], p
			}
		}
		// Too little traffic to judge: under 1% of the busiest link's
		// rate over the interval.
		if busiest == nil || most < 0.01*busiest.Rate().Gbps() {
			continue
		}
		mean := total / float64(len(group))
		ratio := most / mean
		if ratio <= ratioBar {
			continue
		}
		idle := 0
		var parts []string
		var heldBack []*fabric.Node
		for _, p := range group {
			if sent[p] < mean && !slices.Contains(heldBack, p.Remote.Node) {
				heldBack = append(heldBack, p.Remote.Node)
			}
			if sent[p] < 0.1*most {
				idle++
			}
			parts = append(parts, fmt.Sprintf("%d:%s", p.Num, gbpsText(sent[p])))
		}
		sev := Warning
		switch {
		case ratio >= 2 && idle > 0:
			sev = Critical
		case ratio >= 1.5:
			sev = Error
		}
		sh := s.pathShare(busiest)
		share := sh.v
		out = append(out, Finding{
			Check:    "routing.traffic-imbalance",
			Severity: sev,
			Title:    fmt.Sprintf("%s sends %.1fx the mean of its %d uplinks' data out of port %d (%s Gb/s), %d of them idle", s.nodeName(n), ratio, len(group), busiest.Num, gbpsText(most), idle),
			Entities: []Entity{s.entityOf(busiest, "end"), s.entityOf(busiest.Remote, "peer")},
			Evidence: []Evidence{
				{Name: "max/mean", Value: ratio, Threshold: ratioBar,
					Text: fmt.Sprintf("port:rate sent over %v %s Gb/s (max/mean %.2f, threshold %.2f); measured on the wire (PortXmitData), whatever the forwarding tables say", words.Duration(iv), strings.Join(parts, " "), ratio, ratioBar)},
				{Name: "busiest uplink", Value: most, Unit: "Gb/s", Threshold: busiest.Rate().Gbps(),
					Text: fmt.Sprintf("port %d sent %s Gb/s of its %s Gb/s (%s)", busiest.Num, gbpsText(most), gbpsText(busiest.Rate().Gbps()), busiest.Rate())},
				{Name: "uplinks' mean", Value: mean, Unit: "Gb/s",
					Text: fmt.Sprintf("the %d uplinks sent %s Gb/s each on average", len(group), gbpsText(mean))},
			},
			Impact: Impact{PathShare: share, PathShareLowerBound: sh.atLeast, Slowdown: ratio, Score: share * (1 - 1/ratio),
				Summary: fmt.Sprintf("collectives whose traffic crosses %s's uplinks run at the busiest link's pace: up to %.1fx slower", s.nodeName(n), ratio)},
			Action:   fmt.Sprintf("Compare with 'ibdoctor check' on the tables (routing.ecmp-imbalance): if the tables are balanced, the switch spreads flows unevenly itself — check adaptive routing and the ECMP hash settings of %s (and its firmware), and whether one job's flows all hash alike; then re-measure with --interval.", s.nodeName(n)),
			Basis:    "delta",
			heldBack: heldBack,
		})
	}
	slices.SortFunc(out, func(a, b Finding) int { return strings.Compare(a.Title, b.Title) })
	return out
}

// gbpsText prints a rate in Gb/s: whole numbers, one decimal below 10.
func gbpsText(g float64) string {
	if g != 0 && g < 9.95 {
		return fmt.Sprintf("%.1f", g)
	}
	return fmt.Sprintf("%.0f", g)
}

// foldHeldBack folds a routing.traffic-imbalance whose lighter uplinks
// all lead to switches with a routing.ecmp-imbalance finding into the
// first of those findings. Those uplinks carry less because the switch
// they feed funnels the flows into one cable and credits hold them back
// (lossless flow control): the tables' imbalance is the cause, the
// measured one its symptom, and two independent errors would send the
// operator after a second fault that is not there. An imbalance with
// any lighter uplink into a switch without such a finding stays.
func (s *Snapshot) foldHeldBack(fs []Finding) []Finding {
	roots := map[uint64]int{} // switch GUID -> index of its ecmp finding
	for i, f := range fs {
		if f.Check == "routing.ecmp-imbalance" && len(f.Entities) > 0 && f.Entities[0].Role == "switch" {
			if _, ok := roots[f.Entities[0].NodeGUID]; !ok {
				roots[f.Entities[0].NodeGUID] = i
			}
		}
	}
	// A switch whose ecmp verdict could not be decided may be the cause
	// as well: a symptom of it is undecided, not a fault of its own.
	open := map[uint64]bool{}
	for _, u := range s.undecided {
		if u.Check == "routing.ecmp-imbalance" {
			open[u.Subject.NodeGUID] = true
		}
	}
	if len(roots) == 0 && len(open) == 0 {
		return fs
	}
	into := map[int][]string{} // root index -> folded texts
	drop := map[int]bool{}
	for i, f := range fs {
		if f.Check != "routing.traffic-imbalance" || len(f.heldBack) == 0 {
			continue
		}
		root := -1
		var names, undecided []string
		explained := true
		for _, n := range f.heldBack {
			r, ok := roots[n.GUID]
			if !ok {
				if open[n.GUID] {
					undecided = append(undecided, s.nodeName(n))
					continue
				}
				explained = false
				break
			}
			if root < 0 || r < root {
				root = r
			}
			names = append(names, s.nodeName(n))
		}
		if !explained {
			continue
		}
		if len(undecided) > 0 {
			drop[i] = true
			s.couldNotDecide("routing.traffic-imbalance", fmt.Sprintf("%s; its lighter uplinks lead to %s, whose routing.ecmp-imbalance could not be decided: it may be that misroute's symptom",
				f.Evidence[0].Text, strings.Join(undecided, ", ")), f.Entities[0])
			continue
		}
		if root < 0 {
			continue
		}
		drop[i] = true
		sw := "a switch"
		if len(f.Entities) > 0 {
			sw = f.Entities[0].Node
		}
		into[root] = append(into[root], fmt.Sprintf("%s's uplinks to %s carry less than its others (%s): held back by the funnel, a symptom of this finding, not reported apart",
			sw, strings.Join(names, ", "), f.Evidence[0].Text))
	}
	if len(drop) == 0 {
		return fs
	}
	out := fs[:0]
	for i, f := range fs {
		if drop[i] {
			continue
		}
		if texts, ok := into[i]; ok {
			for _, t := range texts {
				f.Evidence = append(f.Evidence, Evidence{Name: "routing.traffic-imbalance folded", Text: t})
			}
		}
		out = append(out, f)
	}
	return out
}
