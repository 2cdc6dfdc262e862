package cli

import (
	"slices"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
)

// TestFlagValueCompletion: tab after a flag with fixed values offers those
// values, not file names (trial E8: every one answered ":0", the default
// directive, so the shell listed files). The values asked for are those
// each flag is validated against: fed back, each is accepted.
func TestFlagValueCompletion(t *testing.T) {
	groups := map[string]bool{}
	var checkIDs []string
	for _, c := range checks.All() {
		checkIDs = append(checkIDs, c.ID)
		groups[strings.SplitN(c.ID, ".", 2)[0]] = true
	}
	for _, c := range []struct {
		args []string
		want []string // every one offered (more may be)
	}{
		{[]string{"check", "--fail-on", ""}, []string{"info", "warning", "error", "critical"}},
		{[]string{"sweep", "--fail-on", ""}, []string{"info", "warning", "error", "critical"}},
		{[]string{"counters", "--fail-on", ""}, []string{"info", "warning", "error", "critical"}},
		{[]string{"discover", "--format", ""}, []string{"table", "json", "ibnetdiscover"}},
		{[]string{"routes", "--format", ""}, []string{"table", "dump_fts"}},
		{[]string{"top", "--sort", ""}, []string{"errors", "wait", "util"}},
		{[]string{"counters", "--reset", ""}, []string{"errors", "all"}},
		{[]string{"check", "--checks", ""}, append(slices.Sorted(func(yield func(string) bool) {
			for g := range groups {
				if !yield(g) {
					return
				}
			}
		}), checkIDs...)},
	} {
		code, out, stderr := run(append([]string{"__complete"}, c.args...)...)
		if code != 0 {
			t.Errorf("%q: exit %d: %s", c.args, code, stderr)
			continue
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		directive := lines[len(lines)-1]
		var got []string
		for _, l := range lines[:len(lines)-1] {
			got = append(got, strings.SplitN(l, "\t", 2)[0])
		}
		if directive != ":4" {
			t.Errorf("%q: directive %s, want :4 (no file completion)\n%s", c.args, directive, out)
		}
		for _, w := range c.want {
			if !slices.Contains(got, w) {
				t.Errorf("%q: %q not offered (got %q)", c.args, w, got)
			}
		}
		if len(got) != len(c.want) {
			t.Errorf("%q: offered %q, want %q", c.args, got, c.want)
		}
	}
}
