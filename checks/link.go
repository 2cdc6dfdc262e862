package checks

import (
	"fmt"
	"strings"

	"github.com/ibdoctor/ibdoctor/internal/devices"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

func init() {
	register(Check{
		ID:      "link.degraded-width",
		Summary: "an active link runs at fewer lanes than both ends have enabled, than its parallel siblings, or than the expected rate",
		Needs:   []string{"topology", "rates"},
		reads:   memoLinks | memoVerdicts,
		run:     func(s *Snapshot) []Finding { return s.degradedLinks(true) },
	})
	register(Check{
		ID:      "link.degraded-speed",
		Summary: "an active link runs at a lower lane speed than both ends have enabled, than its parallel siblings, or than the expected rate",
		Needs:   []string{"topology", "rates"},
		reads:   memoLinks | memoVerdicts,
		run:     func(s *Snapshot) []Finding { return s.degradedLinks(false) },
	})
	register(Check{
		ID:      "link.slower-hardware",
		Summary: "an active link runs as fast as one end's hardware supports, below what its peers run (a lone slower HCA or port, not a sub-fleet)",
		Needs:   []string{"topology", "rates"},
		reads:   memoLinks | memoVerdicts,
		run:     (*Snapshot).slowerHardware,
	})
	register(Check{
		ID:      "link.polling",
		Summary: "a port where a link is expected is stuck training: a host port (Polling, configuration training, error recovery), or a switch port that sees a far end and does not come up",
		Needs:   []string{"topology"},
		run:     (*Snapshot).pollingPorts,
	})
	register(Check{
		ID:      "link.down",
		Summary: "a link in the expected topology is gone, a host port is disabled, or a physically up link was never activated",
		Needs:   []string{"topology"},
		run:     (*Snapshot).downLinks,
	})
}

// linkUp reports whether a port carries a trained link whose width and
// speed mean something (C14-24.2.1: not while the port is Down).
func linkUp(p *fabric.Port) bool {
	return p != nil && p.PhysState == mad.PhysLinkUp && p.State >= mad.PortStateInit && p.State <= mad.PortStateActiveDefer
}

func (s *Snapshot) degradedLinks(width bool) []Finding {
	var out []Finding
	id := "link.degraded-speed"
	if width {
		id = "link.degraded-width"
	}
	for _, u := range s.FarUnreadLinks() {
		if (width && u.WidthOpen) || (!width && u.SpeedOpen) {
			s.couldNotDecide(id, s.farUnreadText(u, width), s.entityOf(u.Port, "end"))
		}
	}
	for _, v := range s.reportedVerdicts() {
		a, b, active := v.A, v.B, v.Active
		if v.Unread != nil && ((width && v.WidthOpen) || (!width && v.SpeedOpen)) {
			s.couldNotDecide(id, s.unreadEndText(v), s.entityOf(a, "end"))
		}
		if (width && !v.SlowWidth()) || (!width && !v.SlowSpeed()) {
			continue
		}
		wantRate := active
		var title, action string
		var ev []Evidence
		if width {
			wantRate.Width = v.Want.Width
			title = fmt.Sprintf("Link %s trained at %s instead of %s", s.linkName(a), active.Width, v.Want.Width)
			ev = append(ev, Evidence{Name: "LinkWidthActive", Value: float64(active.Width.Lanes()), Unit: "lanes", Threshold: float64(v.Want.Width.Lanes()),
				Text: fmt.Sprintf("active %s, expected %s (%s)", active, wantRate, v.WidthWhy)})
			action = fmt.Sprintf("Reseat or replace the cable between %s and %s: a link that trains below its width has a bad lane or connector. Check both ends for symbol errors (ibdoctor counters), then confirm with 'ibdoctor links' that it trains at %s.",
				s.entityOf(a, "").String(), s.entityOf(b, "").String(), v.Want.Width)
			if a.WidthEnabled == 0 && b.WidthEnabled == 0 && a.StateKnown() && b.StateKnown() {
				// Neither mask was read (a file that records only the
				// active rate, trial C1): a port configured down is as
				// likely as a bad lane, and only the fabric can tell.
				action += fmt.Sprintf(" Neither end's LinkWidthEnabled was read: if 'smpquery portinfo' shows one without %s, re-enable it ('ibportstate LID PORT width 255') instead of replacing the cable.", v.Want.Width)
			}
		} else {
			wantRate.Speed = v.Want.Speed
			title = fmt.Sprintf("Link %s trained at %s instead of %s", s.linkName(a), active.Speed, v.Want.Speed)
			ev = append(ev, Evidence{Name: "LinkSpeedActive", Value: active.Speed.DataGbps(), Unit: "Gb/s per lane", Threshold: v.Want.Speed.DataGbps(),
				Text: fmt.Sprintf("active %s, expected %s (%s)", active, wantRate, v.SpeedWhy)})
			action = fmt.Sprintf("Check the cable and transceivers between %s and %s: a link below what both ends can run usually has a marginal cable, a wrong cable type, a speed limited in the port's configuration or a firmware limit. Reseat, then replace the cable; confirm with 'ibdoctor links'.",
				s.entityOf(a, "").String(), s.entityOf(b, "").String())
			if v.SpeedUnsure != "" {
				title = fmt.Sprintf("Link %s trained at %s where %s was expected (its HCA's supported speeds are not in the file)", s.linkName(a), active.Speed, v.Want.Speed)
				ev[0].Text += "; " + v.SpeedUnsure
				h := s.entityOf(hostEnd(a, b), "")
				action = fmt.Sprintf("First read what %s supports on the fabric ('ibportstate %d %d', LinkSpeedSupported, or 'ibdoctor check' run live): if it supports no more than %s, the link runs its best (an HCA slower than its peers, not a cable fault); if it supports %s, check the cable and transceivers between %s and %s, reseat, then replace the cable.",
					h.String(), h.LID, hostEnd(a, b).Num, active.Speed, v.Want.Speed, s.entityOf(a, "").String(), s.entityOf(b, "").String())
			}
		}
		// The slower end's reading is the link's; when the two ends say
		// different things, the evidence says so rather than choose in
		// silence (ibnetdiscover prints each end's own reading).
		if width && a.WidthActive != 0 && b.WidthActive != 0 && a.WidthActive != b.WidthActive {
			ev[0].Text += fmt.Sprintf("; the two ends disagree: %s reports %s, %s %s (the narrower is taken)", s.entityOf(a, "").String(), a.WidthActive, s.entityOf(b, "").String(), b.WidthActive)
		}
		if !width && a.SpeedActive != 0 && b.SpeedActive != 0 && a.SpeedActive != b.SpeedActive {
			ev[0].Text += fmt.Sprintf("; the two ends disagree: %s reports %s, %s %s (the slower is taken)", s.entityOf(a, "").String(), a.SpeedActive, s.entityOf(b, "").String(), b.SpeedActive)
		}
		if lim := enabledLimit(a, b, width, v.Want); lim != nil {
			// The link runs what that port allows: a configuration
			// (ibportstate, an SM or switch setting), not a bad lane;
			// a cable swap changes nothing (trial A3).
			other := b
			if lim == b {
				other = a
			}
			field, part, mine, theirs := "LinkWidthEnabled", "width", lim.WidthEnabled.String(), other.WidthEnabled.String()
			set := "width 255"
			if !width {
				field, part, mine, theirs = "LinkSpeedEnabled", "speed", lim.SpeedEnabled.String(), other.SpeedEnabled.String()
				set = "speed 15"
				if v.Want.Speed > mad.SpeedQDR {
					field, set = "LinkSpeedExtEnabled", "espeed N (N the LinkSpeedExtSupported mask 'smpquery portinfo' shows)"
				}
			}
			le, oe := s.entityOf(lim, ""), s.entityOf(other, "")
			ev = append(ev, Evidence{Name: "enabled", Text: fmt.Sprintf("%s has only %s enabled (%s; %s: %s): the link runs the best both ends enable", le.String(), mine, field, oe.String(), theirs)})
			action = fmt.Sprintf("Re-enable the %s at %s: its %s allows only %s, so the link runs exactly that; the cable is not at fault. Set it back to what the port supports ('ibportstate %d %d %s', then 'ibportstate %d %d reset' to retrain) or undo the SM or switch setting that lowered it, then confirm with 'ibdoctor links' that it trains at %s.",
				part, le.String(), field, mine, le.LID, lim.Num, set, le.LID, lim.Num, wantRate)
		}
		if v.Unread != nil {
			ev = append(ev, Evidence{Name: "unread end", Text: s.unreadEndText(v)})
		}
		bar := wantRate
		if v.CappedWhy != "" {
			// A second fault on the link: one end's hardware caps it
			// below its peers too. The loss is against what the peers
			// run, and the fix for the degradation restores only
			// wantRate (trial T12: "100 of 200 Gb/s" for a link whose
			// peers run 400, the limit reported nowhere).
			bar = v.Peer
			part := "speed"
			if width {
				part = "width"
			}
			ev = append(ev, Evidence{Name: "hardware", Text: fmt.Sprintf("%s: %s; fixing the %s restores %s (%s Gb/s), not the peers' %s (%s Gb/s)",
				v.CappedWhy, v.PeerCounts, part, wantRate, fmtGbps(wantRate.Gbps()), v.Peer, fmtGbps(v.Peer.Gbps()))})
			action += fmt.Sprintf(" Even then the link runs below its peers: %s supports at most %s; replace it (or its cable, if the cable is the slower part) with one matching the fleet's %s, or accept it.",
				s.entityOf(v.Slow, "").String(), supportedRate(v.Slow), v.Peer)
		}
		im := s.linkImpact(a, active, bar)
		sev := Warning
		lost := 1 - active.Gbps()/bar.Gbps()
		switch {
		case isSwitchLink(a) && lost >= 0.5:
			sev = Critical
		case isSwitchLink(a) || lost >= 0.5:
			sev = Error
		}
		if !width && v.SpeedUnsure != "" && !v.SlowWidth() {
			// Not known to be degraded: worth a look, not a cable to replace.
			sev = Warning
		}
		out = append(out, Finding{
			Check:    id,
			Severity: sev,
			Title:    title,
			Entities: []Entity{s.entityOf(a, "end"), s.entityOf(b, "peer")},
			Evidence: ev,
			Impact:   im,
			Action:   action,
			Basis:    "topology",
		})
	}
	return out
}

// enabledLimit returns the end of link a-b whose enabled mask lacks the
// width (or speed) the link is expected to run while its hardware
// supports it (or its support is unknown): the port was configured
// down. Nil when both ends enable it, or an end's PortInfo was not read.
func enabledLimit(a, b *fabric.Port, width bool, want mad.Rate) *fabric.Port {
	for _, p := range []*fabric.Port{a, b} {
		if p == nil || p.Unreached&fabric.UnreachedInfo != 0 {
			continue
		}
		if width && want.Width != 0 && p.WidthEnabled != 0 && !p.WidthEnabled.Has(want.Width) && (p.WidthSupported == 0 || p.WidthSupported.Has(want.Width)) {
			return p
		}
		if !width && want.Speed != 0 && p.SpeedEnabled != 0 && !p.SpeedEnabled.Has(want.Speed) && (p.SpeedSupported == 0 || p.SpeedSupported.Has(want.Speed)) {
			return p
		}
	}
	return nil
}

// unreadEndText says how a link with an unread end was judged, for
// evidence and the undecided list.
func (s *Snapshot) unreadEndText(v LinkVerdict) string {
	u, r := s.entityOf(v.Unread, "").String(), s.entityOf(v.Read(), "").String()
	t := fmt.Sprintf("%s's PortInfo was not read: judged from %s, which runs %s (a link's active width and speed are the same at both ends); what %s has enabled ", u, r, v.Active, u)
	if v.UnreadParallel {
		return t + fmt.Sprintf("is unknown, what it supports is taken from %s's read ports cabled to %s", s.Fabric.NameOf(v.Unread.Node), s.Fabric.NameOf(v.Read().Node))
	}
	return t + "and supports is unknown"
}

// farUnreadText says why a link whose far end did not answer is
// undecided in its width (or speed): the read end alone cannot tell a
// fault from a far end that enables no more.
func (s *Snapshot) farUnreadText(u FarUnread, width bool) string {
	e := s.entityOf(u.Port, "").String()
	run, en, part := u.Active.Width.String(), u.Enabled.Width.String(), "width"
	if !width {
		run, en, part = u.Active.Speed.String(), u.Enabled.Speed.String(), "speed"
	}
	return fmt.Sprintf("%s runs %s with %s enabled; its far end did not answer (NodeInfo), so its enabled %s is unknown: a link trains at the best both ends enable, so this one is degraded unless the far end enables only %s", e, run, en, part, run)
}

// slowerHardware reports each link that is not degraded (it trained at
// the best both ends support) but runs below its peers because one end's
// hardware supports no more: a 200 Gb/s HCA in a 400 Gb/s fleet slows
// every collective crossing it, and no other check names it.
func (s *Snapshot) slowerHardware() []Finding {
	var out []Finding
	for _, v := range s.reportedVerdicts() {
		if v.HardwareOpen {
			s.couldNotDecide("link.slower-hardware", s.unreadEndText(v)+fmt.Sprintf("; the link runs below its peers' %s", v.Peer), s.entityOf(v.A, "end"))
		}
		if !v.SlowerHardware() {
			continue
		}
		slow, other := v.Slow, v.Slow.Remote
		if other == nil || (other != v.A && other != v.B) {
			other = v.B
			if slow == v.B {
				other = v.A
			}
		}
		se, oe := s.entityOf(slow, "").String(), s.entityOf(other, "").String()
		sup := supportedRate(slow)
		part, value, unit, threshold := "LinkSpeedSupported", sup.Speed.DataGbps(), "Gb/s per lane", v.Peer.Speed.DataGbps()
		if v.Peer.Speed.DataGbps() <= v.Active.Speed.DataGbps() {
			part, value, unit, threshold = "LinkWidthSupported", float64(sup.Width.Lanes()), "lanes", float64(v.Peer.Width.Lanes())
		}
		what := "port"
		if slow.Node.Type != mad.NodeSwitch {
			what = "HCA"
		}
		title := fmt.Sprintf("%s %s supports at most %s; its peers run %s (link to %s)", what, se, sup, v.Peer, oe)
		ev := []Evidence{
			{Name: part, Value: value, Unit: unit, Threshold: threshold,
				Text: fmt.Sprintf("supported: %s width %s, speed %s; %s width %s, speed %s; the link runs %s, the best both ends support (not degraded)",
					se, slow.WidthSupported, slow.SpeedSupported, oe, other.WidthSupported, other.SpeedSupported, v.Active)},
			{Name: "peers", Text: fmt.Sprintf("%s: %s; fewer than %d links share this hardware (%s supporting at most %s): not a sub-fleet",
				v.HardwareWhy, v.PeerCounts, subFleetLinks, devices.Model(slow.Node), sup)},
		}
		action := fmt.Sprintf("Replace the %s at %s (or its cable, if the cable is the slower part) with one matching the fleet's %s, or accept it: ibdoctor will keep reporting it. 'ibportstate %d %d' shows the port's LinkSpeedSupported and LinkWidthSupported.",
			what, se, v.Peer, s.entityOf(slow, "").LID, slow.Num)
		if s.SupportedNotRead != "" && slow.Node.Type != mad.NodeSwitch {
			// The HCA's Supported masks are the simulator's stand-in for
			// a file that records none (trial C1 audit): what it runs
			// is known, what it supports is not.
			title = fmt.Sprintf("%s %s runs %s where its peers run %s (link to %s; its supported speeds are not in the file)", what, se, v.Active, v.Peer, oe)
			ev[0] = Evidence{Name: part, Value: v.Active.Speed.DataGbps(), Unit: "Gb/s per lane", Threshold: v.Peer.Speed.DataGbps(),
				Text: fmt.Sprintf("%s: %s may support no more than %s (then it runs its best and is slower hardware) or more (then the link is degraded)", s.SupportedNotRead, se, v.Active)}
			if part == "LinkWidthSupported" {
				ev[0].Value, ev[0].Unit, ev[0].Threshold = float64(v.Active.Width.Lanes()), "lanes", float64(v.Peer.Width.Lanes())
			}
			why := v.HardwareWhy // "X supports at most R; most ... run R2"
			if _, peersWhy, ok := strings.Cut(why, "; "); ok {
				why = peersWhy
			}
			ev[1].Text = fmt.Sprintf("%s: %s", why, v.PeerCounts)
			action = fmt.Sprintf("First read what %s supports on the fabric ('ibportstate %d %d', LinkSpeedSupported and LinkWidthSupported, or 'ibdoctor check' run live): if no more than %s, replace it with one matching the fleet's %s or accept it; if more, check the cable and transceivers between %s and %s, reseat, then replace the cable.",
				se, s.entityOf(slow, "").LID, slow.Num, v.Active, v.Peer, se, oe)
		}
		out = append(out, Finding{
			Check:    "link.slower-hardware",
			Severity: Info,
			Title:    title,
			Entities: []Entity{s.entityOf(slow, "end"), s.entityOf(other, "peer")},
			Evidence: ev,
			Impact:   s.linkImpact(v.A, v.Active, v.Peer),
			Action:   action,
			Basis:    "topology",
		})
	}
	return out
}

// pollingPorts reports ports that do not train where a link is expected.
// An empty switch port polls with nothing attached, so a Polling switch
// port alone says little: the expected topology decides (link.down), a
// missing HCA's leaf port is topology.missing-hca's evidence, and only a
// switch port that sees a far end and does not finish training is a cable
// that should come up. Gaps in a leaf's host block are common on real
// fabrics (removed or unused nodes), so the layout does not decide. A port
// a saved file does not list (or lists without a state) has no physical
// state to judge: never reported.
func (s *Snapshot) pollingPorts() []Finding {
	var out []Finding
	for _, n := range s.Fabric.Nodes {
		for _, p := range n.Ports {
			if p == nil || p.Num == 0 || !s.inScope(p) || s.inBaseline(p) {
				continue
			}
			var why string
			var sev Severity
			switch {
			case n.Type != mad.NodeSwitch && spareCAPort(p):
				continue
			case n.Type != mad.NodeSwitch && (p.PhysState == mad.PhysPolling || p.PhysState == mad.PhysConfigTraining || p.PhysState == mad.PhysLinkErrorRecovery):
				why, sev = "a host port should carry a link", Error
				if p.LID != 0 && p.Remote == nil && otherPortUp(p) {
					why = fmt.Sprintf("it holds LID %d, which a subnet manager gave it while it had a link, and the adapter's other port is up: it lost its cable", p.LID)
				}
			case n.Type == mad.NodeSwitch && (p.PhysState == mad.PhysConfigTraining || p.PhysState == mad.PhysLinkErrorRecovery):
				why, sev = "the port sees a far end (a cable and a powered port behind it) but the link does not come up", Warning
			default:
				continue
			}
			out = append(out, Finding{
				Check:    "link.polling",
				Severity: sev,
				Title:    fmt.Sprintf("Port %s is stuck in %s", s.entityOf(p, "").String(), p.PhysState),
				Entities: []Entity{s.entityOf(p, "end")},
				Evidence: []Evidence{{Name: "PortPhysicalState", Value: float64(p.PhysState), Text: fmt.Sprintf("physical state %s, port state %s; %s", p.PhysState, p.State, why)}},
				Impact:   Impact{Summary: "the host behind this port is cut off from the fabric (or runs on fewer rails)", Score: 1 / float64(max(1, s.hostCount()))},
				Action:   fmt.Sprintf("Check the cable at %s and at the far end: reseat it, look at the far end's port (host powered, HCA link LED), then replace the cable. A port that keeps training is often a cable or transceiver fault.", s.entityOf(p, "").String()),
				Basis:    "topology",
			})
		}
	}
	return out
}

// spareCAPort reports whether p is a port of a multi-port CA that never
// carried a link here: no far end, no LID (a subnet manager gives one to
// every port it activates), and another port of the adapter up. Dual-port
// adapters with one port cabled are common: such a port is no finding
// (trial A15), where one holding its LID lost its link.
func spareCAPort(p *fabric.Port) bool {
	return p.Node.Type != mad.NodeSwitch && p.LID == 0 && p.Remote == nil && p.StateKnown() && p.PhysState != mad.PhysLinkUp && otherPortUp(p)
}

// otherPortUp reports whether another port of p's node has its link up.
func otherPortUp(p *fabric.Port) bool {
	for _, q := range p.Node.Ports {
		if q != nil && q != p && q.Num != 0 && q.PhysState == mad.PhysLinkUp && q.StateKnown() {
			return true
		}
	}
	return false
}

// inBaseline reports whether the expected topology decides whether p
// should carry a link, not a guess from the layout: it cables p (a link
// it has that is gone is link.down's baseline finding), or it is the
// operator's word (--expect-topology, 'baseline accept') and describes
// p's node, so a port it leaves without a cable is as built. A baseline
// the first sweep took by itself may have taken the port's fault in
// (trial C7): it decides only the ports it cables.
func (s *Snapshot) inBaseline(p *fabric.Port) bool {
	b := s.Baseline
	if b == nil {
		return false
	}
	i, ok := b.nodeByGUID(p.Node.GUID)
	if !ok {
		return false
	}
	if s.BaselineDesigned || b.Accepted {
		return true
	}
	_, cabled := b.peerAt(i, p.Num)
	return cabled
}

func (s *Snapshot) downLinks() []Finding {
	var out []Finding
	for _, n := range s.Fabric.Nodes {
		for _, p := range n.Ports {
			if p == nil || p.Num == 0 || !s.inScope(p) {
				continue
			}
			switch {
			case p.PhysState == mad.PhysLinkUp && (p.State == mad.PortStateInit || p.State == mad.PortStateArmed) && !reportedByPeer(p):
				ents := []Entity{s.entityOf(p, "end")}
				if p.Remote != nil {
					// both ends: the routes lost at either are its
					// consequence (linkDownCauses)
					ents = append(ents, s.entityOf(p.Remote, "peer"))
				}
				out = append(out, Finding{
					Check:    "link.down",
					Severity: Error,
					Title:    fmt.Sprintf("Link at %s is physically up but %s: no traffic passes", s.linkName(p), p.State),
					Entities: ents,
					Evidence: []Evidence{{Name: "PortState", Value: float64(p.State), Text: fmt.Sprintf("physical LinkUp, logical %s (should be Active)", p.State)}},
					Impact:   Impact{Summary: "the link carries no data until the subnet manager activates it", Score: 1 / float64(max(1, s.hostCount()))},
					Action:   "Check that the subnet manager is running and sweeping (sminfo, the SM's log); a port left in Init/Armed was never activated. Re-run a heavy sweep or bounce the port if the SM is healthy.",
					Basis:    "topology",
				})
			case n.Type != mad.NodeSwitch && (p.PhysState == mad.PhysDisabled || p.PhysState == mad.PhysSleep) &&
				!s.inBaseline(p) && !spareCAPort(p):
				out = append(out, Finding{
					Check:    "link.down",
					Severity: Error,
					Title:    fmt.Sprintf("Host port %s is %s", s.entityOf(p, "").String(), p.PhysState),
					Entities: []Entity{s.entityOf(p, "end")},
					Evidence: []Evidence{{Name: "PortPhysicalState", Value: float64(p.PhysState), Text: "physical state " + p.PhysState.String()}},
					Impact:   Impact{Summary: "the host port carries no traffic", Score: 1 / float64(max(1, s.hostCount()))},
					Action:   "Enable the port (ibportstate ... enable) if it was disabled on purpose for maintenance and is back in service; otherwise find who disabled it.",
					Basis:    "topology",
				})
			}
		}
	}
	if s.Baseline != nil {
		unknown := s.unreachedBaseline()
		bl := s.Baseline
		for l := range s.Baseline.allLinks() {
			na, nb := s.Fabric.NodeByGUID(bl.guid[l.a.node]), s.Fabric.NodeByGUID(bl.guid[l.b.node])
			if na == nil && nb != nil && bl.typ[l.a.node] != mad.NodeSwitch {
				// A host is missing because its link is down: the link
				// is the finding, seen from the switch's end.
				l = baseLink{a: l.b, b: l.a}
				na, nb = nb, nil
			} else if na != nil && nb != nil && !portKnown(na, l.a.num) && portKnown(nb, l.b.num) {
				// One end could not be read (a host behind the down
				// link cannot be): judge the link from the end that was.
				l = baseLink{a: l.b, b: l.a}
				na, nb = nb, na
			}
			if na == nil || (nb == nil && bl.typ[l.b.node] == mad.NodeSwitch) {
				continue // a missing switch is topology.changed's finding
			}
			pa := portOf(na, l.a.num)
			if pa != nil && pa.Remote != nil && nb != nil && pa.Remote.Node == nb && pa.Remote.Num == l.b.num {
				continue
			}
			if pa != nil && (pa.PeerUnknown() || !pa.StateKnown()) {
				continue // its state or far end was not read: could not look
			}
			// An end that was read and has no physical link is down
			// whatever the far end would say; otherwise a far end that
			// could not be read leaves the link undecided.
			if !(pa != nil && pa.StateKnown() && pa.PhysState != mad.PhysLinkUp) {
				if nb != nil {
					if pb := portOf(nb, l.b.num); pb != nil && !pb.StateKnown() {
						continue
					}
				} else if unknown[bl.guid[l.b.node]] {
					continue
				}
			}
			if pa != nil && pa.Remote != nil {
				continue // cabled elsewhere: topology.miswired
			}
			if pa != nil && !s.inScope(pa) {
				continue
			}
			e := Entity{NodeGUID: na.GUID, Node: s.nodeName(na), Port: int(l.a.num), Role: "end"}
			f := Entity{NodeGUID: bl.guid[l.b.node], Node: s.baseName(l.b.node), Port: int(l.b.num), Role: "peer"}
			state := "not read"
			if pa != nil {
				state = fmt.Sprintf("%s/%s", pa.PhysState, pa.State)
			}
			var sh share
			if pa != nil {
				sh = s.pathShare(pa)
			}
			out = append(out, Finding{
				Check:    "link.down",
				Severity: Error,
				Title:    fmt.Sprintf("Link %s <-> %s from the expected topology is down", e, f),
				Entities: []Entity{e, f},
				Evidence: []Evidence{{Name: "link", Text: "in the expected topology; now " + state}},
				Impact:   Impact{PathShare: sh.v, PathShareLowerBound: sh.atLeast, Score: max(sh.v, 1/float64(max(1, s.hostCount()))), Summary: "its traffic moves to the remaining links (or its host is cut off)"},
				Action:   fmt.Sprintf("Check the cable between %s and %s: reseat, then replace; check both ports are enabled.", e, f),
				Basis:    "baseline",
			})
		}
	}
	return out
}

// portKnown reports whether n's port num exists and its state was read.
func portKnown(n *fabric.Node, num uint8) bool {
	p := portOf(n, num)
	return p != nil && p.StateKnown()
}

// reportedByPeer reports whether a link left in Init/Armed at p is
// reported from its other end instead: one finding per link, from the end
// operators name first.
func reportedByPeer(p *fabric.Port) bool {
	q := p.Remote
	if q == nil || q == p || q.PhysState != mad.PhysLinkUp || (q.State != mad.PortStateInit && q.State != mad.PortStateArmed) {
		return false
	}
	a, _ := orient(p, q)
	return a != p
}

func portOf(n *fabric.Node, num uint8) *fabric.Port {
	if int(num) < len(n.Ports) {
		return n.Ports[num]
	}
	return nil
}
