package gate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/sim"
)

// TestGateCablingChangedUndecided: cables moved on the job's routes since
// the sweep (new-user trial B17, B4). The gate follows the switches' live
// tables, but the snapshot's cables are the sweep's: it checks the far end
// of every egress port on the job's routes by directed route, and where a
// cable leads elsewhere now the routing verdicts are could-not-decide, the
// port and what it leads to named. Before, the routine moves (the SM
// re-routed) gave critical routing.unreachable "delivered to the wrong
// host" or routing.loop on a fabric check calls clean, and the swap the SM
// did not route around (a real loop) passed as healthy.
func TestGateCablingChangedUndecided(t *testing.T) {
	clean, err := sim.SampleHealthy(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	snap := sweptSim(t, clean)
	for _, c := range []struct {
		name, faults string
		hosts        []string
		said         string // the unread cable's reason
		from         string // the gate's port
	}{
		{"host cables swapped at the leaf, SM re-routed", "miswire leaf01/1 \"gpu001 mlx5_1\"/1\nsweep\n", []string{"gpu001", "gpu009"},
			"the cabling changed since the sweep: leaf01/1 now leads to gpu001 mlx5_1/1 (the snapshot has gpu001 mlx5_0/1); run 'ibdoctor sweep'", "gpu020 mlx5_0"},
		{"spine cable moved to another port, SM re-routed", "miswire leaf01/33 spine01/9\nsweep\n", []string{"gpu001", "gpu005"},
			"the cabling changed since the sweep: spine01/9 now leads to leaf01/33 (the snapshot has leaf02/33); run 'ibdoctor sweep'", "gpu020 mlx5_0"},
		{"uplinks swapped, not re-routed (a real loop)", "miswire leaf01/33 leaf01/41\n", []string{"gpu001", "gpu009"},
			"the cabling changed since the sweep: spine01/1 now leads to spine02/1 (the snapshot has leaf01/33); run 'ibdoctor sweep'", "gpu020 mlx5_0"},
		{"gate on a job host", "miswire leaf01/33 spine01/9\nsweep\n", []string{"gpu001", "gpu005"},
			"spine01/9 now leads to leaf01/33", "gpu001 mlx5_0"},
	} {
		live, err := sim.SampleHealthy(sim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ff := filepath.Join(t.TempDir(), "t.faults")
		if err := os.WriteFile(ff, []byte(c.faults), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := live.ApplyFaultsFile(ff); err != nil {
			t.Fatal(err)
		}
		doc, err := Run(context.Background(), snapAgain(t, snap), engineAt(t, live, c.from), Options{Hosts: c.hosts, FailOn: checks.Error, ByLID: true, Source: "sim:test"})
		if err != nil {
			t.Fatal(err)
		}
		if doc.Status != "undecided" {
			t.Errorf("%s: status %q, want undecided", c.name, doc.Status)
		}
		for _, f := range doc.Findings {
			if f.Severity >= checks.Error {
				t.Errorf("%s: %s %s %s (from the snapshot's cables)", c.name, f.Severity, f.Check, f.Title)
			}
		}
		said := false
		for _, u := range doc.Unreached {
			if u.What == WhatCable && strings.Contains(u.Reason, c.said) {
				said = true
			}
		}
		if !said {
			t.Errorf("%s: no unread cable saying %q: %+v", c.name, c.said, doc.Unreached)
		}
		skipped := ""
		for _, s := range doc.Skipped {
			if s.Check == "routing.unreachable" {
				skipped = s.Reason
			}
		}
		if !strings.Contains(skipped, "the cabling changed since the sweep") {
			t.Errorf("%s: routing.unreachable not run for the cabling: %q", c.name, skipped)
		}
	}
}

// TestGateCablesUnchangedStillJudged: with the cables as the sweep saw
// them, the far ends check out and the routing verdicts stand (an LFT
// fault made after the sweep is still found on the live tables).
func TestGateCablesUnchangedStillJudged(t *testing.T) {
	clean, err := sim.SampleHealthy(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	snap := sweptSim(t, clean)
	live, err := sim.SampleHealthy(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ff := filepath.Join(t.TempDir(), "t.faults")
	if err := os.WriteFile(ff, []byte("loop spine01 leaf01 dlid=13\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := live.ApplyFaultsFile(ff); err != nil {
		t.Fatal(err)
	}
	doc, err := Run(context.Background(), snapAgain(t, snap), engineAt(t, live, "gpu020 mlx5_0"), Options{Hosts: []string{"gpu001", "gpu009"}, FailOn: checks.Error, ByLID: true, Source: "sim:test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range doc.Unreached {
		if u.What == WhatCable {
			t.Errorf("cable unread with the cabling unchanged: %+v", u)
		}
	}
	loop := false
	for _, f := range doc.Findings {
		if f.Check == "routing.loop" && f.Severity == checks.Critical {
			loop = true
		}
	}
	if !loop || doc.Status != "unhealthy" {
		t.Errorf("status %q, routing.loop critical %v; findings %+v", doc.Status, loop, doc.Findings)
	}
}
