package perf

import (
	"context"
	"sync"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fifo"
	"github.com/ibdoctor/ibdoctor/internal/pump"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// sched hands MADs to the transport: at most window in flight overall and
// per to one job (one PMA) at a time, jobs served round-robin so that one
// switch's many ports do not take the whole window while the engine lets
// only PerDest of them go. Completions run under mu and may add work;
// whoever finds work and no pump running pumps, outside the lock.
type sched struct {
	ctx   context.Context
	g     Getter
	async AsyncGetter // nil: GetPerf on a goroutine per MAD in flight
	now   func() time.Time

	window, per int

	mu       sync.Mutex
	cond     *sync.Cond
	queue    fifo.Queue[*job] // jobs with MADs to send and room for one more
	inFlight int              // MADs handed to the transport, not yet completed
	busy     int              // jobs not finished
	sender   pump.Pump[*op]
}

// job is the MADs of one PMA (one LID), sent at most per at a time.
type job struct {
	ops    []*op
	head   int // ops[head] is the next to send
	active int // ops in flight
	queued bool
	// left, when above zero, is how many more times gen adds ops (a
	// port's) once ops are all sent: a sweep's ops, their closures and
	// the attributes they fill are made as they go out, not for every
	// port of the fabric before the first is sent.
	left int
	gen  func()
}

// pushFront makes o the next op of j (a follow-up of one just completed).
func (j *job) pushFront(o *op) {
	if j.head > 0 {
		j.head--
		j.ops[j.head] = o
		return
	}
	j.ops = append([]*op{o}, j.ops...)
}

func (j *job) finished() bool { return !j.more() && j.active == 0 }

// more reports whether j has ops to send, made or still to make.
func (j *job) more() bool { return j.head < len(j.ops) || j.left > 0 }

// next returns the next op to send, making it if it is still to make.
func (j *job) next() *op {
	if j.head == len(j.ops) {
		clear(j.ops)
		j.ops, j.head = j.ops[:0], 0
		j.left--
		j.gen()
	}
	o := j.ops[j.head]
	j.ops[j.head] = nil
	j.head++
	return o
}

// op is one MAD.
type op struct {
	j *job
	// send starts the MAD and calls done once, from any goroutine.
	send func(done func(error))
	// done records the result; it runs under sched.mu.
	done func(error)
	// port is the port this MAD reads, if any: once one of its MADs has
	// been sent, the others are sent even after ctx ended (they then fail
	// with ctx's error and the port is reported, as a port whose read had
	// begun).
	port *portRead
	// cont marks the follow-up of a MAD already sent: never skipped.
	cont bool
}

// fresh reports whether o starts new work: skipped once ctx ended.
func (o *op) fresh() bool { return !o.cont && (o.port == nil || o.port.sent == 0) }

// perDestination is the engine's per-destination window, when g says.
type perDestination interface {
	Options() transport.Options
}

func newSched(ctx context.Context, g Getter, o Options) *sched {
	s := &sched{ctx: ctx, g: g, window: o.Workers, per: transport.DefaultPerDest, now: o.Now}
	if s.now == nil {
		s.now = time.Now
	}
	s.async, _ = g.(AsyncGetter)
	if pd, ok := g.(perDestination); ok && pd.Options().PerDest > 0 {
		s.per = pd.Options().PerDest
	}
	s.per = max(1, min(s.per, s.window))
	s.cond = sync.NewCond(&s.mu)
	return s
}

// get returns the send function of a Get of a at addr.
func (s *sched) get(addr transport.Addr, a mad.Attribute) func(func(error)) {
	if s.async != nil {
		return func(done func(error)) {
			if err := s.async.GoPerf(s.ctx, addr, a, 0, func(_ *mad.GMP, err error) { done(err) }); err != nil {
				done(err)
			}
		}
	}
	return func(done func(error)) {
		go func() {
			_, err := s.g.GetPerf(s.ctx, addr, a, 0)
			done(err)
		}()
	}
}

// set returns the send function of a Set of a at addr. Sets are rare
// (a reset, on request) and the engine has no asynchronous form: each
// runs SetPerf on a goroutine, within the same limits as reads.
func (s *sched) set(addr transport.Addr, a mad.Attribute) func(func(error)) {
	return func(done func(error)) {
		go func() {
			_, err := s.g.SetPerf(s.ctx, addr, a, 0)
			done(err)
		}()
	}
}

// addLocked queues job j.
func (s *sched) addLocked(j *job) {
	if !j.more() {
		return
	}
	s.busy++
	j.queued = true
	s.queue.Push(j)
}

// run sends the queued jobs, and what their completions add, until all
// have finished.
func (s *sched) run() {
	s.pump()
	s.mu.Lock()
	for s.busy > 0 {
		s.cond.Wait()
	}
	s.mu.Unlock()
}

// finishLocked accounts for a job with nothing left to send or wait for.
func (s *sched) finishLocked() {
	s.busy--
	if s.busy == 0 {
		s.cond.Broadcast()
	}
}

// pump hands MADs to the transport while fewer than window are in flight.
// Once ctx has ended it drops what would start new work. One goroutine
// pumps at a time; the others leave it a note.
func (s *sched) pump() {
	s.sender.Run(&s.mu, func(batch []*op) []*op {
		ended := s.ctx.Err() != nil
		for s.inFlight < s.window && s.queue.Len() > 0 {
			j := s.queue.Peek()
			o := j.next()
			if ended && o.fresh() {
				if !j.more() {
					s.queue.Pop()
					j.queued = false
					if j.active == 0 {
						s.finishLocked()
					}
				}
				continue
			}
			if o.port != nil {
				if o.port.sent == 0 {
					o.port.firstSent = s.now()
				}
				o.port.sent++
			}
			j.active++
			s.inFlight++
			if !j.more() || j.active >= s.per {
				s.queue.Pop()
				j.queued = false
			}
			batch = append(batch, o)
		}
		return batch
	}, func(o *op) { o.send(func(err error) { s.completed(o, err) }) })
}

// completed records the end of o and pumps what it made possible.
func (s *sched) completed(o *op, err error) {
	j := o.j
	s.mu.Lock()
	s.inFlight--
	j.active--
	o.done(err)
	if j.more() && !j.queued {
		j.queued = true
		s.queue.Push(j)
	}
	if j.finished() {
		s.finishLocked()
	}
	s.mu.Unlock()
	s.pump()
}
