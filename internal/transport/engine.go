package transport

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fifo"
	"github.com/ibdoctor/ibdoctor/internal/words"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Engine defaults. The window and timeout follow what the reference tools
// do: libibnetdisc keeps 2 SMPs on the wire per scan and waits 1000 ms with
// 3 retries; ibdiagnet allows 8 SMPs and 128 GMPs in flight. ibdoctor keeps
// many MADs in flight overall but at most PerDest per destination, because a
// switch's management CPU answers one MAD at a time and flooding it only
// causes drops.
const (
	DefaultWindow  = 64
	DefaultPerDest = 2
	// DefaultTimeout is the wait for one attempt, whatever the number of
	// hops: a real switch forwards a DR SMP in microseconds, so a hop
	// count dependent timeout buys nothing at this size.
	DefaultTimeout = time.Second
	DefaultRetries = 3
)

// Tap sees every MAD the Engine sends (each attempt) and every MAD it
// receives, e.g. to write a capture. It is called from the sending and the
// reading goroutines, possibly concurrently, and must not block for long or
// modify mad; it must copy mad to keep it.
type Tap interface {
	Record(sent bool, addr Addr, mad []byte, t time.Time)
}

// Options configure an Engine. Zero values select the defaults.
type Options struct {
	// Window is the most requests in flight at once (default 64).
	Window int
	// PerDest is the most requests in flight to one destination
	// (default 2). A destination is the directed-route path of a DR SMP,
	// else the destination LID (or GID for GRH-routed MADs).
	PerDest int
	// Timeout is how long one attempt waits for its response (default 1 s).
	Timeout time.Duration
	// Retries is the number of attempts after the first that time out
	// (default 3, i.e. up to 4 sends); a negative value means none.
	Retries int
	// AllowWrites permits Set methods. Without it Do refuses them with
	// ErrReadOnly.
	AllowWrites bool
	// Tap, if not nil, sees every MAD sent and received.
	Tap Tap
}

func (o Options) withDefaults() Options {
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	if o.PerDest <= 0 {
		o.PerDest = DefaultPerDest
	}
	if o.PerDest > o.Window {
		o.PerDest = o.Window
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	switch {
	case o.Retries == 0:
		o.Retries = DefaultRetries
	case o.Retries < 0:
		o.Retries = 0
	}
	return o
}

// Response is the answer to a request.
type Response struct {
	// MAD is the response as received (the kernel's TID high bits kept).
	MAD []byte
	// Addr is where it came from.
	Addr Addr
	// Attempts is how many times the request was sent.
	Attempts int
	// RTT is the time from sending the answered attempt to receiving
	// its response.
	RTT time.Duration
}

// Engine sends requests over a Conn and matches their responses. It owns
// the low 32 bits of every transaction ID, keeps a global and a
// per-destination window, times attempts out and retries them.
//
// Requests are asynchronous underneath: Go hands a request to the Engine
// and returns; the Engine sends it as soon as both windows have room and
// calls its completion function from its reader goroutine (answers, Conn
// timeout notices) or from its timer (attempts that timed out). No
// goroutine, channel or timer is spent per request, which matters when a
// discovery sends a hundred thousand SMPs. Do is the synchronous form.
// An Engine is safe for concurrent use.
type Engine struct {
	conn Conn
	opts Options
	// grace is added to each attempt's deadline: NoticeGrace when the
	// Conn reports its timeouts itself (TimeoutNotifier), else 0.
	grace time.Duration

	mu         sync.Mutex
	calls      tidTable             // outstanding attempts by TID low 32 bits
	dests      map[destKey]*dest    // destinations with requests in flight or waiting
	freeDests  []*dest              // emptied, for reuse: a destination comes and goes with nearly every MAD of a table read
	globalWait fifo.Queue[*request] // requests holding a destination slot, waiting for a global one
	head, tail *request             // requests in flight, oldest attempt first (deadline order)
	timer      *time.Timer          // armed whenever head != nil, for head's deadline or earlier
	ctxs       map[context.Context]*ctxWatch
	lastTID    uint32
	issued     uint64 // TIDs ever allocated
	dead       error  // set when the Engine stops taking requests
	st         counters
	// silent holds, once SkipSilent was called, the destinations a
	// request went unanswered to after every attempt.
	silent map[silentKey]*TimeoutError
	// smpCalls holds GoSMP's reads for reuse (see request.refs).
	smpCalls sync.Pool

	stopRead   context.CancelFunc
	readerDone chan struct{} // closed when the reader exits
	readErr    error         // why the reader exited; set before readerDone closes
	closeOnce  sync.Once
	closeErr   error
}

// request states
const (
	waitingDest   = iota // queued on its destination
	waitingGlobal        // holds a destination slot, queued for a global one
	inFlight             // holds both slots, an attempt on the wire
	dequeued             // taken off its destination's queue, holds no slot
	holdsDest            // taken off the global queue, holds a destination slot
	finished
)

// request is one request in the Engine, from Go to its completion.
type request struct {
	ctx   context.Context
	addr  Addr
	h     mad.Header
	req   []byte // the caller's MAD, never modified
	key   destKey
	dest  *dest // e.dests[key] while r is in the Engine (not after it finished)
	done  func(*Response, error)
	c     completer // if set, called instead of done
	watch bool      // counted in Engine.ctxs
	owned bool      // req is the Engine's: the first attempt may be req itself
	// pooled: r is an smpCall's, reused once refs falls to zero. refs
	// counts what may still touch r outside the lock: its completion
	// until it has run, and each attempt queued for sending until send
	// returns (an answer can complete r while send is still at work).
	pooled bool
	refs   atomic.Int32

	state    int
	attempt  int // current attempt, 1-based
	tries    int // most attempts; 0: 1+Options.Retries (Engine.Once sets 1)
	tids     []uint32
	tidBuf   [2]uint32
	buf      []byte // the current attempt as sent
	pkt      Packet // the first attempt's, given to Conn.Send
	start    time.Time
	deadline time.Time // of the current attempt

	prev, next *request // in the in-flight list
}

// completer completes a request that is embedded in the object whose
// method handles its answer (GoSMP's smpCall): one allocation per read
// instead of a request, a closure and their contents.
type completer interface {
	complete(*Response, error)
	// response is where dispatch puts the answer's Response.
	response() *Response
}

type entry struct {
	r       *request
	attempt int
	sentAt  time.Time
}

// tidTable holds the outstanding attempts by TID: a slot per TID modulo
// its size, which TIDs issued in sequence fill without colliding while
// fewer attempts than slots are outstanding, and a map for the rare one
// whose slot an older attempt still holds. A Go map's hashing, insert
// and delete were a sizeable part of the Engine's cost per MAD.
type tidTable struct {
	slots []tidSlot
	mask  uint32
	more  map[uint32]entry
}

type tidSlot struct {
	tid uint32
	en  entry // en.r == nil: free
}

func newTIDTable(window int) tidTable {
	n := 1024
	for n < 4*window {
		n *= 2
	}
	return tidTable{slots: make([]tidSlot, n), mask: uint32(n - 1)}
}

func (t *tidTable) get(tid uint32) (entry, bool) {
	if s := &t.slots[tid&t.mask]; s.en.r != nil && s.tid == tid {
		return s.en, true
	}
	if t.more == nil {
		return entry{}, false
	}
	en, ok := t.more[tid]
	return en, ok
}

func (t *tidTable) put(tid uint32, en entry) {
	if s := &t.slots[tid&t.mask]; s.en.r == nil {
		s.tid, s.en = tid, en
		return
	}
	if t.more == nil {
		t.more = make(map[uint32]entry)
	}
	t.more[tid] = en
}

func (t *tidTable) del(tid uint32) {
	if s := &t.slots[tid&t.mask]; s.en.r != nil && s.tid == tid {
		*s = tidSlot{}
		return
	}
	delete(t.more, tid)
}

type dest struct {
	inFlight int // requests holding a slot (in flight or waiting globally)
	waiting  fifo.Queue[*request]
	// freed: taken out of Engine.dests. A request abandoned while
	// finishing another of the same destination empties it too; only
	// the first may hand it to freeDests, or two destinations would
	// later share it.
	freed bool
}

// destKey is the per-destination window key: the directed route of a DR
// SMP, else the destination LID (or GID for GRH-routed MADs).
type destKey struct {
	kind byte // 'd' directed route, 'l' LID, 'g' GID
	n    byte
	lid  uint16
	b    [mad.MaxHops + 1]byte
}

// ctxWatch cancels the requests of one context when it ends.
type ctxWatch struct {
	n    int
	stop func() bool
}

// actions is what a locked section decided to do once the lock is
// released: attempts to send and completions to report. The first of each
// is held in place: most sections decide one of each, and the slices
// would be an allocation per MAD.
type actions struct {
	// now is the time the section works with (an attempt's send time),
	// read once: a clock read costs about as much as the rest of a
	// locked section.
	now   time.Time
	send0 attempt
	done0 completion
	nsend int
	ndone int
	sendN []attempt    // the 2nd and later
	doneN []completion // the 2nd and later
}

// clock returns a.now, reading the clock the first time.
func (a *actions) clock() time.Time {
	if a.now.IsZero() {
		a.now = time.Now()
	}
	return a.now
}

func (a *actions) addSend(x attempt) {
	if a.nsend == 0 {
		a.send0 = x
	} else {
		a.sendN = append(a.sendN, x)
	}
	a.nsend++
}

func (a *actions) addDone(x completion) {
	if a.ndone == 0 {
		a.done0 = x
	} else {
		a.doneN = append(a.doneN, x)
	}
	a.ndone++
}

func (a *actions) sendAt(i int) attempt {
	if i == 0 {
		return a.send0
	}
	return a.sendN[i-1]
}

func (a *actions) doneAt(i int) completion {
	if i == 0 {
		return a.done0
	}
	return a.doneN[i-1]
}

// attempt is one attempt to send.
type attempt struct {
	r   *request
	n   int
	buf []byte
}

type completion struct {
	r    *request
	resp *Response
	err  error
}

// NewEngine starts an Engine on c. The Engine owns c from now on: Close
// closes it.
func NewEngine(c Conn, opts Options) *Engine {
	opts = opts.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	e := &Engine{
		conn:       c,
		opts:       opts,
		calls:      newTIDTable(opts.Window),
		dests:      make(map[destKey]*dest),
		ctxs:       make(map[context.Context]*ctxWatch),
		stopRead:   cancel,
		readerDone: make(chan struct{}),
	}
	if n, ok := c.(TimeoutNotifier); ok && n.NotifiesTimeouts() {
		e.grace = NoticeGrace
	}
	e.timer = time.AfterFunc(time.Hour, e.expire)
	e.timer.Stop()
	if d, ok := c.(Deliverer); ok {
		d.Deliver(func(p *Packet) bool { return e.dispatch(p, time.Now()) })
	}
	go e.read(ctx)
	return e
}

// Options returns the options in effect (defaults filled in).
func (e *Engine) Options() Options { return e.opts }

// Local describes the local port of the underlying Conn.
func (e *Engine) Local() LocalPort { return e.conn.Local() }

// SkipSilent makes the Engine fail at once, without sending it, every
// later request to a destination (a directed route, a LID, a GID) that
// left a request unanswered after every attempt, with a *SilentError: a
// dead agent then costs one request's timeouts, not one per MAD sent to
// it. For SMPs the destination's whole subnet management agent counts as
// silent; for other classes only the attribute (a PMA without
// PortCountersExtended still answers PortCounters). A LID a LID-routed
// SMP went unanswered to is silent for every class: a MAD to a LID
// follows the same forwarding tables both ways whatever its class, so a
// PerfMgt read after it would wait out the same loss (trial F8: a
// blackhole at a job's leaf cost a gate one more timeout for its
// counters). A gate, which has seconds, wants that; a sweep, which reads every
// attribute it can, does not call it.
func (e *Engine) SkipSilent() {
	e.mu.Lock()
	if e.silent == nil {
		e.silent = map[silentKey]*TimeoutError{}
	}
	e.mu.Unlock()
}

// Close stops the reader, closes the Conn and fails requests in progress
// with ErrClosed. It waits for the reader goroutine to exit.
func (e *Engine) Close() error {
	e.closeOnce.Do(func() {
		e.stopRead()
		e.closeErr = e.conn.Close()
		<-e.readerDone
	})
	return e.closeErr
}

// Do sends req (a 256-byte MAD whose TID the Engine overwrites) to addr
// and waits for its response, retrying attempts that time out. It returns
// a *TimeoutError when every attempt went unanswered, and the Response
// together with a *StatusError when the response's status is not OK.
// req is not modified.
func (e *Engine) Do(ctx context.Context, addr Addr, req []byte) (*Response, error) {
	return e.do(ctx, addr, req, 0)
}

// do is Do sending req at most tries times (0: 1+Options.Retries).
func (e *Engine) do(ctx context.Context, addr Addr, req []byte, tries int) (*Response, error) {
	type result struct {
		resp *Response
		err  error
	}
	ch := make(chan result, 1)
	r, err := e.submit(ctx, addr, req, func(resp *Response, err error) { ch <- result{resp, err} }, false, false, tries)
	if err != nil {
		return nil, err
	}
	select {
	case res := <-ch:
		return res.resp, res.err
	case <-ctx.Done():
		e.cancel(r)
		res := <-ch
		return res.resp, res.err
	}
}

// Go starts req (see Do) and returns at once. done is called exactly once
// with what Do would have returned, unless Go itself returns an error (a
// request refused up front: malformed, a Set while read-only, the Engine
// closed), in which case done is never called. done runs on one of the
// Engine's goroutines, or on the caller's when sending fails at once; it
// must not block for long, and it may call Go. A request whose ctx ends
// completes with an error wrapping ctx.Err().
func (e *Engine) Go(ctx context.Context, addr Addr, req []byte, done func(*Response, error)) error {
	_, err := e.submit(ctx, addr, req, done, ctx.Done() != nil, false, 0)
	return err
}

// goOwned is Go for a request buffer nobody else holds: the Engine writes
// the first attempt's TID into it instead of copying it.
func (e *Engine) goOwned(ctx context.Context, addr Addr, req []byte, done func(*Response, error)) error {
	_, err := e.submit(ctx, addr, req, done, ctx.Done() != nil, true, 0)
	return err
}

func (e *Engine) submit(ctx context.Context, addr Addr, req []byte, done func(*Response, error), watch, owned bool, tries int) (*request, error) {
	r := &request{done: done, tries: tries}
	if err := e.start(r, ctx, addr, req, watch, owned); err != nil {
		return nil, err
	}
	return r, nil
}

// start takes r (its done or c set, nothing else) into the Engine.
func (e *Engine) start(r *request, ctx context.Context, addr Addr, req []byte, watch, owned bool) error {
	h, err := mad.PeekHeader(req)
	if err != nil {
		return fmt.Errorf("transport: not sending a malformed request: %w", err)
	}
	if h.Method.IsResponse() {
		return fmt.Errorf("transport: not sending %v %s: it is a response method", h.Method, mad.AttrName(h.Class, h.AttrID))
	}
	if h.Method.Request() == mad.MethodSet && !e.opts.AllowWrites {
		return fmt.Errorf("%s %s to %s: %w", h.Class, mad.AttrName(h.Class, h.AttrID), where(addr, req, h), ErrReadOnly)
	}
	r.ctx, r.addr, r.h, r.req, r.key, r.owned, r.start = ctx, addr, h, req, keyOf(addr, req, h), owned, time.Now()
	r.tids = r.tidBuf[:0]
	acts := actions{now: r.start}
	e.mu.Lock()
	if e.dead != nil {
		err := e.deadErr()
		e.mu.Unlock()
		return err
	}
	e.st.requests++
	if te := e.silentForLocked(r); te != nil {
		e.st.skipped++
		e.mu.Unlock()
		r.state = finished
		// Its own goroutine: the caller may hold a lock done takes. (Its
		// own actions too: acts, given to a goroutine, would be a heap
		// allocation for every request, not only for this rare one.)
		silent := &actions{}
		silent.addDone(completion{r: r, err: silentErr(r, te)})
		go e.run(silent)
		return nil
	}
	if watch {
		e.watchLocked(r)
	}
	d := e.dests[r.key]
	if d == nil {
		if n := len(e.freeDests); n > 0 {
			d = e.freeDests[n-1]
			e.freeDests = e.freeDests[:n-1]
		} else {
			d = &dest{}
		}
		d.freed = false
		e.dests[r.key] = d
	}
	r.dest = d
	if d.inFlight >= e.opts.PerDest {
		r.state = waitingDest
		d.waiting.Push(r)
	} else {
		d.inFlight++
		e.admitLocked(r, &acts)
	}
	e.mu.Unlock()
	e.run(&acts)
	return nil
}

// admitLocked takes r, which holds a destination slot, to the wire if the
// global window has room, else queues it for a global slot.
func (e *Engine) admitLocked(r *request, acts *actions) {
	if e.st.inFlight >= e.opts.Window {
		r.state = waitingGlobal
		e.globalWait.Push(r)
		return
	}
	e.st.inFlight++
	e.st.maxInFlight = max(e.st.maxInFlight, e.st.inFlight)
	e.attemptLocked(r, acts)
}

// attemptLocked prepares r's next attempt (a fresh TID) and queues it for
// sending.
func (e *Engine) attemptLocked(r *request, acts *actions) {
	r.state = inFlight
	r.attempt++
	for {
		e.lastTID++
		if e.lastTID == 0 {
			continue
		}
		if _, busy := e.calls.get(e.lastTID); busy {
			continue // wrapped around onto an outstanding TID
		}
		break
	}
	e.issued++
	if r.pooled {
		r.refs.Add(1) // send's
	}
	tid := e.lastTID
	now := acts.clock()
	e.calls.put(tid, entry{r: r, attempt: r.attempt, sentAt: now})
	r.tids = append(r.tids, tid)
	if r.attempt == 1 && r.owned {
		r.buf = r.req // each later attempt gets its own copy: a Conn or Tap may still hold this one
	} else {
		r.buf = make([]byte, len(r.req))
		copy(r.buf, r.req)
	}
	binary.BigEndian.PutUint64(r.buf[8:16], uint64(tid))
	r.deadline = now.Add(e.opts.Timeout + e.grace)
	e.linkLocked(r)
	e.st.sent++
	e.st.bytesSent += uint64(len(r.buf))
	if r.attempt > 1 {
		e.st.retried++
	}
	acts.addSend(attempt{r, r.attempt, r.buf})
}

// linkLocked appends r to the in-flight list; deadlines only grow, so the
// list stays in deadline order.
func (e *Engine) linkLocked(r *request) {
	r.prev, r.next = e.tail, nil
	if e.tail != nil {
		e.tail.next = r
	} else {
		e.head = r
		e.timer.Reset(time.Until(r.deadline))
	}
	e.tail = r
}

func (e *Engine) unlinkLocked(r *request) {
	if r.prev != nil {
		r.prev.next = r.next
	} else if e.head == r {
		e.head = r.next
	} else {
		return // not linked
	}
	if r.next != nil {
		r.next.prev = r.prev
	} else {
		e.tail = r.prev
	}
	r.prev, r.next = nil, nil
}

// finishLocked completes r with resp and err: it forgets r's TIDs, frees
// its window slots (admitting waiting requests) and queues its completion.
func (e *Engine) finishLocked(r *request, resp *Response, err error, acts *actions) {
	state := r.state
	if state == finished {
		return
	}
	r.state = finished
	for _, t := range r.tids {
		e.calls.del(t)
	}
	r.tids = nil
	e.unlinkLocked(r)
	if r.watch {
		e.unwatchLocked(r)
	}
	d := r.dest
	r.dest = nil
	switch state {
	case waitingDest:
		d.waiting.Remove(r)
	case waitingGlobal:
		e.globalWait.Remove(r)
		d.inFlight--
	case holdsDest:
		d.inFlight--
	case inFlight:
		e.st.inFlight--
		d.inFlight--
	}
	acts.addDone(completion{r: r, resp: resp, err: err})
	// The destination's freed slot goes to its next waiting request,
	// the global one to the oldest request waiting for it.
	for d.inFlight < e.opts.PerDest && d.waiting.Len() > 0 {
		w := d.waiting.Pop()
		if e.abandonedLocked(w, acts) {
			continue
		}
		if te := e.silentForLocked(w); te != nil {
			// Never sent: finished here, without finishLocked's
			// bookkeeping of slots it does not hold.
			w.state = finished
			if w.watch {
				e.unwatchLocked(w)
			}
			e.st.skipped++
			acts.addDone(completion{r: w, err: silentErr(w, te)})
			continue
		}
		d.inFlight++
		e.admitLocked(w, acts)
	}
	if d.inFlight == 0 && d.waiting.Len() == 0 && !d.freed {
		d.freed = true
		delete(e.dests, r.key)
		if len(e.freeDests) < e.opts.Window {
			e.freeDests = append(e.freeDests, d)
		}
	}
	for e.st.inFlight < e.opts.Window && e.globalWait.Len() > 0 {
		w := e.globalWait.Pop()
		w.state = holdsDest
		if e.abandonedLocked(w, acts) {
			continue
		}
		e.st.inFlight++
		e.st.maxInFlight = max(e.st.maxInFlight, e.st.inFlight)
		e.attemptLocked(w, acts)
	}
}

// abandonedLocked finishes w, just taken off a queue, if its context has
// ended.
func (e *Engine) abandonedLocked(w *request, acts *actions) bool {
	err := w.ctx.Err()
	if err == nil {
		return false
	}
	if w.state != holdsDest {
		w.state = dequeued
	}
	e.st.canceled++
	e.finishLocked(w, nil, e.abandon(err, w, 0), acts)
	return true
}

// run carries out what a locked section decided: sends first (the wire
// waits for nobody), then completions.
func (e *Engine) run(acts *actions) {
	for i := 0; i < acts.nsend; i++ { // sends may append more actions
		e.send(acts.sendAt(i), acts)
	}
	for i := 0; i < acts.ndone; i++ {
		c := acts.doneAt(i)
		if c.r.c != nil {
			c.r.c.complete(c.resp, c.err)
		} else {
			c.r.done(c.resp, c.err)
		}
		e.release(c.r)
	}
}

// release drops one reference to r (see request.refs); the last one
// returns a pooled request's smpCall for reuse.
func (e *Engine) release(r *request) {
	if r.pooled && r.refs.Add(-1) == 0 {
		e.smpCalls.Put(r.c)
	}
}

// send puts an attempt on the wire. It may go out after its request was
// finished (cancelled, say): its answer then counts as late.
func (e *Engine) send(a attempt, acts *actions) {
	r := a.r
	defer e.release(r)
	// The first attempt's Packet is the request's own (one allocation
	// fewer per MAD); a retry's is new, as a Conn may still hold the
	// first.
	p := &r.pkt
	if a.n > 1 {
		p = new(Packet)
	}
	*p = Packet{Addr: r.addr, MAD: a.buf, Timeout: e.opts.Timeout}
	err := e.conn.Send(r.ctx, p)
	if err == nil {
		if e.opts.Tap != nil {
			e.opts.Tap.Record(true, r.addr, a.buf, time.Now())
		}
		return
	}
	e.mu.Lock()
	e.st.sent--
	e.st.bytesSent -= uint64(len(a.buf))
	if a.n > 1 {
		e.st.retried--
	}
	if r.state == inFlight && r.attempt == a.n {
		if r.ctx.Err() != nil {
			e.st.canceled++
			e.finishLocked(r, nil, e.abandon(r.ctx.Err(), r, a.n), acts)
		} else {
			e.st.errors++
			e.finishLocked(r, nil, fmt.Errorf("transport: sending %s %s to %s: %w",
				r.h.Class, mad.AttrName(r.h.Class, r.h.AttrID), where(r.addr, r.req, r.h), err), acts)
		}
	}
	e.mu.Unlock()
}

// expire runs on the timer: it retries or fails the attempts whose
// deadline has passed and re-arms the timer for the next one.
func (e *Engine) expire() {
	var acts actions
	e.mu.Lock()
	now := acts.clock()
	for r := e.head; r != nil && !r.deadline.After(now); r = e.head {
		e.unlinkLocked(r)
		e.timedOutLocked(r, now, &acts)
	}
	if e.head != nil {
		e.timer.Reset(e.head.deadline.Sub(now))
	}
	e.mu.Unlock()
	e.run(&acts)
}

// timedOutLocked handles the end of r's current attempt without an
// answer: another attempt, or failure.
func (e *Engine) timedOutLocked(r *request, now time.Time, acts *actions) {
	if err := r.ctx.Err(); err != nil {
		e.st.canceled++
		e.finishLocked(r, nil, e.abandon(err, r, r.attempt), acts)
		return
	}
	if r.attempt < 1+e.opts.Retries && (r.tries == 0 || r.attempt < r.tries) {
		e.attemptLocked(r, acts)
		return
	}
	e.st.timedOut++
	te := &TimeoutError{Addr: r.addr, Class: r.h.Class, Attr: r.h.AttrID, AttrMod: r.h.AttrMod,
		Attempts: r.attempt, Waited: now.Sub(r.start)}
	if r.h.Class == mad.ClassSubnDR {
		te.Path = drPath(r.req)
	}
	if k := silentOf(r); e.silent != nil && e.silent[k] == nil {
		e.silent[k] = te
	}
	e.finishLocked(r, nil, te, acts)
}

// cancel abandons r (Do's context ended) unless it is already over.
func (e *Engine) cancel(r *request) {
	var acts actions
	e.mu.Lock()
	if r.state != finished {
		e.st.canceled++
		e.finishLocked(r, nil, e.abandon(r.ctx.Err(), r, r.attempt), &acts)
	}
	e.mu.Unlock()
	e.run(&acts)
}

// watchLocked makes r's context end r when it is done, with one
// context.AfterFunc per context rather than per request.
func (e *Engine) watchLocked(r *request) {
	r.watch = true
	w := e.ctxs[r.ctx]
	if w == nil {
		ctx := r.ctx
		w = &ctxWatch{}
		w.stop = context.AfterFunc(ctx, func() { e.cancelContext(ctx) })
		e.ctxs[ctx] = w
	}
	w.n++
}

func (e *Engine) unwatchLocked(r *request) {
	r.watch = false
	w := e.ctxs[r.ctx]
	if w == nil {
		return
	}
	if w.n--; w.n == 0 {
		w.stop()
		delete(e.ctxs, r.ctx)
	}
}

// cancelContext abandons every request of ctx.
func (e *Engine) cancelContext(ctx context.Context) {
	var acts actions
	e.mu.Lock()
	for _, r := range e.pendingLocked(func(r *request) bool { return r.ctx == ctx }) {
		if r.state != finished { // finishing one may have finished others
			e.st.canceled++
			e.finishLocked(r, nil, e.abandon(ctx.Err(), r, r.attempt), &acts)
		}
	}
	e.mu.Unlock()
	e.run(&acts)
}

// pendingLocked lists the unfinished requests that match keep, oldest
// first within each queue.
func (e *Engine) pendingLocked(keep func(*request) bool) []*request {
	var rs []*request
	for r := e.head; r != nil; r = r.next {
		if keep(r) {
			rs = append(rs, r)
		}
	}
	add := func(r *request) bool {
		if keep(r) {
			rs = append(rs, r)
		}
		return true
	}
	e.globalWait.All(add)
	for _, d := range e.dests {
		d.waiting.All(add)
	}
	return rs
}

// abandon wraps err with what was abandoned.
func (e *Engine) abandon(err error, r *request, attempts int) error {
	return fmt.Errorf("transport: abandoned %s %s to %s after %s: %w",
		r.h.Class, mad.AttrName(r.h.Class, r.h.AttrID), where(r.addr, r.req, r.h), words.Count(attempts, "attempt"), err)
}

func (e *Engine) deadErr() error {
	err := e.readErr
	if err == nil || errors.Is(err, ErrClosed) || errors.Is(err, context.Canceled) {
		return ErrClosed
	}
	return fmt.Errorf("transport: receiving from %s failed, engine stopped: %w", e.conn.Local().Name, err)
}

// issuedLocked reports whether tid was allocated by this engine (recently
// enough to tell): a response to it is late rather than unknown.
func (e *Engine) issuedLocked(tid uint32) bool {
	if tid == 0 || e.issued == 0 {
		return false
	}
	span := uint64(1) << 31
	if e.issued < span {
		span = e.issued
	}
	return uint64(e.lastTID-tid) < span
}

func (e *Engine) count(f func(*counters)) {
	e.mu.Lock()
	f(&e.st)
	e.mu.Unlock()
}

// read is the single reader goroutine (a Deliverer Conn dispatches from
// its own goroutine; Recv then reports only why receiving ended). When it
// stops, every request still in the Engine fails.
func (e *Engine) read(ctx context.Context) {
	defer close(e.readerDone)
	rec, _ := e.conn.(Recycler)
	bad := 0
	for {
		p, err := e.conn.Recv(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, ErrClosed) {
				e.stop(err)
				return
			}
			e.count(func(s *counters) { s.recvErrors++ })
			if bad++; bad >= 100 {
				// A Conn that keeps failing is broken: stop, so that
				// requests fail now instead of timing out one by one.
				e.stop(err)
				return
			}
			continue
		}
		bad = 0
		if e.dispatch(p, time.Now()) && rec != nil {
			rec.Recycle(p)
		}
	}
}

// stop fails every request still in the Engine and refuses new ones.
func (e *Engine) stop(why error) {
	var acts actions
	e.mu.Lock()
	e.readErr = why
	e.dead = why
	err := e.deadErr()
	for _, r := range e.pendingLocked(func(*request) bool { return true }) {
		e.finishLocked(r, nil, err, &acts)
	}
	e.timer.Stop()
	e.mu.Unlock()
	// Nothing goes out any more; each attempt queued on the way (an
	// admission while failing the others) drops the reference it took
	// for send.
	for i := 0; i < acts.nsend; i++ {
		e.release(acts.sendAt(i).r)
	}
	acts.nsend, acts.sendN = 0, nil
	e.run(&acts)
}

// dispatch routes one received packet to the request it answers, or
// counts it as late or unknown. It reports whether nothing kept p or its
// MAD: only an answer handed to a Go or Do caller's Response is kept (a
// GoSMP read decodes it before dispatch returns).
func (e *Engine) dispatch(p *Packet, now time.Time) bool {
	h, err := mad.PeekHeader(p.MAD)
	if err != nil {
		e.count(func(s *counters) { s.unknown++ })
		return true
	}
	tid := mad.TIDLow(h.TID)
	acts := actions{now: now}
	if p.Status != 0 {
		e.mu.Lock()
		en, ok := e.calls.get(tid)
		if p.Status == StatusTimedOut && ok && en.r.state == inFlight && en.attempt == en.r.attempt {
			e.unlinkLocked(en.r)
			e.timedOutLocked(en.r, now, &acts)
		} else {
			e.st.staleNotices++
		}
		e.mu.Unlock()
		e.run(&acts)
		return true
	}
	if e.opts.Tap != nil {
		e.opts.Tap.Record(false, p.Addr, p.MAD, now)
	}
	e.mu.Lock()
	e.st.received++
	e.st.bytesRecv += uint64(len(p.MAD))
	if !h.Method.IsResponse() {
		e.st.unknown++ // unsolicited (a trap, or a request to us)
		e.mu.Unlock()
		return true
	}
	en, ok := e.calls.get(tid)
	if !ok {
		if e.issuedLocked(tid) {
			e.st.late++
		} else {
			e.st.unknown++
		}
		e.mu.Unlock()
		return true
	}
	r := en.r
	rtt := now.Sub(en.sentAt)
	var resp *Response
	if r.c != nil {
		resp = r.c.response()
	} else {
		resp = new(Response)
	}
	*resp = Response{MAD: p.MAD, Addr: p.Addr, Attempts: r.attempt, RTT: rtt}
	status := mad.Status(binary.BigEndian.Uint16(p.MAD[4:6]))
	if r.h.Class == mad.ClassSubnDR {
		status &= 0x7fff // the D bit is not status
	}
	e.st.answered++
	e.st.lat.add(rtt)
	var serr error
	if !status.OK() {
		e.st.errors++
		se := &StatusError{Class: r.h.Class, Attr: r.h.AttrID, Status: status, Addr: r.addr}
		if r.h.Class == mad.ClassSubnDR {
			se.Path = drPath(r.req)
		}
		serr = se
	}
	kept := r.c == nil // read now: once completed, a pooled r is another read's
	e.finishLocked(r, resp, serr, &acts)
	e.mu.Unlock()
	e.run(&acts)
	return !kept
}

// keyOf is the per-destination window key of a request.
func keyOf(a Addr, req []byte, h mad.Header) destKey {
	if h.Class == mad.ClassSubnDR && len(req) >= 192 {
		n := min(int(req[7]), mad.MaxHops)
		// A path with real DrSLID/DrDLID (LID-routed part) still ends
		// at the node the path names; the path alone is the key.
		k := destKey{kind: 'd', n: byte(n)}
		copy(k.b[:], req[129:129+n])
		return k
	}
	if a.GRH != nil {
		k := destKey{kind: 'g'}
		g := a.GRH.DGID.As16()
		copy(k.b[:], g[:])
		return k
	}
	return destKey{kind: 'l', lid: a.DLID}
}

// silentKey is what one unanswered request makes silent (SkipSilent).
type silentKey struct {
	dest destKey
	smp  bool
	attr mad.AttrID // for other classes than SMPs
}

func silentOf(r *request) silentKey {
	if r.h.Class == mad.ClassSubnLID || r.h.Class == mad.ClassSubnDR {
		return silentKey{dest: r.key, smp: true}
	}
	return silentKey{dest: r.key, attr: r.h.AttrID}
}

// silentForLocked is the unanswered request that makes r's destination
// silent (SkipSilent), nil when none: one of r's own key, or for a
// LID-routed MAD of another class an SMP's to the same LID. Callers hold
// e.mu.
func (e *Engine) silentForLocked(r *request) *TimeoutError {
	if te := e.silent[silentOf(r)]; te != nil {
		return te
	}
	if r.key.kind == 'l' && r.h.Class != mad.ClassSubnLID && r.h.Class != mad.ClassSubnDR {
		return e.silent[silentKey{dest: r.key, smp: true}]
	}
	return nil
}

// silentErr is r's failure when its destination left te unanswered.
func silentErr(r *request, te *TimeoutError) *SilentError {
	se := &SilentError{Addr: r.addr, Class: r.h.Class, Attr: r.h.AttrID, AttrMod: r.h.AttrMod, Earlier: te}
	if r.h.Class == mad.ClassSubnDR {
		se.Path = drPath(r.req)
	}
	return se
}

func drPath(req []byte) mad.Path {
	if len(req) < 192 {
		return nil
	}
	n := min(int(req[7]), mad.MaxHops)
	return append(mad.Path{}, req[129:129+n]...)
}

func where(a Addr, req []byte, h mad.Header) string {
	if h.Class == mad.ClassSubnDR {
		return "path " + drPath(req).String()
	}
	return a.String()
}
