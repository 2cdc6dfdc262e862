package diagnose

import (
	"context"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// simFabric builds a routed fat tree in the simulator: 4 leaves x 8
// hosts, 4 spines; faults applies faults before the sweep.
func simFabric(t *testing.T, faults func(s *sim.Sim, f *fabric.Fabric)) *transport.Engine {
	t.Helper()
	f, err := topology.Routed(topology.FatTree2{Leaves: 4, Spines: 4, HostsPerLeaf: 8})
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.New(f, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if faults != nil {
		faults(s, f)
	}
	c, err := s.Attach("gpu001 mlx5_0", 1)
	if err != nil {
		t.Fatal(err)
	}
	e := transport.NewEngine(c, transport.Options{Timeout: 200e6, Retries: 1})
	t.Cleanup(func() { e.Close(); c.Close() })
	return e
}

func sweep(t *testing.T, e *transport.Engine) (*Sweep, *checks.Result) {
	t.Helper()
	sw, err := Run(context.Background(), e, Options{Routes: true, Counters: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := checks.Run(sw.Snapshot(checks.Expectations{}, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	return sw, res
}

func TestSweepHealthyFabric(t *testing.T) {
	sw, res := sweep(t, simFabric(t, nil))
	sum := Summarize(sw.Fabric)
	if sum.Nodes != 40 || sum.Switches != 8 || sum.CAs != 32 || sum.Links != 48 {
		t.Errorf("summary %+v, want 40 nodes, 8 switches, 32 CAs, 48 links", sum)
	}
	if !sw.Complete {
		t.Errorf("healthy sweep incomplete: %+v", sw.Unreached)
	}
	for _, f := range res.Findings {
		if f.Severity >= checks.Warning {
			t.Errorf("false positive: %s %s", f.Check, f.Title)
		}
	}
	d := sw.Document("check", "sim:test", res, checks.Error)
	if d.Status != "healthy" || d.Fabric.SwitchesRouted != 8 {
		t.Errorf("document status %q, switches routed %d", d.Status, d.Fabric.SwitchesRouted)
	}
}

func TestSweepFindsInjectedFaults(t *testing.T) {
	var dst uint16
	e := simFabric(t, func(s *sim.Sim, f *fabric.Fabric) {
		if err := s.Degrade("leaf02/10", mad.Width1X, 0); err != nil {
			t.Fatal(err)
		}
		if err := s.Degrade("gpu030 mlx5_0/1", mad.Width1X, 0); err != nil {
			t.Fatal(err)
		}
		for _, n := range f.Nodes {
			if strings.HasPrefix(n.Description, "gpu020") {
				dst = n.Ports[1].LID
			}
		}
		if err := s.Blackhole("leaf01", dst); err != nil {
			t.Fatal(err)
		}
	})
	sw, res := sweep(t, e)
	fs := res.Findings
	if len(fs) < 3 {
		t.Fatalf("findings: %+v", fs)
	}
	// Worst first: the black hole and the 1X spine uplink are critical,
	// the 1X host link an error.
	if fs[0].Severity != checks.Critical || fs[1].Severity != checks.Critical {
		t.Errorf("top two: %s %q, %s %q", fs[0].Severity, fs[0].Title, fs[1].Severity, fs[1].Title)
	}
	got := map[string]bool{}
	for _, f := range fs {
		got[f.Check+" "+f.Title] = true
	}
	want := []string{
		"link.degraded-width Link leaf02/10 <-> spine02/2 trained at 1X instead of 4X",
		"routing.unreachable 8 hosts cannot reach gpu020 mlx5_0 (LID ",
		"link.degraded-width Link gpu030 mlx5_0/1 <-> leaf04/6 trained at 1X instead of 4X",
	}
	for _, w := range want {
		found := false
		for k := range got {
			if strings.HasPrefix(k, w) {
				found = true
			}
		}
		if !found {
			t.Errorf("missing finding %q in %v", w, got)
		}
	}
	d := sw.Document("check", "sim:test", res, checks.Error)
	if d.Status != "unhealthy" {
		t.Errorf("status %q", d.Status)
	}
}

func TestSweepPartialFabric(t *testing.T) {
	e := simFabric(t, func(s *sim.Sim, f *fabric.Fabric) {
		if err := s.Kill("spine03"); err != nil {
			t.Fatal(err)
		}
	})
	sw, res := sweep(t, e)
	if sw.Complete {
		t.Error("sweep with a dead spine reported complete")
	}
	if d := sw.Document("check", "sim:test", res, checks.Critical); d.Status == "healthy" {
		t.Errorf("a partial sweep must not be healthy: %q", d.Status)
	}
	// Could not look is no finding: the spine is in the unreached list.
	for _, f := range res.Findings {
		if f.Severity >= checks.Warning {
			t.Errorf("finding for a dead agent: %s %s", f.Check, f.Title)
		}
	}
	if len(sw.Unreached) == 0 {
		t.Error("nothing listed as not read")
	}
}

// TestSweepNoSMFoldsUnreadCounters: without a subnet manager no port has
// a LID, so no PerfMgt MAD can be addressed. Those ports stay unread
// (the sweep is incomplete) but are one entry under sm.no-master's root
// cause, not one per port. (Failed before: 64 "address" entries here,
// 767 on the sample fabric.)
func TestSweepNoSMFoldsUnreadCounters(t *testing.T) {
	sw, res := sweep(t, simFabric(t, func(s *sim.Sim, _ *fabric.Fabric) { s.NoSM() }))
	hasRoot := false
	for _, f := range res.Findings {
		hasRoot = hasRoot || f.Check == "sm.no-master"
	}
	if !hasRoot {
		t.Fatalf("no sm.no-master finding")
	}
	d := sw.Document("check", "sim:test", res, checks.Error)
	if d.Complete || len(d.Unreached) != 1 {
		t.Fatalf("complete %v, %d unreached entries, want 1: %+v", d.Complete, len(d.Unreached), d.Unreached[:min(3, len(d.Unreached))])
	}
	u := d.Unreached[0]
	if u.What != "LID-routed reads" || !strings.HasSuffix(u.Where, " ports") || !strings.Contains(u.Reason, "no LIDs, no master SM") {
		t.Errorf("folded entry %+v", u)
	}

	// With an SM, a port without a LID is its own entry (no root cause).
	sw, res = sweep(t, simFabric(t, func(s *sim.Sim, _ *fabric.Fabric) {
		if err := s.SetLID("gpu003 mlx5_0/1", 0, 0); err != nil {
			t.Fatal(err)
		}
	}))
	d = sw.Document("check", "sim:test", res, checks.Error)
	found := false
	for _, u := range d.Unreached {
		found = found || (u.What == "address" && strings.HasPrefix(u.Where, "gpu003 mlx5_0 port 1"))
	}
	if !found {
		t.Errorf("a port without a LID under a running SM is not listed: %+v", d.Unreached)
	}
}
