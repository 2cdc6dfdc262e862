package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/ibdoctor/ibdoctor/internal/tmuxtest"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
	binOut  []byte
)

// ibdoctorBinary builds cmd/ibdoctor once for the package's terminal
// tests (they run it in a tmux pane, a real pty of a known size).
func ibdoctorBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ibdoctor-term-test")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "ibdoctor")
		cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", binPath, "github.com/ibdoctor/ibdoctor/cmd/ibdoctor")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		binOut, binErr = cmd.CombinedOutput()
	})
	if binErr != nil {
		t.Fatalf("building ibdoctor: %v\n%s", binErr, binOut)
	}
	return binPath
}

// tokenSet is the tokens of text without digits (counter values and times
// differ between two runs on the simulator), without cuts ("…") and
// without the table's rule, which is as wide as the table.
func tokenSet(text string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.Fields(text) {
		if strings.ContainsAny(w, "0123456789") || strings.Contains(w, report.Ellipsis) || strings.Trim(w, "-") == "" {
			continue
		}
		// A clause that ends a line on the screen loses its ";".
		out[strings.TrimRight(w, ";,")] = true
	}
	return out
}

// TestCheckFitsTerminal runs check --sim in tmux panes 80 and 120 columns
// wide: no line is wider than the pane (the terminal wrapped nothing),
// and every word on the screen is a whole word of the full, piped output
// (nothing was cut inside a word except where "…" says so).
func TestCheckFitsTerminal(t *testing.T) {
	tmuxtest.Require(t)
	bin := ibdoctorBinary(t)
	piped, err := exec.Command(bin, "check", "--sim").Output()
	if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == 1) {
		t.Fatalf("check --sim piped: %v", err)
	}
	full := string(piped)
	if strings.Contains(full, report.Ellipsis) {
		t.Errorf("piped output is cut (%q): a pipe gets the full text", report.Ellipsis)
	}
	if !regexp.MustCompile(`(?m)^ 1 +critical +routing\.ecmp-imbalance +spine01 spreads .* 7 ports idle +3\.10% of paths`).MatchString(full) {
		t.Errorf("piped findings table lacks the first finding in full on one line:\n%s", full)
	}
	fullWords := tokenSet(full)
	for _, width := range []int{80, 120} {
		t.Run(fmt.Sprintf("%dcols", width), func(t *testing.T) {
			p := tmuxtest.Start(t, width, 50, t.TempDir(), bin, "check", "--sim")
			code, joined := p.WaitExit(30 * time.Second)
			if code != ExitFindings {
				t.Errorf("exit %d, want %d (findings)", code, ExitFindings)
			}
			if !strings.Contains(joined, "Status:") || !strings.Contains(joined, "routing.ecmp-imbalance") {
				t.Fatalf("the pane does not show the report:\n%s", joined)
			}
			for i, line := range strings.Split(joined, "\n") {
				if w := report.VisibleWidth(line); w > width {
					t.Errorf("line %d is %d columns wide in a %d-column terminal (it wrapped):\n%s", i+1, w, width, line)
				}
			}
			for w := range tokenSet(joined) {
				if !fullWords[w] && !strings.HasPrefix(w, report.Ellipsis) {
					t.Errorf("%q on the %d-column screen is not a word of the full output: a word was cut", w, width)
				}
			}
			// (How many checks need those flags grows with the checks.)
			if !regexp.MustCompile(`Not run: +\d+ checks \(need --interval, --expect-topology`).MatchString(joined) {
				t.Errorf("the summary's not-run line is missing or long:\n%s", joined)
			}
		})
	}
}

// TestRoutesLinksFitTerminal: routes and links on the sample (with a
// route hole and a degraded link, and on the sample's file, whose routes
// are computed and which warns on stderr), in tmux panes 80 and 120
// columns wide, as TestCheckFitsTerminal does for check: no line wider
// than the pane, and no word on the screen that is not a whole word of
// the piped output (stdout and stderr). Piped, nothing is cut.
func TestRoutesLinksFitTerminal(t *testing.T) {
	tmuxtest.Require(t)
	bin := ibdoctorBinary(t)
	faults := writeFile(t, "holes.faults", "lft leaf01 dlid=13-20 port=none\ndegrade leaf02/6 width=1x\n")
	file, err := filepath.Abs(filepath.Join("..", "..", "fixtures", "sample", "fabric.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"routes", "--sim", "--switch", "leaf01", "--switch", "spine01"},
		{"routes", "--sim", "--faults", faults, "--switch", "leaf01", "--switch", "spine01"},
		{"routes", "--sim=" + file, "--switch", "leaf01"},
		{"links", "--sim"},
		{"links", "--sim=" + file, "--faults", faults},
	} {
		piped, err := exec.Command(bin, args...).CombinedOutput()
		if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == 1) {
			t.Fatalf("%q piped: %v\n%s", args, err, piped)
		}
		full := string(piped)
		if strings.Contains(full, report.Ellipsis) {
			t.Errorf("%q: piped output is cut (%q)", args, report.Ellipsis)
		}
		fullWords := tokenSet(full)
		for _, width := range []int{80, 120} {
			t.Run(fmt.Sprintf("%s/%dcols", args[0], width), func(t *testing.T) {
				p := tmuxtest.Start(t, width, 50, t.TempDir(), append([]string{bin}, args...)...)
				code, joined := p.WaitExit(30 * time.Second)
				if code != ExitHealthy && code != ExitFindings {
					t.Errorf("exit %d\n%s", code, joined)
				}
				if !strings.Contains(joined, "leaf01") {
					t.Fatalf("the pane does not show the output:\n%s", joined)
				}
				for i, line := range strings.Split(joined, "\n") {
					if w := report.VisibleWidth(line); w > width {
						t.Errorf("line %d is %d columns wide in a %d-column terminal (it wrapped):\n%s", i+1, w, width, line)
					}
				}
				for w := range tokenSet(joined) {
					if !fullWords[w] && !strings.HasPrefix(w, report.Ellipsis) {
						t.Errorf("%q on the %d-column screen is not a word of the full output: a word was cut", w, width)
					}
				}
			})
		}
	}
}

// TestLinksCountersFitTerminalOnLongNames: links on the DGX SuperPOD dump
// and counters on the Quantum-2 ibdiagnet capture, whose node names are
// 34 to 60 columns long, in a tmux pane 80 columns wide (trial E13: rows
// of 149 and 117 columns, wrapped mid-word by the terminal, so the far
// end's PORT landed under NODE). No line is wider than the pane; every
// word on the screen is a whole word of the piped output or a name cut
// where "…" says so, or the line saying which columns were left out;
// every row of the piped table is on the screen (none wrapped into two).
// Piped, nothing is cut.
func TestLinksCountersFitTerminalOnLongNames(t *testing.T) {
	tmuxtest.Require(t)
	bin := ibdoctorBinary(t)
	for _, c := range []struct {
		args []string
		// leftOut: the LIDs cannot fit beside two names and the rate.
		leftOut bool
	}{
		{[]string{"links", "--sim=" + corpusPath(t, "dgx-ndr-2025.ibnetdiscover")}, true},
		{[]string{"counters", "--sim=" + corpusPath(t, "quantum2-ndr-ibdiagnet2.db_csv")}, false},
	} {
		args := c.args
		t.Run(args[0], func(t *testing.T) {
			piped, err := exec.Command(bin, args...).CombinedOutput()
			if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == 1) {
				t.Fatalf("%q piped: %v", args, err)
			}
			full := string(piped)
			if strings.Contains(full, report.Ellipsis) {
				t.Errorf("%q: piped output is cut (%q)", args, report.Ellipsis)
			}
			pipedRows := 0
			for _, l := range strings.Split(full, "\n") {
				if strings.HasPrefix(l, " ") && !strings.HasPrefix(l, " NODE ") && !strings.HasPrefix(l, "  ") {
					pipedRows++
				}
			}
			fullWords := tokenSet(full)
			p := tmuxtest.Start(t, 80, 50, t.TempDir(), append([]string{bin}, args...)...)
			code, joined := p.WaitExit(60 * time.Second)
			if code != ExitHealthy && code != ExitFindings {
				t.Fatalf("exit %d\n%s", code, joined)
			}
			if !strings.Contains(joined, " NODE ") {
				t.Fatalf("the pane does not show the table:\n%s", joined)
			}
			// The line saying which columns did not fit is the screen's own.
			left := regexp.MustCompile(`\(\w[^()]* left out to fit 80 columns[^()]*\)`)
			if left.MatchString(joined) != c.leftOut {
				t.Errorf("a line says which columns were left out: %v, want %v\n%s", !c.leftOut, c.leftOut, joined)
			}
			joined = left.ReplaceAllString(joined, "")
			screenRows := 0
			for i, line := range strings.Split(joined, "\n") {
				if w := report.VisibleWidth(line); w > 80 {
					t.Errorf("line %d is %d columns wide in an 80-column terminal (it wrapped):\n%s", i+1, w, line)
				}
				if strings.HasPrefix(line, " ") && !strings.HasPrefix(line, " NODE ") && !strings.HasPrefix(line, "  ") {
					screenRows++
				}
				for w := range tokenSet(line) {
					if !fullWords[w] && !strings.Contains(w, report.Ellipsis) {
						t.Errorf("%q on the 80-column screen is not a word of the full output: a word was cut (line %q)", w, line)
					}
				}
			}
			if screenRows != pipedRows {
				t.Errorf("%d table rows on the screen, %d piped", screenRows, pipedRows)
			}
		})
	}
}
