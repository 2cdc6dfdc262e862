package cli

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/iostreams"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/spf13/cobra"
)

// runAt runs ibdoctor as if stdout and stderr were a terminal width
// columns wide (colour off), and returns its exit code and outputs.
func runAt(width int, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	ios := iostreams.New(strings.NewReader(""), &out, &errb)
	ios.SetStdoutTTY(true)
	ios.SetStderrTTY(true)
	ios.SetWidth(width)
	code := mainWith(ios, append(args, "--no-color"))
	return code, out.String(), errb.String()
}

// wider returns the lines of text wider than width.
func wider(text string, width int) []string {
	var long []string
	for _, l := range strings.Split(text, "\n") {
		if report.VisibleWidth(l) > width {
			long = append(long, l)
		}
	}
	return long
}

// TestStderrFitsTerminal: warnings and errors on a terminal's stderr are
// wrapped at its width under their "warning: "/"ibdoctor: " prefix (on a
// pipe they stay one line each; TestCheckBadInput and the flag tables
// check that).
func TestStderrFitsTerminal(t *testing.T) {
	topo := chkTopology(t)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"computed-routes warning", []string{"routes", "--sim=" + topo, "--format", "dump_fts"}, "warning: routes computed by ibdoctor"},
		{"error", []string{"check", "--sim=" + topo, "--expect-rate", "4xNDR,3xHDR"}, `ibdoctor: --expect-rate: `},
		{"gate's notes", []string{"gate", "--sim", "--nodes", "gpu001,nosuch", "--state-dir", t.TempDir()}, "ibdoctor: hosts not found in the fabric: nosuch"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, stderr := runAt(80, c.args...)
			if !strings.Contains(stderr, c.want) {
				t.Fatalf("stderr lacks %q:\n%s", c.want, stderr)
			}
			if long := wider(stderr, 80); len(long) > 0 {
				t.Errorf("stderr lines wider than 80 columns:\n%s", strings.Join(long, "\n"))
			}
			if strings.Count(stderr, "\n") < 2 {
				t.Errorf("expected the message wrapped onto several lines:\n%s", stderr)
			}
		})
	}
}

// TestCountersFitTerminal: at 80 columns counters' table fits and each
// "[Name == value]" stays whole on one line (spine02/49 has three
// counters over threshold, more than the column holds).
func TestCountersFitTerminal(t *testing.T) {
	code, out, stderr := runAt(80, "counters", "--sim")
	if code != ExitFindings {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	if long := wider(out, 80); len(long) > 0 {
		t.Errorf("lines wider than 80 columns:\n%s", strings.Join(long, "\n"))
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.Count(l, "[") != strings.Count(l, "]") {
			t.Errorf("a [Name == value] is split across lines:\n%s", out)
			break
		}
	}
	if !strings.Contains(out, "[PortXmitWait == ") {
		t.Errorf("no PortXmitWait over threshold:\n%s", out)
	}
}

// TestTraceFitsTerminal: every line of trace at 80 columns fits, the
// route's ending included (it names both GUIDs and LIDs), and so does the
// computed-routes note of a file without tables.
func TestTraceFitsTerminal(t *testing.T) {
	topo := chkTopology(t)
	for _, args := range [][]string{
		{"trace", "--sim", "gpu001 mlx5_0", "gpu032 mlx5_7"},
		{"trace", "--sim=" + topo, "gpu001", "gpu012"},
	} {
		code, out, stderr := runAt(80, args...)
		if code != 0 || !strings.Contains(out, "delivered after") {
			t.Fatalf("%q: exit %d: %s\n%s", args, code, stderr, out)
		}
		if long := wider(out, 80); len(long) > 0 {
			t.Errorf("%q: lines wider than 80 columns:\n%s", args, strings.Join(long, "\n"))
		}
	}
}

// TestTopOnceFitsTerminal: top --once at 80 columns fits and keeps the
// verdict whole (it is the judgement; the rate and RX% go first).
func TestTopOnceFitsTerminal(t *testing.T) {
	code, out, stderr := runAt(80, "top", "--sim", "--once", "-n", "300ms")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	if long := wider(out, 80); len(long) > 0 {
		t.Errorf("lines wider than 80 columns:\n%s", strings.Join(long, "\n"))
	}
	if !strings.Contains(out, "VERDICT") || !strings.Contains(out, "warning congestion") || strings.Contains(out, "warning c"+report.Ellipsis) {
		t.Errorf("the verdict is cut or gone:\n%s", out)
	}
}

// TestHelpFitsTerminal: every command's --help fits an 80-column
// terminal: its text is written within 80 columns and the flag list wraps
// its descriptions at the terminal's width (piped, they stay one line).
func TestHelpFitsTerminal(t *testing.T) {
	root := Command(&bytes.Buffer{}, &bytes.Buffer{})
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		if !c.IsAvailableCommand() && c != root {
			return
		}
		paths = append(paths, path)
		// An example is a command to copy: it is written to fit, never
		// wrapped; the description is written to fit too (helpText's
		// wrapping is for narrower terminals, and leaves ragged lines).
		for _, l := range strings.Split(c.Example+"\n"+c.Long, "\n") {
			if report.VisibleWidth(l) > 80 {
				t.Errorf("ibdoctor %s: help text wider than 80 columns as written: %s", strings.Join(path, " "), l)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub, append(append([]string(nil), path...), sub.Name()))
		}
	}
	walk(root, nil)
	for _, p := range paths {
		code, out, stderr := runAt(80, append(p, "--help")...)
		if code != 0 || !strings.Contains(out, "Usage:") {
			t.Fatalf("%q: exit %d: %s", p, code, stderr)
		}
		if long := wider(out, 80); len(long) > 0 {
			t.Errorf("ibdoctor %s --help: lines wider than 80 columns:\n%s", strings.Join(p, " "), strings.Join(long, "\n"))
		}
	}
	_, piped, _ := run("check", "--help")
	if !strings.Contains(piped, "--interval duration           read counters twice this far apart and judge their increase (e.g. 30s); 0 reads once") {
		t.Errorf("piped help is wrapped:\n%s", piped)
	}
}

// TestCountersIntervalFitsTerminal: counters --interval at 80 columns
// keeps each "[Name +increase (rate)]" and "[BER ...]" whole: the
// COUNTERS column is never cut with "…" (it wraps, or goes under its
// row, as the absolute view's does), and the footer's interval is
// rounded. Before: "[SymbolErrorCoun…" and "increase over 2.064962368s".
func TestCountersIntervalFitsTerminal(t *testing.T) {
	code, out, stderr := runAt(80, "counters", "--sim", "--interval", "1s")
	if code != ExitFindings {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	if long := wider(out, 80); len(long) > 0 {
		t.Errorf("lines wider than 80 columns:\n%s", strings.Join(long, "\n"))
	}
	if strings.Contains(out, report.Ellipsis) {
		t.Errorf("a cell is cut:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.Count(l, "[") != strings.Count(l, "]") {
			t.Errorf("a [Name ...] is split across lines:\n%s", out)
			break
		}
	}
	for _, want := range []string{"[SymbolErrorCounter +", "[BER ", "stalled)]"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q:\n%s", want, out)
		}
	}
	// Rounded to 10 ms: "1.23s", or "1.2s"/"1s" when the rounding ends in zeros.
	if !regexp.MustCompile(`increase over 1(\.\d\d?)?s\)`).MatchString(out) {
		t.Errorf("footer's interval not rounded to 10 ms:\n%s", out)
	}
}

// TestGateFindingsFitTerminal: gate's findings at 80 columns are check's
// rendering: the table fits, and IMPACT is gone rather than cut (its one
// finding has a short check ID, which left room for a cut IMPACT:
// "HCA gpu027 mlx5_6/1…  6.2% of paths…" before).
func TestGateFindingsFitTerminal(t *testing.T) {
	code, out, stderr := runAt(80, "gate", "--sim", "--nodes", "gpu[025-028]", "--state-dir", t.TempDir())
	if code != ExitHealthy || !strings.Contains(out, "link.slower-hardware") {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	if long := wider(out, 80); len(long) > 0 {
		t.Errorf("lines wider than 80 columns:\n%s", strings.Join(long, "\n"))
	}
	if strings.Contains(out, "IMPACT") || strings.Contains(out, "of paths"+report.Ellipsis) {
		t.Errorf("IMPACT kept, cut, at 80 columns:\n%s", out)
	}
	if !strings.Contains(out, "impact:   runs at 200 of 400 Gb/s") {
		t.Errorf("the details lost the impact:\n%s", out)
	}
}

// TestCountersPipedRule: piped, counters keeps each port on one line
// (for grep), but its header rule stopped at the widest row (140 columns
// with COLUMNS=80 while most rows are 60): it stops at the reader's
// terminal width, $COLUMNS here.
func TestCountersPipedRule(t *testing.T) {
	t.Setenv("COLUMNS", "80")
	code, out, stderr := run("counters", "--sim")
	if code != ExitFindings {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	lines := strings.Split(out, "\n")
	if len(lines) < 3 || strings.Trim(lines[1], "-") != "" {
		t.Fatalf("no header rule on line 2:\n%s", out)
	}
	if n := len(lines[1]); n > 80 || n < len(strings.TrimRight(lines[0], " ")) {
		t.Errorf("rule %d columns wide, want at most 80 and at least the header's %d", n, len(lines[0]))
	}
	if long := wider(out, 80); len(long) == 0 {
		t.Errorf("piped rows were cut or wrapped (spine02/49's row is wider than 80):\n%s", out)
	}
}

// TestPipedRulesFit80: piped, links, discover's table and check's
// findings table drew their header rule to the widest row (links on the
// SwitchIB dump: 202 columns, check's findings 231, discover on avakas
// 95) where counters stops
// it at the reader's terminal ($COLUMNS, else 80). Every rule stops
// there now, never short of its header; the rows stay whole for grep.
func TestPipedRulesFit80(t *testing.T) {
	t.Setenv("COLUMNS", "80")
	file := corpusPath(t, "switchib-sx6012-mixed-2016.ibnetdiscover")
	avakas := corpusPath(t, "avakas-qlogic-qdr.ibnetdiscover-v-p")
	for _, args := range [][]string{
		{"links", "--sim=" + file},
		{"discover", "--sim=" + avakas},
		{"check", "--sim=" + file},
		{"links", "--sim"},
		{"check", "--sim"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			_, out, stderr := run(args...)
			lines := strings.Split(out, "\n")
			rules := 0
			for i, l := range lines {
				if len(l) < 3 || strings.Trim(l, "-") != "" || i == 0 {
					continue
				}
				rules++
				header := report.VisibleWidth(strings.TrimRight(lines[i-1], " "))
				if n := len(l); n > 80 && n > header {
					t.Errorf("rule under %q is %d columns wide, want at most 80 (or the header's %d)", lines[i-1], n, header)
				}
			}
			if rules == 0 {
				t.Fatalf("no header rule:\n%s\n%s", out, stderr)
			}
			if len(wider(out, 80)) == 0 {
				t.Errorf("no row wider than 80: piped rows were cut, or the input no longer tests this:\n%s", out)
			}
		})
	}
}

// TestRoutesOneLayoutAt80: at 80 columns routes on the SwitchIB dump
// drew its SX6012 table with VIA wrapped in its column and the SwitchIB
// table right below without a VIA header, each next hop on an indented
// line of its own: two layouts in one output, the second unlabelled.
// Every table now has its VIA column, one line per LID, a long name cut
// in its middle so the port it leads to stays.
func TestRoutesOneLayoutAt80(t *testing.T) {
	file := corpusPath(t, "switchib-sx6012-mixed-2016.ibnetdiscover")
	_, out, stderr := runAt(80, "routes", "--sim="+file)
	if long := wider(out, 80); len(long) > 0 {
		t.Errorf("lines wider than 80:\n%s", strings.Join(long, "\n"))
	}
	lines := strings.Split(out, "\n")
	tables := 0
	row := regexp.MustCompile(`^ \d+ +\d+ +\S`)
	for i, l := range lines {
		if !strings.HasPrefix(l, " LID ") {
			continue
		}
		tables++
		if !regexp.MustCompile(`^ LID +PORT +DESTINATION +VIA$`).MatchString(l) {
			t.Errorf("table header %q, want LID PORT DESTINATION VIA", l)
		}
		for _, r := range lines[i+2:] {
			if r == "" || !strings.HasPrefix(r, " ") {
				break
			}
			if !row.MatchString(r) {
				t.Errorf("%q is not a row of its own (a cell wrapped, or put under the row)", r)
			}
		}
	}
	if tables != 2 {
		t.Fatalf("%d tables, want 2:\n%s\n%s", tables, out, stderr)
	}
	// LID 1 is reached from the SwitchIB through the SX6012's port 1.
	if !regexp.MustCompile(`(?m)^ 1 +3 +r-ufm96 HCA-1 port 1 +MF0;switch-de\S*U1\[1\]$`).MatchString(out) {
		t.Errorf("the SwitchIB's route to LID 1 does not name MF0;switch-de…U1[1] (cut or whole):\n%s", out)
	}
}
