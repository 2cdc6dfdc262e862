package gate

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/snapshot"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// classTap counts the requests an engine sends, by management class.
type classTap struct{ perf, smp atomic.Int64 }

func (c *classTap) Record(sent bool, _ transport.Addr, m []byte, _ time.Time) {
	if !sent || len(m) < 4 || m[3]&0x80 != 0 {
		return
	}
	switch mad.Class(m[1]) {
	case mad.ClassPerfMgt:
		c.perf.Add(1)
	case mad.ClassSubnLID, mad.ClassSubnDR:
		c.smp.Add(1)
	}
}

func tappedEngine(t testing.TB, s *sim.Sim, node string, tap transport.Tap) *transport.Engine {
	t.Helper()
	c, err := s.Attach(node, 1)
	if err != nil {
		t.Fatal(err)
	}
	e := transport.NewEngine(c, transport.Options{Timeout: 200 * time.Millisecond, Retries: 1, Tap: tap})
	t.Cleanup(func() { e.Close(); c.Close() })
	return e
}

// sweptWithCounters is sweptSnapshot with the counters saved, as the
// sweep command keeps them.
func sweptWithCounters(t testing.TB, f *fabric.Fabric) *snapshot.Snapshot {
	t.Helper()
	s, err := sim.New(f, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := engineAt(t, s, "gpu001 mlx5_0")
	sw, err := diagnose.Run(context.Background(), e, diagnose.Options{Routes: true, Counters: true})
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
	back, err := snapshot.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

var tree4x4 = topology.FatTree2{Leaves: 4, Spines: 4, HostsPerLeaf: 8}

// job is gpu001 (leaf01) and gpu009 (leaf02), gated from gpu020 by LID.
func job() Options {
	return Options{Hosts: []string{"gpu001", "gpu009"}, FailOn: checks.Warning, ByLID: true, Source: "sim:test", Counters: true}
}

// TestGateCountersLive: counters that grew on the job's route since the
// sweep fail the gate, judged by checks' counters.errors; the gate sends
// PerfMgt MADs only for the ports on the routes.
func TestGateCountersLive(t *testing.T) {
	snap := sweptWithCounters(t, build(t, tree4x4))
	live, err := sim.New(build(t, tree4x4), sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, _ := snap.FabricModel()
	up := uplinkTo(t, f, "leaf01", "gpu009")
	if err := live.SetCounter(fmt.Sprintf("leaf01/%d", up), "SymbolErrorCounter", 5000); err != nil {
		t.Fatal(err)
	}
	if err := live.SetCounter("leaf04/1", "PortRcvErrors", 500); err != nil { // off the routes
		t.Fatal(err)
	}
	tap := &classTap{}
	e := tappedEngine(t, live, "gpu020 mlx5_0", tap)
	doc, err := Run(context.Background(), snapAgain(t, snap), e, job())
	if err != nil {
		t.Fatal(err)
	}
	if doc.Status != "unhealthy" || len(doc.Findings) != 1 {
		t.Fatalf("status %q, findings %+v", doc.Status, doc.Findings)
	}
	fd := doc.Findings[0]
	if fd.Check != "counters.errors" || fd.Basis != "since-snapshot" || fd.Entities[0].Node != "leaf01" || fd.Entities[0].Port != int(up) {
		t.Errorf("finding %s %s %q %+v", fd.Check, fd.Basis, fd.Title, fd.Entities)
	}
	// ClassPortInfo per PMA plus one read per port on the routes.
	if n := tap.perf.Load(); n == 0 || int(n) > 2*doc.Scope.Ports {
		t.Errorf("%d PerfMgt requests for %d ports in scope", n, doc.Scope.Ports)
	}
	t.Logf("%d PerfMgt and %d SMP requests for %d ports in scope", tap.perf.Load(), tap.smp.Load(), doc.Scope.Ports)
}

// uplinkTo returns the port sw's table sends host's LID out of.
func uplinkTo(t testing.TB, f *fabric.Fabric, sw, host string) uint8 {
	t.Helper()
	s := f.NodesByHost(sw)[0]
	h := f.NodesByHost(host)[0]
	return s.Switch.LFT.At(h.Ports[1].LID)
}

// otherUplink returns an uplink of leaf (cabled to a spine) that the
// snapshot's routes among the job's hosts do not cross.
func otherUplink(t testing.TB, f *fabric.Fabric, leaf string, hosts []string) uint8 {
	t.Helper()
	var nodes []*fabric.Node
	for _, h := range hosts {
		nodes = append(nodes, f.NodesByHost(h)[0])
	}
	sc := checks.ScopeFor(f, nodes)
	for _, p := range f.NodesByHost(leaf)[0].Ports {
		if p != nil && p.Num != 0 && p.Remote != nil && p.Remote.Node.Type == mad.NodeSwitch && !sc.Ports[p] {
			return p.Num
		}
	}
	t.Fatalf("every uplink of %s is on the job's routes", leaf)
	return 0
}

// TestGateFollowsLiveRoutes: after the sweep the SM moved the route from
// gpu001's leaf to gpu009 onto another uplink, and that link retrained at
// 1X. The gate must judge the new route (re-reading the LFT block of
// gpu009's LID on the way), fail, and name the link.
func TestGateFollowsLiveRoutes(t *testing.T) {
	snap := sweptWithCounters(t, build(t, tree4x4))
	f, _ := snap.FabricModel()
	newUp := otherUplink(t, f, "leaf01", []string{"gpu001", "gpu009"})
	dst := f.NodesByHost("gpu009")[0].Ports[1].LID

	live, err := sim.New(build(t, tree4x4), sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := live.SetRoute("leaf01", dst, newUp); err != nil {
		t.Fatal(err)
	}
	if err := live.Degrade(fmt.Sprintf("leaf01/%d", newUp), mad.Width1X, 0); err != nil {
		t.Fatal(err)
	}
	e := engineAt(t, live, "gpu020 mlx5_0")
	doc, err := Run(context.Background(), snapAgain(t, snap), e, job())
	if err != nil {
		t.Fatal(err)
	}
	if doc.Status != "unhealthy" {
		t.Fatalf("a 1X link on the live route: status %q, findings %+v, unreached %+v", doc.Status, doc.Findings, doc.Unreached)
	}
	if !names(doc, "link.degraded-width", "leaf01", int(newUp)) {
		t.Errorf("no link.degraded-width finding naming leaf01/%d: %+v", newUp, doc.Findings)
	}
	if doc.Scope.LFTBlocks == 0 {
		t.Errorf("no forwarding-table block re-read")
	}
}

// TestGateAfterRerouteAroundFault: a link on the job's route went down
// after the sweep and the SM routed around it. The job's routes deliver:
// the gate passes, with no stale "cannot reach" from the old tables.
func TestGateAfterRerouteAroundFault(t *testing.T) {
	snap := sweptWithCounters(t, build(t, tree4x4))
	f, _ := snap.FabricModel()
	old := uplinkTo(t, f, "leaf01", "gpu009")

	live, err := sim.New(build(t, tree4x4), sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := live.Down(fmt.Sprintf("leaf01/%d", old)); err != nil {
		t.Fatal(err)
	}
	if err := live.Sweep(); err != nil {
		t.Fatal(err)
	}
	e := engineAt(t, live, "gpu020 mlx5_0")
	doc, err := Run(context.Background(), snapAgain(t, snap), e, job())
	if err != nil {
		t.Fatal(err)
	}
	if doc.Status != "healthy" {
		t.Fatalf("rerouted around a down link: status %q, findings %+v, unreached %+v", doc.Status, doc.Findings, doc.Unreached)
	}

	// The same fault without the SM's reroute: the job's route is broken.
	live, err = sim.New(build(t, tree4x4), sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := live.Down(fmt.Sprintf("leaf01/%d", old)); err != nil {
		t.Fatal(err)
	}
	// MADs through the broken link are lost: time them out quickly.
	c, err := live.Attach("gpu020 mlx5_0", 1)
	if err != nil {
		t.Fatal(err)
	}
	e = transport.NewEngine(c, transport.Options{Timeout: 20 * time.Millisecond, Retries: -1})
	t.Cleanup(func() { e.Close(); c.Close() })
	doc, err = Run(context.Background(), snapAgain(t, snap), e, job())
	if err != nil {
		t.Fatal(err)
	}
	if doc.Status == "healthy" {
		t.Fatalf("a down link on the live route: healthy")
	}
}

// names reports whether doc has a finding of check naming node/port (as
// the port or its peer).
func names(doc *report.Document, check, node string, port int) bool {
	for _, f := range doc.Findings {
		if f.Check != check {
			continue
		}
		for _, en := range f.Entities {
			if en.Node == node && en.Port == port {
				return true
			}
		}
	}
	return false
}

// TestGateRouteOutOfUnknownPort: the sweep saw an uplink of leaf01 without
// a link (the cable was not trained); now it is up and the job's route
// uses it. What is behind it was never read: the gate cannot decide.
func TestGateRouteOutOfUnknownPort(t *testing.T) {
	f := build(t, tree4x4)
	s, err := sim.New(f, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	up := otherUplink(t, f, "leaf01", []string{"gpu001", "gpu009"})
	if err := s.Polling(fmt.Sprintf("leaf01/%d", up)); err != nil {
		t.Fatal(err)
	}
	sw, err := diagnose.Run(context.Background(), engineAt(t, s, "gpu001 mlx5_0"), diagnose.Options{Routes: true, Counters: true})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.New(sw.Fabric, sw.Counters, sw.Taken, "sim:test", "test", sw.Complete)
	if err != nil {
		t.Fatal(err)
	}
	dst := f.NodesByHost("gpu009")[0].Ports[1].LID

	live, err := sim.New(build(t, tree4x4), sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := live.SetRoute("leaf01", dst, up); err != nil {
		t.Fatal(err)
	}
	// (fail on error: the snapshot's leaf01 has an uplink fewer, which
	// topology.oversubscribed warns about)
	o := job()
	o.FailOn = checks.Error
	doc, err := Run(context.Background(), snap, engineAt(t, live, "gpu020 mlx5_0"), o)
	if err != nil {
		t.Fatal(err)
	}
	where := fmt.Sprintf("leaf01 port %d", up)
	found := false
	for _, u := range doc.Unreached {
		found = found || (u.What == "link" && u.Where == where)
	}
	if doc.Status != "undecided" || !found {
		t.Errorf("status %q, unreached %+v, findings %+v; want undecided naming %s", doc.Status, doc.Unreached, doc.Findings, where)
	}
}

// TestGateInterval: with an interval the gate reads the route's counters
// twice and judges their climb over it (basis delta), as check does.
func TestGateInterval(t *testing.T) {
	snap := sweptWithCounters(t, build(t, tree4x4))
	f, _ := snap.FabricModel()
	up := uplinkTo(t, f, "leaf01", "gpu009")
	clk := sim.NewManualClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	live, err := sim.New(build(t, tree4x4), sim.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	if err := live.CounterRate(fmt.Sprintf("leaf01/%d", up), "SymbolErrorCounter", 40); err != nil {
		t.Fatal(err)
	}
	o := job()
	o.Interval = 10 * time.Second
	o.Sleep = func(ctx context.Context, d time.Duration) error { clk.Advance(d); return nil }
	o.Clock = clk.Now
	doc, err := Run(context.Background(), snapAgain(t, snap), engineAt(t, live, "gpu020 mlx5_0"), o)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Status != "unhealthy" || len(doc.Findings) == 0 || doc.Findings[0].Basis != "delta" || !strings.Contains(doc.Findings[0].Title, "+400 in 10s") {
		t.Fatalf("status %q findings %+v", doc.Status, doc.Findings)
	}
	if doc.Interval != "10s" {
		t.Errorf("interval %q", doc.Interval)
	}
}

// TestGatePartitions: the job's two hosts are in different partitions
// now (their P_Key tables share none): they cannot talk, so the job must
// not start. The gate reads the job's P_Key tables live and fails with
// partition.isolated; it passed before (it read no P_Keys).
func TestGatePartitions(t *testing.T) {
	snap := sweptWithCounters(t, build(t, tree4x4))
	live, err := sim.New(build(t, tree4x4), sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := live.SetPKeys("gpu001 mlx5_0/1", []mad.PKey{0x8001}, nil); err != nil {
		t.Fatal(err)
	}
	if err := live.SetPKeys("gpu009 mlx5_0/1", []mad.PKey{0x8002}, nil); err != nil {
		t.Fatal(err)
	}
	doc, err := Run(context.Background(), snapAgain(t, snap), engineAt(t, live, "gpu020 mlx5_0"), job())
	if err != nil {
		t.Fatal(err)
	}
	if doc.Status != "unhealthy" || len(doc.Findings) != 1 || doc.Findings[0].Check != "partition.isolated" || doc.Findings[0].Severity != checks.Critical {
		t.Fatalf("status %q, findings %+v", doc.Status, doc.Findings)
	}
	t.Log(doc.Findings[0].Title)
}

// TestGateIntervalOffRouteUplinks (trial T13): with --interval, a job on
// one leaf (gpu001, gpu002: no uplink on its routes) and a job over two
// leaves (gpu001, gpu009) are healthy. Before, routing.traffic-imbalance
// was undecided on the uplinks the gate had no reason to read — leaf01's
// for the one-leaf job, and for the two-leaf job spine ports down to
// leaves the job does not use, taken for "uplinks" because those leaves'
// hosts are not in the gate's part of the fabric — and the gate exited 2.
func TestGateIntervalOffRouteUplinks(t *testing.T) {
	snap := sweptWithCounters(t, build(t, tree4x4))
	for _, hosts := range [][]string{{"gpu001", "gpu002"}, {"gpu001", "gpu009"}} {
		clk := sim.NewManualClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		live, err := sim.New(build(t, tree4x4), sim.Options{Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		o := job()
		o.Hosts = hosts
		o.Interval = 10 * time.Second
		o.Sleep = func(ctx context.Context, d time.Duration) error { clk.Advance(d); return nil }
		o.Clock = clk.Now
		doc, err := Run(context.Background(), snapAgain(t, snap), engineAt(t, live, "gpu020 mlx5_0"), o)
		if err != nil {
			t.Fatal(err)
		}
		if doc.Status != "healthy" || len(doc.Undecided) > 0 {
			t.Errorf("%v: status %q, want healthy; undecided %+v; findings %+v", hosts, doc.Status, doc.Undecided, doc.Findings)
		}
	}
}

// TestGateDownISLOnRoute (trial T14): the cable between leaf01 and the
// spine the job's route to gpu009 crosses went down since the sweep. The
// gate, run from gpu001 where the sweep ran (directed routes: LID-routed
// MADs over the down cable would be lost), names it: link.down against
// the snapshot's cable, as a host's own cable is. Before, only
// routing.unreachable said "egress port is down or uncabled" and advised
// fixing the subnet manager's tables.
func TestGateDownISLOnRoute(t *testing.T) {
	snap := sweptWithCounters(t, build(t, tree4x4))
	f, _ := snap.FabricModel()
	up := uplinkTo(t, f, "leaf01", "gpu009")
	spine := f.NodesByHost("leaf01")[0].Ports[up].Remote
	live, err := sim.New(build(t, tree4x4), sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := live.Down(fmt.Sprintf("leaf01/%d", up)); err != nil {
		t.Fatal(err)
	}
	o := job()
	o.ByLID, o.Counters = false, false
	doc, err := Run(context.Background(), snapAgain(t, snap), engineAt(t, live, "gpu001 mlx5_0"), o)
	if err != nil {
		t.Fatal(err)
	}
	// The spine is read too (by a directed route around the down cable,
	// trial N2), so the link may be named from either end.
	want := fmt.Sprintf("Link leaf01/%d <-> %s/%d from the expected topology is down", up, spine.Node.Description, spine.Num)
	alt := fmt.Sprintf("Link %s/%d <-> leaf01/%d from the expected topology is down", spine.Node.Description, spine.Num, up)
	found := false
	for _, fd := range doc.Findings {
		found = found || (fd.Check == "link.down" && (fd.Title == want || fd.Title == alt))
	}
	// The route lost is the job's: its share is of the job's pairs (1 of
	// 2 or 3, not 1 of the 32*31 of the hosts in the part read), and the
	// advice starts at the down port, not at the tables.
	for _, fd := range doc.Findings {
		if fd.Check == "routing.unreachable" && (fd.Impact.PathShare < 0.3 || !(strings.HasPrefix(fd.Action, fmt.Sprintf("leaf01/%d is Disabled: ", up)) ||
			strings.HasPrefix(fd.Action, fmt.Sprintf("%s/%d is Polling: ", spine.Node.Description, spine.Num)))) {
			t.Errorf("routing.unreachable: share %.4f, do %q", fd.Impact.PathShare, fd.Action)
		}
	}
	if !found || doc.Status != "unhealthy" {
		t.Errorf("status %q; want a link.down %q among:", doc.Status, want)
		for _, fd := range doc.Findings {
			t.Errorf("  %s %s %s", fd.Severity, fd.Check, fd.Title)
		}
	}
}

// TestGateDownUplinkOfGateLeaf (new-user trial N2): as TestGateDownISLOnRoute,
// but the gate addresses nodes by LID from gpu001, on the leaf whose
// uplink went down (a prolog runs on a job host). The SM has not
// re-swept, so leaf01 still sends the spine's own LID out of the down
// port: the LID-routed MADs to the spine are lost there, as the job's
// traffic is. The spine is alive; before, the gate said it "did not
// answer" (undecided, exit 2) and never named the down cable. Now the
// switch is retried by a directed route that avoids the port read down,
// and the same checks name the link and the lost route.
func TestGateDownUplinkOfGateLeaf(t *testing.T) {
	snap := sweptWithCounters(t, build(t, tree4x4))
	f, _ := snap.FabricModel()
	// A host a on leaf01 and b on leaf02 whose routes cross different
	// spines: b's route to a comes down through spine/p to leaf01/up, and
	// leaf01's route to b leaves by another uplink (the trial's gpu017 ->
	// gpu003), so the down port is not the egress of a route the gate
	// follows from a switch that answers.
	var (
		a, b  string
		spine *fabric.Port
		up    uint8
	)
	lid := func(h string) uint16 { return f.NodesByHost(h)[0].Ports[1].LID }
	for i := 1; i <= 8 && spine == nil; i++ {
		for j := 9; j <= 16 && spine == nil; j++ {
			a, b = fmt.Sprintf("gpu%03d", i), fmt.Sprintf("gpu%03d", j)
			leaf02 := f.NodesByHost(b)[0].Ports[1].Remote.Node
			via := leaf02.Ports[leaf02.Switch.LFT.At(lid(a))].Remote.Node
			p := via.Ports[via.Switch.LFT.At(lid(a))]
			if p.Remote.Num != uplinkTo(t, f, "leaf01", b) {
				spine, up = p, p.Remote.Num
			}
		}
	}
	if spine == nil {
		t.Fatal("min-hop routes every leaf01<->leaf02 pair over one spine both ways: not the trial's case")
	}
	live, err := sim.New(build(t, tree4x4), sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := live.Down(fmt.Sprintf("leaf01/%d", up)); err != nil {
		t.Fatal(err)
	}
	o := job()
	o.Hosts, o.Counters = []string{a, b}, false
	if !o.ByLID {
		t.Fatal("job() gates by LID")
	}
	e := transport.NewEngine(mustAttach(t, live, a+" mlx5_0"), transport.Options{Timeout: 20 * time.Millisecond, Retries: 1})
	t.Cleanup(func() { e.Close() })
	doc, err := Run(context.Background(), snapAgain(t, snap), e, o)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("Link %s/%d <-> leaf01/%d from the expected topology is down", spine.Node.Description, spine.Num, up)
	found, lost := false, false
	for _, fd := range doc.Findings {
		found = found || (fd.Check == "link.down" && fd.Title == want)
		lost = lost || fd.Check == "routing.unreachable"
	}
	if !found || !lost || doc.Status != "unhealthy" {
		t.Errorf("status %q; want unhealthy with link.down %q and routing.unreachable among:", doc.Status, want)
		for _, fd := range doc.Findings {
			t.Errorf("  %s %s %s", fd.Severity, fd.Check, fd.Title)
		}
		for _, u := range doc.Undecided {
			t.Errorf("  undecided %s: %s", u.Check, u.Reason)
		}
		for _, u := range doc.Unreached {
			t.Errorf("  unread %s at %s: %s", u.What, u.Where, u.Reason)
		}
	}
	// Every node answers by a directed route around the down cable.
	for _, u := range doc.Unreached {
		t.Errorf("listed unread: %s at %s: %s", u.What, u.Where, u.Reason)
	}
}

func mustAttach(t *testing.T, s *sim.Sim, node string) transport.Conn {
	t.Helper()
	c, err := s.Attach(node, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
