package gate

import (
	"context"
	"slices"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/snapshot"
)

// TestGateHostCaseBothPaths (review R6): host names are case-insensitive
// (fabric.HostKey, trial F5), so a host whose HCAs rdma-ndd described in
// two cases ("gpu001 mlx5_0", "GPU001 mlx5_1": the hostname changed case
// between two boots) is one host, and a gate for it judges both HCAs,
// however the job names it and whether it answers from the snapshot's
// gate.idx (and baseline.idx) or from its own sweep: dropping one would
// let a job through on an HCA never looked at. Before, the snapshot found
// only the HCAs whose case matched the name exactly (the other case was
// looked for only when none did), its own sweep both.
func TestGateHostCaseBothPaths(t *testing.T) {
	// gpu001's second HCA is on another leaf than its first (leaf03,
	// gpu009's: the two swap descriptions), in upper case.
	f := build(t, twoHCAs)
	for _, n := range f.Nodes {
		switch n.Description {
		case "gpu001 mlx5_1":
			n.Description = "gpu009 mlx5_1"
		case "gpu009 mlx5_1":
			n.Description = "GPU001 mlx5_1"
		}
	}
	s, err := sim.New(f, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sw, err := diagnose.Run(context.Background(), engineAt(t, s, "gpu016 mlx5_0"), diagnose.Options{Routes: true, Counters: true})
	if err != nil {
		t.Fatal(err)
	}
	saved, err := snapshot.New(sw.Fabric, sw.Counters, sw.Taken, "sim:test", "test", sw.Complete)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := saved.Save(dir); err != nil {
		t.Fatal(err)
	}
	if err := snapshot.SaveBaseline(dir, f, "sim:test", true); err != nil {
		t.Fatal(err)
	}
	base, err := snapshot.OpenBaseline(dir)
	if err != nil || base == nil {
		t.Fatalf("baseline: %v", err)
	}
	t.Cleanup(func() { base.Close() })

	paths := []struct {
		name     string
		snap     func(t *testing.T) *snapshot.Snapshot
		baseline *snapshot.Index
	}{
		{"snapshot", func(t *testing.T) *snapshot.Snapshot {
			g, err := snapshot.LoadForGate(dir)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { g.Close() })
			return g
		}, nil},
		{"snapshot and baseline", nil, base},
		{"own sweep", func(t *testing.T) *snapshot.Snapshot {
			// As gate does without a usable snapshot: its sweep, unsaved.
			sw, err := diagnose.Run(context.Background(), engineAt(t, s, "gpu016 mlx5_0"), diagnose.Options{Routes: true, Counters: true})
			if err != nil {
				t.Fatal(err)
			}
			own, err := snapshot.New(sw.Fabric, sw.Counters, sw.Taken, "sim:test", "", sw.Complete)
			if err != nil {
				t.Fatal(err)
			}
			return own
		}, nil},
		{"own sweep and baseline", nil, base},
	}
	paths[1].snap, paths[3].snap = paths[0].snap, paths[2].snap
	// The job is the one host: the part of the snapshot a gate loads
	// holds its HCA on leaf03 only when the host lookup finds it.
	want := []string{"GPU001 mlx5_1", "gpu001 mlx5_0"}
	for _, host := range []string{"gpu001", "GPU001", "Gpu001", "gpu001.cluster.local"} {
		// The verdict (status and findings) is the own sweep's, whatever
		// the path.
		var verdict []string
		for _, p := range slices.Backward(paths) {
			t.Run(p.name+"/"+host, func(t *testing.T) {
				doc, err := Run(context.Background(), p.snap(t), engineAt(t, s, "gpu016 mlx5_0"), Options{
					Hosts: []string{host}, FailOn: checks.Error, ByLID: true, Counters: true, Baseline: p.baseline, Source: "sim:test",
				})
				if err != nil {
					t.Fatal(err)
				}
				if doc.Scope == nil {
					t.Fatalf("no scope: status %s", doc.Status)
				}
				got := slices.Sorted(slices.Values(doc.Scope.Hosts))
				if !slices.Equal(got, want) || len(doc.Scope.Unmatched) != 0 || doc.Scope.JobHosts != 1 {
					t.Errorf("HCAs %q, job hosts %d, unmatched %q; want %q", got, doc.Scope.JobHosts, doc.Scope.Unmatched, want)
				}
				v := []string{doc.Status}
				for _, f := range doc.Findings {
					v = append(v, f.Check+": "+f.Title)
					// Its two HCAs answer: none is missing (R6b).
					if f.Check == "topology.missing-hca" {
						t.Errorf("%s: %s", f.Check, f.Title)
					}
				}
				if verdict == nil {
					verdict = v
				} else if !slices.Equal(v, verdict) {
					t.Errorf("verdict %q, the own sweep's %q", v, verdict)
				}
			})
		}
	}
}
