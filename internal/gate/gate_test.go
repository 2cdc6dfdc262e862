package gate

import (
	"context"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/snapshot"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

func build(t testing.TB, tree topology.FatTree2) *fabric.Fabric {
	t.Helper()
	f, err := topology.Routed(tree)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// sweptSnapshot sweeps a fresh simulator of f (from gpu001) and returns a
// snapshot round-tripped through its JSON form, as gate reads it.
func sweptSnapshot(t testing.TB, f *fabric.Fabric) *snapshot.Snapshot {
	t.Helper()
	s, err := sim.New(f, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return sweptSim(t, s)
}

// sweptSim is sweptSnapshot of a simulator already made (faults planted).
func sweptSim(t testing.TB, s *sim.Sim) *snapshot.Snapshot {
	t.Helper()
	e := engineAt(t, s, "gpu001 mlx5_0")
	sw, err := diagnose.Run(context.Background(), e, diagnose.Options{Routes: true})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.New(sw.Fabric, nil, sw.Taken, "sim:test", "test", sw.Complete)
	if err != nil {
		t.Fatal(err)
	}
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

func engineAt(t testing.TB, s *sim.Sim, node string) *transport.Engine {
	c, err := s.Attach(node, 1)
	if err != nil {
		t.Fatal(err)
	}
	e := transport.NewEngine(c, transport.Options{Timeout: 200 * time.Millisecond, Retries: 1})
	t.Cleanup(func() { e.Close(); c.Close() })
	return e
}

func TestGate(t *testing.T) {
	tree := topology.FatTree2{Leaves: 4, Spines: 4, HostsPerLeaf: 8}
	snap := sweptSnapshot(t, build(t, tree))

	// The live fabric, now with faults; the gate runs on another host
	// than the sweep did, so it re-reads by LID.
	live, err := sim.New(build(t, tree), sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := live.Degrade("leaf04/11", mad.Width1X, 0); err != nil { // not on the job's routes
		t.Fatal(err)
	}
	e := engineAt(t, live, "gpu020 mlx5_0")
	job := Options{Hosts: []string{"gpu001", "gpu009"}, FailOn: checks.Error, ByLID: true, Source: "sim:test"}

	doc, err := Run(context.Background(), snap, e, job)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Status != "healthy" || doc.Scope == nil || len(doc.Scope.Hosts) != 2 {
		t.Fatalf("gate with a fault off the job's routes: status %q, findings %+v", doc.Status, doc.Findings)
	}

	// A degraded host link of the job fails the gate.
	if err := live.Degrade("gpu009 mlx5_0/1", mad.Width1X, 0); err != nil {
		t.Fatal(err)
	}
	doc, err = Run(context.Background(), snapAgain(t, snap), e, job)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Status != "unhealthy" || len(doc.Findings) == 0 || doc.Findings[0].Check != "link.degraded-width" {
		t.Fatalf("gate with the job's host link at 1X: status %q, findings %+v", doc.Status, doc.Findings)
	}

	// A host that is not in the fabric: never healthy.
	job.Hosts = []string{"gpu001", "gpu999"}
	doc, err = Run(context.Background(), snapAgain(t, snap), e, job)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Status != "undecided" || len(doc.Scope.Unmatched) != 1 {
		t.Fatalf("gate with an unknown host: status %q, unmatched %v", doc.Status, doc.Scope.Unmatched)
	}

	// A switch on the routes that stops answering: never healthy.
	if err := live.Kill("leaf02"); err != nil {
		t.Fatal(err)
	}
	job.Hosts = []string{"gpu001", "gpu009"}
	doc, err = Run(context.Background(), snapAgain(t, snap), e, job)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Status == "healthy" {
		t.Fatalf("gate with a dead leaf on the routes said healthy")
	}
}

// snapAgain returns a fresh copy (gate mutates the fabric it refreshes).
func snapAgain(t testing.TB, s *snapshot.Snapshot) *snapshot.Snapshot {
	t.Helper()
	f, err := s.FabricModel()
	if err != nil {
		t.Fatal(err)
	}
	data, err := fabric.MarshalWith(f, fabric.MarshalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	c, err := snapshot.New(g, nil, s.TakenAt, s.Source, s.Version, s.Complete)
	if err != nil {
		t.Fatal(err)
	}
	// The saved counters (in gate.idx when s was loaded), by port key.
	c.Counters = map[string]snapshot.PortCounters{}
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil {
				continue
			}
			if pc, ok := s.SavedCounters(p); ok {
				c.Counters[snapshot.Key(p)] = pc
			}
		}
	}
	return c
}

func TestResolve(t *testing.T) {
	f := build(t, topology.FatTree2{Leaves: 2, Spines: 2, HostsPerLeaf: 4, Hosts: topology.Hosts{HCAsPerServer: 2}})
	nodes, unmatched := Resolve(f, []string{"gpu001", "gpu004", "gpu010"}, nil)
	if len(nodes) != 4 || len(unmatched) != 1 || unmatched[0] != "gpu010" {
		t.Fatalf("nodes %d unmatched %v", len(nodes), unmatched)
	}
	names := fabric.NodeNameMap{nodes[0].GUID: "node-a", nodes[1].GUID: "node-a"}
	nodes, _ = Resolve(f, []string{"node-a"}, names)
	if len(nodes) != 2 {
		t.Fatalf("by node-name map: %d nodes", len(nodes))
	}
}
