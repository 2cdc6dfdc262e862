package checks_test

import (
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
)

// TestSameBlackholeAtTwoLeavesCountsBoth: the same destination with no
// route at two leaves cuts off both leaves' hosts. Trial T6: the two
// findings had the same title (each counted its own leaf's 32 HCA ports)
// and the identical-title fold kept the first, so the report said
// "32 HCA ports (4 hosts)", scored and named leaf01 only; leaf02's 32
// sources were lost from the count and the next step.
func TestSameBlackholeAtTwoLeavesCountsBoth(t *testing.T) {
	one := byCheck(sampleWith(t, "blackhole leaf01 dlid=\"gpu020 mlx5_0\"\n", false), "routing.unreachable")
	fs := byCheck(sampleWith(t, "blackhole leaf01 dlid=\"gpu020 mlx5_0\"\nblackhole leaf02 dlid=\"gpu020 mlx5_0\"\n", false), "routing.unreachable")
	if len(one) != 1 || len(fs) != 1 {
		t.Fatalf("want one finding each, got %d and %d:%s%s", len(one), len(fs), titles(one), titles(fs))
	}
	f := fs[0]
	if want := "64 HCA ports (8 hosts) cannot reach gpu020 mlx5_0 (LID "; !strings.HasPrefix(f.Title, want) {
		t.Errorf("title %q, want it to start %q", f.Title, want)
	}
	if !strings.Contains(f.Title, "leaf01") || !strings.Contains(f.Title, "leaf02") {
		t.Errorf("title %q does not name both switches", f.Title)
	}
	if len(f.Evidence) == 0 || f.Evidence[0].Value != 64 {
		t.Errorf("sources evidence %+v, want 64", f.Evidence)
	}
	for _, ev := range f.Evidence {
		if ev.Name == "merged" {
			t.Errorf("folded by identical title: %q", ev.Text)
		}
	}
	for _, sw := range []string{"leaf01", "leaf02"} {
		if !strings.Contains(f.Action, "on "+sw) && !strings.Contains(f.Action, ", "+sw) && !strings.Contains(f.Action, "and "+sw) {
			t.Errorf("next step does not name %s: %q", sw, f.Action)
		}
		found := false
		for _, e := range f.Entities {
			if e.Role == "switch" && strings.Contains(e.String(), sw) {
				found = true
			}
		}
		if !found {
			t.Errorf("no switch entity %s in %v", sw, f.Entities)
		}
	}
	// One finding, one series: an alert labelled with the first switch
	// only sent the operator to leaf01 and fired anew for leaf02 once
	// leaf01 was fixed.
	if pl, want := f.Place(), (checks.Place{Node: "leaf01 and leaf02"}); pl != want {
		t.Errorf("place %+v, want %+v (every switch the finding is at, as its title names them)", pl, want)
	}
	if pl := one[0].Place(); pl.Node != "leaf01" {
		t.Errorf("one leaf's finding placed at %+v, want leaf01", pl)
	}
	if f.Impact.Score <= one[0].Impact.Score {
		t.Errorf("impact score %.3f, not above one leaf's %.3f", f.Impact.Score, one[0].Impact.Score)
	}
	t.Logf("%s\n%s\n%s", f.Title, f.Evidence[0].Text, f.Action)
}
