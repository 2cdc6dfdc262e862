// Package htmlpage renders a report and the fabric it is about as one
// self-contained HTML page: the summary and ranked findings as check
// prints them, and a drawing of the fabric (internal/layout) whose links
// and boxes carry the findings' verdicts. Everything is inline (CSS, SVG,
// a little JavaScript); the page fetches nothing, so it opens offline and
// can be attached to a ticket.
package htmlpage

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/layout"
	"github.com/ibdoctor/ibdoctor/internal/route"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Verdict is how a link or box is drawn: the kind of the worst finding
// on it. The judgement is the checks'; this only sorts check IDs into
// the drawing's categories.
type Verdict uint8

// Verdicts, in the order the legend lists them.
const (
	OK Verdict = iota
	Down
	Degraded
	Errors
	Imbalance
	Congestion
	Other
)

var verdictNames = [...]string{"ok", "down", "degraded", "errors", "imbalance", "congestion", "other"}

func (v Verdict) String() string { return verdictNames[v] }

// verdictOf sorts a check into a category by its ID.
func verdictOf(check string) Verdict {
	switch {
	case check == "link.down" || check == "link.polling":
		return Down
	case strings.HasPrefix(check, "link.degraded") || strings.HasPrefix(check, "link."):
		return Degraded
	case check == "counters.errors":
		return Errors
	case strings.HasPrefix(check, "routing."):
		return Imbalance
	case check == "counters.congestion" || check == "counters.utilization":
		return Congestion
	}
	return Other
}

// mark is the worst finding on a drawn element.
type mark struct {
	sev     checks.Severity
	verdict Verdict
	rank    int // the finding's number (1-based) in the ranked list; 0: none
}

func (m *mark) add(f checks.Finding, rank int) {
	if m.rank == 0 || f.Severity > m.sev {
		m.sev, m.verdict, m.rank = f.Severity, verdictOf(f.Check), rank
	}
}

// model is what the page shows, resolved against the drawing.
type model struct {
	d        *layout.Drawing
	f        *fabric.Fabric
	readings map[*fabric.Port]checks.PortReading
	interval float64 // seconds, 0 without --interval
	loads    checks.Loads
	computed bool // the routes are ibdoctor's, not read from the fabric
	// Marks of boxes and bundles: the worst finding on each (only
	// findings of warning and above colour a line or frame a box; an
	// info finding shows as a badge on a box).
	box, bundle map[int]*mark
	// Per finding: the boxes and bundles it names, and for routing
	// findings the bundles on the routes concerned.
	hl []highlight
	// unr: per box, its nodes' ports whose far end did not answer
	// (fabric.Unreachable's NodeInfo out of them): could not look, which
	// the drawing must not show as "not there".
	unr map[int][]string
}

type highlight struct {
	Boxes   []int `json:"b,omitempty"`
	Bundles []int `json:"l,omitempty"`
	Paths   []int `json:"p,omitempty"`
}

func newModel(d *layout.Drawing, s *checks.Snapshot, fs []checks.Finding) *model {
	m := &model{d: d, f: s.Fabric, loads: s.Loads, computed: s.RoutesComputed, box: map[int]*mark{}, bundle: map[int]*mark{}}
	if s.Counters != nil {
		m.readings = map[*fabric.Port]checks.PortReading{}
		m.interval = s.Counters.Interval().Seconds()
		s.Counters.Ports(func(r checks.PortReading) {
			if r.Port != nil {
				// Kept past the call: a reading's buffers are the
				// call's (checks.Counters).
				m.readings[r.Port] = r.Clone()
			}
		})
	}
	for _, u := range s.Fabric.Unreachable {
		if u.What != "NodeInfo" || u.FromGUID == 0 {
			continue
		}
		n := s.Fabric.NodeByGUID(u.FromGUID)
		if n == nil {
			continue
		}
		if bi := d.BoxOf(n); bi >= 0 {
			if m.unr == nil {
				m.unr = map[int][]string{}
			}
			m.unr[bi] = append(m.unr[bi], fmt.Sprintf("%s/%d", m.f.NameOf(n), u.FromPort))
		}
	}
	var an *route.Analyzer
	for i, f := range fs {
		rank := i + 1
		var h highlight
		for _, e := range f.Entities {
			n := s.Fabric.NodeByGUID(e.NodeGUID)
			if n == nil {
				continue
			}
			bi := d.BoxOf(n)
			if bi < 0 {
				continue
			}
			var p *fabric.Port
			if e.Port > 0 && e.Port < len(n.Ports) {
				p = n.Ports[e.Port]
			}
			li := -1
			if p != nil {
				li = d.BundleOf(p)
			}
			h.Boxes = appendOnce(h.Boxes, bi)
			if li >= 0 {
				h.Bundles = appendOnce(h.Bundles, li)
			}
			// A switch is marked by findings about it, not by every
			// finding about one of its ports (the link carries those); a
			// hosts box by anything about its hosts.
			if p == nil || d.Boxes[bi].Kind == layout.Hosts || li < 0 {
				m.markBox(bi, f, rank)
			}
			if li >= 0 {
				mk := m.bundle[li]
				if mk == nil {
					mk = &mark{}
					m.bundle[li] = mk
				}
				mk.add(f, rank)
			}
		}
		if strings.HasPrefix(f.Check, "routing.") && hasLFTs(s.Fabric) {
			if an == nil {
				an = route.NewAnalyzer(s.Fabric)
			}
			h.Paths = m.paths(an, f, h.Bundles)
		}
		m.hl = append(m.hl, h)
	}
	return m
}

func (m *model) markBox(bi int, f checks.Finding, rank int) {
	mk := m.box[bi]
	if mk == nil {
		mk = &mark{}
		m.box[bi] = mk
	}
	mk.add(f, rank)
}

func appendOnce(s []int, v int) []int {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

func hasLFTs(f *fabric.Fabric) bool {
	for _, n := range f.Nodes {
		if n.Switch != nil && n.Switch.LFT != nil {
			return true
		}
	}
	return false
}

// maxPathDests bounds the destinations traced for one routing finding:
// enough to show where the traffic goes, cheap on a 50k-node fabric.
const maxPathDests = 32

// paths returns the bundles on the routes a routing finding is about:
// for a source and destination, the route between them; for a switch's
// busiest port, the routes from every leaf to the destinations the
// switch sends out of that port, where they cross it.
func (m *model) paths(an *route.Analyzer, f checks.Finding, skip []int) []int {
	var out []int
	addLinks := func(ps []*fabric.Port) {
		for _, p := range ps {
			if li := m.d.BundleOf(p); li >= 0 && !slices.Contains(skip, li) {
				out = appendOnce(out, li)
			}
		}
	}
	var src, dst, busiest *fabric.Port
	for _, e := range f.Entities {
		n := m.f.NodeByGUID(e.NodeGUID)
		if n == nil || e.Port <= 0 || e.Port >= len(n.Ports) {
			continue
		}
		switch e.Role {
		case "source":
			src = n.Ports[e.Port]
		case "destination":
			dst = n.Ports[e.Port]
		case "busiest":
			// A switch's groups folded into one finding name the
			// worst group's busiest port first.
			if busiest == nil {
				busiest = n.Ports[e.Port]
			}
		}
	}
	switch {
	case src != nil && dst != nil && src.LID != 0 && dst.LID != 0:
		if t, err := route.TraceRoute(m.f, src.LID, dst.LID); err == nil {
			for _, l := range t.Links(m.f) {
				addLinks([]*fabric.Port{l.A})
			}
		}
	case busiest != nil && busiest.Node.Switch != nil:
		sw := busiest.Node
		var leaves []*fabric.Node
		tiers := checks.SwitchTiers(m.f)
		for _, n := range m.f.Nodes {
			if n.Type == mad.NodeSwitch && tiers[n] == 0 {
				leaves = append(leaves, n)
			}
		}
		k := 0
		for _, n := range m.f.Nodes {
			if !checks.IsHost(n) || k >= maxPathDests {
				continue
			}
			for _, p := range n.Ports {
				if p == nil || p.LID == 0 || an.Egress(sw, p.LID) != busiest {
					continue
				}
				k++
				w := an.WalkTo(p)
				down := w.Path(sw)
				addLinks(down)
				for _, l := range leaves {
					ps := w.Path(l)
					if slices.Contains(ps, busiest) {
						addLinks(ps)
					}
				}
				if p.Remote != nil {
					addLinks([]*fabric.Port{p})
				}
			}
		}
	}
	return out
}

// cable describes one cable for the hover card.
func (m *model) cable(l fabric.Link) []string {
	rate := "down"
	if checks.LinkUp(l.A) {
		rate = l.A.Rate().String()
	}
	return []string{m.portLabel(l.A), m.portLabel(l.B), rate, m.portText(l.A), m.portText(l.B), m.loadText(l.A, l.B)}
}

// portLabel names a port as the findings do (fabric.NameOf: a node whose
// description another shares carries its GUID, trial C8).
func (m *model) portLabel(p *fabric.Port) string {
	return fmt.Sprintf("%s/%d", m.f.NameOf(p.Node), p.Num)
}

// portText is a port's counters in a few words: the error counters that
// are not zero, PortXmitWait, and over an interval the utilisation and
// the share of time stalled (computed, and labelled so).
func (m *model) portText(p *fabric.Port) string {
	r, ok := m.readings[p]
	if !ok {
		if m.readings == nil {
			return "counters not read"
		}
		return "no counters"
	}
	var parts []string
	for _, e := range r.Errors {
		if e.Value == 0 && e.Delta == 0 {
			continue
		}
		s := fmt.Sprintf("%s=%d", e.Name, e.Value)
		if e.Delta > 0 {
			s += fmt.Sprintf(" (+%d)", e.Delta)
		}
		parts = append(parts, s)
	}
	if r.XmitWait != nil && r.XmitWait.Value > 0 {
		parts = append(parts, fmt.Sprintf("XmitWait=%d", r.XmitWait.Value))
	}
	if u, ok := r.Utilization(m.interval); ok {
		parts = append(parts, fmt.Sprintf("sent %.0f%% of rate (computed)", u*100))
	}
	if st, ok := r.Stalled(m.interval); ok {
		parts = append(parts, fmt.Sprintf("stalled %.0f%% (computed)", st*100))
	}
	if len(parts) == 0 {
		return "clean"
	}
	return strings.Join(parts, ", ")
}

func (m *model) loadText(a, b *fabric.Port) string {
	if m.loads == nil {
		return "routes not read"
	}
	pa, oka := m.loads.PortPaths(a)
	pb, okb := m.loads.PortPaths(b)
	if !oka && !okb {
		return "not analysed"
	}
	s := fmt.Sprintf("%d paths ->, %d paths <- (of %d hosts' routes)", pa, pb, m.loads.Hosts())
	if m.computed {
		s += ", over routes ibdoctor computed"
	}
	return s
}

// heat is a bundle's hottest cable over the interval: the utilisation
// and stalled share of its busier direction, or -1 when not measured.
func (m *model) heat(b layout.Bundle) (util, stalled float64) {
	util, stalled = -1, -1
	if m.interval <= 0 {
		return
	}
	for _, l := range b.Cables {
		for _, p := range []*fabric.Port{l.A, l.B} {
			r, ok := m.readings[p]
			if !ok {
				continue
			}
			if u, ok := r.Utilization(m.interval); ok {
				util = max(util, u)
			}
			if s, ok := r.Stalled(m.interval); ok {
				stalled = max(stalled, s)
			}
		}
	}
	return
}
