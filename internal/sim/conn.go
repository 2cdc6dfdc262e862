package sim

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// ErrInvalidRoute is returned by Send for a directed-route SMP the local
// port refuses to send, as the kernel does with EINVAL: more than 63 hops,
// or (from a CA) an InitialPath[1] that is not the sending port.
var ErrInvalidRoute = errors.New("sim: invalid directed route")

// Attach returns a Conn bound to port of node. node is a NodeDescription,
// a GUID ("0x..."), or a host name that names one node; empty means the
// node the fabric file was written from (ibnetdiscover's "Initiated from
// node", a JSON fabric's local node) when it is a CA with an Active port,
// else the first CA that has a port up. port is a CA port number, or 0 for a
// switch's management port; on a CA, 0 means its first port that is up.
func (s *Sim) Attach(nodeRef string, portNum uint8) (transport.Conn, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var ni int32
	if nodeRef == "" {
		var err error
		if ni, err = s.defaultAttachLocked(); err != nil {
			return nil, err
		}
	} else {
		var err error
		if ni, err = s.resolveNode(nodeRef); err != nil {
			return nil, err
		}
	}
	return s.attach(ni, portNum)
}

// defaultAttachLocked is where Attach("", ...) attaches: the file's
// initiator when it is a CA with an Active port, else the first CA with an
// Active port, else one whose link is up but in Init (no SM has swept:
// directed-route SMPs still work from it). s.mu is held.
func (s *Sim) defaultAttachLocked() (int32, error) {
	if s.initiator >= 0 && s.nodes[s.initiator].hasActivePort() {
		return s.initiator, nil
	}
	for _, ok := range []func(*port) bool{(*port).active, (*port).linkUp} {
		for i := range s.nodes {
			if s.nodes[i].typ == mad.NodeSwitch {
				continue
			}
			for pi := 1; pi < len(s.nodes[i].ports); pi++ {
				if ok(&s.nodes[i].ports[pi]) {
					return int32(i), nil
				}
			}
		}
	}
	return -1, fmt.Errorf("sim: no CA has a port whose link is up to attach to; name a node")
}

// part is a set of nodes cables join, and how many links join them.
type part struct {
	nodes []int32
	links int
}

// parts splits the nodes into the sets cables join (links that are up),
// the one holding where Attach("", ...) attaches first, the others in
// file order: a sweep from there cannot reach them. Nil when there is
// nowhere to attach.
func (s *Sim) parts() []part {
	s.mu.RLock()
	defer s.mu.RUnlock()
	start, err := s.defaultAttachLocked()
	if err != nil {
		return nil
	}
	seen := make([]bool, len(s.nodes))
	walk := func(from int32) part {
		var pt part
		seen[from] = true
		queue := []int32{from}
		for len(queue) > 0 {
			pt.nodes = append(pt.nodes, queue[0])
			n := &s.nodes[queue[0]]
			queue = queue[1:]
			for pi := 1; pi < len(n.ports); pi++ {
				if !n.ports[pi].linkUp() {
					continue
				}
				pt.links++ // each link is seen from both ends
				if r := n.ports[pi].remote; !seen[r] {
					seen[r] = true
					queue = append(queue, r)
				}
			}
		}
		pt.links /= 2
		return pt
	}
	out := []part{walk(start)}
	for i := range s.nodes {
		if !seen[i] {
			out = append(out, walk(int32(i)))
		}
	}
	return out
}

// partNames are the descriptions of pt's nodes.
func (s *Sim) partNames(pt part) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, len(pt.nodes))
	for i, ni := range pt.nodes {
		out[i] = strings.TrimSpace(s.nodes[ni].desc)
	}
	return out
}

// AttachGUID is Attach by node GUID.
func (s *Sim) AttachGUID(guid uint64, portNum uint8) (transport.Conn, error) {
	return s.Attach(fmt.Sprintf("0x%016x", guid), portNum)
}

func (s *Sim) attach(ni int32, portNum uint8) (*Conn, error) {
	n := &s.nodes[ni]
	if n.typ == mad.NodeSwitch {
		if portNum != 0 {
			return nil, fmt.Errorf("sim: %s is a switch: attach to its management port 0, not port %d", s.nodeName(ni), portNum)
		}
	} else if portNum == 0 {
		portNum = 1
		for pi := 1; pi < len(n.ports); pi++ {
			if n.ports[pi].linkUp() {
				portNum = uint8(pi)
				break
			}
		}
	}
	if int(portNum) > n.numPorts() {
		return nil, fmt.Errorf("sim: %s has no port %d (ports 1..%d)", s.nodeName(ni), portNum, n.numPorts())
	}
	p := &n.ports[portNum]
	lid := p.lid
	if n.typ == mad.NodeSwitch {
		lid = n.ports[0].lid
	}
	c := &Conn{
		s:    s,
		node: ni,
		port: portNum,
		wake: make(chan struct{}, 1),
		done: make(chan struct{}),
		local: transport.LocalPort{
			Name:      fmt.Sprintf("sim:%s/%d", s.nodeName(ni), portNum),
			NodeGUID:  n.guid,
			PortGUID:  p.guid,
			PortNum:   portNum,
			LID:       lid,
			SMLID:     s.smLID,
			LinkLayer: "InfiniBand",

			NoVendorMADs: s.noFirmware,
			NoARInfo:     s.noAR,
		},
	}
	c.head.Store(math.MaxInt64)
	return c, nil
}

// Conn is a port's MAD endpoint in a simulated subnet. It implements
// transport.Conn.
type Conn struct {
	s     *Sim
	node  int32
	port  uint8
	local transport.LocalPort

	mu    sync.Mutex
	queue []*transport.Packet // answers ready for Recv
	pend  pendingHeap         // on the wall clock: answers not yet due
	seq   uint64              // pend's tie-break
	head  atomic.Int64        // pend[0].due, math.MaxInt64 when empty
	// closed is set under mu; Send and Recv's fast path read it alone.
	closed atomic.Bool
	wake   chan struct{}
	done   chan struct{}

	// got and gotAt are Recv's own: the answers it last took from queue
	// in one go, and how many of them it returned (a single reader, so
	// no lock for each answer).
	got   []*transport.Packet
	gotAt int

	jmu     sync.Mutex
	jobs    []sent       // sent on the wall clock, not yet answered (work)
	queued  atomic.Int32 // len(jobs), for work to wait on without jmu
	spare   []sent       // the batch work last emptied, for reuse
	working bool         // a work goroutine is running
}

var (
	_ transport.Conn            = (*Conn)(nil)
	_ transport.TimeoutNotifier = (*Conn)(nil)
)

// NotifiesTimeouts implements transport.TimeoutNotifier. On the wall
// clock every request the simulated fabric loses, or answers later than
// its Timeout, gets its StatusTimedOut notice, and an answer given in
// time is delivered however late the reader takes it: whether a node
// answered is the simulator's decision, not a race between the Engine's
// timer and its reader on a loaded machine. On another clock the notices
// come when the caller moves it, so the Engine keeps its own timer.
func (c *Conn) NotifiesTimeouts() bool { return c.s.wall }

// Local implements transport.Conn.
func (c *Conn) Local() transport.LocalPort { return c.local }

// Close implements transport.Conn. Answers still in flight are dropped.
func (c *Conn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed.Load() {
		return transport.ErrClosed
	}
	c.closed.Store(true)
	c.queue = nil
	c.pend = nil
	c.head.Store(math.MaxInt64)
	close(c.done)
	return nil
}

// Recv implements transport.Conn.
func (c *Conn) Recv(ctx context.Context) (*transport.Packet, error) {
	for {
		if c.gotAt < len(c.got) && !c.closed.Load() {
			p := c.got[c.gotAt]
			c.got[c.gotAt] = nil
			c.gotAt++
			return p, nil
		}
		c.mu.Lock()
		if c.closed.Load() {
			c.mu.Unlock()
			return nil, transport.ErrClosed
		}
		if len(c.queue) > 0 {
			// Take every answer ready at once: one lock round trip for
			// a batch, not for each answer.
			c.got, c.queue = c.queue, c.got[:0]
			c.gotAt = 0
			c.mu.Unlock()
			continue
		}
		p, wait := c.takeDue()
		c.mu.Unlock()
		if p != nil {
			return p, nil
		}
		if wait <= spinWindow.Nanoseconds() {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			c.spin(ctx)
			continue
		}
		var timer *time.Timer
		var fire <-chan time.Time
		if wait != math.MaxInt64 {
			timer = time.NewTimer(time.Duration(wait) - spinWindow)
			fire = timer.C
		}
		select {
		case <-c.wake:
		case <-c.done:
		case <-fire:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

func (c *Conn) deliver(p *transport.Packet) {
	c.mu.Lock()
	if c.closed.Load() {
		c.mu.Unlock()
		return
	}
	c.queue = append(c.queue, p)
	first := len(c.queue) == 1
	c.mu.Unlock()
	if !first {
		// Recv has not taken the answers before this one yet: it comes
		// back for the queue before it waits.
		return
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// deliverAfter delivers p once d has passed since start on the Sim's
// clock. On the wall clock Recv times it (precisely, from start: see
// deliver.go); any other clock's AfterFunc is given d from now.
func (c *Conn) deliverAfter(start time.Time, d time.Duration, p *transport.Packet) {
	if d <= 0 {
		c.deliver(p)
		return
	}
	if c.s.wall {
		c.schedule(start.Sub(c.s.epoch).Nanoseconds()+d.Nanoseconds(), p)
		return
	}
	c.s.clock.AfterFunc(d, func() { c.deliver(p) })
}

// Send implements transport.Conn. The MAD travels through the simulated
// fabric; its answer, if any, is queued for Recv after the simulated
// latency. A lost MAD produces nothing, unless p.Timeout is set: then,
// like the kernel's umad, a packet with Status StatusTimedOut carrying
// the request is queued after Timeout. With Options.Concurrent, Send
// checks the MAD and leaves the rest to the Conn's goroutine (work).
func (c *Conn) Send(ctx context.Context, p *transport.Packet) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if c.closed.Load() {
		return transport.ErrClosed
	}
	if len(p.MAD) < mad.Size {
		return fmt.Errorf("sim: MAD of %d bytes; send the full %d", len(p.MAD), mad.Size)
	}
	h, err := mad.PeekHeader(p.MAD)
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	if h.Method.IsResponse() {
		return nil // nobody in the simulated fabric asked
	}
	s := c.s
	switch {
	case h.Class == mad.ClassSubnDR:
		if p.Addr.QP != transport.QP0 {
			return fmt.Errorf("sim: SMPs go to QP0, not QP%d", p.Addr.QP)
		}
		// The header decodes (PeekHeader): decoding the SMP can only
		// fail on its hop fields, checked here on the bytes; the SMP is
		// decoded where it is answered.
		if hp, hc := p.MAD[6], p.MAD[7]; hc > mad.MaxHops || hp > mad.MaxHops+1 {
			var smp mad.SMP
			if err := smp.Unmarshal(p.MAD); err != nil {
				return fmt.Errorf("%w: %v", ErrInvalidRoute, err)
			}
		}
		if hc, ip1 := p.MAD[7], p.MAD[129]; hc > 0 && s.nodes[c.node].typ != mad.NodeSwitch && ip1 != c.port {
			return fmt.Errorf("%w: InitialPath[1] is %d but this CA port is %d", ErrInvalidRoute, ip1, c.port)
		}
	case h.Class == mad.ClassSubnLID:
		if p.Addr.QP != transport.QP0 {
			return fmt.Errorf("sim: SMPs go to QP0, not QP%d", p.Addr.QP)
		}
	case h.Class == mad.ClassPerfMgt:
		if p.Addr.QP != transport.QP1 {
			return fmt.Errorf("sim: PerfMgt MADs go to QP1, not QP%d", p.Addr.QP)
		}
	case h.Class == mad.ClassMlnxVendor:
		if p.Addr.QP != transport.QP1 {
			return fmt.Errorf("sim: vendor MADs go to QP1, not QP%d", p.Addr.QP)
		}
	}
	if !s.opts.Concurrent || !s.wall {
		// On another clock a test advances time after Send: the answer
		// must be scheduled by then.
		j := job{sent: sent{class: h.Class, addr: p.Addr, timeout: p.Timeout, at: s.now()}}
		copy(j.raw[:], p.MAD)
		c.answer(&j)
		return nil
	}
	at := s.now()
	c.jmu.Lock()
	// Written in place: a request is copied once, into the queue.
	c.jobs = append(c.jobs, sent{class: h.Class, addr: p.Addr, timeout: p.Timeout, at: at})
	copy(c.jobs[len(c.jobs)-1].raw[:], p.MAD)
	c.queued.Store(int32(len(c.jobs)))
	start := !c.working
	c.working = true
	c.jmu.Unlock()
	if start {
		go c.work()
	}
	return nil
}

// workLinger is how long work waits for another request before it exits.
const workLinger = 50 * time.Microsecond

// sent is a request Send accepted, as sent, waiting to be answered.
type sent struct {
	class   mad.Class
	addr    transport.Addr
	timeout time.Duration
	at      time.Time
	raw     [mad.Size]byte
}

// job is a request being answered: as sent, and decoded (smp or gmp, by
// class).
type job struct {
	sent
	smp mad.SMP
	gmp mad.GMP
}

// work answers the Conn's queued requests (Options.Concurrent) in the
// order they were sent, then exits: the simulated fabric runs on one
// core while the caller (the engine's reader, which sends the next
// request as an answer completes) runs on another. Answers are delivered
// in the order Send took the requests, as when Send answers them itself.
func (c *Conn) work() {
	var batch []sent
	var j job
	idle := time.Time{}
	for {
		c.jmu.Lock()
		if batch != nil {
			c.spare = batch[:0]
			batch = nil
		}
		if len(c.jobs) == 0 {
			// The next request usually follows within microseconds
			// (the reader sends one as each answer completes): waiting
			// for it here costs less than a goroutine started and a
			// thread woken for nearly every MAD. The wait watches
			// queued alone, without the lock Send takes.
			if idle.IsZero() {
				idle = time.Now()
			}
			if time.Since(idle) < workLinger {
				c.jmu.Unlock()
				for spins := 0; c.queued.Load() == 0; spins++ {
					runtime.Gosched()
					if spins%16 == 15 && time.Since(idle) >= workLinger {
						break
					}
				}
				continue
			}
			c.working = false
			c.jmu.Unlock()
			return
		}
		idle = time.Time{}
		batch, c.jobs, c.spare = c.jobs, c.spare, nil
		c.queued.Store(0)
		c.jmu.Unlock()
		for i := range batch {
			j.sent = batch[i]
			c.answer(&j)
		}
	}
}

// answer runs j through the simulated fabric and queues its answer, or
// a timeout notice, for Recv.
func (c *Conn) answer(j *job) {
	s := c.s
	var res outcome
	// Send checked what could keep these from decoding.
	switch j.class {
	case mad.ClassSubnDR, mad.ClassSubnLID:
		if err := j.smp.Unmarshal(j.raw[:]); err != nil {
			res = outcome{lost: drop("undecodable SMP: " + err.Error())}
		} else if j.class == mad.ClassSubnDR {
			res = s.handleDR(c, &j.smp)
		} else {
			res = s.handleLIDSMP(c, j.addr.DLID, &j.smp)
		}
	case mad.ClassPerfMgt, mad.ClassMlnxVendor:
		if err := j.gmp.Unmarshal(j.raw[:]); err != nil {
			res = outcome{lost: drop("undecodable GMP: " + err.Error())}
		} else if j.class == mad.ClassPerfMgt {
			res = s.handlePerf(c, j.addr.DLID, &j.gmp)
		} else {
			res = s.handleVendor(c, j.addr.DLID, &j.gmp)
		}
	default:
		// No agent for the class in the simulated fabric.
		res = outcome{lost: drop(fmt.Sprintf("no agent for %v", j.class))}
	}
	if res.lost != "" {
		switch {
		case j.timeout > 0 && res.unroutable && c.s.wall:
			// The same notice the kernel's umad gives after the
			// timeout, at once (trial B14: a gate across a switch
			// with no table waited 1 s a try for each such LID): the
			// read is as unanswered as on a real fabric, the run does
			// not wait for what the simulator already knows. On
			// another clock the notice keeps the clock's time.
			c.deliver(j.timedOut())
		case j.timeout > 0:
			c.deliverAfter(j.at, j.timeout, j.timedOut())
		}
		return
	}
	if j.timeout > 0 && res.delay > j.timeout {
		if res.pooled != nil {
			c.s.answers.Put(res.pooled) // nobody saw it
		}
		c.deliverAfter(j.at, j.timeout, j.timedOut())
		return
	}
	var p *transport.Packet
	if a := res.pooled; a != nil {
		p = &a.pkt
		*p = transport.Packet{Addr: res.from, MAD: a.buf[:], Owner: a}
	} else {
		p = &transport.Packet{Addr: res.from, MAD: res.mad}
	}
	c.deliverAfter(res.start, res.delay, p)
}

// timedOut is the notice that j went unanswered: the request back, with
// StatusTimedOut, as the kernel's umad returns it.
func (j *job) timedOut() *transport.Packet {
	return &transport.Packet{Addr: j.addr, MAD: append([]byte(nil), j.raw[:]...), Status: transport.StatusTimedOut}
}

// outcome is what became of a request: the response, where it came from
// and how long it took from start, or why it was lost.
type outcome struct {
	mad    []byte
	pooled *answerPacket // if set, the answer is its bytes (newAnswer), not mad
	from   transport.Addr
	start  time.Time
	delay  time.Duration
	lost   drop
	// unroutable: lost because the forwarding tables lead the request
	// (or its answer) to no one who owns the LID (no route, a down
	// port, a CA that is not it, a loop), which the simulator knows
	// when it is sent, not a node that stays silent.
	unroutable bool
}

// A directed-route answer's Packet and bytes come from the Sim's pool
// (answers): a 49k-node sweep is millions of them, and the Engine hands
// each back once it is done with it (Recycle).

// answerPacket is a pooled answer: the Packet Recv returns, whose Owner
// is the answerPacket itself, and the bytes its MAD is.
type answerPacket struct {
	pkt transport.Packet
	buf [mad.Size]byte
}

// newAnswer returns a pooled answer.
func (s *Sim) newAnswer() *answerPacket {
	a, _ := s.answers.Get().(*answerPacket)
	if a == nil {
		a = new(answerPacket)
	}
	return a
}

// Recycle implements transport.Recycler. Only the Sim's own pooled
// answers (newAnswer) are taken back, known by their Owner: the very
// Packet and the bytes newAnswer handed out, not a copy of the Packet or
// another packet of the same shape.
func (c *Conn) Recycle(p *transport.Packet) {
	a, ok := p.Owner.(*answerPacket)
	if !ok || &a.pkt != p || len(p.MAD) != mad.Size || &p.MAD[0] != &a.buf[0] {
		return
	}
	a.pkt = transport.Packet{}
	c.s.answers.Put(a)
}

// serve queues a MAD at node ni's agent: it arrives after reqHops cables
// and is served after the MADs ahead of it. It returns when the agent
// is done (relative to now), or a loss if the agent does not answer.
func (s *Sim) serve(ni int32, req *mad.Header, reqHops int, route uint64, now time.Time) (time.Duration, drop) {
	n := &s.nodes[ni]
	if n.dead {
		return 0, drop(fmt.Sprintf("%s does not answer (dead)", s.nodeName(ni)))
	}
	k := drawKey{node: ni, class: req.Class, method: req.Method, attr: req.AttrID, mod: req.AttrMod, route: route}
	if n.answer < 1 && s.draw(k) >= n.answer {
		return 0, drop(fmt.Sprintf("%s did not answer (flaky)", s.nodeName(ni)))
	}
	k.fault = 1
	if s.loss > 0 && s.draw(k) < s.loss {
		return 0, drop("lost (loss fault)")
	}
	for _, d := range n.drops {
		if strings.EqualFold(mad.AttrName(req.Class, req.AttrID), d.name) && (d.mod < 0 || int64(req.AttrMod) == d.mod) {
			return 0, drop(fmt.Sprintf("%s does not answer %s (drop fault)", s.nodeName(ni), d.name))
		}
	}
	arrive := time.Duration(reqHops) * s.opts.HopLatency
	st := s.opts.ServiceTime
	if st <= 0 {
		return arrive, ""
	}
	base := s.ticks(now)
	at := base + arrive.Nanoseconds()
	for {
		busy := n.busyTill.Load()
		start := max(at, busy)
		if lim := s.opts.QueueLimit; lim > 0 && start-at > int64(lim)*st.Nanoseconds() {
			return 0, drop(fmt.Sprintf("%s: agent queue full", s.nodeName(ni)))
		}
		end := start + st.Nanoseconds()
		if n.busyTill.CompareAndSwap(busy, end) {
			return time.Duration(end - base), ""
		}
	}
}

func (s *Sim) handleDR(c *Conn, req *mad.SMP) outcome {
	m := req.Method
	s.lock(m)
	defer s.unlock(m)
	now := s.now()
	if req.DrSLID != mad.PermissiveLID || req.DrDLID != mad.PermissiveLID {
		return outcome{lost: "directed route with a LID-routed part is not simulated"}
	}
	if req.Direction || req.HopPointer != 0 {
		return outcome{lost: "request with D bit or hop pointer set"}
	}
	dst, in, hops, why := s.drRequest(req, c.node, c.port, s.traceDR)
	if why != "" {
		return outcome{lost: why}
	}
	// The route of a directed-route SMP is its hops (a retry takes the
	// same; two paths to one node are two requests).
	route := uint64(req.HopCount) << 56
	for _, b := range req.InitialPath[1 : int(req.HopCount)+1] {
		route = mix64(route ^ uint64(b))
	}
	done, why := s.serve(dst, &req.Header, hops, route, now)
	if why != "" {
		return outcome{lost: why}
	}
	// The answer is written straight into the response's bytes: handed
	// to an attribute's MarshalAttr, resp.Data would move resp to the
	// heap, one more allocation for each of the millions of SMPs of a
	// 49k-node sweep.
	ans := s.newAnswer()
	b := ans.buf[:]
	data := (*[mad.SMPDataSize]byte)(b[64:128])
	*data = req.Data // what an attribute leaves unwritten, as before
	resp := *req
	resp.Status = s.smaAnswer(dst, in, req, data)
	if resp.Status == mad.StatusOK {
		resp.Data = *data
	}
	resp.Method = mad.ResponseMethod(req.Method)
	resp.Direction = true
	back, rhops, why := s.drResponse(&resp, dst, in, s.traceDR)
	if why == "" && back != c.node {
		why = drop(fmt.Sprintf("response reached %s instead of the requester", s.nodeName(back)))
	}
	if why != "" {
		s.answers.Put(ans) // nobody saw it
		return outcome{lost: why}
	}
	resp.MarshalTo(b)
	return outcome{
		pooled: ans,
		from:   transport.DirectedRoute(),
		start:  now,
		delay:  done + time.Duration(rhops)*s.opts.HopLatency,
	}
}

// srcLID is the LID LID-routed MADs from c carry as their source.
func (s *Sim) srcLID(c *Conn) uint16 {
	n := &s.nodes[c.node]
	if n.typ == mad.NodeSwitch {
		return n.ports[0].lid
	}
	return n.ports[c.port].lid
}

// lidExchange routes a LID-routed request from c to dlid and its answer
// back, running answer at the destination. data says whether the MADs
// need Active ports (GMPs) or only a physical link (SMPs).
func (s *Sim) lidExchange(c *Conn, req *mad.Header, dlid uint16, data bool, answer func(ni int32, in uint8) []byte) outcome {
	now := s.now()
	slid := s.srcLID(c)
	if slid == 0 {
		return outcome{lost: "the local port has no LID: LID-routed MADs need an SM to have assigned one"}
	}
	dst, in, hops, why := s.lidRoute(c.node, c.port, dlid, data, nil)
	if why != "" {
		return outcome{lost: why, unroutable: true}
	}
	done, why := s.serve(dst, req, hops, uint64(dlid)|1<<63, now)
	if why != "" {
		return outcome{lost: why}
	}
	b := answer(dst, in)
	back, bin, rhops, why := s.lidRoute(dst, in, slid, data, nil)
	if why != "" {
		return outcome{lost: drop("response: " + string(why)), unroutable: true}
	}
	if back != c.node || (s.nodes[back].typ != mad.NodeSwitch && bin != c.port) {
		return outcome{lost: drop(fmt.Sprintf("response reached %s port %d instead of the requester", s.nodeName(back), bin)), unroutable: true}
	}
	return outcome{mad: b, start: now, delay: done + time.Duration(rhops)*s.opts.HopLatency}
}

// lock takes the simulator's lock for handling a MAD of method m: the
// write lock for a Set (it changes node state), the read lock otherwise.
// unlock(m) releases it. (A func returned to defer would be one heap
// allocation per MAD.)
func (s *Sim) lock(m mad.Method) {
	if m == mad.MethodSet {
		s.mu.Lock()
		return
	}
	s.mu.RLock()
}

func (s *Sim) unlock(m mad.Method) {
	if m == mad.MethodSet {
		s.mu.Unlock()
		return
	}
	s.mu.RUnlock()
}

func (s *Sim) handleLIDSMP(c *Conn, dlid uint16, req *mad.SMP) outcome {
	m := req.Method
	s.lock(m)
	defer s.unlock(m)
	out := s.lidExchange(c, &req.Header, dlid, false, func(ni int32, in uint8) []byte {
		resp := *req
		resp.Status = s.smaAnswer(ni, in, req, &resp.Data)
		if resp.Status != mad.StatusOK {
			resp.Data = req.Data
		}
		resp.Method = mad.ResponseMethod(req.Method)
		return resp.Marshal()
	})
	out.from = transport.SMPAt(dlid)
	return out
}

func (s *Sim) handlePerf(c *Conn, dlid uint16, req *mad.GMP) outcome {
	m := req.Method
	s.lock(m)
	defer s.unlock(m)
	out := s.lidExchange(c, &req.Header, dlid, true, func(ni int32, in uint8) []byte {
		resp := *req
		resp.Status = s.pmaAnswer(ni, in, req, &resp.Data)
		if resp.Status != mad.StatusOK {
			resp.Data = req.Data
		}
		resp.Method = mad.ResponseMethod(req.Method)
		return resp.Marshal()
	})
	out.from = transport.PerfAt(dlid, 0, 0)
	return out
}

// handleVendor answers Mellanox's vendor class (0x0A) as NVIDIA devices
// do: GeneralInfo with the node's firmware version. A node of another
// vendor has no agent for the class: the request is lost, as on a real
// fabric where other vendors' devices do not answer it.
func (s *Sim) handleVendor(c *Conn, dlid uint16, req *mad.GMP) outcome {
	s.lock(req.Method)
	defer s.unlock(req.Method)
	if o := s.lidOwnerOf(dlid); o.node >= 0 {
		switch n := &s.nodes[o.node]; {
		case n.vendor != 0x0002c9:
			return outcome{lost: "no vendor-class agent on a device of another vendor"}
		case s.noFirmware != "":
			return outcome{lost: drop(s.noFirmware)}
		case s.fwListed && n.fw == [3]uint32{}:
			return outcome{lost: "the fabric's file recorded no GeneralInfo answer from this node"}
		}
	}
	out := s.lidExchange(c, &req.Header, dlid, true, func(ni int32, in uint8) []byte {
		n := &s.nodes[ni]
		resp := *req
		resp.Method = mad.ResponseMethod(req.Method)
		switch {
		case req.Method != mad.MethodGet:
			resp.Status = statusMethodUnsupported
		case req.AttrID != mad.AttrGeneralInfo:
			resp.Status = statusAttrUnsupported
		default:
			fw := n.firmware()
			gi := mad.GeneralInfo{DeviceID: n.devID, DeviceHWRevision: uint16(n.rev),
				Major: uint8(fw[0]), Minor: uint8(fw[1]), SubMinor: uint8(fw[2]),
				PSID: cmp.Or(n.psid, "MT_0000000000"), ExtMajor: fw[0], ExtMinor: fw[1], ExtSubMinor: fw[2]}
			resp.Data = [mad.GMPDataSize]byte{}
			_ = gi.MarshalAttr(resp.Data[:]) // the PSID fits
		}
		return resp.Marshal()
	})
	out.from = transport.PerfAt(dlid, 0, 0)
	return out
}

// firmware is the version the node's GeneralInfo reports: the firmware
// fault's, else one version per node type (every switch alike, every
// HCA alike).
func (n *node) firmware() [3]uint32 {
	switch {
	case n.fw != [3]uint32{}:
		return n.fw
	case n.typ == mad.NodeSwitch:
		return [3]uint32{31, 2012, 1068}
	}
	return [3]uint32{28, 39, 1002}
}

func (n *node) hasActivePort() bool {
	for pi := 1; pi < len(n.ports); pi++ {
		if n.ports[pi].active() {
			return true
		}
	}
	return false
}
