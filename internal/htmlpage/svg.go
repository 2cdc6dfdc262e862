package htmlpage

import (
	"fmt"
	"html"
	"strings"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/layout"
	"github.com/ibdoctor/ibdoctor/internal/words"
	"github.com/ibdoctor/ibdoctor/mad"
)

// usualCounts returns the most common cable count of switch-to-switch
// bundles and of bundles to hosts: only bundles that differ, and marked
// ones, carry their count as text (the legend states the usual ones and
// the hover card always has it), which keeps a regular fabric readable
// and a 9k-node page small.
func (m *model) usualCounts() map[int]int {
	freq := map[[2]int]int{}
	for _, bu := range m.d.Bundles {
		freq[[2]int{m.pairKind(bu), len(bu.Cables)}]++
	}
	usual, best := map[int]int{}, map[int]int{}
	for k, c := range freq {
		if c > best[k[0]] || (c == best[k[0]] && k[1] < usual[k[0]]) {
			best[k[0]], usual[k[0]] = c, k[1]
		}
	}
	return usual
}

// pairKind is 1 for a bundle to a hosts box, 0 between switches or pods.
func (m *model) pairKind(bu layout.Bundle) int {
	if m.d.Boxes[bu.A].Kind == layout.Hosts || m.d.Boxes[bu.B].Kind == layout.Hosts {
		return 1
	}
	return 0
}

// writeSVG writes the drawing. Elements carry ids ("b3" a box, "l12" a
// bundle) the findings and the search refer to; classes carry the
// verdict ("v2") and severity ("s3") so the style sheet draws them, with a
// line style per verdict as well as a colour.
func (m *model) writeSVG(b *strings.Builder) {
	d := m.d
	fmt.Fprintf(b, `<svg id="fab" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %s %s" data-w="%s" data-h="%s" preserveAspectRatio="xMidYMin meet" role="img" aria-label="drawing of the fabric">`,
		num(d.Width), num(d.Height), num(d.Width), num(d.Height))
	// Pods behind everything.
	for g, s := range d.Groups {
		if s.X < 0 {
			continue
		}
		fmt.Fprintf(b, `<rect class="pod" x="%s" y="%s" width="%s" height="%s" rx="6"/><text class="podl" x="%s" y="%s">pod %d</text>`,
			num(s.X-layout.Gap/2), num(s.Y-16), num(s.W+layout.Gap), num(s.H+22), num(s.X+s.W), num(s.Y-5), g+1)
	}
	for _, r := range d.Rows {
		fmt.Fprintf(b, `<text class="rowl" x="2" y="%s">%s</text>`, num(r.Y-4), html.EscapeString(r.Label))
	}
	b.WriteString(`<g id="links">`)
	usual := m.usualCounts()
	var badges strings.Builder // drawn over every line
	for i, bu := range d.Bundles {
		a, c := d.Boxes[bu.A], d.Boxes[bu.B]
		cls := "l"
		mk := m.bundle[i]
		if mk != nil && mk.sev >= checks.Warning {
			cls += fmt.Sprintf(" v%d s%d", mk.verdict, mk.sev)
		}
		if u, s := m.heat(bu); u >= 0 || s >= 0 {
			cls += fmt.Sprintf(" hu%d hw%d", bucket(u), bucket(s))
		}
		if w := widthClass(len(bu.Cables)); w != "" {
			cls += " " + w
		}
		var path string
		var lx, ly, bx, by float64 // count label; badge
		if a.Row == c.Row {
			// Same row (a dragonfly's switches): an arc above the row.
			x1, x2, y := a.X+a.W/2, c.X+c.W/2, a.Y
			h := min(layout.RowGap*0.9, 20+abs(x2-x1)/6)
			path = fmt.Sprintf("M%s %sQ%s %s %s %s", num(x1), num(y), num((x1+x2)/2), num(y-h), num(x2), num(y))
			lx, ly = (x1+x2)/2, y-h/2
			bx, by = lx, ly-14
		} else {
			x1, y1 := a.X+a.W/2, a.Y+a.H
			x2, y2 := c.X+c.W/2, c.Y
			path = fmt.Sprintf("M%s %sL%s %s", num(x1), num(y1), num(x2), num(y2))
			lx, ly = x1+(x2-x1)*0.72, y1+(y2-y1)*0.72
			bx, by = x1+(x2-x1)*0.4, y1+(y2-y1)*0.4
		}
		fmt.Fprintf(b, `<path id="l%d" class="%s" d="%s"/>`, i, cls, path)
		if n := len(bu.Cables); n != usual[m.pairKind(bu)] || (mk != nil && mk.sev >= checks.Warning) {
			fmt.Fprintf(b, `<text class="cnt" x="%s" y="%s">%d</text>`, num(lx), num(ly), n)
		}
		if mk != nil && mk.sev >= checks.Warning {
			fmt.Fprintf(&badges, `<g class="lb s%d"><circle cx="%s" cy="%s" r="9"/><text x="%s" y="%s">%d</text></g>`,
				mk.sev, num(bx), num(by), num(bx), num(by+4), mk.rank)
		}
	}
	b.WriteString(`</g><g id="badges">`)
	b.WriteString(badges.String())
	b.WriteString(`</g><g id="boxes">`)
	for i, bx := range d.Boxes {
		cls := "bx k" + fmt.Sprint(bx.Kind)
		if bx.Kind == layout.Switch && bx.Row < len(d.Rows) && d.Rows[bx.Row].Label == "leaf" {
			cls += " leaf"
		}
		mk := m.box[i]
		if mk != nil {
			cls += fmt.Sprintf(" s%d", mk.sev)
		}
		fmt.Fprintf(b, `<g id="b%d" class="%s"><rect x="%s" y="%s" width="%s" height="%s" rx="3"/>`,
			i, cls, num(bx.X), num(bx.Y), num(bx.W), num(bx.H))
		cx := bx.X + bx.W/2
		switch bx.Kind {
		case layout.Hosts:
			fmt.Fprintf(b, `<text x="%s" y="%s">%s</text>`, num(cx), num(bx.Y+13), html.EscapeString(bx.Label))
			fmt.Fprintf(b, `<text class="sub" x="%s" y="%s">%s</text>`, num(cx), num(bx.Y+27), html.EscapeString(hostState(bx)))
		case layout.Pod:
			fmt.Fprintf(b, `<text x="%s" y="%s">%s</text>`, num(cx), num(bx.Y+16), html.EscapeString(bx.Label))
			fmt.Fprintf(b, `<text class="sub" x="%s" y="%s">%d switches</text>`, num(cx), num(bx.Y+32), len(bx.Switches))
		default:
			fmt.Fprintf(b, `<text x="%s" y="%s">%s</text>`, num(cx), num(bx.Y+17), html.EscapeString(short(bx.Label, int((bx.W-8)/layout.CharW))))
		}
		if mk != nil {
			// The number of the worst finding on it, as in the list.
			fmt.Fprintf(b, `<circle class="badge" cx="%s" cy="%s" r="9"/><text class="bt" x="%s" y="%s">%d</text>`,
				num(bx.X+bx.W), num(bx.Y), num(bx.X+bx.W), num(bx.Y+4), mk.rank)
		}
		b.WriteString(`</g>`)
	}
	b.WriteString(`</g>`)
	m.writeUnreached(b)
	b.WriteString(`</svg>`)
}

// writeUnreached draws, above each box with ports whose far end did not
// answer, a dashed stub counting them: what lies there was not read,
// and is neither absent nor healthy.
func (m *model) writeUnreached(b *strings.Builder) {
	if len(m.unr) == 0 {
		return
	}
	b.WriteString(`<g id="unreached">`)
	for i, bx := range m.d.Boxes {
		ports := m.unr[i]
		if len(ports) == 0 {
			continue
		}
		cx := bx.X + bx.W/2
		word := "ports"
		if len(ports) == 1 {
			word = "port"
		}
		fmt.Fprintf(b, `<g class="unr"><title>%s</title><path d="M%s %sV%s"/><text x="%s" y="%s">%d unanswered</text></g>`,
			html.EscapeString(fmt.Sprintf("%d %s whose far end did not answer (could not look, not absent): %s", len(ports), word, strings.Join(ports, ", "))),
			num(cx), num(bx.Y), num(bx.Y-layout.RowGap*0.45), num(cx), num(bx.Y-layout.RowGap*0.45-3), len(ports))
	}
	b.WriteString(`</g>`)
}

// hostState counts a hosts box's host adapters by the state of their
// links: "31 HCAs up, 1 not up" (the label counts hosts, this their HCAs).
// Aggregation Nodes and other built-in CAs or routers are no HCAs of a
// host (the checks' role judgement, checks.IsHost): named apart, trial C6
// ("19 HCAs up (+1 other)" for 18 hosts and their leaf's AN).
func hostState(bx layout.Box) string {
	up, notUp, ans, others := 0, 0, 0, 0
	for _, n := range bx.Members {
		switch {
		case checks.IsAggregationNode(n):
			ans++
			continue
		case !checks.IsHost(n):
			others++
			continue
		}
		ok := false
		for _, p := range n.Ports {
			if p != nil && p.Num != 0 && checks.LinkUp(p) && p.State == mad.PortStateActive {
				ok = true
			}
		}
		if ok {
			up++
		} else {
			notUp++
		}
	}
	s := fmt.Sprintf("%d HCAs up", up)
	if notUp > 0 {
		s += fmt.Sprintf(", %d not up", notUp)
	}
	var extra []string
	if ans > 0 {
		extra = append(extra, "+"+words.Count(ans, "Aggregation Node"))
	}
	if others > 0 {
		extra = append(extra, fmt.Sprintf("+%d other", others))
	}
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, ", ") + ")"
	}
	return s
}

// caState is one CA's ports' state for the search index.
func caState(n *fabric.Node) string {
	var s []string
	for _, p := range n.Ports {
		if p == nil || p.Num == 0 {
			continue
		}
		s = append(s, fmt.Sprintf("port %d %s", p.Num, p.State))
	}
	return strings.Join(s, ", ")
}

func bucket(v float64) int {
	switch {
	case v < 0:
		return 0
	case v < 0.05:
		return 1
	case v < 0.25:
		return 2
	case v < 0.5:
		return 3
	case v < 0.8:
		return 4
	}
	return 5
}

func widthClass(n int) string {
	switch {
	case n >= 16:
		return "w3"
	case n >= 4:
		return "w2"
	case n >= 2:
		return "w1"
	}
	return ""
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

func short(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// num prints a coordinate with at most one decimal (the page's size is
// mostly coordinates).
func num(v float64) string {
	s := fmt.Sprintf("%.1f", v)
	s = strings.TrimSuffix(s, ".0")
	return s
}
