package gate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/snapshot"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
)

// twoHCAs: 16 servers of 2 HCAs each (gpu001..gpu016, mlx5_0 and mlx5_1).
var twoHCAs = topology.FatTree2{Leaves: 4, Spines: 4, HostsPerLeaf: 8, Hosts: topology.Hosts{HCAsPerServer: 2}}

// stateOf sweeps s into a new state dir with base as its accepted
// baseline (none when nil) and opens it as the gate command does.
func stateOf(t *testing.T, s *sim.Sim, withBaseline bool) (*snapshot.Snapshot, *snapshot.Index) {
	t.Helper()
	sw, err := diagnose.Run(context.Background(), engineAt(t, s, "gpu016 mlx5_0"), diagnose.Options{Routes: true, Counters: true})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.New(sw.Fabric, sw.Counters, sw.Taken, "sim:test", "test", sw.Complete)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := snap.Save(dir); err != nil {
		t.Fatal(err)
	}
	if withBaseline {
		if err := snapshot.SaveBaseline(dir, build(t, twoHCAs), "sim:test", false); err != nil {
			t.Fatal(err)
		}
	}
	g, err := snapshot.LoadForGate(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	base, err := snapshot.OpenBaseline(dir)
	if err != nil {
		t.Fatal(err)
	}
	if withBaseline == (base == nil) {
		t.Fatalf("baseline %v, want %v", base != nil, withBaseline)
	}
	return g, base
}

// liveSim is the fabric with the given HCA ports down.
func liveSim(t *testing.T, down ...string) *sim.Sim {
	t.Helper()
	s, err := sim.New(build(t, twoHCAs), sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range down {
		if err := s.Down(p); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// TestGateHCADown (#17): a job host's HCA whose link is down fails the
// gate with checks' link.down naming the switch port and the HCA port,
// whether it went down before the sweep (only the accepted baseline has
// the HCA) or after it (the live re-read finds the link down), and when
// all of a host's HCAs are down. Before, the gate passed the host's other
// HCA ("healthy"), or called the host unknown.
func TestGateHCADown(t *testing.T) {
	fast := func(s *sim.Sim) *transport.Engine {
		c, err := s.Attach("gpu016 mlx5_0", 1)
		if err != nil {
			t.Fatal(err)
		}
		e := transport.NewEngine(c, transport.Options{Timeout: 250 * time.Millisecond, Retries: -1})
		t.Cleanup(func() { e.Close(); c.Close() })
		return e
	}
	cases := []struct {
		name       string
		atSweep    []string // down when the sweep ran (and still)
		atGate     []string // down only at the gate
		baseline   bool
		hosts      []string
		wantLinks  []string // "switch/port HCA" named by link.down
		wantStatus string
	}{
		{"one of two HCAs down at sweep", []string{"gpu002 mlx5_0/1"}, nil, true, []string{"gpu002", "gpu005"}, []string{"gpu002 mlx5_0"}, "unhealthy"},
		{"one of two HCAs down after sweep", nil, []string{"gpu002 mlx5_0/1"}, true, []string{"gpu002", "gpu005"}, []string{"gpu002 mlx5_0"}, "unhealthy"},
		{"down after sweep, no baseline", nil, []string{"gpu002 mlx5_0/1"}, false, []string{"gpu002", "gpu005"}, []string{"gpu002 mlx5_0"}, "unhealthy"},
		{"whole host down at sweep", []string{"gpu003 mlx5_0/1", "gpu003 mlx5_1/1"}, nil, true, []string{"gpu003", "gpu005"}, []string{"gpu003 mlx5_0", "gpu003 mlx5_1"}, "unhealthy"},
		{"healthy", nil, nil, true, []string{"gpu002", "gpu005"}, nil, "healthy"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			snap, base := stateOf(t, liveSim(t, c.atSweep...), c.baseline)
			o := Options{Hosts: c.hosts, FailOn: checks.Error, ByLID: true, Source: "sim:test", Counters: true, Baseline: base}
			doc, err := Run(context.Background(), snap, fast(liveSim(t, append(c.atSweep, c.atGate...)...)), o)
			if err != nil {
				t.Fatal(err)
			}
			if doc.Status != c.wantStatus {
				t.Fatalf("status %q, want %q\nfindings %+v\nunreached %+v\nundecided %+v", doc.Status, c.wantStatus, doc.Findings, doc.Unreached, doc.Undecided)
			}
			for _, hca := range c.wantLinks {
				found := false
				for _, f := range doc.Findings {
					found = found || (f.Check == "link.down" && len(f.Entities) == 2 && f.Entities[0].Port > 0 &&
						strings.HasPrefix(f.Entities[0].Node, "leaf") && f.Entities[1].Node == hca && f.Entities[1].Port == 1)
				}
				if !found {
					t.Errorf("no link.down naming a leaf port and %s/1: %+v", hca, doc.Findings)
				}
			}
			if len(doc.Scope.Unmatched) != 0 {
				t.Errorf("hosts called unknown: %v", doc.Scope.Unmatched)
			}
			// The HCAs link.down names are the job's (scope.hosts), so
			// a prolog drains their host (trial G5: before, a host whose
			// every HCA was gone from the snapshot was left out).
			for _, hca := range c.wantLinks {
				if !slices.Contains(doc.Scope.Hosts, hca) {
					t.Errorf("scope.hosts %v lacks %s, which link.down names", doc.Scope.Hosts, hca)
				}
			}
		})
	}
}

// TestGateNoSMFolded: without a subnet manager nothing has a LID, so
// nothing the gate re-reads by LID can be addressed: one entry under
// sm.no-master, not one per port. (Before, a gate for two hosts on the
// sample fabric listed 34.)
func TestGateNoSMFolded(t *testing.T) {
	s := liveSim(t)
	s.NoSM()
	snap, _ := stateOf(t, s, false)
	doc, err := Run(context.Background(), snap, engineAt(t, s, "gpu016 mlx5_0"), Options{Hosts: []string{"gpu002", "gpu005"}, FailOn: checks.Error, ByLID: true, Counters: true})
	if err != nil {
		t.Fatal(err)
	}
	if doc.Status != "unhealthy" || len(doc.Unreached) != 1 || !strings.Contains(doc.Unreached[0].Reason, "no master SM") {
		t.Errorf("status %q, unreached %+v", doc.Status, doc.Unreached)
	}
}

// TestGateSMDiedInit: after a clean sweep the only SM died and the links
// retrained: the job's ports are in Init with their LIDs kept (so they
// can still be re-read by LID). check judges that sm.no-master; the gate
// must give the same root cause on what it re-read, not pass because the
// rest of the snapshot still says Active (TestGateNoSMFolded covers ports
// without a LID).
func TestGateSMDiedInit(t *testing.T) {
	s := liveSim(t)
	snap, _ := stateOf(t, s, false)
	s.SMDied()
	doc, err := Run(context.Background(), snap, engineAt(t, s, "gpu016 mlx5_0"), Options{Hosts: []string{"gpu002", "gpu005"}, FailOn: checks.Error, ByLID: true, Counters: true})
	if err != nil {
		t.Fatal(err)
	}
	if doc.Status != "unhealthy" || len(doc.Findings) == 0 || doc.Findings[0].Check != "sm.no-master" {
		for _, f := range doc.Findings {
			t.Logf("finding %s %s", f.Check, f.Title)
		}
		t.Errorf("status %q, unreached %+v; want sm.no-master first", doc.Status, doc.Unreached)
	}
}

// TestGateLeafPortDisabledStale (trial F3): after the sweep the job
// host's leaf port is disabled, and its PortInfo reads PhysState Disabled
// with PortState still Active (ibsim's `ibportstate ... disable`; on
// hardware the moment before PortState follows). Discovery calls such a
// port linkless by its PhysState; the gate's re-read must too, and judge
// link.down at error as check does. Before, the gate kept the port cabled
// to the HCA, asked the HCA behind it and exited undecided ("gpu002
// mlx5_0 did not answer").
func TestGateLeafPortDisabledStale(t *testing.T) {
	hca := build(t, twoHCAs).NodesByName("gpu002 mlx5_0")[0].Ports[1].Remote
	leafPort := fmt.Sprintf("%s/%d", hca.Node.Description, hca.Num)
	snap, base := stateOf(t, liveSim(t), true)
	live := liveSim(t)
	if err := live.DisabledStale(leafPort); err != nil {
		t.Fatal(err)
	}
	c, err := live.Attach("gpu016 mlx5_0", 1)
	if err != nil {
		t.Fatal(err)
	}
	e := transport.NewEngine(c, transport.Options{Timeout: 250 * time.Millisecond, Retries: -1})
	t.Cleanup(func() { e.Close(); c.Close() })
	o := Options{Hosts: []string{"gpu002", "gpu005"}, FailOn: checks.Error, ByLID: true, Source: "sim:test", Counters: true, Baseline: base}
	doc, err := Run(context.Background(), snap, e, o)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Status != "unhealthy" || len(doc.Undecided) != 0 {
		t.Fatalf("status %q, want unhealthy with nothing undecided\nfindings %+v\nunreached %+v\nundecided %+v", doc.Status, doc.Findings, doc.Unreached, doc.Undecided)
	}
	found := false
	for _, f := range doc.Findings {
		found = found || (f.Check == "link.down" && f.Severity == checks.Error && len(f.Entities) == 2 &&
			f.Entities[0].Node == hca.Node.Description && f.Entities[0].Port == int(hca.Num) && f.Entities[1].Node == "gpu002 mlx5_0")
	}
	if !found {
		t.Errorf("no link.down at error naming %s and gpu002 mlx5_0: %+v", leafPort, doc.Findings)
	}
}
