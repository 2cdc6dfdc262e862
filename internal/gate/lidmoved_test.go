package gate

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/sim"
)

// TestGateMovedIsNotClone: a job HCA whose snapshot LID now answers with
// another known node's GUID is no evidence of a cloned GUID (review V1).
// After an SM failover that swapped two HCAs' LIDs, or two host cables
// swapped since the sweep, the HCA at the snapshot's place answers its
// own GUID, or the other node's place does not answer that GUID: the
// snapshot is out of date, so the gate cannot decide (exit 2), never a
// critical topology.duplicate-guid telling the operator to re-burn a
// healthy adapter's GUID. Before, both gave that critical (the cable
// swap twice).
func TestGateMovedIsNotClone(t *testing.T) {
	clean, err := sim.SampleHealthy(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	snap := sweptSim(t, clean)
	for _, c := range []struct {
		name, faults string
		hosts        []string
		reason       string
	}{
		{"LIDs swapped", "lid \"gpu003 mlx5_1\" lid=142\nlid \"gpu017 mlx5_1\" lid=30\nsweep\n", []string{"gpu003"}, "LID 30 now answers as gpu017 mlx5_1: the LIDs changed since the sweep; run 'ibdoctor sweep'"},
		{"LIDs swapped, both hosts", "lid \"gpu003 mlx5_1\" lid=142\nlid \"gpu017 mlx5_1\" lid=30\nsweep\n", []string{"gpu003", "gpu017"}, "the LIDs changed since the sweep"},
		{"cables swapped", "miswire leaf02/1 \"gpu005 mlx5_1/1\"\n", []string{"gpu001", "gpu005"}, "the cabling changed since the sweep"},
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
		doc, err := Run(context.Background(), snapAgain(t, snap), engineAt(t, live, "gpu020 mlx5_0"), Options{Hosts: c.hosts, FailOn: checks.Error, ByLID: true, Source: "sim:test"})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range doc.Findings {
			if f.Check == "topology.duplicate-guid" {
				t.Errorf("%s: %s %s (evidence %v)", c.name, f.Severity, f.Title, f.Evidence)
			}
		}
		said := 0
		for _, u := range doc.Unreached {
			if u.What == WhatNodeGUID && strings.Contains(u.Reason, c.reason) {
				said++
			}
		}
		if said == 0 || doc.Status == "healthy" {
			t.Errorf("%s: status %q, want undecided with %q; unread %+v, findings %d", c.name, doc.Status, c.reason, doc.Unreached, len(doc.Findings))
		}
	}
}

// TestGateMovedLIDsLeaveRoutesUndecided: once the gate knows a job HCA's
// LID moved since the sweep (its snapshot LID answers as another node,
// its place in the snapshot as itself), every verdict resting on the
// snapshot's LIDs is could-not-decide, and what it read by directed route
// stands. Before, the LID swap gave critical routing.unreachable
// "delivered to the wrong host" (routes followed to LID 30, now
// gpu017's), the moved HCA's own link was judged on the other HCA's
// PortInfo (read by LID 30: an HDR-limited HCA's link "trained at HDR
// instead of NDR", error), and gpu017, not in the job, was judged
// because the route to LID 30 now ends there.
func TestGateMovedLIDsLeaveRoutesUndecided(t *testing.T) {
	clean, err := sim.SampleHealthy(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	snap := sweptSim(t, clean)
	swap := "lid \"gpu003 mlx5_1\" lid=142\nlid \"gpu017 mlx5_1\" lid=30\nsweep\n"
	for _, c := range []struct {
		name, faults string
		hosts        []string
		lids         []string // named in the routing checks' reason
		status       string
		want         map[string]string // check -> a port its finding names
	}{
		{"one host", swap, []string{"gpu003"}, []string{"LID 30 now answers as gpu017 mlx5_1"}, "undecided", nil},
		{"both hosts", swap, []string{"gpu003", "gpu017"}, []string{"LID 30 now answers as gpu017 mlx5_1", "LID 142 now answers as gpu003 mlx5_1"}, "undecided", nil},
		{"faults read by directed route stay", swap + "limit \"gpu003 mlx5_1/1\" speed=HDR\ndegrade \"gpu003 mlx5_0/1\" width=1x\n", []string{"gpu003"},
			[]string{"LID 30 now answers as gpu017 mlx5_1"}, "unhealthy",
			map[string]string{"link.degraded-width": "gpu003 mlx5_0/1", "link.slower-hardware": "gpu003 mlx5_1/1"}},
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
		doc, err := Run(context.Background(), snapAgain(t, snap), engineAt(t, live, "gpu020 mlx5_0"), Options{Hosts: c.hosts, FailOn: checks.Error, ByLID: true, Source: "sim:test"})
		if err != nil {
			t.Fatal(err)
		}
		if doc.Status != c.status {
			t.Errorf("%s: status %q, want %q", c.name, doc.Status, c.status)
		}
		found := map[string]bool{}
		for _, f := range doc.Findings {
			switch {
			case strings.HasPrefix(f.Check, "routing.") || f.Check == "addr.duplicate-lid":
				t.Errorf("%s: %s %s %s judged on the snapshot's LIDs", c.name, f.Severity, f.Check, f.Title)
			case strings.Contains(f.Title, "gpu017") && !slices.Contains(c.hosts, "gpu017"):
				t.Errorf("%s: %s %s %s: gpu017 is not in the job", c.name, f.Severity, f.Check, f.Title)
			case c.want[f.Check] != "" && strings.Contains(f.Title, c.want[f.Check]):
				found[f.Check] = true
			case f.Severity >= checks.Error:
				t.Errorf("%s: unexpected %s %s %s", c.name, f.Severity, f.Check, f.Title)
			}
		}
		for ch := range c.want {
			if !found[ch] {
				t.Errorf("%s: no %s on %s; findings %+v", c.name, ch, c.want[ch], doc.Findings)
			}
		}
		skipped := ""
		for _, s := range doc.Skipped {
			if s.Check == "routing.unreachable" {
				skipped = s.Reason
			}
		}
		for _, l := range c.lids {
			if !strings.Contains(skipped, l) {
				t.Errorf("%s: routing.unreachable not run with a reason naming %q: %q", c.name, l, skipped)
			}
		}
	}
}

// TestGateMovedSwitchLIDs: the SM swapped two leaves' LIDs since the
// sweep (leaf01 now 6, leaf02 now 5; leaf02/18 down). The gate read
// "leaf01" by LID 5 — leaf02's forwarding table and ports — and failed the
// job on them: critical routing.loop at leaf01 and error link.down on
// gpu003 mlx5_1's cable (leaf02/18 is the one down). Now the switches the
// gate read by LID have their NodeInfo checked there too: leaf01's LID
// moved, its ports are read again by directed route, and what rests on
// the LIDs is not judged.
func TestGateMovedSwitchLIDs(t *testing.T) {
	clean, err := sim.SampleHealthy(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	snap := sweptSim(t, clean)
	swap := "lid leaf01 lid=6\nlid leaf02 lid=5\nsweep\n"
	for _, c := range []struct {
		name, faults string
		status       string
		want         string // a finding that must stay
	}{
		{"leaves swapped", swap + "down leaf02/18\n", "undecided", ""},
		{"the job's own cable down", swap + "down leaf01/19\n", "unhealthy", "link.down"},
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
		doc, err := Run(context.Background(), snapAgain(t, snap), engineAt(t, live, "gpu020 mlx5_0"), Options{Hosts: []string{"gpu002", "gpu003"}, FailOn: checks.Error, ByLID: true, Source: "sim:test"})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, f := range doc.Findings {
			switch {
			case c.want != "" && f.Check == c.want && strings.Contains(f.Title, "leaf01/19"):
				found = true
			case f.Severity >= checks.Warning:
				t.Errorf("%s: %s %s %s", c.name, f.Severity, f.Check, f.Title)
			}
		}
		if c.want != "" && !found {
			t.Errorf("%s: no %s on leaf01/19", c.name, c.want)
		}
		if doc.Status != c.status {
			t.Errorf("%s: status %q, want %q", c.name, doc.Status, c.status)
		}
		skipped := ""
		for _, s := range doc.Skipped {
			if s.Check == "routing.loop" {
				skipped = s.Reason
			}
		}
		if !strings.Contains(skipped, "LID 5 now answers as leaf02") {
			t.Errorf("%s: routing.loop not run with a reason naming LID 5: %q", c.name, skipped)
		}
	}
}

// TestGateLIDMovedToFreeLID: an SM that reassigned LIDs without its
// guid2lid cache gives an HCA a LID nobody had as often as another's:
// the snapshot's LID then answers nobody and the HCA's PortInfo by LID is
// unread. At its place in the snapshot it answers as itself with its new
// LID: the LIDs changed since the sweep, and the routes to its old LID
// (which the SM no longer routes) are not judged. Before, the gate judged
// them: critical routing.unreachable "cannot reach gpu003 mlx5_1 (LID
// 30): no route (LFT entry 0xFF)", exit 1.
func TestGateLIDMovedToFreeLID(t *testing.T) {
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
	if err := os.WriteFile(ff, []byte("lid \"gpu003 mlx5_1\" lid=500\nsweep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := live.ApplyFaultsFile(ff); err != nil {
		t.Fatal(err)
	}
	doc, err := Run(context.Background(), snapAgain(t, snap), engineAt(t, live, "gpu020 mlx5_0"), Options{Hosts: []string{"gpu003", "gpu004"}, FailOn: checks.Error, ByLID: true, Source: "sim:test"})
	if err != nil {
		t.Fatal(err)
	}
	if doc.Status != "undecided" {
		t.Errorf("status %q, want undecided", doc.Status)
	}
	for _, f := range doc.Findings {
		if strings.HasPrefix(f.Check, "routing.") || f.Severity >= checks.Error {
			t.Errorf("%s %s %s: judged on the snapshot's LIDs", f.Severity, f.Check, f.Title)
		}
	}
	skipped := ""
	for _, s := range doc.Skipped {
		if s.Check == "routing.unreachable" {
			skipped = s.Reason
		}
	}
	if want := "gpu003 mlx5_1 now has LID 500, not 30"; !strings.Contains(skipped, want) {
		t.Errorf("routing.unreachable not run with a reason naming %q: %q", want, skipped)
	}
}
