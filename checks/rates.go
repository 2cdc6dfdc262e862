package checks

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/ibdoctor/ibdoctor/internal/devices"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/words"
	"github.com/ibdoctor/ibdoctor/mad"
)

// LinkVerdict is the one judgement of a link's rate: link.degraded-width
// and link.degraded-speed report it, 'ibdoctor links' marks it, gate
// judges its job's links with it.
type LinkVerdict struct {
	// A and B are the link's ends as operators name them: a host before
	// its switch, a leaf before a spine.
	A, B *fabric.Port
	// Active is the slower of what the two ends report (they disagree
	// when one end's reading is stale; the slower one is the link's).
	Active mad.Rate
	// Want is what the link should run at; a zero part has no
	// expectation.
	Want mad.Rate
	// WidthWhy and SpeedWhy say why the link is below Want in that part;
	// empty when it is not.
	WidthWhy, SpeedWhy string
	// SpeedUnsure, with SpeedWhy, says why the host's HCA may support no
	// more than the link runs (Snapshot.SupportedNotRead): the link is
	// below Want, but not known to be below what both ends can run.
	SpeedUnsure string
	// Peer is the rate the link's comparable links run at (its host
	// model's links, its switches' other switch links, the links between
	// the same switch models); zero when none is known.
	Peer mad.Rate
	// Slow is the end whose hardware (its LinkWidthSupported or
	// LinkSpeedSupported mask) lowered the link's ceiling; nil when
	// neither did.
	Slow *fabric.Port
	// HardwareWhy says why the link runs below Peer without being
	// degraded: Slow's hardware caps it at Active. Empty unless that is a
	// lone link, not a sub-fleet (docs/checks.md, link.slower-hardware).
	HardwareWhy string
	// PeerCounts says how many comparable links run at which rate; set
	// with HardwareWhy or CappedWhy.
	PeerCounts string
	// CappedWhy, on a degraded link, says why Want is below Peer: Slow's
	// hardware caps the link there too (a second fault on one link), so
	// the loss is against Peer and fixing the degradation restores only
	// Want (trial T12). Empty unless that end is a lone link, as with
	// HardwareWhy.
	CappedWhy string
	// Unread is the end whose PortInfo went unanswered, nil when both
	// were read. The link is then judged from the other end: a link's
	// active width and speed are the same at both ends, while what the
	// unread end has enabled and supports is unknown.
	Unread *fabric.Port
	// WidthOpen and SpeedOpen: with Unread set, the verdict in that part
	// could not be decided (the read end has more enabled than the link
	// runs, and only the unread end's enabled mask would say whether
	// the link should run it). HardwareOpen: the link runs below its
	// peers and only the unread end's supported mask would say why.
	WidthOpen, SpeedOpen, HardwareOpen bool
	// UnreadParallel: the unread end's supported masks were taken from
	// its node's read ports cabled to the same far node.
	UnreadParallel bool
}

// Read is the end of the link whose PortInfo was read: B when A is
// Unread, else A.
func (v LinkVerdict) Read() *fabric.Port {
	if v.Unread == v.A {
		return v.B
	}
	return v.A
}

// SlowWidth reports whether the link trained at fewer lanes than it should.
func (v LinkVerdict) SlowWidth() bool { return v.WidthWhy != "" }

// SlowSpeed reports whether the link trained at a lower lane speed than it should.
func (v LinkVerdict) SlowSpeed() bool { return v.SpeedWhy != "" }

// Degraded reports whether the link runs below what it should.
func (v LinkVerdict) Degraded() bool { return v.SlowWidth() || v.SlowSpeed() }

// SlowerHardware reports whether the link runs as fast as one end's
// hardware allows, below what its peers run: not degraded, but that end
// caps its rail below the fleet's.
func (v LinkVerdict) SlowerHardware() bool { return v.HardwareWhy != "" }

// LinkVerdicts judges every active link in scope (both ends physically up)
// and returns them in the fabric's link order.
func (s *Snapshot) LinkVerdicts() []LinkVerdict {
	return s.judgeLinks(nil)
}

// reportedVerdicts is LinkVerdicts less the verdicts no link check acts
// on: the link.* checks read these, made once per Run (the memo). A
// verdict for every link, most of them healthy, was most of the checks'
// peak heap (issue 13).
func (s *Snapshot) reportedVerdicts() []LinkVerdict {
	if s.memo != nil {
		s.memo.used |= memoVerdicts
		if s.memo.judged {
			return s.memo.verdicts
		}
	}
	out := s.judgeLinks(LinkVerdict.reported)
	if s.memo != nil {
		s.memo.verdicts, s.memo.judged = out, true
	}
	return out
}

// reported reports whether a link check makes a finding or an undecided
// of v: degraded, capped by slower hardware, or a part left open by an
// unread end.
func (v LinkVerdict) reported() bool {
	return v.Degraded() || v.SlowerHardware() || v.HardwareOpen || (v.Unread != nil && (v.WidthOpen || v.SpeedOpen))
}

// judgeLinks judges every active link in scope and returns those keep
// accepts (all for nil) in the fabric's link order.
func (s *Snapshot) judgeLinks(keep func(LinkVerdict) bool) []LinkVerdict {
	links := s.links()
	peers := newPeerRates(s.Fabric, links)
	var out []LinkVerdict
	if keep == nil {
		// The verdicts are made at their size (at most one per link in
		// scope): grown by append, the old arrays beside the new were
		// the checks' peak at the LID limit (a verdict per link, ~140k
		// links). Kept by keep, they are few.
		inScope := 0
		for _, l := range links {
			// In scope or not is the same from either end: ask before
			// orienting (which counts both switches' host ports).
			if s.inScope(l.A) {
				inScope++
			}
		}
		out = make([]LinkVerdict, 0, inScope)
		keep = func(LinkVerdict) bool { return true }
	}
	for _, l := range links {
		if !s.inScope(l.A) {
			continue
		}
		a, b := orient(l.A, l.B)
		if v, ok := s.judgeFromOneEnd(a, b, peers); ok {
			if keep(v) {
				out = append(out, v)
			}
			continue
		}
		if !linkUp(a) || !linkUp(b) {
			continue
		}
		if v := s.judgeLink(a, b, peers); keep(v) {
			out = append(out, v)
		}
	}
	return out
}

// judgeFromOneEnd judges a link one end of which was read and up while
// the other's PortInfo went unanswered: as if the unread end reported
// the read end's active width and speed (one link, one rate) and nothing
// enabled (unknown). Its supported masks are those of its node's read
// ports cabled to the same far node (parallel links on the same
// hardware), else unknown. What the unknown masks could change is marked
// open rather than guessed. ok is false unless exactly that is the case.
func (s *Snapshot) judgeFromOneEnd(a, b *fabric.Port, peers *peerRates) (LinkVerdict, bool) {
	read, unread := a, b
	if !a.StateKnown() {
		read, unread = b, a
	}
	if unread.StateKnown() || !read.StateKnown() || !linkUp(read) {
		return LinkVerdict{}, false
	}
	proxy := *unread
	proxy.State, proxy.PhysState = read.State, read.PhysState
	proxy.WidthActive, proxy.SpeedActive = read.WidthActive, read.SpeedActive
	proxy.WidthEnabled, proxy.SpeedEnabled = 0, 0
	proxy.WidthSupported, proxy.SpeedSupported = 0, 0
	w, sp, parallel := parallelSupported(unread, read.Node)
	if parallel {
		proxy.WidthSupported, proxy.SpeedSupported = w, sp
	}
	judge := func(pr *fabric.Port) LinkVerdict {
		var v LinkVerdict
		if unread == a {
			v = s.judgeLink(pr, b, peers)
		} else {
			v = s.judgeLink(a, pr, peers)
		}
		v.A, v.B, v.Unread, v.UnreadParallel = a, b, unread, parallel
		if v.Slow == pr {
			v.Slow = unread
		}
		return v
	}
	v := judge(&proxy)
	if !parallel && v.Degraded() {
		// The unread end's hardware may support no more than the link
		// runs: judged so too, a part that is no longer slow is open.
		low := proxy
		low.WidthSupported, low.SpeedSupported = v.Active.Width, v.Active.Speed
		lv := judge(&low)
		if v.SlowWidth() && !lv.SlowWidth() {
			v.WidthWhy, v.Want.Width, v.WidthOpen = "", v.Active.Width, true
		}
		if v.SlowSpeed() && !lv.SlowSpeed() {
			v.SpeedWhy, v.Want.Speed, v.SpeedOpen = "", v.Active.Speed, true
		}
	}
	// What both ends have enabled is at most what the read end has: only
	// when that is more than the link runs could the unread end's mask
	// make it degraded.
	v.WidthOpen = v.WidthOpen || (!v.SlowWidth() && read.WidthEnabled.Max().Lanes() > v.Active.Width.Lanes())
	v.SpeedOpen = v.SpeedOpen || (!v.SlowSpeed() && v.Active.Speed != 0 && read.SpeedEnabled.Max().DataGbps() > v.Active.Speed.DataGbps())
	v.HardwareOpen = !v.Degraded() && !v.SlowerHardware() && v.Peer.Gbps() > v.Active.Gbps()
	return v, true
}

// FarUnread is a link whose far end's node never answered (its NodeInfo
// went unanswered: fabric.UnreachedPeer), judged from the port that was
// read. Its active width and speed are the link's; what the far end has
// enabled is unknown, so a link running below what the read end enables
// could be degraded or could be all the far end enables: undecided, never
// dropped and never guessed.
type FarUnread struct {
	Port   *fabric.Port
	Active mad.Rate
	// Enabled is the best width and speed the read end has enabled.
	Enabled mad.Rate
	// WidthOpen, SpeedOpen: the link runs below Enabled in that part.
	WidthOpen, SpeedOpen bool
}

// FarUnreadLinks returns the in-scope links whose far end did not answer
// and that run below what the read end enables, in the fabric's node and
// port order.
func (s *Snapshot) FarUnreadLinks() []FarUnread {
	var out []FarUnread
	for _, n := range s.Fabric.Nodes {
		for _, p := range n.Ports {
			if p == nil || p.Num == 0 || p.Remote != nil || p.Unreached&fabric.UnreachedPeer == 0 || !p.StateKnown() || !linkUp(p) || !s.inScope(p) {
				continue
			}
			u := FarUnread{Port: p, Active: p.Rate(), Enabled: mad.Rate{Width: p.WidthEnabled.Max(), Speed: p.SpeedEnabled.Max()}}
			u.WidthOpen = p.WidthActive != 0 && p.WidthEnabled != 0 && u.Enabled.Width.Lanes() > u.Active.Width.Lanes()
			u.SpeedOpen = p.SpeedKnown() && p.SpeedActive != 0 && p.SpeedEnabled != 0 && u.Enabled.Speed.DataGbps() > u.Active.Speed.DataGbps()
			if u.WidthOpen || u.SpeedOpen {
				out = append(out, u)
			}
		}
	}
	return out
}

// parallelSupported returns the supported masks p's node's read ports
// cabled to far show (the same on all of them), for p whose PortInfo was
// not read; ok is false when there are none or they differ.
func parallelSupported(p *fabric.Port, far *fabric.Node) (mad.Width, mad.Speed, bool) {
	var w mad.Width
	var sp mad.Speed
	n := 0
	for _, q := range p.Node.Ports {
		if q == nil || q == p || q.Num == 0 || !q.SpeedKnown() || q.Remote == nil || q.Remote.Node != far {
			continue
		}
		if n > 0 && (q.WidthSupported != w || q.SpeedSupported != sp) {
			return 0, 0, false
		}
		w, sp = q.WidthSupported, q.SpeedSupported
		n++
	}
	return w, sp, n > 0
}

// linkRate is the slower of the two ends' active width and speed.
func linkRate(a, b *fabric.Port) mad.Rate {
	r := a.Rate()
	if b.WidthActive != 0 && (r.Width == 0 || b.WidthActive.Lanes() < r.Width.Lanes()) {
		r.Width = b.WidthActive
	}
	if b.SpeedActive != 0 && (r.Speed == 0 || b.SpeedActive.DataGbps() < r.Speed.DataGbps()) {
		r.Speed = b.SpeedActive
	}
	return r
}

// judgeLink decides what the link a-b should run at. The rules, in order
// (docs/checks.md, link.degraded-width):
//
//  1. the operator's expected rates for the link's class decide alone;
//  2. otherwise the best of: what both ends have enabled; what the link's
//     peers run at (the rate most host links of the same adapter model
//     run at; the rate most of a switch's other inter-switch links run at,
//     loopbacks excluded; the rate most links between the same two switch
//     models run at); and what both devices can do (the capability
//     table), unless the peers run at the link's rate already: a fleet
//     of identical devices running alike is the design (HDR100 boards,
//     FDR10 cables), not a fault;
//  3. capped at what both devices can do, when the table knows them.
func (s *Snapshot) judgeLink(a, b *fabric.Port, peers *peerRates) LinkVerdict {
	v := s.judgeRates(a, b, peers)
	if v.Active.Speed == 0 {
		// Neither end's lane speed was read (fabric.UnreachedSpeed):
		// could not decide, which is not slow.
		v.Want.Speed, v.SpeedWhy = 0, ""
		v.HardwareWhy, v.CappedWhy, v.PeerCounts = "", "", ""
	}
	return v
}

func (s *Snapshot) judgeRates(a, b *fabric.Port, peers *peerRates) LinkVerdict {
	v := LinkVerdict{A: a, B: b, Active: linkRate(a, b)}
	rates := s.Expect.HostRates
	if isSwitchLink(a) {
		rates = s.Expect.SwitchRates
	}
	if len(rates) > 0 {
		if slices.Contains(rates, v.Active) {
			return v
		}
		bar := rates[0]
		for _, r := range rates[1:] {
			if r.Gbps() < bar.Gbps() {
				bar = r
			}
		}
		v.Want = bar
		if v.Active.Gbps() >= bar.Gbps() {
			return v
		}
		why := "the expected rate " + bar.String()
		if v.Active.Width.Lanes() < bar.Width.Lanes() {
			v.WidthWhy = why
		}
		if v.Active.Speed.DataGbps() < bar.Speed.DataGbps() {
			v.SpeedWhy = why
		}
		return v
	}

	// Each source's reason is written when a link falls below it (rare),
	// not for every link.
	const (
		fromEnabled = iota
		fromPeers
		fromTable
	)
	type source struct {
		r    mad.Rate
		from int
	}
	var srcBuf [3]source
	srcs := srcBuf[:0]
	var en mad.Rate
	if e := a.WidthEnabled & b.WidthEnabled; e != 0 {
		en.Width = e.Max()
	}
	if e := a.SpeedEnabled & b.SpeedEnabled; e != 0 {
		en.Speed = e.Max()
	}
	srcs = append(srcs, source{en, fromEnabled})
	peer, _ := peers.of(a, b, false)
	peerWhy := func() string {
		_, why := peers.of(a, b, true)
		return why
	}
	whyOf := func(from int) string {
		switch from {
		case fromPeers:
			return peerWhy()
		case fromTable:
			return capabilityWhy(a.Node, b.Node)
		}
		return "the best both ends have enabled"
	}
	if peer != (mad.Rate{}) {
		srcs = append(srcs, source{peer, fromPeers})
	}
	capRate, capKnown := capability(a.Node, b.Node)
	if capKnown {
		c := capRate
		// Identical devices running alike are the design: the table
		// names the family's best, not every board's.
		if peer.Width != 0 && v.Active.Width.Lanes() >= peer.Width.Lanes() {
			c.Width = 0
		}
		if peer.Speed != 0 && v.Active.Speed.DataGbps() >= peer.Speed.DataGbps() {
			c.Speed = 0
		}
		srcs = append(srcs, source{c, fromTable})
	}
	// Never expect more than the slower device can do.
	ceil, slow, ceilOK := ceiling(a, b)
	v.Slow = slow
	for _, src := range srcs {
		w, sp := src.r.Width, src.r.Speed
		if ceilOK {
			if w != 0 && w.Lanes() > ceil.Width.Lanes() {
				w = ceil.Width
			}
			if sp != 0 && sp.DataGbps() > ceil.Speed.DataGbps() {
				sp = ceil.Speed
			}
		}
		if w != 0 && w.Lanes() > v.Active.Width.Lanes() && (v.Want.Width == 0 || w.Lanes() > v.Want.Width.Lanes()) {
			v.Want.Width, v.WidthWhy = w, whyOf(src.from)
		}
		if sp != 0 && sp.DataGbps() > v.Active.Speed.DataGbps() && (v.Want.Speed == 0 || sp.DataGbps() > v.Want.Speed.DataGbps()) {
			v.Want.Speed, v.SpeedWhy = sp, whyOf(src.from)
		}
	}
	// A board may be sold slower than its chip family (the table's and
	// the peers' model): with no supported speed read, an HCA running
	// below its peers may be running its best. Switch ports are not sold
	// so: their peers of the same model show what the hardware runs.
	// Unless no board of its model runs that slow (trial H13: a
	// ConnectX-4 at SDR): then it is degraded, whatever the file lacks.
	if hp := hostEnd(a, b); v.SpeedWhy != "" && s.SupportedNotRead != "" && hp != nil {
		if low, ok := devices.SlowestBoard(hp.Node); ok && low.DataGbps() > v.Active.Speed.DataGbps() {
			v.SpeedWhy += fmt.Sprintf("; the file does not record supported speeds, but no %s board runs below %s", devices.Model(hp.Node), low)
		} else {
			v.SpeedUnsure = fmt.Sprintf("%s: %s may support no more than %s (then the link runs its best and is not degraded)", s.SupportedNotRead, s.entityOf(hp, "").String(), v.Active.Speed)
		}
	}
	if v.Want.Width == 0 {
		v.Want.Width = v.Active.Width
	}
	if v.Want.Speed == 0 {
		v.Want.Speed = v.Active.Speed
	}
	if peer != (mad.Rate{}) {
		v.Peer = peer
		if slow != nil && !v.Degraded() && cappedBy(slow, v.Active, peer) && !peers.subFleet(slow) {
			v.HardwareWhy = fmt.Sprintf("%s supports at most %s; %s", s.entityOf(slow, "").String(), supportedRate(slow), peerWhy())
			v.PeerCounts = peers.counts(a, b)
		}
		if slow != nil && v.Degraded() && cappedBy(slow, v.Want, peer) && !peers.subFleet(slow) {
			v.CappedWhy = fmt.Sprintf("%s supports at most %s; %s", s.entityOf(slow, "").String(), supportedRate(slow), peerWhy())
			v.PeerCounts = peers.counts(a, b)
		}
	}
	// A board of another model (a ConnectX-6 swapped into a ConnectX-7
	// host) has no peers of its own model: the host's peers, named alike
	// with HCAs named alike, say what its rail should run.
	if hp := hostEnd(a, b); v.HardwareWhy == "" && hp != nil && !v.Degraded() {
		if gp, ok := peers.ofHosts(hp.Node); ok && cappedBy(hp, v.Active, gp) && peers.hostHW[hardwareKey{devices.Model(hp.Node), supportedRate(hp)}] < subFleetLinks {
			v.Slow, v.Peer = hp, gp
			gwhy := fmt.Sprintf("most %s run %s", peers.hostGroupName(hp.Node), gp)
			v.HardwareWhy = fmt.Sprintf("%s (%s) supports at most %s; %s", s.entityOf(hp, "").String(), devices.Model(hp.Node), supportedRate(hp), gwhy)
			v.PeerCounts = countText(peers.hostCount[hostGroup(hp.Node)], peers.hostGroupName(hp.Node))
		}
	}
	return v
}

// hostEnd is the host adapter's end of a host link, nil for others.
func hostEnd(a, b *fabric.Port) *fabric.Port {
	switch {
	case isHostNode(a.Node) && b.Node.Type == mad.NodeSwitch:
		return a
	case isHostNode(b.Node) && a.Node.Type == mad.NodeSwitch:
		return b
	}
	return nil
}

// hostGroup groups host adapters that should run alike whatever their
// model: described "host device", the host name without its number and
// the device name without its (gpu|mlx5_); "" for adapters not named so.
func hostGroup(n *fabric.Node) string {
	host := HostOf(n)
	if host == "" {
		return ""
	}
	_, dev, _ := twoWords(n.Description) // two words: HostOf said so
	return strings.TrimRight(host, "0123456789") + "|" + devScheme(dev)
}

// hostGroupName names a host group for evidence: "gpu* hosts' mlx5_* host
// links", or the namings joined into it (joinHostNamings).
func (pr *peerRates) hostGroupName(n *fabric.Node) string {
	k := hostGroup(n)
	if j := pr.hostJoined[k]; j != "" {
		return j
	}
	h, d, _ := strings.Cut(k, "|")
	return h + "* hosts' " + d + "* host links"
}

// ofHosts returns the rate most links of n's host group run at (the
// reason, "most <hostGroupName> run <rate>", is written where it is used:
// once a link is judged capped, not for every host link).
func (pr *peerRates) ofHosts(n *fabric.Node) (mad.Rate, bool) {
	k := hostGroup(n)
	if k == "" {
		return mad.Rate{}, false
	}
	return norm(pr.hostCount[k])
}

// cappedBy reports whether the link runs at active below peer only
// because slow's Supported masks allow no more: in each part where the
// peers run faster, slow's best supported is the link's active.
func cappedBy(slow *fabric.Port, active, peer mad.Rate) bool {
	wider := peer.Width.Lanes() > active.Width.Lanes()
	faster := peer.Speed.DataGbps() > active.Speed.DataGbps()
	if !wider && !faster {
		return false
	}
	if wider && slow.WidthSupported.Max() != active.Width {
		return false
	}
	if faster && slow.SpeedSupported.Max() != active.Speed {
		return false
	}
	return peer.Gbps() > active.Gbps()
}

// supportedRate is the best rate a port's Supported masks allow.
func supportedRate(p *fabric.Port) mad.Rate {
	return mad.Rate{Width: p.WidthSupported.Max(), Speed: p.SpeedSupported.Max()}
}

// capability is what both devices of a link can do (the slower of the
// two), when the table knows both.
func capability(x, y *fabric.Node) (mad.Rate, bool) {
	dx, okx := devices.Of(x)
	dy, oky := devices.Of(y)
	if !okx || !oky {
		return mad.Rate{}, false
	}
	return minRate(dx.Rate(), dy.Rate()), true
}

// capabilityWhy says why capability gives its rate ("" when it gives
// none): written only for a link below it.
func capabilityWhy(x, y *fabric.Node) string {
	dx, okx := devices.Of(x)
	dy, oky := devices.Of(y)
	if !okx || !oky {
		return ""
	}
	if dx.Name == dy.Name {
		return fmt.Sprintf("both ends are %s, which runs %s", dx.Name, dx.Rate())
	}
	return fmt.Sprintf("%s runs %s, %s %s", dx.Name, dx.Rate(), dy.Name, dy.Rate())
}

// ceiling is the best rate the known devices of a link allow: the
// capability table, lowered by a port's Supported mask when the port runs
// at the best it supports (a board sold slower than its chip family, an
// HDR adapter carrying an NDR chip's ID). A port below its Supported best
// says nothing about its hardware, and simulators make Supported up
// (ibsim claims every rate; a topology file carries no masks), so
// Supported alone never raises or lowers an expectation.
//
// The port returned is the one whose Supported mask set the ceiling's
// speed (else its width), nil when the table alone did: that end's
// hardware is what keeps the link from running faster.
func ceiling(x, y *fabric.Port) (mad.Rate, *fabric.Port, bool) {
	var r mad.Rate
	var byWidth, bySpeed *fabric.Port
	ok := false
	for _, p := range []*fabric.Port{x, y} {
		d, known := devices.Of(p.Node)
		if !known {
			continue
		}
		c := d.Rate()
		var pw, ps *fabric.Port
		if w := p.WidthSupported.Max(); w != 0 && w == p.WidthActive && w.Lanes() < c.Width.Lanes() {
			c.Width, pw = w, p
		}
		if sp := p.SpeedSupported.Max(); sp != 0 && sp == p.SpeedActive && sp.DataGbps() < c.Speed.DataGbps() {
			c.Speed, ps = sp, p
		}
		if !ok {
			r, ok = c, true
			byWidth, bySpeed = pw, ps
			continue
		}
		if c.Width.Lanes() < r.Width.Lanes() {
			r.Width, byWidth = c.Width, pw
		}
		if c.Speed.DataGbps() < r.Speed.DataGbps() {
			r.Speed, bySpeed = c.Speed, ps
		}
	}
	if bySpeed != nil {
		return r, bySpeed, ok
	}
	return r, byWidth, ok
}

func minRate(x, y mad.Rate) mad.Rate {
	if y.Width.Lanes() < x.Width.Lanes() {
		x.Width = y.Width
	}
	if y.Speed.DataGbps() < x.Speed.DataGbps() {
		x.Speed = y.Speed
	}
	return x
}

// peerRates holds the rates a link's peers run at: per adapter model (host
// links), per switch (its inter-switch links) and per pair of switch
// models (inter-switch links).
type peerRates struct {
	model        map[string]mad.Rate
	modelCount   map[string]map[mad.Rate]int
	sibling      map[*fabric.Node]mad.Rate
	siblingCount map[*fabric.Node]map[mad.Rate]int
	swModels     map[string]mad.Rate
	pairCount    map[string]map[mad.Rate]int
	// hardware counts the links whose ceiling one end's Supported masks
	// lowered, by that end's device model and best supported rate.
	hardware map[hardwareKey]int
	// hostCount counts host links' rates by hostGroup, across models;
	// hostHW counts host links by their adapter's model and best
	// supported rate (a sub-fleet of slower boards).
	hostCount map[string]map[mad.Rate]int
	hostHW    map[hardwareKey]int
	// hostDevs are the device names of each host group's links;
	// hostJoined names, for the groups joinHostNamings joined, all of
	// them ("gpu* hosts' HCA-* and mlx5_* host links, …").
	hostDevs   map[string]map[string]bool
	hostJoined map[string]string
	// leafCount counts host links' rates by their switch and adapter
	// model: the hosts cabled to one leaf, as an operator compares them.
	leafCount map[leafModel]map[mad.Rate]int
	fab       *fabric.Fabric // for names
}

// leafModel names the host links of one adapter model on one switch.
type leafModel struct {
	leaf  *fabric.Node
	model string
}

// hardwareKey names a kind of slower hardware: a device model whose port
// supports at most a rate.
type hardwareKey struct {
	model string
	rate  mad.Rate
}

// subFleetLinks is how many links sharing one kind of slower hardware
// make a sub-fleet (bought that way) rather than a swapped part: the
// same three links of a model at one rate that the peers rule treats as
// running alike.
const subFleetLinks = 3

// subFleet reports whether the hardware of slow caps enough links to be
// a deliberate sub-fleet.
func (pr *peerRates) subFleet(slow *fabric.Port) bool {
	return pr.hardware[hardwareKey{devices.Model(slow.Node), supportedRate(slow)}] >= subFleetLinks
}

// addHostDev notes the device name of host adapter n in its group k.
func (pr *peerRates) addHostDev(k string, n *fabric.Node) {
	_, dev, _ := twoWords(n.Description) // hostGroup said it has two
	if pr.hostDevs[k] == nil {
		pr.hostDevs[k] = map[string]bool{}
	}
	pr.hostDevs[k][dev] = true
}

// joinHostNamings makes the host groups of one host name that name their
// adapters two ways (HCA-1 where the others say mlx5_0: a host with
// another udev naming) one comparison: a group whose devices join the
// devices of the group of that host name with the most links, in device
// order by joinRails (the rule topology.rail-miswired counts rails by),
// is counted with it. Else a host whose naming differs from its peers'
// is compared only with itself: two ConnectX-6 boards of its four were
// no majority and went unreported.
func (pr *peerRates) joinHostNamings() {
	byHost := map[string][]string{}
	for k := range pr.hostCount {
		h, _, _ := strings.Cut(k, "|")
		byHost[h] = append(byHost[h], k)
	}
	links := func(k string) int {
		n := 0
		for _, c := range pr.hostCount[k] {
			n += c
		}
		return n
	}
	devs := func(k string) []string {
		var ds []string
		for d := range pr.hostDevs[k] {
			ds = append(ds, d)
		}
		return slices.SortedFunc(slices.Values(ds), words.Natural)
	}
	for h, ks := range byHost {
		if len(ks) < 2 {
			continue
		}
		slices.SortFunc(ks, func(a, b string) int { return cmp.Or(links(b)-links(a), strings.Compare(a, b)) })
		major := devs(ks[0])
		joined := []string{ks[0]}
		for _, k := range ks[1:] {
			minor := devs(k)
			_, ok := joinRails(minor, major)
			if !ok {
				_, ok = joinRails(major, minor)
			}
			if ok {
				joined = append(joined, k)
			}
		}
		if len(joined) < 2 {
			continue
		}
		sum := map[mad.Rate]int{}
		var schemes []string
		for _, k := range joined {
			for r, c := range pr.hostCount[k] {
				sum[r] += c
			}
			_, sc, _ := strings.Cut(k, "|")
			schemes = append(schemes, sc+"*")
		}
		name := fmt.Sprintf("%s* hosts' %s host links (%d adapter namings joined in device order)", h, words.And(schemes), len(schemes))
		for _, k := range joined {
			pr.hostCount[k] = sum
			pr.hostJoined[k] = name
		}
	}
}

// norm returns the rate at least two thirds of at least three links run
// at.
func norm(count map[mad.Rate]int) (mad.Rate, bool) {
	total := 0
	for _, c := range count {
		total += c
	}
	if total < 3 {
		return mad.Rate{}, false
	}
	for r, c := range count {
		if 3*c >= 2*total {
			return r, true
		}
	}
	return mad.Rate{}, false
}

// switchPairKey names the pair of switch models of a link; "" when either
// model is unknown.
func switchPairKey(x, y *fabric.Node) string {
	kx, ky := devices.Model(x), devices.Model(y)
	if strings.HasPrefix(kx, "unknown") || strings.HasPrefix(ky, "unknown") {
		return ""
	}
	if ky < kx {
		kx, ky = ky, kx
	}
	return kx + " - " + ky
}

func newPeerRates(f *fabric.Fabric, links []fabric.Link) *peerRates {
	pr := &peerRates{model: map[string]mad.Rate{}, sibling: map[*fabric.Node]mad.Rate{}, siblingCount: map[*fabric.Node]map[mad.Rate]int{},
		swModels: map[string]mad.Rate{}, hardware: map[hardwareKey]int{}, hostCount: map[string]map[mad.Rate]int{}, hostHW: map[hardwareKey]int{},
		hostDevs: map[string]map[string]bool{}, hostJoined: map[string]string{}, leafCount: map[leafModel]map[mad.Rate]int{}, fab: f}
	addLeaf := func(host, leaf *fabric.Node, r mad.Rate) {
		k := leafModel{leaf, devices.Model(host)}
		if pr.leafCount[k] == nil {
			pr.leafCount[k] = map[mad.Rate]int{}
		}
		pr.leafCount[k][r]++
	}
	models := map[string]map[mad.Rate]int{}
	pairs := map[string]map[mad.Rate]int{}
	add := func(m map[string]map[mad.Rate]int, k string, r mad.Rate) {
		if m[k] == nil {
			m[k] = map[mad.Rate]int{}
		}
		m[k][r]++
	}
	for _, l := range links {
		a, b := l.A, l.B
		if !linkUp(a) || !linkUp(b) || isLoopback(a) {
			continue
		}
		r := linkRate(a, b)
		if r.Speed == 0 {
			continue // speed not read: no evidence of what peers run at
		}
		if hp := hostEnd(a, b); hp != nil {
			pr.hostHW[hardwareKey{devices.Model(hp.Node), supportedRate(hp)}]++
		}
		if _, slow, _ := ceiling(a, b); slow != nil {
			pr.hardware[hardwareKey{devices.Model(slow.Node), supportedRate(slow)}]++
		}
		switch {
		case isHostNode(a.Node) && b.Node.Type == mad.NodeSwitch:
			add(models, devices.Model(a.Node), r)
			addLeaf(a.Node, b.Node, r)
			if k := hostGroup(a.Node); k != "" {
				add(pr.hostCount, k, r)
				pr.addHostDev(k, a.Node)
			}
		case isHostNode(b.Node) && a.Node.Type == mad.NodeSwitch:
			add(models, devices.Model(b.Node), r)
			addLeaf(b.Node, a.Node, r)
			if k := hostGroup(b.Node); k != "" {
				add(pr.hostCount, k, r)
				pr.addHostDev(k, b.Node)
			}
		case isSwitchLink(a):
			if k := switchPairKey(a.Node, b.Node); k != "" {
				add(pairs, k, r)
			}
		}
	}
	pr.modelCount, pr.pairCount = models, pairs
	pr.joinHostNamings()
	for k, c := range models {
		if r, ok := norm(c); ok {
			pr.model[k] = r
		}
	}
	for k, c := range pairs {
		if r, ok := norm(c); ok {
			pr.swModels[k] = r
		}
	}
	for _, n := range f.Nodes {
		if n.Type != mad.NodeSwitch {
			continue
		}
		count := map[mad.Rate]int{}
		for _, p := range n.Ports {
			if p != nil && p.Num != 0 && interSwitch(p) && linkUp(p) && linkUp(p.Remote) {
				if r := linkRate(p, p.Remote); r.Speed != 0 {
					count[r]++
				}
			}
		}
		pr.siblingCount[n] = count
		if r, ok := norm(count); ok {
			pr.sibling[n] = r
		}
	}
	return pr
}

// of returns the best rate the link a-b's peers run at (zero when none
// is known) and, when withWhy, why (the first of the peers taken). The
// reason is written only when asked: judged for every link, it was most
// of what the link checks allocated, and only a link below its peers
// shows it.
func (pr *peerRates) of(a, b *fabric.Port, withWhy bool) (mad.Rate, string) {
	var best mad.Rate
	why := ""
	take := func(r mad.Rate) {
		best.Width = widerOf(best.Width, r.Width)
		best.Speed = fasterOf(best.Speed, r.Speed)
	}
	switch {
	case isHostNode(a.Node):
		k := devices.Model(a.Node)
		// A rate that three or more of the model's links share is a
		// sub-fleet running alike (older boards, a storage tier), not a
		// fault: only a link alone (or nearly) at its rate is below its
		// peers.
		own := linkRate(a, b)
		if r, ok := pr.model[k]; ok {
			if pr.modelCount[k][own] >= 3 {
				r = own
			}
			take(r)
			if withWhy && why == "" {
				why = fmt.Sprintf("most %s run %s", modelHostLinks(a.Node, k), r)
			}
		}
		// On its own switch, though, a link alone (or nearly) at its
		// rate among the model's faster links is no sub-fleet: the
		// verdict on one cable must not turn on hosts behind other
		// switches (trial C12: a lone DDR host on a QDR leaf passed
		// because DDR hosts hung off other switches).
		if b.Node.Type == mad.NodeSwitch {
			lk := leafModel{b.Node, k}
			if r, ok := norm(pr.leafCount[lk]); ok && pr.leafCount[lk][own] < subFleetLinks && (r.Width.Lanes() > own.Width.Lanes() || r.Speed.DataGbps() > own.Speed.DataGbps()) {
				if withWhy && best.Width.Lanes() <= own.Width.Lanes() && best.Speed.DataGbps() <= own.Speed.DataGbps() {
					why = fmt.Sprintf("most %s on %s run %s", modelHostLinks(a.Node, k), pr.fab.NameOf(b.Node), r)
				}
				take(r)
			}
		}
	case isSwitchLink(a) && !isLoopback(a):
		for _, n := range [2]*fabric.Node{a.Node, b.Node} {
			if r, ok := pr.sibling[n]; ok {
				take(r)
				if withWhy && why == "" {
					why = fmt.Sprintf("most of %s's other switch links run %s", pr.fab.NameOf(n), r)
				}
			}
		}
		if key := switchPairKey(a.Node, b.Node); key != "" {
			if r, ok := pr.swModels[key]; ok {
				take(r)
				if withWhy && why == "" {
					why = fmt.Sprintf("most %s links run %s", key, r)
				}
			}
		}
	}
	return best, why
}

// modelHostLinks names the host links of n's adapter model k
// (devices.Model) for evidence: "ConnectX-7 host links"; by vendor and
// device ID when the table does not name it, and as unknown when the
// device ID is 0: a file that gives none, or a live HCA answering 0
// (ibsim's do; trial A7: "the file does not give" on a live source).
func modelHostLinks(n *fabric.Node, k string) string {
	switch {
	case k == devices.UnknownModel:
		return "host links of HCAs whose model is unknown (device ID 0 in NodeInfo or the file)"
	case strings.HasPrefix(k, "device 0x"):
		return fmt.Sprintf("host links of this HCA model (vendor 0x%06x, device 0x%04x)", n.VendorID, n.DeviceID)
	}
	return k + " host links"
}

// counts says how many of the link a-b's peers run at which rate, for
// evidence: "255 of 256 ConnectX-7 host links run 4X NDR, 1 4X HDR".
func (pr *peerRates) counts(a, b *fabric.Port) string {
	var parts []string
	switch {
	case isHostNode(a.Node):
		k := devices.Model(a.Node)
		parts = append(parts, countText(pr.modelCount[k], modelHostLinks(a.Node, k)))
	case isSwitchLink(a):
		for _, n := range []*fabric.Node{a.Node, b.Node} {
			if _, ok := pr.sibling[n]; ok {
				parts = append(parts, countText(pr.siblingCount[n], pr.fab.NameOf(n)+"'s switch links"))
			}
		}
		if k := switchPairKey(a.Node, b.Node); k != "" {
			if _, ok := pr.swModels[k]; ok {
				parts = append(parts, countText(pr.pairCount[k], k+" links"))
			}
		}
	}
	return strings.Join(parts, "; ")
}

// countText says "N of M WHAT run R, n R2, ..." with the most common
// rate first (ties: the faster first).
func countText(count map[mad.Rate]int, what string) string {
	rs := make([]mad.Rate, 0, len(count))
	total := 0
	for r, c := range count {
		rs = append(rs, r)
		total += c
	}
	slices.SortFunc(rs, func(x, y mad.Rate) int {
		if count[x] != count[y] {
			return count[y] - count[x]
		}
		if x.Gbps() != y.Gbps() {
			if x.Gbps() > y.Gbps() {
				return -1
			}
			return 1
		}
		return strings.Compare(x.String(), y.String())
	})
	var b strings.Builder
	for i, r := range rs {
		if i == 0 {
			fmt.Fprintf(&b, "%d of %d %s run %s", count[r], total, what, r)
			continue
		}
		fmt.Fprintf(&b, ", %d %s", count[r], r)
	}
	return b.String()
}

func widerOf(x, y mad.Width) mad.Width {
	if y.Lanes() > x.Lanes() {
		return y
	}
	return x
}

func fasterOf(x, y mad.Speed) mad.Speed {
	if y.DataGbps() > x.DataGbps() {
		return y
	}
	return x
}
