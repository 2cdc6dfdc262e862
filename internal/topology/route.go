package topology

import (
	"fmt"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

const unreachable = 0xff

// graph is the switch-to-switch view of a fabric the routing engine works
// on: switches numbered 0..n-1, each port's neighbouring switch, and the
// switch and port at which every LID is delivered.
type graph struct {
	sw   []*fabric.Node
	base []int32 // sw[i]'s port p is at nbr[base[i]+p]
	nbr  []int32 // neighbouring switch, or -1 (CA, uncabled, down)
	adj  []int32 // distinct neighbouring switches, CSR ...
	adjS []int32 // ... sw[i]'s at adj[adjS[i]:adjS[i+1]]

	top      int     // highest LID
	destSw   []int32 // per LID: switch that delivers it, -1 if none
	destPort []uint8 // per LID: that switch's egress port (0 = itself)
	destCA   []bool  // per LID: a CA or router LID (counted for balance)
}

func linkUp(p *fabric.Port) bool {
	return p != nil && p.Remote != nil && p.State != mad.PortStateDown && p.Remote.State != mad.PortStateDown
}

func newGraph(f *fabric.Fabric) (*graph, error) {
	g := &graph{}
	idx := make(map[*fabric.Node]int32)
	nports := 0
	for _, n := range f.Nodes {
		if n.Type == mad.NodeSwitch {
			if n.Switch == nil {
				n.Switch = &fabric.Switch{}
			}
			idx[n] = int32(len(g.sw))
			g.sw = append(g.sw, n)
			nports += len(n.Ports)
		}
		for _, p := range n.Ports {
			if p == nil || p.LID == 0 {
				continue
			}
			if last := int(p.LID) + 1<<p.LMC - 1; last > g.top {
				g.top = last
			}
		}
	}
	if g.top > MaxUnicastLID {
		return nil, fmt.Errorf("topology: LID %d is above the unicast range (max %d)", g.top, MaxUnicastLID)
	}
	g.base = make([]int32, len(g.sw))
	g.nbr = make([]int32, 0, nports)
	g.adjS = make([]int32, len(g.sw)+1)
	seen := make([]int32, len(g.sw))
	for i := range seen {
		seen[i] = -1
	}
	for i, n := range g.sw {
		g.base[i] = int32(len(g.nbr))
		for _, p := range n.Ports {
			r := int32(-1)
			if linkUp(p) && p.Num != 0 {
				if j, ok := idx[p.Remote.Node]; ok {
					r = j
					if seen[j] != int32(i) && j != int32(i) {
						seen[j] = int32(i)
						g.adj = append(g.adj, j)
					}
				}
			}
			g.nbr = append(g.nbr, r)
		}
		g.adjS[i+1] = int32(len(g.adj))
	}
	g.destSw = make([]int32, g.top+1)
	g.destPort = make([]uint8, g.top+1)
	g.destCA = make([]bool, g.top+1)
	for i := range g.destSw {
		g.destSw[i] = -1
	}
	for _, n := range f.Nodes {
		if n.Type == mad.NodeSwitch {
			if p := n.Ports[0]; p != nil && p.LID != 0 {
				for l := int(p.LID); l < int(p.LID)+1<<p.LMC; l++ {
					g.destSw[l], g.destPort[l] = idx[n], 0
				}
			}
			continue
		}
		for _, p := range n.Ports {
			if p == nil || p.LID == 0 || !linkUp(p) {
				continue
			}
			j, ok := idx[p.Remote.Node]
			if !ok {
				continue // CA cabled straight to a CA: nothing to route
			}
			for l := int(p.LID); l < int(p.LID)+1<<p.LMC; l++ {
				g.destSw[l], g.destPort[l], g.destCA[l] = j, p.Remote.Num, true
			}
		}
	}
	return g, nil
}

// hopMatrix returns the n×n switch distance matrix, row i = distances
// from switch i (unreachable: none, or 255 hops or more).
//
// All rows grow together, one hop at a time, as bit sets: the switches
// within k+1 hops of s are s and those within k hops of any neighbour
// of s, so each step ORs the neighbours' rows (64 switches a word)
// instead of one breadth-first search per switch touching every edge
// for every source, and a row's new bits get distance k+1.
func (g *graph) hopMatrix(workers int) []uint8 {
	n := len(g.sw)
	hops := make([]uint8, n*n)
	for i := range hops {
		hops[i] = unreachable
	}
	w := (n + 63) / 64
	cur, next := make([]uint64, n*w), make([]uint64, n*w)
	for s := range n {
		hops[s*n+s] = 0
		cur[s*w+s/64] |= 1 << (s % 64)
	}
	for d := 1; d < unreachable; d++ {
		var grew atomic.Bool
		var rows atomic.Int64
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				const batch = 64
				for {
					lo := int(rows.Add(batch) - batch)
					if lo >= n {
						return
					}
					found := false
					for s := lo; s < min(lo+batch, n); s++ {
						row := next[s*w : (s+1)*w]
						copy(row, cur[s*w:(s+1)*w])
						for _, v := range g.adj[g.adjS[s]:g.adjS[s+1]] {
							for i, x := range cur[int(v)*w : (int(v)+1)*w] {
								row[i] |= x
							}
						}
						old := cur[s*w : (s+1)*w]
						hrow := hops[s*n : (s+1)*n]
						for i, x := range row {
							for fresh := x &^ old[i]; fresh != 0; fresh &= fresh - 1 {
								hrow[i*64+bits.TrailingZeros64(fresh)] = uint8(d)
								found = true
							}
						}
					}
					if found {
						grew.Store(true)
					}
				}
			}()
		}
		wg.Wait()
		if !grew.Load() {
			break
		}
		cur, next = next, cur
	}
	return hops
}

// portSet is a set of equal-cost egress ports with a lazy least-used
// cursor: every port before pos has a count above m, and no port in the
// set has a count below m. Counts only grow, so picking the lowest port
// with the smallest count costs O(1) amortised instead of a scan.
type portSet struct {
	ports []uint8
	m     uint32
	pos   int
}

func (s *portSet) pick(cnt []uint32) uint8 {
	for {
		for ; s.pos < len(s.ports); s.pos++ {
			if p := s.ports[s.pos]; cnt[p] == s.m {
				return p
			}
		}
		m := ^uint32(0)
		for _, p := range s.ports {
			m = min(m, cnt[p])
		}
		s.m, s.pos = m, 0
	}
}

type portMask [4]uint64

// Route computes min-hop unicast LFTs for every switch the way OpenSM's
// minhop engine does, and stores them in Switch.LFT (indexed by LID,
// NoRoute where a LID is unknown or unreachable) with LinearFDBTop set to
// the highest LID. For each switch, destination LIDs are taken in
// ascending order; each goes out of the least-used port among those on a
// shortest path (lowest port number on ties), where use counts CA and
// router LIDs only. A healthy fat tree comes out balanced. Ports that are
// Down or uncabled carry no routes.
//
// The cost is one BFS per switch plus O(switches × LIDs); memory is one
// byte per switch pair plus the LFTs.
func Route(f *fabric.Fabric) error {
	g, err := newGraph(f)
	if err != nil {
		return err
	}
	n := len(g.sw)
	if n == 0 {
		return nil
	}
	workers := max(1, runtime.GOMAXPROCS(0))
	hops := g.hopMatrix(workers)
	width := g.top + 1
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &router{g: g, hops: hops, masks: make([]portMask, n), want: make([]uint8, n), setOf: make([]int32, n)}
			// Each worker shares the blocks of the tables it makes (a fat
			// tree's switches have a few hundred distinct blocks in all).
			var in fabric.BlockInterner
			lft := make([]uint8, width)
			for {
				s := int(next.Add(1) - 1)
				if s >= n {
					return
				}
				r.route(s, lft)
				sw := g.sw[s].Switch
				sw.LFT = fabric.LFTFromBytes(lft, &in)
				sw.LinearFDBTop = uint16(g.top)
			}
		}()
	}
	wg.Wait()
	return nil
}

type router struct {
	g     *graph
	hops  []uint8
	masks []portMask // per destination switch: ports on a shortest path
	want  []uint8    // per destination switch: a shortest path's next hop's distance
	setOf []int32    // per destination switch: index into sets, -1 = not yet
	sets  []portSet
	ids   map[portMask]int32
	cnt   []uint32

	lastMask portMask // setFor's last answer, when lastID >= 0
	lastID   int32
}

func (r *router) route(s int, lft []uint8) {
	g, n := r.g, len(r.g.sw)
	row := r.hops[s*n : (s+1)*n]
	nports := len(g.sw[s].Ports)
	nb := g.nbr[g.base[s] : int(g.base[s])+nports]
	// want[d] is the distance from a neighbour on a shortest path to d:
	// port p is on one when hops(nbr[p], d) == want[d]. Where d is s
	// itself or unreachable, want holds a value no neighbour's distance
	// takes (a neighbour is 1 from s; one next to an unreachable d's
	// neighbours is at least 254 from it, and 0 only from itself).
	want := r.want
	for d, h := range row {
		switch h {
		case 0:
			want[d] = 0xff
		case unreachable:
			want[d] = 0
		default:
			want[d] = h - 1
		}
	}
	clear(r.masks)
	// Destinations in chunks whose masks stay in the L1 cache while
	// every port's row is compared against them, without a branch per
	// comparison (about half match on a leaf, unpredictably).
	const chunk = 512
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		w, masks := want[lo:hi], r.masks[lo:hi]
		for p := 1; p < nports; p++ {
			j := nb[p]
			if j < 0 {
				continue
			}
			rj := r.hops[int(j)*n+lo : int(j)*n+hi]
			word, bit := p>>6, uint64(1)<<(p&63)
			for d, x := range w {
				var m uint64
				if rj[d] == x {
					m = bit
				}
				masks[d][word] |= m
			}
		}
	}
	for i := range r.setOf {
		r.setOf[i] = -1
	}
	r.sets = r.sets[:0]
	r.lastID = -1
	if r.ids == nil {
		r.ids = make(map[portMask]int32)
	}
	clear(r.ids)
	if cap(r.cnt) < nports {
		r.cnt = make([]uint32, nports)
	}
	cnt := r.cnt[:nports]
	clear(cnt)
	for i := range lft {
		lft[i] = fabric.NoRoute
	}
	for lid := 1; lid <= g.top; lid++ {
		d := g.destSw[lid]
		if d < 0 {
			continue
		}
		if int(d) == s {
			lft[lid] = g.destPort[lid]
			continue
		}
		if row[d] == unreachable {
			continue
		}
		id := r.setOf[d]
		if id < 0 {
			id = r.setFor(d)
		}
		p := r.sets[id].pick(cnt)
		lft[lid] = p
		if g.destCA[lid] {
			cnt[p]++
		}
	}
}

func (r *router) setFor(d int32) int32 {
	m := r.masks[d]
	// Destinations that come one after another mostly share their set
	// (every uplink, on a leaf): no hashing then.
	if r.lastID >= 0 && m == r.lastMask {
		r.setOf[d] = r.lastID
		return r.lastID
	}
	id, ok := r.ids[m]
	if !ok {
		var ports []uint8
		for w, bits := range m {
			for b := 0; b < 64; b++ {
				if bits&(1<<b) != 0 {
					ports = append(ports, uint8(w*64+b))
				}
			}
		}
		id = int32(len(r.sets))
		r.sets = append(r.sets, portSet{ports: ports})
		r.ids[m] = id
	}
	r.setOf[d] = id
	r.lastMask, r.lastID = m, id
	return id
}

// Builder is a fabric generator (FatTree2, FatTree3, Rail, Dragonfly).
type Builder interface {
	Build() (*fabric.Fabric, error)
}

// Routed builds b's fabric and does what a subnet manager's first sweep
// does to it: assigns LIDs and computes min-hop forwarding tables.
func Routed(b Builder) (*fabric.Fabric, error) {
	f, err := b.Build()
	if err != nil {
		return nil, err
	}
	if _, err := AssignLIDs(f); err != nil {
		return nil, err
	}
	if err := Route(f); err != nil {
		return nil, err
	}
	return f, nil
}
