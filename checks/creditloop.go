package checks

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

func init() {
	register(Check{
		ID:      "routing.credit-loop",
		Summary: "the unicast routes make a cycle in the channel dependency graph (on VL0): a deadlock risk under load",
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
// Every flow is taken to be on VL0: SL2VL tables and the SL the SA hands
// each path are not read. OpenSM's default (no QoS, min-hop, up/down,
// fat-tree) puts all data on SL0/VL0; engines that break cycles with VLs
// (DFSSSP, LASH, Torus-2QoS) are what this check then wrongly flags.
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
	lfts := make([][]uint8, len(g.sw))
	for i, n := range g.sw {
		lfts[i] = n.Switch.LFT
		for p := range next[i] {
			next[i][p] = -1
			if c := g.base[i] + int32(p); p > 0 && p < len(n.Ports) {
				next[i][p] = g.to[c]
			}
		}
	}
	for i := range g.sw {
		lft, nx, base := lfts[i], &next[i], int(g.base[i])
		for _, d := range dests {
			if int(d) >= len(lft) {
				break // dests ascend
			}
			p := lft[d]
			t := nx[p]
			if t < 0 {
				continue
			}
			tl := lfts[t]
			if int(d) >= len(tl) {
				continue
			}
			q := tl[d]
			if u := next[t][q]; u < 0 || u == int32(i) {
				// A route sent straight back (S→T→S) is a forwarding
				// loop, routing.loop's finding; it is not counted twice.
				continue
			}
			b := (base+int(p))*256 + int(q)
			g.edge[b>>6] |= 1 << (b & 63)
		}
	}
	return g
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

func (s *Snapshot) creditLoops() []Finding {
	g := buildChanGraph(s.Fabric)
	comps := g.cycles()
	if len(comps) == 0 {
		return nil
	}
	var out []Finding
	totalChans := 0
	for _, c := range comps {
		totalChans += len(c)
	}
	for k, comp := range comps {
		if k == 10 {
			break // the first ten cycles name enough; the count says the rest
		}
		cyc := g.oneCycle(comp)
		var hops []string
		var ents []Entity
		switches := map[*fabric.Node]bool{}
		share := 0.0
		for _, c := range cyc {
			p := g.port(c)
			if v, ok := s.pathShare(p); ok {
				share = max(share, v)
			}
			hops = append(hops, s.entityOf(p, "").String())
			ents = append(ents, s.entityOf(p, "end"))
			switches[p.Node] = true
		}
		hops = append(hops, hops[0])
		ev := []Evidence{
			{Name: "cycle", Value: float64(len(cyc)), Unit: "channels",
				Text: fmt.Sprintf("dependency cycle over %d switches: %s (each arrow: a packet holding the first port's buffer waits for the next)", len(switches), strings.Join(hops, " -> "))},
			{Name: "channels in cycles", Value: float64(len(comp)), Unit: "channels",
				Text: fmt.Sprintf("%d inter-switch channels in this strongly connected set; %d in %d such sets fabric-wide", len(comp), totalChans, len(comps))},
			cycleVLs(cyc, g),
		}
		out = append(out, Finding{
			Check:    "routing.credit-loop",
			Severity: Critical,
			Title:    fmt.Sprintf("Credit loop (deadlock risk): the routes make a dependency cycle through %d switches, %s", len(switches), strings.Join(hops[:min(4, len(hops)-1)], " -> ")+ellipsis(len(hops)-1 > 4)),
			Entities: ents,
			Evidence: ev,
			Impact:   Impact{PathShare: share, Score: max(0.5, share), Summary: "under load the buffers on the cycle can fill and wait on each other for ever: traffic through them stops until links are reset (a fabric-wide hang of the jobs crossing it)"},
			Action:   "Route with a deadlock-free engine for this topology: up/down (opensm -R updn, with the root switches given in root_guid_file) or ftree on fat trees, DFSSSP/LASH (which separate paths onto VLs) on rings, tori and dragonflies. If such an engine already runs, check that its SL2VL tables and QoS are applied (the cycle is judged on VL0). Then re-run 'ibdoctor check'.",
			Basis:    "routes",
		})
	}
	return out
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
func cycleVLs(cyc []int32, g *chanGraph) Evidence {
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
	return Evidence{Name: "VL", Value: float64(most), Text: fmt.Sprintf("ports on the cycle run up to %s (OperationalVLs): an engine that puts paths on several SLs and VLs (DFSSSP, LASH) could break the cycle; SL2VL tables and per-path SLs are not read, so it is judged on VL0", vlText(most))}
}
