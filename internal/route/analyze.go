package route

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Analyzer answers whole-fabric routing questions over the LFTs in a
// fabric. It indexes the switches once; build a new one after changing
// the fabric or its LFTs.
type Analyzer struct {
	f     *fabric.Fabric
	rules Rules
	sw    []*fabric.Node
	idx   map[*fabric.Node]int32
	base  []int32 // switch i's port p is slot base[i]+p
	// per slot: the switch the port leads to (-1: none/CA/down), and
	// whether the port is live at all
	next  []int32
	alive []bool
	// per slot: what a packet sent out of the port meets, judged once by
	// the rules (the ports do not change during an analysis), and for a
	// slot leading to a CA its far end. A walk then reads one byte per
	// hop instead of following the port's pointers and calling PortUp
	// again for every destination.
	kind []slotKind
	peer []*fabric.Port
	// per switch: its LFT and LinearFDBTop
	tabs []swTable
}

// slotKind is what lies beyond a switch port for a walk (see Rules.lookup
// and Rules.step, which judge one port at a time the same way).
type slotKind uint8

const (
	slotMissing  slotKind = iota // no record of the port (nil in Node.Ports)
	slotUnread                   // not up, and its state or far end was not read
	slotDown                     // not up
	slotSwitch                   // up, to an indexed switch (next holds it)
	slotNoTable                  // up, to a switch without SwitchInfo
	slotEndpoint                 // up, to a CA or router port (peer holds it)
)

type swTable struct {
	lft fabric.LFTView
	top uint16
	has bool // a table was read (lft may still be empty)
}

// NewAnalyzer indexes f's switches and links.
func NewAnalyzer(f *fabric.Fabric) *Analyzer { return NewAnalyzerWith(f, Rules{}) }

// NewAnalyzerWith indexes f's switches and links for walks that follow
// rules r.
func NewAnalyzerWith(f *fabric.Fabric, r Rules) *Analyzer {
	a := &Analyzer{f: f, rules: r, idx: map[*fabric.Node]int32{}}
	n := 0
	for _, nd := range f.Nodes {
		if nd.Type == mad.NodeSwitch && nd.Switch != nil {
			a.idx[nd] = int32(len(a.sw))
			a.sw = append(a.sw, nd)
			a.base = append(a.base, int32(n))
			n += len(nd.Ports)
		}
	}
	a.next = make([]int32, n)
	a.alive = make([]bool, n)
	a.kind = make([]slotKind, n)
	a.peer = make([]*fabric.Port, n)
	a.tabs = make([]swTable, len(a.sw))
	for i, nd := range a.sw {
		a.tabs[i] = swTable{lft: nd.Switch.LFT.View(), top: nd.Switch.LinearFDBTop, has: nd.Switch.LFT != nil}
		for p, port := range nd.Ports {
			s := int(a.base[i]) + p
			a.next[s] = -1
			if p == 0 || port == nil {
				continue
			}
			if !a.rules.up(port) {
				a.kind[s] = slotDown
				if !port.StateKnown() || port.PeerUnknown() || (port.Remote != nil && !port.Remote.StateKnown()) {
					a.kind[s] = slotUnread
				}
				continue
			}
			a.alive[s] = true
			j, ok := a.idx[port.Remote.Node]
			switch {
			case ok:
				a.next[s], a.kind[s] = j, slotSwitch
			case port.Remote.Node.Type == mad.NodeSwitch:
				a.kind[s] = slotNoTable
			default:
				a.kind[s], a.peer[s] = slotEndpoint, port.Remote
			}
		}
	}
	return a
}

// step is Rules.step over the index for switch i: the egress port, the
// next switch (-1 when the route ends at i) and, when it ends, how. A
// route that goes on to a switch without SwitchInfo ends at i with
// NoTable.
func (a *Analyzer) step(i int32, to uint16, dst *fabric.Port) (uint8, int32, Outcome) {
	t := &a.tabs[i]
	if int(to) >= t.lft.Len() || (a.rules.Strict && to > t.top) {
		if a.rules.Strict && t.has {
			return fabric.NoRoute, -1, BeyondTop
		}
		return fabric.NoRoute, -1, NoTable
	}
	return a.judge(i, t.lft.At(to), dst)
}

// stepIn is step for a walk with per-destination state dw: the entry is
// read from the switch's block cached in dw, looked up once for all the
// LIDs of a block (a walk's destinations in turn mostly share one), so
// a hop reads one small array in order instead of the switch's table
// header and its block offsets, scattered over the heap.
func (a *Analyzer) stepIn(dw *destWork, i int32, to uint16, dst *fabric.Port) (uint8, int32, Outcome) {
	if dw.col == nil {
		return a.step(i, to, dst)
	}
	c := &dw.col[i]
	if k := int32(to / mad.LFTBlockSize); c.blk != k {
		a.fillCol(c, i, k)
	}
	if c.p == nil {
		return a.step(i, to, dst)
	}
	return a.judge(i, c.p[to%mad.LFTBlockSize], dst)
}

// blockCol is one switch's LFT block k cached by a walk: p is nil when
// the block is not wholly inside the table (and, under Strict, below
// LinearFDBTop), where step judges entry by entry.
type blockCol struct {
	blk int32 // -1: none cached
	p   *fabric.LFTBlock
}

// fillCol caches switch i's block k in c.
func (a *Analyzer) fillCol(c *blockCol, i, k int32) {
	t := &a.tabs[i]
	last := int(k+1)*mad.LFTBlockSize - 1
	c.blk, c.p = k, nil
	if last < t.lft.Len() && (!a.rules.Strict || last <= int(t.top)) {
		c.p = t.lft.Block(int(k))
	}
}

// newCols returns an empty block cache for every switch.
func (a *Analyzer) newCols() []blockCol {
	c := make([]blockCol, len(a.sw))
	for i := range c {
		c[i].blk = -1
	}
	return c
}

// judge is step once switch i's entry for the destination is read.
func (a *Analyzer) judge(i int32, out uint8, dst *fabric.Port) (uint8, int32, Outcome) {
	switch {
	case out == 0:
		if dst != nil && dst.Node == a.sw[i] {
			return 0, -1, Delivered
		}
		if a.rules.Strict {
			return 0, -1, Misdelivered
		}
		return 0, -1, NoRoute
	case out == fabric.NoRoute:
		return out, -1, NoRoute
	case int(out) >= len(a.sw[i].Ports):
		return out, -1, NoRoute
	}
	s := int(a.base[i]) + int(out)
	switch a.kind[s] {
	case slotSwitch:
		return out, a.next[s], forward
	case slotEndpoint:
		rm := a.peer[s]
		if rm == dst || (dst != nil && rm.Node == dst.Node && rm.LID == dst.LID) {
			return out, -1, Delivered
		}
		return out, -1, Misdelivered
	case slotNoTable:
		return out, -1, NoTable
	case slotUnread:
		return out, -1, Unread
	case slotDown:
		return out, -1, DeadEnd
	}
	if a.rules.Strict { // slotMissing
		return out, -1, DeadEnd
	}
	return out, -1, NoRoute
}

// Loads holds one count per switch port.
type Loads struct {
	a *Analyzer
	v []int64
}

// Of returns the count of switch port p (0 for other ports).
func (l Loads) Of(p *fabric.Port) int64 {
	i, ok := l.a.idx[p.Node]
	if !ok || int(p.Num) >= len(p.Node.Ports) {
		return 0
	}
	return l.v[int(l.a.base[i])+int(p.Num)]
}

// Switch returns the counts of sw's ports, indexed by port number (nil
// for a node that is not an indexed switch). The slice aliases l.
func (l Loads) Switch(sw *fabric.Node) []int64 {
	i, ok := l.a.idx[sw]
	if !ok {
		return nil
	}
	b := int(l.a.base[i])
	return l.v[b : b+len(sw.Ports) : b+len(sw.Ports)]
}

// isEndpointLID reports whether lid belongs to a CA or router port.
func endpoint(p *fabric.Port) bool { return p != nil && p.Node.Type != mad.NodeSwitch }

// LIDLoads counts, for every switch egress port, the CA and router
// destination LIDs its LFT sends out of it (entries for switch LIDs,
// unknown LIDs and NoRoute are not counted). On a balanced fat tree the
// up ports of a leaf differ by at most one.
func (a *Analyzer) LIDLoads() Loads {
	l := Loads{a: a, v: make([]int64, len(a.next))}
	top := 0
	for _, s := range a.sw {
		top = max(top, s.Switch.LFT.Len()-1)
	}
	// Whole blocks, so the inner loop has no bounds checks; a block's
	// entries past its table's end are not counted.
	isCA := make([]bool, (top+mad.LFTBlockSize)/mad.LFTBlockSize*mad.LFTBlockSize)
	for lid := range top + 1 {
		isCA[lid] = endpoint(a.f.PortByLID(uint16(lid)))
	}
	for i, s := range a.sw {
		b, np := int(a.base[i]), len(s.Ports)
		lft := s.Switch.LFT
		v := l.v[b : b+np]
		for k := range lft.NumBlocks() {
			blk, ca := lft.Block(k), (*[mad.LFTBlockSize]bool)(isCA[k*mad.LFTBlockSize:])
			n := min(mad.LFTBlockSize, lft.Len()-k*mad.LFTBlockSize)
			for j, out := range blk[:n] {
				if ca[j] && int(out) < len(v) {
					v[out]++
				}
			}
		}
	}
	return l
}

// Pair is one host-to-host route that does not arrive.
type Pair struct {
	From, To uint16
	Outcome  Outcome
}

// HostPaths is the result of following every route among a host set.
type HostPaths struct {
	// Loads counts, per switch egress port, the delivered source→
	// destination paths among the hosts that cross it.
	Loads Loads
	// Outcomes counts the ordered pairs by how their route ends.
	Outcomes [numOutcomes]int64
	// Failed lists up to the requested number of pairs that do not
	// arrive, in destination then source order.
	Failed []Pair
}

// Pairs returns the number of ordered pairs examined.
func (h *HostPaths) Pairs() int64 {
	var n int64
	for _, c := range h.Outcomes {
		n += c
	}
	return n
}

// per-destination switch state
const (
	unseen uint8 = iota
	onStack
	resolved
)

type destWork struct {
	state []uint8
	res   []Outcome
	depth []int32
	nxt   []int32 // next switch on a delivered route, -1 at the last switch
	out   []uint8
	w     []int64 // sources entering at the switch
	acc   []int64
	touch []int32
	stack []int32
	byDep [][]int32
	// end, when set (a Walk), holds per switch the switch its route
	// ended at.
	end []int32
	col []blockCol // see stepIn
}

// HostPaths follows the route from every host to every other host of
// hosts (LIDs of CA ports) over the LFTs. It builds, for each
// destination, the tree of next hops once for all switches the sources
// enter by (memoised), and counts the sources by the switch they enter
// at, so the cost is O(destinations × switches) rather than
// O(pairs × hops) or O(pairs): all hosts on one leaf share one route to a
// destination. maxFailed bounds HostPaths.Failed.
func (a *Analyzer) HostPaths(hosts []uint16, maxFailed int) (*HostPaths, error) {
	type src struct {
		lid   uint16
		entry int32 // switch index the host's link reaches, -1: source down
		port  *fabric.Port
	}
	srcs := make([]src, len(hosts))
	// sources per entry switch (index into groups), and how many times
	// each LID is listed: a destination skips every source with its LID
	groupOf := map[int32]int{}
	type group struct {
		entry int32
		n     int64
	}
	var groups []group
	var down int64
	mult := make(map[uint16]int64, len(hosts))
	for i, lid := range hosts {
		p := a.f.PortByLID(lid)
		if p == nil {
			return nil, fmt.Errorf("route: host LID %d is not in the fabric", lid)
		}
		if p.Node.Type == mad.NodeSwitch {
			return nil, fmt.Errorf("route: LID %d is switch %q, not a host", lid, p.Node.Description)
		}
		srcs[i] = src{lid: lid, entry: -1, port: p}
		if a.rules.up(p) {
			if j, ok := a.idx[p.Remote.Node]; ok {
				srcs[i].entry = j
			}
		}
		mult[lid]++
		if e := srcs[i].entry; e < 0 {
			down++
		} else if g, ok := groupOf[e]; ok {
			groups[g].n++
		} else {
			groupOf[e] = len(groups)
			groups = append(groups, group{entry: e, n: 1})
		}
	}
	workers := max(1, min(runtime.GOMAXPROCS(0), len(hosts)))
	type result struct {
		loads    []int64
		outcomes [numOutcomes]int64
		failed   map[int][]Pair // by destination index
	}
	results := make([]result, workers)
	var nextDest atomic.Int64
	var wg sync.WaitGroup
	ns := len(a.sw)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(r *result) {
			defer wg.Done()
			r.loads = make([]int64, len(a.next))
			r.failed = map[int][]Pair{}
			dw := &destWork{
				state: make([]uint8, ns), res: make([]Outcome, ns), depth: make([]int32, ns),
				nxt: make([]int32, ns), out: make([]uint8, ns), w: make([]int64, ns), acc: make([]int64, ns),
				col: a.newCols(),
			}
			nfail := 0
			for {
				di := int(nextDest.Add(1) - 1)
				if di >= len(srcs) {
					return
				}
				d := srcs[di]
				// the sources with d's LID are not routed to it
				self := mult[d.lid]
				failing := false
				if n := down - self*b2i(d.entry < 0); n > 0 {
					r.outcomes[SourceDown] += n
					failing = true
				}
				for _, g := range groups {
					n := g.n - self*b2i(g.entry == d.entry)
					if n == 0 {
						continue
					}
					if dw.state[g.entry] == unseen {
						a.resolve(dw, g.entry, d.lid, d.port)
					}
					o := dw.res[g.entry]
					r.outcomes[o] += n
					if o == Delivered {
						dw.w[g.entry] += n
					} else {
						failing = true
					}
				}
				// The pairs that fail, in source order, while the list
				// has room: at most maxFailed destinations pass here.
				for i := 0; failing && nfail < maxFailed && i < len(srcs); i++ {
					s := srcs[i]
					switch {
					case s.lid == d.lid:
					case s.entry < 0:
						r.failed[di] = append(r.failed[di], Pair{s.lid, d.lid, SourceDown})
						nfail++
					case dw.res[s.entry] != Delivered:
						r.failed[di] = append(r.failed[di], Pair{s.lid, d.lid, dw.res[s.entry]})
						nfail++
					}
				}
				a.accumulate(dw, r.loads)
			}
		}(&results[w])
	}
	wg.Wait()
	hp := &HostPaths{Loads: Loads{a: a, v: results[0].loads}}
	for i, r := range results {
		if i > 0 {
			for j, v := range r.loads {
				hp.Loads.v[j] += v
			}
		}
		for o, c := range r.outcomes {
			hp.Outcomes[o] += c
		}
	}
	for di := range srcs {
		for _, r := range results {
			for _, p := range r.failed[di] {
				if len(hp.Failed) < maxFailed {
					hp.Failed = append(hp.Failed, p)
				}
			}
		}
	}
	return hp, nil
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// resolve follows the LFTs from switch s towards LID to, memoising the
// outcome, next switch and depth (and, for a Walk, the switch the route
// ends at) of every switch it crosses.
func (a *Analyzer) resolve(dw *destWork, s int32, to uint16, dst *fabric.Port) {
	stack := dw.stack[:0]
	cur := s
	var o Outcome
	end := int32(-1)
	for {
		if dw.state[cur] == resolved {
			o = dw.res[cur]
			if dw.end != nil {
				end = dw.end[cur]
			}
			break
		}
		if dw.state[cur] == onStack {
			o, end = Loop, cur
			break
		}
		dw.state[cur] = onStack
		dw.touch = append(dw.touch, cur)
		stack = append(stack, cur)
		out, j, so := a.stepIn(dw, cur, to, dst)
		dw.out[cur] = out
		if j < 0 {
			// the route ends at cur
			a.ended(dw, cur, so)
			stack = stack[:len(stack)-1]
			o, end = so, cur
			break
		}
		dw.nxt[cur] = j
		cur = j
	}
	// unwind: everything on the stack shares the outcome
	for i := len(stack) - 1; i >= 0; i-- {
		u := stack[i]
		dw.state[u], dw.res[u] = resolved, o
		if dw.end != nil {
			dw.end[u] = end
		}
		if n := dw.nxt[u]; n >= 0 && o == Delivered {
			dw.depth[u] = dw.depth[n] + 1
		}
	}
	dw.stack = stack
}

// ended records that the route through switch u ends there with o.
func (a *Analyzer) ended(dw *destWork, u int32, o Outcome) Outcome {
	dw.state[u], dw.res[u], dw.nxt[u], dw.depth[u] = resolved, o, -1, 0
	if dw.end != nil {
		dw.end[u] = u
	}
	return o
}

// accumulate adds each delivered switch's source count to its egress
// port, pushing counts towards the destination deepest first, then
// resets the per-destination state.
func (a *Analyzer) accumulate(dw *destWork, loads []int64) {
	maxDepth := int32(-1)
	for _, u := range dw.touch {
		if dw.res[u] == Delivered {
			maxDepth = max(maxDepth, dw.depth[u])
		}
	}
	if int(maxDepth+1) > len(dw.byDep) {
		dw.byDep = append(dw.byDep, make([][]int32, int(maxDepth+1)-len(dw.byDep))...)
	}
	for d := range dw.byDep[:maxDepth+1] {
		dw.byDep[d] = dw.byDep[d][:0]
	}
	for _, u := range dw.touch {
		if dw.res[u] == Delivered {
			dw.byDep[dw.depth[u]] = append(dw.byDep[dw.depth[u]], u)
			dw.acc[u] = dw.w[u]
		}
	}
	for d := maxDepth; d >= 0; d-- {
		for _, u := range dw.byDep[d] {
			if dw.acc[u] == 0 {
				continue
			}
			loads[int(a.base[u])+int(dw.out[u])] += dw.acc[u]
			if n := dw.nxt[u]; n >= 0 {
				dw.acc[n] += dw.acc[u]
			}
		}
	}
	for _, u := range dw.touch {
		dw.state[u], dw.w[u], dw.acc[u] = unseen, 0, 0
	}
	dw.touch = dw.touch[:0]
}

// Walk follows every switch's route to one destination port over the
// LFTs, memoised: asking From every switch costs O(switches) in all.
// A Walk is not safe for concurrent use.
type Walk struct {
	a   *Analyzer
	dst *fabric.Port
	dw  destWork
}

// WalkTo returns a walk towards the port dst (its LID is the
// destination), following a's rules.
func (a *Analyzer) WalkTo(dst *fabric.Port) *Walk {
	ns := len(a.sw)
	return &Walk{a: a, dst: dst, dw: destWork{
		state: make([]uint8, ns), res: make([]Outcome, ns), depth: make([]int32, ns),
		nxt: make([]int32, ns), out: make([]uint8, ns), end: make([]int32, ns),
	}}
}

// Reset turns w into a walk towards dst, keeping its memory: a check that
// walks to every host in turn allocates once instead of once per host.
func (w *Walk) Reset(dst *fabric.Port) {
	// The block cache pays only across destinations (a walk's own hops
	// meet each switch once): made on the first Reset, so the walks a
	// check keeps, one per host, do not each hold one per switch.
	if w.dw.col == nil {
		w.dw.col = w.a.newCols()
	}
	for _, u := range w.dw.touch {
		w.dw.state[u] = unseen
	}
	w.dw.touch = w.dw.touch[:0]
	w.dst = dst
}

// From returns how the route from switch sw to the destination ends and,
// unless it is Delivered, the switch where it fails: the switch whose
// entry is missing or leads to a dead end or the wrong port, the first
// switch a loop comes back to, or the switch without a table. A node
// that is not a switch with SwitchInfo is NoTable at itself.
func (w *Walk) From(sw *fabric.Node) (Outcome, *fabric.Node) {
	i, ok := w.a.idx[sw]
	if !ok {
		return NoTable, sw
	}
	return w.fromIndex(i)
}

// Switch is sw's place in the Analyzer, for Walk.FromSwitch: a check
// that walks from the same switches to every destination looks each up
// once, not once per destination (46 million map lookups at 49k nodes).
// A switch the Analyzer does not know has none: ok is false.
type Switch struct {
	i  int32
	sw *fabric.Node
}

// Switch returns sw's place in a; ok is false when a has no such switch.
func (a *Analyzer) Switch(sw *fabric.Node) (Switch, bool) {
	i, ok := a.idx[sw]
	if !ok {
		return Switch{-1, sw}, false
	}
	return Switch{i, sw}, true
}

// FromSwitch is From for a switch looked up with Analyzer.Switch on the
// walk's Analyzer.
func (w *Walk) FromSwitch(s Switch) (Outcome, *fabric.Node) {
	if s.i < 0 {
		return NoTable, s.sw
	}
	return w.fromIndex(s.i)
}

func (w *Walk) fromIndex(i int32) (Outcome, *fabric.Node) {
	if w.dw.state[i] != resolved {
		w.a.resolve(&w.dw, i, w.dst.LID, w.dst)
	}
	o := w.dw.res[i]
	if o == Delivered {
		return o, nil
	}
	e := w.dw.end[i]
	at := w.a.sw[e]
	if o == NoTable && w.dw.out[e] != fabric.NoRoute {
		// at forwards to a switch without a table
		if p := portOf(at, w.dw.out[e]); p != nil && p.Remote != nil {
			at = p.Remote.Node
		}
	}
	return o, at
}

// Switches returns how many switches the route from s to the
// destination crosses, s and the last included, when it is Delivered;
// 0 otherwise. The walk memoises it with the outcome: a check comparing
// route lengths over every walk pays one lookup, not a Path.
func (w *Walk) Switches(s Switch) int {
	if s.i < 0 {
		return 0
	}
	if w.dw.state[s.i] != resolved {
		w.a.resolve(&w.dw, s.i, w.dst.LID, w.dst)
	}
	if w.dw.res[s.i] != Delivered {
		return 0
	}
	return int(w.dw.depth[s.i]) + 1
}

// Path returns the egress ports the route from switch sw to the
// destination leaves by, in order: up to the destination's port, the
// port of a dead end (or port 0 where a switch keeps the packet), the
// last switch that has an entry, or the port that closes a loop.
func (w *Walk) Path(sw *fabric.Node) []*fabric.Port {
	i, ok := w.a.idx[sw]
	if !ok {
		return nil
	}
	w.From(sw)
	var ps []*fabric.Port
	var on []int32
	for {
		on = append(on, i)
		p := portOf(w.a.sw[i], w.dw.out[i])
		if p == nil || w.dw.out[i] == fabric.NoRoute {
			return ps
		}
		ps = append(ps, p)
		j := w.dw.nxt[i]
		if w.dw.res[i] != Delivered && j >= 0 && slices.Contains(on, j) {
			return ps // the loop closes
		}
		if j < 0 {
			return ps
		}
		i = j
	}
}

// SwitchEgress is Egress for one switch, found in the index once: a
// check asking one switch about every LID does no map lookup per LID.
type SwitchEgress struct {
	a *Analyzer
	i int32
}

// EgressFrom returns sw's SwitchEgress (false for a node that is not an
// indexed switch).
func (a *Analyzer) EgressFrom(sw *fabric.Node) (SwitchEgress, bool) {
	i, ok := a.idx[sw]
	return SwitchEgress{a, i}, ok
}

// To is Egress(sw, to) for the switch e was made for.
func (e SwitchEgress) To(to uint16) *fabric.Port {
	a := e.a
	t := &a.tabs[e.i]
	if int(to) >= t.lft.Len() || (a.rules.Strict && to > t.top) {
		return nil
	}
	out := t.lft.At(to)
	sw := a.sw[e.i]
	switch {
	case out == 0:
		return portOf(sw, 0)
	case out == fabric.NoRoute || int(out) >= len(sw.Ports):
		return nil
	}
	switch a.kind[int(a.base[e.i])+int(out)] {
	case slotSwitch, slotNoTable, slotEndpoint: // up
		return sw.Ports[out]
	}
	return nil
}

// EgressTable is To for every LID at once: To(lid) is Ports[LFT.At(lid)]
// for lid < Limit and nil above. A check asking one switch about tens of
// thousands of LIDs judges each of the 256 entry values once, not each LID.
type EgressTable struct {
	LFT   *fabric.LFTView
	Limit int               // LIDs from here on have no egress (table end, or LinearFDBTop under Strict)
	Ports [256]*fabric.Port // by entry value: the port To returns, nil for none
}

// Table fills et with e's switch's EgressTable (in place: it is 2 KB,
// made for every switch by a check that runs on every switch).
func (e SwitchEgress) Table(et *EgressTable) {
	a := e.a
	t := &a.tabs[e.i]
	sw := a.sw[e.i]
	*et = EgressTable{LFT: &t.lft, Limit: t.lft.Len()}
	if a.rules.Strict {
		et.Limit = min(et.Limit, int(t.top)+1)
	}
	et.Ports[0] = portOf(sw, 0)
	for out := 1; out < min(len(sw.Ports), int(fabric.NoRoute)); out++ {
		switch a.kind[int(a.base[e.i])+out] {
		case slotSwitch, slotNoTable, slotEndpoint: // up
			et.Ports[out] = sw.Ports[out]
		}
	}
}

// Egress returns the port switch sw's LFT sends LID to out of (port 0
// where the switch keeps the packet itself), or nil where the table has
// no usable entry or the port is not up, under a's rules.
func (a *Analyzer) Egress(sw *fabric.Node, to uint16) *fabric.Port {
	if sw.Switch == nil {
		return nil
	}
	_, p, o := a.rules.lookup(sw, to)
	if o != forward {
		return nil
	}
	return p
}
