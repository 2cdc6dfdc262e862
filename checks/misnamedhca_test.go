package checks_test

import (
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
)

// TestMissingHCAMisnamed: an adapter that answers on the leaf port where
// a host's HCA belongs, under another host's description or the
// firmware's default, is not missing: the finding says it is misnamed
// (no "missing", no cable to reseat) and takes in the names.* finding it
// explains; with a Polling HCA on the same host, the adapter named is
// the one whose port is down, not the one whose name was taken
// (trial E1).
func TestMissingHCAMisnamed(t *testing.T) {
	t.Run("another host's description", func(t *testing.T) {
		all := sampleWith(t, `desc "gpu013 mlx5_0" text="gpu014 mlx5_0"`+"\n", false)
		f := oneMissingHCA(t, all)
		if f.Severity != checks.Warning || strings.Contains(f.Title, "missing") || strings.Contains(f.Action, "reseat") {
			t.Errorf("got %s %q\n  do: %s\nwant a warning that does not say missing nor reseat", f.Severity, f.Title, f.Action)
		}
		for _, w := range []string{"gpu013", "mlx5_0", "leaf04/1", `"gpu014 mlx5_0"`} {
			if !strings.Contains(f.Title, w) {
				t.Errorf("title %q does not name %s", f.Title, w)
			}
		}
		if strings.Contains(f.Title, "leaf04/9") {
			t.Errorf("title %q names gpu014's own mlx5_0 (leaf04/9)", f.Title)
		}
		if d := byCheck(all, "names.duplicate-description"); len(d) > 0 {
			t.Errorf("names.duplicate-description not folded into the finding:%s", titles(d))
		}
	})
	t.Run("firmware default", func(t *testing.T) {
		all := sampleWith(t, `desc "gpu013 mlx5_1" text="MT4129 ConnectX7   Mellanox Technologies"`+"\n", false)
		f := oneMissingHCA(t, all)
		if f.Severity != checks.Warning || strings.Contains(f.Title, "missing") || strings.Contains(f.Action, "reseat") {
			t.Errorf("got %s %q\n  do: %s\nwant a warning that does not say missing nor reseat", f.Severity, f.Title, f.Action)
		}
		for _, w := range []string{"gpu013", "mlx5_1", "leaf04/2"} {
			if !strings.Contains(f.Title, w) {
				t.Errorf("title %q does not name %s", f.Title, w)
			}
		}
		if d := byCheck(all, "names.default-description"); len(d) > 0 {
			t.Errorf("names.default-description not folded into the finding:%s", titles(d))
		}
	})
	t.Run("a Polling HCA beside a misnamed one", func(t *testing.T) {
		all := sampleWith(t, "polling \"gpu006 mlx5_1\"/1\ndesc \"gpu006 mlx5_2\" text=\"gpu006 mlx5_1\"\n", false)
		f := oneMissingHCA(t, all)
		if f.Severity != checks.Error || !strings.Contains(f.Title, "mlx5_1 missing") || !strings.Contains(f.Title, "leaf02/10") {
			t.Errorf("got %s %q, want an error naming mlx5_1 (leaf02/10 is Polling)", f.Severity, f.Title)
		}
		var ev []string
		for _, e := range f.Evidence {
			ev = append(ev, e.Text)
		}
		if j := strings.Join(ev, "\n"); !strings.Contains(j, "leaf02/11") || !strings.Contains(j, "mlx5_2") {
			t.Errorf("evidence does not say the adapter on leaf02/11 is likely mlx5_2:\n%s", j)
		}
		if !strings.Contains(f.Action, "leaf02/10") || !strings.Contains(f.Action, "leaf02/11") {
			t.Errorf("action: %s", f.Action)
		}
	})
}

func oneMissingHCA(t *testing.T, all []checks.Finding) checks.Finding {
	t.Helper()
	fs := byCheck(all, "topology.missing-hca")
	if len(fs) != 1 {
		t.Fatalf("want 1 topology.missing-hca, got:%s", titles(fs))
	}
	f := fs[0]
	t.Logf("%s %s\n    %v\n    do: %s", f.Severity, f.Title, f.Evidence, f.Action)
	return f
}
