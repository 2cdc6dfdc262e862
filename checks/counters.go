package checks

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/words"
	"github.com/ibdoctor/ibdoctor/mad"
)

func init() {
	register(Check{
		ID:      "counters.errors",
		Summary: "an error counter is over its threshold (on its increase when sampled: over --interval, or during ibdiagnet's run in a db_csv's PM_DELTA, whose value since the last clear is judged too once it fills its PortCounters field or, for a physical-layer counter, is far above the same counter on the ports of its role; on its absolute value otherwise); symbol errors also as a bit error rate",
		Needs:   []string{"topology", "counters"},
		run:     (*Snapshot).counterErrors,
	})
	register(Check{
		ID:      "counters.congestion",
		Summary: "a port spent a large share of time unable to send (PortXmitWait): congestion, not an error",
		Needs:   []string{"topology", "counters"},
		run:     (*Snapshot).congestion,
	})
	register(Check{
		ID:      "counters.utilization",
		Summary: "a link carried more than 90% of its rate over the sampled interval",
		Needs:   []string{"topology", "interval"},
		run:     (*Snapshot).utilization,
	})
}

// counterSeverity says how bad an error counter over threshold is.
func counterSeverity(name string) (Severity, string) {
	switch name {
	case "LinkDownedCounter":
		return Error, "the link went down and retrained: every flow on it stalled; look at the cable and both transceivers"
	case "SymbolErrorCounter", "LinkErrorRecoveryCounter", "LocalLinkIntegrityErrors":
		return Warning, "physical-layer errors on the link: reseat or replace the cable between the two ports; if it grows after a new cable, suspect the port"
	case "PortRcvErrors", "ExcessiveBufferOverrunErrors":
		return Error, "packets arrived damaged or overran the receive buffer and were dropped: check the cable (symbol errors on the same port) and credit/flow-control settings"
	case "PortXmitDiscards":
		return Warning, "packets were discarded on the way out (head-of-line timeouts, a down peer, congestion): look at the downstream path and PortXmitWait"
	case "PortRcvRemotePhysicalErrors":
		return Info, "packets arrived already marked bad by an upstream link: fix the upstream link with symbol errors first"
	case "PortRcvSwitchRelayErrors":
		return Info, "the switch could not relay packets (often multicast or a route to nowhere): check the forwarding tables"
	case "PortXmitConstraintErrors", "PortRcvConstraintErrors":
		return Warning, "packets violated partition or raw-packet filters: check P_Key configuration of the two ends"
	case "VL15Dropped", "QP1Dropped":
		return Info, "management packets were dropped (usually during subnet sweeps); only a problem when it keeps growing fast"
	}
	return Warning, "inspect the port"
}

// fullFieldSeverity is the one rule for a counter at the top of its
// PortCounters field (saturated, or as large in the extended counter):
// at least that many errors happened, a warning for the counters whose
// finding is a warning or an error, info for the informational ones
// (relay, remote physical, VL15/QP1 dropped: a switch port's relay errors
// sit at 65535 on many healthy fabrics, multicast relayed nowhere). Live
// checks keep an error counter an error; the db_csv history caps it here.
func fullFieldSeverity(name string) Severity {
	if sev, _ := counterSeverity(name); sev < Warning {
		return Info
	}
	return Warning
}

func (s *Snapshot) counterErrors() []Finding {
	var out []Finding
	s.eachCounterError(func(_ *fabric.Port, f Finding) { out = append(out, f) }, nil)
	return out
}

// CounterVerdicts is the one judgement of the ports' counters: for every
// port read, the counters.errors and counters.congestion findings on it
// (none: within thresholds), and the ports those checks could not decide
// (an increase perf could not compute). 'ibdoctor counters' lists exactly
// these ports as over threshold and as undecided; check and gate report
// the same findings.
func (s *Snapshot) CounterVerdicts() (map[*fabric.Port][]Finding, []Undecided) {
	out, _, undecided := s.CounterReport()
	return out, undecided
}

// CounterReport is CounterVerdicts plus, for every port, its error counters
// with a non-zero value since the last clear that are no finding, and why
// (Unjudged): 'ibdoctor counters' tallies them in its summary, since
// ibqueryerrors with its shipped thresholds flags any non-zero count.
func (s *Snapshot) CounterReport() (map[*fabric.Port][]Finding, map[*fabric.Port][]Unjudged, []Undecided) {
	out := map[*fabric.Port][]Finding{}
	quiet := map[*fabric.Port][]Unjudged{}
	if s.Counters == nil {
		return out, quiet, nil
	}
	if s.memo == nil {
		// As Run's: what a pass over the ports asks of the whole fabric
		// (hostCount) is made once.
		s.memo = &runMemo{}
		defer func() { s.memo = nil }()
	}
	add := func(p *fabric.Port, f Finding) { out[p] = append(out[p], f) }
	s.eachCounterError(add, func(p *fabric.Port, u Unjudged) { quiet[p] = append(quiet[p], u) })
	s.eachCongestion(add)
	return out, quiet, s.takeUndecided()
}

// Unjudged is an error counter with a non-zero value since the last clear
// that is no finding, and the reason in force.
type Unjudged struct {
	Name  string
	Value uint64 // since the last clear
	// Why: WithinThreshold (Threshold is the absolute one it is within),
	// SinceUnknownClear (a file's increase is judged; a value since a
	// clear nobody dated only when its field is full or, for a
	// physical-layer counter, far above its fleet's), IncreaseJudged
	// (sampled over an interval: the increase is judged, not the value),
	// NoThreshold (the thresholds in force set none for it).
	Why       UnjudgedWhy
	Threshold uint64
}

// UnjudgedWhy says why a non-zero error counter is no finding.
type UnjudgedWhy int

const (
	WithinThreshold UnjudgedWhy = iota
	SinceUnknownClear
	IncreaseJudged
	NoThreshold
)

// unjudged says why counter c of reading r, non-zero and no finding, is
// none: the branch judgeCounter took for its value since the clear.
func (s *Snapshot) unjudged(t *Thresholds, iv time.Duration, r PortReading, c CounterValue) Unjudged {
	thr, ok := t.Absolute[c.Name]
	u := Unjudged{Name: c.Name, Value: c.Value, Threshold: thr}
	switch {
	case !ok:
		u.Why = NoThreshold
	case iv == 0 && !r.SpanUnknown || r.Saved:
		u.Why = WithinThreshold
	case r.SpanUnknown && iv == 0:
		u.Why = SinceUnknownClear
		if fieldFull(c) {
			u.Why = WithinThreshold
		}
	default:
		u.Why = IncreaseJudged
	}
	return u
}

func (s *Snapshot) eachCounterError(emit func(*fabric.Port, Finding), quiet func(*fabric.Port, Unjudged)) {
	t := s.thresholds()
	iv := s.Counters.Interval()
	var cleared clearedPorts
	defer func() { s.cleared = cleared }()
	// A value since an unknown clear is judged against the same counter
	// on the ports of its role, all of them read first: the candidates
	// wait for the end of the pass (outlierFinding).
	fleet := counterFleet{}
	var pending []outlierCandidate
	s.Counters.Ports(func(r PortReading) {
		p := r.Port
		if p == nil {
			return
		}
		spanless := r.SpanUnknown && iv == 0 && !r.Saved
		if spanless {
			fleet.add(r)
		}
		if !s.inScope(p) {
			return
		}
		cleared.add(s, r)
		var unknown, unknownSince []string
		why, whySince := "", ""
		var kept *PortReading
		for _, c := range r.Errors {
			emitted := false
			emit := func(p *fabric.Port, f Finding) { emitted = true; emit(p, f) }
			s.judgeCounter(t, iv, r, c, emit, func(u string) { unknown = append(unknown, c.Name); why = u },
				func(u string) { unknownSince = append(unknownSince, c.Name); whySince = u })
			if !emitted && spanless && outlierCounter(t, c) {
				if kept == nil {
					// r's buffers are the next port's once fn returns.
					k := r.Clone()
					kept = &k
				}
				pending = append(pending, outlierCandidate{r: kept, c: c})
				continue
			}
			if !emitted && c.Value > 0 && quiet != nil {
				quiet(p, s.unjudged(t, iv, r, c))
			}
		}
		if len(unknown) > 0 {
			s.couldNotDecide("counters.errors", counterNames(unknown)+" "+why, s.entityOf(p, "end"))
		}
		if len(unknownSince) > 0 {
			s.couldNotDecide("counters.errors", counterNames(unknownSince)+" since the saved sweep: "+whySince, s.entityOf(p, "end"))
		}
	})
	fleet.sort()
	for _, o := range pending {
		if f, ok := s.outlierFinding(t, fleet, *o.r, o.c); ok {
			emit(o.r.Port, f)
		} else if quiet != nil {
			quiet(o.r.Port, s.unjudged(t, iv, *o.r, o.c))
		}
	}
}

// judgeCounter judges one error counter of reading r: emit its finding (at
// most one), or note that its increase (deltaUnknown) or its growth since
// the saved sweep (growthUnknown) could not be computed.
func (s *Snapshot) judgeCounter(t *Thresholds, iv time.Duration, r PortReading, c CounterValue, emit func(*fabric.Port, Finding), deltaUnknown, growthUnknown func(string)) {
	p := r.Port
	// One finding per counter, on the first basis over its
	// threshold: the interval's increase (climbing now), the
	// increase since the saved sweep (new since then), the value
	// since the last clear.
	if iv > 0 || r.SpanUnknown {
		if c.DeltaUnknown != "" {
			// No increase to judge: neither "no growth" nor a
			// finding from a difference that means nothing.
			if _, judged := t.Delta[c.Name]; judged {
				deltaUnknown(c.DeltaUnknown)
			}
		} else if f, ok := s.counterFinding(t, p, c, "delta", c.Delta, iv); ok {
			emit(p, f)
			return
		}
	}
	// Cleared since the sweep: the increase since is unknown,
	// only the value since the clear is known.
	if r.Saved && !c.Unsaved && c.GrowthUnknown != "" {
		// No growth to judge since the sweep: undecided, and the
		// value since the clear is still judged below.
		if _, judged := t.Delta[c.Name]; judged {
			growthUnknown(c.GrowthUnknown)
		}
	} else if r.Saved && !c.Unsaved && c.ClearedFrom == 0 {
		if f, ok := s.counterFinding(t, p, c, "since-snapshot", c.Growth, r.SavedAgo); ok {
			f.Evidence[0].Text = sinceSweepText(c, r, f.Evidence[0].Threshold)
			emit(p, f)
			return
		}
		// Within its threshold since the sweep: the count since
		// the clear is history, said at info so that it stays
		// visible without failing (or paging) on every sweep
		// until someone clears the counters.
		if f, ok := s.counterFinding(t, p, c, "absolute", c.Value, 0); ok {
			emit(p, s.pastCount(f, t, p, c, r))
		}
		return
	}
	if r.Saved && !c.Unsaved && c.ClearedFrom > 0 {
		// Cleared since the sweep: every count it holds
		// happened after the sweep, a lower bound of its
		// growth since, judged as growth (trial D2: a flap
		// after a perfquery -R went unsaid until the tenth).
		if f, ok := s.counterFinding(t, p, c, "since-snapshot", c.Value, r.SavedAgo); ok {
			f.Evidence[0].Text = clearedSinceText(c, r, f.Evidence[0].Threshold)
			emit(p, f)
			return
		}
	}
	if iv == 0 && !r.SpanUnknown || r.Saved {
		if f, ok := s.counterFinding(t, p, c, "absolute", c.Value, 0); ok {
			emit(p, f)
		}
	} else if r.SpanUnknown && iv == 0 {
		if f, ok := s.sinceClearFinding(t, p, c, r.Errors); ok {
			emit(p, f)
		}
	}

}

// clearedPorts are the ports whose counters (an error counter or
// PortXmitWait) read below the sweep's saved value: cleared since, by
// perfquery -R, a reboot or a reset (trial D2). A counter cleared to 0
// with nothing new makes no finding, and the errors it held vanish from
// the report: the summary says so once (Result.CountersCleared).
type clearedPorts struct {
	n     int
	names []string // the first few
	first PortReading
}

func (c *clearedPorts) add(s *Snapshot, r PortReading) {
	if !r.Saved {
		return
	}
	cleared := r.XmitWait != nil && !r.XmitWait.Unsaved && r.XmitWait.ClearedFrom > 0
	for _, v := range r.Errors {
		cleared = cleared || !v.Unsaved && v.ClearedFrom > 0
	}
	if !cleared {
		return
	}
	if c.n == 0 {
		c.first = PortReading{SavedAt: r.SavedAt, SavedAgo: r.SavedAgo}
	}
	c.n++
	if len(c.names) < 5 {
		c.names = append(c.names, s.entityOf(r.Port, "").String())
	}
}

// text is the summary's sentence, "" when no port was cleared.
func (c clearedPorts) text() string {
	if c.n == 0 {
		return ""
	}
	whose := "1 port's counters were"
	if c.n > 1 {
		whose = fmt.Sprintf("%d ports' counters were", c.n)
	}
	return fmt.Sprintf("%s cleared since %s, by perfquery -R, a reboot or a reset: errors counted before the clear are not visible (%s)", whose, sweepAt(c.first), words.FirstOf(c.names, c.n))
}

// sweepAt names the sweep a reading was paired with: "the previous sweep
// at 2026-11-27T02:30:00Z (10m0s before)", or by its age alone.
func sweepAt(r PortReading) string {
	if r.SavedAt.IsZero() {
		return fmt.Sprintf("the sweep %v before", words.Span(r.SavedAgo))
	}
	return fmt.Sprintf("the previous sweep at %s (%v before)", r.SavedAt.UTC().Format(time.RFC3339), words.Span(r.SavedAgo))
}

// sinceSweepText is the evidence of a counter over its threshold on its
// growth since the sweep: how much, over how long, and the rate.
func sinceSweepText(c CounterValue, r PortReading, thr float64) string {
	rate := ""
	// A link's few downs or retrains are events, counted; a rate of
	// them over the span would read as a steady flow.
	if r.SavedAgo > 0 && c.Name != "LinkDownedCounter" && c.Name != "LinkErrorRecoveryCounter" {
		rate = fmt.Sprintf("%.3g/s; ", float64(c.Growth)/r.SavedAgo.Seconds())
	}
	if r.SavedAt.IsZero() {
		return fmt.Sprintf("%s grew by %d since the sweep %v before (%snow %d; threshold %.0f since the previous sweep)", c.Name, c.Growth, words.Span(r.SavedAgo), rate, c.Value, thr)
	}
	return fmt.Sprintf("%s grew by %d in %v since the previous sweep at %s (%snow %d; threshold %.0f since the previous sweep)", c.Name, c.Growth, words.Span(r.SavedAgo), r.SavedAt.UTC().Format(time.RFC3339), rate, c.Value, thr)
}

// clearedSinceText is the evidence of a counter cleared since the sweep
// and over its since-sweep threshold on its value since the clear: at
// least that much growth.
func clearedSinceText(c CounterValue, r PortReading, thr float64) string {
	return fmt.Sprintf("%s cleared since the sweep; at least %d since: it read %d at %s, %d now since the clear (threshold %.0f since the previous sweep)", c.Name, c.Value, c.ClearedFrom, sweepAt(r), c.Value, thr)
}

// times says a count of events: "1 time", "3 times".
func times(n uint64) string {
	if n == 1 {
		return "1 time"
	}
	return fmt.Sprintf("%d times", n)
}

// pastCount turns the finding on a counter's value since the clear into
// history: the counter did not grow past its threshold since the sweep r
// was paired with, so the count is old (info), and the finding says so.
func (s *Snapshot) pastCount(f Finding, t *Thresholds, p *fabric.Port, c CounterValue, r PortReading) Finding {
	f.Severity = Info
	f.Impact.Score = f.Impact.PathShare * counterWeight[Info]
	f.Title = fmt.Sprintf("%s = %d on %s since the last clear, not growing since the last sweep", c.Name, c.Value, s.portName(p))
	f.Evidence[0].Text = fmt.Sprintf("%s = %d since the counters were last cleared (threshold %.0f); no growth since %s: history, not a fault now", c.Name, c.Value, f.Evidence[0].Threshold, sweepAt(r))
	summary := f.Impact.Summary
	f.Impact.Summary = "errors counted before the previous sweep, not since: " + summary
	if c.Growth > 0 {
		// It did grow, by no more than its threshold allows between
		// sweeps: said as such, not as history (trial T1).
		f.Title = fmt.Sprintf("%s = %d on %s since the last clear, +%d since the last sweep (within its threshold)", c.Name, c.Value, s.portName(p), c.Growth)
		f.Evidence[0].Text = fmt.Sprintf("%s = %d since the counters were last cleared (threshold %.0f); +%d since %s, within its threshold %d since the previous sweep: not judged a fault", c.Name, c.Value, f.Evidence[0].Threshold, c.Growth, sweepAt(r), t.Since[c.Name])
		f.Impact.Summary = fmt.Sprintf("%d of them counted before the previous sweep, %d since: ", c.Value-c.Growth, c.Growth) + summary
	}
	// Nothing is dropped now: no down port to name (relayCauses).
	f.deadEnd = nil
	f.Action = fmt.Sprintf("Nothing while it does not grow: a later sweep reports it at its severity if it grows past its threshold. To count from zero, clear the counters ('ibdoctor counters --reset errors' every port, or 'perfquery -x -R %d %d' this one, at %s).", s.entityOf(p, "").LID, p.Num, s.portAt(p))
	return f
}

// counterNames lists counters in an undecided reason: the first three
// and how many when more.
func counterNames(names []string) string {
	if len(names) > 3 {
		return fmt.Sprintf("%d error counters (%s, ...)", len(names), strings.Join(names[:3], ", "))
	}
	return strings.Join(names, ", ")
}

// counterFinding judges one error counter of port p on one basis: val is
// the value ("absolute") or its increase over span ("delta" over the
// sampled interval, "since-snapshot" since the saved sweep), each basis
// against its own threshold, the increases against the per-interval ones.
func (s *Snapshot) counterFinding(t *Thresholds, p *fabric.Port, c CounterValue, basis string, val uint64, span time.Duration) (Finding, bool) {
	var (
		thr uint64
		ok  bool
	)
	switch basis {
	case "absolute":
		thr, ok = t.Absolute[c.Name]
	case "since-snapshot":
		thr, ok = t.Since[c.Name]
	default:
		thr, ok = t.Delta[c.Name]
	}
	if !ok {
		return Finding{}, false
	}
	// A symbol error rate above the BER threshold counts even when the
	// count is within its threshold: on a slow link one error in an
	// interval can already be too many.
	ber, berOK := 0.0, false
	// Not on a count since a clear: its span is not known.
	if c.Name == "SymbolErrorCounter" && basis != "absolute" && val > 0 && c.ClearedFrom == 0 {
		ber, _ = SymbolBER(p, val, span)
		berOK = ber > 0
	}
	if val <= thr && !(berOK && ber > t.BER) {
		return Finding{}, false
	}
	sev, action := counterSeverity(c.Name)
	ev := []Evidence{{Name: c.Name, Value: float64(val), Threshold: float64(thr)}}
	title := ""
	switch basis {
	case "delta":
		if span <= 0 {
			ev[0].Text = fmt.Sprintf("%s grew by %d while the counters were sampled (the span is not recorded; threshold %d per interval; now %d)", c.Name, val, thr, c.Value)
			title = fmt.Sprintf("%s climbing on %s: +%d while sampled", c.Name, s.portName(p), val)
			break
		}
		rate := float64(val) / span.Seconds()
		ev[0].Text = fmt.Sprintf("%s grew by %d in %v (%.3g/s; threshold %d per interval)", c.Name, val, words.Duration(span), rate, thr)
		title = fmt.Sprintf("%s climbing on %s: +%d in %v", c.Name, s.portName(p), val, words.Span(span))
	case "since-snapshot":
		ev[0].Text = fmt.Sprintf("%s grew by %d since the sweep %v before (now %d; threshold %d since the previous sweep)", c.Name, val, words.Span(span), c.Value, thr)
		// A count since a clear after the sweep is a lower bound.
		least := ""
		if c.ClearedFrom > 0 {
			least = "at least "
		}
		title = fmt.Sprintf("%s grew on %s: %s+%d since the last sweep", c.Name, s.portName(p), least, val)
		switch c.Name {
		case "LinkDownedCounter":
			title = fmt.Sprintf("Link %s went down %s%s since the last sweep", s.portName(p), least, times(val))
			if val == 1 {
				// One down-and-up: a flap, or a reboot or reseat at
				// one end; more is a link that keeps going down.
				sev = Warning
				action = "the link went down and came back once: every flow on it stalled (an NCCL job on it may have failed); if nobody rebooted the host or reseated the cable then, look at the cable and both transceivers"
			}
		case "LinkErrorRecoveryCounter":
			title = fmt.Sprintf("Link %s retrained %s%s since the last sweep (link error recovery)", s.portName(p), least, times(val))
		}
	default:
		ev[0].Text = fmt.Sprintf("%s = %d since the counters were last cleared (threshold %d)", c.Name, val, thr)
		title = fmt.Sprintf("%s = %d on %s", c.Name, val, s.portName(p))
		if c.ClearedFrom > 0 {
			ev[0].Text = fmt.Sprintf("%s cleared since the sweep (it read %d then; the increase since is unknown); now %d since the clear (threshold %d)", c.Name, c.ClearedFrom, val, thr)
			title += ", cleared since the sweep"
		}
	}
	if c.Saturated {
		ev = append(ev, Evidence{Name: "saturated", Value: float64(c.Value), Text: fmt.Sprintf("the %d-bit counter is stuck at its maximum %d: the true count is larger", c.Bits, c.Value)})
		title += " (saturated)"
		if basis == "absolute" {
			sev = max(sev, fullFieldSeverity(c.Name))
		}
	}
	if berOK {
		over := "the interval"
		if basis == "since-snapshot" {
			over = "the time since the last sweep"
		}
		text := fmt.Sprintf("symbol-error bit error rate %.2e over %s (threshold %.0e)", ber, over, t.BER)
		if rateFromFarEnd(p) {
			text += fmt.Sprintf("; the link's rate %s as read at the far end %s (this port's PortInfo was not read)", portRate(p), s.entityOf(p.Remote, ""))
		}
		ev = append(ev, Evidence{Name: "BER", Value: ber, Threshold: t.BER, Text: text})
		if ber > t.BER {
			sev = max(sev, Error)
			title += fmt.Sprintf(", BER %.1e", ber)
		}
	}
	noLink := dropsWithoutLink(p, c.Name)
	if noLink {
		// Packets sent toward a port that has no link are dropped there
		// and counted (ibsim counts this tool's own retried MADs so,
		// trial G1); nothing crossed a cable to be damaged on it.
		sev = Info
		title += ", link " + p.PhysState.String()
	}
	sh := s.pathShare(p)
	share := sh.v
	weight := counterWeight[sev]
	summary := fmt.Sprintf("the link carries %s of host-to-host paths%s; errors cost retransmissions and, on a link that retrains, stalls", sh.text(), s.shareNote(sh))
	act := fmt.Sprintf("%s (at %s).", upperFirst(action), s.portAt(p))
	if noLink {
		summary = fmt.Sprintf("the port has no link (%s): packets sent toward it, management probes and retries included, are dropped there and counted; the count says nothing of a cable", p.PhysState)
		act = fmt.Sprintf("Not a cable verdict: %s has no link. Bring the link back (its down-link or routing finding says where traffic is lost), then clear the counters (perfquery -R) and judge them again.", s.portAt(p))
		if basis != "delta" {
			// A count since the last clear, or since the previous
			// sweep, may span the time the link was up: a real port
			// without a link receives nothing, so its PortRcvErrors
			// were counted before, maybe the cable's (review R6).
			summary = fmt.Sprintf("the port has no link (%s): the count is of packets sent toward it and dropped (management probes and retries included), or of errors from before the link went down, which may be the cable's; the count alone does not say which", p.PhysState)
			act = fmt.Sprintf("Not a cable verdict while %s has no link. Bring the link back (its down-link or routing finding says where traffic is lost), then clear the counters (perfquery -R) and judge them again: errors that come back on the live link are the cable's.", s.portAt(p))
		}
	}
	var deadEnd *fabric.Port
	if c.Name == "PortRcvSwitchRelayErrors" {
		// Relay errors are packets the switch received intact and
		// could not forward: not a link's fault, nothing retransmitted
		// at the link; the forwarding table says where they went.
		sw := s.nodeName(p.Node)
		summary = relaySummary(s.entityOf(p, "").String(), sw)
		if r, down := downRoutes(p.Node); r != "" {
			// relayCauses names the down port's own finding after
			// "Bring that link back", once every check has run.
			act = relayAction(sw, r, "the cable at "+s.portAt(p)+" is")
			deadEnd = down
		} else {
			act = fmt.Sprintf("%s could not forward packets that entered at %s (an unrouted LID, a route to a port that is down, or multicast without a tree): check its forwarding tables (ibroute) and multicast groups; the cable there is not at fault.", sw, s.portAt(p))
		}
	}
	return Finding{
		Check:    "counters.errors",
		Severity: sev,
		Title:    title,
		Entities: s.portAndPeer(p),
		Evidence: ev,
		Impact:   Impact{PathShare: share, PathShareLowerBound: sh.atLeast, Score: share * weight, Summary: summary},
		Action:   act,
		Basis:    basis,
		deadEnd:  deadEnd,
	}, true
}

// dropsWithoutLink reports whether counter name on p counts packets a
// disabled port drops: what arrives for it, or what it is to send, has no
// cable to cross. A port Polling is left judged: its link failing to
// train may well be the cable its earlier errors point at.
func dropsWithoutLink(p *fabric.Port, name string) bool {
	return (name == "PortRcvErrors" || name == "PortXmitDiscards") && p.PhysState == mad.PhysDisabled
}

func relaySummary(at, sw string) string {
	return fmt.Sprintf("packets that entered %s were dropped at %s: the switch could not forward them (not a cable fault; nothing is retransmitted at the link, a transport above it times out)", at, sw)
}

func relayAction(sw, routes, cables string) string {
	return fmt.Sprintf("%s's forwarding table sends %s: packets to it are dropped there. Bring that link back or have the subnet manager route around it; %s not at fault.", sw, routes, cables)
}

// foldRelayErrors folds the relay-error findings of one switch whose
// table sends LIDs out of one down port, on one basis, into one finding
// naming the ingress ports: every port whose packets head for the down
// port counts them, one cause with one step (trial E14: one down uplink
// gave eight findings, one per ingress port of the spine).
func (s *Snapshot) foldRelayErrors(fs []Finding) []Finding {
	type key struct {
		dead  *fabric.Port
		basis string
	}
	groups := map[key][]int{}
	var keys []key // in the findings' order, not the map's
	for i, f := range fs {
		if f.Check != "counters.errors" || f.deadEnd == nil || len(f.Evidence) == 0 || f.Evidence[0].Name != "PortRcvSwitchRelayErrors" || len(f.Entities) == 0 {
			continue
		}
		k := key{f.deadEnd, f.Basis}
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], i)
	}
	var drop []bool
	for _, k := range keys {
		idx := groups[k]
		if len(idx) < 2 {
			continue
		}
		if drop == nil {
			drop = make([]bool, len(fs))
		}
		slices.SortFunc(idx, func(a, b int) int { return fs[a].Entities[0].Port - fs[b].Entities[0].Port })
		big := idx[0]
		var nums []uint8
		var per []string
		var ents []Entity
		f := fs[idx[0]]
		f.Impact.Score, f.Impact.PathShare = 0, 0
		for _, i := range idx {
			m := fs[i]
			e := m.Entities[0]
			nums = append(nums, uint8(e.Port))
			from := ""
			if len(m.Entities) > 1 {
				from = " (from " + m.Entities[1].String() + ")"
			}
			per = append(per, fmt.Sprintf("%d%s %d", e.Port, from, uint64(m.Evidence[0].Value)))
			ents = append(ents, m.Entities...)
			if m.Evidence[0].Value > fs[big].Evidence[0].Value {
				big = i
			}
			f.Severity = max(f.Severity, m.Severity)
			f.Impact.Score += m.Impact.Score
			f.Impact.PathShare += m.Impact.PathShare
			f.Impact.PathShareLowerBound = f.Impact.PathShareLowerBound || m.Impact.PathShareLowerBound
			drop[i] = i != idx[0]
		}
		f.Impact.PathShare = min(f.Impact.PathShare, 1)
		sw := s.nodeName(k.dead.Node)
		runs := portNumbers(nums)
		how := ""
		switch k.basis {
		case "delta":
			how = ", climbing while sampled"
		case "since-snapshot":
			how = ", grown since the last sweep"
		}
		f.Title = fmt.Sprintf("PortRcvSwitchRelayErrors on %d ports of %s (%s)%s: packets it cannot forward out of its down port %d", len(idx), sw, runs, how, k.dead.Num)
		f.Entities = ents
		ev := fs[big].Evidence[0]
		ev.Text = fmt.Sprintf("by ingress port: %s; the largest, on %s: %s", strings.Join(per, ", "), fs[big].Entities[0].String(), ev.Text)
		f.Evidence = append([]Evidence{ev}, fs[big].Evidence[1:]...)
		f.Impact.Summary = relaySummary(fmt.Sprintf("%s at ports %s", sw, runs), sw)
		r, _ := downRoutes(k.dead.Node)
		f.Action = relayAction(sw, r, fmt.Sprintf("the cables at %s's ports %s are", sw, runs))
		fs[idx[0]] = f
	}
	return withoutDropped(fs, drop)
}

// counterWeight scales a counter finding's path share into its score.
var counterWeight = map[Severity]float64{Info: 0.001, Warning: 0.01, Error: 0.05, Critical: 0.2}

// baseFieldBits is the width of each error counter's PortCounters field
// (IBA 16.1.3.5): the value a counter read from PortCountersExtended has
// to reach to be as full as the narrow field can be.
var baseFieldBits = func() map[string]int {
	m := map[string]int{"QP1Dropped": 16}
	for _, c := range (&mad.PortCounters{}).Errors() {
		m[c.Name] = c.Bits
	}
	return m
}()

// fieldFull reports whether an error counter has reached the top of its
// PortCounters field: saturated, or as large in the extended counter.
func fieldFull(c CounterValue) bool {
	bits := baseFieldBits[c.Name]
	return bits > 0 && (c.Saturated || c.Value >= uint64(1)<<bits-1)
}

// sinceClearFinding judges an error counter's value since the last clear
// on a reading whose increase was sampled over a span nobody recorded (an
// ibdiagnet2.db_csv: PM_INFO beside PM_DELTA), once the increase was
// judged and found within its threshold or could not be computed. Counts
// since an unknown clear pile up over months of routine operation (a host
// reboot downs its link, SM sweeps drop VL15, multicast is relayed
// nowhere) and without a span no rate tells them from a fault, so only a
// counter that has reached the top of its PortCounters field (saturated,
// or as large in the extended counter) is reported: at least that many
// errors happened, the clearest sign a value alone gives. Warning for the
// counters whose finding is a warning or an error, info for the others;
// the next step is to clear the counters and sample again. A
// physical-layer counter below the top is judged against its fleet once
// the pass is over (outlierFinding).
func (s *Snapshot) sinceClearFinding(t *Thresholds, p *fabric.Port, c CounterValue, port []CounterValue) (Finding, bool) {
	if !fieldFull(c) {
		return Finding{}, false
	}
	f, ok := s.counterFinding(t, p, c, "absolute", c.Value, 0)
	if !ok {
		return Finding{}, false
	}
	f.Severity = fullFieldSeverity(c.Name)
	if dropsWithoutLink(p, c.Name) {
		f.Severity = Info // packets dropped toward a port without a link
	}
	f.Impact.Score = f.Impact.PathShare * counterWeight[f.Severity]
	name := s.portName(p)
	atTop := c.Value == uint64(1)<<baseFieldBits[c.Name]-1
	if c.Saturated || atTop {
		f.Title = fmt.Sprintf("%s saturated on %s since the last clear (at least %d)", c.Name, name, c.Value)
	} else {
		f.Title = fmt.Sprintf("%s = %d on %s since the last clear", c.Name, c.Value, name)
	}
	if atTop && !c.Saturated {
		// A file's narrow counter read where its extended twin was
		// missing or not counting reaches the checks as a plain value
		// (the reader warns it is saturated): exactly the field's top
		// is read as saturated, and "at least" holds either way.
		f.Evidence = append(f.Evidence, Evidence{Name: "saturated", Value: float64(c.Value),
			Text: fmt.Sprintf("%d is the %d-bit PortCounters field's maximum: read as saturated, the true count is at least that", c.Value, baseFieldBits[c.Name])})
	}
	s.sinceClearTail(&f, t, p, c, port)
	return f, true
}

// spanNotInFile is what a file with PM_DELTA does not give.
const spanNotInFile = "the file gives neither when the counters were last cleared nor how long they were sampled, so no rate"

// sinceClearTail ends a finding on a value since an unknown clear (full,
// or an outlier against its fleet): the port's other counters, the
// increase while sampled, and the next step.
func (s *Snapshot) sinceClearTail(f *Finding, t *Thresholds, p *fabric.Port, c CounterValue, port []CounterValue) {
	_, action := counterSeverity(c.Name)
	noLink := *f
	f.history = &sinceClearNote{port: s.portName(p), counter: c, counters: slices.Clone(port)}
	// The port's other error counters since the clear, not full
	// themselves (those are findings of their own), say what else
	// happened there: receive errors beside symbol errors.
	var others []string
	for _, o := range port {
		if o.Name != c.Name && o.Value > 0 && !fieldFull(o) {
			others = append(others, fmt.Sprintf("%s %d", o.Name, o.Value))
		}
	}
	if len(others) > 0 {
		f.Evidence = append(f.Evidence, Evidence{Name: "others", Text: "also on this port since the last clear: " + strings.Join(others, ", ")})
	}
	noRate := spanNotInFile
	if c.DeltaUnknown == "" && c.Delta > 0 {
		// Grew while sampled, within the per-interval threshold:
		// still growing, not history.
		f.history.suffix = fmt.Sprintf("; +%d while sampled", c.Delta)
		f.Title += f.history.suffix
		f.Evidence = append(f.Evidence, Evidence{Name: "increase", Value: float64(c.Delta), Threshold: float64(t.Delta[c.Name]),
			Text: fmt.Sprintf("%s +%d while the counters were sampled (threshold %d per interval): still counting then; %s", c.Name, c.Delta, t.Delta[c.Name], noRate)})
		f.Impact.Summary = fmt.Sprintf("at least %d since the last clear and +%d while sampled: the errors still come; the link carries %s of host-to-host paths", c.Value, c.Delta, pct(f.Impact.PathShare))
	} else if c.DeltaUnknown == "" {
		f.history.suffix = "; not growing while sampled"
		f.Title += f.history.suffix
		f.Evidence = append(f.Evidence, Evidence{Name: "increase", Value: float64(c.Delta), Threshold: float64(t.Delta[c.Name]),
			Text: fmt.Sprintf("%s +%d while the counters were sampled (threshold %d per interval): not climbing then; %s", c.Name, c.Delta, t.Delta[c.Name], noRate)})
		f.Impact.Summary = fmt.Sprintf("at least %d at some time since the last clear, +%d while sampled: a past problem, or one too slow to show while sampled; the link carries %s of host-to-host paths", c.Value, c.Delta, pct(f.Impact.PathShare))
	} else {
		f.Evidence = append(f.Evidence, Evidence{Name: "increase unknown", Text: fmt.Sprintf("%s's increase while sampled is unknown %s; %s", c.Name, c.DeltaUnknown, noRate)})
		f.Impact.Summary = fmt.Sprintf("at least %d since the last clear, whether it still grows is unknown; the link carries %s of host-to-host paths", c.Value, pct(f.Impact.PathShare))
	}
	if dropsWithoutLink(p, c.Name) {
		// counterFinding's summary and step: not a cable verdict.
		f.Impact.Summary, f.Action = noLink.Impact.Summary, noLink.Action
		return
	}
	e := s.entityOf(p, "")
	f.Action = fmt.Sprintf("Clear the counters and sample again to see whether the errors still come: on a host 'perfquery -x -R %d %d' clears this port, 'ibdiagnet --pc' or 'ibdoctor counters --reset errors' every port; then 'ibdoctor check --interval 30s' on the fabric, a new ibdiagnet run hours later, or watch it live with 'ibdoctor top' (the / key filters by node name). If it grows again: %s (at %s).",
		e.LID, p.Num, action, s.portAt(p))
}

// downRoutesShown is how many LIDs routed out of down ports downRoutes
// names.
const downRoutesShown = 3

// downRoutes says which LIDs switch n's forwarding table sends out of a
// port that was read and carries no link ("LID 104 out of port 28, which
// is Down/Polling"), and that port; empty and nil when none or the table
// was not read.
func downRoutes(n *fabric.Node) (string, *fabric.Port) {
	if n.Switch == nil || n.Switch.LFT == nil {
		return "", nil
	}
	var lids []string
	var port *fabric.Port
	count := 0
	for lid := 0; lid < n.Switch.LFT.Len(); lid++ {
		out := n.Switch.LFT.At(uint16(lid))
		if lid == 0 || out == 0 || out == fabric.NoRoute || int(out) >= len(n.Ports) {
			continue
		}
		q := n.Ports[out]
		if q == nil || !q.StateKnown() || q.PhysState == 0 || linkUp(q) {
			continue
		}
		if port == nil {
			port = q
		}
		if q != port {
			continue
		}
		count++
		if len(lids) < downRoutesShown {
			lids = append(lids, strconv.Itoa(lid))
		}
	}
	if port == nil {
		return "", nil
	}
	what := "LID " + lids[0]
	if count > 1 {
		what = fmt.Sprintf("%d LIDs (%s", count, strings.Join(lids, ", "))
		if count > len(lids) {
			what += ", ..."
		}
		what += ")"
	}
	return fmt.Sprintf("%s out of port %d, which is %s/%s", what, port.Num, port.State, port.PhysState), port
}

// SymbolBER estimates the bit error rate of p's link from errs symbol
// errors over span: errors / (lanes x lane signalling rate x span), and
// returns that denominator, the bits signalled (0 when the rate is
// unknown; with no error, 1/bits bounds the rate). The one BER
// computation: counters.errors judges it, 'ibdoctor counters' prints it.
//
// The rate is the link's: when p's PortInfo went unanswered it is read at
// the far end (portRate; a link runs one rate at both ends), and the
// evidence says so (rateFromFarEnd).
func SymbolBER(p *fabric.Port, errs uint64, span time.Duration) (ber, bits float64) {
	r := portRate(p)
	lanes := r.Width.Lanes()
	sig := r.Speed.SignalGbps()
	if lanes == 0 || sig == 0 || span <= 0 {
		return 0, 0
	}
	bits = float64(lanes) * sig * 1e9 * span.Seconds()
	return float64(errs) / bits, bits
}

func (s *Snapshot) congestion() []Finding {
	var (
		out      []Finding
		spanless []Finding
	)
	s.eachCongestion(func(_ *fabric.Port, f Finding) {
		if f.spanless != nil {
			spanless = append(spanless, f)
			return
		}
		out = append(out, f)
	})
	if len(spanless) > 0 {
		out = append(out, s.spanlessCongestion(spanless))
	}
	return out
}

// spanlessWait is one port's PortXmitWait increase without its span.
type spanlessWait struct {
	port      string
	ticks     uint64
	perSecond float64 // the port's tick rate; 0 unknown
}

// about is the time the ticks stand for, "≈258 µs", when the tick is
// known.
func (w *spanlessWait) about() string {
	if w.perSecond <= 0 {
		return ""
	}
	return "≈" + fmtStall(float64(w.ticks)/w.perSecond)
}

// spanlessTop is how many of the ports waiting without a span a summary
// names in its evidence (all are its entities).
const spanlessTop = 5

// spanlessCongestion folds the per-port verdicts on PortXmitWait
// increases without their span (a db_csv's PM_DELTA) into one finding: no
// share of time can be computed, so each port is only "waited more than
// the floor", and a finding per port (192 on the Quantum-2 capture) is
// noise. It names the count, the largest few, and every port as an entity,
// largest first.
func (s *Snapshot) spanlessCongestion(fs []Finding) Finding {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Compare(b.spanless.ticks, a.spanless.ticks)
	})
	top := fs[0]
	floor := top.Evidence[0].Threshold
	tickNote := ""
	if top.spanless.perSecond > 0 {
		tickNote = ", in time at " + fmtStall(1/top.spanless.perSecond) + " a tick"
	}
	ev := []Evidence{{Name: "ports", Value: float64(len(fs)), Unit: "ports", Threshold: floor,
		Text: fmt.Sprintf("%s waited to send more than %.0f ticks (xmitwait.absolute) while the counters were sampled; the span is not recorded, so the share of time stalled is unknown; the largest below%s ('ibdoctor counters' lists each)", words.Count(len(fs), "port"), floor, tickNote)}}
	var ents []Entity
	share := 0.0
	atLeast := false
	for i, f := range fs {
		ents = append(ents, f.Entities[0])
		if f.Impact.PathShare >= share {
			share, atLeast = f.Impact.PathShare, f.Impact.PathShareLowerBound
		}
		if i < spanlessTop {
			w := f.spanless
			ev = append(ev, Evidence{Name: "PortXmitWait", Value: float64(w.ticks), Unit: "ticks", Text: fmt.Sprintf("%s +%d ticks%s", w.port, w.ticks, paren(w.about()))})
		}
	}
	return Finding{
		Check:    "counters.congestion",
		Severity: Info,
		Title: fmt.Sprintf("%s waited to send while the counters were sampled (at most %d ticks%s); share of time unknown without the span",
			words.Count(len(fs), "port"), top.spanless.ticks, prefixed(", ", top.spanless.about())),
		Entities: ents,
		Evidence: ev,
		Impact: Impact{PathShare: share, PathShareLowerBound: atLeast, Score: share * 0.001,
			Summary: "congestion while the counters were sampled; how much of the time is unknown without the span"},
		Action: "Congestion, not a fault. To see whether and how much these ports are stalled, sample the fabric: 'ibdoctor check --interval 30s' gives each port's share of time.",
		Basis:  "delta",
	}
}

// eachCongestion emits the per-port congestion verdicts. Those on an
// increase without its span are marked spanless: the check folds them into
// one finding (spanlessCongestion), 'counters' lists each.
func (s *Snapshot) eachCongestion(emit func(*fabric.Port, Finding)) {
	t := s.thresholds()
	iv := s.Counters.Interval()
	s.Counters.Ports(func(r PortReading) {
		p := r.Port
		if p == nil || r.XmitWait == nil || !s.inScope(p) {
			return
		}
		w := r.XmitWait
		if iv > 0 {
			if w.DeltaUnknown != "" {
				s.couldNotDecide("counters.congestion", "PortXmitWait "+w.DeltaUnknown, s.entityOf(p, "end"))
				return
			}
			if f, ok := s.stalledFinding(t, p, r, w.Delta, r.SpanOf(iv), "delta"); ok {
				emit(p, f)
			}
			return
		}
		if r.Saved && !w.Unsaved && w.ClearedFrom == 0 && !r.SpanUnknown {
			// Paired with the previous sweep's PortXmitWait (a later
			// sweep, or a gate): the share of time stalled since then.
			if w.GrowthUnknown != "" {
				s.couldNotDecide("counters.congestion", "PortXmitWait since the saved sweep: "+w.GrowthUnknown, s.entityOf(p, "end"))
				return
			}
			if f, ok := s.stalledFinding(t, p, r, w.Growth, r.SavedAgo, "since-snapshot"); ok {
				emit(p, f)
			}
			return
		}
		if r.SpanUnknown {
			// An increase without its span: no share of time, so the
			// count threshold judges it, as it judges a value.
			if r.XmitWait.Delta <= t.XmitWaitAbsolute {
				return
			}
			sh := s.pathShare(p)
			share := sh.v
			emit(p, Finding{
				spanless: &spanlessWait{port: s.portName(p), ticks: r.XmitWait.Delta, perSecond: r.XmitWaitTicksPerSecond},
				Check:    "counters.congestion",
				Severity: Info,
				Title:    fmt.Sprintf("Port %s waited to send %d ticks while its counters were sampled", s.portName(p), r.XmitWait.Delta),
				Entities: s.portAndPeer(p),
				Evidence: []Evidence{{Name: "PortXmitWait", Value: float64(r.XmitWait.Delta), Threshold: float64(t.XmitWaitAbsolute),
					Text: fmt.Sprintf("PortXmitWait +%d ticks while sampled (the span is not recorded, so the share of time stalled is unknown; %d since the last clear)", r.XmitWait.Delta, r.XmitWait.Value)}},
				Impact: Impact{PathShare: share, PathShareLowerBound: sh.atLeast, Score: share * 0.001, Summary: "congestion while the counters were sampled; its share of the time is unknown without the span"},
				Action: "Run 'ibdoctor check --interval 30s' on the fabric to see the share of time this port is stalled.",
				Basis:  "delta",
			})
			return
		}
		if r.XmitWait.Value <= t.XmitWaitAbsolute {
			return
		}
		// The share only for a port with a finding: without a routes'
		// count of hosts it is a walk over every node (hostCount), and
		// taken for every port it was most of counters --all's CPU.
		sh := s.pathShare(p)
		share := sh.v
		text := fmt.Sprintf("PortXmitWait = %d (absolute; sample with --interval to see the share of time stalled)", r.XmitWait.Value)
		if r.Saved && w.ClearedFrom > 0 {
			// Below the previous sweep's: cleared since, so no share
			// since that sweep is known, only the count since the clear.
			text = fmt.Sprintf("PortXmitWait = %d, cleared since the sweep (it read %d then; the share of time stalled since is unknown); sample with --interval to see it", w.Value, w.ClearedFrom)
		}
		emit(p, Finding{
			Check:    "counters.congestion",
			Severity: Info,
			Title:    fmt.Sprintf("Port %s has waited to send %d ticks since its counters were cleared", s.portName(p), r.XmitWait.Value),
			Entities: s.portAndPeer(p),
			Evidence: []Evidence{{Name: "PortXmitWait", Value: float64(r.XmitWait.Value), Threshold: float64(t.XmitWaitAbsolute),
				Text: text}},
			Impact: Impact{PathShare: share, PathShareLowerBound: sh.atLeast, Score: share * 0.001, Summary: "congestion at some time since the last clear; its rate is unknown without an interval"},
			Action: "Run 'ibdoctor check --interval 30s' to see whether this port is congested now.",
			Basis:  "absolute",
		})
	})
}

// stallTolerance is how far above 100% a share of time stalled may read
// and still be taken as 100%: the span is timed from the requests, not
// from when each port latched its counter.
const stallTolerance = 0.02

// stalledFinding is the one judgement of a port's share of time stalled
// (counters.congestion): ticks of PortXmitWait counted over span, against
// xmitwait.warn and xmitwait.info. basis is "delta" (over check's or a
// gate's --interval) or "since-snapshot" (since the previous sweep the
// reading was paired with); only the wording of the span differs. A
// saturated counter counted at least ticks, so the share is a lower bound.
//
// A share above 100% (beyond stallTolerance for the reading times) or a
// span that is not positive is not a reading: the two readings or the
// clock disagree, so the port is undecided, never a finding.
func (s *Snapshot) stalledFinding(t *Thresholds, p *fabric.Port, r PortReading, ticks uint64, span time.Duration, basis string) (Finding, bool) {
	from := "the two samples"
	if basis == "since-snapshot" {
		from = "the saved reading"
	}
	if span <= 0 {
		s.couldNotDecide("counters.congestion", fmt.Sprintf("PortXmitWait grew %d ticks over a span of %v: the clock stepped back since %s, or %s is another clock's; no share of time",
			ticks, span, from, from), s.entityOf(p, "end"))
		return Finding{}, false
	}
	stalled, ok := stalledShare(ticks, r.XmitWaitTicksPerSecond, span.Seconds())
	if !ok {
		return Finding{}, false
	}
	if stalled > 1+stallTolerance {
		s.couldNotDecide("counters.congestion", fmt.Sprintf("PortXmitWait grew %d ticks in %v: more than the span holds at %.0f ticks/s (%.0f%% of the time); %s or the clock is not comparable",
			ticks, words.Duration(span), r.XmitWaitTicksPerSecond, stalled*100, from), s.entityOf(p, "end"))
		return Finding{}, false
	}
	stalled = min(stalled, 1)
	if stalled < t.XmitWaitInfo {
		return Finding{}, false
	}
	sev := Info
	if stalled >= t.XmitWaitWarn {
		sev = Warning
	}
	sh := s.pathShare(p)
	share := sh.v
	atLeast, since, over := "", "", fmt.Sprintf("in %v", words.Duration(span))
	if basis == "since-snapshot" {
		since = " since the last sweep"
		over = fmt.Sprintf("in %v since the previous sweep", words.Duration(span))
		if !r.SavedAt.IsZero() {
			over = fmt.Sprintf("in %v since the previous sweep at %s", words.Duration(span), r.SavedAt.UTC().Format(time.RFC3339))
		}
	}
	text := fmt.Sprintf("PortXmitWait +%d ticks %s = %.1f%% of the time stalled (warn at %.0f%%)", ticks, over, stalled*100, t.XmitWaitWarn*100)
	if r.XmitWait.Saturated {
		atLeast = "at least "
		text += fmt.Sprintf("; the %d-bit counter is saturated at %d: it waited at least this long", r.XmitWait.Bits, r.XmitWait.Value)
	}
	return Finding{
		Check:    "counters.congestion",
		Severity: sev,
		Title:    fmt.Sprintf("Port %s could not send %s%.0f%% of the time%s (congestion)", s.portName(p), atLeast, stalled*100, since),
		Entities: s.portAndPeer(p),
		Evidence: []Evidence{{Name: "PortXmitWait", Value: float64(ticks), Threshold: t.XmitWaitWarn, Text: text}},
		Impact: Impact{PathShare: share, PathShareLowerBound: sh.atLeast, Score: share * stalled,
			Summary: fmt.Sprintf("flows leaving this port wait for credits %s%.0f%% of the time%s; it carries %s of host-to-host paths", atLeast, stalled*100, since, pct(share))},
		Action: "Congestion, not a fault: find what converges on this port (ibdoctor trace, the routing.ecmp-imbalance findings); rebalance routes or spread the job. If the downstream link is degraded, fix that first.",
		Basis:  basis,
	}, true
}

func (s *Snapshot) utilization() []Finding {
	t := s.thresholds()
	iv := s.Counters.Interval()
	var out []Finding
	s.Counters.Ports(func(r PortReading) {
		p := r.Port
		if p == nil || !(linkUp(p) || (!p.StateKnown() && p.Remote != nil && linkUp(p.Remote))) || !s.inScope(p) {
			return
		}
		if r.DataUnknown != "" {
			s.couldNotDecide("counters.utilization", "PortXmitData "+r.DataUnknown, s.entityOf(p, "end"))
			return
		}
		util, ok := r.Utilization(iv.Seconds())
		if ok && util > 1 {
			// The rate's span runs from the first reading's request to
			// the second's answer, so a real link reads at most 100%:
			// more means the two readings do not match (a retried or
			// late read). The reading is unusable, not a hot link.
			s.couldNotDecide("counters.utilization", fmt.Sprintf("sent %d bytes in %v = %.0f%% of %s: the port's two readings are inconsistent (a retried or late read)",
				r.XmitBytes, words.Duration(r.SpanOf(iv)), util*100, portRate(p)), s.entityOf(p, "end"))
			return
		}
		if !ok || util < t.Utilization {
			return
		}
		sh := s.pathShare(p)
		share := sh.v
		out = append(out, Finding{
			Check:    "counters.utilization",
			Severity: Info,
			Title:    fmt.Sprintf("Link %s is hot: %.0f%% of %s", s.portName(p), util*100, portRate(p)),
			Entities: s.portAndPeer(p),
			Evidence: []Evidence{{Name: "utilization", Value: util, Threshold: t.Utilization,
				Text: fmt.Sprintf("sent %d bytes in %v = %.1f%% of %s", r.XmitBytes, words.Duration(r.SpanOf(iv)), util*100, portRate(p))}},
			Impact: Impact{PathShare: share, PathShareLowerBound: sh.atLeast, Score: share * 0.001, Summary: "a saturated link slows every flow routed over it"},
			Action: "Expected under a bandwidth-bound job; if other parallel links idle, see routing.ecmp-imbalance.",
			Basis:  "delta",
		})
	})
	return out
}

func (s *Snapshot) thresholds() *Thresholds {
	if s.Expect.Thresholds != nil {
		return s.Expect.Thresholds
	}
	return DefaultThresholds()
}

func (s *Snapshot) portAndPeer(p *fabric.Port) []Entity {
	es := []Entity{s.entityOf(p, "end")}
	if p.Remote != nil {
		es = append(es, s.entityOf(p.Remote, "peer"))
	}
	return es
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// fmtStall prints a time stalled in the unit that reads best.
func fmtStall(sec float64) string {
	switch {
	case sec < 1e-6:
		return fmt.Sprintf("%.0f ns", sec*1e9)
	case sec < 1e-3:
		return fmt.Sprintf("%.0f µs", sec*1e6)
	case sec < 1:
		return fmt.Sprintf("%.1f ms", sec*1e3)
	}
	return fmt.Sprintf("%.1f s", sec)
}

// paren is " (s)", or "" for an empty s.
func paren(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// prefixed is p+s, or "" for an empty s.
func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

// foldLinkEvents makes one finding of a link's downs and retrains counted
// over one span (since the previous sweep, or an --interval): a link that
// goes down counts it at both ends, and often a retrain too, so one event
// was two to four findings (reviewer V3, trial T1), each titled "Link ...
// went down". The finding kept is the link-down with the highest count
// (else the retrain), at the highest severity of the group; the others
// become its evidence. Counts since the last clear are left apart: the
// two ends' histories may differ.
func foldLinkEvents(fs []Finding) []Finding {
	type end struct {
		guid uint64
		port int
	}
	type linkKey struct {
		basis string
		a, b  end
	}
	keyOf := func(f Finding) (linkKey, bool) {
		if f.Check != "counters.errors" || (f.Basis != "since-snapshot" && f.Basis != "delta") || len(f.Evidence) == 0 || len(f.Entities) == 0 {
			return linkKey{}, false
		}
		if n := f.Evidence[0].Name; n != "LinkDownedCounter" && n != "LinkErrorRecoveryCounter" {
			return linkKey{}, false
		}
		k := linkKey{basis: f.Basis, a: end{f.Entities[0].NodeGUID, f.Entities[0].Port}}
		if len(f.Entities) > 1 {
			k.b = end{f.Entities[1].NodeGUID, f.Entities[1].Port}
		}
		if k.b.guid < k.a.guid || k.b.guid == k.a.guid && k.b.port < k.a.port {
			k.a, k.b = k.b, k.a
		}
		return k, true
	}
	// rank orders a group's findings: link-downs before retrains, then
	// by count.
	rank := func(f Finding) (int, float64) {
		if f.Evidence[0].Name == "LinkDownedCounter" {
			return 1, f.Evidence[0].Value
		}
		return 0, f.Evidence[0].Value
	}
	groups := map[linkKey][]int{}
	var order []linkKey
	for i, f := range fs {
		if k, ok := keyOf(f); ok {
			if groups[k] == nil {
				order = append(order, k)
			}
			groups[k] = append(groups[k], i)
		}
	}
	drop := make([]bool, len(fs))
	for _, k := range order {
		idx := groups[k]
		if len(idx) < 2 {
			continue
		}
		best := idx[0]
		for _, i := range idx[1:] {
			ri, vi := rank(fs[i])
			rb, vb := rank(fs[best])
			if ri > rb || ri == rb && vi > vb {
				best = i
			}
		}
		m := &fs[best]
		var retrains float64
		for _, i := range idx {
			if i == best {
				continue
			}
			drop[i] = true
			o := fs[i]
			m.Severity = max(m.Severity, o.Severity)
			if o.Impact.Score > m.Impact.Score {
				m.Impact.Score = o.Impact.Score
			}
			if o.Evidence[0].Name == "LinkErrorRecoveryCounter" && m.Evidence[0].Name == "LinkDownedCounter" {
				retrains = max(retrains, o.Evidence[0].Value)
			}
			ev := o.Evidence[0]
			ev.Text = fmt.Sprintf("at %s: %s (the same link; one event counts at both ends)", o.Entities[0], ev.Text)
			m.Evidence = append(m.Evidence, ev)
			m.Evidence = append(m.Evidence, o.Evidence[1:]...)
		}
		if retrains > 0 && m.Basis == "since-snapshot" {
			m.Title = strings.TrimSuffix(m.Title, " since the last sweep") + fmt.Sprintf(" and retrained %s since the last sweep", times(uint64(retrains)))
		}
	}
	out := fs[:0:0]
	for i, f := range fs {
		if !drop[i] {
			out = append(out, f)
		}
	}
	return out
}
