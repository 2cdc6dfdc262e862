package checks

import (
	"fmt"
	"slices"
	"strings"
	"time"

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
	iv := s.Counters.Interval()
	if iv <= 0 {
		return nil
	}
	// Rates, not byte counts: each port's delta spans its own time
	// between readings.
	sent := map[*fabric.Port]float64{} // Gb/s
	s.Counters.Ports(func(r PortReading) {
		if span := r.SpanOf(iv).Seconds(); !r.Reset && span > 0 {
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
		for _, p := range group {
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
		share, _ := s.pathShare(busiest)
		out = append(out, Finding{
			Check:    "routing.traffic-imbalance",
			Severity: sev,
			Title:    fmt.Sprintf("%s sends %.1fx the mean of its %d uplinks' data out of port %d (%s Gb/s), %d of them idle", nodeName(n), ratio, len(group), busiest.Num, gbpsText(most), idle),
			Entities: []Entity{entityOf(busiest, "end"), entityOf(busiest.Remote, "peer")},
			Evidence: []Evidence{
				{Name: "max/mean", Value: ratio, Threshold: ratioBar,
					Text: fmt.Sprintf("port:rate sent over %v %s Gb/s (max/mean %.2f, threshold %.2f); measured on the wire (PortXmitData), whatever the forwarding tables say", iv.Round(time.Millisecond), strings.Join(parts, " "), ratio, ratioBar)},
				{Name: "busiest uplink", Value: most, Unit: "Gb/s", Threshold: busiest.Rate().Gbps(),
					Text: fmt.Sprintf("port %d sent %s Gb/s of its %s Gb/s (%s)", busiest.Num, gbpsText(most), gbpsText(busiest.Rate().Gbps()), busiest.Rate())},
				{Name: "uplinks' mean", Value: mean, Unit: "Gb/s",
					Text: fmt.Sprintf("the %d uplinks sent %s Gb/s each on average", len(group), gbpsText(mean))},
			},
			Impact: Impact{PathShare: share, Slowdown: ratio, Score: share * (1 - 1/ratio),
				Summary: fmt.Sprintf("collectives whose traffic crosses %s's uplinks run at the busiest link's pace: up to %.1fx slower", nodeName(n), ratio)},
			Action: fmt.Sprintf("Compare with 'ibdoctor check' on the tables (routing.ecmp-imbalance): if the tables are balanced, the switch spreads flows unevenly itself — check adaptive routing and the ECMP hash settings of %s (and its firmware), and whether one job's flows all hash alike; then re-measure with --interval.", nodeName(n)),
			Basis:  "delta",
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
