package gate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/snapshot"
)

// sweptVerdicts is sweptSim with the sweep's fabric-wide verdicts kept,
// as the sweep command saves them for the gates.
func sweptVerdicts(t *testing.T, s *sim.Sim) *snapshot.Snapshot {
	t.Helper()
	e := engineAt(t, s, "gpu020 mlx5_0")
	sw, err := diagnose.Run(context.Background(), e, diagnose.Options{Routes: true})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.New(sw.Fabric, nil, sw.Taken, "sim:test", "test", sw.Complete)
	if err != nil {
		t.Fatal(err)
	}
	v, err := checks.RunFabricWide(sw.Snapshot(checks.Expectations{}, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	snap.SetFabricVerdicts(v)
	dir := t.TempDir()
	if _, err := snap.Save(dir); err != nil {
		t.Fatal(err)
	}
	back, err := snapshot.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// TestGateCableBackSinceSweep: a cable down at the sweep and up again
// before the gate (new-user trial B1). The gate must not show the
// sweep's verdict on it as current: it re-reads the ports of the job's
// switches that the snapshot has without a link, and one up now makes
// the verdicts resting on it undecided ("back since the sweep"). Before,
// an HCA reseated since a first sweep failed the job with error
// topology.missing-hca "leaf01/1 is Polling" and "Reached: everything",
// and an uplink fixed since the sweep kept its topology.oversubscribed
// "1 cable missing or down".
func TestGateCableBackSinceSweep(t *testing.T) {
	for _, c := range []struct {
		name, faults string
		check        string // must not be a finding; undecided instead
		port         string // the unread port
	}{
		{"HCA reseated", "polling \"gpu001 mlx5_0\"/1\n", "topology.missing-hca", "leaf01 port 1"},
		{"uplink back", "down leaf01/33\nsweep\n", "topology.oversubscribed", "leaf01 port 33"},
	} {
		old, err := sim.SampleHealthy(sim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ff := filepath.Join(t.TempDir(), "t.faults")
		if err := os.WriteFile(ff, []byte(c.faults), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := old.ApplyFaultsFile(ff); err != nil {
			t.Fatal(err)
		}
		snap := sweptVerdicts(t, old)
		live, err := sim.SampleHealthy(sim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		doc, err := Run(context.Background(), snap, engineAt(t, live, "gpu020 mlx5_0"), Options{Hosts: []string{"gpu001", "gpu009"}, FailOn: checks.Error, ByLID: true, Source: "sim:test"})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range doc.Findings {
			if f.Check == c.check || f.Severity >= checks.Error {
				t.Errorf("%s: %s %s %s (the sweep's, on a port up now)", c.name, f.Severity, f.Check, f.Title)
			}
		}
		if doc.Status != "undecided" {
			t.Errorf("%s: status %q, want undecided", c.name, doc.Status)
		}
		said := false
		for _, u := range doc.Unreached {
			if u.Where == c.port && strings.Contains(u.Reason, "had no link in the snapshot") {
				said = true
			}
		}
		if !said {
			t.Errorf("%s: no unread %s saying it is up now without a link in the snapshot: %+v", c.name, c.port, doc.Unreached)
		}
		undecided := false
		for _, u := range doc.Undecided {
			undecided = undecided || u.Check == c.check
		}
		if !undecided {
			t.Errorf("%s: %s not undecided: %+v", c.name, c.check, doc.Undecided)
		}
	}
}
