package checks

import (
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

func init() {
	register(Check{
		ID:      "routing.credit-loop",
		Summary: "the unicast routes make a cycle in the channel dependency graph (confirmed by the SL2VL tables, or on VL0 when they were not read): a deadlock risk under load",
		Needs:   []string{"lfts", "routes-read"},
		run:     (*Snapshot).creditLoops,
	})
}

// A channel is one switch port cabled to another switch: the buffer a
// packet holds while it waits for the next hop's. A packet to destination
// d that arrives over channel S→T and leaves T over T→U makes S→T depend
// on T→U; a cycle of such dependencies can deadlock once every buffer on
// it is full (credit-based flow control never drops). Host channels cannot
// be on a cycle: a host's receive buffer is always drained, and a host
// only starts routes.
//
// The graph is built on VL0. The SL2VL tables of the ports on a cycle,
// when a sweep read them, then confirm it (one VL per channel) or leave
// it undecided (SLs spread over VLs: the SL the SA hands each path, not
// read, decides whether a VL-aware engine such as DFSSSP or LASH broke
// it).
type chanGraph struct {
	sw     []*fabric.Node // switches, by index
	base   []int32        // first channel id of switch i (its port 0)
	to     []int32        // per channel: the switch its cable reaches, -1: none
	toPort []uint8        // per channel: the port at that switch
	edge   []uint64       // bit c*256+q: channel c depends on (to[c], port q)
}

func buildChanGraph(f *fabric.Fabric) *chanGraph {
	g := &chanGraph{}
	idx := make(map[*fabric.Node]int32)
	for _, n := range f.Nodes {
		if n.Type == mad.NodeSwitch && n.Switch != nil && n.Switch.LFT != nil {
			idx[n] = int32(len(g.sw))
			g.sw = append(g.sw, n)
		}
	}
	total := int32(0)
	g.base = make([]int32, len(g.sw)+1)
	for i, n := range g.sw {
		g.base[i] = total
		total += int32(len(n.Ports))
	}
	g.base[len(g.sw)] = total
	g.to = make([]int32, total)
	g.toPort = make([]uint8, total)
	for i, n := range g.sw {
		for p, port := range n.Ports {
			c := g.base[i] + int32(p)
			g.to[c] = -1
			if p == 0 || port == nil || port.Remote == nil || !linkUp(port) {
				continue
			}
			if t, ok := idx[port.Remote.Node]; ok {
				g.to[c], g.toPort[c] = t, port.Remote.Num
			}
		}
	}
	// The destinations are every LID of every host (CA) port, LMC range
	// included: the data traffic.
	var dests []uint16 // sorted below
	for _, n := range f.Nodes {
		if n.Type == mad.NodeSwitch {
			continue
		}
		for _, p := range n.Ports {
			if p == nil || p.LID == 0 {
				continue
			}
			for l := uint32(p.LID); l < uint32(p.LID)+1<<p.LMC && l < 0xc000; l++ {
				dests = append(dests, uint16(l))
			}
		}
	}
	slices.Sort(dests)
	g.edge = make([]uint64, (int(total)*256+63)/64)
	// Per switch, a 256-entry table from egress port to the switch it
	// reaches (-1: none), so the inner loop below, which runs once per
	// LFT entry (tens of millions at 50k nodes), does no bounds checks
	// against the port list and no map lookups.
	next := make([][256]int32, len(g.sw))
	lfts := make([]fabric.LFTView, len(g.sw))
	for i, n := range g.sw {
		lfts[i] = n.Switch.LFT.View()
		for p := range next[i] {
			next[i][p] = -1
			if c := g.base[i] + int32(p); p > 0 && p < len(n.Ports) {
				next[i][p] = g.to[c]
			}
		}
	}
	// Switches on every core: switch i sets only the bits of its own
	// egress channels, whole words of edge (256 bits per channel).
	var at atomic.Int32
	var wg sync.WaitGroup
	var c carry
	for range max(1, min(runtime.GOMAXPROCS(0), len(g.sw))) {
		wg.Go(func() {
			defer c.catch()
			for i := int(at.Add(1) - 1); i < len(g.sw); i = int(at.Add(1) - 1) {
				g.addEdges(i, dests, lfts, next)
			}
		})
	}
	wg.Wait()
	c.rethrow()
	return g
}

// addEdges sets the dependencies of switch i's egress channels: a
// packet to any of dests leaving i by port p and its next switch by q
// makes channel p depend on channel q.
func (g *chanGraph) addEdges(i int, dests []uint16, lfts []fabric.LFTView, next [][256]int32) {
	lft, nx, base := &lfts[i], &next[i], int(g.base[i])
	for _, d := range dests {
		if int(d) >= lft.Len() {
			break // dests ascend
		}
		p := lft.At(d)
		t := nx[p]
		if t < 0 {
			continue
		}
		tl := &lfts[t]
		if int(d) >= tl.Len() {
			continue
		}
		q := tl.At(d)
		if u := next[t][q]; u < 0 || u == int32(i) {
			// A route sent straight back (S→T→S) is a forwarding
			// loop, routing.loop's finding; it is not counted twice.
			continue
		}
		b := (base+int(p))*256 + int(q)
		g.edge[b>>6] |= 1 << (b & 63)
	}
}

// succ calls fn with every channel c depends on.
func (g *chanGraph) succ(c int32, fn func(int32)) {
	t := g.to[c]
	if t < 0 {
		return
	}
	w := int(c) * 4
	for k := 0; k < 4; k++ {
		x := g.edge[w+k]
		for x != 0 {
			q := k*64 + bits.TrailingZeros64(x)
			x &= x - 1
			fn(g.base[t] + int32(q))
		}
	}
}

// cycles returns the strongly connected components of the dependency
// graph that hold a cycle (Tarjan's algorithm, iterative: linear in
// channels and dependencies).
func (g *chanGraph) cycles() [][]int32 {
	n := int32(len(g.to))
	index := make([]int32, n)
	low := make([]int32, n)
	onStack := make([]bool, n)
	for i := range index {
		index[i] = -1
	}
	var stack []int32
	var out [][]int32
	next := int32(0)
	type frame struct {
		v    int32
		succ []int32
		i    int
	}
	succList := func(v int32) []int32 {
		var s []int32
		g.succ(v, func(w int32) { s = append(s, w) })
		return s
	}
	for root := int32(0); root < n; root++ {
		if index[root] >= 0 || g.to[root] < 0 {
			continue
		}
		call := []frame{{v: root, succ: succList(root)}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(call) > 0 {
			fr := &call[len(call)-1]
			if fr.i < len(fr.succ) {
				w := fr.succ[fr.i]
				fr.i++
				if index[w] < 0 {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					call = append(call, frame{v: w, succ: succList(w)})
				} else if onStack[w] {
					low[fr.v] = min(low[fr.v], index[w])
				}
				continue
			}
			v := fr.v
			call = call[:len(call)-1]
			if len(call) > 0 {
				u := call[len(call)-1].v
				low[u] = min(low[u], low[v])
			}
			if low[v] != index[v] {
				continue
			}
			var comp []int32
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp = append(comp, w)
				if w == v {
					break
				}
			}
			if len(comp) > 1 {
				out = append(out, comp)
			}
		}
	}
	return out
}

// oneCycle returns a shortest cycle through the first channel of comp,
// inside comp (breadth-first).
func (g *chanGraph) oneCycle(comp []int32) []int32 {
	in := make(map[int32]bool, len(comp))
	for _, c := range comp {
		in[c] = true
	}
	start := comp[0]
	prev := map[int32]int32{}
	queue := []int32{start}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		found := false
		g.succ(v, func(w int32) {
			if found || !in[w] {
				return
			}
			if w == start {
				prev[start] = v
				found = true
				return
			}
			if _, seen := prev[w]; !seen {
				prev[w] = v
				queue = append(queue, w)
			}
		})
		if found {
			break
		}
	}
	var cyc []int32
	for v := prev[start]; ; v = prev[v] {
		cyc = append(cyc, v)
		if v == start {
			break
		}
	}
	for i, j := 0, len(cyc)-1; i < j; i, j = i+1, j-1 {
		cyc[i], cyc[j] = cyc[j], cyc[i]
	}
	return cyc
}

func (g *chanGraph) port(c int32) *fabric.Port {
	i := 0
	for i+1 < len(g.base) && g.base[i+1] <= c {
		i++
	}
	return g.sw[i].Ports[c-g.base[i]]
}

// CreditCycles is what the dependency graph of a fabric's routes holds
// before any SL2VL is read: the strongly connected sets of channels
// (at most the first ten are named) and a shortest cycle of each. A
// sweep finds them once, reads the SLtoVLMappingTables of their ports
// (SL2VLPairs), and hands them to the check in the Snapshot.
type CreditCycles struct {
	f      *fabric.Fabric
	g      *chanGraph
	comps  [][]int32
	cycles [][]int32 // cycles[k]: a shortest cycle of comps[k], k < 10
}

// maxNamedCycles bounds the cycles named (and their SL2VL read): the
// first ten name enough; the count says the rest.
const maxNamedCycles = 10

// FindCreditCycles builds the channel dependency graph of f's unicast
// routes and finds its cycles.
func FindCreditCycles(f *fabric.Fabric) *CreditCycles {
	g := buildChanGraph(f)
	cc := &CreditCycles{f: f, g: g, comps: g.cycles()}
	for k, comp := range cc.comps {
		if k == maxNamedCycles {
			break
		}
		cc.cycles = append(cc.cycles, g.oneCycle(comp))
	}
	// The search is done: the check and SL2VLPairs read the cycles and
	// the channels, not the dependencies, and a sweep keeps cc until the
	// checks run.
	g.edge = nil
	return cc
}

// SL2VLPair is one SLtoVLMappingTable of a switch: packets that come in
// by port In and leave by port Out.
type SL2VLPair struct {
	Switch  *fabric.Node
	In, Out uint8
}

// SL2VLView is the SLtoVLMappingTables read for the credit-loop check:
// those of the port pairs of each cycle it names. A pair is in Tables
// when read, in Unread with the reason when not.
type SL2VLView struct {
	Tables map[SL2VLPair]mad.SLtoVLTable
	Unread map[SL2VLPair]string
}

// SL2VLPairs returns the tables that decide which VLs the packets on
// the named cycles' channels use, each once. The VL a packet takes on a
// channel is chosen by the switch it leaves, from its SL and the port
// it came in by; a packet may join the cycle from any port of that
// switch (on a ring routed min-hop, from the host port: two-hop routes
// make every dependency), so every port with a link up is an In, the
// channel's port the Out.
func (cc *CreditCycles) SL2VLPairs() []SL2VLPair {
	var out []SL2VLPair
	seen := map[SL2VLPair]bool{}
	for _, cyc := range cc.cycles {
		for _, c := range cyc {
			for _, pr := range cc.g.channelPairs(c) {
				if !seen[pr] {
					seen[pr] = true
					out = append(out, pr)
				}
			}
		}
	}
	return out
}

// channelPairs lists the SL2VL tables that map packets onto channel c.
func (g *chanGraph) channelPairs(c int32) []SL2VLPair {
	p := g.port(c)
	var out []SL2VLPair
	for _, in := range p.Node.Ports {
		if in == nil || in.Num == 0 || in == p || in.Remote == nil || !linkUp(in) {
			continue
		}
		out = append(out, SL2VLPair{Switch: p.Node, In: in.Num, Out: p.Num})
	}
	return out
}

func (s *Snapshot) creditLoops() []Finding {
	cc := s.CreditCycles
	if cc == nil || cc.f != s.Fabric {
		cc = FindCreditCycles(s.Fabric)
	}
	g, comps := cc.g, cc.comps
	if len(comps) == 0 {
		// No cycle in what was read; one through a switch whose table,
		// or a cable between switches whose far end, was not read
		// cannot be ruled out.
		// A gate's fabric holds only what the job's routes need: what
		// it did not read there is not a read that went unanswered.
		if sw, n := unreadRouting(s.Fabric); n > 0 && s.Scope == nil {
			what := "this switch has a forwarding table or an inter-switch port (state or far end) that was not read"
			if n > 1 {
				what = fmt.Sprintf("%d switches have a forwarding table or an inter-switch port (state or far end) that was not read, this one first", n)
			}
			s.couldNotDecide("routing.credit-loop", "no cycle in the tables read, but "+what+": a cycle through them cannot be ruled out", s.nodeEntity(sw, "switch"))
		}
		return nil
	}
	var out []Finding
	totalChans := 0
	for _, c := range comps {
		totalChans += len(c)
	}
	for k, comp := range comps {
		if k == len(cc.cycles) {
			break
		}
		cyc := cc.cycles[k]
		var hops []string
		var ents []Entity
		switches := map[*fabric.Node]bool{}
		share := 0.0
		atLeast := false
		for _, c := range cyc {
			p := g.port(c)
			if sh := s.pathShare(p); sh.measured && sh.v >= share {
				share, atLeast = sh.v, sh.atLeast
			}
			hops = append(hops, s.entityOf(p, "").String())
			ents = append(ents, s.entityOf(p, "end"))
			switches[p.Node] = true
		}
		hops = append(hops, hops[0])
		vl := s.cycleSL2VL(cyc, g)
		ev := []Evidence{
			{Name: "cycle", Value: float64(len(cyc)), Unit: "channels",
				Text: fmt.Sprintf("dependency cycle over %d switches: %s (each arrow: a packet holding the first port's buffer waits for the next)", len(switches), strings.Join(hops, " -> "))},
			{Name: "channels in cycles", Value: float64(len(comp)), Unit: "channels",
				Text: fmt.Sprintf("%d inter-switch channels in this strongly connected set; %d in %d such sets fabric-wide", len(comp), totalChans, len(comps))},
			vl.ev,
		}
		if vl.verdict == sl2vlNotRead {
			ev = append(ev, s.cycleVLs(cyc, g))
		}
		path := strings.Join(hops[:min(4, len(hops)-1)], " -> ") + ellipsis(len(hops)-1 > 4)
		f := Finding{
			Check:    "routing.credit-loop",
			Severity: Critical,
			Title:    fmt.Sprintf("Credit loop (deadlock risk): the routes make a dependency cycle through %d switches, %s", len(switches), path),
			Entities: ents,
			Evidence: ev,
			Impact:   Impact{PathShare: share, PathShareLowerBound: atLeast, Score: max(0.5, share), Summary: "under load the buffers on the cycle can fill and wait on each other for ever: traffic through them stops until links are reset (a fabric-wide hang of the jobs crossing it)"},
			Action:   "Route with a deadlock-free engine for this topology: up/down (opensm -R updn, with the root switches given in root_guid_file) or ftree on fat trees, DFSSSP/LASH (which separate paths onto VLs, with QoS on so OpenSM programs the SL2VL tables) on rings, tori and dragonflies. Then re-run 'ibdoctor check'.",
			Basis:    "routes",
		}
		if vl.verdict == sl2vlSpread {
			f.Severity = Warning
			f.Title = fmt.Sprintf("Credit loop undecided (SLs spread over VLs): the routes make a dependency cycle through %d switches, %s", len(switches), path)
			f.Impact.Score /= 2
			f.Impact.Summary = "if the paths crossing the cycle share a VL, under load its buffers can fill and wait on each other for ever (a hang of the jobs crossing it); a VL-aware engine puts them on different VLs, which the tables alone cannot show"
			f.Action = "Check which SLs the SM gives the paths crossing this cycle ('saquery -p' PathRecord SL, or ibdiagnet -r, which checks credit loops per VL from the SM's path SLs): a VL-aware engine (DFSSSP, LASH) breaks the cycle when the paths that close it are on SLs mapped to different VLs. If every path gets SL0 (QoS off, min-hop), it is a credit loop: route with up/down or ftree, or DFSSSP/LASH with QoS on. Then re-run 'ibdoctor check'."
		}
		out = append(out, f)
	}
	return out
}

type sl2vlVerdict int

const (
	sl2vlNotRead sl2vlVerdict = iota // not read (or not all): judged on VL0
	sl2vlOneVL                       // every SL on one VL per channel: confirmed
	sl2vlSpread                      // SLs on several VLs: undecided
)

type cycleVL struct {
	verdict sl2vlVerdict
	ev      Evidence
}

// cycleSL2VL judges the cycle from the SL2VL tables read for it. When
// every SL maps to one VL on each channel (whatever port the packet came
// in by), every packet on a channel is on that channel's VL, so the
// cycle is a cycle on those VLs too: confirmed. When some channel
// spreads the SLs over several VLs, whether the cycle closes depends on
// the SL of each path, which the SA assigns and the sweep does not read.
// Tables not read (a saved file, an unanswered MAD): judged on VL0, as
// before any were read.
func (s *Snapshot) cycleSL2VL(cyc []int32, g *chanGraph) cycleVL {
	v := s.SL2VL
	if v == nil {
		why := cmpOr(s.SL2VLNotRead, "a saved fabric, or no live sweep of the tables")
		return cycleVL{sl2vlNotRead, Evidence{Name: "SL2VL", Text: fmt.Sprintf("SL2VL not read (%s): every flow taken to be on VL0", why)}}
	}
	pairs, unread, why := 0, 0, ""
	var all uint16 // every data VL seen on the cycle
	spread, dropped := []string{}, []string{}
	for _, c := range cyc {
		var set uint16
		for _, pr := range g.channelPairs(c) {
			pairs++
			t, ok := v.Tables[pr]
			if !ok {
				unread++
				if why == "" {
					why = fmt.Sprintf("%s in %d out %d: %s", s.nodeName(pr.Switch), pr.In, pr.Out, cmpOr(v.Unread[pr], "not read"))
				}
				continue
			}
			set |= t.VLs()
		}
		// An SL mapped to a VL the port does not run is dropped there
		// (ibsim maps SL8-14 to VL8-14 on ports running VL0-7).
		p := g.port(c)
		if n := operVLCount(p.OperVLs); n > 0 && s.NotRecorded["vls"] == "" {
			set &= 1<<n - 1
		}
		all |= set
		switch {
		case bits.OnesCount16(set) > 1:
			spread = append(spread, s.entityOf(p, "").String())
		case set == 0 && unread == 0:
			dropped = append(dropped, s.entityOf(p, "").String())
		}
	}
	if unread > 0 {
		return cycleVL{sl2vlNotRead, Evidence{Name: "SL2VL", Value: float64(unread), Unit: "tables",
			Text: fmt.Sprintf("SL2VL not read for %d of the cycle's %d port pairs (%s): every flow taken to be on VL0", unread, pairs, why)}}
	}
	if len(spread) > 0 || len(dropped) > 0 {
		lo, hi := bits.TrailingZeros16(all), 15-bits.LeadingZeros16(all)
		text := fmt.Sprintf("SLs spread over VLs %d..%d on this cycle (a VL-aware engine such as DFSSSP/LASH); per-path SLs not read, so the cycle may be broken by VLs (SL2VL read on its %d port pairs; several VLs leaving %s)", lo, hi, pairs, strings.Join(spread, ", "))
		if len(spread) == 0 {
			text = fmt.Sprintf("SL2VL maps every SL to VL15 (dropped) leaving %s: no data crosses there, so the cycle cannot fill; per-path SLs not read (SL2VL read on its %d port pairs)", strings.Join(dropped, ", "), pairs)
		}
		return cycleVL{sl2vlSpread, Evidence{Name: "SL2VL", Value: float64(bits.OnesCount16(all)), Unit: "VLs", Text: text}}
	}
	text := fmt.Sprintf("SL2VL read on the cycle's %d port pairs and trivial: every SL maps to VL%d, so every path crossing the cycle shares its buffers", pairs, bits.TrailingZeros16(all))
	if bits.OnesCount16(all) > 1 {
		text = fmt.Sprintf("SL2VL read on the cycle's %d port pairs: every SL maps to one VL on each channel (VLs %s), so every path crossing a channel shares its buffers and the cycle holds on those VLs", pairs, vlList(all))
	}
	return cycleVL{sl2vlOneVL, Evidence{Name: "SL2VL", Value: float64(bits.OnesCount16(all)), Unit: "VLs", Text: text}}
}

// operVLCount is how many data VLs PortInfo OperationalVLs code v runs
// (1: VL0, 2: VL0-1, 3: VL0-3, 4: VL0-7, 5: VL0-14); 0 when unknown.
func operVLCount(v uint8) int {
	switch v {
	case 1, 2, 3, 4:
		return 1 << (v - 1)
	case 5:
		return 15
	}
	return 0
}

func vlList(set uint16) string {
	var out []string
	for vl := 0; vl < 16; vl++ {
		if set&(1<<vl) != 0 {
			out = append(out, fmt.Sprint(vl))
		}
	}
	return strings.Join(out, ", ")
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func ellipsis(more bool) string {
	if more {
		return " -> …"
	}
	return ""
}

// cycleVLs says what the data VLs of the cycle's ports (PortInfo
// OperationalVLs, both ends of each channel) allow: with one data VL
// everywhere every SL runs on VL0, so no routing engine's VL assignment
// can break the cycle; with more, one that spreads paths over SLs and
// VLs (DFSSSP, LASH) might, which this check cannot see.
func (s *Snapshot) cycleVLs(cyc []int32, g *chanGraph) Evidence {
	if why := s.NotRecorded["vls"]; why != "" {
		// The simulator's stand-in VLs are not the fabric's (trial C1).
		return Evidence{Name: "VL", Text: "every flow taken to be on VL0: " + why}
	}
	most, unread := uint8(0), false
	for _, c := range cyc {
		p := g.port(c)
		for _, q := range []*fabric.Port{p, p.Remote} {
			if q == nil || q.OperVLs == 0 {
				unread = true
				continue
			}
			most = max(most, q.OperVLs)
		}
	}
	switch {
	case unread || most == 0:
		return Evidence{Name: "VL", Text: "every flow taken to be on VL0: SL2VL tables and per-path SLs not read"}
	case most == 1:
		return Evidence{Name: "VL", Value: 1, Text: "every port on the cycle runs one data VL (OperationalVLs VL0): every SL maps to VL0, no VL assignment can break the cycle"}
	}
	return Evidence{Name: "VL", Value: float64(most), Text: fmt.Sprintf("ports on the cycle run up to %s (OperationalVLs): an engine that puts paths on several SLs and VLs (DFSSSP, LASH) could break the cycle; without the SL2VL tables and the per-path SLs it is judged on VL0", vlText(most))}
}

// unreadRouting counts the switches whose forwarding table was not read
// or which have a port (state or far end) not read that may lead to
// another switch, and returns the first.
func unreadRouting(f *fabric.Fabric) (*fabric.Node, int) {
	var first *fabric.Node
	n := 0
	for _, sw := range f.Nodes {
		if sw.Type != mad.NodeSwitch {
			continue
		}
		if sw.Switch == nil || sw.Switch.LFT == nil || len(unreadPorts(sw)) > 0 {
			if first == nil {
				first = sw
			}
			n++
		}
	}
	return first, n
}
