package sim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// The fault API. Every method takes the Sim's write lock, applies the
// fault as a real fabric would show it, and re-routes the traffic model.
// Port references are "NODE/PORT" (see docs/faults.md); NODE is a
// NodeDescription, a GUID, or a unique host name.

// Degrade makes the link at port retrain at a lower width and/or speed
// (0 keeps the current one). Both ends change, as after a real
// retraining; LinkWidthEnabled and LinkSpeedEnabled stay as they were.
func (s *Sim) Degrade(portRef string, w mad.Width, sp mad.Speed) error {
	if w != 0 && w.Lanes() == 0 {
		return fmt.Errorf("sim: degrade %s: width %v is not a single width", portRef, w)
	}
	if sp != 0 && sp.SignalGbps() == 0 {
		return fmt.Errorf("sim: degrade %s: speed %v is not a single speed", portRef, sp)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ni, pi, err := s.resolvePort(portRef)
	if err != nil {
		return err
	}
	p := &s.nodes[ni].ports[pi]
	if !p.linkUp() {
		return fmt.Errorf("sim: degrade %s: the link is not up (%v/%v)", portRef, p.state, p.phys)
	}
	r := &s.nodes[p.remote].ports[p.remotePort]
	for _, q := range []*port{p, r} {
		if w != 0 {
			q.wAct = w
		}
		if sp != 0 {
			q.sAct = sp
		}
	}
	s.rerouteLocked()
	return nil
}

// Limit makes a port's hardware support at most width w and speed sp
// (an HDR HCA in an NDR fabric): its Supported and Enabled masks lose
// everything above, and the link retrains to the best both ends enable.
func (s *Sim) Limit(portRef string, w mad.Width, sp mad.Speed) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ni, pi, err := s.resolvePort(portRef)
	if err != nil {
		return err
	}
	p := &s.nodes[ni].ports[pi]
	if w != 0 {
		keep := widthsUpTo(w)
		p.wSup &= keep
		p.wEn &= keep
		if p.wSup == 0 {
			p.wSup, p.wEn = w, w
		}
	}
	if sp != 0 {
		keep := sp | (sp - 1) // sp and every slower speed
		p.sSup &= keep
		p.sEn &= keep
		if p.sSup == 0 {
			p.sSup, p.sEn = sp, sp
		}
	}
	if p.linkUp() {
		s.train(ni, pi)
	}
	s.rerouteLocked()
	return nil
}

func widthsUpTo(w mad.Width) mad.Width {
	var m mad.Width
	for _, x := range []mad.Width{mad.Width1X, mad.Width2X, mad.Width4X, mad.Width8X, mad.Width12X} {
		if x.Lanes() <= w.Lanes() {
			m |= x
		}
	}
	return m
}

// train sets both ends of the link at port pi of ni to the best width
// and speed both enable.
func (s *Sim) train(ni int32, pi uint8) {
	p := &s.nodes[ni].ports[pi]
	r := &s.nodes[p.remote].ports[p.remotePort]
	w := (p.wEn & r.wEn).Max()
	if w == 0 {
		w = mad.Width1X
	}
	sp := (p.sEn & r.sEn).Max()
	if sp == 0 {
		sp = mad.SpeedSDR
	}
	p.wAct, r.wAct = w, w
	p.sAct, r.sAct = sp, sp
	mtu := min(p.mtuCap, r.mtuCap)
	p.nbrMTU, r.nbrMTU = mtu, mtu
}

// Down takes a link down administratively at port: that port is
// Disabled, the far end Polling, both PortState Down, and both count a
// LinkDowned. The forwarding tables are not changed (no SM sweep), so
// routes through the link break.
func (s *Sim) Down(portRef string) error {
	return s.linkDown(portRef, mad.PhysDisabled, mad.PhysPolling, true)
}

// DisabledStale disables port as Down does but leaves its PortState as
// it was (Active), as ibsim's `ibportstate ... disable` does (trial F3):
// what a PortInfo read between the PhysState change and the PortState
// one returns on real hardware. The far end polls, Down.
func (s *Sim) DisabledStale(portRef string) error {
	if err := s.linkDown(portRef, mad.PhysDisabled, mad.PhysPolling, true); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ni, pi, _ := s.resolvePort(portRef)
	s.nodes[ni].ports[pi].state = mad.PortStateActive
	return nil
}

// Polling leaves the link at port stuck in training: both ends Down and
// Polling (a bad cable or a dead far end).
func (s *Sim) Polling(portRef string) error {
	return s.linkDown(portRef, mad.PhysPolling, mad.PhysPolling, false)
}

// Training leaves the link at port stuck in configuration training: both
// ends see each other (a cable and powered ports) but never finish
// training (a marginal cable or transceiver, a speed neither end can
// hold), both Down and PortConfigurationTraining.
func (s *Sim) Training(portRef string) error {
	return s.linkDown(portRef, mad.PhysConfigTraining, mad.PhysConfigTraining, false)
}

// NotActive leaves the link at port trained but not activated: both ends
// physically LinkUp and logically st (Init or Armed), as after a link
// flap with no SM sweeping (trial A2: ibsim's Unlink then ReLink).
// Directed-route SMPs cross it; LID-routed MADs and data do not.
func (s *Sim) NotActive(portRef string, st mad.PortState) error {
	if st != mad.PortStateInit && st != mad.PortStateArmed {
		return fmt.Errorf("sim: %s: state %v: want Init or Armed", portRef, st)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ni, pi, err := s.resolvePort(portRef)
	if err != nil {
		return err
	}
	p := &s.nodes[ni].ports[pi]
	if pi == 0 {
		return fmt.Errorf("sim: %s: port 0 is a switch's management port; it has no link", portRef)
	}
	if !p.linkUp() {
		return fmt.Errorf("sim: %s has no physical link to leave in %v", portRef, st)
	}
	r := &s.nodes[p.remote].ports[p.remotePort]
	p.state, r.state = st, st
	s.rerouteLocked()
	return nil
}

func (s *Sim) linkDown(portRef string, phys, farPhys mad.PhysState, countDown bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ni, pi, err := s.resolvePort(portRef)
	if err != nil {
		return err
	}
	p := &s.nodes[ni].ports[pi]
	if pi == 0 {
		return fmt.Errorf("sim: %s: port 0 is a switch's management port; it has no link", portRef)
	}
	now := s.ticks(s.now())
	wasUp := p.linkUp()
	p.state, p.phys = mad.PortStateDown, phys
	if p.remote >= 0 {
		r := &s.nodes[p.remote].ports[p.remotePort]
		r.state, r.phys = mad.PortStateDown, farPhys
		if countDown && wasUp {
			s.ctrs(p.remote, p.remotePort, now).val[ctrLinkDowned]++
		}
	}
	if countDown && wasUp {
		s.ctrs(ni, pi, now).val[ctrLinkDowned]++
	}
	s.rerouteLocked()
	return nil
}

// SetCounter sets a counter of a port (name as in PortCounters, e.g.
// "SymbolErrorCounter" or "PortXmitDiscards") to v.
func (s *Sim) SetCounter(portRef, name string, v uint64) error {
	return s.counterOp(portRef, name, func(c *counters, id ctrID) { c.val[id] = float64(v) })
}

// AddCounter adds v to a port's counter once.
func (s *Sim) AddCounter(portRef, name string, v uint64) error {
	return s.counterOp(portRef, name, func(c *counters, id ctrID) { c.val[id] += float64(v) })
}

// CounterRate makes a port's counter grow by perSecond (on top of what
// traffic adds) from now on.
func (s *Sim) CounterRate(portRef, name string, perSecond float64) error {
	return s.counterOp(portRef, name, func(c *counters, id ctrID) { c.faultRate[id] = perSecond })
}

func (s *Sim) counterOp(portRef, name string, f func(*counters, ctrID)) error {
	id, err := counterByName(name)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ni, pi, err := s.resolvePort(portRef)
	if err != nil {
		return err
	}
	f(s.ctrs(ni, pi, s.ticks(s.now())), id)
	return nil
}

func (s *Sim) resolveSwitch(ref string) (int32, error) {
	ni, err := s.resolveNode(ref)
	if err != nil {
		return -1, err
	}
	if s.nodes[ni].sw == nil {
		return -1, fmt.Errorf("sim: %q is a %v, not a switch: forwarding tables live in switches", ref, s.nodes[ni].typ)
	}
	return ni, nil
}

// setRoutes points the given LIDs of switch ni at port. Callers hold
// s.mu for writing.
func (s *Sim) setRoutes(ni int32, lids []uint16, port uint8) error {
	n := &s.nodes[ni]
	if port != fabric.NoRoute && int(port) > n.numPorts() {
		return fmt.Errorf("sim: %s has no port %d (ports 0..%d, or 255 for no route)", s.nodeName(ni), port, n.numPorts())
	}
	if len(lids) == 0 {
		return fmt.Errorf("sim: no LIDs to route on %s", s.nodeName(ni))
	}
	top := slices.Max(lids)
	lft := s.ownLFT(ni, int(top)+1)
	for _, l := range lids {
		lft.Set(l, port)
	}
	n.sw.fdbTop = max(n.sw.fdbTop, top)
	return nil
}

// SetRoute makes switch sw forward dlid out of port (255: no route).
func (s *Sim) SetRoute(sw string, dlid uint16, port uint8) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ni, err := s.resolveSwitch(sw)
	if err != nil {
		return err
	}
	if err := s.setRoutes(ni, []uint16{dlid}, port); err != nil {
		return err
	}
	s.rerouteLocked()
	return nil
}

// Blackhole removes switch sw's route to dlid: MADs and traffic to it are
// dropped there.
func (s *Sim) Blackhole(sw string, dlid uint16) error { return s.SetRoute(sw, dlid, fabric.NoRoute) }

// lidsOf returns the LIDs a node answers to. With behind, a switch's
// LIDs include those of every CA cabled to it.
func (s *Sim) lidsOf(ni int32, behind bool) []uint16 {
	var lids []uint16
	add := func(ni int32) {
		n := &s.nodes[ni]
		for pi := range n.ports {
			p := &n.ports[pi]
			if p.lid == 0 || (n.typ == mad.NodeSwitch && pi != 0) {
				continue
			}
			for l := uint32(p.lid); l < uint32(p.lid)+uint32(1)<<p.lmc; l++ {
				lids = append(lids, uint16(l))
			}
		}
	}
	add(ni)
	if behind && s.nodes[ni].typ == mad.NodeSwitch {
		for pi := 1; pi < len(s.nodes[ni].ports); pi++ {
			p := &s.nodes[ni].ports[pi]
			if p.remote >= 0 && s.nodes[p.remote].typ != mad.NodeSwitch {
				add(p.remote)
			}
		}
	}
	slices.Sort(lids)
	return slices.Compact(lids)
}

// RouteBehind makes switch sw forward every LID of target (and, when
// target is a switch, of the CAs cabled to it) out of port.
func (s *Sim) RouteBehind(sw, target string, port uint8) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ni, err := s.resolveSwitch(sw)
	if err != nil {
		return err
	}
	ti, err := s.resolveNode(target)
	if err != nil {
		return err
	}
	if err := s.setRoutes(ni, s.lidsOf(ti, true), port); err != nil {
		return err
	}
	s.rerouteLocked()
	return nil
}

// levels returns each node's distance from the nearest CA (CAs 0, leaves
// 1, spines 2, ...).
func (s *Sim) levels() []int32 {
	lv := make([]int32, len(s.nodes))
	var q []int32
	for i := range s.nodes {
		if s.nodes[i].typ != mad.NodeSwitch {
			q = append(q, int32(i))
		} else {
			lv[i] = -1
		}
	}
	for len(q) > 0 {
		ni := q[0]
		q = q[1:]
		for pi := 1; pi < len(s.nodes[ni].ports); pi++ {
			r := s.nodes[ni].ports[pi].remote
			if r >= 0 && lv[r] < 0 {
				lv[r] = lv[ni] + 1
				q = append(q, r)
			}
		}
	}
	return lv
}

// UplinksTo sends everything switch sw forwards up the tree (out of any
// port cabled to a switch one level higher) out of port instead: all
// uplink traffic through one cable.
func (s *Sim) UplinksTo(sw string, port uint8) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ni, err := s.resolveSwitch(sw)
	if err != nil {
		return err
	}
	up, err := s.uplinkPorts(ni, port)
	if err != nil {
		return err
	}
	n := &s.nodes[ni]
	lft := s.ownLFT(ni, n.sw.lft.Len())
	for l, p := range lft.Bytes() {
		if int(p) < len(up) && up[p] {
			lft.Set(uint16(l), port)
		}
	}
	s.rerouteLocked()
	return nil
}

// uplinkPorts marks switch ni's uplinks (ports cabled to a switch one
// level higher), after checking that port is one of its ports and that it
// has uplinks at all.
func (s *Sim) uplinkPorts(ni int32, port uint8) ([]bool, error) {
	n := &s.nodes[ni]
	if port == 0 || int(port) > n.numPorts() {
		return nil, fmt.Errorf("sim: %s has no port %d", s.nodeName(ni), port)
	}
	lv := s.levels()
	up := make([]bool, len(n.ports))
	any := false
	for pi := 1; pi < len(n.ports); pi++ {
		if r := n.ports[pi].remote; r >= 0 && lv[r] > lv[ni] {
			up[pi], any = true, true
		}
	}
	if !any {
		return nil, fmt.Errorf("sim: %s has no uplinks (no port cabled to a higher-level switch)", s.nodeName(ni))
	}
	return up, nil
}

// cableBetween returns the first port of a cabled to b, or 0.
func (s *Sim) cableBetween(a, b int32) uint8 {
	for pi := 1; pi < len(s.nodes[a].ports); pi++ {
		if s.nodes[a].ports[pi].remote == b {
			return uint8(pi)
		}
	}
	return 0
}

// Loop makes switches a and b (cabled to each other) forward dlid to each
// other: packets to it circle until they expire.
func (s *Sim) Loop(a, b string, dlid uint16) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ai, err := s.resolveSwitch(a)
	if err != nil {
		return err
	}
	bi, err := s.resolveSwitch(b)
	if err != nil {
		return err
	}
	pa, pb := s.cableBetween(ai, bi), s.cableBetween(bi, ai)
	if pa == 0 || pb == 0 {
		return fmt.Errorf("sim: loop: %s and %s are not cabled to each other", a, b)
	}
	if err := s.setRoutes(ai, []uint16{dlid}, pa); err != nil {
		return err
	}
	if err := s.setRoutes(bi, []uint16{dlid}, pb); err != nil {
		return err
	}
	s.rerouteLocked()
	return nil
}

// switchesOnRoute returns the switches a LID-routed packet from port
// (ni, pi) to dlid crosses, or an error when it does not arrive.
func (s *Sim) switchesOnRoute(ni int32, pi uint8, dlid uint16) ([]int32, error) {
	var hops []lidHop
	if _, _, _, why := s.lidRoute(ni, pi, dlid, true, &hops); why != "" {
		return nil, fmt.Errorf("sim: %s", why)
	}
	var sw []int32
	for _, h := range hops {
		if s.nodes[h.node].typ == mad.NodeSwitch {
			sw = append(sw, h.node)
		}
	}
	return sw, nil
}

// Asymmetric re-routes b→a so that it crosses different switches than
// a→b (in a fat tree: a different spine), by editing one switch's entry
// for a's LID on the b→a route.
func (s *Sim) Asymmetric(a, b string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	an, ap, err := s.resolvePort(a)
	if err != nil {
		return err
	}
	bn, bp, err := s.resolvePort(b)
	if err != nil {
		return err
	}
	la, lb := s.nodes[an].ports[ap].lid, s.nodes[bn].ports[bp].lid
	if la == 0 || lb == 0 {
		return fmt.Errorf("sim: asym %s %s: both ports need LIDs", a, b)
	}
	fwd, err := s.switchesOnRoute(an, ap, lb)
	if err != nil {
		return fmt.Errorf("sim: asym: %s -> %s: %w", a, b, err)
	}
	rev, err := s.switchesOnRoute(bn, bp, la)
	if err != nil {
		return fmt.Errorf("sim: asym: %s -> %s: %w", b, a, err)
	}
	sameSet := func(x, y []int32) bool {
		x, y = slices.Clone(x), slices.Clone(y)
		slices.Sort(x)
		slices.Sort(y)
		return slices.Equal(slices.Compact(x), slices.Compact(y))
	}
	// Try, switch by switch along b→a, every other Active uplink; keep
	// the first that still reaches a over a set of switches different
	// from a→b's (and from the current b→a, when possible).
	for _, strictNew := range []bool{true, false} {
		for _, sw := range rev {
			n := &s.nodes[sw]
			lft := s.ownLFT(sw, int(la)+1)
			orig := lft.At(la)
			for q := 1; q < len(n.ports); q++ {
				p := &n.ports[q]
				if uint8(q) == orig || !p.active() || s.nodes[p.remote].typ != mad.NodeSwitch {
					continue
				}
				lft.Set(la, uint8(q))
				got, err := s.switchesOnRoute(bn, bp, la)
				if err == nil && !sameSet(got, fwd) && (!strictNew || !sameSet(got, rev)) {
					n.sw.fdbTop = max(n.sw.fdbTop, la)
					s.rerouteLocked()
					return nil
				}
			}
			lft.Set(la, orig)
		}
	}
	return fmt.Errorf("sim: asym %s %s: found no other route from %s to %s", a, b, b, a)
}

// Kill makes a node's management agents dead: it answers no MAD and
// forwards no directed-route SMP. Its switching hardware still forwards
// LID-routed packets and traffic.
func (s *Sim) Kill(nodeRef string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ni, err := s.resolveNode(nodeRef)
	if err != nil {
		return err
	}
	s.nodes[ni].dead = true
	return nil
}

// Flaky makes a node's agents answer only a share (0..1] of the MADs they
// receive; the rest are silently dropped.
func (s *Sim) Flaky(nodeRef string, share float64) error {
	if share <= 0 || share > 1 {
		return fmt.Errorf("sim: flaky %s: answer share %v must be in (0, 1]", nodeRef, share)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ni, err := s.resolveNode(nodeRef)
	if err != nil {
		return err
	}
	s.nodes[ni].answer = share
	return nil
}

// droppable are the attributes the drop fault accepts, as mad.AttrName
// names them.
var droppable = []string{"NodeInfo", "NodeDescription", "SwitchInfo", "PortInfo", "LinearForwardingTable",
	"P_KeyTable", "MlnxExtendedPortInfo", "SMInfo", "ClassPortInfo", "PortCounters", "PortCountersExtended", "SLtoVLMappingTable",
	"GeneralInfo", "AdaptiveRoutingInfo"}

// Drop makes a node's agents never answer one attribute: ref is a node
// (every modifier) or NODE/N (only modifier N: PortInfo of port N, an
// LFT block N). The rest of the node answers as usual.
func (s *Sim) Drop(ref, attr string) error { return s.attrFault(ref, attr, false) }

// Refuse makes a node's agents answer one attribute (ref as for Drop)
// with MAD status 0x001C, invalid field: the node is up and says no, as
// a switch does for an LFT block past its LinearFDBCap or a port it does
// not have (a snapshot's stale view of it).
func (s *Sim) Refuse(ref, attr string) error { return s.attrFault(ref, attr, true) }

func (s *Sim) attrFault(ref, attr string, refuse bool) error {
	name := ""
	for _, a := range droppable {
		if strings.EqualFold(a, attr) {
			name = a
		}
	}
	if name == "" {
		kw := "drop"
		if refuse {
			kw = "refuse"
		}
		return fmt.Errorf("sim: %s %s: attribute %q: want one of %s", kw, ref, attr, strings.Join(droppable, ", "))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d := attrDrop{name: name, mod: -1}
	ni, err := s.resolveNode(ref)
	if err != nil {
		i := strings.LastIndexByte(ref, '/')
		if i < 0 {
			return err
		}
		v, perr := strconv.ParseUint(ref[i+1:], 10, 32)
		if perr != nil {
			return err
		}
		if ni, err = s.resolveNode(strings.Trim(ref[:i], `"`)); err != nil {
			return err
		}
		d.mod = int64(v)
	}
	if refuse {
		s.nodes[ni].refuses = append(s.nodes[ni].refuses, d)
		return nil
	}
	s.nodes[ni].drops = append(s.nodes[ni].drops, d)
	return nil
}

// Loss makes every MAD exchange in the fabric lost with probability
// share in [0, 1) (0 turns it off), on top of any flaky agent. Choices
// are reproducible with Options.Seed.
func (s *Sim) Loss(share float64) error {
	if !(share >= 0 && share < 1) {
		return fmt.Errorf("sim: loss %v must be at least 0 and below 1 (100%%)", share)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loss = share
	return nil
}

// DuplicateGUID gives node b the NodeGUID (and SystemImageGUID) of node
// a, as a bad firmware burn does. Port GUIDs are unchanged.
func (s *Sim) DuplicateGUID(a, b string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ai, err := s.resolveNode(a)
	if err != nil {
		return err
	}
	bi, err := s.resolveNode(b)
	if err != nil {
		return err
	}
	if ai == bi {
		return fmt.Errorf("sim: dupguid: %q and %q are the same node", a, b)
	}
	s.nodes[bi].guid = s.nodes[ai].guid
	s.nodes[bi].sysGUID = s.nodes[ai].sysGUID
	s.index(uint16(len(s.lidMap) - 1))
	return nil
}

// Miswire plugs the cable of port a into port b: a and b become cabled to
// each other, and their former far ends (if any) to each other, as when
// two cables are swapped. The new links train to the best both ends
// enable and come up Active. Forwarding tables are not changed.
func (s *Sim) Miswire(a, b string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	an, ap, err := s.resolvePort(a)
	if err != nil {
		return err
	}
	bn, bp, err := s.resolvePort(b)
	if err != nil {
		return err
	}
	if ap == 0 || bp == 0 {
		return fmt.Errorf("sim: miswire: switch management ports have no cable")
	}
	pa, pb := &s.nodes[an].ports[ap], &s.nodes[bn].ports[bp]
	if (an == bn && ap == bp) || (pa.remote == bn && pa.remotePort == bp) {
		return fmt.Errorf("sim: miswire %s %s: they are already cabled to each other", a, b)
	}
	xa, xpa := pa.remote, pa.remotePort
	xb, xpb := pb.remote, pb.remotePort
	connect := func(n1 int32, p1 uint8, n2 int32, p2 uint8) {
		q1, q2 := &s.nodes[n1].ports[p1], &s.nodes[n2].ports[p2]
		q1.remote, q1.remotePort = n2, p2
		q2.remote, q2.remotePort = n1, p1
		q1.state, q1.phys = mad.PortStateActive, mad.PhysLinkUp
		q2.state, q2.phys = mad.PortStateActive, mad.PhysLinkUp
		s.train(n1, p1)
	}
	unplug := func(n int32, p uint8) {
		q := &s.nodes[n].ports[p]
		q.remote, q.remotePort = -1, 0
		q.state, q.phys = mad.PortStateDown, mad.PhysPolling
	}
	connect(an, ap, bn, bp)
	switch {
	case xa >= 0 && xb >= 0:
		connect(xa, xpa, xb, xpb)
	case xa >= 0:
		unplug(xa, xpa)
	case xb >= 0:
		unplug(xb, xpb)
	}
	s.rerouteLocked()
	return nil
}

// SetSLtoVL makes every SLtoVLMappingTable of switch ref (each pair of
// input and output port) map SL i to vl[i]: an SM that spread the SLs
// over VLs (QoS on, or a VL-aware engine such as DFSSSP or LASH
// programming them). VL15 drops the SL.
func (s *Sim) SetSLtoVL(ref string, vl [16]uint8) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ni, err := s.resolveSwitch(ref)
	if err != nil {
		return err
	}
	t := &mad.SLtoVLTable{VL: vl}
	if err := t.MarshalAttr(make([]byte, mad.SLtoVLSize)); err != nil {
		return fmt.Errorf("sim: sl2vl %s: %w", ref, err)
	}
	s.nodes[ni].sw.sl2vl = t
	return nil
}

// SLtoVLPlanted reports whether the sl2vl fault set any switch's tables:
// a what-if on a fabric file, which carries none of its own.
func (s *Sim) SLtoVLPlanted() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for i := range s.nodes {
		if sw := s.nodes[i].sw; sw != nil && sw.sl2vl != nil {
			return true
		}
	}
	return false
}
