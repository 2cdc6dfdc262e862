package checks

import (
	"fmt"
	"maps"
	"math/bits"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/route"
	"github.com/ibdoctor/ibdoctor/internal/words"
	"github.com/ibdoctor/ibdoctor/mad"
)

func init() {
	register(Check{
		ID:      "routing.unreachable",
		Summary: "a live host LID has no route from some switches: LFT entry 0xFF, beyond LinearFDBTop, or an egress port that is down",
		Needs:   []string{"topology", "lfts"},
		reads:   memoRoutes,
		run:     func(s *Snapshot) []Finding { return s.routeFailures(false) },
	})
	register(Check{
		ID:      "routing.loop",
		Summary: "forwarding tables send a destination around a loop",
		Needs:   []string{"topology", "lfts"},
		reads:   memoRoutes,
		run:     func(s *Snapshot) []Finding { return s.routeFailures(true) },
	})
	register(Check{
		ID:      "routing.ecmp-imbalance",
		Summary: "a switch spreads destinations (or host-to-host paths) unevenly over equal-cost ports: more than 20% above the mean",
		Needs:   []string{"topology", "lfts", "routes-read"},
		reads:   memoRoutes | memoLost,
		run:     (*Snapshot).ecmpImbalance,
	})
	register(Check{
		ID:      "routing.asymmetric",
		Summary: "A->B and B->A differ in length (one direction takes a detour); equal-length paths through different spines are normal and not reported",
		Needs:   []string{"topology", "lfts", "routes-read"},
		reads:   memoRoutes,
		run:     (*Snapshot).asymmetric,
	})
}

// routeGraph follows routes over the LFTs with internal/route's walker,
// judging entries as a switch does (route.Rules.Strict) and a port as up
// by linkUp, the rule every check here uses.
type routeGraph struct {
	a     *route.Analyzer
	hosts []*fabric.Port // CA ports with a LID and an active link
}

// routeGraph is newRouteGraph(s.Fabric), made once per Run: three checks
// walk the same tables.
func (s *Snapshot) routeGraph() *routeGraph {
	if s.memo == nil {
		return newRouteGraph(s.Fabric)
	}
	s.memo.used |= memoRoutes
	if s.memo.routeGraph == nil {
		s.memo.routeGraph = newRouteGraph(s.Fabric)
	}
	return s.memo.routeGraph
}

func newRouteGraph(f *fabric.Fabric) *routeGraph {
	return &routeGraph{a: route.NewAnalyzerWith(f, route.Rules{PortUp: forwards, Strict: true}), hosts: routedHosts(f)}
}

// routedHosts are f's CA ports with a LID and an active link: the
// destinations the routing checks follow.
func routedHosts(f *fabric.Fabric) []*fabric.Port {
	var hosts []*fabric.Port
	for _, n := range f.Nodes {
		if !isHostNode(n) {
			continue
		}
		for _, p := range n.Ports {
			if p != nil && p.LID != 0 && p.Remote != nil && linkUp(p) {
				hosts = append(hosts, p)
			}
		}
	}
	return hosts
}

// leaves returns the switches hosts are cabled to, in order of first
// appearance, with each leaf's hosts.
func leaves(hosts []*fabric.Port) ([]*fabric.Node, map[*fabric.Node][]*fabric.Port) {
	var order []*fabric.Node
	by := map[*fabric.Node][]*fabric.Port{}
	for _, h := range hosts {
		if l := leafOf(h); l != nil {
			if _, ok := by[l]; !ok {
				order = append(order, l)
			}
			by[l] = append(by[l], h)
		}
	}
	return order, by
}

// lids yields every LID of a port's LMC range: with LMC > 0 a subnet
// manager routes each of a port's 2^LMC LIDs on its own (that is what LMC
// is for), so a switch's balance is over all of them, not the base LIDs.
func lids(p *fabric.Port) func(func(uint16) bool) {
	return func(yield func(uint16) bool) {
		n := 1 << min(p.LMC, 7)
		for i := range n {
			lid := int(p.LID) + i
			if lid > 0xbfff || !yield(uint16(lid)) {
				return
			}
		}
	}
}

// hasLFTs reports whether any switch's LFT was read.
func hasLFTs(f *fabric.Fabric) bool {
	for _, n := range f.Nodes {
		if n.Switch != nil && n.Switch.LFT != nil {
			return true
		}
	}
	return false
}

// forwards reports whether a cabled port carries the routes' packets: a
// physical link whose ends are both Active (route.Passes). A link left in
// Init or Armed loses them as a Down one does (trial A2: its routes were
// "delivered" and trace exited 0).
func forwards(p *fabric.Port) bool {
	return linkUp(p) && route.Passes(p) && (p.Remote == nil || route.Passes(p.Remote))
}

// NotActive is the one judgement of a link physically up but not Active
// at one end (Init or Armed): no data passes it. link.down reports the
// port, the routing checks lose the routes over it, 'links' marks it.
func NotActive(p *fabric.Port) (mad.PortState, bool) { return notActive(p) }

// notActive reports whether p's link is physically up but not Active at
// one end (Init or Armed), and that end's state.
func notActive(p *fabric.Port) (mad.PortState, bool) {
	if p == nil || p.PhysState != mad.PhysLinkUp {
		return 0, false
	}
	for _, q := range []*fabric.Port{p, p.Remote} {
		if q != nil && q.StateKnown() && (q.State == mad.PortStateInit || q.State == mad.PortStateArmed) {
			return q.State, true
		}
	}
	return 0, false
}

// placeWhy is why() for a route failure at a place, naming the state of
// an egress link that is up but not Active.
func (s *Snapshot) placeWhy(f routeFail) string {
	if f.why == route.DeadEnd && f.at != nil && f.port != 0 {
		if st, ok := notActive(portOf(f.at, f.port)); ok {
			return fmt.Sprintf("egress link is %s (physically up, never activated)", st)
		}
	}
	return why(f.why)
}

// downs0 is the first of ps, or nil.
func downs0(ps []*fabric.Port) *fabric.Port {
	if len(ps) == 0 {
		return nil
	}
	return ps[0]
}

// why says how a failed route ends, as the findings word it.
func why(o route.Outcome) string {
	switch o {
	case route.NoRoute:
		return "no route (LFT entry 0xFF)"
	case route.BeyondTop:
		return "destination beyond LinearFDBTop"
	case route.DeadEnd:
		return "egress port is down or uncabled"
	case route.Misdelivered:
		return "delivered to the wrong host"
	case route.Loop:
		return "routing loop"
	}
	return o.String()
}

// leafOf returns the switch a host port is cabled to.
func leafOf(h *fabric.Port) *fabric.Node {
	if h.Remote != nil && h.Remote.Node.Type == mad.NodeSwitch {
		return h.Remote.Node
	}
	return nil
}

// routeFail is one place routes fail: the switch, and for a dead end
// the egress port.
type routeFail struct {
	why  route.Outcome
	at   *fabric.Node
	port uint8
}

// routeHit is who a routeFail cuts off.
type routeHit struct {
	dsts []*fabric.Port
	srcs map[*fabric.Port]bool
}

// routeFails is every place routes among the hosts fail, found by one
// walk to each host and shared by routing.unreachable and routing.loop.
type routeFails struct {
	hosts []*fabric.Port
	// per kind (loops or not), the places in the order found
	order [2][]routeFail
	hits  [2]map[routeFail]*routeHit
	// unread: where routes stop because what lies beyond was not read
	// (route.Unread, route.NoTable), in the order found: the switch,
	// the egress ports, and how many routes and destinations.
	unread      []*fabric.Node
	unreadAt    map[*fabric.Node]*routeUnread
	unreadTotal int
	// swLoops: loops on switches' own LIDs (port 0), by the switch the
	// loop comes back to, in the order found. No host's route crosses
	// them, but the subnet manager's and everyone's LID-routed MADs to
	// that switch go round them.
	swLoops []*switchLoop
	// asym: how every route of the walk ended, for routing.asymmetric.
	asym *asymRoutes
}

// asymRoutes is the code (routeCode) of the route from every leaf to
// every host, from findRouteFails' walks, for routing.asymmetric: a host
// pair's two directions are the routes from each one's leaf to the
// other, so every pair is judged without a walk of its own. A leaf's
// routes to one leaf's hosts are alike as a rule: ref holds the code of
// the route to each leaf's first host, exc the walks whose code differs
// (none on a healthy fat tree), so it costs a byte per leaf pair, not
// one per route (46 million at 49k nodes).
type asymRoutes struct {
	leaves  []*fabric.Node
	dsts    []*fabric.Port
	hostsOf [][]int32 // per leaf: its hosts, as indexes into dsts
	ref     []uint8   // [dst leaf × len(leaves) + src leaf]
	exc     map[[2]int32][]asymExc
}

// asymExc is a route from a leaf to the pos-th host of another (exc's
// key: source, destination leaf) whose code is not ref's.
type asymExc struct {
	pos  int32
	code uint8
}

// codes returns the code of the route from leaf src to each host of
// leaf dst.
func (ar *asymRoutes) codes(src, dst int) []uint8 {
	c := make([]uint8, len(ar.hostsOf[dst]))
	r := ar.ref[dst*len(ar.leaves)+src]
	for i := range c {
		c[i] = r
	}
	for _, e := range ar.exc[[2]int32{int32(src), int32(dst)}] {
		c[e.pos] = e.code
	}
	return c
}

// switchLoop is the switch LIDs whose routes loop back to one switch.
type switchLoop struct {
	at   *fabric.Node
	loop []*fabric.Port        // the egress ports of the loop, from at round to at
	dsts []*fabric.Port        // the switches' port 0
	srcs map[*fabric.Node]bool // switches whose route to a dst loops
}

// routeUnread is the routes that stop at one switch for want of a read.
type routeUnread struct {
	ports  []uint8
	routes int
	dsts   int
	last   *fabric.Port
	noTab  bool
	// src, dst: the first route that stops here (a job's, when scoped),
	// named to the user; src is nil when the leaf has no other host.
	src, dst *fabric.Port
}

// routeFails is findRouteFails, made once per Run: routing.unreachable,
// routing.loop and routing.asymmetric judge the same walks.
func (s *Snapshot) routeFails() *routeFails {
	if s.memo != nil {
		s.memo.used |= memoRoutes
	}
	switch {
	case s.memo == nil:
		return s.findRouteFails()
	case s.memo.routeFails == nil:
		s.memo.routeFails = s.findRouteFails()
	}
	return s.memo.routeFails
}

// findRouteFails walks every host's routes from every leaf once.
func (s *Snapshot) findRouteFails() *routeFails {
	g := s.routeGraph()
	leafOrder, byLeaf := leaves(g.hosts)
	rf := &routeFails{hosts: g.hosts, hits: [2]map[routeFail]*routeHit{{}, {}}, unreadAt: map[*fabric.Node]*routeUnread{}}
	// Leaves with a source of the job (all, unscoped): only their routes
	// are the job's.
	leafInScope := map[*fabric.Node]bool{}
	for _, leaf := range leafOrder {
		leafInScope[leaf] = s.Scope == nil || slices.ContainsFunc(byLeaf[leaf], func(h *fabric.Port) bool { return s.Scope.Hosts[h.Node] })
	}
	leafAt := make([]route.Switch, len(leafOrder))
	for i, leaf := range leafOrder {
		leafAt[i], _ = g.a.Switch(leaf)
	}
	var dsts []*fabric.Port
	for _, dst := range g.hosts {
		if s.Scope == nil || s.Scope.Hosts[dst.Node] {
			dsts = append(dsts, dst)
		}
	}
	// Every route's code for routing.asymmetric: first the routes to
	// each leaf's first host (ref), then the walks below hand over those
	// that differ.
	nl := len(leafOrder)
	ar := &asymRoutes{leaves: leafOrder, dsts: dsts, hostsOf: make([][]int32, nl), ref: make([]uint8, nl*nl), exc: map[[2]int32][]asymExc{}}
	rf.asym = ar
	leafIdx := make(map[*fabric.Node]int32, nl)
	for i, leaf := range leafOrder {
		leafIdx[leaf] = int32(i)
	}
	dstLeaf, dstPos := make([]int32, len(dsts)), make([]int32, len(dsts))
	var firsts []*fabric.Port
	var firstLeaf []int32
	for di, d := range dsts {
		m, ok := leafIdx[leafOf(d)]
		if !ok {
			dstLeaf[di] = -1
			continue
		}
		dstLeaf[di], dstPos[di] = m, int32(len(ar.hostsOf[m]))
		if len(ar.hostsOf[m]) == 0 {
			firsts, firstLeaf = append(firsts, d), append(firstLeaf, m)
		}
		ar.hostsOf[m] = append(ar.hostsOf[m], int32(di))
	}
	routeCodes(g, firsts, leafAt, func(k int) []uint8 {
		m := int(firstLeaf[k])
		return ar.ref[m*nl : (m+1)*nl]
	})
	// The walks (46 million at 49k nodes) run on every core.
	walkAll(g, dsts, leafAt, max(1, min(runtime.GOMAXPROCS(0), len(dsts))), 256,
		func(o route.Outcome, _ *fabric.Node) bool { return o != route.Delivered },
		func(di int) []uint8 {
			if m := int(dstLeaf[di]); m >= 0 {
				return ar.ref[m*nl : (m+1)*nl]
			}
			return nil
		},
		func(e walkEnd) {
			if e.o != route.Delivered {
				rf.record(s, dsts[e.dst], leafOrder[e.leaf], byLeaf, leafInScope[leafOrder[e.leaf]], e.o, e.at)
			}
			if m := dstLeaf[e.dst]; m >= 0 && e.code != ar.ref[int(m)*nl+int(e.leaf)] {
				k := [2]int32{e.leaf, m}
				ar.exc[k] = append(ar.exc[k], asymExc{pos: dstPos[e.dst], code: e.code})
			}
		})
	if s.Scope == nil {
		rf.swLoops = s.findSwitchLoops(g)
	}
	return rf
}

// findSwitchLoops walks every switch's route to every other switch's own
// LID and keeps the loops: the same tables, read the same way (route's
// walk, as trace follows them), whose destination is a switch rather
// than a host. A job's traffic never goes to a switch LID, so a gate
// does not ask.
func (s *Snapshot) findSwitchLoops(g *routeGraph) []*switchLoop {
	var sws []route.Switch
	var swNodes []*fabric.Node
	var dsts []*fabric.Port
	for _, n := range s.Fabric.Nodes {
		if n.Type != mad.NodeSwitch {
			continue
		}
		if sw, ok := g.a.Switch(n); ok {
			sws = append(sws, sw)
			swNodes = append(swNodes, n)
		}
		if len(n.Ports) > 0 && n.Ports[0] != nil && n.Ports[0].LID != 0 {
			dsts = append(dsts, n.Ports[0])
		}
	}
	return switchLoops(g, sws, swNodes, dsts, max(1, min(runtime.GOMAXPROCS(0), len(dsts))), 64)
}

// switchLoops is findSwitchLoops' walk (15 million walks at 49k nodes,
// split between the cores): the loops are recorded in destination order,
// then switch order, as one walker would.
func switchLoops(g *routeGraph, sws []route.Switch, swNodes []*fabric.Node, dsts []*fabric.Port, workers, per int) []*switchLoop {
	var out []*switchLoop
	by := map[*fabric.Node]*switchLoop{}
	var w *route.Walk // the recording's own, for the loops' paths
	walkAll(g, dsts, sws, workers, per,
		func(o route.Outcome, at *fabric.Node) bool { return o == route.Loop && at != nil }, nil,
		func(e walkEnd) {
			dst := dsts[e.dst]
			l := by[e.at]
			if l == nil {
				if w == nil {
					w = g.a.WalkTo(dst)
				} else {
					w.Reset(dst)
				}
				l = &switchLoop{at: e.at, loop: w.Path(e.at), srcs: map[*fabric.Node]bool{}}
				by[e.at] = l
				out = append(out, l)
			}
			if len(l.dsts) == 0 || l.dsts[len(l.dsts)-1] != dst {
				l.dsts = append(l.dsts, dst)
			}
			l.srcs[swNodes[e.leaf]] = true
		})
	return out
}

// walkAll walks the route to each of dsts from each switch of from, on
// workers goroutines taking per destinations each in turn, and hands
// record every walk keep wants, in destination order, then switch order,
// as one walker would (record runs on the caller's goroutine).
//
// With ref set, each walk also gets its code (routeCode) and is handed
// over when its code differs from ref(dst)[switch] too (a nil row
// compares nothing): how long the routes are, without a record of each
// route that is as expected.
func walkAll(g *routeGraph, dsts []*fabric.Port, from []route.Switch, workers, per int, keep func(route.Outcome, *fabric.Node) bool, ref func(dst int) []uint8, record func(walkEnd)) {
	walks := make([]*route.Walk, workers)
	ends := make([][]walkEnd, workers)
	for lo := 0; lo < len(dsts); lo += per * workers {
		var wg sync.WaitGroup
		var c carry
		for wi := range workers {
			first := min(len(dsts), lo+wi*per)
			part := dsts[first:min(len(dsts), lo+(wi+1)*per)]
			wg.Go(func() {
				defer c.catch()
				ev := ends[wi][:0]
				for k, dst := range part {
					if walks[wi] == nil {
						walks[wi] = g.a.WalkTo(dst)
					} else {
						walks[wi].Reset(dst)
					}
					w := walks[wi]
					if ref == nil {
						for i, sw := range from {
							if o, at := w.FromSwitch(sw); keep(o, at) {
								ev = append(ev, walkEnd{dst: int32(first + k), leaf: int32(i), o: o, at: at})
							}
						}
						continue
					}
					row := ref(first + k)
					for i, sw := range from {
						o, at := w.FromSwitch(sw)
						code := routeCode(o, w.Switches(sw))
						if keep(o, at) || row != nil && code != row[i] {
							ev = append(ev, walkEnd{dst: int32(first + k), leaf: int32(i), o: o, at: at, code: code})
						}
					}
				}
				ends[wi] = ev
			})
		}
		wg.Wait()
		c.rethrow()
		for _, ev := range ends {
			for _, e := range ev {
				record(e)
			}
		}
	}
}

// routeCodes sets row(k)[i] to the code (routeCode) of the route from
// from[i] to dsts[k], on every core; each row is written by one
// goroutine, with no record per walk.
func routeCodes(g *routeGraph, dsts []*fabric.Port, from []route.Switch, row func(k int) []uint8) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), len(dsts))) {
		wg.Go(func() {
			var w *route.Walk
			for {
				k := int(next.Add(1) - 1)
				if k >= len(dsts) {
					return
				}
				if w == nil {
					w = g.a.WalkTo(dsts[k])
				} else {
					w.Reset(dsts[k])
				}
				r := row(k)
				for i, sw := range from {
					o, _ := w.FromSwitch(sw)
					r[i] = routeCode(o, w.Switches(sw))
				}
			}
		})
	}
	wg.Wait()
}

// walkEnd is a route that was not delivered: to dsts[dst] from
// leafOrder[leaf] (in switchLoops, from the dst-th switch LID and the
// leaf-th switch), how and where it ended.
type walkEnd struct {
	dst, leaf int32
	o         route.Outcome
	at        *fabric.Node
	code      uint8 // routeCode, when walkAll was given ref
}

// Route codes: how a route ended, and when delivered how many switches
// it crossed (1..253), in a byte, for routing.asymmetric.
const (
	codeNotFollowed uint8 = 0   // route.Unread, route.NoTable
	codeFailed      uint8 = 255 // lost: no route, dead end, loop, ...
	codeMaxSwitches       = 254 // a longer delivered route counts as 254
)

// routeCode is a route's code: its outcome o and, delivered, the
// switches it crosses (Walk.Switches).
func routeCode(o route.Outcome, switches int) uint8 {
	switch o {
	case route.Delivered:
		return uint8(min(max(switches, 1), codeMaxSwitches))
	case route.Unread, route.NoTable:
		return codeNotFollowed
	}
	return codeFailed
}

// record adds a route that was not delivered, from leaf to dst, to rf.
func (rf *routeFails) record(s *Snapshot, dst *fabric.Port, leaf *fabric.Node, byLeaf map[*fabric.Node][]*fabric.Port, leafInScope bool, o route.Outcome, at *fabric.Node) {
	// NoTable and Unread: a table, a port's state or a far end
	// on the route was not read. Could not look is not a black
	// hole: the report lists what was not read.
	if o == route.NoTable || o == route.Unread {
		if at != nil && leafInScope {
			u := rf.unreadAt[at]
			if u == nil {
				u = &routeUnread{}
				rf.unreadAt[at] = u
				rf.unread = append(rf.unread, at)
			}
			if u.dst == nil {
				u.dst = dst
				for _, h := range byLeaf[leaf] {
					if h != dst && (s.Scope == nil || s.Scope.Hosts[h.Node]) {
						u.src = h
						break
					}
				}
			}
			u.routes++
			rf.unreadTotal++
			if u.last != dst {
				u.last = dst
				u.dsts++
			}
			if o == route.NoTable {
				u.noTab = true
			} else if at.Switch != nil && int(dst.LID) < at.Switch.LFT.Len() && !slices.Contains(u.ports, at.Switch.LFT.At(dst.LID)) {
				u.ports = append(u.ports, at.Switch.LFT.At(dst.LID))
			}
		}
		return
	}
	kind := 0
	if o == route.Loop {
		kind = 1
	}
	k := routeFail{why: o, at: at}
	if o == route.DeadEnd && at != nil && at.Switch != nil && int(dst.LID) < at.Switch.LFT.Len() {
		k.port = at.Switch.LFT.At(dst.LID)
	}
	for _, h := range byLeaf[leaf] {
		if h == dst || (s.Scope != nil && !s.Scope.Hosts[h.Node]) {
			continue
		}
		hh := rf.hits[kind][k]
		if hh == nil {
			hh = &routeHit{srcs: map[*fabric.Port]bool{}}
			rf.hits[kind][k] = hh
			rf.order[kind] = append(rf.order[kind], k)
		}
		if len(hh.dsts) == 0 || hh.dsts[len(hh.dsts)-1] != dst {
			hh.dsts = append(hh.dsts, dst)
		}
		hh.srcs[h] = true
	}
}

func (s *Snapshot) routeFailures(loops bool) []Finding {
	if !hasLFTs(s.Fabric) {
		return nil
	}
	// One finding per place routes fail (the switch, and for a dead end
	// the egress port): a down link that routes still use, or one loop,
	// breaks the routes to many destinations at once.
	rf := s.routeFails()
	kind := 0
	if loops {
		kind = 1
	}
	order, hits := rf.order[kind], rf.hits[kind]
	var out []Finding
	id := "routing.unreachable"
	if loops {
		id = "routing.loop"
	}
	// Routes not followed to the end: whether they arrive is not known.
	for _, at := range rf.unread {
		u := rf.unreadAt[at]
		beyond := "a switch whose forwarding table was not read"
		if !u.noTab {
			ps := make([]*fabric.Port, 0, len(u.ports))
			for _, n := range u.ports {
				if p := portOf(at, n); p != nil {
					ps = append(ps, p)
				}
			}
			beyond = fmt.Sprintf("%s %s, whose state or far end was not read", words.Noun(len(ps), "port"), portNums(ps))
		} else if at.Switch == nil || at.Switch.LFT == nil {
			beyond = "its own forwarding table, which was not read"
		}
		reason := fmt.Sprintf("%s (to %s) %s from here to %s: not followed further", words.Count(u.routes, "route"), words.Count(u.dsts, "destination"), words.Verb(u.routes, "lead"), beyond)
		if s.Scope != nil && u.src != nil {
			// A gate: say which of the job's routes, and why, in the
			// words of the question it answers.
			route, verb, them := "route "+s.nodeName(u.src.Node)+" → "+s.nodeName(u.dst.Node), "crosses", "it delivers"
			if u.routes > 1 {
				route, verb, them = fmt.Sprintf("routes %s → %s and %d more (to %d destinations)", s.nodeName(u.src.Node), s.nodeName(u.dst.Node), u.routes-1, u.dsts), "cross", "they deliver"
			}
			obj := "it"
			if u.routes > 1 {
				obj = "them"
			}
			what := "which leads " + obj + " on to " + beyond
			if s.silentSwitch(at) {
				what = "which did not answer (neither its forwarding table nor its ports on the job's routes could be read)"
			} else if u.noTab {
				what = "whose forwarding table could not be read"
			}
			reason = fmt.Sprintf("the job's %s %s %s, %s: whether %s is not known", route, verb, s.nodeName(at), what, them)
		}
		s.couldNotDecide(id, reason, s.nodeEntity(at, "switch"))
	}
	hostsTotal := max(1, len(rf.hosts))
	if s.Scope != nil {
		// A gate's share is of the job's pairs, as its other findings'
		// are: a lost route hangs the job (trial T14: 8 of its 240
		// pairs, not 0.2% of the part of the fabric read).
		n := 0
		for _, h := range rf.hosts {
			if s.Scope.Hosts[h.Node] {
				n++
			}
		}
		hostsTotal = max(1, n)
	}
	// The same destination failing the same way at several places (one
	// blackhole on two leaves) is one finding over all of them: each
	// place cuts off its own sources, and a fold of identical titles
	// kept the first place's count and switch only (trial T6). A place
	// failing several destinations names itself in the title and stays
	// on its own.
	type groupKey struct {
		why route.Outcome
		dst *fabric.Port
		at  routeFail
	}
	var groups [][]routeFail
	groupOf := map[groupKey]int{}
	for _, f := range order {
		k := groupKey{at: f}
		if dsts := hits[f].dsts; len(dsts) == 1 {
			k = groupKey{why: f.why, dst: dsts[0]}
		}
		i, ok := groupOf[k]
		if !ok {
			i = len(groups)
			groupOf[k] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], f)
	}
	hostIdx := map[*fabric.Node]int{} // the finding a place's routes are in
	for _, places := range groups {
		// dsts are the same at every place of a group of several.
		dsts := hits[places[0]].dsts
		var srcs []*fabric.Port
		for _, h := range rf.hosts {
			for _, f := range places {
				if hits[f].srcs[h] {
					srcs = append(srcs, h)
					break
				}
			}
		}
		var ents []Entity
		for i, d := range dsts {
			if i == 5 {
				break
			}
			ents = append(ents, s.entityOf(d, "destination"))
		}
		var atNames, swNames, details []string
		var downs []*fabric.Port // the egress ports, read and without a physical link
		pairs := 0
		for _, f := range places {
			hh := hits[f]
			atName, swName := "?", "?"
			if f.at != nil {
				if _, ok := hostIdx[f.at]; !ok {
					hostIdx[f.at] = len(out)
				}
				atName, swName = s.nodeName(f.at), s.nodeName(f.at)
				ents = append(ents, s.nodeEntity(f.at, "switch"))
				if f.port != 0 {
					if p := portOf(f.at, f.port); p != nil {
						ents = append(ents, s.entityOf(p, "egress"))
						atName = s.entityOf(p, "").String()
						if _, init := notActive(p); f.why == route.DeadEnd && p.StateKnown() && (p.PhysState != mad.PhysLinkUp || init) {
							downs = append(downs, p)
						}
					}
				}
			}
			atNames, swNames = append(atNames, atName), append(swNames, swName)
			// A route from one leaf to one destination ends at one
			// place, so the places' sources and pairs add up.
			n := 0
			for _, h := range rf.hosts {
				if hh.srcs[h] {
					n++
				}
			}
			for _, d := range dsts {
				pairs += n
				if hh.srcs[d] {
					pairs--
				}
			}
			d := fmt.Sprintf("%s at %s for DLID %d", s.placeWhy(f), atName, dsts[0].LID)
			if f.at != nil && f.why == route.NoRoute {
				d = fmt.Sprintf("%s's LFT entry for LID %d is 0xFF", s.nodeName(f.at), dsts[0].LID)
			}
			if len(places) > 1 {
				var own []*fabric.Port
				for _, h := range srcs {
					if hh.srcs[h] {
						own = append(own, h)
					}
				}
				d += " (" + sourcesCount(own) + ")"
			}
			details = append(details, d)
		}
		share := float64(pairs) / float64(hostsTotal*(hostsTotal-1)+1)
		f := places[0]
		dst := dsts[0]
		atList := joinAnd(atNames)
		var title, detail string
		if len(dsts) == 1 {
			title = fmt.Sprintf("%s cannot reach %s (LID %d): %s", sourcesCount(srcs), s.nodeName(dst.Node), dst.LID, s.placeWhy(f))
			if len(places) > 1 {
				title += " at " + atList
			}
			detail = strings.Join(details, "; ")
		} else {
			title = fmt.Sprintf("%s cannot reach %s: %s at %s", sourcesCount(srcs), words.Count(len(dsts), "destination"), s.placeWhy(f), atList)
			detail = fmt.Sprintf("%s at %s; destinations: %s", s.placeWhy(f), atList, s.hostNames(dsts, 5))
		}
		involved := len(srcs) + len(dsts)
		dstWord, entries := "destination", fmt.Sprintf("entry for LID %d", dst.LID)
		if len(dsts) > 1 {
			dstWord, entries = "destinations", fmt.Sprintf("entries for LID %d and the %d others", dst.LID, len(dsts)-1)
		}
		// A pair to type (trial G3), by LID: a host name is ambiguous
		// on a host with several HCAs.
		trace := "'ibdoctor trace' shows the path."
		for _, src := range srcs {
			if src != dst && src.LID != 0 && dst.LID != 0 {
				trace = fmt.Sprintf("'ibdoctor trace %d %d' (%s to %s, with this run's source flags) shows the path.", src.LID, dst.LID, s.nodeName(src.Node), s.nodeName(dst.Node))
				break
			}
		}
		action := fmt.Sprintf("Have the subnet manager recompute routes (a heavy re-sweep) and check its log for errors about %s; if the tables were loaded from a file (opensm -R file), fix the %s on %s. %s", atList, entries, atList, trace)
		if st, init := notActive(downs0(downs)); init && len(downs) == len(places) {
			// The link is up and was never activated: the SM, not the
			// cable (link.down's advice for the same port).
			action = fmt.Sprintf("The link at %s is physically up but %s: no data passes until the subnet manager activates it. Check that the subnet manager is running and sweeping (sminfo, the SM's log); if it is healthy, re-run a heavy sweep or bounce the port. %s", atList, st, trace)
		} else if len(downs) == len(places) {
			// The tables point at a port whose link is down: the cable
			// is the first suspect, the tables the second (trial T14).
			is := fmt.Sprintf("%s is %s", atList, downs[0].PhysState)
			if len(downs) > 1 {
				is = atList + " have no link"
			}
			action = fmt.Sprintf("%s: if a cable belongs there (a link.down finding names it against the expected topology or the snapshot), reseat or replace it. Until it is back the subnet manager should route around it: if it does not, check its log for errors about %s; if the tables were loaded from a file (opensm -R file), fix the %s on %s. %s", is, atList, entries, joinAnd(swNames), trace)
		}
		var deadEnd *fabric.Port
		if len(downs) > 0 {
			deadEnd = downs[0]
		}
		// Several places are one fault at all of them: its place (the
		// textfile's labels) names them all, as the title does. At the
		// first only, an alert sent the operator to leaf01 and fired
		// anew for leaf02 once leaf01 was fixed.
		group := ""
		if len(places) > 1 {
			group = atList
		}
		out = append(out, Finding{
			Check:    id,
			Severity: Critical,
			Title:    title,
			Entities: ents,
			Group:    group,
			Evidence: []Evidence{{Name: "sources", Value: float64(len(srcs)), Text: detail + "; affected sources: " + s.hostNames(srcs, 5)}},
			// Lost, not slowed: a collective over any of the sources
			// and the destination hangs, so the score is the share of
			// hosts involved rather than of host pairs.
			Impact:  Impact{PathShare: share, Score: max(min(1, float64(involved)/float64(hostsTotal)), 0.05), Summary: "traffic from these hosts to the " + dstWord + " is lost: jobs spanning them hang or fail"},
			Action:  action,
			Basis:   "routes",
			deadEnd: deadEnd,
		})
	}
	if loops {
		out = s.switchLoopFindings(out, hostIdx, rf.swLoops)
	}
	return out
}

// switchLoopFindings adds the loops on switches' own LIDs to out, whose
// host-loop findings hostIdx indexes by the switches they come back to:
// one finding per switch the loops come back to. A loop that host routes already go round (one of
// its switches is where a host loop comes back) is one problem: its
// finding gains the switch LIDs as evidence instead.
func (s *Snapshot) switchLoopFindings(out []Finding, hostIdx map[*fabric.Node]int, ls []*switchLoop) []Finding {
	for _, l := range ls {
		var names []string
		ents := []Entity{}
		host := -1
		for _, p := range l.loop {
			names = append(names, s.nodeName(p.Node))
			if i, ok := hostIdx[p.Node]; ok && host < 0 {
				host = i
			}
		}
		if host >= 0 {
			out[host].Evidence = append(out[host].Evidence, Evidence{Name: "switch LIDs", Value: float64(len(l.dsts)), Text: fmt.Sprintf("the routes to %s go round the same loop (%s)", words.Count(len(l.dsts), "switch LID"), s.hostNames(l.dsts, 5))})
			continue
		}
		circle := "through " + strings.Join(names, " -> ") + " -> " + s.nodeName(l.at)
		if len(names) == 2 {
			circle = "between " + names[0] + " and " + names[1]
		}
		dst := l.dsts[0]
		what := fmt.Sprintf("switch %s (LID %d)", s.nodeName(dst.Node), dst.LID)
		entries := fmt.Sprintf("entry for LID %d", dst.LID)
		if len(l.dsts) > 1 {
			what = fmt.Sprintf("%s: %s", words.Count(len(l.dsts), "switch LID"), s.hostNames(l.dsts, 5))
			entries = fmt.Sprintf("entries for LID %d and the %d others", dst.LID, len(l.dsts)-1)
		}
		for i, d := range l.dsts {
			if i == 5 {
				break
			}
			ents = append(ents, s.entityOf(d, "destination"))
		}
		ents = append(ents, s.nodeEntity(l.at, "switch"))
		var hops []string
		for _, p := range l.loop {
			hops = append(hops, s.entityOf(p, "").String())
			ents = append(ents, s.entityOf(p, "egress"))
		}
		out = append(out, Finding{
			Check:    "routing.loop",
			Severity: Critical,
			Title:    fmt.Sprintf("Routes to %s loop %s", what, circle),
			Entities: ents,
			Evidence: []Evidence{{Name: "sources", Value: float64(len(l.srcs)), Text: fmt.Sprintf("the forwarding tables send LID %d out of %s and back to %s; %s %s into the loop", dst.LID, strings.Join(hops, ", "), s.nodeName(l.at), words.Count(len(l.srcs), "switch"), words.Verb(len(l.srcs), "route"))}},
			// No host's data goes to a switch's own LID, so no host
			// path is lost; the switch's management is.
			Impact: Impact{Score: 0.05, Summary: "LID-routed packets to the switch (performance counters, vendor queries, the subnet manager's LID-routed MADs) circle the loop until the switches drop them: the switch cannot be read or managed by LID, which is why it may show as not read; no host's data goes to a switch LID"},
			Action: fmt.Sprintf("Have the subnet manager recompute routes (a heavy re-sweep) and check its log for errors about %s; if the tables were loaded from a file (opensm -R file), fix the %s on %s. 'ibdoctor trace' shows the loop.", strings.Join(names, ", "), entries, strings.Join(names, " and ")),
			Basis:  "routes",
		})
	}
	return out
}

// silentSwitch reports whether nothing of sw was read: no forwarding
// table and no port (of the scope's, when scoped) with a known state —
// a switch whose agent did not answer, as opposed to one read in part.
func (s *Snapshot) silentSwitch(sw *fabric.Node) bool {
	if sw.Switch != nil && sw.Switch.LFT != nil {
		return false
	}
	seen := false
	for _, p := range sw.Ports {
		if p == nil || (s.Scope != nil && !s.Scope.Ports[p]) {
			continue
		}
		if p.StateKnown() {
			return false
		}
		seen = true
	}
	return seen
}

// unreadPorts lists sw's ports whose state or far end was not read: a
// route that leaves by one goes where could not be looked at, and such a
// port may lead anywhere (one more equal-cost port, or none).
func unreadPorts(sw *fabric.Node) []*fabric.Port {
	var out []*fabric.Port
	for _, p := range sw.Ports {
		if p != nil && p.Num != 0 && (!p.StateKnown() || p.PeerUnknown()) {
			out = append(out, p)
		}
	}
	return out
}

// joinAnd lists names as a sentence does: "a", "a and b", "a, b and c".
func joinAnd(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// sourcesCount counts a route finding's sources as hosts, and as HCA
// ports too where a host has more than one ("223 HCA ports (31 hosts)"):
// a route starts at a CA port, and counting those as hosts made a
// 32-host fabric's blast radius read as 223 hosts (trial T11). A CA not
// described "host device" counts as a host of its own.
func sourcesCount(ps []*fabric.Port) string {
	hosts := map[any]bool{}
	for _, p := range ps {
		if h := HostOf(p.Node); h != "" {
			hosts[fabric.HostKey(h)] = true // GPU001 is gpu001 (review R6b)
		} else {
			hosts[p.Node] = true
		}
	}
	if len(hosts) == len(ps) {
		return words.Count(len(ps), "host")
	}
	return fmt.Sprintf("%s (%s)", words.Count(len(ps), "HCA port"), words.Count(len(hosts), "host"))
}

func (s *Snapshot) hostNames(ps []*fabric.Port, n int) string {
	var names []string
	for _, p := range ps[:min(n, len(ps))] {
		names = append(names, s.nodeName(p.Node))
	}
	return words.FirstOf(names, len(ps))
}

// switchGraph indexes switches and their active inter-switch links for
// hop-distance searches.
type switchGraph struct {
	idx  map[*fabric.Node]int32
	nbrs [][]int32 // per switch index: neighbour switch indexes
}

func newSwitchGraph(f *fabric.Fabric) *switchGraph {
	g := &switchGraph{idx: make(map[*fabric.Node]int32)}
	for _, n := range f.Nodes {
		if n.Type == mad.NodeSwitch {
			g.idx[n] = int32(len(g.nbrs))
			g.nbrs = append(g.nbrs, nil)
		}
	}
	for n, i := range g.idx {
		for _, p := range n.Ports {
			if p != nil && p.Num != 0 && interSwitch(p) && linkUp(p) {
				g.nbrs[i] = append(g.nbrs[i], g.idx[p.Remote.Node])
			}
		}
	}
	return g
}

// leafDist is every switch's hop distance to every leaf (-1:
// unreachable), by switch then leaf: counting a switch's groups reads
// its own and its neighbours' rows, one after the other, where rows by
// leaf had it jump across the whole matrix for every leaf (most of the
// check's time at 49k nodes).
type leafDist struct {
	leaves int
	d      []int16
}

// row returns switch i's distances, by leaf.
func (ld leafDist) row(i int32) []int16 {
	return ld.d[int(i)*ld.leaves : (int(i)+1)*ld.leaves : (int(i)+1)*ld.leaves]
}

// leafDistances returns every switch's hop distance to each of leaves,
// indexed as the graph. The searches run 64 leaves at a time, a bit per
// leaf (a breadth-first search over bit sets), so a cable is crossed
// once per level for 64 leaves rather than once per leaf.
func (g *switchGraph) leafDistances(leaves []*fabric.Node) leafDist {
	n, nl := len(g.nbrs), len(leaves)
	ld := leafDist{leaves: nl, d: make([]int16, n*nl)}
	for i := range ld.d {
		ld.d[i] = -1
	}
	sets := make([]uint64, 3*n)
	front, next, seen := sets[:n:n], sets[n:2*n:2*n], sets[2*n:]
	for lo := 0; lo < nl; lo += 64 {
		clear(front)
		clear(seen)
		for b, leaf := range leaves[lo:min(nl, lo+64)] {
			src := g.idx[leaf]
			front[src] |= 1 << b
			seen[src] |= 1 << b
			ld.d[int(src)*nl+lo+b] = 0
		}
		for level := int16(1); ; level++ {
			clear(next)
			for u, fu := range front {
				if fu != 0 {
					for _, r := range g.nbrs[u] {
						next[r] |= fu
					}
				}
			}
			more := false
			for r, x := range next {
				x &^= seen[r]
				next[r] = x
				if x == 0 {
					continue
				}
				more = true
				seen[r] |= x
				row := ld.d[r*nl+lo:]
				for ; x != 0; x &= x - 1 {
					row[bits.TrailingZeros64(x)] = level
				}
			}
			if !more {
				break
			}
			front, next = next, front
		}
	}
	return ld
}

// ecmpCand is a switch's up port to another switch, with that switch's
// distances to the leaves.
type ecmpCand struct {
	p    *fabric.Port
	dist []int16 // that switch's distances to the leaves
}

// ecmpGroup is a set of equal-cost egress ports of one switch.
type ecmpGroup struct {
	sw    *fabric.Node
	ports []*fabric.Port
	dlids map[*fabric.Port]int // CA destinations routed through each port
	// count and in are dlids and ports by port number while the
	// destinations are counted: the count runs for every switch and CA
	// destination, where a map increment and a search of ports cost
	// most of the check (49k nodes).
	count [256]int32
	in    [256]bool
	other int // destinations of the group routed elsewhere
	// unread counts the group's destinations the table sends out of a
	// port whose state or far end was not read; maybe are the ports not
	// read that may be more equal-cost ports of the group.
	unread int
	maybe  []*fabric.Port
	// lost counts the group's destinations that are LIDs routing.lost-lid
	// finds lost (lostBehind).
	lost int
	// load counts every CA destination the switch forwards through each
	// port, whichever group it belongs to.
	load func() map[*fabric.Port]int
}

func (s *Snapshot) ecmpImbalance() []Finding {
	if !hasLFTs(s.Fabric) {
		return nil
	}
	ratio := s.Expect.ImbalanceRatio
	if ratio <= 0 {
		ratio = 1.2
	}
	g := s.routeGraph()
	byLeaf := map[*fabric.Node][]*fabric.Port{}
	shared := map[*fabric.Port]bool{}
	var leaves []*fabric.Node
	for _, h := range g.hosts {
		// Scoped to a job: only the job's destinations matter.
		if s.Scope != nil && !s.Scope.Hosts[h.Node] {
			continue
		}
		// A LID another port also owns is routed to one of them, not
		// necessarily behind h's leaf: counting it there would blame
		// the balance for the duplicate (addr.duplicate-lid says it).
		if s.Fabric.LIDShared(h) != "" {
			shared[h] = true
			continue
		}
		if l := leafOf(h); l != nil {
			if _, ok := byLeaf[l]; !ok {
				leaves = append(leaves, l)
			}
			byLeaf[l] = append(byLeaf[l], h)
		}
	}
	// The LIDs routing.lost-lid finds lost (nodes unplugged or disabled
	// since the SM last routed) are still in every table, where the SM
	// balanced them with the others: without them, two hosts unplugged
	// on one leaf tipped its peers' groups over the threshold (trial
	// A8: 5/4/5/4 became 5/4/3/4, "check for edited routes"). They are
	// counted behind the switch where they are lost; the loss is
	// lost-lid's to report. Not where lost-lid cannot decide (the sweep
	// did not read everything: they are unknown LIDs below), nor in a
	// job's gate (its destinations only).
	var lost map[*fabric.Node][]uint16
	if s.Scope == nil && !partlyRead(s.Fabric) {
		lost = lostBehind(s.lostPorts())
	}
	nLost := 0
	for _, n := range s.Fabric.Nodes {
		ls, ok := lost[n]
		if !ok {
			continue
		}
		nLost += len(ls)
		if _, known := byLeaf[n]; !known {
			leaves = append(leaves, n)
			byLeaf[n] = nil
		}
	}
	sg := newSwitchGraph(s.Fabric)
	dist := sg.leafDistances(leaves)
	// LIDs the tables route that belong to no port read: where the sweep
	// could not read everything, destinations it did not find (a host
	// whose NodeInfo or PortInfo went unanswered) are still in the
	// tables, and may be any group's. A job's gate counts only the job's
	// destinations.
	var unknown []uint16
	if s.Scope == nil && partlyRead(s.Fabric) {
		unknown = unknownLIDs(s.Fabric)
	}
	var out []Finding
	const id = "routing.ecmp-imbalance"
	// Each switch's groups are counted on every core, a batch of
	// switches at a time (the count runs for every switch and CA
	// destination); they are judged below in the fabric's order.
	cnt := &ecmpCount{g: g, sg: sg, leaves: leaves, dist: dist, byLeaf: byLeaf, shared: shared, leafLIDs: make([][]uint16, len(leaves)), leafLive: make([]int, len(leaves))}
	nLIDs := nLost
	for _, h := range g.hosts {
		nLIDs += 1 << min(h.LMC, 7)
	}
	all := make([]uint16, 0, nLIDs)
	for li, leaf := range leaves {
		lo := len(all)
		for _, h := range byLeaf[leaf] {
			for lid := range lids(h) {
				all = append(all, lid)
			}
		}
		cnt.leafLive[li] = len(all) - lo
		all = append(all, lost[leaf]...)
		cnt.lost = append(cnt.lost, lost[leaf]...)
		cnt.leafLIDs[li] = all[lo:len(all):len(all)]
	}
	// A gate's switches whose table changed since the sweep are judged
	// on every destination behind the job's leaves, not the job's own:
	// the sweep's verdict on them is of the old table, and the job's
	// destinations are often too few to judge a group (trial B2). Their
	// ports' totals are the whole table's: counted on the fabric when it
	// is whole, else the sweep's corrected by the entries re-read.
	var whole *ecmpCount
	if s.Scope != nil && len(s.TablesChanged) > 0 {
		whole = &ecmpCount{g: g, sg: sg, leaves: leaves, dist: dist, byLeaf: map[*fabric.Node][]*fabric.Port{}, shared: shared, leafLIDs: make([][]uint16, len(leaves)), leafLive: make([]int, len(leaves))}
		for _, h := range g.hosts {
			if l := leafOf(h); l != nil && !shared[h] && s.Fabric.LIDShared(h) == "" {
				if _, job := byLeaf[l]; job {
					whole.byLeaf[l] = append(whole.byLeaf[l], h)
				}
			}
		}
		for li, leaf := range leaves {
			for _, h := range whole.byLeaf[leaf] {
				for lid := range lids(h) {
					whole.leafLIDs[li] = append(whole.leafLIDs[li], lid)
				}
			}
			whole.leafLive[li] = len(whole.leafLIDs[li])
		}
	}
	changedTot, changedWhy := s.changedTables(whole != nil)
	// A whole fabric's switches' per-port destination totals, which a
	// sweep keeps for the gates (FabricWide): what load counts, the lost
	// LIDs too.
	var dests []uint16
	var masks []uint64
	var recs []totalsRec
	if s.Scope == nil {
		dests = append(totalsDests(g.hosts, shared), cnt.lost...)
		masks = destMasks(dests)
	}
	var sws []*fabric.Node
	for _, sw := range s.Fabric.Nodes {
		if sw.Type == mad.NodeSwitch && s.nodeInScope(sw) {
			sws = append(sws, sw)
		}
	}
	const batch = 256
	counted := make([]map[string]*ecmpGroup, batch)
	totals := make([]*[256]int32, batch)
	// per worker: the bit sets of groups, one per leaf, and the
	// candidate ports, made once rather than for every switch
	scratch := make([]ecmpScratch, max(1, runtime.GOMAXPROCS(0)))
	for w := range scratch {
		scratch[w].near = make([]uint64, len(leaves))
	}
	for lo := 0; lo < len(sws); lo += batch {
		part := sws[lo:min(len(sws), lo+batch)]
		var next atomic.Int32
		var wg sync.WaitGroup
		var c carry
		for w := range min(len(scratch), len(part)) {
			wg.Go(func() {
				defer c.catch()
				for i := int(next.Add(1) - 1); i < len(part); i = int(next.Add(1) - 1) {
					counted[i], totals[i] = nil, nil
					sw := part[i]
					if sw.Switch == nil || sw.Switch.LFT == nil {
						continue
					}
					switch {
					case dests != nil:
						totals[i] = countTotals(sw, masks)
						counted[i] = cnt.groups(sw, &scratch[w], totals[i])
					case whole != nil && s.TablesChanged[sw] != nil:
						if changedWhy[sw] == "" {
							counted[i] = whole.groups(sw, &scratch[w], changedTot[sw])
						}
					default:
						counted[i] = cnt.groups(sw, &scratch[w], nil)
					}
				}
			})
		}
		wg.Wait()
		c.rethrow()
		for i, sw := range part {
			if totals[i] != nil {
				recs = append(recs, encodeTotals(sw, totals[i]))
			}
			if whole != nil && s.TablesChanged[sw] != nil && sw.Switch != nil && sw.Switch.LFT != nil {
				if why := changedWhy[sw]; why != "" {
					s.couldNotDecide(id, why, s.nodeEntity(sw, "switch"))
					continue
				}
				for _, k := range slices.Sorted(maps.Keys(counted[i])) {
					if why := s.minorityGroup(counted[i][k], ratio); why != "" {
						s.couldNotDecide(id, why, s.nodeEntity(sw, "switch"))
						delete(counted[i], k)
					}
				}
				n := len(out)
				s.judgeECMP(sw, counted[i], unknown, ratio, &out)
				of := "counted on the whole fabric"
				if changedTot[sw] != nil {
					of = "the sweep's, corrected by the entries read now"
				}
				for j := n; j < len(out); j++ {
					out[j].Evidence = append(out[j].Evidence, Evidence{Name: "judged", Text: fmt.Sprintf("%s's forwarding table changed since the sweep: the gate read its entries for every destination behind the job's leaves and judged its groups toward them on those, against its ports' totals over every destination it routes (%s)", s.nodeName(sw), of)})
				}
				continue
			}
			s.judgeECMP(sw, counted[i], unknown, ratio, &out)
		}
	}
	if dests != nil {
		s.portTotals = newPortTotals(recs, dests)
	}
	if s.Scope != nil && s.FabricRouting.Judged("routing.ecmp-imbalance") {
		// The sweep's verdict on a group stands for every job whose
		// routes leave by its busiest port; the job's own judgement of
		// the same port would say it twice.
		fw, covered := s.jobECMP(g)
		out = slices.DeleteFunc(out, func(f Finding) bool {
			for _, e := range f.Entities {
				if e.Role == "busiest" {
					if n := s.Fabric.NodeByGUID(e.NodeGUID); n != nil && e.Port < len(n.Ports) && covered[n.Ports[e.Port]] {
						return true
					}
				}
			}
			return false
		})
		out = append(out, fw...)
	}
	return out
}

// groups counts, for switch sw, its CA destinations per group of
// equal-cost ports (towards each leaf, by the switchGraph distances
// dist), keyed by the group's port numbers.
//
// tot, when not nil, are sw's per-port totals over every destination it
// routes (the group's load); nil: counted over the fabric's hosts.
func (c *ecmpCount) groups(sw *fabric.Node, sc *ecmpScratch, tot *[256]int32) map[string]*ecmpGroup {
	g, sg, leaves, dist := c.g, c.sg, c.leaves, c.dist
	var set []*fabric.Port
	key := make([]byte, 0, 64)
	si := sg.idx[sw]
	eg, _ := g.a.EgressFrom(sw)
	lft := sw.Switch.LFT
	unread := unreadPorts(sw)
	var isUnread [256]bool
	for _, p := range unread {
		isUnread[p.Num] = true
	}
	// Per entry value of the table: the number of the port eg.To
	// returns for a LID below et.Limit with that entry (-1: none), and
	// of the port it names when that is one not read (-1: none).
	var et route.EgressTable
	eg.Table(&et)
	var upNum, unreadNum [256]int16
	for out := range upNum {
		upNum[out], unreadNum[out] = -1, -1
		if p := et.Ports[out]; p != nil {
			upNum[out] = int16(p.Num)
		}
		if q := portOf(sw, uint8(out)); q != nil && isUnread[q.Num] {
			unreadNum[out] = int16(q.Num)
		}
	}
	// the ports that can be in a group, with the switch each leads
	// to, found once for all leaves
	cands := sc.cands[:0]
	for _, p := range sw.Ports {
		if p != nil && p.Num != 0 && interSwitch(p) && linkUp(p) {
			cands = append(cands, ecmpCand{p, dist.row(sg.idx[p.Remote.Node])})
		}
	}
	sc.cands = cands
	groups := map[string]*ecmpGroup{}
	// What the routing engine balanced: every CA destination the
	// switch forwards, per egress port (by the table's entry, so a
	// port that was not read counts too). Counted only for a group
	// that is uneven on its own (rare on a healthy fabric).
	var loadMemo map[*fabric.Port]int
	load := func() map[*fabric.Port]int {
		if loadMemo == nil && tot != nil {
			loadMemo = map[*fabric.Port]int{}
			for num, n := range tot {
				if p := portOf(sw, uint8(num)); p != nil && n > 0 {
					loadMemo[p] = int(n)
				}
			}
		}
		if loadMemo == nil {
			loadMemo = map[*fabric.Port]int{}
			for _, h := range g.hosts {
				if c.shared[h] {
					continue
				}
				for lid := range lids(h) {
					if int(lid) < lft.Len() {
						if p := portOf(sw, lft.At(lid)); p != nil {
							loadMemo[p]++
						}
					}
				}
			}
			for _, lid := range c.lost {
				if int(lid) < lft.Len() {
					if p := portOf(sw, lft.At(lid)); p != nil {
						loadMemo[p]++
					}
				}
			}
		}
		return loadMemo
	}
	own := dist.row(si)
	// With at most 64 candidates, which of them are one hop nearer
	// each leaf is found candidate by candidate over all leaves (rows
	// read in order), as a bit set per leaf; consecutive leaves with
	// the same set share the group without building its key again.
	var near []uint64
	if len(cands) <= 64 {
		near = sc.near[:len(leaves)]
		clear(near)
		for k, cd := range cands {
			bit := uint64(1) << k
			for li, d := range cd.dist[:len(own)] {
				if d == own[li]-1 {
					near[li] |= bit
				}
			}
		}
	}
	var last *ecmpGroup
	lastSet := ^uint64(0)
	for li, leaf := range leaves {
		ds := own[li]
		if ds <= 0 {
			continue
		}
		var grp *ecmpGroup
		if near != nil && near[li] == lastSet && last != nil {
			grp = last
		} else {
			set, key = set[:0], key[:0]
			for k, cd := range cands {
				if near != nil && near[li]&(1<<k) != 0 || near == nil && cd.dist[li] == ds-1 {
					set = append(set, cd.p)
					key = append(key, cd.p.Num)
				}
			}
			if len(set)+len(unread) < 2 {
				continue
			}
			grp = groups[string(key)]
			if grp == nil {
				grp = &ecmpGroup{sw: sw, ports: slices.Clone(set), dlids: map[*fabric.Port]int{}, load: load}
				for _, p := range set {
					grp.in[p.Num] = true
				}
				groups[string(key)] = grp
			}
			if near != nil {
				last, lastSet = grp, near[li]
			}
		}
		for _, p := range unread {
			if (ds > 1 || mayLeadTo(p, leaf)) && !slices.Contains(grp.maybe, p) {
				grp.maybe = append(grp.maybe, p)
			}
		}
		// eg.To(lid) is the port upNum names for a LID below
		// et.Limit; a LID without one counts for the port not read
		// its entry names, if any.
		for k, lid := range c.leafLIDs[li] {
			n := int16(-1)
			if int(lid) < et.Limit {
				n = upNum[et.LFT.At(lid)]
			}
			if n < 0 && int(lid) < et.LFT.Len() {
				if q := unreadNum[et.LFT.At(lid)]; q >= 0 {
					grp.count[q]++
					grp.unread++
					continue
				}
			}
			if n < 0 || !grp.in[n] {
				grp.other++
				continue
			}
			grp.count[n]++
			if k >= c.leafLive[li] {
				grp.lost++
			}
		}
	}
	for _, grp := range groups {
		for num, c := range grp.count {
			if c > 0 {
				grp.dlids[sw.Ports[num]] = int(c)
			}
		}
	}
	return groups
}

// ecmpScratch is one counting goroutine's buffers.
type ecmpScratch struct {
	near  []uint64
	cands []ecmpCand
}

// ecmpCount is what counting any switch's groups reads.
type ecmpCount struct {
	g      *routeGraph
	sg     *switchGraph
	leaves []*fabric.Node
	dist   leafDist
	byLeaf map[*fabric.Node][]*fabric.Port
	// shared are the hosts whose LID another port also owns, not counted
	shared map[*fabric.Port]bool
	// leafLIDs: per leaf, every LID of its hosts (lids), listed once
	// for all switches, then from leafLive[leaf] on the LIDs lost behind
	// it (lostBehind); lost lists those of every leaf.
	leafLIDs [][]uint16
	leafLive []int
	lost     []uint16
}

// judgeECMP judges switch sw's groups (nil: its table was not read)
// and appends its findings to out.
func (s *Snapshot) judgeECMP(sw *fabric.Node, groups map[string]*ecmpGroup, unknown []uint16, ratio float64, out *[]Finding) {
	const id = "routing.ecmp-imbalance"
	if groups == nil {
		// Some switches' tables were read (hasLFTs), not this one's.
		s.couldNotDecide(id, "its forwarding table was not read", s.nodeEntity(sw, "switch"))
		return
	}
	lft := sw.Switch.LFT
	var unk map[*fabric.Port]int
	for _, lid := range unknown {
		if int(lid) < lft.Len() {
			if p := portOf(sw, lft.At(lid)); p != nil && p.Num != 0 {
				if unk == nil {
					unk = map[*fabric.Port]int{}
				}
				unk[p]++
			}
		}
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		grp := groups[k]
		f, ok := s.judgeGroup(grp, ratio)
		all := *grp
		all.ports = append(slices.Clone(grp.ports), grp.maybe...)
		nUnk := 0
		for _, p := range all.ports {
			nUnk += unk[p]
		}
		if len(grp.maybe) == 0 && grp.unread == 0 && nUnk == 0 {
			if ok {
				*out = append(*out, f)
			}
			continue
		}
		// Judge what was read. The ports not read (state or far
		// end) may or may not be more of the group's equal-cost
		// ports, and the LIDs of no port read that the table sends
		// out of the group's ports may or may not be its
		// destinations. The verdict stands when it is the same
		// either way: on what was read alone, and with all of them
		// counted in. Otherwise it depends on what was not read.
		if nUnk > 0 {
			all.dlids = maps.Clone(grp.dlids)
			for p, c := range unk {
				all.dlids[p] += c
			}
			all.load = func() map[*fabric.Port]int {
				m := maps.Clone(grp.load())
				for p, c := range unk {
					m[p] += c
				}
				return m
			}
		}
		_, okAll := s.judgeGroup(&all, ratio)
		if ok != okAll {
			s.couldNotDecide(id, undecidedGroup(grp, nUnk), s.nodeEntity(sw, "switch"))
			continue
		}
		if ok {
			f.Evidence = append(f.Evidence, Evidence{Name: "not read", Value: float64(len(grp.maybe) + nUnk),
				Text: "uneven on what was read and with what was not read counted in: " + undecidedParts(grp, nUnk)})
			*out = append(*out, f)
		}
	}
}

// undecidedGroup says why a group's verdict depends on what was not read.
func undecidedGroup(grp *ecmpGroup, nUnk int) string {
	return fmt.Sprintf("its spread over ports %s is uneven or not depending on what was not read: %s", portNums(grp.ports), undecidedParts(grp, nUnk))
}

func undecidedParts(grp *ecmpGroup, nUnk int) string {
	var parts []string
	if len(grp.maybe) > 0 {
		more := "more equal-cost ports"
		if len(grp.maybe) == 1 {
			more = "one more equal-cost port"
		}
		parts = append(parts, fmt.Sprintf("%s %s (state or far end not read) may be %s", words.Noun(len(grp.maybe), "port"), portNums(grp.maybe), more))
	}
	if grp.unread > 0 {
		parts = append(parts, fmt.Sprintf("the table sends %d of the group's destinations out of ports not read", grp.unread))
	}
	if nUnk > 0 {
		parts = append(parts, fmt.Sprintf("it sends %s of no port read (destinations the sweep did not find) out of these ports", words.Count(nUnk, "LID")))
	}
	return strings.Join(parts, "; ")
}

// lostBehind is routing.lost-lid's judgement (lost: findLostLIDs) by
// switch: the LIDs lost at each switch's ports. A LID whose routes end at
// ports of two switches (tables that disagree) is behind neither.
func lostBehind(lost []*lostPort) map[*fabric.Node][]uint16 {
	if len(lost) == 0 {
		return nil
	}
	at := map[uint16]*fabric.Node{}
	split := map[uint16]bool{}
	for _, h := range lost {
		for _, lid := range h.lids {
			if sw, ok := at[lid]; ok && sw != h.port.Node {
				split[lid] = true
			}
			at[lid] = h.port.Node
		}
	}
	out := map[*fabric.Node][]uint16{}
	for _, h := range lost {
		for _, lid := range h.lids {
			if !split[lid] && at[lid] == h.port.Node {
				out[h.port.Node] = append(out[h.port.Node], lid)
			}
		}
	}
	for sw, ls := range out {
		slices.Sort(ls)
		out[sw] = slices.Compact(ls)
	}
	return out
}

// partlyRead reports whether some MAD of the sweep went unanswered: a
// port's state or far end, a node, or a switch's table not read.
func partlyRead(f *fabric.Fabric) bool {
	if len(f.Unreachable) > 0 {
		return true
	}
	for _, n := range f.Nodes {
		if n.Type == mad.NodeSwitch && (n.Switch == nil || n.Switch.LFT == nil) {
			return true
		}
		for _, p := range n.Ports {
			if p != nil && !p.Reached() {
				return true
			}
		}
	}
	return false
}

// unknownLIDs lists the unicast LIDs some switch's table routes that no
// port read holds.
func unknownLIDs(f *fabric.Fabric) []uint16 {
	top := 0
	for _, n := range f.Nodes {
		if n.Switch != nil {
			top = max(top, n.Switch.LFT.Len())
		}
	}
	top = min(top, 0xc000)
	known := make([]bool, top)
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil || p.LID == 0 {
				continue
			}
			for lid := range lids(p) {
				if int(lid) < top {
					known[lid] = true
				}
			}
		}
	}
	var out []uint16
	for lid := 1; lid < top; lid++ {
		if !known[lid] {
			out = append(out, uint16(lid))
		}
	}
	return out
}

// mayLeadTo reports whether p, a port whose state or far end was not
// read, may be cabled to leaf: not when every port of leaf was read and
// leads elsewhere.
func mayLeadTo(p *fabric.Port, leaf *fabric.Node) bool {
	for _, q := range leaf.Ports {
		if q != nil && q.Num != 0 && (q.Remote == p || !q.StateKnown() || q.PeerUnknown()) {
			return true
		}
	}
	return false
}

// portNums lists ports' numbers, "33,34,57".
func portNums(ps []*fabric.Port) string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprint(&b, p.Num)
	}
	return b.String()
}

// minorityGroup says why a group of a switch whose table changed since
// the sweep cannot be judged on the destinations a gate counts (those
// behind the job's leaves), "" when it can: they are under half of what
// its ports carry (a leaf's uplinks carry every other leaf's), so
// judgeGroup would not judge the group on them, while the ports' totals
// over every destination are uneven, so the sweep, counting the group's
// destinations behind every leaf, may. On even totals the sweep does
// not judge it either.
func (s *Snapshot) minorityGroup(grp *ecmpGroup, ratio float64) string {
	n := len(grp.ports)
	if n < 2 {
		return ""
	}
	total, loadSum, loadMax := 0, 0, 0
	var busiest *fabric.Port
	load := grp.load()
	for _, p := range grp.ports {
		total += grp.dlids[p]
		loadSum += load[p]
		if busiest == nil || load[p] > loadMax {
			busiest, loadMax = p, load[p]
		}
	}
	if 2*total >= loadSum || float64(loadMax)*float64(n) <= ratio*float64(loadSum) {
		return ""
	}
	return fmt.Sprintf("its forwarding table changed since the sweep, and its equal-cost ports %s carry %s of which %d lie behind the job's leaves (the rest behind leaves the gate does not count), with uneven totals now (port %d: %d, %.1fx the mean): the sweep judges such a group on every destination behind its leaves; run 'ibdoctor sweep'",
		portNums(grp.ports), words.Count(loadSum, "destination"), total, busiest.Num, loadMax, float64(loadMax)*float64(n)/float64(loadSum))
}

// judgeGroup judges the spread over grp's ports read. Fewer than two
// (a switch whose PortInfo went unanswered leaves a group with none) is
// no spread at all: judgeECMP then says whether counting in the ports not
// read would decide it.
func (s *Snapshot) judgeGroup(grp *ecmpGroup, ratio float64) (Finding, bool) {
	n := len(grp.ports)
	if n < 2 {
		return Finding{}, false
	}
	total := 0
	maxD, minD := 0, -1
	for _, p := range grp.ports {
		c := grp.dlids[p]
		total += c
		maxD = max(maxD, c)
		if minD < 0 || c < minD {
			minD = c
		}
	}
	if total < n {
		return Finding{}, false
	}
	mean := float64(total) / float64(n)
	dlidRatio := float64(maxD) / mean
	// Destinations come in whole numbers: 3 over 2 ports is as even as
	// it gets. Only a busiest port above the best possible split counts,
	// whatever the path loads say, so a balanced group does not make
	// them be computed (every host pair's route, the biggest cost of a
	// healthy fabric's checks at scale).
	best := (total + n - 1) / n
	if maxD <= best {
		return Finding{}, false
	}
	// One destination above the best split, with every port used, is
	// the engine's placement at this size (trial D1: OpenSM ftree puts
	// a leaf's 6 hosts 4:2 on a spine's two cables to it), not a
	// fault worth a finding: judged from two above, or a port idle.
	if maxD == best+1 && minD > 0 {
		return Finding{}, false
	}
	// Path loads, when the route analysis is there, say how host-to-host
	// traffic (not just destinations) spreads.
	var paths []int
	pathRatio := 0.0
	if s.Loads != nil {
		sum, mx := 0, 0
		for _, p := range grp.ports {
			c, _ := s.Loads.PortPaths(p)
			paths = append(paths, c)
			sum += c
			mx = max(mx, c)
		}
		if sum > 0 {
			pathRatio = float64(mx) / (float64(sum) / float64(n))
		}
	}
	worst := max(dlidRatio, pathRatio)
	if worst <= ratio {
		return Finding{}, false
	}
	// A min-hop engine balances each port's total count of destinations,
	// not each group's split. Where the group's ports mostly carry other
	// destinations (a dragonfly's local and global ports, each the only
	// shortest path to some switches), a small group leaning on the port
	// that was less used when it was routed is balance, not a fault: the
	// group is judged only when it is most of what its ports carry (a fat
	// tree's uplinks) and the ports' totals are uneven too.
	loadSum, loadMax := 0, 0
	load := grp.load()
	for _, p := range grp.ports {
		loadSum += load[p]
		loadMax = max(loadMax, load[p])
	}
	if 2*total < loadSum || float64(loadMax)*float64(n) <= ratio*float64(loadSum) {
		return Finding{}, false
	}
	idle := 0
	var counts []string
	for i, p := range grp.ports {
		c := grp.dlids[p]
		if c == 0 {
			idle++
		}
		part := fmt.Sprintf("%d:%d", p.Num, c)
		if paths != nil {
			part += fmt.Sprintf("/%d", paths[i])
		}
		counts = append(counts, part)
	}
	sev := Warning
	switch {
	case worst >= 2 && idle > 0:
		sev = Critical
	case worst >= 1.5:
		sev = Error
	}
	var busiest *fabric.Port
	for _, p := range grp.ports {
		if busiest == nil || grp.dlids[p] > grp.dlids[busiest] {
			busiest = p
		}
	}
	sh := s.pathShare(busiest)
	share := sh.v
	title := fmt.Sprintf("%s spreads %d destinations over %d equal-cost ports unevenly: busiest port %d carries %.1fx the mean", s.nodeName(grp.sw), total, n, busiest.Num, worst)
	if idle > 0 {
		title += fmt.Sprintf(", %s idle", words.Count(idle, "port"))
	}
	legend := "port:destinations"
	if paths != nil {
		legend = "port:destinations/host-paths"
	}
	ev := []Evidence{
		{Name: "max/mean", Value: worst, Threshold: ratio, Text: fmt.Sprintf("%s %s (max/mean %.2f, threshold %.2f; best split %d per port, one destination above it not judged)", legend, strings.Join(counts, " "), worst, ratio, best)},
	}
	if grp.lost > 0 {
		it := "them"
		if grp.lost == 1 {
			it = "it"
		}
		ev = append(ev, Evidence{Name: "lost LIDs", Value: float64(grp.lost), Text: fmt.Sprintf("counted with %s that routing.lost-lid finds lost: the tables still forward %s where the subnet manager balanced %s", words.Count(grp.lost, "LID"), it, it)})
	}
	if grp.other > 0 {
		ev = append(ev, Evidence{Name: "off-group", Value: float64(grp.other), Text: fmt.Sprintf("%s %s routed outside the equal-cost set (not a shortest path)", words.Count(grp.other, "destination"), words.Verb(grp.other, "are"))})
	}
	ents := []Entity{s.nodeEntity(grp.sw, "switch")}
	ents = append(ents, s.entityOf(busiest, "busiest"))
	if busiest.Remote != nil {
		ents = append(ents, s.entityOf(busiest.Remote, "peer"))
	}
	return Finding{
		Check:    "routing.ecmp-imbalance",
		Severity: sev,
		Title:    title,
		Entities: ents,
		Evidence: ev,
		Impact: Impact{PathShare: share, PathShareLowerBound: sh.atLeast, Slowdown: worst, Score: share * (1 - 1/worst),
			Summary: fmt.Sprintf("the most loaded link decides: collectives whose traffic leaves %s run up to %.1fx slower than with balanced routes", s.nodeName(grp.sw), worst)},
		Action: "The subnet manager's routing is unbalanced here. Either the routing engine's own placement (which engine ran: routing_engine in opensm.conf, 'Routing engine' lines in opensm.log; DOR or a topology the engine does not recognise spreads unevenly) or static or edited routes (opensm -R file, a routing_engine change); re-run a heavy sweep after fixing it. 'ibdoctor routes' shows the table.",
		Basis:  "routes",
	}, true
}

// asymmetric compares A->B with B->A for every pair of host ports (a
// gate: of the job's) and reports the pairs one direction of which
// crosses more switches: a detour (an edited or stale forwarding
// entry). Equal-length paths through different switches are not
// reported: destination-based routing picks a spine per destination LID,
// so two hosts of a leaf pair go through different spines one way and
// the other as a rule (trial N1). A pair's directions are the routes
// from each one's leaf to the other, which routing.unreachable's walk
// to every host from every leaf has followed (asymRoutes): every pair
// is judged for the price of counting. It judged one host per leaf
// before, so a detour on another host's LID was seen by a gate covering
// that host and not by check.
func (s *Snapshot) asymmetric() []Finding {
	if !hasLFTs(s.Fabric) {
		return nil
	}
	ar := s.routeFails().asym
	nl := len(ar.leaves)
	delivered := func(c uint8) bool { return c != codeNotFollowed && c != codeFailed }
	c2 := func(n int64) int64 { return n * (n - 1) / 2 }
	// pairs followed both ways, those one way longer, those a direction
	// of which was not followed (a port or table on it not read)
	var pairs, longer, unread int64
	var example, unreadEx [2]*fabric.Port
	var exHops [2]int
	for l := range nl {
		hl := ar.hostsOf[l]
		if len(hl) == 0 {
			continue
		}
		for m := l; m < nl; m++ {
			hm := ar.hostsOf[m]
			if len(hm) == 0 {
				continue
			}
			_, x1 := ar.exc[[2]int32{int32(l), int32(m)}]
			_, x2 := ar.exc[[2]int32{int32(m), int32(l)}]
			r1, r2 := ar.ref[m*nl+l], ar.ref[l*nl+m] // l to m's hosts, m to l's
			if !x1 && !x2 && l != m {
				// Every route alike each way: the pairs are judged alike.
				all := int64(len(hl)) * int64(len(hm))
				switch {
				case r1 == codeNotFollowed || r2 == codeNotFollowed:
					unread += all
					if unreadEx[0] == nil {
						unreadEx = [2]*fabric.Port{ar.dsts[hl[0]], ar.dsts[hm[0]]}
					}
				case delivered(r1) && delivered(r2):
					pairs += all
					if r1 != r2 {
						longer += all
						if example[0] == nil {
							example, exHops = [2]*fabric.Port{ar.dsts[hl[0]], ar.dsts[hm[0]]}, [2]int{int(r1), int(r2)}
						}
					}
				}
				continue
			}
			if !x1 && l == m {
				// A leaf's own hosts reached alike: no pair differs.
				if all := c2(int64(len(hl))); r1 == codeNotFollowed {
					unread += all
					if unreadEx[0] == nil && len(hl) > 1 {
						unreadEx = [2]*fabric.Port{ar.dsts[hl[0]], ar.dsts[hl[1]]}
					}
				} else if delivered(r1) {
					pairs += all
				}
				continue
			}
			// Some routes differ: count by code. fwd[i] is the route
			// from l to m's i-th host, back[j] from m to l's j-th.
			fwd := ar.codes(l, m)
			back := fwd
			if l != m {
				back = ar.codes(m, l)
			}
			var hf, hb [256]int64
			for _, c := range fwd {
				hf[c]++
			}
			for _, c := range back {
				hb[c]++
			}
			nf, nb := int64(len(fwd)), int64(len(back))
			df, db := nf-hf[codeNotFollowed]-hf[codeFailed], nb-hb[codeNotFollowed]-hb[codeFailed]
			var p, same, u int64
			if l == m {
				p, u = c2(df), c2(nf)-c2(nf-hf[codeNotFollowed])
				for c := 1; c < int(codeFailed); c++ {
					same += c2(hf[c])
				}
			} else {
				p, u = df*db, nf*nb-(nf-hf[codeNotFollowed])*(nb-hb[codeNotFollowed])
				for c := 1; c < int(codeFailed); c++ {
					same += hf[c] * hb[c]
				}
			}
			pairs, longer, unread = pairs+p, longer+p-same, unread+u
			// The first pair of each kind, named: a is on l, b on m.
			for j := 0; j < len(back) && (example[0] == nil || unreadEx[0] == nil); j++ {
				for i := range fwd {
					if l == m && i <= j {
						continue
					}
					a, b := ar.dsts[hl[j]], ar.dsts[hm[i]]
					f, bk := fwd[i], back[j]
					if l == m {
						bk = fwd[j]
					}
					if unreadEx[0] == nil && (f == codeNotFollowed || bk == codeNotFollowed) {
						unreadEx = [2]*fabric.Port{a, b}
					}
					if example[0] == nil && delivered(f) && delivered(bk) && f != bk {
						example, exHops = [2]*fabric.Port{a, b}, [2]int{int(f), int(bk)}
					}
				}
			}
		}
	}
	if unread > 0 && longer == 0 && unreadEx[0] != nil {
		// A detour among the pairs not followed cannot be ruled out.
		s.couldNotDecide("routing.asymmetric", fmt.Sprintf("%d of %d HCA port pairs could not be followed both ways (a port or forwarding table on the route was not read), e.g. %s -> %s", unread, unread+pairs, s.nodeName(unreadEx[0].Node), s.nodeName(unreadEx[1].Node)), s.entityOf(unreadEx[0], "source"))
	}
	if longer == 0 || pairs == 0 || example[0] == nil {
		return nil
	}
	share := float64(longer) / float64(pairs)
	a, b := example[0], example[1]
	return []Finding{{
		Check:    "routing.asymmetric",
		Severity: Warning,
		Title:    fmt.Sprintf("%d of %d HCA port pairs take more hops one way than the other (A->B vs B->A)", longer, pairs),
		Entities: []Entity{s.entityOf(a, "source"), s.entityOf(b, "destination")},
		Evidence: append([]Evidence{
			{Name: "detoured pairs", Value: float64(longer), Text: fmt.Sprintf("%d of %d HCA port pairs (every pair followed both ways) cross more switches one way; e.g. %s -> %s crosses %d switches, back %d", longer, pairs, s.nodeName(a.Node), s.nodeName(b.Node), exHops[0], exHops[1])},
		}, unreadPairs(unread)...),
		// The share is of host port pairs, not of host paths crossing
		// a link: no path share is claimed.
		Impact: Impact{Score: share * 0.001,
			Summary: fmt.Sprintf("%s of the HCA port pairs take a longer way one direction: extra latency and load on the switches of the detour; different spines at equal length are normal for destination-based routing and not counted", pct(share))},
		Action: "Compare 'ibdoctor trace A B' with 'ibdoctor trace B A' for the pair named: the longer direction has an edited or stale forwarding entry (opensm -R file, a static route, an SM that has not re-swept); have the subnet manager re-sweep and route again.",
		Basis:  "routes",
	}}
}

// unreadPairs is the evidence that some pairs were not followed.
func unreadPairs(n int64) []Evidence {
	if n == 0 {
		return nil
	}
	return []Evidence{{Name: "pairs not followed", Value: float64(n), Text: fmt.Sprintf("%d HCA port pairs could not be followed both ways (a port or forwarding table on the route was not read); the share is of the pairs followed", n)}}
}

// switchesOn lists the switches a route from start crosses.
func switchesOn(start *fabric.Node, ports []*fabric.Port) []*fabric.Node {
	ns := []*fabric.Node{start}
	for _, p := range ports {
		if p.Remote != nil && p.Remote.Node.Type == mad.NodeSwitch {
			ns = append(ns, p.Remote.Node)
		}
	}
	return ns
}
