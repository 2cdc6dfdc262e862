package cli

import (
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/report"
)

var updateReadme = flag.Bool("update-readme", false, "rewrite README.md's check sample from this run")

const readmeSampleHead = "What `make run` prints in an 80-column terminal"

// readmeSample returns README.md, and where its check sample (the lines
// of the console block after readmeSampleHead) starts and ends.
func readmeSample(t *testing.T) (string, int, int) {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	i := strings.Index(s, readmeSampleHead)
	if i < 0 {
		t.Fatal("README.md has no check sample")
	}
	start := strings.Index(s[i:], "```console\n")
	if start < 0 {
		t.Fatal("the check sample has no console block")
	}
	start += i + len("```console\n")
	end := strings.Index(s[start:], "```")
	if end < 0 {
		t.Fatal("the check sample's block is not closed")
	}
	return s, start, start + end
}

var (
	sampleClock    = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC`)
	sampleDuration = regexp.MustCompile(`(<)?\b\d+(\.\d+)?(ms|µs|s)\b`) // "<1ms": a phase under a millisecond
	sampleNumber   = regexp.MustCompile(`\d+`)
)

// sampleLine is a line of the sample as the test compares it: the clock
// and the timings are not, and in the findings the counter values (which
// grow while the simulated fabric runs) and the order of findings of equal
// rank are not either.
func sampleLine(l string, inFindings bool) string {
	l = sampleClock.ReplaceAllString(l, "<time>")
	l = sampleDuration.ReplaceAllString(l, "<d>")
	if inFindings {
		l = sampleNumber.ReplaceAllString(l, "0")
	}
	return strings.TrimRight(l, " ")
}

// cutMatches says whether line, a table row that may be cut with "…"
// anywhere (the check table cuts a title before its port, a854564's E5,
// as well as at its end), can be full: each "…" stands for any text,
// the rest must be as in full.
func cutMatches(line, full string) bool {
	if !strings.Contains(line, report.Ellipsis) {
		return false
	}
	parts := strings.Split(line, report.Ellipsis)
	for i := range parts {
		parts[i] = regexp.QuoteMeta(parts[i])
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$").MatchString(full)
}

// TestREADMECheckSample: the README's check sample is this run's output
// at 80 columns, the first lines of it up to "...": the summary exactly
// (counts, not-run line, status), the findings table and the first
// finding's details with numbers aside. A table row cut with "…" matches
// when the other can be what was cut (a longer counter value moves the
// cut). go test -run TestREADMECheckSample -update-readme rewrites it.
func TestREADMECheckSample(t *testing.T) {
	code, out, stderr := runAt(80, "check", "--sim")
	if code != ExitFindings {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := strings.Split(out, "\n")
	readme, start, end := readmeSample(t)
	want := strings.Split(strings.TrimSuffix(readme[start:end], "\n"), "\n")
	if *updateReadme {
		// Through the first finding's details (up to the blank line
		// before "2.").
		n := 0
		for i, l := range got {
			if strings.HasPrefix(strings.TrimSpace(l), "2. ") {
				n = i - 1
				break
			}
		}
		sample := strings.Join(got[:n], "\n") + "\n...\n"
		if err := os.WriteFile("../../README.md", []byte(readme[:start]+sample+readme[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if len(want) < 2 || want[len(want)-1] != "..." {
		t.Fatalf("the sample does not end in \"...\" (abridged): %q", want[len(want)-1])
	}
	want = want[:len(want)-1]
	if len(got) < len(want) {
		t.Fatalf("the run printed %d lines, the sample has %d", len(got), len(want))
	}
	inFindings := false
	for i, w := range want {
		if strings.HasPrefix(w, " #  ") {
			inFindings = true
		}
		g, w := sampleLine(got[i], inFindings), sampleLine(w, inFindings)
		if g == w {
			continue
		}
		if cutMatches(w, g) || cutMatches(g, w) {
			continue
		}
		t.Errorf("README sample line %d differs from the run (go test ./internal/cli -run TestREADMECheckSample -update-readme rewrites it):\nREADME: %s\nrun:    %s", i+1, w, g)
	}
}
