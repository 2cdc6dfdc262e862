package cli

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/ibdoctor/ibdoctor/internal/iostreams"
	"github.com/ibdoctor/ibdoctor/internal/report"
)

// readerTerminal returns the slave end of a new pseudo-terminal whose
// window is cols wide: the terminal a person reading a pipe sits at.
func readerTerminal(t *testing.T, cols uint16) *os.File {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetWinsize(int(m.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Col: cols, Row: 40}); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// tableRows are the lines of out's tables: from a header line followed
// by a rule of dashes to the next blank line (the rule included).
func tableRows(out string) map[int]bool {
	lines := strings.Split(out, "\n")
	in := map[int]bool{}
	for i := 0; i+1 < len(lines); i++ {
		if !strings.HasPrefix(strings.TrimSpace(lines[i+1]), "---") || strings.TrimSpace(lines[i]) == "" {
			continue
		}
		for j := i; j < len(lines) && strings.TrimSpace(lines[j]) != ""; j++ {
			in[j] = true
		}
	}
	return in
}

var digits = regexp.MustCompile(`[0-9]+`)

// TestPipedProseWrapsAtReadersTerminal: piped (`ibdoctor check | less`
// at an 80-column terminal), check's summary and details, counters'
// summary and the "Routes:" note were single lines up to 200+ columns
// that the terminal broke inside words. The IO abstraction knows the
// reader's terminal (on stdin or stderr): prose now wraps at its width,
// at word boundaries, nothing cut; the tables' rows stay whole (issue 14:
// one finding per line, full text, for grep). With no terminal at all
// (cron, a script) the output is as before, every line whole.
func TestPipedProseWrapsAtReadersTerminal(t *testing.T) {
	for _, args := range [][]string{
		{"check", "--sim"},
		{"counters", "--sim", "--faults", "../../fixtures/sample/faults.txt"},
		{"routes", "--sim=../../fixtures/ibnetdiscover/hdr.txt"},
		{"links", "--sim=../../fixtures/ibnetdiscover/hdr.txt"},
	} {
		args = append(args, "--no-color")
		var out, errb bytes.Buffer
		mainWith(iostreams.New(readerTerminal(t, 80), &out, &errb), args)
		_, whole, _ := run(args...)
		if out.Len() == 0 {
			t.Fatalf("%v: no output\n%s", args, errb.String())
		}
		rows := tableRows(out.String())
		wide := 0
		for i, l := range strings.Split(out.String(), "\n") {
			if report.VisibleWidth(l) > 80 {
				if !rows[i] {
					t.Errorf("%v: a line that is not a table row is %d columns: %q", args, report.VisibleWidth(l), l)
				}
				wide++
			}
		}
		// Nothing lost or cut: the same words as the unwrapped output.
		got, want := tokenSet(out.String()), tokenSet(whole)
		for w := range want {
			if !got[w] {
				t.Errorf("%v: wrapped, the output lost %q", args, w)
				break
			}
		}
		for w := range got {
			if !want[w] {
				t.Errorf("%v: wrapped, the output has %q, not in the unwrapped one (a word cut?)", args, w)
				break
			}
		}
		// The tables' rows are the unwrapped output's (but for the figures
		// of counters that grew between the two runs).
		wholeLines := map[string]bool{}
		for _, l := range strings.Split(whole, "\n") {
			wholeLines[digits.ReplaceAllString(l, "#")] = true
		}
		for i, l := range strings.Split(out.String(), "\n") {
			if rows[i] && !wholeLines[digits.ReplaceAllString(l, "#")] && !strings.HasPrefix(strings.TrimSpace(l), "---") {
				t.Errorf("%v: table row changed: %q", args, l)
				break
			}
		}
		t.Logf("%v: %d table lines wider than 80 kept whole", args, wide)
	}
	// No terminal anywhere: prose lines stay whole (one line each).
	_, whole, _ := run("check", "--sim", "--no-color")
	if !strings.Contains(whole, "\n    do:       The subnet manager's routing is unbalanced here. Check for static or edited routes (opensm -R file, a routing_engine change) and re-run") {
		t.Errorf("without a terminal, check's details are wrapped:\n%s", whole)
	}
}
