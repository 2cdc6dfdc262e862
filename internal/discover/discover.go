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
	"github.com/ibdoctor/ibdoctor/internal/fifo"
	"github.com/ibdoctor/ibdoctor/internal/pump"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/internal/words"
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
	// Unread is what the source itself records it could not read (a
	// saved file's tool error lines, fabric.FileInfo.Unread): added to
	// the result's Unreachable, so a fabric read from such a file is
	// never reported complete.
	Unread []fabric.Unreachable
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
		byGUID: make(map[uint64][]*node),
		per:    e.Options().PerDest,
	}
	d.cond = sync.NewCond(&d.mu)
	d.run(ctx)
	if err := ctx.Err(); err != nil {
		return d.build().AddUnreachable(opts.Unread), fmt.Errorf("discover: interrupted after %d nodes: %w", len(d.nodes), err)
	}
	if d.start == nil {
		reason := "no answer"
		if len(d.unreachable) > 0 {
			reason = d.unreachable[0].err.Error()
		}
		return nil, fmt.Errorf("discover: the start node (path %v) did not answer NodeInfo: %s", opts.Start, reason)
	}
	return d.build().AddUnreachable(opts.Unread), nil
}

// node is a node being discovered.
type node struct {
	ni      mad.NodeInfo
	path    mad.Path // the path it is read by
	creator *arrival // nil for the start node
	desc    string
	// descLost: NodeDescription went unanswered (desc is unknown, not empty).
	descLost bool
	si       *mad.SwitchInfo
	pi       []*mad.PortInfo        // by port number; nil where not read
	fdr10    []*mad.MlnxExtPortInfo // by port; nil until an FDR10 read answers
	// fdr10Lost marks ports whose FDR10 read went unanswered: their
	// speed is unknown (QDR or FDR10), not QDR.
	fdr10Lost []bool
	// piLost marks ports whose PortInfo went unanswered: the port is in
	// the model, its state unknown (not absent, not down).
	piLost  []bool
	out     []*arrival // by port: what exploring it found; nil until resolve
	claimed []*arrival // by port: the accepted arrival that came in on it
	canon   mad.Path   // canonical path, set by build
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
	per  int // reads in flight to one node at most (the engine's PerDest)

	mu       sync.Mutex
	cond     *sync.Cond
	reads    fifo.Queue[*job] // jobs of nodes being read: served first
	probes   fifo.Queue[*job] // NodeInfo probes of new paths
	inFlight int              // reads handed to the engine, not yet completed
	busy     int              // jobs not yet finished
	sender   pump.Pump[sub]

	start       *node
	nodes       []*node
	byGUID      map[uint64][]*node
	pending     []*arrival // arrivals at known GUIDs, resolved between rounds
	accepted    []*arrival // arrivals that are links: creators and resolved ones
	unreachable []failure
	switches    int
}

// job is a set of attribute reads at one path, sent at most per at a
// time, and what to do once all have completed.
type job struct {
	path   mad.Path
	reads  []read
	next   int  // reads[next] is the next to send
	active int  // reads in flight
	left   int  // reads not yet completed
	queued bool // in one of the discovery's queues
	probe  bool // a NodeInfo probe (low priority)
	finish func(ctx context.Context)
}

type read struct {
	what string
	a    mad.Attribute
	mod  uint32
	port int // PortInfo: which port; -1 otherwise
	// other: a CA's PortInfo of a port other than the one the SMP
	// arrives by
	other bool
	err   error
}

// run drives rounds: a walk until no work is left, then the resolution of
// arrivals at known GUIDs, which may find duplicates to walk.
func (d *discovery) run(ctx context.Context) {
	d.add(ctx, d.probeJob(nil, 0, d.opts.Start))
	for round := 0; round < 64; round++ {
		d.mu.Lock()
		for d.busy > 0 {
			d.cond.Wait()
		}
		d.mu.Unlock()
		if ctx.Err() != nil || !d.resolve(ctx) {
			return
		}
	}
}

// add queues jobs and sends what the window allows.
func (d *discovery) add(ctx context.Context, jobs ...*job) {
	d.mu.Lock()
	for _, j := range jobs {
		d.addLocked(j)
	}
	d.mu.Unlock()
	d.pump(ctx)
}

func (d *discovery) addLocked(j *job) {
	d.busy++
	j.left = len(j.reads)
	j.queued = true
	if j.probe {
		d.probes.Push(j)
	} else {
		d.reads.Push(j)
	}
}

// pump hands reads to the engine while fewer than Outstanding are in
// flight: reads of nodes being read first, then probes. Completions call
// it again; one goroutine pumps at a time, the others leave it a note.
func (d *discovery) pump(ctx context.Context) {
	d.sender.Run(&d.mu, func(batch []sub) []sub {
		for d.inFlight < d.opts.Outstanding {
			q := &d.reads
			if q.Len() == 0 {
				q = &d.probes
			}
			if q.Len() == 0 {
				break
			}
			j := q.Peek()
			r := &j.reads[j.next]
			j.next++
			j.active++
			d.inFlight++
			if j.next == len(j.reads) || j.active >= d.per {
				q.Pop()
				j.queued = false
			}
			batch = append(batch, sub{j, r})
		}
		return batch
	}, func(s sub) { d.send(ctx, s.j, s.r) })
}

// sub is one read handed to the engine.
type sub struct {
	j *job
	r *read
}

// send starts one read.
func (d *discovery) send(ctx context.Context, j *job, r *read) {
	if err := ctx.Err(); err != nil {
		d.completed(ctx, j, r, err)
		return
	}
	err := d.e.GoSMP(ctx, j.path, r.a, r.mod, func(_ *mad.SMP, err error) { d.completed(ctx, j, r, err) })
	if err != nil {
		d.completed(ctx, j, r, err)
	}
}

// completed records the end of one read of j and finishes j after its
// last.
func (d *discovery) completed(ctx context.Context, j *job, r *read, err error) {
	d.mu.Lock()
	r.err = err
	d.inFlight--
	j.active--
	j.left--
	if j.next < len(j.reads) && !j.queued {
		j.queued = true
		d.reads.Push(j)
	}
	last := j.left == 0
	d.mu.Unlock()
	if last {
		j.finish(ctx)
		d.mu.Lock()
		d.busy--
		if d.busy == 0 {
			d.cond.Broadcast()
		}
		d.mu.Unlock()
	}
	d.pump(ctx)
}

func (d *discovery) fail(f failure) {
	d.mu.Lock()
	d.unreachable = append(d.unreachable, f)
	d.mu.Unlock()
}

// probeJob reads NodeInfo at path, reached from port fromPort of from.
func (d *discovery) probeJob(from *node, fromPort uint8, path mad.Path) *job {
	ni := new(mad.NodeInfo)
	j := &job{path: path, probe: true, reads: []read{{what: "NodeInfo", a: ni, port: -1}}}
	j.finish = func(ctx context.Context) {
		err := j.reads[0].err
		if err == nil {
			err = ni.Validate()
		}
		if err != nil {
			if ctx.Err() == nil {
				d.fail(failure{from: from, fromPort: fromPort, path: path, what: "NodeInfo", err: err})
			}
			return
		}
		d.arrived(ctx, &arrival{from: from, fromPort: fromPort, path: path, ni: *ni})
	}
	return j
}

// arrived handles a NodeInfo answer: a new node is read; a CA or router
// already known, entered through another of its ports, has that port's
// PortInfo read here, the only path that reaches it.
func (d *discovery) arrived(ctx context.Context, a *arrival) {
	d.mu.Lock()
	if len(d.byGUID[a.ni.NodeGUID]) == 0 {
		n := d.newNodeLocked(a)
		d.addLocked(d.nodeJob(n))
		d.mu.Unlock()
		return // the caller pumps
	}
	d.pending = append(d.pending, a)
	if a.ni.NodeType != mad.NodeSwitch {
		pi := new(mad.PortInfo)
		what := fmt.Sprintf("PortInfo %d", a.ni.LocalPortNum)
		j := &job{path: a.path, reads: []read{{what: what, a: pi, mod: uint32(a.ni.LocalPortNum), port: -1}}}
		j.finish = func(ctx context.Context) {
			if err := j.reads[0].err; err != nil {
				if ctx.Err() == nil {
					d.fail(failure{from: a.from, fromPort: a.fromPort, path: a.path, what: what, err: err})
				}
				return
			}
			d.mu.Lock()
			a.pi = pi
			d.mu.Unlock()
		}
		d.addLocked(j)
	}
	d.mu.Unlock()
}

// newNodeLocked makes a node of arrival a. d.mu is held.
func (d *discovery) newNodeLocked(a *arrival) *node {
	n := &node{
		ni:      a.ni,
		path:    a.path,
		pi:      make([]*mad.PortInfo, int(a.ni.NumPorts)+1),
		claimed: make([]*arrival, int(a.ni.NumPorts)+1),
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

// nodeJob reads a new node's attributes; its finish reads FDR10 where it
// applies and queues the neighbours.
func (d *discovery) nodeJob(n *node) *job {
	nd := new(mad.NodeDescription)
	reads := []read{{what: "NodeDescription", a: nd, port: -1}}
	var si *mad.SwitchInfo
	isSwitch := n.ni.NodeType == mad.NodeSwitch
	if isSwitch {
		si = new(mad.SwitchInfo)
		reads = append(reads, read{what: "SwitchInfo", a: si, port: -1})
		for p := 0; p <= int(n.ni.NumPorts); p++ {
			reads = append(reads, read{what: "PortInfo", a: new(mad.PortInfo), mod: uint32(p), port: p})
		}
	} else {
		p := int(n.ni.LocalPortNum)
		reads = append(reads, read{what: "PortInfo", a: new(mad.PortInfo), mod: uint32(p), port: p})
		// A multi-port CA's other ports, through the port it was reached
		// by: a port without a link is reached by no other path, and a
		// dual-rail HCA that lost one rail is only seen there (trial
		// A15: port 2 Polling, still holding the LID the SM gave it).
		for o := 1; o <= int(n.ni.NumPorts); o++ {
			if o != p {
				reads = append(reads, read{what: "PortInfo", a: new(mad.PortInfo), mod: uint32(o), port: o, other: true})
			}
		}
	}
	j := &job{path: n.path, reads: reads}
	j.finish = func(ctx context.Context) {
		var fails []failure
		d.mu.Lock()
		for _, r := range j.reads {
			if r.err != nil && r.other && !unanswered(r.err) {
				// The adapter answers for the port the SMP came in by
				// only (a status error): its other ports stay out of the
				// model, as when they were not asked for.
				continue
			}
			if r.err != nil {
				if ctx.Err() == nil {
					what := r.what
					if r.port >= 0 {
						what = fmt.Sprintf("PortInfo %d", r.port)
						if n.piLost == nil {
							n.piLost = make([]bool, len(n.pi))
						}
						n.piLost[r.port] = true
					}
					fails = append(fails, failure{path: n.path, target: n, what: what, err: r.err})
				}
				continue
			}
			if r.port >= 0 {
				n.pi[r.port] = r.a.(*mad.PortInfo)
			}
		}
		d.unreachable = append(d.unreachable, fails...)
		if j.reads[0].err == nil {
			n.desc = nd.Text
		} else {
			n.descLost = true
		}
		if si != nil && j.reads[1].err == nil {
			n.si = si
		}
		d.mu.Unlock()
		if ctx.Err() != nil {
			return
		}
		// FDR10 shows as QDR in PortInfo; Mellanox devices tell it apart
		// in their ExtendedPortInfo.
		if !d.opts.NoMlnxExtPortInfo && mad.MlnxExtPortInfoSupported(n.ni.DeviceID) {
			var qdr []read
			for p, pi := range n.pi {
				if pi != nil && p > 0 && pi.PhysState == mad.PhysLinkUp && pi.SpeedActive(d.caps(n), false) == mad.SpeedQDR {
					qdr = append(qdr, read{what: "MlnxExtPortInfo", a: new(mad.MlnxExtPortInfo), mod: uint32(p), port: p})
				}
			}
			if len(qdr) > 0 {
				fj := &job{path: n.path, reads: qdr}
				fj.finish = func(ctx context.Context) {
					d.mu.Lock()
					for _, r := range fj.reads {
						if r.err != nil && ctx.Err() == nil && unanswered(r.err) {
							// No answer is not "no FDR10": the speed is unknown.
							if n.fdr10Lost == nil {
								n.fdr10Lost = make([]bool, len(n.pi))
							}
							n.fdr10Lost[r.port] = true
							d.unreachable = append(d.unreachable, failure{path: n.path, target: n, what: fmt.Sprintf("MlnxExtPortInfo %d", r.port), err: r.err})
						}
						if r.err == nil { // not all firmware has it (a status error): QDR stays QDR
							if n.fdr10 == nil {
								n.fdr10 = make([]*mad.MlnxExtPortInfo, len(n.pi))
							}
							n.fdr10[r.port] = r.a.(*mad.MlnxExtPortInfo)
						}
					}
					d.mu.Unlock()
					d.explored(ctx, n)
				}
				d.add(ctx, fj)
				return
			}
		}
		d.explored(ctx, n)
	}
	return j
}

// explored reports a node read and queues probes of its neighbours: every
// LinkUp port of a switch but the one we came in by; from the start node
// also when it is a CA (its own port). Never through any other CA.
func (d *discovery) explored(ctx context.Context, n *node) {
	d.progress()
	isSwitch := n.ni.NodeType == mad.NodeSwitch
	if !isSwitch && (n != d.start || len(n.path) > 0) {
		return
	}
	if len(n.path) >= d.opts.MaxHops {
		return
	}
	var probes []*job
	for p := 1; p <= int(n.ni.NumPorts); p++ {
		if n.creator != nil && uint8(p) == n.ni.LocalPortNum {
			continue
		}
		if !isSwitch && uint8(p) != n.ni.LocalPortNum {
			continue // a CA answers for the port the SMP came in by only
		}
		pi := n.pi[p]
		if pi == nil || !pi.PhysState.LinkUp() {
			continue
		}
		probes = append(probes, d.probeJob(n, uint8(p), n.path.Extend(uint8(p))))
	}
	d.add(ctx, probes...)
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
func (d *discovery) resolve(ctx context.Context) bool {
	d.mu.Lock()
	defer func() {
		d.mu.Unlock()
		d.pump(ctx)
	}()
	// What each node found through its own ports.
	for _, n := range d.nodes {
		if n.creator != nil && n.creator.from != nil {
			n.creator.from.setOut(n.creator.fromPort, n.creator)
		}
	}
	for _, a := range d.pending {
		if a.from != nil {
			a.from.setOut(a.fromPort, a)
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
			d.addLocked(d.nodeJob(n))
			grew = true
		default:
			rest = append(rest, a) // wait until the new node is read
		}
	}
	d.pending = rest
	return grew
}

// setOut records what exploring port p of n found.
func (n *node) setOut(p uint8, a *arrival) {
	if n.out == nil {
		n.out = make([]*arrival, len(n.claimed))
	}
	if int(p) < len(n.out) {
		n.out[p] = a
	}
}

func (n *node) outAt(p uint8) *arrival {
	if int(p) < len(n.out) {
		return n.out[p]
	}
	return nil
}

func (d *discovery) fits(a *arrival, n *node) bool {
	if a.ni.NodeType != n.ni.NodeType || a.ni.NumPorts != n.ni.NumPorts {
		return false
	}
	lp := a.ni.LocalPortNum
	if int(lp) < len(n.pi) && n.pi[lp] != nil && n.pi[lp].PhysState != mad.PhysLinkUp {
		return false
	}
	if int(lp) < len(n.claimed) && n.claimed[lp] != nil && n.claimed[lp] != a {
		return false
	}
	if o := n.outAt(lp); o != nil && a.from != nil {
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

// unanswered reports whether err means the MAD got no answer (as
// opposed to an answer with an error status).
func unanswered(err error) bool {
	var se *transport.StatusError
	return !errors.As(err, &se)
}

// errString shortens the reasons recorded for unreachable nodes.
func errString(err error) string {
	var te *transport.TimeoutError
	if errors.As(err, &te) {
		return fmt.Sprintf("no response after %s", words.Count(te.Attempts, "attempt"))
	}
	var se *transport.StatusError
	if errors.As(err, &se) {
		return "status " + se.Status.String()
	}
	return err.Error()
}
