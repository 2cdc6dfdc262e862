package transport

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

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
// per-destination window, times attempts out and retries them. One reader
// goroutine drains the Conn; requests wait in their callers' goroutines.
// An Engine is safe for concurrent use.
type Engine struct {
	conn   Conn
	opts   Options
	global chan struct{}

	mu      sync.Mutex
	calls   map[uint32]entry // outstanding attempts by TID low 32 bits
	dests   map[string]*dest
	lastTID uint32
	issued  uint64 // TIDs ever allocated
	st      counters

	stopRead   context.CancelFunc
	readerDone chan struct{} // closed when the reader exits
	readErr    error         // why the reader exited; set before readerDone closes
	closeOnce  sync.Once
	closeErr   error
}

// call is one Do in progress.
type call struct {
	ev      chan event
	attempt int      // current attempt, 1-based; under Engine.mu
	tids    []uint32 // TIDs of all attempts still registered; under Engine.mu
	sentAt  []time.Time
}

type entry struct {
	c       *call
	attempt int
}

type event struct {
	pkt      *Packet
	attempt  int
	timedOut bool // the Conn reported the attempt unanswered
	at       time.Time
}

type dest struct {
	slots chan struct{}
	refs  int
}

// NewEngine starts an Engine on c. The Engine owns c from now on: Close
// closes it.
func NewEngine(c Conn, opts Options) *Engine {
	opts = opts.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	e := &Engine{
		conn:       c,
		opts:       opts,
		global:     make(chan struct{}, opts.Window),
		calls:      make(map[uint32]entry),
		dests:      make(map[string]*dest),
		stopRead:   cancel,
		readerDone: make(chan struct{}),
	}
	go e.read(ctx)
	return e
}

// Options returns the options in effect (defaults filled in).
func (e *Engine) Options() Options { return e.opts }

// Local describes the local port of the underlying Conn.
func (e *Engine) Local() LocalPort { return e.conn.Local() }

// Close stops the reader, closes the Conn and makes requests in progress
// return ErrClosed. It waits for the reader goroutine to exit.
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
	h, err := mad.PeekHeader(req)
	if err != nil {
		return nil, fmt.Errorf("transport: not sending a malformed request: %w", err)
	}
	if h.Method.IsResponse() {
		return nil, fmt.Errorf("transport: not sending %v %s: it is a response method", h.Method, mad.AttrName(h.Class, h.AttrID))
	}
	if h.Method.Request() == mad.MethodSet && !e.opts.AllowWrites {
		return nil, fmt.Errorf("%s %s to %s: %w", h.Class, mad.AttrName(h.Class, h.AttrID), where(addr, req, h), ErrReadOnly)
	}
	select {
	case <-e.readerDone:
		return nil, e.deadErr()
	default:
	}

	key := destKey(addr, req, h)
	d, err := e.acquireDest(ctx, key)
	if err != nil {
		return nil, e.abandon(err, addr, req, h, 0)
	}
	defer e.releaseDest(key, d)
	select {
	case e.global <- struct{}{}:
	case <-ctx.Done():
		return nil, e.abandon(ctx.Err(), addr, req, h, 0)
	case <-e.readerDone:
		return nil, e.deadErr()
	}
	defer func() { <-e.global }()

	maxAttempts := 1 + e.opts.Retries
	c := &call{ev: make(chan event, maxAttempts+1), sentAt: make([]time.Time, maxAttempts+1)}
	e.mu.Lock()
	e.st.requests++
	e.st.inFlight++
	if e.st.inFlight > e.st.maxInFlight {
		e.st.maxInFlight = e.st.inFlight
	}
	e.mu.Unlock()
	defer e.forget(c)

	start := time.Now()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for attempt := 1; ; attempt++ {
		buf := make([]byte, len(req))
		copy(buf, req)
		tid := e.register(c, attempt)
		binary.BigEndian.PutUint64(buf[8:16], uint64(tid))
		now := time.Now()
		c.sentAt[attempt] = now
		if err := e.conn.Send(ctx, &Packet{Addr: addr, MAD: buf, Timeout: e.opts.Timeout}); err != nil {
			if ctx.Err() != nil {
				return nil, e.abandon(ctx.Err(), addr, req, h, attempt)
			}
			e.count(func(s *counters) { s.errors++ })
			return nil, fmt.Errorf("transport: sending %s %s to %s: %w", h.Class, mad.AttrName(h.Class, h.AttrID), where(addr, req, h), err)
		}
		e.count(func(s *counters) {
			s.sent++
			s.bytesSent += uint64(len(buf))
			if attempt > 1 {
				s.retried++
			}
		})
		if e.opts.Tap != nil {
			e.opts.Tap.Record(true, addr, buf, now)
		}
		timer.Reset(e.opts.Timeout)
		for timedOut := false; !timedOut; {
			select {
			case ev := <-c.ev:
				if !ev.timedOut {
					return e.answered(ev, c, attempt, addr, req, h)
				}
				// The Conn says an attempt went unanswered; a notice
				// for an earlier attempt is stale and ignored.
				timedOut = ev.attempt == attempt
			case <-timer.C:
				timedOut = true
			case <-ctx.Done():
				return nil, e.abandon(ctx.Err(), addr, req, h, attempt)
			case <-e.readerDone:
				return nil, e.deadErr()
			}
		}
		if attempt >= maxAttempts {
			e.count(func(s *counters) { s.timedOut++ })
			te := &TimeoutError{Addr: addr, Class: h.Class, Attr: h.AttrID, AttrMod: h.AttrMod,
				Attempts: attempt, Waited: time.Since(start)}
			if h.Class == mad.ClassSubnDR {
				te.Path = drPath(req)
			}
			return nil, te
		}
	}
}

func (e *Engine) answered(ev event, c *call, attempt int, addr Addr, req []byte, h mad.Header) (*Response, error) {
	rtt := ev.at.Sub(c.sentAt[ev.attempt])
	resp := &Response{MAD: ev.pkt.MAD, Addr: ev.pkt.Addr, Attempts: attempt, RTT: rtt}
	status := mad.Status(binary.BigEndian.Uint16(ev.pkt.MAD[4:6]))
	if h.Class == mad.ClassSubnDR {
		status &= 0x7fff // the D bit is not status
	}
	e.mu.Lock()
	e.st.answered++
	e.st.lat.add(rtt)
	if !status.OK() {
		e.st.errors++
	}
	e.mu.Unlock()
	if !status.OK() {
		se := &StatusError{Class: h.Class, Attr: h.AttrID, Status: status, Addr: addr}
		if h.Class == mad.ClassSubnDR {
			se.Path = drPath(req)
		}
		return resp, se
	}
	return resp, nil
}

// abandon counts a request given up because of ctx (or a window wait) and
// wraps err with what was abandoned.
func (e *Engine) abandon(err error, addr Addr, req []byte, h mad.Header, attempts int) error {
	e.count(func(s *counters) { s.canceled++ })
	return fmt.Errorf("transport: abandoned %s %s to %s after %d attempts: %w",
		h.Class, mad.AttrName(h.Class, h.AttrID), where(addr, req, h), attempts, err)
}

func (e *Engine) deadErr() error {
	err := e.readErr
	if errors.Is(err, ErrClosed) || errors.Is(err, context.Canceled) {
		return ErrClosed
	}
	return fmt.Errorf("transport: receiving from %s failed, engine stopped: %w", e.conn.Local().Name, err)
}

// register allocates a TID for attempt of c.
func (e *Engine) register(c *call, attempt int) uint32 {
	e.mu.Lock()
	defer e.mu.Unlock()
	for {
		e.lastTID++
		if e.lastTID == 0 {
			continue
		}
		if _, busy := e.calls[e.lastTID]; busy {
			continue // wrapped around onto an outstanding TID
		}
		break
	}
	e.issued++
	tid := e.lastTID
	e.calls[tid] = entry{c: c, attempt: attempt}
	c.tids = append(c.tids, tid)
	c.attempt = attempt
	return tid
}

// forget unregisters every TID of c: responses to them count as late.
func (e *Engine) forget(c *call) {
	e.mu.Lock()
	for _, t := range c.tids {
		delete(e.calls, t)
	}
	c.tids = nil
	e.st.inFlight--
	e.mu.Unlock()
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

func (e *Engine) acquireDest(ctx context.Context, key string) (*dest, error) {
	e.mu.Lock()
	d := e.dests[key]
	if d == nil {
		d = &dest{slots: make(chan struct{}, e.opts.PerDest)}
		e.dests[key] = d
	}
	d.refs++
	e.mu.Unlock()
	select {
	case d.slots <- struct{}{}:
		return d, nil
	case <-ctx.Done():
		e.unref(key, d)
		return nil, ctx.Err()
	case <-e.readerDone:
		e.unref(key, d)
		return nil, ErrClosed
	}
}

func (e *Engine) releaseDest(key string, d *dest) {
	<-d.slots
	e.unref(key, d)
}

func (e *Engine) unref(key string, d *dest) {
	e.mu.Lock()
	d.refs--
	if d.refs == 0 {
		delete(e.dests, key)
	}
	e.mu.Unlock()
}

// read is the single reader goroutine.
func (e *Engine) read(ctx context.Context) {
	defer close(e.readerDone)
	bad := 0
	for {
		p, err := e.conn.Recv(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, ErrClosed) {
				e.readErr = err
				return
			}
			e.count(func(s *counters) { s.recvErrors++ })
			if bad++; bad >= 100 {
				// A Conn that keeps failing is broken: stop, so that
				// requests fail now instead of timing out one by one.
				e.readErr = err
				return
			}
			continue
		}
		bad = 0
		e.dispatch(p, time.Now())
	}
}

// dispatch routes one received packet to the request it answers, or
// counts it as late or unknown.
func (e *Engine) dispatch(p *Packet, now time.Time) {
	h, err := mad.PeekHeader(p.MAD)
	if err != nil {
		e.count(func(s *counters) { s.unknown++ })
		return
	}
	tid := mad.TIDLow(h.TID)
	if p.Status != 0 {
		e.mu.Lock()
		en, ok := e.calls[tid]
		if p.Status == StatusTimedOut && ok && en.attempt == en.c.attempt {
			e.mu.Unlock()
			select {
			case en.c.ev <- event{attempt: en.attempt, timedOut: true, at: now}:
			default:
			}
			return
		}
		e.st.staleNotices++
		e.mu.Unlock()
		return
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
		return
	}
	en, ok := e.calls[tid]
	if !ok {
		if e.issuedLocked(tid) {
			e.st.late++
		} else {
			e.st.unknown++
		}
		e.mu.Unlock()
		return
	}
	for _, t := range en.c.tids {
		delete(e.calls, t)
	}
	en.c.tids = nil
	e.mu.Unlock()
	select {
	case en.c.ev <- event{pkt: p, attempt: en.attempt, at: now}:
	default:
	}
}

// destKey is the per-destination window key.
func destKey(a Addr, req []byte, h mad.Header) string {
	if h.Class == mad.ClassSubnDR && len(req) >= 192 {
		n := int(req[7])
		if n > mad.MaxHops {
			n = mad.MaxHops
		}
		// A path with real DrSLID/DrDLID (LID-routed part) still ends
		// at the node the path names; the path alone is the key.
		return "dr:" + string(req[129:129+n])
	}
	if a.GRH != nil {
		return "gid:" + a.GRH.DGID.String()
	}
	return fmt.Sprintf("lid:%d", a.DLID)
}

func drPath(req []byte) mad.Path {
	if len(req) < 192 {
		return nil
	}
	n := int(req[7])
	if n > mad.MaxHops {
		n = mad.MaxHops
	}
	return append(mad.Path{}, req[129:129+n]...)
}

func where(a Addr, req []byte, h mad.Header) string {
	if h.Class == mad.ClassSubnDR {
		return "path " + drPath(req).String()
	}
	return a.String()
}
