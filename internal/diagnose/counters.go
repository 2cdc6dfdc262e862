package diagnose

import (
	"context"
	"fmt"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/perf"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/ibdoctor/ibdoctor/internal/transport"
)

// sweepCounters reads every linked port's PerfMgt counters (twice when an
// interval is set) and lists the ports whose PMA could not be read.
func sweepCounters(ctx context.Context, e *transport.Engine, f *fabric.Fabric, o Options) (checks.Counters, []report.Unreached, error) {
	res, err := perf.Sweep(ctx, e, f, perf.Options{
		SL: o.SL, PKeyIndex: o.PKeyIndex, Interval: o.Interval, Sleep: o.Sleep,
		// One sample judges error counters only (utilization needs two).
		ErrorsOnly: o.Interval == 0,
	})
	var un []report.Unreached
	if res != nil {
		un = UnreachedCounters(res.Errors)
	}
	if res == nil {
		return nil, un, err
	}
	return res, un, err
}

// UnreachedCounters turns counter read failures into report entries, the
// one place that does for check, sweep, gate and counters. A failure of a
// node's PMA (perf.PortError.Agent: its ClassPortInfo, one MAD for all
// its ports, or the LID it is addressed by, shared with another port) is
// one entry naming the agent and the ports it covers ("counters of ports
// 2-8,33-40 not read"), not one per port (trial T7: a dead PMA is one
// thing not read, as a dead node is one, not 64; T11: a switch whose LID
// is shared, likewise).
func UnreachedCounters(errs []*perf.PortError) []report.Unreached {
	type key struct {
		guid uint64
		lid  uint16
		what string
		err  string
	}
	var (
		out   []report.Unreached
		ports = map[key][]int{}
		at    = map[key]int{} // the entry's index in out
	)
	for _, pe := range errs {
		if !pe.Agent || pe.Port == nil {
			out = append(out, UnreachedCounter(pe))
			continue
		}
		k := key{pe.GUID, pe.LID, pe.What, pe.Err.Error()}
		if _, ok := at[k]; !ok {
			at[k] = len(out)
			u := UnreachedCounter(&perf.PortError{Key: perf.Key{GUID: pe.GUID}, Node: pe.Node, LID: pe.LID, What: pe.What, Err: pe.Err})
			out = append(out, u)
		}
		ports[k] = append(ports[k], int(pe.Key.Port))
	}
	for k, i := range at {
		out[i].Reason += fmt.Sprintf(" (counters of %s not read)", report.PortRanges(ports[k]))
	}
	return out
}

// UnreachedCounter turns one counter read failure into a report entry.
func UnreachedCounter(pe *perf.PortError) report.Unreached {
	where := fmt.Sprintf("0x%016x", pe.GUID)
	if pe.Node != nil && pe.Node.Description != "" {
		where = pe.Node.Description
	}
	if pe.Port != nil {
		where += fmt.Sprintf(" port %d", pe.Key.Port)
	}
	if pe.LID != 0 {
		where += fmt.Sprintf(" (LID %d)", pe.LID)
	}
	return report.Unreached{What: pe.What, Where: where, Reason: pe.Err.Error()}
}

// WithIncreases pairs a reading of a file's counters with the increases
// the file recorded (fabric.FileInfo.Increases: ibdiagnet's PM_DELTA),
// so that the checks judge what grew while the file's tool sampled, not
// the values since an unknown clear. A port the file gives no increases
// for is not judged (as a port read once in an interval's sweep); a
// counter without an increase is left out of the port's errors.
func WithIncreases(c checks.Counters, inc map[fabric.PortID]map[string]uint64) checks.Counters {
	return &fileIncreases{Counters: c, inc: inc}
}

type fileIncreases struct {
	checks.Counters
	inc map[fabric.PortID]map[string]uint64
}

// Ports implements checks.Counters. The readings' Errors and XmitWait are
// this call's buffers, reused for the next port, as the readings it
// wraps are.
func (f *fileIncreases) Ports(fn func(checks.PortReading)) {
	var errs []checks.CounterValue
	wait := new(checks.CounterValue)
	f.Counters.Ports(func(r checks.PortReading) {
		if r.Port == nil || r.Port.Node == nil {
			return
		}
		inc, ok := f.inc[fabric.PortID{GUID: r.Port.Node.GUID, Port: r.Port.Num}]
		if !ok {
			return
		}
		r.SpanUnknown = true
		errs = errs[:0]
		for _, c := range r.Errors {
			d, ok := inc[c.Name]
			if !ok {
				continue
			}
			c.Delta = d
			errs = append(errs, c)
		}
		r.Errors = errs
		if r.XmitWait != nil {
			d, ok := inc["PortXmitWait"]
			*wait = *r.XmitWait
			wait.Delta = d
			r.XmitWait = wait
			if !ok {
				r.XmitWait = nil
			}
		}
		fn(r)
	})
}
