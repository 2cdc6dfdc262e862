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
		for _, pe := range res.Errors {
			un = append(un, UnreachedCounter(pe))
		}
	}
	if res == nil {
		return nil, un, err
	}
	return res, un, err
}

// UnreachedCounter turns a counter read failure into a report entry.
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
