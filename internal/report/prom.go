package report

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ibdoctor/ibdoctor/checks"
)

// PromOptions choose what the textfile carries besides the counts.
type PromOptions struct {
	// MinSeverity is the lowest severity that gets a series of its own
	// (ibdoctor_finding_impact_score).
	MinSeverity checks.Severity
	// MaxSeries caps those series (worst findings first); 0 means
	// DefaultMaxSeries. What the cap left out is counted in
	// ibdoctor_finding_series_dropped.
	MaxSeries int
	// Labels are added to every series (--prom-label fabric=compute), so
	// the textfiles of sweeps of two fabrics on one host name different
	// series in one collector directory.
	Labels []Label
}

// Label is a constant label of every series of a textfile.
type Label struct{ Name, Value string }

// ownLabels are the label names ibdoctor's series use themselves.
var ownLabels = map[string]bool{"check": true, "severity": true, "node": true, "port": true, "peer": true, "type": true}

// ParseLabel reads a --prom-label NAME=VALUE: a Prometheus label name
// (letters, digits and _, not starting with a digit or __) other than the
// ones ibdoctor's series use, and a value that is not empty.
func ParseLabel(s string) (Label, error) {
	name, value, ok := strings.Cut(s, "=")
	fix := "give NAME=VALUE, NAME of letters, digits and _ not starting with a digit (e.g. --prom-label fabric=compute)"
	if !ok || value == "" || !utf8.ValidString(value) {
		return Label{}, fmt.Errorf("%q: %s", s, fix)
	}
	for i, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return Label{}, fmt.Errorf("%q: %s", s, fix)
		}
	}
	if name == "" || strings.HasPrefix(name, "__") {
		return Label{}, fmt.Errorf("%q: %s; names starting with __ are Prometheus' own", s, fix)
	}
	if ownLabels[name] {
		return Label{}, fmt.Errorf("%q: ibdoctor's series use the label %s themselves: give another name (e.g. fabric)", s, name)
	}
	return Label{Name: name, Value: value}, nil
}

// withLabels adds ls to every sample line of text, first among its
// labels.
func withLabels(text []byte, ls []Label) []byte {
	if len(ls) == 0 {
		return text
	}
	var add strings.Builder
	for i, l := range ls {
		if i > 0 {
			add.WriteByte(',')
		}
		add.WriteString(l.Name + "=" + labelValue(l.Value))
	}
	var b bytes.Buffer
	for line := range strings.Lines(string(text)) {
		if strings.HasPrefix(line, "#") {
			b.WriteString(line)
			continue
		}
		i := strings.IndexAny(line, "{ ")
		switch {
		case i < 0:
			b.WriteString(line)
		case line[i] == '{':
			b.WriteString(line[:i+1] + add.String() + "," + line[i+1:])
		default:
			b.WriteString(line[:i] + "{" + add.String() + "}" + line[i:])
		}
	}
	return b.Bytes()
}

// DefaultMaxSeries keeps a fabric with thousands of findings from
// flooding Prometheus: the worst 500 name their links, the rest are
// counted.
const DefaultMaxSeries = 500

// Prometheus writes a successful sweep's document in the Prometheus text
// exposition format, for node_exporter's textfile collector: the counts,
// one series per finding at or above o.MinSeverity so an alert names the
// link, and the sweep's own health.
func Prometheus(w io.Writer, d *Document, o PromOptions) error {
	var b bytes.Buffer
	writeCounts(&b, d)
	writeFindingSeries(&b, d, o)
	metric(&b, "ibdoctor_sweep_complete", helpComplete)
	fmt.Fprintf(&b, "ibdoctor_sweep_complete %d\n", boolInt(d.Complete))
	metric(&b, "ibdoctor_source_warnings", "Warnings the last successful sweep's --sim file reader gave (values replaced, a GUID read as two nodes, ...): the report's source_warnings; 0 live.")
	fmt.Fprintf(&b, "ibdoctor_source_warnings %d\n", len(d.SourceWarnings))
	if !d.SnapshotTakenAt.IsZero() {
		// A partial sweep keeps the complete snapshot before it: gates
		// answer from that one until it is over their --max-age, then
		// sweep the fabric themselves; its age is what to alert on.
		metric(&b, "ibdoctor_snapshot_timestamp_seconds", helpSnapshotAt)
		fmt.Fprintf(&b, "ibdoctor_snapshot_timestamp_seconds %d\n", d.SnapshotTakenAt.Unix())
	}
	writeLooked(&b, d)
	writeStatus(&b, true, d.GeneratedAt, d.GeneratedAt)
	_, err := w.Write(withLabels(b.Bytes(), o.Labels))
	return err
}

// writeLooked says how long the sweep took and what it did not look at
// (trial F9): without it a sweep that read no counters (--no-counters, a
// file without any) shows as 0 counter findings, healthy.
func writeLooked(b *bytes.Buffer, d *Document) {
	if total, err := time.ParseDuration(d.Timings["total"]); err == nil {
		metric(b, "ibdoctor_sweep_duration_seconds", "How long the last successful sweep took (its report's timings.total).")
		fmt.Fprintf(b, "ibdoctor_sweep_duration_seconds %s\n", strconv.FormatFloat(total.Seconds(), 'g', -1, 64))
	}
	read := d.CountersNotRead == ""
	var skipped []string
	for _, s := range d.Skipped {
		skipped = append(skipped, s.Check)
		if s.NoCounters {
			read = false
		}
	}
	metric(b, "ibdoctor_counters_read", "1 if the last successful sweep read the ports' counters, 0 if not (--no-counters, a file without them): its counter findings are then none looked for, not none found.")
	fmt.Fprintf(b, "ibdoctor_counters_read %d\n", boolInt(read))
	if len(skipped) > 0 {
		slices.Sort(skipped)
		metric(b, "ibdoctor_check_skipped", "Checks the last successful sweep did not run, one series each (the report's checks_skipped says why): what they judge was not looked at.")
		for _, c := range slices.Compact(skipped) {
			fmt.Fprintf(b, "ibdoctor_check_skipped{check=%s} 1\n", labelValue(c))
		}
	}
}

// FailedState is what a failed sweep's state dir says of the sweeps
// before it (zero: not known).
type FailedState struct {
	// LastSuccess is when the state dir's last finished sweep was taken.
	LastSuccess time.Time
	// SnapshotTakenAt is when the sweep gates answer from was taken.
	SnapshotTakenAt time.Time
}

const helpSnapshotAt = "When the sweep whose snapshot gates answer from was taken (Unix time): older than the last sweep when that one was partial and did not replace it."

// helpComplete is ibdoctor_sweep_complete's HELP: like the counts, it
// describes the last sweep that published its report, kept when a later
// one fails, so the kept series never mix two sweeps (trial T15: a failed
// sweep wrote complete 0 beside the kept sweep's unreached 0).
const helpComplete = "1 if the last successful sweep read everything it needed (kept with its counts when a later sweep fails: ibdoctor_sweep_success says that)."

// PrometheusFailed writes the textfile of a sweep that failed or was
// interrupted at `at`: ibdoctor_sweep_success 0, so an alert fires, with
// the last success's time kept from prev (the textfile as it was; 0 when
// no sweep has succeeded). The counts, findings and completeness of the
// last good sweep are kept too, as its report is: they are still the
// newest knowledge, and dropping them would resolve their alerts; without
// one there is no ibdoctor_sweep_complete.
// The series it writes anew carry labels (the kept ones carry theirs).
// What prev lacks of the state's times (a textfile lost with a tmpfs, a
// --prom path changed) is taken from state: the state dir's last sweep
// is a success the textfile did not see.
func PrometheusFailed(w io.Writer, prev []byte, at time.Time, labels []Label, state FailedState) error {
	var b bytes.Buffer
	var lastOK int64
	snapshotAt := false // prev has ibdoctor_snapshot_timestamp_seconds
	kept := ""          // the kept sweep's ibdoctor_sweep_complete value
	skip := map[string]bool{
		"ibdoctor_sweep_success": true, "ibdoctor_sweep_last_success_timestamp_seconds": true,
		"ibdoctor_sweep_timestamp_seconds": true, "ibdoctor_sweep_complete": true,
	}
	sc := bufio.NewScanner(bytes.NewReader(prev))
	for sc.Scan() {
		line := sc.Text()
		name := line
		if rest, ok := strings.CutPrefix(line, "# HELP "); ok {
			name = rest
		} else if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name = rest
		}
		name, _, _ = strings.Cut(name, " ")
		name, _, _ = strings.Cut(name, "{")
		if !strings.HasPrefix(name, "ibdoctor_") {
			continue // not ours, or a comment: leave it out
		}
		// The value is after the last space: a label value may hold
		// spaces.
		value := ""
		if i := strings.LastIndexByte(line, ' '); i > 0 && !strings.HasPrefix(line, "#") {
			value = line[i+1:]
		}
		if name == "ibdoctor_sweep_last_success_timestamp_seconds" && value != "" {
			if v, err := strconv.ParseInt(value, 10, 64); err == nil {
				lastOK = v
			}
		}
		if name == "ibdoctor_snapshot_timestamp_seconds" && value != "" {
			snapshotAt = true
		}
		if name == "ibdoctor_sweep_complete" && kept == "" && (value == "0" || value == "1") {
			kept = value
		}
		if skip[name] {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	var st bytes.Buffer
	if lastOK == 0 && !state.LastSuccess.IsZero() {
		lastOK = state.LastSuccess.Unix()
	}
	if !snapshotAt && !state.SnapshotTakenAt.IsZero() {
		metric(&st, "ibdoctor_snapshot_timestamp_seconds", helpSnapshotAt)
		fmt.Fprintf(&st, "ibdoctor_snapshot_timestamp_seconds %d\n", state.SnapshotTakenAt.Unix())
	}
	if kept != "" {
		metric(&st, "ibdoctor_sweep_complete", helpComplete)
		fmt.Fprintf(&st, "ibdoctor_sweep_complete %s\n", kept)
	}
	metric(&st, "ibdoctor_sweep_success", "1 if the last sweep finished and published its report, 0 if it failed or was interrupted.")
	st.WriteString("ibdoctor_sweep_success 0\n")
	metric(&st, "ibdoctor_sweep_last_success_timestamp_seconds", "When the last successful sweep ran (Unix time; 0: never).")
	fmt.Fprintf(&st, "ibdoctor_sweep_last_success_timestamp_seconds %d\n", lastOK)
	metric(&st, "ibdoctor_sweep_timestamp_seconds", "When the last sweep ran, successful or not (Unix time).")
	fmt.Fprintf(&st, "ibdoctor_sweep_timestamp_seconds %d\n", at.Unix())
	b.Write(withLabels(st.Bytes(), labels))
	_, err := w.Write(b.Bytes())
	return err
}

func metric(b *bytes.Buffer, name, help string) {
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name)
}

func writeStatus(b *bytes.Buffer, ok bool, lastOK, at time.Time) {
	metric(b, "ibdoctor_sweep_success", "1 if the last sweep finished and published its report, 0 if it failed or was interrupted.")
	fmt.Fprintf(b, "ibdoctor_sweep_success %d\n", boolInt(ok))
	metric(b, "ibdoctor_sweep_last_success_timestamp_seconds", "When the last successful sweep ran (Unix time; 0: never).")
	fmt.Fprintf(b, "ibdoctor_sweep_last_success_timestamp_seconds %d\n", lastOK.Unix())
	metric(b, "ibdoctor_sweep_timestamp_seconds", "When the last sweep ran, successful or not (Unix time).")
	fmt.Fprintf(b, "ibdoctor_sweep_timestamp_seconds %d\n", at.Unix())
}

func writeCounts(b *bytes.Buffer, d *Document) {
	metric(b, "ibdoctor_findings", "Findings of the last successful sweep by severity.")
	for _, s := range []string{"critical", "error", "warning", "info"} {
		fmt.Fprintf(b, "ibdoctor_findings{severity=%s} %d\n", labelValue(s), d.Counts[s])
	}
	metric(b, "ibdoctor_check_findings", "Findings of the last successful sweep by check and severity: every severity of a check with findings, 0 where it has none.")
	type key struct{ check, sev string }
	byCheck := map[key]int{}
	var found []string
	for _, f := range d.Findings {
		byCheck[key{f.Check, f.Severity.String()}]++
		found = append(found, f.Check)
	}
	slices.Sort(found)
	// A check's four series stay while it has findings: one whose
	// finding went from warning to error keeps its series (trial F7).
	for _, c := range slices.Compact(found) {
		for _, sev := range []string{"critical", "error", "info", "warning"} {
			fmt.Fprintf(b, "ibdoctor_check_findings{check=%s,severity=%s} %d\n", labelValue(c), labelValue(sev), byCheck[key{c, sev}])
		}
	}
	metric(b, "ibdoctor_fabric_nodes", "Nodes the last successful sweep discovered, by type.")
	fmt.Fprintf(b, "ibdoctor_fabric_nodes{type=\"switch\"} %d\nibdoctor_fabric_nodes{type=\"ca\"} %d\n", d.Fabric.Switches, d.Fabric.CAs)
	metric(b, "ibdoctor_fabric_links", "Links the last successful sweep discovered.")
	fmt.Fprintf(b, "ibdoctor_fabric_links %d\n", d.Fabric.Links)
	metric(b, "ibdoctor_unreached", "Things the last successful sweep could not read.")
	fmt.Fprintf(b, "ibdoctor_unreached %d\n", len(d.Unreached))
}

// findingLabels are one finding's series labels: what it is and where,
// not how bad (trial F7: with severity among them, a port's series was
// another series when its finding went from warning to error, and alerts
// on it resolved and fired again). Severity is a value
// (ibdoctor_finding_severity).
type findingLabels struct{ check, node, port, peer string }

// labelsOf labels a finding with its place (checks.Finding.Place), the
// one rule the JSON report's reader can apply to its group and entities.
func labelsOf(f checks.Finding) findingLabels {
	pl := f.Place()
	l := findingLabels{check: f.Check, node: pl.Node, peer: pl.Peer}
	if pl.Port > 0 {
		l.port = strconv.Itoa(pl.Port)
	}
	return l
}

func writeFindingSeries(b *bytes.Buffer, d *Document, o PromOptions) {
	max := o.MaxSeries
	if max <= 0 {
		max = DefaultMaxSeries
	}
	// Two findings of one check at one place (two counters over their
	// thresholds on one port) would be one series twice, which
	// Prometheus rejects: the series keeps the worse score, and the other
	// finding is counted as dropped, never silently folded in.
	var order []findingLabels
	score := map[findingLabels]float64{}
	worst := map[findingLabels]checks.Severity{}
	shared := 0
	for _, f := range d.Findings {
		if f.Severity < o.MinSeverity {
			continue
		}
		l := labelsOf(f)
		if s, ok := score[l]; !ok {
			order = append(order, l)
			score[l], worst[l] = f.Impact.Score, f.Severity
		} else {
			shared++
			if f.Impact.Score > s {
				score[l] = f.Impact.Score
			}
			if f.Severity > worst[l] {
				worst[l] = f.Severity
			}
		}
	}
	// Worst first (the document is ranked, but be sure), so the cap drops
	// the least important.
	slices.SortStableFunc(order, func(a, b findingLabels) int {
		if c := worst[b] - worst[a]; c != 0 {
			return int(c)
		}
		switch {
		case score[a] > score[b]:
			return -1
		case score[a] < score[b]:
			return 1
		}
		return 0
	})
	dropped := shared
	if len(order) > max {
		dropped += len(order) - max
		order = order[:max]
	}
	labels := func(l findingLabels) string {
		return fmt.Sprintf("{check=%s,node=%s,port=%s,peer=%s}", labelValue(l.check), labelValue(l.node), labelValue(l.port), labelValue(l.peer))
	}
	metric(b, "ibdoctor_finding_impact_score", "One series per finding of the last successful sweep at or above --prom-min-severity, labelled with what and where it is; the value is its impact score (share of collective bandwidth lost, 0..1).")
	for _, l := range order {
		fmt.Fprintf(b, "ibdoctor_finding_impact_score%s %s\n", labels(l), strconv.FormatFloat(score[l], 'g', -1, 64))
	}
	metric(b, "ibdoctor_finding_severity", "The severity of each ibdoctor_finding_impact_score series' finding, at the same labels: 1 info, 2 warning, 3 error, 4 critical (a value, so a finding that worsens keeps its series).")
	for _, l := range order {
		fmt.Fprintf(b, "ibdoctor_finding_severity%s %d\n", labels(l), severityValue(worst[l]))
	}
	metric(b, "ibdoctor_finding_series_limit", "Most ibdoctor_finding_impact_score series written; the worst findings are kept.")
	fmt.Fprintf(b, "ibdoctor_finding_series_limit %d\n", max)
	metric(b, "ibdoctor_finding_series_dropped", "Findings at or above --prom-min-severity without a series of their own: left out by the limit, or at the same labels as a worse finding (that series keeps the worse score).")
	fmt.Fprintf(b, "ibdoctor_finding_series_dropped %d\n", dropped)
}

// severityValue is a severity as ibdoctor_finding_severity's value:
// 1 info up to 4 critical, whatever checks.Severity's own numbering.
func severityValue(s checks.Severity) int {
	switch s {
	case checks.Critical:
		return 4
	case checks.Error:
		return 3
	case checks.Warning:
		return 2
	}
	return 1
}

// labelValue quotes a label value as the exposition format wants it:
// only backslash, double quote and newline are escaped (Go's %q would
// write \t or \u00e9 escapes that Prometheus reads literally).
func labelValue(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
