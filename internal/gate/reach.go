package gate

import (
	"context"
	"maps"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/discover"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/pkeyread"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// reach says how the gate addresses each node: by LID (or the snapshot's
// directed route) first, and by a directed route from the gate's own port
// that avoids the links the failed request took, once that went
// unanswered. An unanswered request does not make a node silent while
// another way to it is untried: a LID-routed SMP is forwarded by the same
// tables as the job's traffic, so it is lost on a down link the SM has not
// routed around (new-user trial N2: the gate called a live spine "did not
// answer" and never named the down cable its MADs were lost on). A node
// that answered no (a MAD status, a bad response) or could not be
// addressed is not retried: its answer came back, another way would not
// change it (review R7). The second look sends each read once
// (transport.Once): the first way spent the retries, and a node silent
// both ways (a dead agent) then costs one more timeout, not a second
// round of them. It stays "did not answer" (undecided), never down.
type reach struct {
	f     *fabric.Fabric
	local *fabric.Port // the gate's port in f; nil: no directed route can be made
	byLID bool
	dr    map[*fabric.Node]bool // addressed by the directed route in Path now
	tried map[*fabric.Node]bool
	// first is, for a node retried by a directed route, the failure the
	// first way: a read that fails the second way too says both.
	first map[*fabric.Node]error
	// ownLeaf is the NodeGUID the node one hop out of the gate's port
	// answered with (ownLeafIs), 0 when it did not; nil until asked.
	ownLeaf *uint64
	// behindLost are the CAs read by a directed route from the start
	// because the LID-routed SMPs to the switch they are cabled to went
	// unanswered (refreshSwitchesFirst), each with that switch.
	behindLost map[*fabric.Node]*fabric.Node
	// blocks are the forwarding-table blocks read in this run
	// (liveRoutes), ports the ports whose PortInfo was (refresh): what a
	// cause may be stated from (diagnose.Silence.Read), where the rest is
	// the snapshot's older view.
	blocks map[blockKey]bool
	ports  map[*fabric.Port]bool
	// egress are the ports the live routes leave switches by
	// (liveRoutes): the cables whose far ends the gate checks (cables).
	egress map[*fabric.Port]bool
	// was are, by switch and block number, the snapshot's entries of
	// the table blocks re-read that differ from the live ones: the
	// switches whose table changed since the sweep (wholeTables).
	was map[*fabric.Node]map[int]fabric.LFTBlock
}

// Port implements diagnose.Fresh.
func (r *reach) Port(p *fabric.Port) bool { return r.ports[p] }

// Block implements diagnose.Fresh.
func (r *reach) Block(sw *fabric.Node, index int) bool { return r.blocks[blockKey{sw, index}] }

func newReach(f *fabric.Fabric, e *transport.Engine, byLID bool) *reach {
	r := &reach{f: f, byLID: byLID, dr: map[*fabric.Node]bool{}, tried: map[*fabric.Node]bool{}, first: map[*fabric.Node]error{}, behindLost: map[*fabric.Node]*fabric.Node{}, blocks: map[blockKey]bool{}, ports: map[*fabric.Port]bool{}, egress: map[*fabric.Port]bool{}, was: map[*fabric.Node]map[int]fabric.LFTBlock{}}
	l := e.Local()
	if n := f.NodeByGUID(l.NodeGUID); n != nil {
		r.local = portOf(n, l.PortNum)
	}
	if byLID && r.local != nil && r.local.Remote != nil {
		// A LID another port also owns is answered by whichever owner
		// the tables lead to, and that answer would be filed under this
		// node (review V2: gpu017 "trained at 1X" from gpu001's
		// PortInfo): such a node is read by a directed route from here.
		for _, ps := range f.SharedLIDs() {
			for _, p := range ps {
				n := p.Node
				if n == r.local.Node || r.dr[n] || lidPort(n) != p {
					continue // its reads go to a LID of its own
				}
				if path := r.pathTo(n, nil); path != nil {
					n.Path = path
					r.dr[n] = true
				}
			}
		}
	}
	return r
}

// lid reports whether n is addressed by LID.
func (r *reach) lid(n *fabric.Node) bool { return r.byLID && !r.dr[n] }

// bothWays is err, n's read's failure, with the failure of the first
// way when n was retried by a directed route after it and err is no
// answer that way too (review V10: the directed route's single attempt
// alone read as the retries ignored).
func (r *reach) bothWays(n *fabric.Node, err error) error {
	if first := r.first[n]; first != nil && r.dr[n] && transport.Unanswered(err) {
		return &transport.TwoWaysError{First: first, Second: err}
	}
	return err
}

// retry gives n a directed route from the gate's port that avoids every
// link of the way the failed request went (the LID route on the tables
// as known, or n's previous directed route), and reports whether there is
// one to try; once per node.
func (r *reach) retry(ctx context.Context, e *transport.Engine, n *fabric.Node) bool {
	if n == nil || r.tried[n] || r.local == nil || r.local.Remote == nil {
		return false
	}
	r.tried[n] = true
	avoid := map[*fabric.Port]bool{}
	mark := func(p *fabric.Port) {
		avoid[p] = true
		if p.Remote != nil {
			avoid[p.Remote] = true
		}
	}
	// follow marks the LID route to lid from switch sw up to node to.
	follow := func(sw *fabric.Node, lid uint16, to *fabric.Node) {
		for hop := 0; lid != 0 && sw != to && sw.Switch != nil && hop < maxHops; hop++ {
			p := egress(sw, lid)
			if p == nil {
				return
			}
			mark(p)
			if p.Remote == nil {
				return
			}
			sw = p.Remote.Node
		}
	}
	if r.lid(n) {
		// The request's way and its response's: each follows the
		// tables to its destination LID.
		// The response leaves from the port that owns the LID: a CA's
		// switch on that port's cable (review R8: not its first cabled
		// port's, on a dual-port HCA the other leaf), none when it has
		// no cable (its reads by that LID went nowhere to answer from).
		lp := lidPort(n)
		follow(r.local.Remote.Node, lp.LID, n)
		from := n
		if n.Type != mad.NodeSwitch {
			from = nil
			if lp.Remote != nil && lp.Remote.Node.Type == mad.NodeSwitch {
				from = lp.Remote.Node
			}
		}
		if from != nil {
			follow(from, r.local.LID, r.local.Node)
		}
	} else if len(n.Path) > 1 && r.local.Remote != nil {
		sw := r.local.Remote.Node
		for _, out := range n.Path[1:] {
			p := portOf(sw, out)
			if p == nil {
				break
			}
			mark(p)
			if p.Remote == nil {
				break
			}
			sw = p.Remote.Node
		}
	}
	// A CA's own cable (the gate's, the target's) has no way around it:
	// a route ending there takes it whatever else it avoids.
	for _, c := range []*fabric.Node{r.local.Node, n} {
		if c.Type == mad.NodeSwitch {
			continue
		}
		for _, p := range c.Ports {
			if p != nil {
				delete(avoid, p)
				delete(avoid, p.Remote)
			}
		}
	}
	if len(avoid) == 0 && !(r.lid(n) && n == r.local.Remote.Node && r.ownLeafIs(ctx, e, n)) {
		return false // the same way again, or none: no second look
	}
	path := r.pathTo(n, avoid)
	if path == nil {
		return false
	}
	n.Path = path
	r.dr[n] = true
	return true
}

// ownLeafIs reports whether the node one hop out of the gate's port, by
// directed route, answers NodeInfo as n (asked once a gate, sent once).
// A LID-routed request to the gate's own leaf lost there took no link
// of the fabric, but the directed route over the gate's own cable is
// not forwarded by the leaf's table (a black hole in it, trial F8): it
// is a second look, once the leaf answers there as itself. A cable
// moved at the gate's own port leads elsewhere: no second look.
func (r *reach) ownLeafIs(ctx context.Context, e *transport.Engine, n *fabric.Node) bool {
	if r.ownLeaf == nil {
		var ni mad.NodeInfo
		_, err := e.Once().GetSMP(ctx, mad.Path{r.local.Num}, &ni, 0)
		guid := uint64(0)
		if err == nil {
			guid = ni.NodeGUID
		}
		r.ownLeaf = &guid
	}
	return *r.ownLeaf == n.GUID
}

// pathTo is the shortest directed route from the gate's port to n over
// the links known up, through switches, avoiding the ports in avoid.
func (r *reach) pathTo(n *fabric.Node, avoid map[*fabric.Port]bool) mad.Path {
	return pathFrom(r.local.Remote.Node, mad.Path{r.local.Num}, n, avoid)
}

// pathFrom is the shortest directed route to n that starts with start,
// which reaches first, then goes over the links known up, through
// switches, avoiding the ports in avoid.
func pathFrom(first *fabric.Node, start mad.Path, n *fabric.Node, avoid map[*fabric.Port]bool) mad.Path {
	return searchFrom(first, start, avoid, n).to(n)
}

// drTree is pathFrom's breadth-first search from first over the links
// known up, through switches: the route to each switch it reached, and
// the first switch port (in the search's order) whose cable leads to
// each node. A gate making routes to many switches from one place (its
// cable checks: one per switch on the job's routes, ~100 at 49k nodes)
// searches once instead of once per switch, each search a map and a
// route per switch of its part (2,800 at 49k).
type drTree struct {
	first *fabric.Node
	start mad.Path
	paths map[*fabric.Node]mad.Path
	reach map[*fabric.Node]drHop
}

// drHop is a switch port a drTree reaches a node by.
type drHop struct {
	sw  *fabric.Node
	num uint8
}

// searchFrom searches from first (reached by start), avoiding the ports
// in avoid, until it finds stop (nil: every node it can reach).
func searchFrom(first *fabric.Node, start mad.Path, avoid map[*fabric.Port]bool, stop *fabric.Node) *drTree {
	t := &drTree{first: first, start: start, paths: map[*fabric.Node]mad.Path{first: start}, reach: map[*fabric.Node]drHop{}}
	if first == stop || first.Type != mad.NodeSwitch {
		return t
	}
	queue := []*fabric.Node{first}
	for len(queue) > 0 {
		sw := queue[0]
		queue = queue[1:]
		for _, p := range sw.Ports {
			if p == nil || p.Num == 0 || p.Remote == nil || avoid[p] || p.PhysState != mad.PhysLinkUp {
				continue
			}
			next := p.Remote.Node
			if _, ok := t.reach[next]; !ok {
				t.reach[next] = drHop{sw, p.Num}
			}
			if next == stop {
				return t
			}
			if next.Type != mad.NodeSwitch || t.paths[next] != nil || len(t.paths[sw]) >= maxHops {
				continue
			}
			t.paths[next] = t.paths[sw].Extend(p.Num)
			queue = append(queue, next)
		}
	}
	return t
}

// to is the route to n the search found, nil when none.
func (t *drTree) to(n *fabric.Node) mad.Path {
	switch {
	case n == nil:
		return nil
	case n == t.first:
		return t.start
	}
	h, ok := t.reach[n]
	if !ok {
		return nil
	}
	return t.paths[h.sw].Extend(h.num)
}

// noTableOnRoute is the first switch of tables (GUIDs) that the LID
// route from the gate's port to n reaches, following the snapshot's
// tables (n itself included), or nil: there the simulator forwards no
// LID-routed MAD.
func (r *reach) noTableOnRoute(n *fabric.Node, tables map[uint64]string) *fabric.Node {
	if n == nil || len(tables) == 0 || !r.lid(n) || r.local == nil || r.local.Remote == nil {
		return nil
	}
	lid := lidPort(n).LID
	sw := r.local.Remote.Node
	for hop := 0; hop < maxHops; hop++ {
		if tables[sw.GUID] != "" {
			return sw
		}
		if sw == n || sw.Switch == nil {
			return nil
		}
		p := egress(sw, lid)
		if p == nil || p.Remote == nil {
			return nil
		}
		sw = p.Remote.Node
	}
	return nil
}

// lidPort is the port whose LID a LID-routed SMP to n goes to: port 0
// for a switch, a CA's first port with a LID; a port without a LID (its
// LID 0: nothing to follow) when n has none.
func lidPort(n *fabric.Node) *fabric.Port {
	for _, p := range n.Ports {
		if p != nil && p.LID != 0 {
			return p
		}
	}
	return &fabric.Port{Node: n}
}

// refresh re-reads ports' PortInfo as discover.Refresh does, each node
// the way reach says, and the ports of a node that did not answer once
// more by a directed route around the way that failed (each read sent
// once); only what failed both ways is returned.
func (r *reach) refresh(ctx context.Context, e *transport.Engine, ports []*fabric.Port) []fabric.Unreachable {
	var byLID, byPath []*fabric.Port
	for _, p := range ports {
		if r.lid(p.Node) {
			byLID = append(byLID, p)
		} else {
			byPath = append(byPath, p)
		}
	}
	var bad []fabric.Unreachable
	if len(byLID) > 0 {
		bad = append(bad, discover.Refresh(ctx, e, byLID, true, 0)...)
	}
	if len(byPath) > 0 {
		bad = append(bad, discover.Refresh(ctx, e, byPath, false, 0)...)
	}
	if ctx.Err() != nil {
		return bad
	}
	again := map[*fabric.Node]bool{}
	for _, u := range bad {
		if n := r.f.NodeByGUID(u.FromGUID); n != nil && !again[n] && transport.Unanswered(u.Err) && r.retry(ctx, e, n) {
			again[n] = true
			r.first[n] = u.Err
		}
	}
	if len(again) == 0 {
		return r.saidBothWays(bad)
	}
	var kept []fabric.Unreachable
	for _, u := range bad {
		if !again[r.f.NodeByGUID(u.FromGUID)] {
			kept = append(kept, u)
		}
	}
	var retried []*fabric.Port
	for _, p := range ports {
		if again[p.Node] {
			retried = append(retried, p)
		}
	}
	return r.saidBothWays(append(kept, discover.Refresh(ctx, e.Once(), retried, false, 0)...))
}

// refreshSwitchesFirst re-reads ports as refresh does, the switches'
// ports first, in one batch, then the CA ports whose switch end (in
// cabled, the snapshot's far end of each port) has a link now. A CA port
// whose switch end now reads without a link (mad.PhysState.LinkUp, the
// rule discovery follows) cannot answer: it is sent nothing, and returned
// in down, its link's state known from the switch end (trial F8: the gate
// waited the MAD timeout for each such HCA). A CA behind a switch port
// that could not be read, or that has a link, is read as before: one that
// does not answer stays unread (could not decide).
func (r *reach) refreshSwitchesFirst(ctx context.Context, e *transport.Engine, ports []*fabric.Port, cabled map[*fabric.Port]*fabric.Port) (bad []fabric.Unreachable, down []*fabric.Port) {
	var switches, cas []*fabric.Port
	for _, p := range ports {
		if p.Node.Type == mad.NodeSwitch {
			switches = append(switches, p)
		} else {
			cas = append(cas, p)
		}
	}
	bad = r.refresh(ctx, e, switches)
	if len(cas) == 0 || ctx.Err() != nil {
		return bad, nil
	}
	type portKey struct {
		guid uint64
		num  uint8
	}
	read := map[portKey]bool{}
	for _, p := range switches {
		read[portKey{p.Node.GUID, p.Num}] = true
	}
	for _, u := range bad {
		if u.FromPort != 0 {
			delete(read, portKey{u.FromGUID, u.FromPort})
		}
	}
	var ask []*fabric.Port
	for _, p := range cas {
		q := cabled[p]
		if q == nil || !read[portKey{q.Node.GUID, q.Num}] {
			ask = append(ask, p)
			continue
		}
		if !q.PhysState.LinkUp() {
			down = append(down, p)
			continue
		}
		if sw := q.Node; r.lid(p.Node) && r.dr[sw] && r.first[sw] != nil && sw.Path != nil {
			// The LID-routed SMPs to its switch went unanswered and the
			// directed route around them answered: a request to the
			// CA's LID ends through that switch, and would most likely
			// wait out the same loss (a black hole in its table). Read
			// by the route that answered, one hop on: one timeout per
			// gate for a black hole at a job's leaf, not one more for
			// its HCAs.
			p.Node.Path, r.dr[p.Node] = sw.Path.Extend(q.Num), true
			r.behindLost[p.Node] = sw
		}
		ask = append(ask, p)
	}
	return append(bad, r.refresh(ctx, e, ask)...), down
}

// saidBothWays words the failures of nodes read by a directed route
// after their first way failed with both ways (bothWays).
func (r *reach) saidBothWays(bad []fabric.Unreachable) []fabric.Unreachable {
	for i, u := range bad {
		if n := r.f.NodeByGUID(u.FromGUID); n != nil {
			if err := r.bothWays(n, u.Err); err != u.Err {
				bad[i].Err, bad[i].Reason = err, err.Error()
			}
		}
	}
	return bad
}

// partitions reads the ports' P_Key tables as pkeyread.Read does, by
// directed route those of a switch that answered only that way and of a
// CA whose switch did (its table is read through that switch).
func (r *reach) partitions(ctx context.Context, e *transport.Engine, ports []*fabric.Port) *checks.PartitionView {
	if !r.byLID {
		return pkeyread.Read(ctx, e, r.f, ports, e.Local().PortNum, false)
	}
	var byLID, byPath []*fabric.Port
	for _, p := range ports {
		via := p.Node
		if via.Type != mad.NodeSwitch && p.Remote != nil {
			via = p.Remote.Node
		}
		if r.lid(via) {
			byLID = append(byLID, p)
		} else {
			byPath = append(byPath, p)
		}
	}
	v := pkeyread.Read(ctx, e, r.f, byLID, e.Local().PortNum, true)
	if len(byPath) > 0 {
		w := pkeyread.Read(ctx, e, r.f, byPath, e.Local().PortNum, false)
		for p, err := range w.Errs {
			via := p.Node
			if via.Type != mad.NodeSwitch && p.Remote != nil {
				via = p.Remote.Node
			}
			if both := r.bothWays(via, err); both != err {
				w.Errs[p], w.Unread[p] = both, both.Error()
			}
		}
		maps.Copy(v.Tables, w.Tables)
		maps.Copy(v.Unread, w.Unread)
		maps.Copy(v.Errs, w.Errs)
	}
	return v
}
