// Package discover walks a subnet with directed-route SMPs, the way
// libibnetdisc does, but with many SMPs in flight across different
// switches: NodeInfo at each path; for a new node NodeDescription,
// SwitchInfo (switches) and PortInfo of its ports; then the neighbours
// behind every port whose physical state is LinkUp. Paths are never
// extended through a CA. Nodes that do not answer are recorded as
// Unreachable and discovery goes on; nodes claiming a GUID already seen at
// a place where that node cannot be are recorded as DuplicateGUIDs and
// explored as nodes of their own.
package discover

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Options configure a discovery. Timeouts and retries are the Engine's
// (transport.Options); these options shape the walk.
type Options struct {
	// Outstanding is the most SMPs discovery keeps in flight (the
	// engine's per-destination window still applies). Zero: the engine's
	// window.
	Outstanding int
	// MaxHops is the longest directed route tried (default and maximum
	// 63).
	MaxHops int
	// Start is the directed route of the node to start from (empty: the
	// local node). Paths in the result include it.
	Start mad.Path
	// NoMlnxExtPortInfo skips the Mellanox ExtendedPortInfo query that
	// tells FDR10 from QDR (like MLX_EPI=false in ibdiag.conf).
	NoMlnxExtPortInfo bool
	// Progress, if set, is called after every node read, one call at a
	// time, from discovery's goroutines. It must return quickly.
	Progress func(Progress)
}

// Progress is a snapshot for a progress display.
type Progress struct {
	Nodes       int // nodes found
	Switches    int
	Unreachable int
	Outstanding int // SMPs in flight now
	Sent        int // SMPs sent so far (first attempts and retries)
}

// Run discovers the subnet reachable from e's port. It returns the fabric
// found even when parts of it could not be read (see
// fabric.Fabric.Unreachable); the error is non-nil only when discovery
// could not start (the start node did not answer) or ctx ended.
func Run(ctx context.Context, e *transport.Engine, opts Options) (*fabric.Fabric, error) {
	if opts.MaxHops <= 0 || opts.MaxHops > mad.MaxHops {
		opts.MaxHops = mad.MaxHops
	}
	if len(opts.Start) > opts.MaxHops {
		return nil, fmt.Errorf("discover: start path %v has more than %d hops", opts.Start, opts.MaxHops)
	}
	if opts.Outstanding <= 0 {
		opts.Outstanding = e.Options().Window
	}
	d := &discovery{
		e:      e,
		opts:   opts,
		sem:    make(chan struct{}, opts.Outstanding),
		byGUID: make(map[uint64][]*node),
		per:    e.Options().PerDest,
	}
	d.cond = sync.NewCond(&d.mu)
	d.run(ctx)
	if err := ctx.Err(); err != nil {
		return d.build(), fmt.Errorf("discover: interrupted after %d nodes: %w", len(d.nodes), err)
	}
	if d.start == nil {
		reason := "no answer"
		if len(d.unreachable) > 0 {
			reason = d.unreachable[0].err.Error()
		}
		return nil, fmt.Errorf("discover: the start node (path %v) did not answer NodeInfo: %s", opts.Start, reason)
	}
	return d.build(), nil
}

// node is a node being discovered.
type node struct {
	ni      mad.NodeInfo
	path    mad.Path // the path it is read by
	creator *arrival // nil for the start node
	desc    string
	si      *mad.SwitchInfo
	pi      []*mad.PortInfo // by port number; nil where not read
	fdr10   []*mad.MlnxExtPortInfo
	out     map[uint8]*arrival // what exploring each port found
	claimed map[uint8]*arrival // accepted arrivals by the port they came in on
	canon   mad.Path           // canonical path, set by build
	fn      *fabric.Node
}

// arrival is one NodeInfo answer: the node at path, entered through its
// port ni.LocalPortNum, reached from port fromPort of from (nil: start).
type arrival struct {
	from     *node
	fromPort uint8
	path     mad.Path
	ni       mad.NodeInfo
	pi       *mad.PortInfo // a CA's port read through this arrival
	target   *node         // the node it was resolved to
}

type failure struct {
	from     *node
	fromPort uint8
	path     mad.Path
	target   *node // the node whose attribute could not be read, if any
	what     string
	err      error
}

type discovery struct {
	e    *transport.Engine
	opts Options
	sem  chan struct{}
	per  int

	mu          sync.Mutex
	cond        *sync.Cond
	queue       []func(context.Context)
	busy        int // jobs queued or running
	start       *node
	nodes       []*node
	byGUID      map[uint64][]*node
	pending     []*arrival // arrivals at known GUIDs, resolved between rounds
	accepted    []*arrival // arrivals that are links: creators and resolved ones
	unreachable []failure
	switches    int
}

// run drives rounds: a concurrent walk until no work is left, then the
// resolution of arrivals at known GUIDs, which may find duplicates to walk.
func (d *discovery) run(ctx context.Context) {
	d.enqueue(func(ctx context.Context) { d.probe(ctx, nil, 0, d.opts.Start) })
	for round := 0; round < 64; round++ {
		d.drain(ctx)
		if ctx.Err() != nil || !d.resolve() {
			return
		}
	}
}

func (d *discovery) enqueue(job func(context.Context)) {
	d.mu.Lock()
	d.queue = append(d.queue, job)
	d.busy++
	d.mu.Unlock()
	d.cond.Signal()
}

// drain runs queued jobs on Outstanding workers until none is left.
func (d *discovery) drain(ctx context.Context) {
	var wg sync.WaitGroup
	for range d.opts.Outstanding {
		wg.Go(func() {
			for {
				d.mu.Lock()
				for len(d.queue) == 0 && d.busy > 0 {
					d.cond.Wait()
				}
				if d.busy == 0 {
					d.mu.Unlock()
					d.cond.Broadcast()
					return
				}
				job := d.queue[0]
				d.queue[0] = nil
				d.queue = d.queue[1:]
				d.mu.Unlock()
				if ctx.Err() == nil {
					job(ctx)
				}
				d.mu.Lock()
				d.busy--
				done := d.busy == 0
				d.mu.Unlock()
				if done {
					d.cond.Broadcast()
				}
			}
		})
	}
	wg.Wait()
}

// get reads attribute a at path through the discovery window.
func (d *discovery) get(ctx context.Context, path mad.Path, a mad.Attribute, mod uint32) error {
	select {
	case d.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-d.sem }()
	_, err := d.e.GetSMP(ctx, path, a, mod)
	return err
}

func (d *discovery) fail(f failure) {
	d.mu.Lock()
	d.unreachable = append(d.unreachable, f)
	d.mu.Unlock()
}

// probe reads NodeInfo at path, reached from port fromPort of from.
func (d *discovery) probe(ctx context.Context, from *node, fromPort uint8, path mad.Path) {
	var ni mad.NodeInfo
	err := d.get(ctx, path, &ni, 0)
	if err == nil {
		err = ni.Validate()
	}
	if err != nil {
		if ctx.Err() == nil {
			d.fail(failure{from: from, fromPort: fromPort, path: path, what: "NodeInfo", err: err})
		}
		return
	}
	a := &arrival{from: from, fromPort: fromPort, path: path, ni: ni}
	d.mu.Lock()
	known := len(d.byGUID[ni.NodeGUID]) > 0
	if known {
		d.pending = append(d.pending, a)
	} else {
		d.newNodeLocked(a)
	}
	d.mu.Unlock()
	if !known {
		d.readNode(ctx, a.target)
		return
	}
	if ni.NodeType != mad.NodeSwitch {
		// A CA or router entered through another of its ports: read that
		// port's PortInfo here, the only path that reaches it.
		pi := new(mad.PortInfo)
		if err := d.get(ctx, path, pi, uint32(ni.LocalPortNum)); err != nil {
			if ctx.Err() == nil {
				d.fail(failure{from: from, fromPort: fromPort, path: path, what: fmt.Sprintf("PortInfo %d", ni.LocalPortNum), err: err})
			}
			return
		}
		a.pi = pi
	}
}

// newNodeLocked makes a node of arrival a. d.mu is held.
func (d *discovery) newNodeLocked(a *arrival) *node {
	n := &node{
		ni:      a.ni,
		path:    a.path,
		pi:      make([]*mad.PortInfo, int(a.ni.NumPorts)+1),
		fdr10:   make([]*mad.MlnxExtPortInfo, int(a.ni.NumPorts)+1),
		out:     make(map[uint8]*arrival),
		claimed: make(map[uint8]*arrival),
	}
	if a.from == nil {
		d.start = n
	} else {
		n.creator = a
		n.claimed[a.ni.LocalPortNum] = a
		d.accepted = append(d.accepted, a)
	}
	a.target = n
	d.nodes = append(d.nodes, n)
	d.byGUID[a.ni.NodeGUID] = append(d.byGUID[a.ni.NodeGUID], n)
	if a.ni.NodeType == mad.NodeSwitch {
		d.switches++
	}
	return n
}

// readNode reads a new node's attributes and queues its neighbours.
func (d *discovery) readNode(ctx context.Context, n *node) {
	type read struct {
		what string
		a    mad.Attribute
		mod  uint32
		port int // PortInfo: which port; -1 otherwise
	}
	var reads []read
	nd := new(mad.NodeDescription)
	reads = append(reads, read{"NodeDescription", nd, 0, -1})
	var si *mad.SwitchInfo
	isSwitch := n.ni.NodeType == mad.NodeSwitch
	if isSwitch {
		si = new(mad.SwitchInfo)
		reads = append(reads, read{"SwitchInfo", si, 0, -1})
		for p := 0; p <= int(n.ni.NumPorts); p++ {
			reads = append(reads, read{fmt.Sprintf("PortInfo %d", p), new(mad.PortInfo), uint32(p), p})
		}
	} else {
		p := int(n.ni.LocalPortNum)
		reads = append(reads, read{fmt.Sprintf("PortInfo %d", p), new(mad.PortInfo), uint32(p), p})
	}
	d.parallel(ctx, len(reads), func(i int) {
		r := reads[i]
		if err := d.get(ctx, n.path, r.a, r.mod); err != nil {
			if ctx.Err() == nil {
				d.fail(failure{from: nil, path: n.path, target: n, what: r.what, err: err})
			}
			return
		}
		if r.port >= 0 {
			d.mu.Lock()
			n.pi[r.port] = r.a.(*mad.PortInfo)
			d.mu.Unlock()
		}
	})
	d.mu.Lock()
	n.desc = nd.Text
	n.si = si
	d.mu.Unlock()

	// FDR10 shows as QDR in PortInfo; Mellanox devices tell it apart in
	// their ExtendedPortInfo.
	if !d.opts.NoMlnxExtPortInfo && mad.MlnxExtPortInfoSupported(n.ni.DeviceID) {
		var qdr []int
		for p, pi := range n.pi {
			if pi != nil && p > 0 && pi.PhysState == mad.PhysLinkUp && pi.SpeedActive(d.caps(n), false) == mad.SpeedQDR {
				qdr = append(qdr, p)
			}
		}
		d.parallel(ctx, len(qdr), func(i int) {
			m := new(mad.MlnxExtPortInfo)
			if err := d.get(ctx, n.path, m, uint32(qdr[i])); err == nil {
				d.mu.Lock()
				n.fdr10[qdr[i]] = m
				d.mu.Unlock()
			}
		})
	}
	d.progress()

	// Explore: every LinkUp port of a switch but the one we came in by;
	// from the start node also when it is a CA (its own port). Never
	// through any other CA.
	if !isSwitch && (n != d.start || len(n.path) > 0) {
		return
	}
	if len(n.path) >= d.opts.MaxHops {
		return
	}
	for p := 1; p <= int(n.ni.NumPorts); p++ {
		if n.creator != nil && uint8(p) == n.ni.LocalPortNum {
			continue
		}
		if !isSwitch && uint8(p) != n.ni.LocalPortNum {
			continue // a CA answers for the port the SMP came in by only
		}
		pi := n.pi[p]
		if pi == nil || pi.PhysState != mad.PhysLinkUp {
			continue
		}
		port := uint8(p)
		next := n.path.Extend(port)
		d.enqueue(func(ctx context.Context) { d.probe(ctx, n, port, next) })
	}
}

// parallel runs f(0..n-1) on up to the engine's per-destination window
// goroutines: one node's reads all go to one destination.
func (d *discovery) parallel(ctx context.Context, n int, f func(int)) {
	if n == 0 {
		return
	}
	workers := min(d.per, n)
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				f(i)
			}
		})
	}
	wg.Wait()
}

func (d *discovery) caps(n *node) *mad.PortInfo {
	if n.ni.NodeType == mad.NodeSwitch {
		return n.pi[0] // may be nil: the port's own masks then
	}
	return nil
}

func (d *discovery) progress() {
	if d.opts.Progress == nil {
		return
	}
	st := d.e.Stats()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.opts.Progress(Progress{
		Nodes:       len(d.nodes),
		Switches:    d.switches,
		Unreachable: len(d.unreachable),
		Outstanding: st.InFlight,
		Sent:        int(st.Sent),
	})
}

// resolve assigns the arrivals at known GUIDs to the node they reached, or
// makes a duplicate node of the first that fits none. It reports whether
// new nodes must be walked.
//
// An arrival from port fp of F entering port lp of a node N with the same
// GUID fits N when the node type and port count agree, N's port lp is not
// known to be physically down, and the cable at N's port lp is not known
// to lead elsewhere: lp is not the port N was first entered by (that cable
// leads to N's creator), exploring lp from N did not find another port,
// and no other arrival already took lp. Two switches sharing a GUID fail
// this as soon as their neighbours differ, which is how libibnetdisc and
// ibdiagnet notice them too.
func (d *discovery) resolve() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	// What each node found through its own ports.
	for _, n := range d.nodes {
		if n.creator != nil && n.creator.from != nil {
			n.creator.from.out[n.creator.fromPort] = n.creator
		}
	}
	for _, a := range d.pending {
		if a.from != nil {
			a.from.out[a.fromPort] = a
		}
	}
	slices.SortFunc(d.pending, func(x, y *arrival) int { return comparePaths(x.path, y.path) })
	var rest []*arrival
	grew := false
	dupMade := make(map[uint64]bool)
	for _, a := range d.pending {
		var fit *node
		for _, n := range d.byGUID[a.ni.NodeGUID] {
			if d.fits(a, n) {
				fit = n
				break
			}
		}
		switch {
		case fit != nil:
			a.target = fit
			d.accepted = append(d.accepted, a)
			fit.claimed[a.ni.LocalPortNum] = a
			if a.pi != nil && int(a.ni.LocalPortNum) < len(fit.pi) && fit.pi[a.ni.LocalPortNum] == nil {
				fit.pi[a.ni.LocalPortNum] = a.pi
			}
		case !dupMade[a.ni.NodeGUID]:
			// A second node with this GUID: walk it as a node of its own.
			dupMade[a.ni.NodeGUID] = true
			n := d.newNodeLocked(a)
			d.queue = append(d.queue, func(ctx context.Context) { d.readNode(ctx, n) })
			d.busy++
			grew = true
		default:
			rest = append(rest, a) // wait until the new node is read
		}
	}
	d.pending = rest
	return grew
}

func (d *discovery) fits(a *arrival, n *node) bool {
	if a.ni.NodeType != n.ni.NodeType || a.ni.NumPorts != n.ni.NumPorts {
		return false
	}
	lp := a.ni.LocalPortNum
	if int(lp) < len(n.pi) && n.pi[lp] != nil && n.pi[lp].PhysState != mad.PhysLinkUp {
		return false
	}
	if c := n.claimed[lp]; c != nil && c != a {
		return false
	}
	if o := n.out[lp]; o != nil && a.from != nil {
		// Exploring lp from n found a port: it must be a's source.
		if o.ni.NodeGUID != a.from.ni.NodeGUID || o.ni.LocalPortNum != a.fromPort {
			return false
		}
	}
	if a.ni.NodeType == mad.NodeSwitch && a.ni.PortGUID != n.ni.PortGUID {
		return false // a switch's NodeInfo names its port 0 whatever the path
	}
	return true
}

func comparePaths(a, b mad.Path) int {
	if c := cmp.Compare(len(a), len(b)); c != 0 {
		return c
	}
	return slices.Compare(a, b)
}

// errString shortens the reasons recorded for unreachable nodes.
func errString(err error) string {
	var te *transport.TimeoutError
	if errors.As(err, &te) {
		return fmt.Sprintf("no response after %d attempts", te.Attempts)
	}
	var se *transport.StatusError
	if errors.As(err, &se) {
		return "status " + se.Status.String()
	}
	return err.Error()
}
