package cli

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/snapshot"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// TestSweepJudgesGrowthSincePreviousSweep is trial N10: the README's cron
// sweep (no --interval) judged error counters by their values since the
// last clear although the state dir holds the previous sweep's, so 500 old
// PortRcvErrors were an error series in the textfile on every sweep (the
// README's alert paged until someone cleared the counters) and a counter
// climbing between sweeps was reported by its total alone. A later sweep
// judges the growth since the previous one: a static count is info
// (history, no series at the default --prom-min-severity), a growing one
// is an error on its growth since that sweep, with its rate; the report's
// counters_basis names the sweep. Without a usable previous sweep (the
// first, one older than --max-age, another fabric's) the values are
// judged, and counters_basis says why.
func TestSweepJudgesGrowthSincePreviousSweep(t *testing.T) {
	topo := chkTopology(t)
	dir := t.TempDir()
	state, out, prom := filepath.Join(dir, "state"), filepath.Join(dir, "r.json"), filepath.Join(dir, "q.prom")
	faults := writeFile(t, "n10.faults", "counter leaf02/6 PortRcvErrors=500\ncounter leaf02/5 PortRcvErrors=+100000/s\n")
	sweep := func(extra ...string) (*chkDoc, string) {
		t.Helper()
		args := append([]string{"sweep", "--sim=" + topo, "--faults", faults, "--state-dir", state, "--out", out, "--prom", prom}, extra...)
		if code, _, stderr := run(args...); code != ExitHealthy {
			t.Fatalf("%v: exit %d, stderr %s", args, code, stderr)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		p, err := os.ReadFile(prom)
		if err != nil {
			t.Fatal(err)
		}
		return chkParse(t, string(data)), string(p)
	}
	finding := func(d *chkDoc, port int) checks.Finding {
		t.Helper()
		for _, f := range d.Findings {
			if f.Check == "counters.errors" && f.Entities[0].Node == "leaf02" && f.Entities[0].Port == port {
				return f
			}
		}
		t.Fatalf("no counters.errors finding on leaf02/%d: %+v", port, d.Findings)
		return checks.Finding{}
	}
	// An error finding's series: its severity is the value of
	// ibdoctor_finding_severity at its labels (3: error).
	hasErr := func(p, port string) bool {
		return regexp.MustCompile(`(?m)^ibdoctor_finding_severity\{check="counters.errors",node="leaf02",port="` + port + `",peer="[^"]*"\} 3$`).MatchString(p)
	}

	// First sweep: nothing to compare with, the values judged.
	d, p := sweep()
	if f := finding(d, 6); f.Severity != checks.Error || f.Basis != "absolute" || d.CountersBasis != "" {
		t.Errorf("first sweep: %v %s %q; counters_basis %q", f.Severity, f.Basis, f.Title, d.CountersBasis)
	}
	if !hasErr(p, "6") {
		t.Errorf("first sweep: no error series for leaf02/6:\n%s", p)
	}

	// Second sweep: the static count is history, the growing one an
	// error on its growth since the first sweep.
	d, p = sweep()
	f := finding(d, 6)
	if f.Severity != checks.Info || !strings.Contains(f.Title, "not growing since the last sweep") ||
		!strings.Contains(f.Evidence[0].Text, "PortRcvErrors = 500 since the counters were last cleared") || !strings.Contains(f.Evidence[0].Text, "no growth since the previous sweep at") {
		t.Errorf("static count on the second sweep: %v %q / %q", f.Severity, f.Title, f.Evidence[0].Text)
	}
	if hasErr(p, "6") || strings.Contains(p, `node="leaf02",port="6"`) {
		t.Errorf("second sweep: leaf02/6's old count still has a series:\n%s", p)
	}
	g := finding(d, 5)
	if g.Severity != checks.Error || g.Basis != "since-snapshot" || !strings.Contains(g.Title, "since the last sweep") ||
		!strings.Contains(g.Evidence[0].Text, "since the previous sweep at") || !strings.Contains(g.Evidence[0].Text, "/s;") {
		t.Errorf("growing count on the second sweep: %v %s %q / %q", g.Severity, g.Basis, g.Title, g.Evidence[0].Text)
	}
	if !hasErr(p, "5") {
		t.Errorf("second sweep: no error series for leaf02/5's growth:\n%s", p)
	}
	if !strings.Contains(d.CountersBasis, "growth since the previous sweep at") {
		t.Errorf("counters_basis %q does not name the previous sweep", d.CountersBasis)
	}

	// A previous sweep older than --max-age is not compared with.
	d, _ = sweep("--max-age", "1ns")
	if f := finding(d, 6); f.Severity != checks.Error || f.Basis != "absolute" || !strings.Contains(d.CountersBasis, "over --max-age") {
		t.Errorf("stale previous sweep: %v %s %q; counters_basis %q", f.Severity, f.Basis, f.Title, d.CountersBasis)
	}
	// --interval keeps its meaning: the increase over it is judged, the
	// value since the clear is not.
	code, stdout, stderr := run("sweep", "--sim="+topo, "--faults", faults, "--state-dir", state, "--no-save", "--interval", "200ms")
	if code != ExitHealthy {
		t.Fatalf("--interval: exit %d, stderr %s", code, stderr)
	}
	d = chkParse(t, stdout)
	if d.CountersBasis != "" || finding(d, 5).Basis != "delta" {
		t.Errorf("--interval: counters_basis %q, leaf02/5 basis %s", d.CountersBasis, finding(d, 5).Basis)
	}
	for _, f := range d.Findings {
		if f.Check == "counters.errors" && f.Entities[0].Port == 6 && f.Entities[0].Node == "leaf02" {
			t.Errorf("--interval judged the static count: %q", f.Title)
		}
	}
}

// TestSweepPreviousOfAnotherFabric: a state dir whose last sweep is of
// another fabric (another source that lacks this port) is not compared
// with: the values are judged, and counters_basis says why.
func TestSweepPreviousOfAnotherFabric(t *testing.T) {
	topo := chkTopology(t)
	state := filepath.Join(t.TempDir(), "state")
	// The same shape with other GUIDs (another vendor prefix), under
	// another name: another fabric, whose leaf02/6 is not this one's.
	f, err := topology.FatTree2{Common: topology.Common{SwitchPorts: 8, OUI: 0x001122}, Leaves: 4, Spines: 4, HostsPerLeaf: 4}.Build()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := fabric.WriteIBNetDiscover(&b, f); err != nil {
		t.Fatal(err)
	}
	other := writeFile(t, "other.txt", b.String())
	if code, _, stderr := run("sweep", "--sim="+other, "--faults", writeFile(t, "o.faults", "counter leaf02/6 PortRcvErrors=500\n"), "--state-dir", state, "--out", filepath.Join(t.TempDir(), "a.json")); code != ExitHealthy {
		t.Fatalf("sweep of the other fabric: exit %d, %s", code, stderr)
	}
	faults := writeFile(t, "n10.faults", "counter leaf02/6 PortRcvErrors=500\n")
	code, stdout, stderr := run("sweep", "--sim="+topo, "--faults", faults, "--state-dir", state, "--no-save")
	if code != ExitHealthy {
		t.Fatalf("exit %d, %s", code, stderr)
	}
	d := chkParse(t, stdout)
	if !strings.Contains(d.CountersBasis, "another fabric") {
		t.Errorf("counters_basis %q", d.CountersBasis)
	}
	for _, f := range d.Findings {
		if f.Check == "counters.errors" && f.Entities[0].Node == "leaf02" && f.Entities[0].Port == 6 && (f.Severity != checks.Error || f.Basis != "absolute") {
			t.Errorf("judged against another fabric: %v %s %q", f.Severity, f.Basis, f.Title)
		}
	}
}

// TestSweepPairsPerPortAfterPartialSweep is trial T2: one host that did
// not answer made the previous sweep partial, and the next sweep judged
// every port's error counters on their values since the last clear again
// ("the previous sweep ... is partial"), so a static old count was an
// error series on every sweep of a fabric where some host is always down.
// A port whose counters the previous sweep read and saved is judged on its
// growth since, whoever else did not answer; counters_basis says the
// previous sweep was partial.
func TestSweepPairsPerPortAfterPartialSweep(t *testing.T) {
	topo := chkTopology(t)
	dir := t.TempDir()
	state, out, prom := filepath.Join(dir, "state"), filepath.Join(dir, "r.json"), filepath.Join(dir, "q.prom")
	faults := writeFile(t, "t2.faults", "counter leaf02/6 PortRcvErrors=500\ndead \"gpu016 mlx5_0\"\n")
	sweep := func() (*chkDoc, string) {
		t.Helper()
		args := []string{"sweep", "--sim=" + topo, "--faults", faults, "--state-dir", state, "--out", out, "--prom", prom, "--timeout", deadTimeout, "--retries", "0"}
		if code, _, stderr := run(args...); code != ExitPartial {
			t.Fatalf("%v: exit %d, want %d (partial), stderr %s", args, code, ExitPartial, stderr)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		p, err := os.ReadFile(prom)
		if err != nil {
			t.Fatal(err)
		}
		return chkParse(t, string(data)), string(p)
	}
	sweep()
	d, p := sweep()
	var f *checks.Finding
	for i, g := range d.Findings {
		if g.Check == "counters.errors" && g.Entities[0].Node == "leaf02" && g.Entities[0].Port == 6 {
			f = &d.Findings[i]
		}
	}
	if f == nil || f.Severity != checks.Info || !strings.Contains(f.Title, "not growing since the last sweep") {
		t.Errorf("static count after a partial sweep: %+v; counters_basis %q", f, d.CountersBasis)
	}
	if strings.Contains(p, `node="leaf02",port="6"`) {
		t.Errorf("leaf02/6's old count still has a series after a partial sweep:\n%s", p)
	}
	if !strings.Contains(d.CountersBasis, "growth since the previous sweep at") || !strings.Contains(d.CountersBasis, "partial") {
		t.Errorf("counters_basis %q: want the growth since the previous (partial) sweep", d.CountersBasis)
	}
}

// TestGateLinkDownedSinceSweep is trial T1's gate case: the job's own host
// link went down and retrained once since the cron sweep (LinkDowned +1,
// LinkErrorRecovery +1) and the gate said "No findings". It now warns,
// naming the link and the count, and (a warning) does not fail the job at
// --fail-on error; a second link-down since the sweep is an error.
func TestGateLinkDownedSinceSweep(t *testing.T) {
	topo := chkTopology(t)
	state := filepath.Join(t.TempDir(), "state")
	f1 := writeFile(t, "f1.faults", "counter \"gpu003 mlx5_0\"/1 LinkDownedCounter=2\n")
	if code, _, stderr := run("sweep", "--sim="+topo, "--faults", f1, "--state-dir", state, "--out", filepath.Join(t.TempDir(), "s.json")); code != ExitHealthy {
		t.Fatalf("sweep: exit %d, %s", code, stderr)
	}
	gate := func(faults string) (int, *chkDoc) {
		t.Helper()
		code, stdout, stderr := run("gate", "--sim="+topo, "--faults", writeFile(t, "f2.faults", faults), "--state-dir", state, "--nodes", "gpu003,gpu009", "--fail-on", "error", "--json")
		if code != ExitHealthy && code != ExitFindings {
			t.Fatalf("gate: exit %d, %s", code, stderr)
		}
		return code, chkParse(t, stdout)
	}
	code, d := gate("counter \"gpu003 mlx5_0\"/1 LinkDownedCounter=3 LinkErrorRecoveryCounter=1\n")
	// One finding for the link's down and retrain (reviewer V3).
	var down, retrain bool
	for _, f := range d.Findings {
		if f.Check != "counters.errors" || f.Entities[0].Node != "gpu003 mlx5_0" {
			continue
		}
		down = down || f.Severity == checks.Warning && strings.Contains(f.Title, "went down 1 time and retrained 1 time since the last sweep")
		retrain = retrain || strings.HasPrefix(f.Title, "Link") && strings.Contains(f.Title, "retrained") && !strings.Contains(f.Title, "went down")
	}
	if !down || retrain || code != ExitHealthy {
		t.Errorf("one flap since the sweep: exit %d, one link-down-and-retrain warning %v, a retrain finding apart %v: %+v", code, down, retrain, d.Findings)
	}
	code, d = gate("counter \"gpu003 mlx5_0\"/1 LinkDownedCounter=4\n")
	if code != ExitFindings || len(d.Findings) == 0 || !strings.Contains(d.Findings[0].Title, "went down 2 times since the last sweep") {
		t.Errorf("two link-downs since the sweep: exit %d: %+v", code, d.Findings)
	}
}

// TestSweepSaysSnapshotKept is trial T12: a partial sweep after a complete
// one does not replace the snapshot, so with one host always down the
// snapshot gates answer from only ages, and after their --max-age every
// gate sweeps the whole fabric; neither the report nor the textfile said
// so (ibdoctor_sweep_success 1). The report's snapshot_kept names the kept
// sweep and when gates stop trusting it; the textfile's
// ibdoctor_snapshot_timestamp_seconds is that sweep's time.
func TestSweepSaysSnapshotKept(t *testing.T) {
	topo := chkTopology(t)
	dir := t.TempDir()
	state, out, prom := filepath.Join(dir, "state"), filepath.Join(dir, "r.json"), filepath.Join(dir, "q.prom")
	sweep := func(faults string, want int) (*chkDoc, string) {
		t.Helper()
		args := []string{"sweep", "--sim=" + topo, "--faults", writeFile(t, "t12.faults", faults), "--state-dir", state, "--out", out, "--prom", prom, "--timeout", deadTimeout, "--retries", "0"}
		if code, _, stderr := run(args...); code != want {
			t.Fatalf("%v: exit %d, want %d, stderr %s", args, code, want, stderr)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		p, err := os.ReadFile(prom)
		if err != nil {
			t.Fatal(err)
		}
		return chkParse(t, string(data)), string(p)
	}
	d, p := sweep("\n", ExitHealthy)
	first := d.GeneratedAt
	if d.SnapshotKept != "" || !strings.Contains(p, "ibdoctor_snapshot_timestamp_seconds ") {
		t.Errorf("complete sweep: snapshot_kept %q; textfile:\n%s", d.SnapshotKept, p)
	}
	d, p = sweep("dead \"gpu016 mlx5_0\"\n", ExitPartial)
	if !strings.Contains(d.SnapshotKept, "not replaced: this sweep is partial (1 thing not read)") || !strings.Contains(d.SnapshotKept, "--max-age") {
		t.Errorf("partial sweep after a complete one: snapshot_kept %q", d.SnapshotKept)
	}
	// The kept sweep's time (the same second as the partial one's when
	// both ran within it).
	if want := fmt.Sprintf("ibdoctor_snapshot_timestamp_seconds %d\n", first.Unix()); !strings.Contains(p, want) {
		t.Errorf("partial sweep: textfile lacks %q:\n%s", want, p)
	}
}

// TestSweepPairsPartialSweepsPastMaxAge is review V1: a partial sweep did
// not replace a complete one, so with one host always down the complete
// sweep aged past --max-age and from then on every sweep judged all
// counters on their values again (a static 500 PortRcvErrors an error on
// every sweep, trial T2's symptom). Once the kept complete sweep is over
// --max-age a partial sweep is saved (as partial), so the next partial
// sweep is judged by the growth since it.
func TestSweepPairsPartialSweepsPastMaxAge(t *testing.T) {
	topo := chkTopology(t)
	dir := t.TempDir()
	state, out := filepath.Join(dir, "state"), filepath.Join(dir, "r.json")
	sweep := func(faults string, want int, extra ...string) *chkDoc {
		t.Helper()
		args := append([]string{"sweep", "--sim=" + topo, "--faults", writeFile(t, "v1.faults", faults), "--state-dir", state, "--out", out, "--timeout", deadTimeout, "--retries", "0"}, extra...)
		if code, _, stderr := run(args...); code != want {
			t.Fatalf("%v: exit %d, want %d, stderr %s", args, code, want, stderr)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return chkParse(t, string(data))
	}
	const static = "counter leaf02/6 PortRcvErrors=500\n"
	sweep(static, ExitHealthy)
	// The complete sweep ages past the --max-age of the later sweeps.
	const maxAge = 4 * time.Second
	time.Sleep(maxAge + 500*time.Millisecond)
	partial := static + "dead \"gpu016 mlx5_0\"\n"
	d := sweep(partial, ExitPartial, "--max-age", maxAge.String())
	if !strings.Contains(d.CountersBasis, "over --max-age") {
		t.Fatalf("first partial sweep past --max-age: counters_basis %q", d.CountersBasis)
	}
	d = sweep(partial, ExitPartial, "--max-age", maxAge.String())
	var f *checks.Finding
	for i, g := range d.Findings {
		if g.Check == "counters.errors" && g.Entities[0].Node == "leaf02" && g.Entities[0].Port == 6 {
			f = &d.Findings[i]
		}
	}
	if f == nil || f.Severity != checks.Info || !strings.Contains(d.CountersBasis, "growth since the previous sweep at") {
		t.Errorf("second partial sweep: leaf02/6 %+v; counters_basis %q (want judged by its growth since the first partial sweep)", f, d.CountersBasis)
	}
	if d.SnapshotKept != "" && !strings.Contains(d.SnapshotKept, "partial") {
		t.Errorf("second partial sweep: snapshot_kept %q", d.SnapshotKept)
	}
}

// TestSweepRepairsCorruptBaselineIndex is review V9: a damaged
// baseline.idx (the gates' copy of the baseline, read by a sweep only for
// its "accepted" mark) failed every sweep with exit 2 and the advice
// "run 'ibdoctor sweep' again", the command that kept failing. The sweep
// has baseline.json.gz, the baseline itself: it rewrites baseline.idx
// from it, marked not accepted, says so on stderr naming the file and how
// to accept it again, and completes; the next sweep reads it silently.
func TestSweepRepairsCorruptBaselineIndex(t *testing.T) {
	topo := chkTopology(t)
	dir := t.TempDir()
	state, out := filepath.Join(dir, "state"), filepath.Join(dir, "r.json")
	sweep := func(extra ...string) string {
		t.Helper()
		args := append([]string{"sweep", "--sim=" + topo, "--state-dir", state, "--out", out}, extra...)
		code, _, stderr := run(args...)
		if code != ExitHealthy {
			t.Fatalf("%v: exit %d, want %d, stderr %s", args, code, ExitHealthy, stderr)
		}
		return stderr
	}
	sweep()
	idx := filepath.Join(state, "baseline.idx")
	data, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(idx, data[:100], 0o644); err != nil {
		t.Fatal(err)
	}
	stderr := sweep("--no-save")
	if !strings.Contains(stderr, idx) || !strings.Contains(stderr, "corrupt") || strings.Contains(stderr, "run 'ibdoctor sweep' again") {
		t.Errorf("--no-save sweep over a corrupt baseline.idx: stderr %q", stderr)
	}
	stderr = sweep()
	if !strings.Contains(stderr, idx) || !strings.Contains(stderr, "rewritten") || !strings.Contains(stderr, "ibdoctor baseline accept") {
		t.Errorf("sweep over a corrupt baseline.idx: stderr %q (want it named, rewritten, and how to accept again)", stderr)
	}
	if stderr = sweep(); strings.Contains(stderr, "baseline.idx") {
		t.Errorf("sweep after the repair: stderr %q", stderr)
	}
}

// TestLinkEventOneFindingPerLink is reviewer V3: a link that went down
// once between two sweeps counts it at both ends, and was two warnings
// ("Link gpu017 mlx5_0/1 (to leaf05/1) went down 1 time" and "Link leaf05/1
// (to gpu017 mlx5_0/1) went down 1 time") for one event. One finding per
// link, naming both ends, the other end's count in its evidence.
func TestLinkEventOneFindingPerLink(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	sweep := func(faults string) *chkDoc {
		t.Helper()
		out := filepath.Join(dir, "r.json")
		if code, _, stderr := run("sweep", "--sim", "--faults", writeFile(t, "v3.faults", faults), "--state-dir", state, "--out", out); code != ExitHealthy && code != ExitFindings {
			t.Fatalf("sweep: exit %d, %s", code, stderr)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return chkParse(t, string(data))
	}
	sweep("\n")
	d := sweep("counter leaf05/1 LinkDownedCounter=+1\ncounter \"gpu017 mlx5_0\"/1 LinkDownedCounter=+1\n")
	var got []checks.Finding
	for _, f := range d.Findings {
		if f.Check == "counters.errors" && strings.Contains(f.Title, "went down") {
			got = append(got, f)
		}
	}
	if len(got) != 1 {
		t.Fatalf("%d link-down findings for one flap, want 1: %+v", len(got), got)
	}
	f := got[0]
	if f.Severity != checks.Warning || !strings.Contains(f.Title, "went down 1 time since the last sweep") || len(f.Entities) < 2 || len(f.Evidence) < 2 || !strings.Contains(f.Evidence[1].Text, "one event counts at both ends") {
		t.Errorf("the flap's finding: %s %q entities %+v evidence %+v", f.Severity, f.Title, f.Entities, f.Evidence)
	}
}

// TestSweepBaselineFromTopology: a later sweep reads the baseline from
// baseline.topo instead of decoding baseline.json.gz (issue 13), and
// finds the same either way. Where baseline.topo cannot stand for the
// baseline — absent (a state dir from before it), damaged, or made from
// another baseline.json.gz — the sweep decodes the baseline, says so on
// stderr naming the file, and rewrites it (not under --no-save); the
// next sweep is silent.
func TestSweepBaselineFromTopology(t *testing.T) {
	dir := t.TempDir()
	state, out := filepath.Join(dir, "state"), filepath.Join(dir, "r.json")
	topo := filepath.Join(state, snapshot.BaselineTopologyName)
	down := writeFile(t, "down.faults", "down \"gpu017 mlx5_0\"/1\n")
	sweep := func(faults string, extra ...string) (string, string) {
		t.Helper()
		args := append([]string{"sweep", "--sim", "--state-dir", state, "--out", out}, extra...)
		if faults != "" {
			args = append(args, "--faults", faults)
		}
		code, _, stderr := run(args...)
		if code != ExitHealthy && code != ExitFindings {
			t.Fatalf("%v: exit %d, stderr %s", args, code, stderr)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		// The findings of the checks that read the baseline (the
		// counters' growth depends on the time between sweeps).
		var kept []checks.Finding
		for _, f := range chkParse(t, string(data)).Findings {
			if strings.HasPrefix(f.Check, "topology.") || strings.HasPrefix(f.Check, "link.") {
				kept = append(kept, f)
			}
		}
		fs, err := json.Marshal(kept)
		if err != nil {
			t.Fatal(err)
		}
		return stderr, string(fs)
	}
	if stderr, _ := sweep(""); strings.Contains(stderr, snapshot.BaselineTopologyName) {
		t.Fatalf("first sweep: stderr %q", stderr)
	}
	if _, err := os.Stat(topo); err != nil {
		t.Fatalf("the first sweep wrote no %s: %v", snapshot.BaselineTopologyName, err)
	}
	stderr, want := sweep(down)
	if strings.Contains(stderr, snapshot.BaselineTopologyName) {
		t.Fatalf("later sweep: stderr %q", stderr)
	}
	if !strings.Contains(want, `"link.down"`) {
		t.Fatalf("the later sweep compared nothing: %s", want)
	}
	fallback := func(what, says string, noSave bool) {
		t.Helper()
		var extra []string
		if noSave {
			extra = append(extra, "--no-save")
		}
		stderr, got := sweep(down, extra...)
		if !strings.Contains(stderr, topo) || !strings.Contains(stderr, says) || !strings.Contains(stderr, "decoded whole") {
			t.Fatalf("%s: stderr %q, want %s named, %q and the decode said", what, stderr, topo, says)
		}
		if got != want {
			t.Fatalf("%s: findings differ from the sweep that read %s:\n%s\n%s", what, snapshot.BaselineTopologyName, got, want)
		}
		if noSave {
			return
		}
		if !strings.Contains(stderr, "written from it") {
			t.Fatalf("%s: stderr %q, want it rewritten", what, stderr)
		}
		if stderr, _ := sweep(down); strings.Contains(stderr, snapshot.BaselineTopologyName) {
			t.Fatalf("%s: the sweep after the rewrite: stderr %q", what, stderr)
		}
	}
	if err := os.Remove(topo); err != nil {
		t.Fatal(err)
	}
	fallback("absent, --no-save", "is absent", true)
	if _, err := os.Stat(topo); err == nil {
		t.Fatal("--no-save wrote it")
	}
	fallback("absent", "is absent", false)
	data, err := os.ReadFile(topo)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(topo, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	fallback("truncated", "is corrupt", false)
	// The same baseline compressed otherwise: other bytes, as an older
	// ibdoctor's accept writes baseline.json.gz without baseline.topo.
	gzPath := filepath.Join(state, snapshot.BaselineName)
	zdata, err := os.ReadFile(gzPath)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(zdata))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&again, gzip.BestCompression)
	zw.Write(plain)
	zw.Close()
	if err := os.WriteFile(gzPath, again.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	fallback("another baseline file", "is not of the baseline.json.gz beside it", false)
}

// TestSweepPairsFirstPartialPastMaxAge (statefix2's "Not done"): a
// complete sweep, then partial ones (a host down) within --max-age keep
// it; the first partial sweep after it went past --max-age judged every
// error counter on its value since the last clear, though the partial
// sweep before it had read them minutes ago: a static PortRcvErrors=500
// that every sweep called info flapped to error for one sweep (a false
// alarm at each such transition). A partial sweep that keeps the complete
// one now saves itself in STATE/partial, and the next sweep pairs with it
// when the complete one is too old.
func TestSweepPairsFirstPartialPastMaxAge(t *testing.T) {
	topo := chkTopology(t)
	dir := t.TempDir()
	state, out := filepath.Join(dir, "state"), filepath.Join(dir, "r.json")
	sweep := func(faults string, want int, extra ...string) *chkDoc {
		t.Helper()
		args := append([]string{"sweep", "--sim=" + topo, "--faults", writeFile(t, "p1.faults", faults), "--state-dir", state, "--out", out, "--timeout", deadTimeout, "--retries", "0"}, extra...)
		if code, _, stderr := run(args...); code != want {
			t.Fatalf("%v: exit %d, want %d, stderr %s", args, code, want, stderr)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return chkParse(t, string(data))
	}
	const maxAge = 8 * time.Second
	age := "--max-age=" + maxAge.String()
	const static = "counter leaf02/6 PortRcvErrors=500\n"
	partial := static + "dead \"gpu016 mlx5_0\"\n"
	sweep(static, ExitHealthy, age)
	done := time.Now() // the complete sweep was taken before
	time.Sleep(maxAge / 2)
	if d := sweep(partial, ExitPartial, age); d.SnapshotKept == "" {
		t.Fatalf("partial sweep within --max-age: the complete sweep not kept")
	}
	time.Sleep(time.Until(done.Add(maxAge + 500*time.Millisecond)))
	// The same state with a bit of the partial sweep's snapshot.json
	// flipped (its checksum), swept after the undamaged one: whenever,
	// since the damage is found before the partial sweep's age is looked at.
	damaged := filepath.Join(dir, "damaged")
	if err := os.CopyFS(damaged, os.DirFS(state)); err != nil {
		t.Fatal(err)
	}
	partialDoc := filepath.Join(damaged, "partial", "snapshot.json")
	data, err := os.ReadFile(partialDoc)
	if err != nil {
		t.Fatal(err)
	}
	data[40] ^= 1
	if err := os.WriteFile(partialDoc, data, 0o644); err != nil {
		t.Fatal(err)
	}
	leaf026 := func(d *chkDoc) *checks.Finding {
		for i, g := range d.Findings {
			if g.Check == "counters.errors" && g.Entities[0].Node == "leaf02" && g.Entities[0].Port == 6 {
				return &d.Findings[i]
			}
		}
		return nil
	}
	d := sweep(partial, ExitPartial, age)
	if f := leaf026(d); f == nil || f.Severity != checks.Info || !strings.Contains(d.CountersBasis, "growth since the previous sweep at") {
		t.Errorf("first partial sweep past the complete one's --max-age: leaf02/6 %+v; counters_basis %q (want judged by its growth since the partial sweep before)", f, d.CountersBasis)
	}
	if _, err := os.Stat(filepath.Join(state, "partial")); !os.IsNotExist(err) {
		t.Errorf("STATE/partial left after the partial sweep replaced the complete one: %v", err)
	}
	// Damaged: not paired, and said, naming the file.
	state = damaged
	d = sweep(partial, ExitPartial, age)
	if f := leaf026(d); f == nil || f.Severity == checks.Info || !strings.Contains(d.CountersBasis, "judged on their values") || !strings.Contains(d.CountersBasis, partialDoc+" fails its checksum") {
		t.Errorf("partial sweep's snapshot.json damaged: leaf02/6 %+v; counters_basis %q (want judged on its value, the damaged file named)", f, d.CountersBasis)
	}
}
