package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/snapshot"
)

// sweepFiles lists a folder, failing on leftovers of atomic writes.
func sweepFiles(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left in %s: %s", dir, e.Name())
		}
		names = append(names, e.Name())
	}
	return names
}

func skippedCheck(d *chkDoc, id string) bool {
	return slices.ContainsFunc(d.Skipped, func(s checks.Skipped) bool { return s.Check == id })
}

// TestSweepWritesReportPromAndSnapshot: a first sweep writes the report,
// the Prometheus textfile and a snapshot; a second one (after a spine
// link went down and the SM re-swept) compares against the first.
func TestSweepWritesReportPromAndSnapshot(t *testing.T) {
	topo := chkTopology(t)
	dir := t.TempDir()
	out, prom, state := filepath.Join(dir, "report.json"), filepath.Join(dir, "ibdoctor.prom"), filepath.Join(dir, "state")

	code, stdout, stderr := run("sweep", "--sim="+topo, "--out", out, "--prom", prom, "--state-dir", state)
	if code != ExitHealthy || stdout != "" {
		t.Fatalf("first sweep: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	if strings.Contains(stderr, "\x1b[") || strings.Contains(stderr, "\r") {
		t.Errorf("sweep drew progress on a non-terminal: %q", stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	d := chkParse(t, string(data))
	if d.Command != "sweep" || d.FailOn != "error" || d.Status != "healthy" || !d.Complete || d.Fabric.Nodes != 24 {
		t.Errorf("first report: command %q fail_on %q status %q complete %v nodes %d", d.Command, d.FailOn, d.Status, d.Complete, d.Fabric.Nodes)
	}
	if !skippedCheck(d, "topology.changed") || !skippedCheck(d, "topology.miswired") {
		t.Errorf("first sweep had a baseline? skipped %v", d.Skipped)
	}
	for _, f := range []string{out, prom} {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o644 {
			t.Errorf("%s mode %v, want 0644 (node_exporter must read it)", f, st.Mode().Perm())
		}
	}
	p, err := os.ReadFile(prom)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# TYPE ibdoctor_findings gauge\n",
		`ibdoctor_findings{severity="critical"} 0` + "\n",
		`ibdoctor_fabric_nodes{type="switch"} 8` + "\n",
		"ibdoctor_fabric_links 32\n",
		"ibdoctor_sweep_complete 1\n",
		"ibdoctor_unreached 0\n",
	} {
		if !strings.Contains(string(p), want) {
			t.Errorf("prom file lacks %q:\n%s", want, p)
		}
	}
	snap, err := snapshot.Load(state)
	if err != nil {
		t.Fatal(err)
	}
	f, err := snap.FabricModel()
	if err != nil {
		t.Fatal(err)
	}
	// The topology file carries no counters: none are kept (the
	// simulator's zeros are not counters read).
	if !snap.Complete || snap.Source != "sim:fabric.txt" || len(f.Nodes) != 24 || len(snap.Counters) != 0 {
		t.Errorf("snapshot: complete %v source %q nodes %d counters %d", snap.Complete, snap.Source, len(f.Nodes), len(snap.Counters))
	}
	sweepFiles(t, dir)
	first := sweepFiles(t, state)

	// Second sweep: leaf02/6 (to spine02) is down and the SM re-routed.
	faults := writeFile(t, "down.faults", "down leaf02/6\nsweep\n")
	code, _, stderr = run("sweep", "--sim="+topo, "--faults", faults, "--out", out, "--prom", prom, "--state-dir", state)
	if code != ExitHealthy {
		t.Fatalf("second sweep: exit %d (no --fail-on: findings do not fail it); stderr %s", code, stderr)
	}
	data, _ = os.ReadFile(out)
	d = chkParse(t, string(data))
	if skippedCheck(d, "topology.changed") || !slices.Contains(d.ChecksRun, "topology.changed") {
		t.Errorf("second sweep did not use the first as baseline: ran %v skipped %v", d.ChecksRun, d.Skipped)
	}
	var down []string
	for _, f := range d.Findings {
		if f.Check == "link.down" && f.Basis == "baseline" {
			down = append(down, f.Title)
		}
	}
	if len(down) != 1 || !strings.Contains(down[0], "leaf02/6") || !strings.Contains(down[0], "spine02/2") || !strings.Contains(down[0], "expected topology") {
		t.Errorf("link.down from the baseline: %q", down)
	}
	// Without --fail-on the exit status ignores findings, but the report
	// is judged as check judges it: never "healthy" beside an error.
	if d.Status != "unhealthy" || d.FailOn != "error" {
		t.Errorf("without --fail-on: status %q fail_on %q, want unhealthy at error", d.Status, d.FailOn)
	}
	second := sweepFiles(t, state)
	if want := []string{"baseline.idx", "baseline.json.gz", "baseline.topo", "", "", "", "last-sweep.json", "snapshot.json", "sweep.lock", "", ""}; len(second) != 11 || slices.Equal(first, second) ||
		!strings.HasPrefix(second[3], "census-") || !strings.HasPrefix(second[4], "fabric-") || !strings.HasPrefix(second[5], "gate-") || !strings.HasPrefix(second[9], "totals-") || !strings.HasPrefix(second[10], "verdicts-") || second[0] != want[0] || second[1] != want[1] || second[2] != want[2] || second[6] != want[6] || second[7] != want[7] || second[8] != want[8] {
		t.Errorf("state dir: first %v, second %v; want baseline.idx, baseline.json.gz, baseline.topo, one new census-*.json, one new fabric file, one new gate-*.idx, last-sweep.json, snapshot.json, sweep.lock, one new totals-*.bin and one new verdicts-*.json", first, second)
	}

	// The same with --fail-on error: the missing link fails the sweep.
	// (--expect-topology: a designed topology instead of the accepted one.)
	code, stdout, _ = run("sweep", "--sim="+topo, "--faults", faults, "--fail-on", "error", "--no-save", "--state-dir", state, "--expect-topology", topo)
	if code != ExitFindings {
		t.Errorf("--fail-on error with a link down: exit %d, want 1", code)
	}
	d = chkParse(t, stdout)
	if d.Status != "unhealthy" || d.FailOn != "error" {
		t.Errorf("status %q fail_on %q", d.Status, d.FailOn)
	}
	if third := sweepFiles(t, state); !slices.Equal(third, second) {
		t.Errorf("--no-save changed the state dir: %v -> %v", second, third)
	}
}

// TestSweepOutputs: --out and --prom create their folders, follow a
// symlink to its target, refuse a FIFO, a device or a directory with one
// line before sweeping (leaving them as they were), and - is stdout.
func TestSweepOutputs(t *testing.T) {
	topo := chkTopology(t)
	dir := t.TempDir()
	out, prom := filepath.Join(dir, "a", "b", "r.json"), filepath.Join(dir, "c", "x.prom")
	code, stdout, stderr := run("sweep", "--sim="+topo, "--out", out, "--prom", prom, "--no-save")
	if code != ExitHealthy || stdout != "" {
		t.Fatalf("into missing folders: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	for _, p := range []string{out, prom} {
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			t.Errorf("%s: %v", p, err)
		}
	}

	code, stdout, _ = run("sweep", "--sim="+topo, "--out", "-", "--no-save")
	if code != ExitHealthy {
		t.Fatalf("--out -: exit %d", code)
	}
	chkParse(t, stdout)

	target := filepath.Join(dir, "reports", "current.json")
	os.MkdirAll(filepath.Dir(target), 0o755)
	link := filepath.Join(dir, "report.json")
	os.Symlink(target, link)
	if code, _, stderr := run("sweep", "--sim="+topo, "--out", link, "--no-save"); code != ExitHealthy {
		t.Fatalf("symlink: exit %d: %s", code, stderr)
	}
	if st, _ := os.Lstat(link); st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("--out replaced the symlink %s by a %v", link, st.Mode())
	}
	data, _ := os.ReadFile(target)
	chkParse(t, string(data))

	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	for _, c := range []struct{ flag, path, want string }{
		{"--out", fifo, "named pipe"},
		{"--prom", fifo, "named pipe"},
		{"--out", "/dev/full", "device"},
		{"--prom", "/dev/full", "device"},
		{"--out", dir, "directory"},
	} {
		before, _ := os.Lstat(c.path)
		args := []string{"sweep", "--sim=" + topo, "--state-dir", state, c.flag, c.path}
		if c.flag == "--prom" {
			args = append(args, "--out", filepath.Join(dir, "ok.json"))
		}
		code, stdout, stderr := run(args...)
		if code != ExitUndecided || stdout != "" || strings.Count(stderr, "\n") != 1 ||
			!strings.Contains(stderr, c.flag+": "+c.path) || !strings.Contains(stderr, c.want) {
			t.Errorf("%s %s: exit %d, stdout %q, stderr %q", c.flag, c.path, code, stdout, stderr)
		}
		if after, _ := os.Lstat(c.path); after.Mode() != before.Mode() {
			t.Errorf("%s: %v became %v", c.path, before.Mode(), after.Mode())
		}
	}
	if _, err := os.Stat(state); err == nil {
		t.Errorf("a refused output still swept into %s", state)
	}
}

// TestSweepREADMECronLine runs the README's cron lines as written (the
// one-fabric line and the two-fabric pair), on a fresh host (no state dir,
// no textfile dir), with /var/lib moved into a temporary folder and --sim
// added; twice each, as cron would.
func TestSweepREADMECronLine(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for l := range strings.Lines(string(readme)) {
		if strings.HasPrefix(l, "*/15 ") && strings.Contains(l, "ibdoctor sweep") {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	if len(lines) < 3 {
		t.Fatalf("README.md has %d cron lines (*/15 ... ibdoctor sweep ...), want the one-fabric line and the two-fabric pair", len(lines))
	}
	root := t.TempDir()
	for _, line := range lines {
		fields := strings.Fields(strings.ReplaceAll(line, "/var/lib/", root+"/var/lib/"))
		// minute hour day month weekday user command...
		if len(fields) < 8 || fields[5] != "root" || fields[6] != "ibdoctor" {
			t.Fatalf("cron line not in the /etc/cron.d form: %q", line)
		}
		args := append(fields[7:], "--sim="+chkTopology(t))
		for i := range 2 {
			code, stdout, stderr := run(args...)
			if code != ExitHealthy || stdout != "" || stderr != "" {
				t.Fatalf("run %d of %q: exit %d, stdout %q, stderr %q", i+1, line, code, stdout, stderr)
			}
		}
		var outs []string
		for i, f := range fields[:len(fields)-1] {
			switch f {
			case "--out", "--prom":
				outs = append(outs, fields[i+1])
			case "--state-dir":
				outs = append(outs, filepath.Join(fields[i+1], "snapshot.json"))
			}
		}
		if len(outs) != 3 {
			t.Errorf("%q: want --state-dir, --out and --prom", line)
		}
		for _, p := range outs {
			if _, err := os.Stat(p); err != nil {
				t.Errorf("after the cron line %q: %v", line, err)
			}
		}
	}
}

// TestSweepFailedKeepsReport: a sweep that fails keeps the last good
// report and snapshot, exits 2, and its textfile says
// ibdoctor_sweep_success 0 with the last success's time.
func TestSweepFailedKeepsReport(t *testing.T) {
	topo := chkTopology(t)
	dir := t.TempDir()
	out, prom, state := filepath.Join(dir, "r.json"), filepath.Join(dir, "x.prom"), filepath.Join(dir, "state")
	if code, _, stderr := run("sweep", "--sim="+topo, "--out", out, "--prom", prom, "--state-dir", state); code != ExitHealthy {
		t.Fatalf("good sweep: exit %d: %s", code, stderr)
	}
	good, _ := os.ReadFile(out)
	goodSnap, _ := os.ReadFile(filepath.Join(state, "snapshot.json"))
	goodProm, _ := os.ReadFile(prom)
	var okAt string
	for l := range strings.Lines(string(goodProm)) {
		if strings.HasPrefix(l, "ibdoctor_sweep_last_success_timestamp_seconds ") {
			okAt = l
		}
	}
	bad := writeFile(t, "broken.net", "this is not a topology\n")
	code, stdout, stderr := run("sweep", "--sim="+bad, "--out", out, "--prom", prom, "--state-dir", state)
	if code != ExitUndecided || stdout != "" || stderr == "" {
		t.Fatalf("failed sweep: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if now, _ := os.ReadFile(out); !bytes.Equal(now, good) {
		t.Error("a failed sweep replaced the report")
	}
	if now, _ := os.ReadFile(filepath.Join(state, "snapshot.json")); !bytes.Equal(now, goodSnap) {
		t.Error("a failed sweep replaced the snapshot")
	}
	p, _ := os.ReadFile(prom)
	// ibdoctor_sweep_complete is the kept good sweep's, as its counts are.
	for _, want := range []string{"ibdoctor_sweep_success 0\n", "ibdoctor_sweep_complete 1\n", okAt} {
		if okAt == "" || !strings.Contains(string(p), want) {
			t.Errorf("textfile after the failure lacks %q:\n%s", want, p)
		}
	}
}

// TestSweepBaselineAccept: a lost cable is reported by every sweep until
// the operator accepts the fabric without it, and by none after.
func TestSweepBaselineAccept(t *testing.T) {
	topo := chkTopology(t)
	state := filepath.Join(t.TempDir(), "state")
	if code, _, stderr := run("sweep", "--sim="+topo, "--state-dir", state, "--out", filepath.Join(state, "r.json")); code != ExitHealthy {
		t.Fatalf("first sweep: exit %d: %s", code, stderr)
	}
	faults := writeFile(t, "down.faults", "down leaf02/6\nsweep\n")
	linkDown := func(d *chkDoc) int {
		n := 0
		for _, f := range d.Findings {
			if f.Check == "link.down" && strings.Contains(f.Title, "leaf02/6") {
				n++
			}
		}
		return n
	}
	for i := range 3 {
		code, stdout, stderr := run("sweep", "--sim="+topo, "--faults", faults, "--state-dir", state)
		if code != ExitHealthy {
			t.Fatalf("sweep %d without the cable: exit %d: %s", i+2, code, stderr)
		}
		if n := linkDown(chkParse(t, stdout)); n != 1 {
			t.Errorf("sweep %d without the cable: %d link.down findings for leaf02/6, want 1", i+2, n)
		}
	}
	code, stdout, stderr := run("baseline", "accept", "--state-dir", state)
	if code != ExitHealthy || !strings.Contains(stdout, "accepted") {
		t.Fatalf("baseline accept: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, stdout, stderr = run("sweep", "--sim="+topo, "--faults", faults, "--state-dir", state)
	if code != ExitHealthy {
		t.Fatalf("sweep after accept: exit %d: %s", code, stderr)
	}
	d := chkParse(t, stdout)
	if n := linkDown(d); n != 0 {
		t.Errorf("after accept: %d link.down findings for leaf02/6, want 0", n)
	}
	for _, f := range d.Findings {
		if strings.HasPrefix(f.Check, "topology.") {
			t.Errorf("after accept: %s %q", f.Check, f.Title)
		}
	}
}

// TestBaselineAcceptRefuses: nothing to accept, and a partial snapshot.
func TestBaselineAcceptRefuses(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	code, _, stderr := run("baseline", "accept", "--state-dir", state)
	if code != ExitUndecided || !strings.Contains(stderr, "ibdoctor sweep") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("no snapshot: exit %d, stderr %q", code, stderr)
	}
}

// TestREADMEAlertRules: the README's alert rules are valid Prometheus
// rules (promtool check rules) and cover a failing and a stale sweep.
func TestREADMEAlertRules(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "```yaml\ngroups:")
	rules, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("README.md has no ```yaml groups: block of alert rules")
	}
	rules = "groups:" + rules
	for _, want := range []string{"ibdoctor_sweep_success == 0", "time() - ibdoctor_sweep_last_success_timestamp_seconds"} {
		if !strings.Contains(rules, want) {
			t.Errorf("README's alert rules lack %q", want)
		}
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool not found and CI=true: install the Debian package prometheus")
		}
		t.Skip("promtool not found: install the Debian package prometheus to run this test")
	}
	path := writeFile(t, "rules.yml", rules)
	if out, err := exec.Command(promtool, "check", "rules", path).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules: %v\n%s", err, out)
	}
}
