package perf

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Result is a counter sweep: one sample, or two and what changed between
// them. It implements checks.Counters.
type Result struct {
	// First is the first sample; Last the second (the same as First
	// without an interval).
	First, Last *Sample
	// Deltas holds, with two samples, each port read both times, in
	// fabric order.
	Deltas []*PortDelta
	// Errors lists what could not be read (either sample) or reset.
	Errors []*PortError
	// Reset says which counters were cleared after the last read.
	Reset ResetMode

	interval time.Duration
	tick     time.Duration
	byKey    map[Key]*PortDelta
	// at, from Compare, holds each of Last.Ports' delta by its place
	// (nil: none): two nodes sharing a GUID share a Key, not a place.
	at []*PortDelta
}

// Interval is the nominal time between the two samples, 0 with one.
func (r *Result) Interval() time.Duration { return r.interval }

// Delta returns the change of one port between a Sweep's samples
// (Compare's are by place: DeltaAt).
func (r *Result) Delta(k Key) (*PortDelta, bool) {
	d, ok := r.byKey[k]
	return d, ok
}

// DeltaAt returns the change of Last.Ports[i]: the port itself, where
// Delta's key names every node claiming a GUID.
func (r *Result) DeltaAt(i int) (*PortDelta, bool) {
	if r.at != nil {
		d := r.at[i]
		return d, d != nil
	}
	return r.Delta(r.Last.Ports[i].Key)
}

// DeltaValue is one counter's change between two samples.
type DeltaValue struct {
	Name     string
	Kind     mad.CounterKind
	From, To uint64 // real units (octets for data)
	// Delta is To-From; when the counter went backwards (it was cleared,
	// or the device reset) it is To, the least it can have grown.
	Delta     uint64
	PerSecond float64
	// Backwards: To < From.
	Backwards bool
	// Saturated: To is stuck at all-ones, so Delta is a lower bound (0
	// when it was already stuck at From).
	Saturated bool
	// Unknown: the two readings came from different fields (16/32-bit
	// PortCounters in one sample, 64-bit PortCountersExtended in the
	// other): they count the same events, but the narrow one saturates and
	// a device may clear them apart, so the increase is not known. Delta
	// and PerSecond are 0 and must not be judged; Why says so.
	Unknown bool
	Why     string
}

// PortDelta is one port's change between two samples.
type PortDelta struct {
	Key
	Port *fabric.Port
	// Elapsed is the time between this port's two readings: from the
	// first reading's request to the second's answer.
	Elapsed  time.Duration
	Counters []DeltaValue
	// Backwards lists counters that went backwards: the counters were
	// cleared or the device reset between the samples.
	Backwards []string
	// Mixed lists counters whose increase is unknown because the two
	// readings came from different attributes (DeltaValue.Unknown).
	Mixed []string
	// XmitBytesPerSecond and RcvBytesPerSecond are the data rates.
	XmitBytesPerSecond, RcvBytesPerSecond float64
	// XmitUtilization and RcvUtilization are those rates as a share of
	// the link's data rate (fabric.Port.Rate().BytesPerSecond()); -1 when
	// the rate is unknown or the port had no data counters.
	XmitUtilization, RcvUtilization float64
	// XmitWaitShare is ΔPortXmitWait × tick / Elapsed: the share of the
	// time the port had data to send and could not (see Options.
	// XmitWaitTick); -1 when PortXmitWait is not supported.
	XmitWaitShare float64
}

// MixedReason is why a counter read from different attributes in the two
// samples has no increase (DeltaValue.Why).
const MixedReason = "read from PortCounters in one sample and PortCountersExtended in the other: the narrow and 64-bit fields cannot be subtracted, so the increase is unknown"

// Get returns the change of the counter called name.
func (d *PortDelta) Get(name string) (DeltaValue, bool) {
	for _, v := range d.Counters {
		if v.Name == name {
			return v, true
		}
	}
	return DeltaValue{}, false
}

// Sweep reads the counters of every port with a link in f through g: once,
// or twice o.Interval apart, and then clears them if o.Reset asks (the
// engine must allow writes). What could not be read is in Result.Errors;
// the error is non-nil only when ctx ended (the partial result is returned
// with it).
func Sweep(ctx context.Context, g Getter, f *fabric.Fabric, o Options) (*Result, error) {
	o = o.withDefaults()
	r := &Result{interval: o.Interval, tick: o.XmitWaitTick, Reset: o.Reset, byKey: map[Key]*PortDelta{}}
	skip := o.SkipCleanSwitches && o.Interval <= 0 && o.Reset == ResetNone
	first, err := readWith(ctx, g, f, o, skip, nil)
	r.First, r.Last = first, first
	r.Errors = append(r.Errors, first.Errors...)
	if err != nil {
		return r, err
	}
	if o.Interval > 0 {
		if err := o.Sleep(ctx, o.Interval); err != nil {
			return r, err
		}
		second, err := readWith(ctx, g, f, o, false, first.Caps)
		r.Last = second
		r.Errors = mergeSampleErrors(r.Errors, second.Errors)
		// The interval the checks judge by is the measured one, as in
		// Compare: each sweep takes time, so a port's two readings are
		// further apart than o.Interval.
		var sum time.Duration
		for _, b := range second.Ports {
			a, ok := first.Port(b.Key)
			if !ok {
				continue
			}
			d := delta(a, b, o.XmitWaitTick)
			r.Deltas = append(r.Deltas, d)
			r.byKey[d.Key] = d
			sum += d.Elapsed
		}
		if len(r.Deltas) > 0 && sum > 0 {
			r.interval = sum / time.Duration(len(r.Deltas))
		}
		if err != nil {
			return r, err
		}
	}
	if o.Reset != ResetNone {
		r.Errors = append(r.Errors, reset(ctx, g, r.Last, o)...)
	}
	sortErrors(r.Errors)
	return r, ctx.Err()
}

// mergeSampleErrors appends the second sample's errors to the first's,
// except one that repeats a first-sample failure of the same read (the
// same port or PMA and attribute, unanswered both times, or failing with
// the same words): that one is said once, "in both samples" (trial T11:
// a PMA whose PortCountersExtended never answers was two identical
// entries). The words of a timeout carry its wait, so unanswered reads
// are matched as unanswered, not by their text.
func mergeSampleErrors(first, second []*PortError) []*PortError {
	type key struct {
		Key
		port bool
		what string
	}
	at := make(map[key]*PortError, len(first))
	for _, e := range first {
		at[key{e.Key, e.Port != nil, e.What}] = e
	}
	for _, e := range second {
		f := at[key{e.Key, e.Port != nil, e.What}]
		same := f != nil && f.Agent == e.Agent && f.ReadNarrow == e.ReadNarrow && f.Silent == e.Silent &&
			((transport.Unanswered(f.Err) && transport.Unanswered(e.Err)) || f.Err.Error() == e.Err.Error())
		if !same {
			first = append(first, e)
			continue
		}
		if !f.BothSamples {
			f.BothSamples = true
			f.Err = bothSamples{f.Err}
		}
	}
	return first
}

// bothSamples is the error of a read that failed in both samples.
type bothSamples struct{ err error }

func (b bothSamples) Error() string { return b.err.Error() + "; so in both samples" }
func (b bothSamples) Unwrap() error { return b.err }

// Compare makes a Result of a new sample and each port's own previous
// reading (prev, by the port's place in last.Ports; a live view that
// reads the fabric in turns keeps one per port, as Keep made it with
// base): the deltas of the ports prev knows, found by DeltaAt. Its
// interval, which checks judge rates by, is the mean time between the
// two readings of those ports. The packet counters are not compared (a
// Prior does not keep them). tick is the PortXmitWait tick (0:
// DefaultXmitWaitTick).
func Compare(prev func(i int) (*Prior, bool), base time.Time, last *Sample, tick time.Duration) *Result {
	if tick <= 0 {
		tick = DefaultXmitWaitTick
	}
	r := &Result{First: last, Last: last, tick: tick, at: make([]*PortDelta, len(last.Ports))}
	r.Errors = append(r.Errors, last.Errors...)
	var sum time.Duration
	var buf [maxValues]Value
	for i, b := range last.Ports {
		a, ok := prev(i)
		if !ok || b.FromAllPorts || a.allPorts {
			continue
		}
		d := deltaFrom(base.Add(a.from), a.values(&buf), b, tick)
		if d.Elapsed <= 0 {
			continue
		}
		r.Deltas = append(r.Deltas, d)
		r.at[i] = d
		sum += d.Elapsed
	}
	if len(r.Deltas) > 0 {
		r.interval = sum / time.Duration(len(r.Deltas))
	}
	return r
}

// start is where a reading's increase to a later one begins: the device
// read its counters somewhere between a request's sending and its
// answer, so from the first reading's request to the second's answer is
// the longest the increase can span, and a link sending at its full rate
// reads at most 100% (the answers' times alone let a slow first answer or
// a queued second request push it over).
func (p *PortCounters) start() time.Time {
	from := p.Time()
	if sent := p.Sent(); !sent.IsZero() && sent.Before(from) {
		from = sent
	}
	return from
}

func delta(a, b *PortCounters, tick time.Duration) *PortDelta {
	var buf [maxValues]Value
	return deltaFrom(a.start(), a.values(&buf), b, tick)
}

// deltaFrom is b's change from the reading that started at from and read
// the values av.
func deltaFrom(from time.Time, av []Value, b *PortCounters, tick time.Duration) *PortDelta {
	d := &PortDelta{Key: b.Key, Port: b.Port, Elapsed: b.Time().Sub(from), XmitUtilization: -1, RcvUtilization: -1, XmitWaitShare: -1}
	secs := d.Elapsed.Seconds()
	var buf [maxValues]Value
	for _, vb := range b.values(&buf) {
		i := slices.IndexFunc(av, func(v Value) bool { return v.Name == vb.Name })
		if i < 0 {
			continue
		}
		dv := Increase(av[i], vb)
		switch {
		case dv.Why == MixedReason:
			d.Mixed = append(d.Mixed, vb.Name)
		case dv.Backwards:
			d.Backwards = append(d.Backwards, vb.Name)
		}
		if secs > 0 && !dv.Unknown {
			dv.PerSecond = float64(dv.Delta) / secs
		}
		d.Counters = append(d.Counters, dv)
	}
	if secs <= 0 {
		return d
	}
	var rate mad.Rate
	if b.Port != nil {
		rate = b.Port.Rate()
	}
	bps := rate.BytesPerSecond()
	if v, ok := d.Get("PortXmitData"); ok && !v.Unknown {
		d.XmitBytesPerSecond = v.PerSecond
		if bps > 0 {
			d.XmitUtilization = v.PerSecond / bps
		}
	}
	if v, ok := d.Get("PortRcvData"); ok && !v.Unknown {
		d.RcvBytesPerSecond = v.PerSecond
		if bps > 0 {
			d.RcvUtilization = v.PerSecond / bps
		}
	}
	if v, ok := d.Get("PortXmitWait"); ok && !v.Unknown && tick > 0 {
		d.XmitWaitShare = float64(v.Delta) * tick.Seconds() / secs
	}
	return d
}

// Increase is the one rule for a counter's increase from reading a to
// reading b (PerSecond left 0): a counter's two samples, or a gate's saved
// sweep and its live reading. It is unknown when the two were read from
// different fields (widths or attributes) or a narrow field was stuck at
// its maximum both times; when b is below a the counter was cleared and
// its increase is b, the least it can have grown.
func Increase(a, b Value) DeltaValue {
	dv := DeltaValue{Name: b.Name, Kind: b.Kind, From: a.Value, To: b.Value, Saturated: b.Saturated}
	switch {
	case a.Bits != b.Bits || a.Source != b.Source:
		// The narrow field saturates (and may be cleared apart from
		// the wide one): the difference is no increase at all.
		dv.Unknown, dv.Why = true, MixedReason
	case a.Saturated && b.Saturated && a.Value == b.Value:
		// Stuck at the narrow field's maximum both times: it may have
		// grown by anything, and 0 would read as a clean port.
		dv.Unknown = true
		dv.Why = fmt.Sprintf("the %d-bit field was stuck at its maximum in both samples (PortCountersExtended not read): the increase is unknown", b.Bits)
	case b.Value < a.Value:
		dv.Backwards, dv.Delta = true, b.Value
	default:
		dv.Delta = b.Value - a.Value
	}
	return dv
}

// reset clears the counters of every port read in s: a PortCounters Set
// per port, then a PortCountersExtended Set where asked, one PMA's ports
// at most the per-destination window at a time, PMAs in turn.
func reset(ctx context.Context, g Getter, s *Sample, o Options) []*PortError {
	sc := newSched(ctx, g, o)
	var errs []*PortError
	byLID := map[uint16]*job{}
	var jobs []*job
	for _, p := range s.Ports {
		if p.FromAllPorts {
			continue
		}
		j := byLID[p.LID]
		if j == nil {
			j = &job{}
			byLID[p.LID] = j
			jobs = append(jobs, j)
		}
		a := transport.PerfAt(p.LID, o.SL, o.PKeyIndex)
		fail := func(err error) {
			errs = append(errs, &PortError{Key: p.Key, Port: p.Port, LID: p.LID, What: "reset", Err: err})
		}
		pc := &mad.PortCounters{PortSelect: p.Key.Port, CounterSelect: mad.CounterSelectErrors}
		if o.Reset == ResetAll {
			pc.CounterSelect = mad.CounterSelectAll
		}
		if p.Caps.XmitWait() {
			pc.CounterSelect2 = mad.CounterSelect2XmitWait
		}
		j.ops = append(j.ops, &op{j: j, send: sc.set(a, pc), done: func(err error) {
			if err != nil {
				fail(fmt.Errorf("PortCounters Set (CounterSelect 0x%04x): %w", pc.CounterSelect, err))
				return
			}
			if o.Reset == ResetAll && p.ext != nil {
				x := &mad.PortCountersExtended{PortSelect: p.Key.Port, CounterSelect: mad.ExtCounterSelectAll}
				j.pushFront(&op{j: j, cont: true, send: sc.set(a, x), done: func(err error) {
					if err != nil {
						fail(fmt.Errorf("PortCountersExtended Set: %w", err))
					}
				}})
			}
		}})
	}
	sc.mu.Lock()
	for _, j := range jobs {
		sc.addLocked(j)
	}
	sc.mu.Unlock()
	sc.run()
	for _, e := range errs {
		if e.Port != nil {
			e.Node = e.Port.Node
		}
	}
	return errs
}

// CountersStarted is when the last sample's pass started (zero without
// one): the time a saved reading is paired from (snapshot.New).
func (r *Result) CountersStarted() time.Time {
	if r == nil || r.Last == nil {
		return time.Time{}
	}
	return r.Last.Started
}

// Ports implements checks.Counters: one reading per port of the last
// sample, in fabric order, with deltas when two samples were read. Each
// reading's Errors and XmitWait are this call's buffers, reused for the
// next port: made per port, they were most of what check allocated (a
// reading of every port for each check that walks the counters).
func (r *Result) Ports(fn func(checks.PortReading)) {
	if r.Last == nil {
		return
	}
	perSec := 0.0
	if r.tick > 0 {
		perSec = 1 / r.tick.Seconds()
	}
	var buf [maxValues]Value
	errs := make([]checks.CounterValue, 0, maxValues)
	wait := new(checks.CounterValue)
	for i, p := range r.Last.Ports {
		rd := checks.PortReading{Port: p.Port, XmitWaitTicksPerSecond: perSec, ReadSent: p.Sent(), ReadAt: p.Time()}
		d, _ := r.DeltaAt(i)
		if r.interval > 0 && d == nil {
			continue // not read in both samples: no delta to judge
		}
		errs = errs[:0]
		for _, v := range p.values(&buf) {
			cv := checks.CounterValue{Name: v.Name, Value: v.Value, Bits: v.Bits, Saturated: v.Saturated}
			if d != nil {
				if dv, ok := d.Get(v.Name); ok {
					cv.Delta = dv.Delta
					cv.DeltaUnknown = dv.Why
				}
			}
			switch v.Kind {
			case mad.KindError:
				errs = append(errs, cv)
			case mad.KindWait:
				*wait = cv
				rd.XmitWait = wait
			}
		}
		if len(errs) > 0 {
			rd.Errors = errs
		}
		if d != nil {
			rd.Elapsed = d.Elapsed
			if v, ok := d.Get("PortXmitData"); ok {
				rd.XmitBytes = v.Delta
				rd.DataUnknown = v.Why
			}
			if v, ok := d.Get("PortRcvData"); ok {
				rd.RcvBytes = v.Delta
				if v.Unknown {
					rd.DataUnknown = v.Why
				}
			}
			rd.Reset = len(d.Backwards) > 0
		}
		fn(rd)
	}
}

var _ checks.Counters = (*Result)(nil)
