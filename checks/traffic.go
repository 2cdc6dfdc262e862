package checks

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
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
	sent := map[*fabric.Port]uint64{}
	s.Counters.Ports(func(r PortReading) {
		if !r.Reset {
			sent[r.Port] = r.XmitBytes
		}
	})
	iv := s.Counters.Interval().Seconds()
	if iv <= 0 {
		return nil
	}
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
		var group []*fabric.Port
		for _, p := range n.Ports {
			if p == nil || p.Num == 0 || !interSwitch(p) || !linkUp(p) || tiers[p.Remote.Node] <= tiers[n] {
				continue
			}
			if _, ok := sent[p]; !ok {
				return nil // a port of the group was not read: could not decide
			}
			group = append(group, p)
		}
		if len(group) < 2 {
			continue
		}
		var total, most uint64
		var busiest *fabric.Port
		for _, p := range group {
			total += sent[p]
			if sent[p] > most {
				most, busiest = sent[p], p
			}
		}
		// Too little traffic to judge: under 1% of the busiest link's
		// rate over the interval.
		if busiest == nil || float64(most)*8/iv < 0.01*busiest.Rate().Gbps()*1e9 {
			continue
		}
		mean := float64(total) / float64(len(group))
		ratio := float64(most) / mean
		if ratio <= ratioBar {
			continue
		}
		idle := 0
		var parts []string
		for _, p := range group {
			if float64(sent[p]) < 0.1*float64(most) {
				idle++
			}
			parts = append(parts, fmt.Sprintf("%d:%.0f%%", p.Num, 100*float64(sent[p])/float64(total)))
		}
		sev := Warning
		switch {
		case ratio >= 2 && idle > 0:
			sev = Critical
		case ratio >= 1.5:
			sev = Error
		}
		share, _ := s.pathShare(busiest)
		out = append(out, Finding{
			Check:    "routing.traffic-imbalance",
			Severity: sev,
			Title:    fmt.Sprintf("%s sends %.1fx the mean of its %d uplinks' data out of port %d, %d of them idle", nodeName(n), ratio, len(group), busiest.Num, idle),
			Entities: []Entity{entityOf(busiest, "end"), entityOf(busiest.Remote, "peer")},
			Evidence: []Evidence{{Name: "max/mean", Value: ratio, Threshold: ratioBar,
				Text: fmt.Sprintf("port:share of the uplinks' data sent over %s %s (max/mean %.2f, threshold %.2f); measured on the wire (PortXmitData), whatever the forwarding tables say", s.Counters.Interval(), strings.Join(parts, " "), ratio, ratioBar)}},
			Impact: Impact{PathShare: share, Slowdown: ratio, Score: share * (1 - 1/ratio),
				Summary: fmt.Sprintf("collectives whose traffic crosses %s's uplinks run at the busiest link's pace: up to %.1fx slower", nodeName(n), ratio)},
			Action: fmt.Sprintf("Compare with 'ibdoctor check' on the tables (routing.ecmp-imbalance): if the tables are balanced, the switch spreads flows unevenly itself — check adaptive routing and the ECMP hash settings of %s (and its firmware), and whether one job's flows all hash alike; then re-measure with --interval.", nodeName(n)),
			Basis:  "delta",
		})
	}
	slices.SortFunc(out, func(a, b Finding) int { return strings.Compare(a.Title, b.Title) })
	return out
}
