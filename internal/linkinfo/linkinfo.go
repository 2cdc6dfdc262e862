// Package linkinfo lists a fabric's links the way iblinkinfo does — both
// ends, their LIDs, the link's width, speed and state — and marks the links
// that run below what they could: below the best width or speed both ends
// have enabled, or below an operator's expected rate.
//
// It never judges by the Supported masks alone: simulators (ibsim) claim
// every width and speed there, and an end that supports a rate it has not
// enabled cannot train at it. Enabled is what the port was told it may
// use, so a link below what both ends enable trained low.
package linkinfo

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Options tune Rows.
type Options struct {
	// Expect lists acceptable rates. A link whose active rate is none of
	// them and carries less than the slowest of them is marked. Empty:
	// only the enabled masks are judged.
	Expect []mad.Rate
}

// Row is one link: A and B are its two ends. A is the switch end of a
// switch-to-CA link, else the end with the smaller (GUID, port). B is nil
// when A's port is physically up but discovery did not reach the far end.
type Row struct {
	A, B *fabric.Port
	// Rate is the active width and speed, read at A.
	Rate mad.Rate
	// Enabled is the best width and speed both ends have enabled; a zero
	// part means the masks are unknown or have nothing in common.
	Enabled mad.Rate
	// Reasons say why the link is marked; empty when it is not.
	Reasons []string
}

// Degraded reports whether the link is marked.
func (r Row) Degraded() bool { return len(r.Reasons) > 0 }

// linkUp reports whether p carries a trained link whose width and speed
// mean something (C14-24.2.1: PortInfo's active fields are undefined while
// the port is Down).
func linkUp(p *fabric.Port) bool {
	return p != nil && p.PhysState == mad.PhysLinkUp && p.State >= mad.PortStateInit && p.State <= mad.PortStateActiveDefer
}

// Rows returns one row per link of f in discovery order of the A end's
// node, then by port, plus one row per physically up port whose far end
// was not reached.
func Rows(f *fabric.Fabric, o Options) []Row {
	order := make(map[*fabric.Node]int, len(f.Nodes))
	for i, n := range f.Nodes {
		order[n] = i
	}
	var rows []Row
	for _, l := range f.Links() {
		a, b := l.A, l.B
		if a.Node.Type != mad.NodeSwitch && b.Node.Type == mad.NodeSwitch {
			a, b = b, a
		}
		rows = append(rows, judge(a, b, o))
	}
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil || p.Num == 0 || p.Remote != nil || p.PhysState != mad.PhysLinkUp {
				continue
			}
			rows = append(rows, judge(p, nil, o))
		}
	}
	slices.SortStableFunc(rows, func(x, y Row) int {
		return cmp.Or(cmp.Compare(order[x.A.Node], order[y.A.Node]), cmp.Compare(x.A.Num, y.A.Num))
	})
	return rows
}

// judge builds the row of the link a-b (b may be nil).
func judge(a, b *fabric.Port, o Options) Row {
	r := Row{A: a, B: b, Rate: a.Rate()}
	if !linkUp(a) || (b != nil && !linkUp(b)) {
		return r
	}
	if b != nil {
		if e := a.WidthEnabled & b.WidthEnabled; e != 0 {
			r.Enabled.Width = e.Max()
		}
		if e := a.SpeedEnabled & b.SpeedEnabled; e != 0 {
			r.Enabled.Speed = e.Max()
		}
		if w := r.Enabled.Width; w != 0 && r.Rate.Width.Lanes() < w.Lanes() {
			r.Reasons = append(r.Reasons, fmt.Sprintf("width %s, both ends enable %s", r.Rate.Width, w))
		}
		if s := r.Enabled.Speed; s != 0 && r.Rate.Speed.DataGbps() < s.DataGbps() {
			r.Reasons = append(r.Reasons, fmt.Sprintf("speed %s, both ends enable %s", r.Rate.Speed, s))
		}
	}
	if bar, ok := Below(r.Rate, o.Expect); ok {
		r.Reasons = append(r.Reasons, fmt.Sprintf("below the expected %s", bar))
	}
	return r
}

// Below reports whether active is unacceptable against the expected
// rates: it is none of them and carries less than the slowest, which it
// returns.
func Below(active mad.Rate, expect []mad.Rate) (mad.Rate, bool) {
	if len(expect) == 0 || slices.Contains(expect, active) {
		return mad.Rate{}, false
	}
	bar := expect[0]
	for _, e := range expect[1:] {
		if e.Gbps() < bar.Gbps() {
			bar = e
		}
	}
	return bar, active.Gbps() < bar.Gbps()
}

// LID is the LID that names p's node on the wire: port 0's for a switch
// (its other ports have none), the port's own otherwise.
func LID(p *fabric.Port) uint16 {
	if p.Node.Type == mad.NodeSwitch {
		if len(p.Node.Ports) > 0 && p.Node.Ports[0] != nil {
			return p.Node.Ports[0].LID
		}
		return 0
	}
	return p.LID
}
