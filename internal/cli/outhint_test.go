package cli

import (
	"strings"
	"testing"
)

// TestOutputHintOnlyWhereDashWorks (trial E2): a directory given to
// --html or --prom was refused with "... or - for standard output", and
// "--html -" / "--prom -" were then refused in turn. The hint is given for
// --out alone, the one output that takes "-".
func TestOutputHintOnlyWhereDashWorks(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		flag string
		dash bool
	}{
		{[]string{"check", "--sim", "--html", dir}, "--html", false},
		{[]string{"sweep", "--sim", "--state-dir", t.TempDir(), "--html", dir}, "--html", false},
		{[]string{"sweep", "--sim", "--state-dir", t.TempDir(), "--prom", dir}, "--prom", false},
		{[]string{"sweep", "--sim", "--state-dir", t.TempDir(), "--out", dir}, "--out", true},
	} {
		code, _, stderr := run(c.args...)
		if code != ExitUndecided || !strings.Contains(stderr, c.flag) || !strings.Contains(stderr, dir+" is a directory") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, %q: want exit 2 and one line naming %s and the directory", c.args, code, stderr, c.flag)
		}
		if got := strings.Contains(stderr, "- for standard output"); got != c.dash {
			t.Errorf("%v: %q: the '- for standard output' hint given %v, want %v (%s takes - : %v)", c.args, stderr, got, c.dash, c.flag, c.dash)
		}
	}
}
