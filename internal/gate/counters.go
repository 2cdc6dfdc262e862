package gate

import (
	"context"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/perf"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/ibdoctor/ibdoctor/internal/snapshot"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// readCounters reads the PerfMgt counters of ports (once, or twice
// o.Interval apart) and pairs each with what the snapshot saved for it, so
// that checks judges the value and the increase since the sweep; or, over
// a file that recorded its increases (o.Increases), with those. silence
// says why a PMA did not answer, where what was read shows it.
func readCounters(ctx context.Context, e *transport.Engine, f *fabric.Fabric, ports []*fabric.Port, snap *snapshot.Snapshot, o Options, silence diagnose.Silence) (checks.Counters, []report.Unreached, error) {
	if len(ports) == 0 {
		// perf reads every port when given none.
		ports = []*fabric.Port{}
	}
	res, err := perf.Sweep(ctx, e, f, perf.Options{
		SL: o.SL, PKeyIndex: o.PKeyIndex, Interval: o.Interval, Sleep: o.Sleep, Now: o.Clock,
		// One sample judges error counters only (utilization needs two).
		ErrorsOnly: o.Interval == 0,
		// A switch whose PortSelect=0xFF sum of error and wait counters
		// is zero has every port at zero: one MAD instead of one per
		// port on the routes (exact; single sample only).
		SkipCleanSwitches: true,
		Ports:             ports,
	})
	var un []report.Unreached
	if res != nil {
		un = diagnose.UnreachedCounters(res.Errors, silence)
	}
	if res == nil {
		return nil, un, err
	}
	if o.Increases != nil {
		return diagnose.WithIncreases(res, o.Increases), un, err
	}
	if o.Swept != nil {
		// The snapshot is the gate's own sweep, a moment ago: no
		// growth since means nothing over so short a span, and old
		// counts are not history it saw; the values are judged, as
		// check judges them.
		return res, un, err
	}
	// From the saved counter pass's start, not the sweep's: a gate soon
	// after a large sweep does not count the sweep's discovery as time
	// the port could have waited in. The gate's side is its start (its
	// own pass follows within seconds, on o.Clock, which tests fake).
	// Only for a port whose read times are not both known (a snapshot
	// from before gate.idx kept them): pair times each port from its
	// own two readings.
	return &sinceSnapshot{Counters: res, res: res, snap: snap, ago: o.Now.Sub(snap.CountersRead()), cache: true}, un, err
}

// readingsApart is the span between the snapshot's counters and a later
// sweep's c: from the start of each counter pass, so neither sweep's
// discovery counts as time the port could have waited in. A pass whose
// start is not known starts at now; a snapshot that did not record its
// pass, at its sweep's start.
func readingsApart(c checks.Counters, snap *snapshot.Snapshot, now time.Time) time.Duration {
	if cs, ok := c.(interface{ CountersStarted() time.Time }); ok {
		if at := cs.CountersStarted(); !at.IsZero() {
			now = at
		}
	}
	return now.Sub(snap.CountersRead())
}

// CountersStarted is when the readings' counter pass started (zero when
// not known), for the snapshot that saves them.
func (s *sinceSnapshot) CountersStarted() time.Time {
	if cs, ok := s.Counters.(interface{ CountersStarted() time.Time }); ok {
		return cs.CountersStarted()
	}
	return time.Time{}
}

// SinceSweep pairs every reading of c (a later sweep's, taken at now)
// with the counters the earlier sweep in snap saved for its port, as a
// gate's are: checks then judges each error counter's growth since that
// sweep, and its value since the clear as history when it did not grow.
// The readings are paired as they are walked, not kept: a whole fabric's
// clones would add to the sweep's peak (issue 13).
func SinceSweep(c checks.Counters, snap *snapshot.Snapshot, now time.Time) checks.Counters {
	res, _ := c.(*perf.Result)
	return &sinceSnapshot{Counters: c, res: res, snap: snap, ago: readingsApart(c, snap, now)}
}

// lookAhead is how far sampleOf looks for a reading's sample past the
// previous one's before asking the sample's map.
const lookAhead = 64

// sampleOf returns p's reading in sample, searching from *next on: a
// perf.Result walks its readings in the sample's order (skipping ports
// not read twice), so a cursor finds each without the map by key of
// every port that Sample.Port builds (a later sweep's pairing built it,
// held through the checks: issue 13). A reading not found close ahead is
// asked of that map.
func sampleOf(sample *perf.Sample, p *fabric.Port, next *int) (*perf.PortCounters, bool) {
	for i := *next; i < len(sample.Ports) && i < *next+lookAhead; i++ {
		if sample.Ports[i].Port == p {
			*next = i + 1
			return sample.Ports[i], true
		}
	}
	return sample.Port(perf.Key{GUID: p.Node.GUID, Port: p.Num})
}

// attrOfBits is the attribute an error counter of that width is read
// from: 64 bits only from PortCountersExtended.
func attrOfBits(bits int) mad.AttrID {
	if bits == 64 {
		return mad.AttrPortCountersExtended
	}
	return mad.AttrPortCounters
}

// sinceSnapshot is a gate's counter reading: the live sample(s), each
// port paired with the counters the snapshot's sweep saved for it.
type sinceSnapshot struct {
	checks.Counters
	// res is Counters when perf read them: a port of a switch whose
	// all-ports sum was clean has exact zeros (nil otherwise).
	res  *perf.Result
	snap *snapshot.Snapshot
	ago  time.Duration
	// cache: pair once and keep the readings (a gate's few ports).
	cache bool
	// paired: the readings with their saved counters, paired on the
	// first call (every counter check walks them; the saved side is
	// decoded from gate.idx). Each is a Clone: the Result's readings
	// share its call's buffers.
	paired []checks.PortReading
}

// Ports implements checks.Counters.
func (s *sinceSnapshot) Ports(fn func(checks.PortReading)) {
	if !s.cache {
		s.pair(fn)
		return
	}
	if s.paired == nil {
		s.paired = []checks.PortReading{}
		s.pair(func(r checks.PortReading) { s.paired = append(s.paired, r.Clone()) })
	}
	for _, r := range s.paired {
		fn(r)
	}
}

// releaseEvery is how many ports a walk pairs between two releases of
// the saved counters' pages (Snapshot.ReleasePages): a sweep's walk reads
// nearly all of gate.idx's node, port and counter records, which would
// otherwise stay resident, all of them, at the checks' peak; a few
// hundred ports' pages are few, and mapped again cheaply from the page
// cache.
const releaseEvery = 512

func (s *sinceSnapshot) pair(fn func(checks.PortReading)) {
	// Decoded into, port after port: no map per port.
	var saved snapshot.Saved
	n, next := 0, 0
	if !s.cache {
		// A sweep's walk of the whole fabric (a gate's few ports are
		// paired once and kept, its index read lazily).
		defer s.snap.ReleasePages()
	}
	s.Counters.Ports(func(r checks.PortReading) {
		if r.Port == nil || r.Port.Node == nil {
			fn(r)
			return
		}
		if n++; !s.cache && n%releaseEvery == 0 {
			s.snap.ReleasePages()
		}
		ok := s.snap.SavedInto(r.Port, &saved)
		// A port not read itself (its switch's all-ports sum was clean)
		// has every counter exactly 0 (pairGrowth).
		exact := false
		if s.res != nil && s.res.Last != nil {
			pc, found := sampleOf(s.res.Last, r.Port, &next)
			exact = found && pc.FromAllPorts
		}
		if ok {
			r.Saved, r.SavedAgo, r.SavedAt = true, s.ago, s.snap.TakenAt
			if !saved.At.IsZero() && !r.ReadAt.IsZero() {
				// From this port's saved reading to its reading now: a
				// port read late in either pass (a long pass at 49k, a
				// PMA slow to answer) has its own span, so its share of
				// time stalled is not counted over the passes' starts.
				r.SavedAgo = r.ReadAt.Sub(saved.At)
			}
			for i := range r.Errors {
				c := &r.Errors[i]
				was, wasSaturated, ok := saved.Error(c.Name)
				if !ok {
					// not saved: nothing to compare, the value is
					// judged as without a sweep
					c.Unsaved = true
					continue
				}
				pairGrowth(c, was, wasSaturated, saved.From, exact)
			}
			if w := r.XmitWait; w != nil {
				// PortXmitWait by the same rule: checks judges the share
				// of time stalled since the sweep (trial T8). Not saved
				// by an ibdoctor before it was kept: the value is judged.
				if was, wasSaturated, ok := saved.XmitWait(); ok {
					pairGrowth(w, was, wasSaturated, saved.From, exact)
				} else {
					w.Unsaved = true
				}
			}
		}
		fn(r)
	})
}

// pairGrowth sets c's increase since the saved reading was: the one rule
// for an increase (as between check's two samples), none across
// attributes or from a narrow field stuck at its maximum both times. exact
// is a port not read itself (its switch's all-ports sum was clean): every
// counter exactly 0, whatever the field, so its width is no attribute to
// compare.
func pairGrowth(c *checks.CounterValue, was uint64, wasSaturated bool, from string, exact bool) {
	live := perf.Value{Name: c.Name, Value: c.Value, Bits: c.Bits, Saturated: c.Saturated, Source: attrOfBits(c.Bits)}
	then := perf.Value{Name: c.Name, Value: was, Bits: c.Bits, Saturated: wasSaturated, Source: live.Source}
	switch {
	case exact:
	case from == snapshot.FromPortCounters:
		then.Source = mad.AttrPortCounters
	case from == snapshot.FromPortCountersExtended:
		then.Source = mad.AttrPortCountersExtended
	}
	dv := perf.Increase(then, live)
	switch {
	case dv.Unknown:
		c.GrowthUnknown = dv.Why
	case dv.Backwards:
		// Below the saved value: cleared (or reset, or wrapped) since
		// the sweep. How much it grew since is unknown; checks judges
		// the value since the clear, never a growth.
		c.ClearedFrom = was
	default:
		c.Growth = dv.Delta
	}
}
