// Package linkinfo lists a fabric's links the way iblinkinfo does — both
// ends, their LIDs, the link's width, speed and state — and marks the links
// that run below what they should. The judgement is checks' (one verdict
// for links, check and gate: checks.LinkVerdict); this package only lays
// it out in rows.
package linkinfo

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/words"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Options tune Rows.
type Options struct {
	// Expect lists acceptable rates (--expect-rate), for host and
	// switch links alike. Empty: checks' rules decide (what both ends
	// enable, what the link's peers run at, what its devices can do).
	Expect []mad.Rate
	// WithoutLink adds a row (NoLink) per port read without a link, as
	// iblinkinfo lists them.
	WithoutLink bool
}

// Row is one link: A and B are its two ends. A is the switch end of a
// switch-to-CA link, else the end with the smaller (GUID, port). B is nil
// when A's port is physically up but discovery did not reach the far end.
type Row struct {
	A, B *fabric.Port
	// Rate is the active width and speed: the slower of what the two
	// ends report.
	Rate mad.Rate
	// Enabled is the best width and speed both ends have enabled; a zero
	// part means the masks are unknown or have nothing in common.
	Enabled mad.Rate
	// Reasons say why the link is marked (checks' verdict); empty when
	// it is not.
	Reasons []string
	// Undecided says why checks could not decide the link's verdict in
	// a part (an end's PortInfo was not read); empty when it could.
	Undecided []string
	// Loopback: the cable comes back to the node it leaves (checks'
	// link.loopback verdict, Snapshot.LoopbackLinks): no traffic crosses
	// it. Not a rate verdict: it does not make the row Degraded.
	Loopback bool
	// NotActive is the state (Init or Armed) of an end of a link that
	// is physically up but not Active: no data passes (checks.NotActive,
	// link.down's verdict); 0 when both ends are Active or unknown.
	NotActive mad.PortState
	// NoLink: A was read and carries no link (Polling, Disabled, ...):
	// iblinkinfo lists such ports, and a Polling one is where check's
	// link.polling or topology.missing-hca points. B is nil.
	NoLink bool
}

// Degraded reports whether the link runs below its rate.
func (r Row) Degraded() bool { return len(r.Reasons) > 0 }

// Marked reports whether the row is marked: below its rate, or not
// Active (a fault either way: exit 1).
func (r Row) Marked() bool { return r.Degraded() || r.NotActive != 0 }

// Rows returns one row per link of f, plus one per physically up port
// whose far end was not reached and, with o.WithoutLink, one per port
// read without a link; ordered by the A end's node description
// (naturally: leaf2 before leaf10), then by port.
func Rows(f *fabric.Fabric, o Options) []Row {
	snap := &checks.Snapshot{Fabric: f, Expect: checks.Expectations{HostRates: o.Expect, SwitchRates: o.Expect}}
	verdicts := map[*fabric.Port]checks.LinkVerdict{}
	for _, v := range snap.LinkVerdicts() {
		verdicts[v.A], verdicts[v.B] = v, v
	}
	loop := map[*fabric.Port]bool{}
	for _, l := range snap.LoopbackLinks() {
		loop[l.A] = true
	}
	farUnread := map[*fabric.Port]checks.FarUnread{}
	for _, u := range snap.FarUnreadLinks() {
		farUnread[u.Port] = u
	}
	var rows []Row
	for _, l := range f.Links() {
		a, b := l.A, l.B
		if a.Node.Type != mad.NodeSwitch && b.Node.Type == mad.NodeSwitch {
			a, b = b, a
		}
		r := Row{A: a, B: b, Rate: a.Rate(), Loopback: loop[l.A]}
		if st, ok := checks.NotActive(a); ok {
			r.NotActive = st
		}
		if e := a.WidthEnabled & b.WidthEnabled; e != 0 {
			r.Enabled.Width = e.Max()
		}
		if e := a.SpeedEnabled & b.SpeedEnabled; e != 0 {
			r.Enabled.Speed = e.Max()
		}
		if v, ok := verdicts[a]; ok {
			r.Rate = v.Active
			if v.SlowWidth() {
				r.Reasons = append(r.Reasons, fmt.Sprintf("width %s, expected %s: %s", v.Active.Width, v.Want.Width, v.WidthWhy))
			}
			if v.SlowSpeed() {
				r.Reasons = append(r.Reasons, fmt.Sprintf("speed %s, expected %s: %s", v.Active.Speed, v.Want.Speed, v.SpeedWhy))
			}
			if v.Unread != nil && len(r.Reasons) > 0 {
				r.Reasons = append(r.Reasons, fmt.Sprintf("judged from %s/%d (%s/%d's PortInfo not read)", v.Read().Node.Description, v.Read().Num, v.Unread.Node.Description, v.Unread.Num))
			}
			if v.WidthOpen {
				r.Undecided = append(r.Undecided, fmt.Sprintf("width %s: %s's enabled/supported widths not read", v.Active.Width, v.Unread.Node.Description))
			}
			if v.SpeedOpen {
				r.Undecided = append(r.Undecided, fmt.Sprintf("speed %s: %s's enabled/supported speeds not read", v.Active.Speed, v.Unread.Node.Description))
			}
		}
		rows = append(rows, r)
	}
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil || p.Num == 0 || p.Remote != nil {
				continue
			}
			switch p.PhysState {
			case mad.PhysLinkUp:
				r := Row{A: p, Rate: p.Rate()}
				if u, ok := farUnread[p]; ok {
					if u.WidthOpen {
						r.Undecided = append(r.Undecided, fmt.Sprintf("width %s with %s enabled here: far end not read", u.Active.Width, u.Enabled.Width))
					}
					if u.SpeedOpen {
						r.Undecided = append(r.Undecided, fmt.Sprintf("speed %s with %s enabled here: far end not read", u.Active.Speed, u.Enabled.Speed))
					}
				}
				rows = append(rows, r)
			case mad.PhysPolling, mad.PhysDisabled, mad.PhysConfigTraining, mad.PhysLinkErrorRecovery, mad.PhysSleep:
				if !o.WithoutLink {
					continue
				}
				// A state read (0 is "not known": a file without
				// states) and no link: listed as iblinkinfo does.
				rows = append(rows, Row{A: p, NoLink: true})
			}
		}
	}
	// The order an operator looks a switch up in, not discovery's: by
	// name (leaf2 before leaf10), a node's rows together even when its
	// description is shared (by GUID), then by port.
	slices.SortFunc(rows, func(x, y Row) int {
		a, b := x.A.Node, y.A.Node
		return cmp.Or(words.Natural(a.Description, b.Description), cmp.Compare(a.Description, b.Description),
			cmp.Compare(a.GUID, b.GUID), cmp.Compare(x.A.Num, y.A.Num))
	})
	return rows
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
