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
