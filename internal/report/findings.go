package report

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/hostlist"
	"github.com/ibdoctor/ibdoctor/internal/jsonstream"
	"github.com/ibdoctor/ibdoctor/internal/words"
)

// Schema is the identifier of the JSON report document. A change that
// renames or removes a field makes a new version; adding a field does not.
const Schema = "ibdoctor.report/v1"

// Document is what `check --json` and `sweep` write: docs/schema-report.md
// describes every field.
type Document struct {
	Schema      string    `json:"schema"`
	Version     string    `json:"ibdoctor_version"`
	GeneratedAt time.Time `json:"generated_at"`
	Command     string    `json:"command"`
	Source      string    `json:"source"`
	// Status is "healthy", "unhealthy" (findings at or above the
	// threshold) or "undecided" (the sweep could not look at everything
	// it needed).
	Status    string           `json:"status"`
	FailOn    string           `json:"fail_on"`
	Complete  bool             `json:"complete"`
	Fabric    FabricSummary    `json:"fabric"`
	Counts    map[string]int   `json:"findings_by_severity"`
	Findings  []checks.Finding `json:"findings"`
	ChecksRun []string         `json:"checks_run"`
	Skipped   []checks.Skipped `json:"checks_skipped"`
	Unreached []Unreached      `json:"unreached"`
	// Undecided lists the subjects a check that ran could not judge
	// because what it needs there was not read ("could not decide").
	Undecided []checks.Undecided `json:"undecided,omitempty"`
	Timings   map[string]string  `json:"timings,omitempty"`
	MADs      *MADStats          `json:"mads,omitempty"`
	Scope     *ScopeSummary      `json:"scope,omitempty"`
	Interval  string             `json:"counter_interval,omitempty"`
	// RoutesComputed: the forwarding tables are ibdoctor's own min-hop
	// routes (a saved topology without tables), not the fabric's; routing
	// findings are then what-if.
	RoutesComputed bool `json:"routes_computed,omitempty"`
	// CountersNotRead says why no counters were read when the fabric had
	// none to read (a saved file that carries none).
	CountersNotRead string `json:"counters_not_read,omitempty"`
	// RatesNotRead says why the link rates are not the fabric's (a saved
	// file that gives none: the simulator's default).
	RatesNotRead string `json:"rates_not_read,omitempty"`
	// CountersBasis says what the counters judged are when they are not
	// a live reading (a file's increases over a span it does not give).
	CountersBasis string `json:"counters_basis,omitempty"`
	// CountersCleared says which ports' counters were cleared since the
	// sweep they are compared with (checks.Result.CountersCleared): the
	// errors they held are in no finding.
	CountersCleared string `json:"counters_cleared,omitempty"`
	// SourceWarnings are the file reader's warnings about how a --sim
	// file was read (values replaced, a GUID read as two nodes, ...):
	// what stderr says, kept with the report (trial C3).
	SourceWarnings []string `json:"source_warnings,omitempty"`
	// SnapshotKept says, on a sweep that does not replace the state
	// dir's snapshot (partial after a complete one), which sweep gates
	// keep answering from and until when (trial T12).
	SnapshotKept string `json:"snapshot_kept,omitempty"`
	// SnapshotTakenAt is when the sweep the state dir's snapshot holds
	// (after this sweep) was taken: the textfile's
	// ibdoctor_snapshot_timestamp_seconds. Zero: not a sweep, or --no-save.
	SnapshotTakenAt time.Time `json:"-"`
}

// RoutesComputedNote is how every output says the routes are computed.
const RoutesComputedNote = "computed by ibdoctor (min-hop), not read: the file has no forwarding tables; routing findings are what-if (--lfts FILE gives the fabric's)"

// FabricSummary counts what was seen.
type FabricSummary struct {
	Nodes    int `json:"nodes"`
	Switches int `json:"switches"`
	CAs      int `json:"cas"`
	Routers  int `json:"routers,omitempty"`
	Links    int `json:"links"`
	// PortsRead is how many ports' counters were read.
	PortsRead int `json:"ports_counters_read"`
	// SwitchesRouted is how many switches' LFTs were read from the
	// fabric or a file (--lfts); SwitchesComputed how many are ibdoctor's
	// own min-hop tables (routes_computed), never counted as read.
	SwitchesRouted   int `json:"switches_lft_read"`
	SwitchesComputed int `json:"switches_lft_computed"`
}

// Unreached is something the sweep could not read.
type Unreached struct {
	What   string `json:"what"`
	Where  string `json:"where"`
	Reason string `json:"reason"`
	// Failure says how a MAD read failed, where the reader kept its
	// error (ReadFailed): NoAnswer, or Refused with the MAD status the
	// node answered in Status. Empty otherwise (not a read, or another
	// failure: a response that does not decode, nothing to address).
	Failure string `json:"failure,omitempty"`
	Status  string `json:"status,omitempty"`
}

// MADStats summarises the traffic of the sweep.
type MADStats struct {
	Sent     uint64  `json:"sent"`
	Answered uint64  `json:"answered"`
	Retried  uint64  `json:"retried"`
	TimedOut uint64  `json:"timed_out"`
	Errors   uint64  `json:"errors"`
	P50ms    float64 `json:"latency_p50_ms"`
	P99ms    float64 `json:"latency_p99_ms"`
}

// ScopeSummary says what a gate looked at.
type ScopeSummary struct {
	// Hosts are the job's HCAs (nodes) found, and those only the
	// accepted baseline has (link down at the sweep), by description; JobHosts
	// how many of the hosts the job names were found.
	Hosts     []string `json:"hosts"`
	JobHosts  int      `json:"job_hosts"`
	Unmatched []string `json:"unmatched_hosts,omitempty"`
	// NotWalked: the sweep the gate judged from could not walk the whole
	// fabric (nodes did not answer NodeInfo), so the unmatched hosts
	// could not be looked for past them: not "not in the fabric".
	NotWalked  bool   `json:"unmatched_not_looked_for,omitempty"`
	Ports      int    `json:"ports"`
	Switches   int    `json:"switches"`
	Snapshot   string `json:"snapshot,omitempty"`
	SnapshotAt string `json:"snapshot_taken_at,omitempty"`
	// SnapshotComplete: the sweep the snapshot holds read everything it
	// tried. When false, the gate's own reads may be complete while the
	// fabric beyond the job's part was not all read.
	SnapshotComplete bool `json:"snapshot_complete"`
	// OwnSweep: there was no usable snapshot and the gate swept the
	// fabric itself a moment before (Snapshot names that sweep).
	OwnSweep bool `json:"own_sweep,omitempty"`
	// FabricPart: the document's fabric counts are of the part of the
	// snapshot loaded for the job, not of the whole fabric.
	FabricPart bool `json:"fabric_is_part,omitempty"`
	LiveReads  int  `json:"ports_reread_live"`
	// LFTBlocks is how many forwarding-table blocks holding the job's
	// LIDs were re-read live to follow the routes as they are now.
	LFTBlocks int `json:"lft_blocks_reread_live"`
}

// JSON encodes the document as check --json, gate --json and sweep write
// it: indented by two spaces, ending in a newline, and without HTML
// escaping ("leaf02/6 <-> spine02/2" stays readable; the report is never
// embedded in a web page).
func (d *Document) JSON() ([]byte, error) {
	var b bytes.Buffer
	if err := d.WriteJSON(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// WriteJSON writes what JSON returns to w, byte for byte, a finding,
// unreached or undecided entry at a time (jsonstream): the report's bytes
// are never whole in memory beside the report. Fields follow Document's
// order and tags; a change to Document changes this too
// (TestDocumentStreamedIsWhole).
func (d *Document) WriteJSON(w io.Writer) error {
	jw := jsonstream.New(w, jsonstream.Options{Indent: true})
	jw.Field("schema", d.Schema)
	jw.Field("ibdoctor_version", d.Version)
	jw.Field("generated_at", d.GeneratedAt)
	jw.Field("command", d.Command)
	jw.Field("source", d.Source)
	jw.Field("status", d.Status)
	jw.Field("fail_on", d.FailOn)
	jw.Field("complete", d.Complete)
	jw.Field("fabric", d.Fabric)
	jw.Field("findings_by_severity", d.Counts)
	// A nil slice is null in the whole encoding, an empty one [].
	if d.Findings == nil {
		jw.Field("findings", nil)
	} else {
		jw.Array("findings", len(d.Findings), func(i int) any { return d.Findings[i] })
	}
	jw.Field("checks_run", d.ChecksRun)
	jw.Field("checks_skipped", d.Skipped)
	if d.Unreached == nil {
		jw.Field("unreached", nil)
	} else {
		jw.Array("unreached", len(d.Unreached), func(i int) any { return d.Unreached[i] })
	}
	if len(d.Undecided) > 0 {
		jw.Array("undecided", len(d.Undecided), func(i int) any { return d.Undecided[i] })
	}
	if len(d.Timings) > 0 {
		jw.Field("timings", d.Timings)
	}
	if d.MADs != nil {
		jw.Field("mads", d.MADs)
	}
	if d.Scope != nil {
		jw.Field("scope", d.Scope)
	}
	if d.Interval != "" {
		jw.Field("counter_interval", d.Interval)
	}
	if d.RoutesComputed {
		jw.Field("routes_computed", d.RoutesComputed)
	}
	if d.CountersNotRead != "" {
		jw.Field("counters_not_read", d.CountersNotRead)
	}
	if d.RatesNotRead != "" {
		jw.Field("rates_not_read", d.RatesNotRead)
	}
	if d.CountersBasis != "" {
		jw.Field("counters_basis", d.CountersBasis)
	}
	if d.CountersCleared != "" {
		jw.Field("counters_cleared", d.CountersCleared)
	}
	if len(d.SourceWarnings) > 0 {
		jw.Field("source_warnings", d.SourceWarnings)
	}
	if d.SnapshotKept != "" {
		jw.Field("snapshot_kept", d.SnapshotKept)
	}
	if err := jw.Close(); err != nil {
		return fmt.Errorf("encoding the report: %w", err)
	}
	return nil
}

// CountBySeverity fills Counts from Findings.
func (d *Document) CountBySeverity() {
	d.Counts = map[string]int{"critical": 0, "error": 0, "warning": 0, "info": 0}
	for _, f := range d.Findings {
		d.Counts[f.Severity.String()]++
	}
}

// summaryLabel is the width of the summary's labels ("Findings:  ").
const summaryLabel = 11

// summaryLine writes "Label:     text", wrapped to the style's width with
// the continuation lines under the text. Clauses (joined by "; " when the
// line fits) each start a line of their own when it does not.
func summaryLine(w io.Writer, st Style, label string, clauses ...string) {
	first := label + ":" + strings.Repeat(" ", max(1, summaryLabel-len(label)-1))
	if label == "" {
		first = strings.Repeat(" ", summaryLabel)
	}
	text := strings.Join(clauses, "; ")
	if st.Width <= 0 || VisibleWidth(first+text) <= st.Width {
		io.WriteString(w, first+text+"\n")
		return
	}
	for i, c := range clauses {
		if i > 0 {
			first = strings.Repeat(" ", summaryLabel)
		}
		io.WriteString(w, WrapString(first, c, st.Width))
	}
}

// Tones of a summary clause: how a renderer marks it (the terminal's
// colour, the page's class).
const (
	TonePlain = ""
	ToneWarn  = "warn"
	ToneBad   = "bad"
	ToneGood  = "good"
)

// Clause is one part of a summary line: Text marked with Tone, then Tail
// unmarked.
type Clause struct {
	Text, Tone, Tail string
}

// SummaryRow is one line of the summary: its label ("" continues the
// line above) and clauses. Counts marks the Findings line, whose counts
// each renderer paints by severity; NotRun the line of the checks that
// did not run, which the page opens into their reasons.
type SummaryRow struct {
	Label   string
	Clauses []Clause
	Counts  bool
	NotRun  bool
}

// SummaryRows is the summary that precedes the findings table, line by
// line: fabric, timing, scope, what the figures are based on (routes,
// counters, snapshot, rates), counts by severity, what could not be read
// or decided, the checks that did not run, and the status. The terminal
// (Summary) and the page (htmlpage) both render these rows, so a line
// cannot be in one and not the other (trial T1, T8).
func SummaryRows(d *Document) []SummaryRow {
	var rows []SummaryRow
	plain := func(texts ...string) []Clause {
		cs := make([]Clause, len(texts))
		for i, t := range texts {
			cs[i] = Clause{Text: t}
		}
		return cs
	}
	add := func(label string, cs ...Clause) { rows = append(rows, SummaryRow{Label: label, Clauses: cs}) }
	f := d.Fabric
	fab := []string{fmt.Sprintf("%s (%s, %s), %s", count(f.Nodes, "node", "nodes"), count(f.Switches, "switch", "switches"), count(f.CAs, "CA", "CAs"), count(f.Links, "link", "links"))}
	if d.Scope != nil && d.Scope.FabricPart {
		// Beside the Scope line's counts these read as the fabric's.
		fab[0] += " loaded for the job (its hosts, the switches on their routes and their neighbours)"
	}
	if d.MADs != nil {
		fab = append(fab, fmt.Sprintf("%d MADs, %d retried, %d timed out", d.MADs.Sent, d.MADs.Retried, d.MADs.TimedOut))
	}
	add("Fabric", plain(fab...)...)
	if len(d.Timings) > 0 {
		var parts []string
		for _, k := range []string{"discovery", "counters", "routes", "checks", "total"} {
			if v, ok := d.Timings[k]; ok {
				// The JSON's duration string stays as recorded (a Go
				// duration); the line prints it as words does.
				if t, err := time.ParseDuration(v); err == nil {
					v = words.Duration(t)
				}
				parts = append(parts, k+" "+v)
			}
		}
		add("Timing", Clause{Text: strings.Join(parts, ", ")})
	}
	if d.Scope != nil {
		sc := fmt.Sprintf("%s (%s), %s, %s on their routes", count(d.Scope.JobHosts, "host", "hosts"), count(len(d.Scope.Hosts), "HCA", "HCAs"),
			count(d.Scope.Switches, "switch", "switches"), count(d.Scope.Ports, "port", "ports"))
		if d.Scope.Snapshot != "" {
			of := "snapshot"
			if d.Scope.OwnSweep {
				of = "own sweep"
			}
			sc += fmt.Sprintf(" (%s %s, %s and %s re-read live)", of, d.Scope.SnapshotAt, count(d.Scope.LiveReads, "port", "ports"),
				count(d.Scope.LFTBlocks, "forwarding-table block", "forwarding-table blocks"))
		}
		add("Scope", Clause{Text: sc})
		if len(d.Scope.Unmatched) > 0 {
			add("", Clause{Text: d.Scope.UnmatchedLabel(d.GeneratedAt), Tone: ToneBad, Tail: " " + d.Scope.UnmatchedList()})
		}
	}
	if d.RoutesComputed {
		add("Routes", Clause{Text: RoutesComputedNote, Tone: ToneWarn})
	}
	if d.CountersNotRead != "" {
		add("Counters", Clause{Text: d.CountersNotRead, Tone: ToneWarn})
	}
	if d.CountersBasis != "" {
		add("Counters", Clause{Text: d.CountersBasis})
	}
	if d.CountersCleared != "" {
		add("Counters", Clause{Text: d.CountersCleared, Tone: ToneWarn})
	}
	if d.SnapshotKept != "" {
		add("Snapshot", Clause{Text: d.SnapshotKept, Tone: ToneWarn})
	}
	if d.RatesNotRead != "" {
		add("Rates", Clause{Text: d.RatesNotRead + "; the checks that judge rates did not run", Tone: ToneWarn})
	}
	for i, w := range d.SourceWarnings {
		label := ""
		if i == 0 {
			label = "Read"
		}
		add(label, Clause{Text: w, Tone: ToneWarn})
	}
	c := d.Counts
	rows = append(rows, SummaryRow{Label: "Findings", Counts: true, Clauses: plain(fmt.Sprintf("%d critical, %d error, %d warning, %d info",
		c["critical"], c["error"], c["warning"], c["info"]))})
	reached := []Clause{{Text: "everything"}}
	if len(d.Unreached) > 0 {
		reached = []Clause{{Text: UnreadSummary(len(d.Unreached)), Tone: ToneWarn}}
	}
	if sc := d.Scope; sc != nil && sc.Snapshot != "" && !sc.SnapshotComplete {
		// A gate reads its job's part live; the rest of the fabric it
		// judges against is the snapshot's, which did not read it all.
		if len(d.Unreached) == 0 {
			reached = []Clause{{Text: "the job's part of the fabric"}}
		}
		reached = append(reached, Clause{Text: fmt.Sprintf("not the whole fabric: the snapshot's sweep of %s was incomplete", sc.SnapshotAt), Tone: ToneWarn})
	}
	add("Reached", reached...)
	if len(d.Undecided) > 0 {
		add("Undecided", Clause{Text: UndecidedSummary(d.Undecided), Tone: ToneWarn})
	}
	if len(d.Skipped) > 0 {
		rows = append(rows, SummaryRow{Label: "Not run", NotRun: true, Clauses: plain(NotRunShort(d.Skipped))})
	}
	tone := ToneWarn
	switch d.Status {
	case "healthy":
		tone = ToneGood
	case "unhealthy":
		tone = ToneBad
	}
	add("Status", Clause{Text: d.Status, Tone: tone, Tail: fmt.Sprintf(" (fail on %s)", d.FailOn)})
	return rows
}

// UndecidedLine is one entry of the "Could not decide" list.
func UndecidedLine(u checks.Undecided) string {
	return fmt.Sprintf("%s on %s: %s", u.Check, u, u.Reason)
}

// Summary writes the short summary that precedes the findings table
// (SummaryRows), under the report's first line.
func Summary(w io.Writer, st Style, d *Document) {
	head := fmt.Sprintf("%s  %s  %s", st.Bold("ibdoctor "+d.Command), d.Source, d.GeneratedAt.UTC().Format("2006-01-02 15:04:05 UTC"))
	io.WriteString(w, WrapString("", head, st.Width))
	for _, r := range SummaryRows(d) {
		if r.Counts {
			c := d.Counts
			summaryLine(w, st, r.Label, fmt.Sprintf("%s critical, %s error, %s warning, %s info",
				paintCount(st.Red, c["critical"]), paintCount(st.Red, c["error"]), paintCount(st.Yellow, c["warning"]), fmt.Sprint(c["info"])))
			continue
		}
		cs := make([]string, len(r.Clauses))
		for i, c := range r.Clauses {
			t := c.Text
			switch c.Tone {
			case ToneWarn:
				t = st.Yellow(t)
			case ToneBad:
				t = st.Red(t)
			case ToneGood:
				t = st.Green(t)
			}
			cs[i] = t + c.Tail
		}
		summaryLine(w, st, r.Label, cs...)
	}
}

// flagInReason finds the flag a skipped check's reason says to add
// ("needs two counter samples (add --interval)").
var flagInReason = regexp.MustCompile(`\badd (--[a-z][a-z0-9-]*)`)

// NotRunShort says in a few words which checks did not run and what
// would run them: "3 checks (need --interval, --expect-topology; ...)".
// Checks that no flag would run (their data could not be read, or the
// source has none) are only counted: "2 lack their data".
func NotRunShort(skipped []checks.Skipped) string {
	var needs []string
	seen := map[string]bool{}
	lack := 0
	for _, k := range skipped {
		m := flagInReason.FindStringSubmatch(k.Reason)
		if m == nil {
			lack++
			continue
		}
		if !seen[m[1]] {
			seen[m[1]] = true
			needs = append(needs, m[1])
		}
	}
	var parts []string
	if len(needs) > 0 {
		parts = append(parts, "need "+strings.Join(needs, ", "))
	}
	if lack > 0 {
		parts = append(parts, fmt.Sprintf("%d lack their data", lack))
	}
	parts = append(parts, "--verbose says why")
	return fmt.Sprintf("%s (%s)", Plural(len(skipped), "check"), strings.Join(parts, "; "))
}

// NotRun writes every check that did not run with its reason (--verbose).
func NotRun(w io.Writer, st Style, skipped []checks.Skipped) {
	if len(skipped) == 0 {
		return
	}
	fmt.Fprintf(w, "\nChecks not run (%d):\n", len(skipped))
	width := 0
	for _, k := range skipped {
		width = max(width, len(k.Check))
	}
	for _, k := range skipped {
		first := "  " + k.Check + strings.Repeat(" ", width-len(k.Check)+2)
		io.WriteString(w, WrapString(first, k.Reason, st.Width))
	}
}

func paintCount(p func(string) string, n int) string {
	if n == 0 {
		return "0"
	}
	return p(fmt.Sprint(n))
}

// SeverityLabel colours a severity name.
func SeverityLabel(st Style, s checks.Severity) string {
	switch s {
	case checks.Critical:
		return st.Bold(st.Red(s.String()))
	case checks.Error:
		return st.Red(s.String())
	case checks.Warning:
		return st.Yellow(s.String())
	}
	return st.Cyan(s.String())
}

// keepPlace cuts cell, a finding's title, before its place (f.Place's
// port, else node) when cutting it at its end at width would lose it: the
// port is what the operator acts on, and a finding past --detail has no
// other line that names it (trial E5: "PortRcvSwitchRelayErrors =
// 18393494963…" hid leaf03/60).
func keepPlace(cell string, f checks.Finding, width int) string {
	pl := f.Place()
	place := pl.Node
	if pl.Port > 0 {
		place = fmt.Sprintf("%s/%d", pl.Node, pl.Port)
	}
	i := strings.Index(cell, place)
	if place == "" || i <= 0 || strings.Contains(Truncate(cell, width), place) {
		return cell
	}
	// What comes before the place, cut to leave it whole and the cut
	// after it ("…") its column.
	room := width - 1 - VisibleWidth(place)
	if rest := cell[i+len(place):]; rest == "" {
		room = width - VisibleWidth(place)
	}
	// The short word that joins the place to what precedes it ("on",
	// "at") stays with the place.
	pre, join := strings.TrimRight(cell[:i], " "), " "
	if j := strings.LastIndexByte(pre, ' '); j > 0 && len(pre)-j-1 <= 4 {
		pre, join = pre[:j], cell[j:i]
	}
	room -= VisibleWidth(join)
	if room < 8 {
		return cell
	}
	return Truncate(pre, room) + join + cell[i:]
}

// findingColumns are the findings table's columns: on a narrow terminal
// the finding's text is cut with "…" and IMPACT is dropped whole (the
// details below repeat it), never cut: "6.2% of paths…" hides the cost,
// and whether it showed would depend on how long the check IDs are. The
// rank, severity and check ID always stay.
var findingColumns = []Column{
	{Header: "#"}, {Header: "SEVERITY"}, {Header: "CHECK"},
	{Header: "FINDING", Min: 24}, {Header: "IMPACT", Drop: 1},
}

// Findings writes the ranked findings table and, for the first detail
// findings, their evidence, impact and next step, wrapped to the style's
// width with a hanging indent.
func Findings(w io.Writer, st Style, fs []checks.Finding, detail int) error {
	if len(fs) == 0 {
		fmt.Fprintln(w, st.Green("No findings."))
		return nil
	}
	rows := make([][]string, 0, len(fs))
	for i, f := range fs {
		rows = append(rows, []string{fmt.Sprint(i + 1), SeverityLabel(st, f.Severity), f.Check, f.Title, impactShort(f.Impact)})
	}
	// The node names more than one finding names are what rows share:
	// cut in their middle first, longest first, the rest of a title kept
	// (trial B13: two link.down rows cut to the same leaf name).
	shared := map[string]int{}
	for _, f := range fs {
		seen := map[string]bool{}
		for _, e := range f.Entities {
			if !seen[e.Node] {
				seen[e.Node] = true
				shared[e.Node]++
			}
		}
	}
	// Only a row whose cut text another row's reads the same is fitted:
	// the rest are cut at their end as before (a name cut in its middle
	// loses its own distinctive part, "IBLEAF-01-02").
	var cutAt int
	var cutSame map[string]int
	var fitShared func(row int, cell string, width int) string
	cols := slices.Clone(findingColumns)
	cols[3].Fit = func(row int, cell string, width int) string {
		if row < 0 {
			return cell
		}
		return keepPlace(fitShared(row, cell, width), fs[row], width)
	}
	fitShared = func(row int, cell string, width int) string {
		if cutSame == nil || cutAt != width {
			cutAt, cutSame = width, map[string]int{}
			for _, f := range fs {
				cutSame[Truncate(f.Title, width)]++
			}
		}
		if cutSame[Truncate(cell, width)] < 2 {
			return cell
		}
		var names []string
		for _, e := range fs[row].Entities {
			if shared[e.Node] > 1 && !slices.Contains(names, e.Node) {
				names = append(names, e.Node)
			}
		}
		slices.SortStableFunc(names, func(a, b string) int { return VisibleWidth(b) - VisibleWidth(a) })
		return FitNames(cell, names, width)
	}
	fmt.Fprintln(w)
	if err := WriteTableRule(w, st.Width, st.RuleWidth, cols, rows); err != nil {
		return err
	}
	// Numbers are right-aligned to the widest shown (" 9." over "10.")
	// and the labels start after it, under the title.
	numWidth := len(fmt.Sprint(min(detail, len(fs)))) + 1
	label := strings.Repeat(" ", numWidth+1)
	for i, f := range fs {
		if i >= detail {
			if len(fs) > detail {
				fmt.Fprintln(w)
				others := "the other " + Plural(len(fs)-detail, "finding")
				if len(fs)-detail == 1 {
					others = "the other finding"
				}
				io.WriteString(w, WrapString("", fmt.Sprintf("(evidence and next steps of %s: --detail N, or --json)", others), st.Width))
			}
			break
		}
		fmt.Fprintln(w)
		num := fmt.Sprintf("%*s", numWidth, fmt.Sprintf("%d.", i+1))
		first := st.Bold(num) + " " + SeverityLabel(st, f.Severity) + " "
		io.WriteString(w, WrapString(first, st.Bold(f.Title), st.Width))
		ev := "evidence: "
		for _, e := range f.Evidence {
			io.WriteString(w, WrapString(label+ev, e.String(), st.Width))
			ev = "          " // one label, the rest under it
		}
		if f.Impact.Summary != "" {
			io.WriteString(w, WrapString(label+"impact:   ", f.Impact.Summary, st.Width))
		}
		io.WriteString(w, WrapString(label+"do:       ", f.Action, st.Width))
	}
	return nil
}

func impactShort(im checks.Impact) string {
	var parts []string
	if im.PathShare > 0 {
		at := ""
		if im.PathShareLowerBound {
			at = "at least "
		}
		parts = append(parts, at+checks.SharePercent(im.PathShare)+" of paths")
	}
	if im.Slowdown > 1.0001 {
		parts = append(parts, fmt.Sprintf("all-reduce %.1fx slower", im.Slowdown))
	}
	if im.LostGbps > 0 {
		parts = append(parts, fmt.Sprintf("-%.0f Gb/s", im.LostGbps))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// UnreadSummary is the Reached line when some reads went unanswered.
func UnreadSummary(n int) string {
	if n == 1 {
		return "1 thing could not be read (listed below)"
	}
	return fmt.Sprintf("%d things could not be read (listed below)", n)
}

// UndecidedSummary is the Undecided line: how many subjects checks could
// not decide, and by which checks.
func UndecidedSummary(us []checks.Undecided) string {
	var ids []string
	for _, u := range us {
		if !slices.Contains(ids, u.Check) {
			ids = append(ids, u.Check)
		}
	}
	return fmt.Sprintf("%s could not be decided for what was not read (%s; listed below)", count(len(us), "subject", "subjects"), strings.Join(ids, ", "))
}

// count writes n with the noun in singular or plural.
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// UnmatchedLabel heads the list of the job's hosts the gate did not find,
// the one wording of it: not in the fabric, or (NotWalked) not looked for
// because the walk stopped at nodes that did not answer.
//
// A gate that answered from a snapshot looked only in it: a host racked
// or renamed (rdma-ndd) since that sweep is not in it, though in the
// fabric (trial B9), so the label says where it looked, and when.
func (s *ScopeSummary) UnmatchedLabel(now time.Time) string {
	if s.NotWalked {
		return "hosts that could not be looked for (the fabric could not be walked past nodes that did not answer):"
	}
	if s.Snapshot != "" && !s.OwnSweep {
		if at, err := time.Parse(time.RFC3339, s.SnapshotAt); err == nil {
			return "hosts " + NotInSnapshot(at, now) + ":"
		}
	}
	return "hosts not found in the fabric:"
}

// UnmatchedList names the hosts not found for a line: as given when
// few, else as a hostlist with their count ("gpu[033-9999] (9967
// hosts)"), and past that the first few (trial B13: a mistyped range
// printed a 989 KB line). --json keeps every name.
func (s *ScopeSummary) UnmatchedList() string {
	const few, longest = 20, 200
	us := s.Unmatched
	if len(us) <= few {
		return strings.Join(us, ", ")
	}
	if c := hostlist.Compress(us); len(c) <= longest {
		return fmt.Sprintf("%s (%d hosts)", c, len(us))
	}
	return words.First(us, few)
}

// NotInSnapshot says a host was not in the snapshot taken at, the one
// wording of it (the gate's unread entry, its Scope line and stderr).
func NotInSnapshot(at, now time.Time) string {
	at = at.Truncate(time.Second) // as the Scope line's time has it
	return fmt.Sprintf("not in the snapshot of %s (%s old)", at.UTC().Format(time.RFC3339), words.Span(now.Sub(at)))
}

// HostNotInSnapshotHint is what to do about a host not in the snapshot:
// the gate cannot tell a host added or renamed since the sweep from a
// wrong name without walking the fabric, so both are said.
const HostNotInSnapshotHint = "a host added or renamed since that sweep is found by the next one ('ibdoctor sweep'); else check the node descriptions"
