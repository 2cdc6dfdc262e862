package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
)

func TestWrapHangingIndent(t *testing.T) {
	got := Wrap("   do:       ", "Reseat or replace the cable between leaf07/41 and spine02/49: a link that trains below its width", 40)
	want := []string{
		"   do:       Reseat or replace the cable",
		"             between leaf07/41 and",
		"             spine02/49: a link that",
		"             trains below its width",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Wrap:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := Wrap("x: ", "a long text that is not cut", 0); len(got) != 1 || got[0] != "x: a long text that is not cut" {
		t.Errorf("width 0 (a pipe) wrapped: %q", got)
	}
	// A word longer than the line stays whole on its own line.
	got = Wrap("", "short averyveryverylongword end", 10)
	if strings.Join(got, "|") != "short|averyveryverylongword|end" {
		t.Errorf("long word: %q", got)
	}
	// A bracketed group is one unit: never "[PortXmitWait ==" / "617147]".
	got = Wrap("", "[SymbolErrorCounter == 4820] [PortXmitWait == 617147] LinkDownedCounter=1", 40)
	if strings.Join(got, "|") != "[SymbolErrorCounter == 4820]|[PortXmitWait == 617147]|LinkDownedCounter=1" {
		t.Errorf("bracketed groups: %q", got)
	}
	// The '[' of a colour sequence opens no group.
	got = Wrap("", "\x1b[1mspine01 spreads 32 destinations\x1b[0m over 8 ports", 20)
	if len(got) < 3 {
		t.Errorf("coloured text was not wrapped: %q", got)
	}
}

func TestTruncate(t *testing.T) {
	for _, c := range []struct {
		in    string
		width int
		want  string
	}{
		{"short", 10, "short"},
		{"Link leaf07/41 <-> spine02/49 trained at 1X", 20, "Link leaf07/41 <->…"},
		{"SymbolErrorCounter=4821", 10, "SymbolErr…"},
		{"anything", 0, "anything"},
	} {
		got := Truncate(c.in, c.width)
		if got != c.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", c.in, c.width, got, c.want)
		}
		if c.width > 0 && VisibleWidth(got) > c.width {
			t.Errorf("Truncate(%q, %d) is %d wide", c.in, c.width, VisibleWidth(got))
		}
	}
	// Colour is reset after a cut inside a coloured cell.
	st := Style{Color: true}
	got := Truncate(st.Red("a coloured finding text"), 10)
	if VisibleWidth(got) > 10 || !strings.HasSuffix(got, "\x1b[0m") {
		t.Errorf("coloured cut %q (width %d)", got, VisibleWidth(got))
	}
}

func sampleDoc() *Document {
	d := &Document{Command: "check", Source: "sim:sample", GeneratedAt: time.Date(2026, 11, 22, 4, 51, 41, 0, time.UTC),
		Status: "unhealthy", FailOn: "error", Fabric: FabricSummary{Nodes: 267, Switches: 12, CAs: 255, Links: 511},
		MADs: &MADStats{Sent: 3432}, Timings: map[string]string{"discovery": "26ms", "total": "44ms"},
		Skipped: []checks.Skipped{
			{Check: "counters.utilization", Reason: "needs two counter samples (add --interval)"},
			{Check: "topology.changed", Reason: "no expected topology given (add --expect-topology FILE, or sweep once to keep a baseline)"},
			{Check: "topology.miswired", Reason: "no expected topology given (add --expect-topology FILE, or sweep once to keep a baseline)"},
		},
		Findings: []checks.Finding{
			{Check: "routing.ecmp-imbalance", Severity: checks.Critical, Title: "spine01 spreads 32 destinations over 8 equal-cost ports unevenly: busiest port 33 carries 8.0x the mean, 7 ports idle",
				Impact:   checks.Impact{PathShare: 0.031, Slowdown: 8, Summary: "the most loaded link decides: collectives whose traffic leaves spine01 run up to 8.0x slower than with balanced routes"},
				Evidence: []checks.Evidence{{Text: "port:destinations/host-paths 33:32/1784 34:0/0 35:0/0 36:0/0 37:0/0 38:0/0 39:0/0 40:0/0 (max/mean 8.00, threshold 1.20)"}},
				Action:   "The subnet manager's routing is unbalanced here. Check for static or edited routes (opensm -R file, a routing_engine change) and re-run a heavy sweep."},
			{Check: "link.polling", Severity: checks.Info, Title: "Port leaf03/28 is stuck in Polling", Action: "Check the cable."},
		},
	}
	d.CountBySeverity()
	return d
}

// TestSummaryAndFindingsFitWidth: at every width from 60 to 200 columns
// no line of the summary, the table or the details is wider, the check ID
// and severity of every finding are shown whole, and without a width
// (a pipe) nothing is cut.
func TestSummaryAndFindingsFitWidth(t *testing.T) {
	d := sampleDoc()
	for width := 60; width <= 200; width++ {
		var b bytes.Buffer
		st := Style{Width: width}
		Summary(&b, st, d)
		if err := Findings(&b, st, d.Findings, 10); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, line := range strings.Split(out, "\n") {
			if VisibleWidth(line) > width {
				t.Fatalf("width %d: line %d wide:\n%s", width, VisibleWidth(line), line)
			}
		}
		for _, f := range d.Findings {
			if !strings.Contains(out, f.Severity.String()+"  "+f.Check) && !strings.Contains(out, f.Severity.String()+"     "+f.Check) {
				if !strings.Contains(out, f.Check) {
					t.Fatalf("width %d: check ID %s missing", width, f.Check)
				}
			}
		}
		if !strings.Contains(out, "Not run:   3 checks (need --interval, --expect-topology") {
			t.Fatalf("width %d: not-run line:\n%s", width, out)
		}
	}
	var b bytes.Buffer
	Summary(&b, Style{}, d)
	Findings(&b, Style{}, d.Findings, 10)
	out := b.String()
	if strings.Contains(out, Ellipsis) {
		t.Errorf("without a width the text is cut:\n%s", out)
	}
	if !strings.Contains(out, d.Findings[0].Title+"  3.10% of paths, all-reduce 8.0x slower") {
		t.Errorf("without a width a finding is not on one line in full:\n%s", out)
	}
	if !strings.Contains(out, "   do:       "+d.Findings[0].Action+"\n") {
		t.Errorf("without a width the details are wrapped:\n%s", out)
	}
}

func TestFindingsTableNarrowDropsImpact(t *testing.T) {
	d := sampleDoc()
	var b bytes.Buffer
	Findings(&b, Style{Width: 80}, d.Findings, 0)
	head := strings.SplitN(strings.TrimLeft(b.String(), "\n"), "\n", 2)[0]
	if strings.Contains(head, "IMPACT") || !strings.Contains(head, "FINDING") || !strings.Contains(head, "SEVERITY") || !strings.Contains(head, "CHECK") {
		t.Errorf("80-column header %q: want #, SEVERITY, CHECK, FINDING", head)
	}
	b.Reset()
	Findings(&b, Style{Width: 140}, d.Findings, 0)
	if !strings.Contains(b.String(), "IMPACT") {
		t.Errorf("140 columns: IMPACT dropped:\n%s", b.String())
	}
}

// TestNotRunShort: the summary's line lists the flags the reasons say to
// add, once each, and only counts the checks no flag would run.
func TestNotRunShort(t *testing.T) {
	got := NotRunShort([]checks.Skipped{
		{Check: "counters.utilization", Reason: "needs two counter samples (add --interval)"},
		{Check: "routing.ecmp-imbalance", Reason: "the forwarding tables were computed by ibdoctor (min-hop), not read (add --lfts FILE with the fabric's tables)"},
		{Check: "sm.stalled", Reason: "needs two SMInfo reads (add --interval)"},
		{Check: "counters.errors", Reason: "counters were not read: x.net carries no counters"},
		{Check: "counters.congestion", Reason: "counters were not read (--no-counters)"},
	})
	if want := "5 checks (need --interval, --lfts; 2 lack their data; --verbose says why)"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := NotRunShort([]checks.Skipped{{Check: "x.y", Reason: "needs two counter samples (add --interval)"}}); got != "1 check (need --interval; --verbose says why)" {
		t.Errorf("one: %q", got)
	}
}

func TestNotRunVerbose(t *testing.T) {
	var b bytes.Buffer
	NotRun(&b, Style{Width: 60}, sampleDoc().Skipped)
	want := `
Checks not run (3):
  counters.utilization  needs two counter samples (add
                        --interval)
  topology.changed      no expected topology given (add
                        --expect-topology FILE, or sweep
                        once to keep a baseline)
  topology.miswired     no expected topology given (add
                        --expect-topology FILE, or sweep
                        once to keep a baseline)
`
	if b.String() != want {
		t.Errorf("NotRun:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestWriteTableWrapsLastColumn(t *testing.T) {
	var b bytes.Buffer
	cols := []Column{{Header: "CHECK"}, {Header: "WHAT IT FINDS", Min: 10, Wrap: true}}
	WriteTable(&b, 30, cols, [][]string{{"link.down", "a link that should be up is down or polling"}})
	want := " CHECK      WHAT IT FINDS\n" +
		"------------------------------\n" +
		" link.down  a link that\n" +
		"            should be up is\n" +
		"            down or polling\n"
	if b.String() != want {
		t.Errorf("got:\n%q\nwant:\n%q", b.String(), want)
	}
}

// FuzzWrapTruncate: Wrap never loses or cuts a word and keeps lines within
// the width unless one word is wider; Truncate never exceeds the width.
func FuzzWrapTruncate(f *testing.F) {
	f.Add("   do:       ", "Reseat or replace the cable between leaf07/41 and spine02/49", 40)
	f.Add("", "\x1b[31mred words\x1b[0m and … wide 全角 text", 7)
	f.Add("x", "", 1)
	f.Fuzz(func(t *testing.T, first, text string, width int) {
		if width < 0 || width > 500 || strings.ContainsAny(first, "\n\t\x1b") {
			return
		}
		lines := Wrap(first, text, width)
		var got []string
		for i, l := range lines {
			if i == 0 {
				l = strings.TrimPrefix(l, first)
			}
			got = append(got, strings.Fields(l)...)
			if width > 0 && i > 0 && VisibleWidth(l) > width && len(strings.Fields(l)) > 1 {
				t.Fatalf("line %q wider than %d with more than one word", l, width)
			}
		}
		if strings.Join(got, " ") != strings.Join(strings.Fields(text), " ") {
			t.Fatalf("words changed: %q -> %q", strings.Fields(text), got)
		}
		if width > 0 {
			if tr := Truncate(text, width); VisibleWidth(tr) > width {
				t.Fatalf("Truncate(%q, %d) = %q, %d wide", text, width, tr, VisibleWidth(tr))
			}
		}
	})
}

// TestWriteTableLastColumnBelow: when the other columns leave the last,
// wrapping column less than its Min, its text goes under its row across
// the whole width instead of a sliver at the right.
func TestWriteTableLastColumnBelow(t *testing.T) {
	var b bytes.Buffer
	cols := []Column{{Header: "NODE"}, {Header: "STATE"}, {Header: "MARK", Min: 16, Wrap: true}}
	WriteTable(&b, 30, cols, [][]string{
		{"spine02/49", "Active/LinkUp", "DEGRADED: width 1X, expected 4X"},
		{"leaf01/1", "Active/LinkUp", ""},
	})
	want := " NODE        STATE\n" +
		"---------------------------\n" +
		" spine02/49  Active/LinkUp\n" +
		"     DEGRADED: width 1X,\n" +
		"     expected 4X\n" +
		" leaf01/1    Active/LinkUp\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestSummaryGateCounts: a gate's scope counts the job's hosts, not their
// HCAs, and one of a thing is singular. (Failed before: "7 hosts, 1
// switches" for one host with 7 HCAs, "1 forwarding-table blocks".)
func TestSummaryGateCounts(t *testing.T) {
	d := &Document{Command: "gate", Fabric: FabricSummary{Nodes: 9, Switches: 1, CAs: 8, Links: 1}, Scope: &ScopeSummary{
		Hosts:    []string{"gpu002 mlx5_1", "gpu002 mlx5_2", "gpu002 mlx5_3", "gpu002 mlx5_4", "gpu002 mlx5_5", "gpu002 mlx5_6", "gpu002 mlx5_7"},
		JobHosts: 1, Switches: 1, Ports: 16, Snapshot: "sim:sample", SnapshotAt: "2026-11-24T00:00:00Z", LiveReads: 1, LFTBlocks: 1,
	}}
	var b bytes.Buffer
	Summary(&b, Style{}, d)
	out := b.String()
	for _, want := range []string{"9 nodes (1 switch, 8 CAs), 1 link", "Scope:     1 host (7 HCAs), 1 switch, 16 ports on their routes", "1 port and 1 forwarding-table block re-read live"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	d.Scope.JobHosts, d.Scope.Hosts, d.Scope.Switches = 2, d.Scope.Hosts[:2], 3
	b.Reset()
	Summary(&b, Style{}, d)
	if out := b.String(); !strings.Contains(out, "2 hosts (2 HCAs), 3 switches") {
		t.Errorf("summary:\n%s", out)
	}
}

// TestFindingsDetailsAlignPast9: with ten or more findings detailed the
// numbers are right-aligned (" 9." over "10.") and every finding's
// labels start in the same column, after the widest number.
func TestFindingsDetailsAlignPast9(t *testing.T) {
	d := sampleDoc()
	var fs []checks.Finding
	for len(fs) < 11 {
		fs = append(fs, d.Findings...)
	}
	fs = fs[:11]
	var b bytes.Buffer
	Findings(&b, Style{}, fs, 11)
	out := b.String()
	for _, want := range []string{"\n 9. " + fs[8].Severity.String() + " " + fs[8].Title + "\n", "\n10. " + fs[9].Severity.String() + " " + fs[9].Title + "\n", "\n 1. "} {
		if !strings.Contains(out, want) {
			t.Errorf("details lack %q:\n%s", want, out)
		}
	}
	for _, l := range strings.Split(out, "\n") {
		for _, label := range []string{"evidence:", "impact:", "do:"} {
			if strings.HasPrefix(strings.TrimLeft(l, " "), label) && !strings.HasPrefix(l, "    "+label) {
				t.Errorf("label not under the title (4 columns in):\n%q", l)
			}
		}
	}
	// Fewer than ten: the layout of one-digit numbers is unchanged.
	b.Reset()
	Findings(&b, Style{}, fs, 9)
	if out := b.String(); !strings.Contains(out, "\n1. ") || !strings.Contains(out, "\n   do:       ") {
		t.Errorf("one-digit layout changed:\n%s", out)
	}
}

// TestEvidenceLabelOnce: a finding with several pieces of evidence (a
// merged one: its own and "seen N times; also at ...") has one
// "evidence:" label, the other lines under it.
func TestEvidenceLabelOnce(t *testing.T) {
	f := checks.Finding{Check: "topology.oversubscribed", Severity: checks.Info, Title: "Leaf x is oversubscribed", Action: "Nothing.",
		Evidence: []checks.Evidence{{Text: "host links 12800 Gb/s, uplinks 400 Gb/s"}, {Text: "seen 2 times; also at y"}}}
	var b bytes.Buffer
	if err := Findings(&b, Style{}, []checks.Finding{f}, 10); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if n := strings.Count(out, "evidence:"); n != 1 || !strings.Contains(out, "   evidence: host links 12800 Gb/s, uplinks 400 Gb/s\n             seen 2 times; also at y\n") {
		t.Errorf("%d evidence labels:\n%s", n, out)
	}
}

// TestFindingsOtherOneSingular: one finding beyond --detail is "the other
// finding", not "the other 1 findings".
func TestFindingsOtherOneSingular(t *testing.T) {
	d := sampleDoc()
	var b bytes.Buffer
	Findings(&b, Style{}, d.Findings, len(d.Findings)-1)
	if out := b.String(); !strings.Contains(out, "(evidence and next steps of the other finding: --detail N, or --json)") {
		t.Errorf("one more finding:\n%s", out)
	}
	b.Reset()
	Findings(&b, Style{}, d.Findings, len(d.Findings)-2)
	if out := b.String(); !strings.Contains(out, "of the other 2 findings:") {
		t.Errorf("two more findings:\n%s", out)
	}
}

// TestFindingsImpactWholeOrGone: at every width the IMPACT column shows
// each cell whole or is not shown (the details repeat it); it never cuts
// "6.2% of paths, all-reduce 2.0x slower, -200 Gb/s" to "6.2% of paths…",
// whichever check IDs happen to be in the table. Before, a gate whose one
// finding had a short check ID kept IMPACT cut at 80 columns while check,
// with longer IDs, dropped it.
func TestFindingsImpactWholeOrGone(t *testing.T) {
	fs := []checks.Finding{{Check: "link.slower-hardware", Severity: checks.Info,
		Title:  "HCA gpu027 mlx5_6/1 supports at most 4X HDR; its peers run 4X NDR (link to leaf07/23)",
		Impact: checks.Impact{PathShare: 0.0625, Slowdown: 2, LostGbps: 200}, Action: "Replace it."}}
	whole := impactShort(fs[0].Impact)
	for width := 60; width <= 200; width++ {
		var b bytes.Buffer
		if err := Findings(&b, Style{Width: width}, fs, 0); err != nil {
			t.Fatal(err)
		}
		table := strings.SplitN(strings.TrimLeft(b.String(), "\n"), "\n\n", 2)[0]
		if strings.Contains(table, "IMPACT") != strings.Contains(table, whole) {
			t.Fatalf("width %d: IMPACT cut:\n%s", width, table)
		}
	}
}

func TestTruncateMiddle(t *testing.T) {
	for _, c := range []struct {
		in    string
		width int
		want  string
	}{
		{"short", 10, "short"},
		{"MF0;switch-de779e:SX6012/U1[1]", 26, "MF0;switch-de…SX6012/U1[1]"},
		{"MF0;switch-de779e:SX6012/U1[1]", 10, "MF0;s…1[1]"},
		{"abcdef", 3, "a…f"},
		{"anything", 0, "anything"},
	} {
		got := TruncateMiddle(c.in, c.width)
		if got != c.want {
			t.Errorf("TruncateMiddle(%q, %d) = %q, want %q", c.in, c.width, got, c.want)
		}
		if c.width > 0 && VisibleWidth(got) > c.width {
			t.Errorf("TruncateMiddle(%q, %d) is %d wide", c.in, c.width, VisibleWidth(got))
		}
	}
	// Colour is kept: the cut text is reset at its end.
	st := Style{Color: true}
	if got := TruncateMiddle(st.Red("port not cabled/down"), 10); VisibleWidth(got) > 10 || !strings.HasSuffix(got, "\x1b[0m") {
		t.Errorf("coloured cut %q (width %d)", got, VisibleWidth(got))
	}
	// A name coloured as a whole (counters' bold node) keeps its end, as
	// uncoloured: the GUID that tells two "Quantum-2 Mellanox
	// Technologies" apart (trial E13).
	name := "Quantum-2 Mellanox Technologies (0xfc6a1c03008a5c00)"
	if got, want := TruncateMiddle(st.Bold(name), 20), st.Bold(TruncateMiddle(name, 20)); got != want {
		t.Errorf("bold name cut to %q, want %q", got, want)
	}
}

// TestSummaryTimingSubMillisecond (trial N6): a phase done in under a
// millisecond reads "<1ms", not "0s" beside "checks 2ms", which read as
// "not done". The JSON keeps the duration string as recorded.
func TestSummaryTimingSubMillisecond(t *testing.T) {
	d := sampleDoc()
	d.Timings = map[string]string{"counters": "0s", "routes": "0s", "checks": "2ms", "total": "7ms"}
	var b bytes.Buffer
	Summary(&b, Style{}, d)
	if !strings.Contains(b.String(), "Timing:    counters <1ms, routes <1ms, checks 2ms, total 7ms\n") {
		t.Errorf("timing line:\n%s", b.String())
	}
}
