package gate

import (
	"context"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/snapshot"
)

// TestGateSeesClonedGUID: after a clean sweep, gpu017 mlx5_1 reports
// gpu003 mlx5_1's NodeGUID (docs/faults.md dupguid: a bad firmware burn;
// its port GUID stays its own). The SM and the job's collective library
// key on that GUID, so a gate for a job on either host must not pass: it
// re-reads the job's HCAs' NodeInfo and reports the clone as the sweep
// does (topology.duplicate-guid, critical). Before, the gate re-read
// PortInfo only and passed the job (trial T4: exit 0, no findings).
func TestGateSeesClonedGUID(t *testing.T) {
	clean, err := sim.SampleHealthy(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	snap := sweptSim(t, clean)
	live, err := sim.SampleHealthy(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := live.DuplicateGUID("gpu003 mlx5_1", "gpu017 mlx5_1"); err != nil {
		t.Fatal(err)
	}
	for _, hosts := range [][]string{{"gpu003", "gpu017"}, {"gpu017"}} {
		for _, byLID := range []bool{false, true} {
			from := "gpu001 mlx5_0" // the sweep's port: directed routes
			if byLID {
				from = "gpu020 mlx5_0"
			}
			e := engineAt(t, live, from)
			doc, err := Run(context.Background(), snapAgain(t, snap), e, Options{Hosts: hosts, FailOn: checks.Error, ByLID: byLID, Source: "sim:test"})
			if err != nil {
				t.Fatal(err)
			}
			var dup []string
			for _, f := range doc.Findings {
				if f.Check == "topology.duplicate-guid" {
					dup = append(dup, f.Severity.String()+" "+f.Title)
					var names []string
					for _, e := range f.Entities {
						names = append(names, e.Node)
					}
					if got := strings.Join(names, ", "); got != "gpu003 mlx5_1, gpu017 mlx5_1" {
						t.Errorf("hosts %v: claimants %q, want gpu003 mlx5_1, gpu017 mlx5_1", hosts, got)
					}
				}
			}
			if doc.Status != "unhealthy" || len(dup) != 1 || !strings.HasPrefix(dup[0], "critical 2 nodes claim NodeGUID") {
				t.Errorf("hosts %v, by LID %v: status %q, duplicate-guid findings %q; findings %+v, unread %+v", hosts, byLID, doc.Status, dup, doc.Findings, doc.Unreached)
			}
		}
	}
	// An HCA that answers a GUID the snapshot does not have (a board
	// replaced since the sweep): the snapshot no longer describes it, so
	// the gate cannot vouch for it (undecided), not a duplicate.
	f, err := snapAgain(t, snap).FabricModel() // a copy: snap stays clean
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range f.Nodes {
		if n.Description == "gpu017 mlx5_1" {
			n.GUID = 0x0002c9030000beef
		}
	}
	f.Reindex()
	old, err := snapshot.New(f, nil, snap.TakenAt, snap.Source, snap.Version, snap.Complete)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := Run(context.Background(), old, engineAt(t, clean, "gpu020 mlx5_0"), Options{Hosts: []string{"gpu017"}, FailOn: checks.Error, ByLID: true, Source: "sim:test"})
	if err != nil {
		t.Fatal(err)
	}
	changed := 0
	for _, u := range doc.Unreached {
		if u.What == WhatNodeGUID && u.Where == "gpu017 mlx5_1" && strings.Contains(u.Reason, "not the snapshot's 0x0002c9030000beef") {
			changed++
		}
	}
	if doc.Status != "undecided" || changed != 1 {
		t.Errorf("replaced board: status %q, unread %+v, findings %+v", doc.Status, doc.Unreached, doc.Findings)
	}
	// The clean fabric passes, with one NodeInfo per job HCA more.
	e := engineAt(t, clean, "gpu020 mlx5_0")
	doc, err = Run(context.Background(), snapAgain(t, snap), e, Options{Hosts: []string{"gpu003", "gpu017"}, FailOn: checks.Error, ByLID: true, Source: "sim:test"})
	if err != nil {
		t.Fatal(err)
	}
	if doc.Status != "healthy" {
		t.Errorf("clean fabric: status %q, findings %+v, unread %+v", doc.Status, doc.Findings, doc.Unreached)
	}
}
