package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/buildinfo"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/gate"
	"github.com/ibdoctor/ibdoctor/internal/hostlist"
	"github.com/ibdoctor/ibdoctor/internal/jsonstream"
	"github.com/ibdoctor/ibdoctor/internal/perf"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/ibdoctor/ibdoctor/internal/source"
	"github.com/ibdoctor/ibdoctor/internal/top"
	"github.com/ibdoctor/ibdoctor/internal/words"
	"github.com/ibdoctor/ibdoctor/mad"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// topOptions are the flags of the top command.
type topOptions struct {
	interval   time.Duration
	switches   []string
	hosts      string
	budget     int
	once       bool
	json       bool
	sort       string
	filter     string
	thresholds string
	sl         uint8
	pkeyIndex  uint16
	key        top.SortKey // sort, parsed
}

// newTopCmd builds top; runF, when not nil, runs instead of runTop (tests
// parse the flags without watching).
func newTopCmd(a *app, runF func(*topOptions) error) *cobra.Command {
	var o topOptions
	cmd := &cobra.Command{
		Use:   "top",
		Short: "Watch the ports live: error rate, XmitWait share and utilisation, worst first",
		Long: `top discovers the fabric, then re-reads the PerfMgt counters of the watched
ports every refresh (-n/--interval, default 2s) and shows them sorted by verdict
then error rate, by XmitWait share (time the port could not send) or by
utilisation, with the
link's far end, its rate, and the verdict of ibdoctor's counter checks over the
last interval.

It watches every port with a link, or only --switch's ports or both ends of
--hosts' links (each HCA port and the switch port facing it).
Each refresh sends at most --budget MADs (3 per port: its counters and its
PortInfo, so a link that went down or retrained since shows it): a larger scope
is read in turns, a slice per refresh, and each port's rates are over the time
between its own two readings.

Keys: s cycles the sort (e errors, w xmit-wait, u utilisation); / filters by
node name (Enter keeps it, Esc clears); p or space pauses; q or Ctrl-C quits.

With --once, or when stdout is not a terminal, top reads twice --interval apart
and prints one snapshot as a table or, with --json, as JSON.`,
		Example: `  ibdoctor top --sim
  ibdoctor top -n 5s --switch spine01
  ibdoctor top --hosts 'gpu[001-016]' --sort wait
  ibdoctor top --once --json > ports.json`,
		Args: a.noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return withExit(ExitUndecided, err)
			}
			if runF != nil {
				return runF(&o)
			}
			return a.runTop(cmd.Context(), &o)
		},
	}
	cmd.SetFlagErrorFunc(flagError)
	fs := cmd.Flags()
	fs.DurationVarP(&o.interval, "interval", "n", 2*time.Second, "time between refreshes")
	// An array, as routes --switch: a node description may hold a comma.
	fs.StringArrayVar(&o.switches, "switch", nil, "watch only this switch's ports (name, GUID or LID; repeatable)")
	fs.StringVar(&o.hosts, "hosts", "", "watch only these hosts' links, both ends (hostlist, e.g. gpu[001-016]; matched by node description)")
	fs.IntVar(&o.budget, "budget", 4096, "most MADs per refresh; a larger scope is read in turns (0: no limit)")
	fs.BoolVar(&o.once, "once", false, "print one snapshot (two reads --interval apart) and exit")
	fs.BoolVar(&o.json, "json", false, "print the snapshot as JSON (implies --once)")
	fs.StringVar(&o.sort, "sort", "errors", "sort by errors (errors/s), wait (XmitWait share) or util (utilisation)")
	completeValues(cmd, "sort", top.SortKeyNames)
	fs.StringVar(&o.filter, "filter", "", "show only ports whose node or far end contains this text")
	fs.StringVar(&o.thresholds, "thresholds", "", "counter thresholds file for the verdicts (docs/checks.md)")
	fs.Uint8Var(&o.sl, "sl", 0, "service level of PerfMgt MADs")
	fs.Uint16Var(&o.pkeyIndex, "pkey-index", 0, "P_Key table index of PerfMgt MADs")
	return cmd
}

// validate checks the flags before anything is sent.
func (o *topOptions) validate() error {
	if o.interval <= 0 {
		return fmt.Errorf("--interval %v: give a positive duration, e.g. -n 2s", o.interval)
	}
	if o.budget < 0 {
		return fmt.Errorf("--budget %d: give a number of MADs, or 0 for no limit", o.budget)
	}
	var err error
	o.key, err = top.ParseSortKey(o.sort)
	return err
}

// runTop discovers, then samples and shows the watched ports until quit
// (or once).
func (a *app) runTop(parent context.Context, o *topOptions) error {
	key := o.key
	thr, err := loadThresholds(o.thresholds)
	if err != nil {
		return withExit(ExitUndecided, err)
	}
	ctx, stop := signalContext(parent)
	defer stop()
	// A file's counters are none or one reading: the simulator's zeros, or
	// values that never move, would show as rates read (trial T10).
	sess, err := a.open(ctx, openOptions{need: source.Need{SMP: true, Perf: true}, requireCounters: "top", requireRates: true, discover: true})
	if err != nil {
		return err
	}
	defer sess.Close()
	f := sess.fabric
	ports, err := topScope(f, o)
	if err != nil {
		return withExit(ExitUndecided, err)
	}
	s := top.NewSampler(sess.Engine, f, top.Options{
		Ports: ports, Budget: o.budget, PortInfo: sess.Engine,
		Perf:   perf.Options{SL: o.sl, PKeyIndex: o.pkeyIndex, Workers: a.opts.source.Window},
		Expect: checks.Expectations{Thresholds: thr},
	})
	v := &topView{source: sess.Name, sort: key, filter: o.filter, interval: o.interval,
		silence: diagnose.Silence{Fabric: f, From: diagnose.ReadFrom(f, sess.Engine.Local())},
		missed:  discoveryNotRead(f)}
	interactive := !o.once && !o.json && a.io.IsStdoutTTY() && a.io.IsStdinTTY()
	if interactive {
		if f, ok := a.stdin.(*os.File); ok {
			return v.live(ctx, a, s, int(f.Fd()))
		}
	}
	return v.snapshot(ctx, a, s, o.json)
}

// discoveryNotRead is what discovery tried and could not read, said as
// counters and check say it. A scope cannot leave it out: an HCA that did
// not answer NodeInfo has no name to match --hosts or --switch by, and
// a view without it reads as complete (trial T2).
func discoveryNotRead(f *fabric.Fabric) []report.Unreached {
	var out []report.Unreached
	wheres := f.UnreachableWheres()
	for i, u := range f.Unreachable {
		out = append(out, report.Unreached{What: u.What, Where: wheres[i], Reason: u.Reason})
	}
	return out
}

// topScope is the ports top watches: every port with a link, or the
// --switch and --hosts ports. A port whose far end did not answer is
// watched when its link is up (perf.LinkUp, what counters reads): its PMA
// answers, and it is the evidence left of the node behind it.
func topScope(f *fabric.Fabric, o *topOptions) ([]*fabric.Port, error) {
	var nodes, hostNodes []*fabric.Node
	for _, s := range o.switches {
		n, err := findSwitch(f, s)
		if err != nil && strings.Contains(s, ",") {
			return nil, fmt.Errorf("--switch %s: %w (a comma is part of a name: give each switch its own --switch)", s, err)
		}
		if err != nil {
			return nil, fmt.Errorf("--switch %s: %w", s, err)
		}
		nodes = append(nodes, n)
	}
	if o.hosts != "" {
		hosts, err := hostlist.Expand(o.hosts)
		if err != nil {
			return nil, fmt.Errorf("--hosts: %w", err)
		}
		hn, unmatched := gate.Resolve(f, hosts, nil)
		if len(unmatched) > 0 {
			return nil, fmt.Errorf("--hosts: not in the fabric: %s (hosts are matched by node description)", strings.Join(unmatched, ", "))
		}
		hostNodes = hn
	}
	all := len(o.switches) == 0 && o.hosts == ""
	var out []*fabric.Port
	seen := map[*fabric.Port]bool{}
	add := func(n *fabric.Node) {
		for _, p := range n.Ports {
			if p == nil || p.Num == 0 || seen[p] || (p.Remote == nil && !perf.LinkUp(n, p)) {
				continue
			}
			seen[p] = true
			out = append(out, p)
		}
	}
	if all {
		for _, n := range f.Nodes {
			add(n)
		}
	}
	for _, n := range nodes {
		add(n)
	}
	for _, n := range hostNodes {
		add(n)
		// Each host link's switch end too: its receive side is the
		// host's uplink, and errors there are the host's link's
		// (trial G4: a leaf port taking 100 symbol errors/s was not
		// on the screen of --hosts).
		for _, p := range n.Ports {
			if q := hostLinkFar(p); q != nil && !seen[q] {
				seen[q] = true
				out = append(out, q)
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no port with a link to watch in the scope")
	}
	return out, nil
}

// hostLinkFar is the switch port at the far end of host port p, nil
// when p has no cable to a switch.
func hostLinkFar(p *fabric.Port) *fabric.Port {
	if p == nil || p.Num == 0 || p.Remote == nil || p.Remote.Node.Type != mad.NodeSwitch {
		return nil
	}
	return p.Remote
}

// topView is what the view shows and how.
type topView struct {
	source   string
	sort     top.SortKey
	filter   string
	interval time.Duration
	paused   bool
	editing  bool // typing a filter after '/'
	edit     string
	frame    *top.Frame
	err      error
	// silence says why a PMA did not answer, where what was read shows it.
	silence diagnose.Silence
	// missed is what discovery could not read: listed with the counters
	// not read, on every view.
	missed []report.Unreached
}

// notRead is what the frame could not read, discovery's first, each said
// once (one line for a PMA not read, not one per port).
func (v *topView) notRead(fr *top.Frame) []report.Unreached {
	out := append([]report.Unreached(nil), v.missed...)
	if len(fr.Errors) > 0 {
		out = append(out, diagnose.UnreachedCounters(fr.Errors, v.silence)...)
	}
	return out
}

// footer is the line under the table saying what was not read (none: "").
func (v *topView) footer(fr *top.Frame) string {
	nr := v.notRead(fr)
	switch len(nr) {
	case 0:
		return ""
	case 1:
		return "Not read: " + report.UnreachedLines(nr)[0]
	}
	return fmt.Sprintf("Not read: %s (listed on stderr), the first %s", words.Count(len(nr), "thing"), report.UnreachedLines(nr)[0])
}

// snapshot reads twice, --interval apart, and prints one view.
func (v *topView) snapshot(ctx context.Context, a *app, s *top.Sampler, asJSON bool) error {
	var fr *top.Frame
	// A full turn over the scope first, then another: every port read
	// twice, each slice --interval after its first reading (README: "reads
	// twice -n apart"), however many slices the budget cuts the scope in.
	// The interval counts from the end of the slice's first refresh: a
	// refresh reads PortInfo before the counters, and that part's time
	// varies, so counting from its start let two readings of a port come
	// less than --interval apart under load.
	first := make([]time.Time, s.Cycle())
	for round := 0; round < 2; round++ {
		for i := 0; i < s.Cycle(); i++ {
			if round == 1 {
				if err := sleepCtx(ctx, time.Until(first[i].Add(v.interval))); err != nil {
					return withExit(ExitUndecided, fmt.Errorf("interrupted: %w", err))
				}
			}
			var err error
			fr, err = s.Refresh(ctx)
			if err != nil {
				return withExit(ExitUndecided, fmt.Errorf("reading counters: %w", err))
			}
			if round == 0 {
				first[i] = time.Now()
			}
		}
	}
	// The rows' places in the order shown; each row is made as it is
	// written, not held for all the ports at once.
	rows := fr.View(v.filter, v.sort)
	// The JSON document ends as the table does: what was not read listed
	// on stderr and exit 3, not a complete-looking 0.
	if asJSON {
		if err := writeTopJSON(a.stdout, v, fr, rows); err != nil {
			return err
		}
	} else {
		w := bufio.NewWriter(a.stdout)
		st := a.style()
		io.WriteString(w, report.WrapString("", v.header(fr, st.Width), st.Width))
		fmt.Fprintln(w)
		writeTopTable(w, st, rows, 0)
		if foot := v.footer(fr); foot != "" {
			io.WriteString(w, report.WrapString("", st.Yellow(foot), st.Width))
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	if len(fr.Narrow) > 0 {
		lines := make([]string, len(fr.Narrow))
		for i, e := range fr.Narrow {
			lines[i] = fmt.Sprint(e)
		}
		a.listStderr(fmt.Sprintf("Read from the 16/32-bit PortCounters only (%s):", plural(narrowPorts(fr), "port")), lines)
	}
	if notRead := v.notRead(fr); len(notRead) > 0 {
		// Said as check says them (one line for a PMA not read, not one
		// per port).
		a.listStderr(fmt.Sprintf("Could not read (%d):", len(notRead)), report.UnreachedLines(notRead))
		what := make([]string, 0, 2)
		if len(v.missed) > 0 {
			what = append(what, words.Count(len(v.missed), "thing")+" discovery tried")
		}
		if len(fr.Errors) > 0 {
			what = append(what, plural(perf.PortsNotRead(fr.Errors), "port"))
		}
		return withExit(ExitPartial, fmt.Errorf("%s could not be read; what was read is printed", strings.Join(what, " and ")))
	}
	if n := undecidedRows(rows); n > 0 {
		return withExit(ExitPartial, fmt.Errorf("%s undecided: an increase could not be computed (shown as ?)", plural(n, "port")))
	}
	return nil
}

// narrowPorts is how many ports the frame read from PortCounters because
// their PortCountersExtended went unanswered.
func narrowPorts(fr *top.Frame) int {
	n := 0
	for _, e := range fr.Narrow {
		n += e.ReadNarrow
	}
	return n
}

// undecidedRows counts the measured rows a counter check could not judge.
func undecidedRows(rows *top.View) int {
	n := 0
	for i := range rows.Len() {
		if r := rows.Row(i); r.Measured && r.Undecided != "" && !r.HasVerdict {
			n++
		}
	}
	return n
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// header is the view's first line; when it is wider than width (0: no
// limit) a shorter form keeps the clock, the sort, the scope and the
// rates' interval, and drops the program's name and the refresh period.
func (v *topView) header(fr *top.Frame, width int) string {
	at := fr.At.UTC().Format("15:04:05")
	scope := words.Count(fr.Watched, "port")
	short := scope
	if fr.Cycle > 1 {
		scope = fmt.Sprintf("%d of %d ports per refresh (budget)", fr.PerRefresh, fr.Watched)
		short = fmt.Sprintf("%d/%d ports a refresh", fr.PerRefresh, fr.Watched)
	}
	over := ""
	if fr.Interval > 0 {
		over = fmt.Sprintf(", rates over %v", fr.Interval.Round(10*time.Millisecond))
	}
	h := fmt.Sprintf("ibdoctor top  %s  %s  every %v, sorted by %s; %s%s", v.source, at, v.interval, v.sort.Heading(), scope, over)
	if width > 0 && report.VisibleWidth(h) > width {
		h = fmt.Sprintf("top  %s  %s  by %s; %s%s", v.source, at, v.sort.Heading(), short, over)
	}
	if width > 0 && report.VisibleWidth(h) > width && fr.Interval > 0 {
		// A long source name (ibsim:NAME/host) cut the interval at
		// "rates over 2.…" in 80 columns (trial D4): to a tenth, shorter.
		h = fmt.Sprintf("top  %s  %s  by %s; %s, over %v", v.source, at, v.sort.Heading(), short, fr.Interval.Round(100*time.Millisecond))
	}
	return h
}

// topColumns: on a narrow terminal RX% goes first, then the rate, and
// the far end is cut; the verdict is the judgement and is never cut, nor
// are the port and the figures.
var topColumns = []report.Column{
	{Header: "PORT"}, {Header: "FAR END", Min: 12}, {Header: "RATE", Drop: 2},
	{Header: "ERR/s"}, {Header: "WAIT%"}, {Header: "TX%"}, {Header: "RX%", Drop: 1},
	{Header: "VERDICT"},
}

// writeTopTable writes the view's first limit rows (0: all). The rows are
// made as the table is sized and again as it is written, not held: the
// live view's few are made once, as a refresh running beside it may
// change them between the two.
func writeTopTable(w io.Writer, st report.Style, rows *top.View, limit int) {
	n := rows.Len()
	row := rows.Row
	if limit > 0 {
		n = min(n, limit)
		made := make([]*top.Row, n)
		for i := range made {
			made[i] = rows.Row(i)
		}
		row = func(i int) *top.Row { return made[i] }
	}
	report.WriteTableFunc(w, st.Width, topColumns, n, func(i int) []string { return topCells(st, row(i)) })
}

// topCells is a row of the table.
func topCells(st report.Style, r *top.Row) []string {
	verdict := "-"
	stale := r.NotRead != ""
	switch {
	case stale:
		// Its figures are an older reading's: not shown as current
		// (trial D4); why is on the status line or Not read list.
		verdict = st.Yellow("not read")
	case !r.Measured:
		verdict = st.Dim("measuring")
	case r.HasVerdict:
		// Every verdict here is a counter check's: its group is implied.
		verdict = report.SeverityLabel(st, r.Verdict) + " " + strings.TrimPrefix(r.Check, "counters.")
	case r.Undecided != "":
		verdict = st.Yellow("undecided " + strings.TrimPrefix(r.Undecided, "counters."))
	}
	if r.Narrow {
		// Read, from the narrower attribute: not "not read".
		verdict += " " + st.Dim("(PortCounters only)")
	}
	return []string{fmt.Sprintf("%s/%d", r.Node, r.Num), r.Peer, r.Rate,
		unknownOr(rateText(r.ErrorsPerSecond, r.Measured), r.ErrorsUnknown || stale), unknownOr(shareText(r.XmitWait, r.Measured), r.WaitUnknown || stale),
		unknownOr(shareText(r.TxUtil, r.Measured), r.TxUnknown || stale), unknownOr(shareText(r.RxUtil, r.Measured), r.RxUnknown || stale), verdict}
}

// unknownOr is "?" for a figure whose increase could not be computed
// (never 0, which reads as a clean port), else text.
func unknownOr(text string, unknown bool) string {
	if unknown {
		return "?"
	}
	return text
}

func rateText(f float64, ok bool) string {
	switch {
	case !ok:
		return "…"
	case f >= 1000:
		return strings.ReplaceAll(humanBytes(f, ""), " ", "")
	}
	return shortFloat(f)
}

func shareText(f float64, ok bool) string {
	if !ok {
		return "…"
	}
	return pctText(f)
}

// topJSON is what `top --json` prints: one snapshot.
type topJSON struct {
	Schema          string    `json:"schema"`
	Version         string    `json:"ibdoctor_version"`
	GeneratedAt     time.Time `json:"generated_at"`
	Source          string    `json:"source"`
	SortedBy        string    `json:"sorted_by"`
	IntervalSeconds float64   `json:"interval_seconds"`
	Watched         int       `json:"ports_watched"`
	Ports           []topPort `json:"ports"`
	NotRead         []string  `json:"not_read"`
	// ReadNarrow: PMAs whose PortCountersExtended went unanswered, their
	// ports read from PortCounters (each port's "counters").
	ReadNarrow []string `json:"read_narrow"`
}

type topPort struct {
	Node            string   `json:"node"`
	Port            int      `json:"port"`
	FarEnd          string   `json:"far_end"`
	Rate            string   `json:"rate,omitempty"`
	ErrorsPerSecond *float64 `json:"errors_per_second"`
	XmitWaitShare   *float64 `json:"xmit_wait_share"`
	TxUtilization   *float64 `json:"tx_utilization"`
	RxUtilization   *float64 `json:"rx_utilization"`
	// TxBytesPerSec and RxBytesPerSec are null when the data counter's
	// increase is unknown, as the utilisation is: 0 would read as idle.
	TxBytesPerSec *float64 `json:"tx_bytes_per_second"`
	RxBytesPerSec *float64 `json:"rx_bytes_per_second"`
	Verdict       string   `json:"verdict,omitempty"`
	Check         string   `json:"check,omitempty"`
	Finding       string   `json:"finding,omitempty"`
	// Counters is the attribute read: PortCountersExtended, or
	// PortCounters when the extended one went unanswered.
	Counters string `json:"counters"`
	// Unknown says why a figure is null (an increase not computed).
	Unknown string `json:"unknown,omitempty"`
	// NotRead says why the port's last reading failed: its figures
	// (an older reading's) are then null.
	NotRead string `json:"not_read,omitempty"`
}

// TopSchema identifies the JSON document of `top --json`.
const TopSchema = "ibdoctor.top/v1"

// writeTopJSON writes the document of topJSON one port at a time
// (jsonstream), byte for byte what encoding the whole topJSON wrote: a
// snapshot of every port of a big fabric is not held as Go values and
// bytes at once.
func writeTopJSON(w io.Writer, v *topView, fr *top.Frame, rows *top.View) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	jw := jsonstream.New(bw, jsonstream.Options{Indent: true})
	jw.Field("schema", TopSchema)
	jw.Field("ibdoctor_version", buildinfo.Get().Version)
	jw.Field("generated_at", fr.At.UTC())
	jw.Field("source", v.source)
	jw.Field("sorted_by", v.sort.String())
	jw.Field("interval_seconds", fr.Interval.Seconds())
	jw.Field("ports_watched", fr.Watched)
	measured := rows.Measured()
	jw.Array("ports", measured.Len(), func(i int) any { return topPortOf(measured.Row(i)) })
	// The lines the text's Could not read list prints (discovery's misses
	// first, a silent PMA once with its ports and why), not one raw
	// error per port.
	notRead := report.UnreachedLines(v.notRead(fr))
	jw.Array("not_read", len(notRead), func(i int) any { return notRead[i] })
	jw.Array("read_narrow", len(fr.Narrow), func(i int) any { return fr.Narrow[i].Error() })
	if err := jw.Close(); err != nil {
		return err
	}
	return bw.Flush()
}

// topPortOf is one measured port's entry of the top document.
func topPortOf(r *top.Row) topPort {
	p := topPort{Node: r.Node, Port: r.Num, FarEnd: r.Peer, Rate: r.Rate,
		XmitWaitShare: optShare(r.XmitWait), TxUtilization: optShare(r.TxUtil), RxUtilization: optShare(r.RxUtil),
		Counters: "PortCountersExtended", Unknown: r.Unknown}
	if !r.TxUnknown {
		p.TxBytesPerSec = &r.TxBytesPerSec
	}
	if !r.RxUnknown {
		p.RxBytesPerSec = &r.RxBytesPerSec
	}
	if !r.ErrorsUnknown {
		p.ErrorsPerSecond = &r.ErrorsPerSecond
	}
	if r.Narrow {
		p.Counters = "PortCounters"
	}
	if r.NotRead != "" {
		p.NotRead = r.NotRead
		p.ErrorsPerSecond, p.XmitWaitShare, p.TxUtilization, p.RxUtilization, p.TxBytesPerSec, p.RxBytesPerSec = nil, nil, nil, nil, nil, nil
		return p
	}
	switch {
	case r.HasVerdict:
		p.Verdict, p.Check, p.Finding = r.Verdict.String(), r.Check, r.Title
	case r.Undecided != "":
		p.Verdict, p.Check = "undecided", r.Undecided
	}
	return p
}

// live runs the full-screen view until q, Ctrl-C or a signal: the
// terminal in raw mode on the alternate screen, restored on every way out.
func (v *topView) live(ctx context.Context, a *app, s *top.Sampler, fd int) error {
	old, err := term.MakeRaw(fd)
	if err != nil {
		return withExit(ExitUndecided, fmt.Errorf("top: cannot put the terminal in raw mode (use --once): %w", err))
	}
	out := a.stdout
	io.WriteString(out, "\x1b[?1049h\x1b[?25l")
	defer func() {
		io.WriteString(out, "\x1b[?25h\x1b[?1049l")
		term.Restore(fd, old)
	}()
	keys := make(chan byte, 16)
	go func() {
		buf := make([]byte, 32)
		for {
			n, err := a.stdin.Read(buf)
			for _, b := range buf[:n] {
				keys <- b
			}
			if err != nil {
				close(keys)
				return
			}
		}
	}()
	frames := make(chan refreshResult, 1)
	refresh := func() {
		go func() {
			fr, err := s.Refresh(ctx)
			frames <- refreshResult{fr, err}
		}()
	}
	refreshing := true
	refresh()
	tick := time.NewTicker(v.interval)
	defer tick.Stop()
	v.draw(a)
	for {
		select {
		case <-ctx.Done():
			if refreshing {
				<-frames
			}
			return nil
		case r := <-frames:
			refreshing = false
			if r.err != nil && r.fr == nil {
				v.err = r.err
			} else {
				v.frame, v.err = r.fr, nil
			}
			v.draw(a)
		case <-tick.C:
			if !v.paused && !refreshing {
				refreshing = true
				refresh()
			}
		case b, ok := <-keys:
			if !ok {
				if refreshing {
					<-frames
				}
				return nil
			}
			if v.key(b) {
				if refreshing {
					<-frames
				}
				return nil
			}
			v.draw(a)
		}
	}
}

type refreshResult struct {
	fr  *top.Frame
	err error
}

// key handles one key press; true means quit.
func (v *topView) key(b byte) bool {
	if v.editing {
		switch b {
		case '\r', '\n':
			v.filter, v.editing = v.edit, false
		case 0x1b:
			v.editing = false
		case 0x7f, 0x08:
			if len(v.edit) > 0 {
				v.edit = v.edit[:len(v.edit)-1]
			}
		case 0x03:
			return true
		default:
			if b >= 0x20 && b < 0x7f {
				v.edit += string(b)
			}
		}
		return false
	}
	switch b {
	case 'q', 'Q', 0x03:
		return true
	case 's':
		v.sort = v.sort.Next()
	case 'e':
		v.sort = top.ByErrors
	case 'w':
		v.sort = top.ByXmitWait
	case 'u':
		v.sort = top.ByUtilization
	case 'p', ' ':
		v.paused = !v.paused
	case '/':
		v.editing, v.edit = true, v.filter
	case 0x1b:
		v.filter = ""
	}
	return false
}

// status is the view's second line: what the refresh could not read
// (naming the port when it is one: "1 port not read" named nothing,
// trial D4), then the keys, shortened so the line fits width.
func (v *topView) status(st report.Style, fr *top.Frame, width int) string {
	// In the order the old line prepended them: discovery's misses
	// first, the keys last.
	var pre []string
	if len(v.missed) > 0 {
		pre = append(pre, st.Yellow(words.Count(len(v.missed), "thing")+" discovery could not read"))
	}
	if fr != nil && len(fr.Errors) > 0 {
		pre = append(pre, st.Yellow(notReadStatus(fr.Errors)))
	}
	if fr != nil && len(fr.Narrow) > 0 {
		pre = append(pre, st.Yellow(plural(narrowPorts(fr), "port")+" from PortCounters only"))
	}
	if v.err != nil {
		pre = append(pre, st.Red("error: "+v.err.Error()))
	}
	if v.editing {
		return strings.Join(append(pre, "filter: "+v.edit+"_  (Enter keeps, Esc cancels)"), "  ")
	}
	if v.filter != "" {
		pre = append(pre, fmt.Sprintf("filter %q (Esc clears)", v.filter))
	}
	if v.paused {
		pre = append(pre, st.Yellow("paused")+" (p resumes)")
	}
	for _, keys := range []string{"keys: s sort  e/w/u errors/wait/util  / filter  p pause  q quit", "keys: s e/w/u / p q", ""} {
		line := strings.Join(append(pre[:len(pre):len(pre)], keys), "  ")
		if width <= 0 || report.VisibleWidth(line) <= width || keys == "" {
			return strings.TrimRight(line, " ")
		}
	}
	return ""
}

// notReadStatus says what this refresh could not read, naming the first
// port (or PMA).
func notReadStatus(errs []*perf.PortError) string {
	n := perf.PortsNotRead(errs)
	e := errs[0]
	name := ""
	switch {
	case e.Port != nil && e.Node != nil:
		name = fmt.Sprintf("%s/%d", e.Node.Description, e.Port.Num)
	case e.Node != nil:
		name = e.Node.Description
	}
	if name == "" {
		return plural(n, "port") + " not read"
	}
	if n == 1 {
		return name + " not read"
	}
	return fmt.Sprintf("%s not read (%s, ...)", plural(n, "port"), name)
}

// draw repaints the screen: header, status, the ports that fit.
func (v *topView) draw(a *app) {
	width, height := a.io.TerminalWidth(), a.io.TerminalHeight()
	st := report.Style{Color: a.io.ColorEnabled(), Width: width - 1}
	var b strings.Builder
	b.WriteString("\x1b[H")
	line := func(s string) {
		b.WriteString(report.Truncate(s, width-1))
		b.WriteString("\x1b[K\r\n")
	}
	if v.frame == nil {
		line(fmt.Sprintf("ibdoctor top  %s  reading counters...", v.source))
	} else {
		line(st.Bold(v.header(v.frame, width-1)))
	}
	line(v.status(st, v.frame, width-1))
	line("")
	if v.frame != nil {
		rows := v.frame.View(v.filter, v.sort)
		var t strings.Builder
		// Header, status, blank, the table's header and rule, and a last
		// line left empty: a newline there would scroll the screen.
		writeTopTable(&t, st, rows, max(1, height-6))
		for _, l := range strings.Split(strings.TrimRight(t.String(), "\n"), "\n") {
			line(l)
		}
	}
	b.WriteString("\x1b[J")
	io.WriteString(a.stdout, b.String())
}
