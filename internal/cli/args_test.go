package cli

import (
	"strings"
	"testing"
)

// TestFlagValueNeedsEquals: --sim and --ibsim may stand alone, so pflag
// gives them a value only with '=': "--sim FILE" leaves FILE as a stray
// argument, and the error says to write --sim=FILE (for every command,
// trace's two arguments included). A trace with the wrong number of
// arguments shows its usage line.
func TestFlagValueNeedsEquals(t *testing.T) {
	topo := chkTopology(t)
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"check --sim FILE", []string{"check", "--sim", topo}, []string{"--sim=" + topo, "--sim alone"}},
		{"links --sim FILE", []string{"links", "--sim", topo}, []string{"--sim=" + topo}},
		{"trace --sim FILE SRC DST", []string{"trace", "--sim", topo, "1", "2"}, []string{"--sim=" + topo}},
		{"check --ibsim NAME", []string{"check", "--ibsim", "mysim"}, []string{"--ibsim=mysim"}},
		{"trace with one argument", []string{"trace", "--sim", "gpu001"}, []string{"ibdoctor trace SRC DST", "2 arguments"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, stderr := run(c.args...)
			if code != ExitUndecided {
				t.Fatalf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if n := strings.Count(strings.TrimSpace(stderr), "\n"); n > 1 {
				t.Errorf("want a one-line error, got:\n%s", stderr)
			}
		})
	}
}
