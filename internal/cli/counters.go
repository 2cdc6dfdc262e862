package cli

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/buildinfo"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/perf"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/ibdoctor/ibdoctor/internal/source"
	"github.com/ibdoctor/ibdoctor/internal/words"
	"github.com/ibdoctor/ibdoctor/mad"
	"github.com/spf13/cobra"
)

// countersOptions are the flags of the counters command.
type countersOptions struct {
	all        bool
	interval   time.Duration
	reset      string
	json       bool
	thresholds string
	sl         uint8
	pkeyIndex  uint16
	skipClean  bool
	failOn     string
	mode       perf.ResetMode // reset, parsed
}

// newCountersCmd builds counters; runF, when not nil, runs instead of
// runCounters (tests parse the flags without reading counters).
func newCountersCmd(a *app, runF func(*countersOptions) error) *cobra.Command {
	var o countersOptions
	cmd := &cobra.Command{
		Use:   "counters",
		Short: "Read every port's PerfMgt counters and list the ports over threshold (like ibqueryerrors)",
		Long: `counters discovers the fabric and reads the PerfMgt counters of every port with
a link (PortCounters, and PortCountersExtended where the PMA has it), many MADs
in flight. It lists the ports whose error counters are over their thresholds, as
ibqueryerrors does: node, port, LID, the peer, and [Name == value] for each
counter over threshold (a counter stuck at its field's maximum is marked
saturated: its true count is larger). --all lists every port, with its data
counters in bytes and packets.

With --interval it reads twice and judges what changed: the increase of each
error counter (and errors/s), bytes/s each way, utilization of the link rate,
the share of time PortXmitWait says the port was stalled, and the symbol-error
bit error rate.

Thresholds (--thresholds FILE, docs/checks.md) are ibqueryerrors' Name=value
lines plus delta.Name=value for --interval (and since.Name=value for a sweep's
growth since the previous one); a counter is over when its value
is strictly greater, as in ibqueryerrors. Defaults are docs/checks.md's.

--reset errors|all clears the counters after reading them, like ibqueryerrors
-k / -k -K. It is the only command that writes to the fabric, and only with
this flag: otherwise the MAD engine refuses every Set.

Which ports are over threshold is check's judgement (its counters.errors and
counters.congestion findings, with their severities): the exit status follows
the worst of them as check's does. --fail-on (default warning: an error
counter over its threshold, as ibqueryerrors) sets the lowest severity that
fails; ports judged below it (congestion, VL15 drops: info) are still listed.

Exit status: 1 when a port's verdict is at or above --fail-on, 3 when some
ports or PMAs could not be read (listed on stderr), 2 when nothing could be
decided, 0 otherwise.
docs/counters.md explains the choices.`,
		Example: `  ibdoctor counters --sim
  ibdoctor counters --sim --interval 5s
  ibdoctor counters --all --json > counters.json
  ibdoctor counters --thresholds /etc/infiniband-diags/error_thresholds
  ibdoctor counters --reset errors`,
		Args: a.noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("skip-clean-switches") {
				// ibqueryerrors' plan whenever it changes nothing printed:
				// only ports over threshold are shown, and a port over a
				// threshold makes its switch's sum non-zero.
				o.skipClean = !o.all && o.interval == 0 && o.reset == ""
			}
			var err error
			if o.mode, err = parseReset(o.reset); err != nil {
				return withExit(ExitUndecided, err)
			}
			if runF != nil {
				return runF(&o)
			}
			return a.runCounters(cmd.Context(), &o)
		},
	}
	cmd.SetFlagErrorFunc(flagError)
	fs := cmd.Flags()
	fs.BoolVarP(&o.all, "all", "a", false, "list every port read, not only those over threshold, with data counters (bytes, packets)")
	fs.DurationVar(&o.interval, "interval", 0, "read twice this far apart and judge the increase: errors/s, bytes/s, utilization, stalled share, BER (e.g. 30s)")
	fs.StringVar(&o.reset, "reset", "", "after reading, clear counters: errors (like ibqueryerrors -k) or all (-k -K); the only write ibdoctor does")
	fs.BoolVar(&o.json, "json", false, "print a JSON document instead of the table (docs/counters.md)")
	fs.StringVar(&o.thresholds, "thresholds", "", "counter thresholds file: Name=value as ibqueryerrors' --threshold-file, delta.Name=value for --interval (docs/checks.md)")
	fs.Uint8Var(&o.sl, "sl", 0, "service level of PerfMgt MADs (default 0, as ibqueryerrors --skip-sl; docs/counters.md)")
	fs.Uint16Var(&o.pkeyIndex, "pkey-index", 0, "local P_Key table index of PerfMgt MADs (0: the default partition)")
	fs.StringVar(&o.failOn, "fail-on", "warning", "lowest severity of a port's verdict (as check judges it) that makes the exit status 1: info, warning, error or critical")
	completeValues(cmd, "reset", resetModes)
	completeValues(cmd, "fail-on", checks.SeverityNames())
	fs.BoolVar(&o.skipClean, "skip-clean-switches", false, "read a switch's ports one by one only when its all-ports sum (PortSelect 0xFF) shows an error or PortXmitWait; its clean ports then have no data counters (default: on unless --all, --interval or --reset; =false reads every port)")
	return cmd
}

// resetModes are what --reset takes ("none", the default, is not offered).
var resetModes = []string{"errors", "all"}

// parseReset turns --reset into a perf.ResetMode.
func parseReset(s string) (perf.ResetMode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "none":
		return perf.ResetNone, nil
	case "errors", "error":
		return perf.ResetErrors, nil
	case "all":
		return perf.ResetAll, nil
	}
	return perf.ResetNone, fmt.Errorf("--reset %q: want %s", s, orList(resetModes))
}

// loadThresholds reads a thresholds file over the defaults.
func loadThresholds(path string) (*checks.Thresholds, error) {
	if path == "" {
		return checks.DefaultThresholds(), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--thresholds: %w", err)
	}
	defer f.Close()
	t, err := checks.ParseThresholds(f)
	if err != nil {
		return nil, fmt.Errorf("--thresholds %s: %w", path, err)
	}
	return t, nil
}

// runCounters discovers, reads the counters, judges and prints them.
func (a *app) runCounters(parent context.Context, o *countersOptions) error {
	mode := o.mode
	if o.interval < 0 {
		return withExit(ExitUndecided, fmt.Errorf("--interval %v: must not be negative", o.interval))
	}
	thr, err := loadThresholds(o.thresholds)
	if err != nil {
		return withExit(ExitUndecided, err)
	}
	failOn, err := checks.ParseSeverity(o.failOn)
	if err != nil {
		return withExit(ExitUndecided, fmt.Errorf("--fail-on: %w", err))
	}
	ctx, stop := signalContext(parent)
	defer stop()
	// Writes are allowed only when a reset was asked for: without it the
	// engine refuses any Set, whatever a bug upstream might try.
	sess, err := a.open(ctx, openOptions{
		need:     source.Need{SMP: true, Perf: true, Writes: mode != perf.ResetNone},
		interval: o.interval, requireCounters: "counters", discover: true,
	})
	if err != nil {
		return err
	}
	defer sess.Close()
	f := sess.fabric
	pr := newProgress(a.stderr)
	pr.Stage("counters")
	popts := perf.Options{
		SL: o.sl, PKeyIndex: o.pkeyIndex, Interval: o.interval, Reset: mode,
		SkipCleanSwitches: o.skipClean, Workers: a.opts.source.Window,
		// Without --all or --interval only error counters are printed:
		// do not read 64-bit data counters just to drop them.
		ErrorsOnly: !o.all && o.interval == 0,
		Sleep: func(ctx context.Context, d time.Duration) error {
			pr.Stage(fmt.Sprintf("counters: second sample in %v", d))
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
				pr.Stage("counters: second sample")
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		},
	}
	res, sweepErr := perf.Sweep(ctx, sess.Engine, f, popts)
	pr.Done()
	if res == nil || res.Last == nil {
		return withExit(ExitUndecided, fmt.Errorf("reading counters: %w", sweepErr))
	}
	v := judgeCounters(f, res, sess.Increases, thr, failOn)
	v.thrFile = o.thresholds
	notRead := countersNotRead(f, res, diagnose.Silence{Fabric: f, From: diagnose.ReadFrom(f, sess.Engine.Local())})
	if o.json {
		if err := writeCountersJSON(a.stdout, v, res, f, thr, *o, sess.Name, notRead); err != nil {
			return err
		}
	} else {
		w := bufio.NewWriter(a.stdout)
		printCounters(w, a.style(), v, res, o.all)
		if err := w.Flush(); err != nil {
			return err
		}
	}
	if len(notRead) > 0 {
		a.listStderr(fmt.Sprintf("Could not read (%d):", len(notRead)), report.UnreachedLines(notRead))
	}
	if ctx.Err() != nil {
		return withExit(ExitUndecided, fmt.Errorf("interrupted: %w", ctx.Err()))
	}
	switch {
	case v.failing > 0:
		return withExit(ExitFindings, nil)
	case len(notRead) > 0:
		return withExit(ExitPartial, fmt.Errorf("%d %s or %s could not be read; what was read is printed", len(notRead), words.Noun(len(notRead), "port"), words.Noun(len(notRead), "node")))
	case v.undecided > 0:
		return withExit(ExitPartial, fmt.Errorf("%s undecided: an increase could not be computed (shown as ?)", plural(v.undecided, "port")))
	}
	return nil
}

// countersNotRead lists what discovery missed and what the counter sweep
// could not read or reset.
func countersNotRead(f *fabric.Fabric, res *perf.Result, s diagnose.Silence) []report.Unreached {
	var out []report.Unreached
	wheres := f.UnreachableWheres()
	for i, u := range f.Unreachable {
		out = append(out, report.Unreached{What: u.What, Where: wheres[i], Reason: u.Reason})
	}
	out = append(out, diagnose.UnreachedCounters(res.Errors, s)...)
	return out
}

// exceeded is one counter (or figure) over its threshold.
type exceeded struct {
	Name string `json:"name"`
	// Value is the counter (absolute) or its increase (delta); for "BER"
	// and the PortXmitWait share see Figure.
	Value     uint64  `json:"value"`
	Threshold float64 `json:"threshold"`
	Figure    float64 `json:"figure,omitempty"`
	PerSecond float64 `json:"per_second,omitempty"`
	Saturated bool    `json:"saturated,omitempty"`
	Bits      int     `json:"bits,omitempty"`
	// Basis is the finding's: "delta" (an increase), "absolute" (the
	// value since the last clear), "since-snapshot". On a file's
	// increases a counter can be judged on its value since the clear
	// (checks' sinceClearFinding), and the listing must not call that
	// value an increase.
	Basis string `json:"basis,omitempty"`
	// grew is the increase while sampled beside a value judged since the
	// clear (grewKnown false: it could not be computed).
	grew      uint64
	grewKnown bool
}

// portVerdict is one port read, judged against the thresholds.
type portVerdict struct {
	pc    *perf.PortCounters
	d     *perf.PortDelta // nil without an interval
	over  []exceeded
	below []exceeded // non-zero error counters (or increases) within threshold
	// increase: over is judged on the file's increases (PM_DELTA), below
	// lists the values since the clear.
	increase bool
	sev      checks.Severity // the worst verdict on the port (with over)
	// undecided: check could not judge the port (an increase perf could
	// not compute); its unknown counters are shown as such, never +0.
	undecided []checks.Undecided
}

// listed: a port the table shows without --all (over threshold or
// undecided: neither is "clean").
func (pv *portVerdict) listed() bool { return len(pv.over) > 0 || len(pv.undecided) > 0 }

// unknown returns the delta of the counter called name when its increase
// is unknown (perf.DeltaValue.Unknown).
func (pv *portVerdict) unknown(name string) (perf.DeltaValue, bool) {
	if pv.d == nil {
		return perf.DeltaValue{}, false
	}
	v, ok := pv.d.Get(name)
	return v, ok && v.Unknown
}

type verdicts struct {
	// ports are the ports read (with an interval, read twice), in the
	// listing's order; noted holds the verdict of those with something
	// to say (over, below or undecided), verdict makes the others'. A
	// verdict of every port was 112 bytes a port held to the end
	// (49,152 ports on FatTree8k), nearly all of them clean.
	ports     []*perf.PortCounters
	noted     map[*perf.PortCounters]*portVerdict
	res       *perf.Result
	overPorts int
	overNodes int
	undecided int // ports check could not decide
	failOn    checks.Severity
	failing   int // ports whose verdict is at or above failOn
	nodes     int
	basis     string         // "absolute" or "delta"
	fab       *fabric.Fabric // for names
	// increases: judged on a file's increases over a span it does not
	// give (ibdiagnet's PM_DELTA), the values listed are since the clear.
	increases bool
	// within counts the ports with an error counter non-zero since the
	// last clear that is no finding (checks.Unjudged), quiet tallies them
	// by reason and counter; thrFile is --thresholds ("" the defaults).
	// The summary says them: ibqueryerrors with its shipped file flags
	// any non-zero count (trials A6, C2).
	within  int
	quiet   map[checks.UnjudgedWhy]map[string]*quietTally
	thrFile string
}

// quietTally is one counter's ports that are no finding for one reason.
type quietTally struct {
	ports int
	max   uint64
	thr   uint64
	where []string // the first ports, named while there are few
}

// quietPorts names a tally's ports when there are few (the summary is
// the only place a port within its thresholds shows without --all),
// else counts them.
func (q *quietTally) quietPorts() string {
	if q.ports > len(q.where) {
		return plural(q.ports, "port")
	}
	return strings.Join(slices.SortedFunc(slices.Values(q.where), words.Natural), ", ")
}

// withinText says, per reason checks gave, how many ports have non-zero
// error counters since the last clear that are no finding, which
// counters on how many ports, and where to see them (listed: above).
func (v *verdicts) withinText(listed bool) string {
	src := "ibdoctor's default thresholds"
	if v.thrFile != "" {
		src = "the thresholds of " + v.thrFile
	}
	var groups []string
	for _, why := range []checks.UnjudgedWhy{checks.WithinThreshold, checks.SinceUnknownClear, checks.IncreaseJudged, checks.NoThreshold} {
		by := v.quiet[why]
		if len(by) == 0 {
			continue
		}
		names := slices.Collect(maps.Keys(by))
		slices.SortFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(by[b].ports, by[a].ports), strings.Compare(a, b)) })
		var parts []string
		for _, n := range names {
			q := by[n]
			if why == checks.WithinThreshold {
				parts = append(parts, fmt.Sprintf("%s up to %d (threshold %d) on %s", n, q.max, q.thr, q.quietPorts()))
			} else {
				parts = append(parts, fmt.Sprintf("%s on %s up to %d", n, q.quietPorts(), q.max))
			}
		}
		reason := map[checks.UnjudgedWhy]string{
			checks.WithinThreshold:   "within " + src,
			checks.SinceUnknownClear: "not judged: since an unknown clear only a counter at the top of its field, or a physical-layer one far above its fleet, is",
			checks.IncreaseJudged:    "not judged: the increase over the interval is, not the value",
			checks.NoThreshold:       "not judged: " + src + " set no threshold for them",
		}[why]
		groups = append(groups, fmt.Sprintf("%s (%s)", reason, strings.Join(parts, ", ")))
	}
	text := fmt.Sprintf("%s %s non-zero error counters since the last clear and no finding, %s", plural(v.within, "port"), verbHave(v.within), strings.Join(groups, "; "))
	if len(v.quiet) == 1 && len(v.quiet[checks.WithinThreshold]) > 0 {
		// The wording of trial A6's line, kept: one reason.
		text = fmt.Sprintf("%s %s non-zero error counters %s", plural(v.within, "port"), verbHave(v.within), groups[0])
	}
	if v.thrFile == "" {
		text += "; ibqueryerrors with its shipped error_thresholds file (every line commented) flags any non-zero count"
	}
	if listed {
		return text + ": listed above"
	}
	return text + ": --all lists them"
}

// verdict is the verdict on pc, one of v.ports.
func (v *verdicts) verdict(pc *perf.PortCounters) *portVerdict {
	if pv := v.noted[pc]; pv != nil {
		return pv
	}
	pv := &portVerdict{pc: pc, increase: v.increases}
	if v.res.Interval() > 0 {
		pv.d, _ = v.res.Delta(pc.Key)
	}
	return pv
}

func verbHave(n int) string {
	if n == 1 {
		return "has"
	}
	return "have"
}

// judgeCounters lays out checks' verdict on every port of the last sample
// (checks.Snapshot.CounterVerdicts: the counters.errors and
// counters.congestion findings, the same check reports): a port is over
// threshold exactly when check has a finding on it. The counters behind
// those findings are listed as over; other non-zero error counters (or
// increases) as below, for the operator's eye only.
func judgeCounters(f *fabric.Fabric, res *perf.Result, inc map[fabric.PortID]map[string]uint64, t *checks.Thresholds, failOn checks.Severity) *verdicts {
	v := &verdicts{basis: "absolute", fab: f, failOn: failOn, quiet: map[checks.UnjudgedWhy]map[string]*quietTally{},
		res: res, noted: map[*perf.PortCounters]*portVerdict{}}
	if res.Interval() > 0 {
		v.basis = "delta"
	}
	var c checks.Counters = res
	if inc != nil {
		// The file's increases are judged, as check judges them.
		c = diagnose.WithIncreases(res, inc)
		v.basis, v.increases = "delta", true
	}
	snap := &checks.Snapshot{Fabric: f, Counters: c, Expect: checks.Expectations{Thresholds: t}}
	judged, unjudged, undecided := snap.CounterReport()
	type portKey struct {
		guid uint64
		port int
	}
	undecidedAt := map[portKey][]checks.Undecided{}
	for _, u := range undecided {
		k := portKey{u.Subject.NodeGUID, u.Subject.Port}
		undecidedAt[k] = append(undecidedAt[k], u)
	}
	nodes := map[uint64]bool{}
	overNodes := map[uint64]bool{}
	for _, pc := range res.Last.Ports {
		pv := &portVerdict{pc: pc, increase: v.increases}
		if res.Interval() > 0 {
			d, ok := res.Delta(pc.Key)
			if !ok {
				continue // read once only: listed as not read
			}
			pv.d = d
		}
		if pc.Port != nil {
			pv.over = overOf(judged[pc.Port], pv)
			for _, fd := range judged[pc.Port] {
				pv.sev = max(pv.sev, fd.Severity)
			}
		}
		pv.below = belowOf(pv, t)
		if pc.Port != nil && len(unjudged[pc.Port]) > 0 {
			// Every counter non-zero since the clear and no finding,
			// whatever else is over on the port (trial C2).
			v.within++
			for _, u := range unjudged[pc.Port] {
				by := v.quiet[u.Why]
				if by == nil {
					by = map[string]*quietTally{}
					v.quiet[u.Why] = by
				}
				q := by[u.Name]
				if q == nil {
					q = &quietTally{thr: u.Threshold}
					by[u.Name] = q
				}
				q.ports++
				q.max = max(q.max, u.Value)
				if len(q.where) < 3 {
					q.where = append(q.where, fmt.Sprintf("%s/%d", f.NameOf(pc.Port.Node), pc.Port.Num))
				}
			}
		}
		pv.undecided = undecidedAt[portKey{pc.GUID, int(pc.Key.Port)}]
		if len(pv.undecided) > 0 {
			v.undecided++
		}
		nodes[pc.GUID] = true
		if len(pv.over) > 0 {
			v.overPorts++
			overNodes[pc.GUID] = true
			if pv.sev >= failOn {
				v.failing++
			}
		}
		v.ports = append(v.ports, pc)
		if len(pv.over) > 0 || len(pv.below) > 0 || len(pv.undecided) > 0 || pv.sev != 0 {
			v.noted[pc] = pv
		}
	}
	v.nodes, v.overNodes = len(nodes), len(overNodes)
	slices.SortStableFunc(v.ports, func(x, y *perf.PortCounters) int {
		return cmp.Or(strings.Compare(nodeName(f, x.Port), nodeName(f, y.Port)),
			cmp.Compare(x.GUID, y.GUID), cmp.Compare(x.Key.Port, y.Key.Port))
	})
	return v
}

// overOf turns checks' findings on one port into the counters they name:
// the counter (its value or increase and threshold), and the BER when it
// is over its own threshold.
func overOf(fs []checks.Finding, pv *portVerdict) []exceeded {
	var out []exceeded
	for _, f := range fs {
		if len(f.Evidence) == 0 {
			continue
		}
		ev := f.Evidence[0]
		e := exceeded{Name: ev.Name, Value: uint64(ev.Value), Threshold: ev.Threshold, Basis: f.Basis}
		for _, x := range f.Evidence[1:] {
			if x.Name == "increase" {
				e.grew, e.grewKnown = uint64(x.Value), true
			}
		}
		if c, ok := pv.pc.Get(ev.Name); ok {
			e.Bits, e.Saturated = c.Bits, c.Saturated
		}
		if pv.d != nil {
			if c, ok := pv.d.Get(ev.Name); ok {
				e.PerSecond = c.PerSecond
				e.Saturated = e.Saturated || c.Saturated
			}
			if ev.Name == "PortXmitWait" {
				e.Figure = pv.d.XmitWaitShare
			}
		}
		var ber *checks.Evidence
		for i, x := range f.Evidence[1:] {
			if x.Name == "BER" && x.Value > x.Threshold {
				ber = &f.Evidence[1+i]
			}
		}
		// A symbol error count within its threshold is reported for its
		// BER alone.
		if ev.Value > ev.Threshold || ber == nil {
			out = append(out, e)
		}
		if ber != nil {
			out = append(out, exceeded{Name: "BER", Value: uint64(ev.Value), Threshold: ber.Threshold, Figure: ber.Value})
		}
	}
	return out
}

// belowOf lists the non-zero error counters (or increases) of a port that
// are not over threshold, and a PortXmitWait that moved.
func belowOf(pv *portVerdict, t *checks.Thresholds) []exceeded {
	over := map[string]bool{}
	for _, e := range pv.over {
		over[e.Name] = true
	}
	var out []exceeded
	if pv.d == nil {
		for _, c := range pv.pc.Counters() {
			var thr uint64
			switch c.Kind {
			case mad.KindError:
				var ok bool
				if thr, ok = t.Absolute[c.Name]; !ok {
					continue
				}
			case mad.KindWait:
				thr = t.XmitWaitAbsolute
			default:
				continue
			}
			if c.Value > 0 && !over[c.Name] {
				out = append(out, exceeded{Name: c.Name, Value: c.Value, Threshold: float64(thr), Saturated: c.Saturated, Bits: c.Bits})
			}
		}
		return out
	}
	d := pv.d
	for _, c := range d.Counters {
		if c.Kind != mad.KindError || over[c.Name] {
			continue
		}
		thr, ok := t.Delta[c.Name]
		if !ok || c.Unknown || (c.Delta == 0 && !c.Saturated) {
			continue
		}
		e := exceeded{Name: c.Name, Value: c.Delta, Threshold: float64(thr), PerSecond: c.PerSecond, Saturated: c.Saturated}
		if v, ok := pv.pc.Get(c.Name); ok {
			e.Bits = v.Bits
		}
		out = append(out, e)
	}
	if w, ok := d.Get("PortXmitWait"); ok && !w.Unknown && w.Delta > 0 && !over["PortXmitWait"] {
		out = append(out, exceeded{Name: "PortXmitWait", Value: w.Delta, Threshold: t.XmitWaitWarn, Figure: d.XmitWaitShare, PerSecond: w.PerSecond, Saturated: w.Saturated})
	}
	return out
}

// portBER is the symbol-error bit error rate of a port over the interval
// (checks.SymbolBER, the one computation) and the bits it is over; ok is
// false when the symbol errors' increase is unknown (no rate, not 0).
func portBER(pv *portVerdict, iv time.Duration) (ber, bits float64, ok bool) {
	if pv.d == nil || pv.pc.Port == nil {
		return 0, 0, true
	}
	s, _ := pv.d.Get("SymbolErrorCounter")
	if s.Unknown {
		return 0, 0, false
	}
	ber, bits = checks.SymbolBER(pv.pc.Port, s.Delta, iv)
	return ber, bits, true
}

// nodeName names p's node as findings do: its description, with its GUID
// when another node of f shares it (f nil: the description).
func nodeName(f *fabric.Fabric, p *fabric.Port) string {
	if p == nil || p.Node == nil {
		return ""
	}
	return f.NameOf(p.Node)
}

func peerText(f *fabric.Fabric, p *fabric.Port) string {
	if p == nil || p.Remote == nil || p.Remote.Node == nil {
		return "-"
	}
	return fmt.Sprintf("%s[%d]", f.NameOf(p.Remote.Node), p.Remote.Num)
}

// exceededText renders one counter the way ibqueryerrors does:
// [Name == value], or [Name +increase (rate/s)] with an interval.
func exceededText(st report.Style, e exceeded, over, delta bool) string {
	var s string
	switch {
	case e.Name == "BER":
		s = fmt.Sprintf("BER %.1e (%d symbol errors)", e.Figure, e.Value)
	case delta && e.Name == "PortXmitWait":
		s = fmt.Sprintf("PortXmitWait +%d (%.1f%% stalled)", e.Value, e.Figure*100)
	case delta:
		s = fmt.Sprintf("%s +%d (%s/s)", e.Name, e.Value, shortFloat(e.PerSecond))
	case over:
		s = fmt.Sprintf("%s == %d", e.Name, e.Value)
	default:
		s = fmt.Sprintf("%s=%d", e.Name, e.Value)
	}
	if e.Saturated {
		sat := " (saturated)"
		if delta {
			sat = " (saturated: increase unknown)"
		}
		s += st.Yellow(sat)
	}
	if over {
		return st.Red("[" + s + "]")
	}
	return st.Dim(s)
}

func shortFloat(f float64) string {
	switch {
	case f == 0:
		return "0"
	case f >= 100:
		return strconv.FormatFloat(f, 'f', 0, 64)
	case f >= 1:
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
	return strconv.FormatFloat(f, 'g', 2, 64)
}

// humanBytes prints n octets with an SI prefix (3 significant digits).
func humanBytes(n float64, unit string) string {
	prefixes := []string{"", "k", "M", "G", "T", "P", "E"}
	i := 0
	for n >= 1000 && i < len(prefixes)-1 {
		n /= 1000
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f %s", n, unit)
	}
	return fmt.Sprintf("%.3g %s%s", n, prefixes[i], unit)
}

func humanCount(n uint64) string {
	if n < 1000 {
		return strconv.FormatUint(n, 10)
	}
	return strings.TrimSuffix(humanBytes(float64(n), ""), " ")
}

func counterCell(st report.Style, pv *portVerdict, delta bool) string {
	var parts []string
	for _, e := range pv.over {
		if pv.increase && e.Basis == "absolute" {
			// Judged on its value since the clear (full: saturated or
			// as large), the increase beside it.
			grew := "increase unknown"
			if e.grewKnown {
				grew = fmt.Sprintf("+%d while sampled", e.grew)
			}
			parts = append(parts, st.Red(fmt.Sprintf("[%s == %d since the last clear, %s]", e.Name, e.Value, grew)))
			continue
		}
		if pv.increase {
			// Judged on a file's increase (no span, no rate): "+N".
			parts = append(parts, st.Red(fmt.Sprintf("[%s +%d while sampled]", e.Name, e.Value)))
			continue
		}
		parts = append(parts, exceededText(st, e, true, delta))
	}
	for _, e := range pv.below {
		parts = append(parts, exceededText(st, e, false, delta))
	}
	parts = append(parts, unknownText(st, pv)...)
	if len(parts) == 0 {
		if pv.pc.FromAllPorts {
			return st.Dim("clean (all-ports sum)")
		}
		return ""
	}
	return strings.Join(parts, " ")
}

// unknownText renders the counters whose increase perf could not compute
// as "Name ?", with the reason once for the counters that share it:
// never +0, which would read as a clean port.
func unknownText(st report.Style, pv *portVerdict) []string {
	if pv.d == nil {
		return nil
	}
	var out []string
	var names []string
	why := ""
	flush := func() {
		if len(names) > 0 {
			out = append(out, st.Yellow(strings.Join(names, " ")+" ("+why+")"))
		}
		names = nil
	}
	for _, c := range pv.d.Counters {
		if !c.Unknown || (c.Kind != mad.KindError && c.Kind != mad.KindWait) {
			continue
		}
		if c.Why != why {
			flush()
			why = c.Why
		}
		names = append(names, c.Name+" ?")
	}
	flush()
	return out
}

// rateCell is a data rate, "?" when its counter's increase is unknown.
func rateCell(pv *portVerdict, name string, perSecond float64) string {
	if _, ok := pv.unknown(name); ok {
		return "?"
	}
	return humanBytes(perSecond, "B/s")
}

// shareCell is a share of the link or of the time, "?" when the counter
// it is computed from has an unknown increase.
func shareCell(pv *portVerdict, name string, share float64) string {
	if _, ok := pv.unknown(name); ok {
		return "?"
	}
	return pctText(share)
}

func dataValue(pc *perf.PortCounters, name string) string {
	v, ok := pc.Get(name)
	if !ok {
		return "-"
	}
	var s string
	if v.Kind == mad.KindDataWords {
		s = humanBytes(float64(v.Value), "B")
	} else {
		s = humanCount(v.Value)
	}
	if v.Saturated {
		s += "+"
	}
	return s
}

func pctText(f float64) string {
	if f < 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", f*100)
}

func berText(ber, bits float64, ok bool) string {
	switch {
	case !ok:
		return "?"
	case bits <= 0:
		return "-"
	case ber == 0:
		return fmt.Sprintf("<%.0e", 1/bits)
	}
	return fmt.Sprintf("%.1e", ber)
}

// printCounters writes the table and a summary.
func printCounters(w io.Writer, st report.Style, v *verdicts, res *perf.Result, all bool) {
	delta := res.Interval() > 0
	var header []string
	switch {
	case delta:
		header = []string{"NODE", "PORT", "LID", "PEER", "XMIT/s", "RCV/s", "UTIL TX/RX", "WAIT", "BER", "COUNTERS"}
	case all:
		header = []string{"NODE", "PORT", "LID", "PEER", "XMIT", "RCV", "XMIT PKTS", "RCV PKTS", "COUNTERS"}
	default:
		header = []string{"NODE", "PORT", "LID", "PEER", "COUNTERS"}
	}
	var rows [][]string
	for _, pc := range v.ports {
		pv := v.verdict(pc)
		if !all && !pv.listed() {
			continue
		}
		row := []string{nodeName(v.fab, pc.Port), strconv.Itoa(int(pc.Key.Port)), strconv.Itoa(int(pc.LID)), peerText(v.fab, pc.Port)}
		switch {
		case delta:
			d := pv.d
			row = append(row, rateCell(pv, "PortXmitData", d.XmitBytesPerSecond), rateCell(pv, "PortRcvData", d.RcvBytesPerSecond),
				shareCell(pv, "PortXmitData", d.XmitUtilization)+"/"+shareCell(pv, "PortRcvData", d.RcvUtilization),
				shareCell(pv, "PortXmitWait", d.XmitWaitShare), berText(portBER(pv, res.Interval())))
		case all:
			row = append(row, dataValue(pc, "PortXmitData"), dataValue(pc, "PortRcvData"), dataValue(pc, "PortXmitPkts"), dataValue(pc, "PortRcvPkts"))
		}
		if len(pv.over) > 0 {
			row[0] = st.Bold(row[0])
		}
		rows = append(rows, append(row, counterCell(st, pv, delta)))
	}
	what := "absolute values since the counters were last cleared"
	if v.increases {
		what += "; judged on the increase during ibdiagnet's run (PM_DELTA), span not in the file"
	}
	if delta {
		what = fmt.Sprintf("increase over %v", res.Interval().Round(10*time.Millisecond))
	}
	if len(rows) > 0 {
		// On a narrow terminal the figures that matter least go first;
		// the counters over threshold wrap rather than being cut.
		drop := map[string]int{"BER": 1, "XMIT PKTS": 1, "RCV PKTS": 2, "LID": 3, "RCV/s": 4, "WAIT": 5}
		// Long node names (a switch's firmware default with its GUID, a
		// UFM name) are cut in their middle, keeping the end that tells
		// two apart (trial E13: 117-column rows wrapped mid-word).
		cols := make([]report.Column, len(header))
		for i, h := range header {
			cols[i] = report.Column{Header: h, Drop: drop[h]}
			if h == "NODE" || h == "PEER" {
				cols[i].Min, cols[i].CutMiddle = 16, true
			}
		}
		cols[len(cols)-1].Min, cols[len(cols)-1].Wrap = 16, true
		report.WriteTableRule(w, st.Width, st.RuleWidth, cols, rows)
		io.WriteString(w, report.LeftOutNote(report.LeftOut(st.Width, cols, rows), st.Width))
		fmt.Fprintln(w)
	}
	summary := fmt.Sprintf("%s read on %s (%s): ", plural(len(v.ports), "port"), plural(v.nodes, "node"), what)
	switch {
	case v.overPorts == 0:
		summary += st.Green("no port over threshold")
	case v.failing == 0:
		summary += fmt.Sprintf("%s over threshold on %s, ", plural(v.overPorts, "port"), plural(v.overNodes, "node")) +
			st.Green(fmt.Sprintf("none at or above --fail-on %s", v.failOn))
	default:
		summary += st.Red(fmt.Sprintf("%s over threshold on %s", plural(v.overPorts, "port"), plural(v.overNodes, "node")))
		if v.failing < v.overPorts {
			summary += fmt.Sprintf(", %d at or above --fail-on %s", v.failing, v.failOn)
		}
	}
	if v.undecided > 0 {
		summary += "; " + st.Yellow(plural(v.undecided, "port")+" undecided (an increase could not be computed: '?')")
	}
	if v.within > 0 {
		summary += "; " + v.withinText(all)
	}
	io.WriteString(w, report.WrapString("", summary, st.Width))
	if res.Reset != perf.ResetNone {
		cleared := "error counters"
		if res.Reset == perf.ResetAll {
			cleared = "all counters"
		}
		n := 0
		for _, p := range res.Last.Ports {
			if !p.FromAllPorts {
				n++
			}
		}
		fmt.Fprintf(w, "Cleared the %s of %s after reading.\n", cleared, plural(n-resetFailures(res), "port"))
	}
}

func resetFailures(res *perf.Result) int {
	n := 0
	for _, e := range res.Errors {
		if e.What == "reset" {
			n++
		}
	}
	return n
}

// CountersSchema identifies the JSON document of `counters --json`.
const CountersSchema = "ibdoctor.counters/v1"

// countersDoc is what `counters --json` prints (docs/counters.md).
type countersDoc struct {
	Schema          string              `json:"schema"`
	Version         string              `json:"ibdoctor_version"`
	GeneratedAt     time.Time           `json:"generated_at"`
	Source          string              `json:"source"`
	Basis           string              `json:"basis"`
	IntervalSeconds float64             `json:"interval_seconds,omitempty"`
	SL              uint8               `json:"sl"`
	PKeyIndex       uint16              `json:"pkey_index"`
	Reset           string              `json:"reset"`
	Thresholds      countersThresholds  `json:"thresholds"`
	FailOn          checks.Severity     `json:"fail_on"`
	Summary         countersSummary     `json:"summary"`
	Ports           []countersPort      `json:"ports"`
	NotRead         []report.Unreached  `json:"not_read"`
	Status          string              `json:"status"`
	PMACaps         map[string]capsInfo `json:"pma_caps,omitempty"`
}

type countersThresholds struct {
	File             string            `json:"file,omitempty"`
	Absolute         map[string]uint64 `json:"absolute,omitempty"`
	Delta            map[string]uint64 `json:"delta,omitempty"`
	XmitWaitAbsolute uint64            `json:"xmit_wait_absolute,omitempty"`
	XmitWaitShare    float64           `json:"xmit_wait_share,omitempty"`
	BER              float64           `json:"ber,omitempty"`
}

type countersSummary struct {
	NodesRead          int `json:"nodes_read"`
	PortsRead          int `json:"ports_read"`
	PortsOverThreshold int `json:"ports_over_threshold"`
	NodesOverThreshold int `json:"nodes_over_threshold"`
	PortsAtFailOn      int `json:"ports_at_fail_on"`
	PortsUndecided     int `json:"ports_undecided"`
	NotRead            int `json:"not_read"`
	// PortsWithinThresholdWithErrors: ports not over threshold with a
	// non-zero error counter (or increase) within it.
	PortsWithinThresholdWithErrors int `json:"ports_within_threshold_with_errors"`
}

type capsInfo struct {
	CapabilityMask  uint16 `json:"capability_mask"`
	CapabilityMask2 uint32 `json:"capability_mask2"`
}

type countersPeer struct {
	Node     string `json:"node"`
	NodeGUID string `json:"node_guid"`
	Port     int    `json:"port"`
}

type countersValue struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	Value     uint64 `json:"value"`
	Raw       uint64 `json:"raw"`
	Bits      int    `json:"bits"`
	Saturated bool   `json:"saturated,omitempty"`
	Source    string `json:"source"`
}

type countersDeltaValue struct {
	Name string `json:"name"`
	// Delta and PerSecond are null when the increase is unknown; Unknown
	// says why.
	Delta     *uint64  `json:"delta"`
	PerSecond *float64 `json:"per_second"`
	Unknown   string   `json:"unknown,omitempty"`
	Backwards bool     `json:"backwards,omitempty"`
	Saturated bool     `json:"saturated,omitempty"`
}

// countersUndecided is one check that could not judge the port.
type countersUndecided struct {
	Check  string `json:"check"`
	Reason string `json:"reason"`
}

type countersDelta struct {
	ElapsedSeconds     float64              `json:"elapsed_seconds"`
	XmitBytesPerSecond *float64             `json:"xmit_bytes_per_second"`
	RcvBytesPerSecond  *float64             `json:"rcv_bytes_per_second"`
	XmitUtilization    *float64             `json:"xmit_utilization"`
	RcvUtilization     *float64             `json:"rcv_utilization"`
	XmitWaitShare      *float64             `json:"xmit_wait_share"`
	BER                *float64             `json:"ber"`
	BERBits            float64              `json:"ber_bits"`
	Counters           []countersDeltaValue `json:"counters"`
	Backwards          []string             `json:"backwards,omitempty"`
}

type countersPort struct {
	Node          string              `json:"node"`
	NodeGUID      string              `json:"node_guid"`
	NodeType      string              `json:"node_type"`
	Port          int                 `json:"port"`
	LID           int                 `json:"lid"`
	Peer          *countersPeer       `json:"peer,omitempty"`
	Rate          string              `json:"rate,omitempty"`
	OverThreshold bool                `json:"over_threshold"`
	Severity      *checks.Severity    `json:"severity,omitempty"`
	Exceeded      []exceeded          `json:"exceeded"`
	Undecided     []countersUndecided `json:"undecided,omitempty"`
	FromAllPorts  bool                `json:"from_all_ports_sum,omitempty"`
	Counters      []countersValue     `json:"counters"`
	Delta         *countersDelta      `json:"delta,omitempty"`
}

func optShare(f float64) *float64 {
	if f < 0 {
		return nil
	}
	return &f
}

func countersDocument(v *verdicts, res *perf.Result, f *fabric.Fabric, t *checks.Thresholds, o countersOptions, source string, notRead []report.Unreached) *countersDoc {
	doc := &countersDoc{
		Schema: CountersSchema, Version: buildinfo.Get().Version, GeneratedAt: res.Last.Finished.UTC(),
		Source: source, Basis: v.basis, IntervalSeconds: res.Interval().Seconds(),
		SL: o.sl, PKeyIndex: o.pkeyIndex, Reset: res.Reset.String(),
		Thresholds: countersThresholds{File: o.thresholds},
		FailOn:     v.failOn,
		Summary: countersSummary{NodesRead: v.nodes, PortsRead: len(v.ports), PortsOverThreshold: v.overPorts,
			NodesOverThreshold: v.overNodes, PortsAtFailOn: v.failing, PortsUndecided: v.undecided, NotRead: len(notRead),
			PortsWithinThresholdWithErrors: v.within},
		Ports:   []countersPort{},
		NotRead: notRead,
		PMACaps: map[string]capsInfo{},
	}
	if doc.NotRead == nil {
		doc.NotRead = []report.Unreached{}
	}
	switch {
	case v.increases:
		// No span: no share of time or BER, the wait count judges.
		doc.Thresholds.Delta, doc.Thresholds.XmitWaitAbsolute = t.Delta, t.XmitWaitAbsolute
	case v.basis == "delta":
		doc.Thresholds.Delta, doc.Thresholds.XmitWaitShare, doc.Thresholds.BER = t.Delta, t.XmitWaitWarn, t.BER
	default:
		doc.Thresholds.Absolute, doc.Thresholds.XmitWaitAbsolute = t.Absolute, t.XmitWaitAbsolute
	}
	for guid, c := range res.Last.Caps {
		if c != nil {
			doc.PMACaps[fmt.Sprintf("0x%016x", guid)] = capsInfo{CapabilityMask: c.CapabilityMask, CapabilityMask2: c.CapabilityMask2}
		}
	}
	switch {
	case v.failing > 0:
		doc.Status = "over_threshold"
	case len(notRead) > 0 || v.undecided > 0:
		doc.Status = "partial"
	default:
		doc.Status = "ok"
	}
	for _, pc := range v.ports {
		pv := v.verdict(pc)
		if !o.all && !pv.listed() {
			continue
		}
		doc.Ports = append(doc.Ports, countersPortOf(pv, res.Interval()))
	}
	return doc
}

// writeCountersJSON writes countersDocument as `json.Encoder` with a
// two-space indent would, but marshals one port at a time as it writes:
// with --all on a large fabric the document is hundreds of MB, and
// encoding it whole held it, its compact form and its indented copy in
// memory at once (9,472 nodes: ~1.2 GB).
func writeCountersJSON(w io.Writer, v *verdicts, res *perf.Result, f *fabric.Fabric, t *checks.Thresholds, o countersOptions, source string, notRead []report.Unreached) error {
	all := o.all
	o.all = false
	doc := countersDocument(v, res, f, t, o, source, notRead)
	o.all = all
	doc.Ports = []countersPort{}
	head, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	const slot = "\n  \"ports\": [],\n"
	i := bytes.Index(head, []byte(slot))
	if i < 0 {
		return fmt.Errorf("counters JSON: no ports member in %.80q", head)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(head[:i+len(slot)-3]) // up to and including "["
	// One encoder into one buffer for every port: MarshalIndent made
	// the port's compact and indented bytes anew each time, garbage
	// that set the heap's peak while the document streamed (--all on
	// FatTree8k: 49,152 ports). Encode's bytes are MarshalIndent's and
	// a newline.
	var pb bytes.Buffer
	enc := json.NewEncoder(&pb)
	enc.SetIndent("    ", "  ")
	n := 0
	for _, pc := range v.ports {
		pv := v.verdict(pc)
		if !all && !pv.listed() {
			continue
		}
		pb.Reset()
		if err := enc.Encode(countersPortOf(pv, res.Interval())); err != nil {
			return err
		}
		if n > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n    ")
		bw.Write(bytes.TrimSuffix(pb.Bytes(), []byte{'\n'}))
		n++
	}
	if n > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteString("],\n")
	bw.Write(head[i+len(slot):])
	bw.WriteByte('\n')
	return bw.Flush()
}

// countersPortOf is one port's entry of the counters document.
func countersPortOf(pv *portVerdict, iv time.Duration) countersPort {
	pc := pv.pc
	p := countersPort{
		Node: nodeName(nil, pc.Port), NodeGUID: fmt.Sprintf("0x%016x", pc.GUID), Port: int(pc.Key.Port), LID: int(pc.LID),
		OverThreshold: len(pv.over) > 0, Exceeded: pv.over, FromAllPorts: pc.FromAllPorts, Counters: []countersValue{},
	}
	if p.Exceeded == nil {
		p.Exceeded = []exceeded{}
	} else {
		sev := pv.sev
		p.Severity = &sev
	}
	if pc.Port != nil {
		if pc.Port.Node != nil {
			p.NodeType = pc.Port.Node.Type.String()
		}
		if r := pc.Port.Rate(); r.Width != 0 {
			p.Rate = r.String()
		}
		if rp := pc.Port.Remote; rp != nil && rp.Node != nil {
			p.Peer = &countersPeer{Node: rp.Node.Description, NodeGUID: fmt.Sprintf("0x%016x", rp.Node.GUID), Port: int(rp.Num)}
		}
	}
	for _, c := range pc.Counters() {
		p.Counters = append(p.Counters, countersValue{Name: c.Name, Kind: kindName(c.Kind), Value: c.Value, Raw: c.Raw,
			Bits: c.Bits, Saturated: c.Saturated, Source: attrName(c.Source)})
	}
	for _, u := range pv.undecided {
		p.Undecided = append(p.Undecided, countersUndecided{Check: u.Check, Reason: u.Reason})
	}
	if d := pv.d; d != nil {
		pd := &countersDelta{ElapsedSeconds: d.Elapsed.Seconds(),
			XmitUtilization: optShare(d.XmitUtilization), RcvUtilization: optShare(d.RcvUtilization), XmitWaitShare: optShare(d.XmitWaitShare),
			Backwards: d.Backwards, Counters: []countersDeltaValue{}}
		if _, unknown := pv.unknown("PortXmitData"); !unknown {
			pd.XmitBytesPerSecond = &d.XmitBytesPerSecond
		}
		if _, unknown := pv.unknown("PortRcvData"); !unknown {
			pd.RcvBytesPerSecond = &d.RcvBytesPerSecond
		}
		ber, bits, ok := portBER(pv, iv)
		if ok {
			pd.BER = &ber
		}
		pd.BERBits = bits
		for _, c := range d.Counters {
			dv := countersDeltaValue{Name: c.Name, Backwards: c.Backwards, Saturated: c.Saturated, Unknown: c.Why}
			if !c.Unknown {
				dv.Delta, dv.PerSecond = &c.Delta, &c.PerSecond
			}
			pd.Counters = append(pd.Counters, dv)
		}
		p.Delta = pd
	}
	return p
}

func kindName(k mad.CounterKind) string {
	switch k {
	case mad.KindError:
		return "error"
	case mad.KindDataWords:
		return "data_octets"
	case mad.KindPackets:
		return "packets"
	case mad.KindWait:
		return "wait_ticks"
	}
	return k.String()
}

func attrName(a mad.AttrID) string {
	switch a {
	case mad.AttrPortCounters:
		return "PortCounters"
	case mad.AttrPortCountersExtended:
		return "PortCountersExtended"
	}
	return a.String()
}

func plural(n int, what string) string { return report.Plural(n, what) }
