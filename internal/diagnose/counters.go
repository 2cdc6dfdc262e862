package diagnose

import (
	"context"
	"fmt"
	"strings"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/perf"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/ibdoctor/ibdoctor/internal/route"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
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
		un = UnreachedCounters(res.Errors, Silence{Fabric: f, From: ReadFrom(f, e.Local())})
	}
	if res == nil {
		return nil, un, err
	}
	return res, un, err
}

// UnreachedCounters turns counter read failures into report entries, the
// one place that does for check, sweep, gate, counters and top. A failure
// of a node's PMA (perf.PortError.Agent: its ClassPortInfo, one MAD for
// all its ports, or the LID it is addressed by, shared with another port)
// is one entry naming the agent and the ports it covers ("counters of
// ports 2-8,33-40 not read"), not one per port (trial T7: a dead PMA is
// one thing not read, as a dead node is one, not 64; T11: a switch whose
// LID is shared, likewise). An agent that did not answer says why when
// what was read shows it (Silence.Why).
func UnreachedCounters(errs []*perf.PortError, s Silence) []report.Unreached {
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
		why   = map[key]string{}
	)
	for _, pe := range errs {
		if !pe.Agent || pe.Port == nil {
			u := UnreachedCounter(pe)
			if pe.Silent > 0 {
				u.Reason += s.Why(pe.Node, pe.LID)
			}
			out = append(out, u)
			continue
		}
		k := key{pe.GUID, pe.LID, pe.What, pe.Err.Error()}
		if _, ok := at[k]; !ok {
			at[k] = len(out)
			u := UnreachedCounter(&perf.PortError{Key: perf.Key{GUID: pe.GUID}, Node: pe.Node, LID: pe.LID, What: pe.What, Err: pe.Err})
			out = append(out, u)
			if transport.Unanswered(pe.Err) {
				why[k] = s.Why(pe.Node, pe.LID)
			}
		}
		ports[k] = append(ports[k], int(pe.Key.Port))
	}
	for k, i := range at {
		out[i].Reason += fmt.Sprintf(" (counters of %s not read)%s", report.PortRanges(ports[k]), why[k])
	}
	return out
}

// Silence knows what was read about why reads sent by LID from one port
// went unanswered; its zero value knows nothing and says nothing.
type Silence struct {
	Fabric *fabric.Fabric
	// From is the port the reads were sent from (ReadFrom); nil: unknown.
	From *fabric.Port
	// Read, when set, says which ports' PortInfo (answered or not) and
	// which forwarding-table blocks were read in this run: a gate
	// re-reads its job's part, and the snapshot's older view of the rest
	// is no cause to state. Nil: all of Fabric was read in this run.
	Read Fresh
}

// Fresh says what of a fabric was read in this run.
type Fresh interface {
	Port(*fabric.Port) bool
	Block(sw *fabric.Node, index int) bool
}

// ReadFrom is the port of f the reads go out of: the engine's local port,
// nil when f does not have it (by port GUID too: a cloned node GUID could
// name another node).
func ReadFrom(f *fabric.Fabric, l transport.LocalPort) *fabric.Port {
	n := f.NodeByGUID(l.NodeGUID)
	if n == nil || int(l.PortNum) >= len(n.Ports) {
		return nil
	}
	p := n.Ports[l.PortNum]
	if p == nil || (l.PortGUID != 0 && p.GUID != 0 && p.GUID != l.PortGUID) {
		return nil
	}
	return p
}

// Why says, as "; ..." to append to the entry's reason, what was read that
// keeps a read by LID from From to node n's PMA at lid, or its answer,
// from arriving: the LID route (either way) leaves by a port that is down,
// ends at a switch with no entry for it, or loops; n did not answer
// PortInfo either (its management is silent, not only its PMA); or From's
// own LID is another port's too, so the answer goes to either. Empty when
// nothing read shows a cause: the entry then says only that the agent did
// not answer (never guess).
func (s Silence) Why(n *fabric.Node, lid uint16) string {
	if s.Fabric == nil || s.From == nil || s.From.LID == 0 || lid == 0 {
		return ""
	}
	from := fmt.Sprintf("this port (%s/%d)", s.Fabric.NameOf(s.From.Node), s.From.Num)
	if why := s.routeWhy(s.From.LID, lid, "the LID route to it from "+from); why != "" {
		return why
	}
	if why := s.routeWhy(lid, s.From.LID, "its answer's LID route back to "+from); why != "" {
		return why
	}
	if n != nil {
		var silent []int
		for _, p := range n.Ports {
			if p != nil && !p.StateKnown() && (s.Read == nil || s.Read.Port(p)) {
				silent = append(silent, int(p.Num))
			}
		}
		if len(silent) > 0 {
			return fmt.Sprintf("; %s did not answer PortInfo either (%s): its management agent is silent, not only its PMA", s.Fabric.NameOf(n), report.PortRanges(silent))
		}
	}
	if s.Read == nil || s.Read.Port(s.From) {
		var others []string
		for _, p := range s.Fabric.SharedLIDs()[s.From.LID] {
			if p != s.From && p.Node != s.From.Node {
				others = append(others, fmt.Sprintf("%s/%d", s.Fabric.NameOf(p.Node), p.Num))
			}
		}
		if len(others) > 0 {
			return fmt.Sprintf("; the answer goes to LID %d, which %s has too (addr.duplicate-lid)", s.From.LID, strings.Join(others, ", "))
		}
	}
	return ""
}

// routeWhy is the cause on the LID route from LID a to LID b, if it ends
// short of b at a port down, a missing entry or a loop, and every table
// entry and port it went by was read in this run; else empty.
func (s Silence) routeWhy(a, b uint16, what string) string {
	t, err := route.TraceRoute(s.Fabric, a, b)
	if err != nil {
		return ""
	}
	for _, h := range t.Hops {
		if s.Read == nil {
			break
		}
		if beyondTop(h.Switch, b) {
			break // the last hop: no block holds the LID, SwitchInfo says so
		}
		if !s.Read.Block(h.Switch, int(b)/mad.LFTBlockSize) {
			return ""
		}
		if int(h.Out) < len(h.Switch.Ports) && h.Out != 0 && h.Out != fabric.NoRoute {
			if p := h.Switch.Ports[h.Out]; p != nil && (!s.Read.Port(p) || (p.Remote != nil && !s.Read.Port(p.Remote))) {
				return ""
			}
		}
	}
	if len(t.Hops) == 0 {
		return ""
	}
	lastSw := t.Hops[len(t.Hops)-1].Switch
	// Named as the findings name it: another switch may share the
	// description (trial C8).
	last := s.Fabric.NameOf(lastSw)
	if (t.Outcome == route.NoTable || t.Outcome == route.NoRoute) && beyondTop(lastSw, b) {
		// trial A16: a switch LID past every table's top gave a bare
		// timeout that read like a dead PMA
		return fmt.Sprintf("; %s ends at %s, whose forwarding table stops at LinearFDBTop %d: LID %d is beyond it, so no LID-routed MAD reaches it", what, last, lastSw.Switch.LinearFDBTop, b)
	}
	switch t.Outcome {
	case route.DeadEnd:
		p := t.End
		switch {
		case p == nil || !p.StateKnown():
			return ""
		case p.State == mad.PortStateDown:
			return fmt.Sprintf("; %s leaves %s by port %d, which is down", what, last, p.Num)
		case p.Remote != nil && p.Remote.StateKnown() && p.Remote.State == mad.PortStateDown:
			return fmt.Sprintf("; %s leaves %s by port %d, whose far end %s/%d is down", what, last, p.Num, s.Fabric.NameOf(p.Remote.Node), p.Remote.Num)
		case !route.Passes(p):
			// up but never activated: LID-routed MADs are lost there
			// as at a Down port (trial A2 gave only the bare timeout)
			return fmt.Sprintf("; %s leaves %s by port %d, whose link is %s (physically up, not Active)", what, last, p.Num, p.State)
		case p.Remote != nil && p.Remote.StateKnown() && !route.Passes(p.Remote):
			return fmt.Sprintf("; %s leaves %s by port %d, whose far end %s/%d is %s (physically up, not Active)", what, last, p.Num, s.Fabric.NameOf(p.Remote.Node), p.Remote.Num, p.Remote.State)
		}
		return "" // a port without a cable: not shown why
	case route.NoRoute:
		return fmt.Sprintf("; %s ends at %s, whose forwarding table has no entry for LID %d", what, last, b)
	case route.Loop:
		return fmt.Sprintf("; %s loops (back at %s)", what, last)
	}
	return ""
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

// beyondTop reports whether LID lid is past switch sw's LinearFDBTop
// (its SwitchInfo read, a table read): the switch has no entry for it.
func beyondTop(sw *fabric.Node, lid uint16) bool {
	return sw != nil && sw.Switch != nil && sw.Switch.LFT != nil && lid > sw.Switch.LinearFDBTop
}
