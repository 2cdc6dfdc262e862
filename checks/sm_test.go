package checks_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// smSweep sweeps a small routed fat tree in the simulator after applying
// faults (docs/faults.md), without requiring the sweep to be complete (a
// fabric without an SM has no LIDs to read counters by).
func smSweep(t *testing.T, faults string, interval time.Duration) (*diagnose.Sweep, *checks.Result) {
	t.Helper()
	return faultSweep(t, func(*fabric.Fabric) string { return faults }, interval)
}

// faultSweep is smSweep with faults written once the fabric's LIDs are
// known.
func faultSweep(t *testing.T, faultsFor func(*fabric.Fabric) string, interval time.Duration) (*diagnose.Sweep, *checks.Result) {
	t.Helper()
	f, err := topology.FatTree2{Leaves: 2, Spines: 2, HostsPerLeaf: 4}.Build()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := topology.AssignLIDs(f); err != nil {
		t.Fatal(err)
	}
	if err := topology.Route(f); err != nil {
		t.Fatal(err)
	}
	faults := faultsFor(f)
	s, err := sim.New(f, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := sim.ParseFaults(strings.NewReader(faults))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ApplyFaults(fs); err != nil {
		t.Fatal(err)
	}
	c, err := s.Attach("gpu001 mlx5_0", 1)
	if err != nil {
		t.Fatal(err)
	}
	e := transport.NewEngine(c, transport.Options{Timeout: 200 * time.Millisecond, Retries: 0})
	t.Cleanup(func() { e.Close(); c.Close() })
	sw, err := diagnose.Run(context.Background(), e, diagnose.Options{Routes: true, Counters: true, Interval: interval})
	if err != nil {
		t.Fatal(err)
	}
	res, err := checks.Run(sw.Snapshot(checks.Expectations{}, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	return sw, res
}

func logFindings(t *testing.T, fs []checks.Finding) {
	t.Helper()
	for _, f := range fs {
		t.Logf("%s %s: %s", f.Severity, f.Check, f.Title)
		for _, e := range f.Evidence {
			t.Logf("    evidence: %s", e)
		}
	}
}

// onlySM asserts the findings at warning or above are exactly want (check
// IDs, in rank order).
func onlySM(t *testing.T, res *checks.Result, want ...string) []checks.Finding {
	t.Helper()
	var got []string
	var fs []checks.Finding
	for _, f := range res.Findings {
		if f.Severity >= checks.Warning {
			got = append(got, f.Check)
			fs = append(fs, f)
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("findings at warning or above: %v, want %v", got, want)
		logFindings(t, res.Findings)
	}
	return fs
}

func TestSMHealthySimIsQuiet(t *testing.T) {
	sw, res := smSweep(t, "", 20*time.Millisecond)
	onlySM(t, res)
	if sw.SM == nil || len(sw.SM.Readings) != 1 || sw.SM.Readings[0].Info.State != mad.SMMaster || sw.SM.Readings[0].Again == nil {
		t.Fatalf("SM readings %+v, want one master read twice", sw.SM)
	}
	if !sw.Complete {
		t.Errorf("sweep incomplete: %+v", sw.Unreached)
	}
	if !contains(res.Ran, "sm.stalled") || !contains(res.Ran, "sm.no-master") {
		t.Errorf("ran %v, want the sm checks", res.Ran)
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// TestSMStandbyIsQuiet: a second SM in Standby is how a fabric should be
// run, not a finding.
func TestSMStandbyIsQuiet(t *testing.T) {
	sw, res := smSweep(t, `sm "gpu001 mlx5_0" state=master priority=5`+"\n"+`sm "gpu005 mlx5_0" state=standby priority=2`+"\n", 0)
	onlySM(t, res)
	if len(sw.SM.Readings) != 2 {
		t.Fatalf("%d SM readings, want 2 (master and standby)", len(sw.SM.Readings))
	}
}

// TestSMNoMaster: no SM ever swept (every port in Init, no LIDs) gives one
// critical root-cause finding that folds the per-link link.down findings
// into its evidence instead of one error per link.
func TestSMNoMaster(t *testing.T) {
	_, res := smSweep(t, "nosm\n", 0)
	fs := onlySM(t, res, "sm.no-master")
	if len(fs) != 1 {
		return
	}
	f := fs[0]
	if f.Severity != checks.Critical || !strings.HasPrefix(f.Title, "No subnet manager is running") {
		t.Errorf("%s %q", f.Severity, f.Title)
	}
	if n := len(byCheck(res.Findings, "link.down")); n != 0 {
		t.Errorf("%d link.down findings next to sm.no-master, want them folded", n)
	}
	var text []string
	for _, e := range f.Evidence {
		text = append(text, e.String())
	}
	all := strings.Join(text, "\n")
	// 8 hosts + 2x2 leaf-spine links: 12 links, 24 ports.
	for _, want := range []string{"24 of 24 physically up ports are in Init", "24 of 24 have no LID", "no port advertises an SM", "12 links physically up but not Active"} {
		if !strings.Contains(all, want) {
			t.Errorf("evidence lacks %q:\n%s", want, all)
		}
	}
	if !strings.Contains(f.Action, "opensm") {
		t.Errorf("action %q does not say what to restart", f.Action)
	}
}

func TestSMMultipleMasters(t *testing.T) {
	_, res := smSweep(t, `sm "gpu006 mlx5_0" state=master priority=5`+"\n", 0)
	fs := onlySM(t, res, "sm.multiple-masters")
	if len(fs) == 1 {
		if fs[0].Severity != checks.Critical || !strings.Contains(fs[0].Title, "gpu001 mlx5_0/1") || !strings.Contains(fs[0].Title, "gpu006 mlx5_0/1") {
			t.Errorf("%s %q", fs[0].Severity, fs[0].Title)
		}
	}
}

func TestSMStalled(t *testing.T) {
	_, res := smSweep(t, `sm "gpu001 mlx5_0" state=stalled`+"\n", 20*time.Millisecond)
	fs := onlySM(t, res, "sm.stalled")
	if len(fs) == 1 && (fs[0].Severity != checks.Error || !strings.Contains(fs[0].Title, "gpu001 mlx5_0/1")) {
		t.Errorf("%s %q", fs[0].Severity, fs[0].Title)
	}
	// Without an interval there is one read: the check cannot run.
	_, res = smSweep(t, `sm "gpu001 mlx5_0" state=stalled`+"\n", 0)
	onlySM(t, res)
	if !strings.Contains(skipReason(res, "sm.stalled"), "--interval") {
		t.Errorf("sm.stalled not skipped for want of --interval: %+v", res.Skipped)
	}
}

func skipReason(res *checks.Result, id string) string {
	for _, s := range res.Skipped {
		if s.Check == id {
			return s.Reason
		}
	}
	return ""
}

// TestSMGone: the master exits after bringing the fabric up (OpenSM -o,
// a crashed SM): ports stay Active and still name its LID.
func TestSMGone(t *testing.T) {
	_, res := smSweep(t, `sm "gpu001 mlx5_0" state=gone`+"\n", 0)
	fs := onlySM(t, res, "sm.stale-master-lid")
	if len(fs) == 1 {
		f := fs[0]
		if f.Severity != checks.Error || !strings.Contains(f.Title, "gpu001 mlx5_0/1, which runs no SM") || !strings.HasPrefix(f.Title, "12 active ports name master SM LID") {
			t.Errorf("%s %q", f.Severity, f.Title)
		}
	}
	// A new master elsewhere that has not swept yet: a warning.
	_, res = smSweep(t, `sm "gpu001 mlx5_0" state=gone`+"\n"+`sm "gpu007 mlx5_0" state=master`+"\n", 0)
	fs = onlySM(t, res, "sm.stale-master-lid")
	if len(fs) == 1 && (fs[0].Severity != checks.Warning || !strings.Contains(fs[0].Evidence[0].Text, "while the master is gpu007 mlx5_0/1")) {
		t.Errorf("%s %q %v", fs[0].Severity, fs[0].Title, fs[0].Evidence)
	}
}

// TestSMGoneStandbyAlive: the master exits and a standby SM answers
// SMInfo but has not taken over yet (trial D3: OpenSM's standby waits out
// its polling of the master, ~1 min). The verdict stays an error, but the
// evidence names the standby ibdoctor read (port, LID, priority, state)
// and the action says it should take over, not "start the subnet manager
// again" (a restarted old master at a higher priority takes mastership
// back: a second re-sweep). With no standby the action says to start one.
func TestSMGoneStandbyAlive(t *testing.T) {
	sw, res := smSweep(t, `sm "gpu001 mlx5_0" state=gone`+"\n"+`sm "gpu007 mlx5_0" state=standby priority=5`+"\n", 0)
	fs := onlySM(t, res, "sm.stale-master-lid")
	if len(fs) != 1 {
		t.Fatalf("want 1 sm.stale-master-lid, got %d", len(fs))
	}
	f := fs[0]
	var lid uint16
	for _, n := range sw.Fabric.Nodes {
		if n.Description == "gpu007 mlx5_0" {
			lid = n.Ports[1].LID
		}
	}
	ev := fmt.Sprintf("a standby SM answers at gpu007 mlx5_0/1 (LID %d, priority 5, Standby)", lid)
	if f.Severity != checks.Error || !strings.Contains(f.Evidence[0].Text, "no SM answers as master anywhere") || !strings.Contains(f.Evidence[0].Text, ev) {
		t.Errorf("%s %q\nevidence %q\nwant it to contain %q", f.Severity, f.Title, f.Evidence[0].Text, ev)
	}
	for _, w := range []string{"takes over", "polling", "If it stays Standby", "do not restart"} {
		if !strings.Contains(f.Action, w) {
			t.Errorf("action lacks %q: %s", w, f.Action)
		}
	}
	if strings.Contains(f.Action, "Start the subnet manager again") {
		t.Errorf("action restarts the SM while a standby is taking over: %s", f.Action)
	}
	// No standby: start one.
	_, res = smSweep(t, `sm "gpu001 mlx5_0" state=gone`+"\n", 0)
	fs = onlySM(t, res, "sm.stale-master-lid")
	if len(fs) != 1 || !strings.Contains(fs[0].Evidence[0].Text, "and no standby SM answers either") || !strings.Contains(fs[0].Action, "Start the subnet manager") {
		t.Errorf("no standby: %+v", fs)
	}
}

// TestSMUnansweredIsNotStale: an SM port that does not answer SMInfo is
// unreached; the ports naming it are not judged.
func TestSMUnansweredIsNotStale(t *testing.T) {
	f, err := topology.Routed(topology.FatTree2{Leaves: 2, Spines: 2, HostsPerLeaf: 2})
	if err != nil {
		t.Fatal(err)
	}
	var smPort *fabric.Port
	for _, n := range f.Nodes {
		for i, p := range n.Ports {
			if p == nil || (n.Type == mad.NodeSwitch && i != 0) {
				continue
			}
			if smPort == nil && n.Type == mad.NodeCA && p.LID != 0 {
				smPort = p
				p.CapMask |= mad.CapIsSM
			}
		}
	}
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil {
				p.MasterSMLID = smPort.LID
			}
		}
	}
	s := &checks.Snapshot{Fabric: f, SM: &checks.SMView{Readings: []checks.SMReading{{Port: smPort, Reason: "no response after 3 attempts"}}}}
	res, err := checks.Run(s, "sm")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 0 {
		logFindings(t, res.Findings)
		t.Errorf("%d findings from an unanswered SMInfo, want none", len(res.Findings))
	}
}

// TestSMInfoUnansweredIsUnreached: the master's SMInfo goes unanswered
// (the simulator's drop fault). The SM port is listed as unreached, the
// sweep is incomplete, and no sm.* check turns that into "no SM", a
// stale master LID or anything else.
func TestSMInfoUnansweredIsUnreached(t *testing.T) {
	sw, res := smSweep(t, `drop "gpu001 mlx5_0" attr=SMInfo`+"\n", 20*time.Millisecond)
	for _, f := range res.Findings {
		if strings.HasPrefix(f.Check, "sm.") {
			t.Errorf("%s %s: %s", f.Severity, f.Check, f.Title)
		}
	}
	if sw.Complete {
		t.Error("sweep complete although SMInfo went unanswered")
	}
	found := false
	for _, u := range sw.Unreached {
		found = found || (u.What == "SMInfo" && strings.Contains(u.Where, "gpu001 mlx5_0"))
	}
	if !found {
		t.Errorf("SMInfo not listed as unreached: %+v", sw.Unreached)
	}
	if len(sw.SM.Readings) != 1 || sw.SM.Readings[0].Reason == "" {
		t.Errorf("readings %+v", sw.SM.Readings)
	}
}

// TestSMPriorityOrder: a standby SM whose priority is above the master's
// should have taken over (warning, naming both); a standby at the
// master's priority leaves failover to the GUIDs (info); one below is
// how SMs should be set up (nothing).
func TestSMPriorityOrder(t *testing.T) {
	_, res := smSweep(t, `sm "gpu005 mlx5_0" state=standby priority=12`+"\n", 0)
	fs := onlySM(t, res, "sm.priority")
	if len(fs) == 1 && (!strings.Contains(fs[0].Title, "gpu005 mlx5_0") || !strings.Contains(fs[0].Title, "priority 12") || fs[0].Severity != checks.Warning) {
		t.Errorf("outranking standby: %s %s", fs[0].Severity, fs[0].Title)
	}
	_, res = smSweep(t, `sm "gpu005 mlx5_0" state=standby priority=0`+"\n", 0)
	onlySM(t, res)
	if tie := byCheck(res.Findings, "sm.priority"); len(tie) != 1 || tie[0].Severity != checks.Info || !strings.Contains(tie[0].Title, "same priority") {
		t.Errorf("tie: %d sm.priority findings", len(tie))
		logFindings(t, res.Findings)
	}
}

// TestSMMKeyPolicy: most ports run the fabric's M_Key policy (OpenSM
// default: no protection) and three an SM with another policy set
// (protection bits 2, lease 60 s): a warning naming the three; the same
// policy everywhere gives nothing.
func TestSMMKeyPolicy(t *testing.T) {
	_, res := smSweep(t, "mkey \"gpu002 mlx5_0\"/1 protect=2 lease=60\nmkey \"gpu003 mlx5_0\"/1 protect=2 lease=60\nmkey leaf02/1 protect=2 lease=60\n", 0)
	fs := onlySM(t, res, "sm.mkey-policy")
	if len(fs) == 1 {
		f := fs[0]
		t.Logf("%s\n    %s", f.Title, f.Evidence)
		var names []string
		for _, e := range f.Entities {
			names = append(names, e.String())
		}
		if strings.Join(names, ",") != "gpu002 mlx5_0/1,gpu003 mlx5_0/1,leaf02" || !strings.Contains(f.Title, "protection bits 2, lease 60 s") {
			t.Errorf("entities %v, title %q", names, f.Title)
		}
	}
	_, res = smSweep(t, "", 0)
	if n := len(byCheck(res.Findings, "sm.mkey-policy")); n != 0 {
		t.Errorf("%d sm.mkey-policy findings on a uniform fabric", n)
	}
}
