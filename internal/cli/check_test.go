package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// chkTopology writes a fat tree of 4 leaves × 4 hosts and 4 spines
// (hosts gpu001..gpu016, "gpuNNN mlx5_0"; leaf ports 5..8 go to spines
// 1..4) as ibnetdiscover text and returns its path. The simulator gives
// it LIDs and min-hop routes as OpenSM would.
func chkTopology(t *testing.T) string {
	t.Helper()
	f, err := topology.FatTree2{Common: topology.Common{SwitchPorts: 8}, Leaves: 4, Spines: 4, HostsPerLeaf: 4}.Build()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := fabric.WriteIBNetDiscover(&b, f); err != nil {
		t.Fatal(err)
	}
	return writeFile(t, "fabric.txt", b.String())
}

// chkDoc is the report document as a program reads it.
type chkDoc struct {
	report.Document
	Findings []checks.Finding `json:"findings"`
}

func chkParse(t *testing.T, out string) *chkDoc {
	t.Helper()
	var d chkDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("output is not a JSON report: %v\n%s", err, out)
	}
	if d.Schema != report.Schema {
		t.Fatalf("schema %q, want %q", d.Schema, report.Schema)
	}
	return &d
}

const (
	faultSpine1X = "degrade leaf02/6 width=1x\n"            // leaf02 <-> spine02: critical
	faultHost1X  = "degrade \"gpu005 mlx5_0\"/1 width=1x\n" // on leaf02: error
)

func TestCheckExitCodes(t *testing.T) {
	topo := chkTopology(t)
	spine := writeFile(t, "spine.faults", faultSpine1X)
	host := writeFile(t, "host.faults", faultHost1X)
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"healthy", nil, ExitHealthy},
		{"healthy, fail on info", []string{"--fail-on", "info"}, ExitHealthy},
		{"1X spine link", []string{"--faults", spine}, ExitFindings},
		{"1X spine link, fail on critical", []string{"--faults", spine, "--fail-on", "critical"}, ExitFindings},
		{"1X host link (error)", []string{"--faults", host}, ExitFindings},
		{"1X host link, fail on critical", []string{"--faults", host, "--fail-on", "critical"}, ExitHealthy},
		{"1X host link, links only", []string{"--faults", host, "--checks", "routing"}, ExitHealthy},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, stderr := run(append([]string{"check", "--sim=" + topo}, c.args...)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, out, stderr)
			}
			want := map[int]string{ExitHealthy: "Status:    healthy", ExitFindings: "Status:    unhealthy"}[code]
			if !strings.Contains(out, want) {
				t.Errorf("no %q in\n%s", want, out)
			}
		})
	}
}

func TestCheckJSON(t *testing.T) {
	topo := chkTopology(t)
	faults := writeFile(t, "f.faults", faultSpine1X+faultHost1X+"counter leaf03/6 SymbolErrorCounter=65535\n")
	code, out, stderr := run("check", "--sim="+topo, "--faults", faults, "--json")
	if code != ExitFindings {
		t.Fatalf("exit %d, want 1; stderr %s", code, stderr)
	}
	if strings.Contains(stderr, "\x1b[") {
		t.Errorf("escape sequences on stderr: %q", stderr)
	}
	if strings.Contains(out, `\u003c`) || !strings.Contains(out, "<->") {
		t.Errorf("link names are HTML-escaped in the JSON")
	}
	d := chkParse(t, out)
	if d.Command != "check" || d.Status != "unhealthy" || d.FailOn != "error" || !d.Complete || d.Source != "sim:fabric.txt" {
		t.Errorf("header: command %q status %q fail_on %q complete %v source %q", d.Command, d.Status, d.FailOn, d.Complete, d.Source)
	}
	// The file has no forwarding tables: the 8 are computed, none read
	// (trial H8).
	if d.Fabric.Nodes != 24 || d.Fabric.Switches != 8 || d.Fabric.CAs != 16 || d.Fabric.Links != 32 || d.Fabric.SwitchesRouted != 0 || d.Fabric.SwitchesComputed != 8 || d.Fabric.PortsRead < 48 {
		t.Errorf("fabric %+v", d.Fabric)
	}
	// Without --interval or an expected topology five checks cannot run
	// (counters.utilization, sm.stalled, routing.traffic-imbalance,
	// topology.changed, .miswired),
	// and routing.credit-loop, .ecmp-imbalance and .asymmetric do not
	// judge the min-hop tables ibdoctor computed for a topology file
	// without them (they would judge ibdoctor's routing, not the SM's);
	// an ibnetdiscover file carries no firmware versions
	// (firmware.mixed-version) nor adaptive-routing state
	// (routing.adaptive), and no subnet manager, M_Key policy, MTU, VLs
	// or P_Keys: four sm.*, sm.mkey-policy, config.mtu-mismatch,
	// config.vl-mismatch and three partition.* judge none of the
	// simulator's stand-ins (TestFileRecordsCheckInputs).
	if len(d.ChecksRun) != len(checks.All())-20 || len(d.Skipped) != 20 {
		t.Errorf("ran %v, skipped %v", d.ChecksRun, d.Skipped)
	}
	if d.MADs == nil || d.MADs.Sent == 0 || d.MADs.Answered == 0 || d.Timings["total"] == "" {
		t.Errorf("mads %+v timings %v", d.MADs, d.Timings)
	}
	var got []string
	for _, f := range d.Findings {
		if f.Severity >= checks.Warning {
			got = append(got, f.Severity.String()+" "+f.Check+" "+f.Entities[0].String())
		}
	}
	want := []string{
		"critical link.degraded-width leaf02/6",
		"error link.degraded-width gpu005 mlx5_0/1",
		"warning counters.errors leaf03/6",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings at warning+:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if d.Counts["critical"] != 1 || d.Counts["error"] != 1 || d.Counts["warning"] != 1 {
		t.Errorf("findings_by_severity %v", d.Counts)
	}
}

func TestCheckList(t *testing.T) {
	code, out, stderr := run("check", "--list")
	if code != ExitHealthy || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.HasPrefix(strings.TrimSpace(lines[0]), "CHECK") || !strings.Contains(lines[0], "WHAT IT FINDS") {
		t.Errorf("header %q", lines[0])
	}
	for _, c := range checks.All() {
		found := false
		for _, l := range lines {
			found = found || strings.HasPrefix(strings.TrimSpace(l), c.ID+" ")
		}
		if !found {
			t.Errorf("--list lacks %s", c.ID)
		}
	}
}

// TestCheckBadInput wants exit 2 and an error that names the bad thing
// and says what to do.
func TestCheckBadInput(t *testing.T) {
	topo := chkTopology(t)
	badThr := writeFile(t, "bad.thresholds", "# ours\nSymbolErrorCounter=10\nPortRcvErrors 5\n")
	unknownThr := writeFile(t, "unknown.thresholds", "SymbolErrors=10\n")
	missing := filepath.Join(t.TempDir(), "nope.txt")
	cases := []struct {
		name string
		args []string
		want []string // all must appear in stderr
	}{
		{"unknown flag", []string{"--bogus"}, []string{"--bogus", "ibdoctor check --help"}},
		{"malformed thresholds", []string{"--thresholds", badThr}, []string{"--thresholds", badThr, "line 3", `"PortRcvErrors 5"`, "Name=value"}},
		{"unknown counter in thresholds", []string{"--thresholds", unknownThr}, []string{unknownThr, "line 1", "SymbolErrors", "known:", "SymbolErrorCounter"}},
		{"bad expect-rate", []string{"--expect-rate", "4xNDR,3xHDR"}, []string{"--expect-rate", `"3xHDR"`, "1X, 2X, 4X, 8X, 12X"}},
		{"bad speed", []string{"--expect-rate", "4xFAST"}, []string{"--expect-rate", `"4xFAST"`}},
		{"bad fail-on", []string{"--fail-on", "severe"}, []string{"--fail-on", `"severe"`, "info, warning, error or critical"}},
		{"unknown check", []string{"--checks", "link.wobbly"}, []string{"--checks", `"link.wobbly"`, "ibdoctor check --list"}},
		{"missing expected topology", []string{"--expect-topology", missing}, []string{"--expect-topology", missing, "no such file", "give a designed or saved fabric"}},
		{"missing thresholds", []string{"--thresholds", missing}, []string{"--thresholds", missing, "no such file", "Name=value"}},
		{"missing topology file", []string{"--sim", missing}, []string{"--sim " + missing, "no such file", "ibdiagnet directory", "--sim=FILE"}},
		{"missing topology file with =", []string{"--sim=" + missing}, []string{"--sim", missing, "no such file"}},
		{"ibsim name with a space", []string{"--ibsim", "mysim"}, []string{"--ibsim=mysim"}},
		{"stray argument", []string{"--json", "leaf01"}, []string{`"leaf01"`, "takes only flags", "ibdoctor check --help"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"check"}, c.args...)
			if !strings.HasPrefix(c.args[0], "--sim") && c.args[0] != "--ibsim" {
				args = append(args, "--sim="+topo)
			}
			code, out, stderr := run(args...)
			if code != ExitUndecided {
				t.Fatalf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if strings.Count(strings.TrimSpace(stderr), "\n") > 2 {
				t.Errorf("want a short error, got:\n%s", stderr)
			}
		})
	}
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// TestCheckNoColor: output that is not a terminal, or with NO_COLOR set
// to a non-empty value or --no-color, carries no escape sequences; on a terminal
// (a pty) without them it is coloured, so the assertion can fail.
func TestCheckNoColor(t *testing.T) {
	topo := chkTopology(t)
	faults := writeFile(t, "f.faults", faultSpine1X+faultHost1X)
	args := []string{"check", "--sim=" + topo, "--faults", faults}

	code, out, stderr := run(args...)
	if code != ExitFindings {
		t.Fatalf("exit %d; %s", code, stderr)
	}
	if ansi.MatchString(out) || ansi.MatchString(stderr) {
		t.Errorf("escape sequences in non-terminal output:\n%q", out)
	}

	colour := func(env *string, extra ...string) bool {
		t.Helper()
		if env != nil {
			t.Setenv("NO_COLOR", *env)
		} else {
			os.Unsetenv("NO_COLOR")
		}
		text, code := runOnPTY(t, append(args, extra...)...)
		if code != ExitFindings || !strings.Contains(text, "leaf02/6") {
			t.Fatalf("on a pty: exit %d\n%s", code, text)
		}
		return ansi.MatchString(text)
	}
	// t.Setenv restores NO_COLOR (set or not) when the test ends.
	t.Setenv("NO_COLOR", "")
	if !colour(nil) {
		t.Errorf("no colour on a terminal without NO_COLOR")
	}
	one, empty := "1", ""
	if colour(&one) {
		t.Errorf("colour on a terminal with NO_COLOR=1")
	}
	// no-color.org: only a non-empty NO_COLOR turns colour off (trial E7).
	if !colour(&empty) {
		t.Errorf("no colour on a terminal with NO_COLOR set but empty")
	}
	if colour(nil, "--no-color") {
		t.Errorf("colour on a terminal with --no-color")
	}
}

// TestCheckPartial: a node that never answers makes the sweep partial.
// check then cannot vouch for the fabric (exit 2) unless something at or
// above --fail-on was found anyway (exit 1); docs/exit-codes.md.
func TestCheckPartial(t *testing.T) {
	topo := chkTopology(t)
	dead := writeFile(t, "dead.faults", "dead \"gpu016 mlx5_0\"\n")
	deadSpine := writeFile(t, "dead-spine.faults", "dead \"gpu016 mlx5_0\"\n"+faultSpine1X)
	fast := []string{"--timeout", deadTimeout, "--retries", "0", "--fail-on", "critical", "--json"}

	code, out, stderr := run(append([]string{"check", "--sim=" + topo, "--faults", dead}, fast...)...)
	if code != ExitUndecided {
		t.Fatalf("dead host, fail on critical: exit %d, want 2\n%s", code, stderr)
	}
	d := chkParse(t, out)
	// The dead host is listed as not read; it is no finding.
	if d.Status != "undecided" || d.Complete || len(d.Unreached) == 0 || len(d.Findings) != 0 {
		t.Errorf("status %q complete %v unreached %d findings %d", d.Status, d.Complete, len(d.Unreached), len(d.Findings))
	}
	if u := d.Unreached[0]; u.What != "NodeInfo" || !strings.Contains(u.Where, "leaf04 port 4") {
		t.Errorf("first unreached %+v", u)
	}

	code, out, _ = run(append([]string{"check", "--sim=" + topo, "--faults", deadSpine}, fast...)...)
	if code != ExitFindings {
		t.Fatalf("dead host and a 1X spine link: exit %d, want 1", code)
	}
	if d := chkParse(t, out); d.Status != "unhealthy" || d.Complete {
		t.Errorf("status %q complete %v", d.Status, d.Complete)
	}
}

// TestCheckSampleIncident runs check on the sample fabric and incident
// in fixtures/sample (the one 'check --sim' is to show): 256 GPUs under
// 8 leaves, two spines misrouted onto one cable each to leaf05, a 1X
// uplink with symbol errors, a marginal uplink, a polling GPU port.
// 'check --sim' alone (the built-in sample) must say the same.
func TestCheckSampleIncident(t *testing.T) {
	dir := filepath.Join("..", "..", "fixtures", "sample")
	t.Run("fixtures", func(t *testing.T) {
		checkSample(t, "--sim="+filepath.Join(dir, "fabric.txt"), "--faults", filepath.Join(dir, "faults.txt"))
	})
	t.Run("built-in", func(t *testing.T) {
		if d := checkSample(t, "--sim"); d.Source != "sim:sample" {
			t.Errorf("source %q", d.Source)
		}
	})
}

func checkSample(t *testing.T, args ...string) *chkDoc {
	t.Helper()
	code, out, stderr := run(append([]string{"check", "--json"}, args...)...)
	if code != ExitFindings {
		t.Fatalf("exit %d, want 1: %s", code, stderr)
	}
	d := chkParse(t, out)
	if !d.Complete || d.Fabric.Switches != 12 || d.Fabric.CAs != 255 {
		t.Errorf("complete %v, fabric %+v (the polling GPU is not reachable)", d.Complete, d.Fabric)
	}
	var got []string
	for _, f := range d.Findings {
		if f.Severity >= checks.Warning {
			got = append(got, fmt.Sprintf("%s %s %s", f.Severity, f.Check, f.Entities[0]))
		}
	}
	want := []string{
		"critical routing.ecmp-imbalance spine01",
		"critical routing.ecmp-imbalance spine02",
		"critical link.degraded-width leaf07/41",
		"error topology.missing-hca gpu012 mlx5_0",
		"warning counters.errors spine02/49",
		"warning counters.errors leaf02/35",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings at warning+:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if im := d.Findings[0].Impact; im.Slowdown != 8 {
		t.Errorf("misrouted spine: slowdown %v, want 8 (one of 8 cables)", im.Slowdown)
	}
	// The polling GPU port is where gpu012's missing mlx5_3 belongs: one
	// finding, naming the port.
	var polling bool
	for _, f := range d.Findings {
		polling = polling || f.Check == "topology.missing-hca" && len(f.Entities) > 1 && f.Entities[1].String() == "leaf03/28"
	}
	if !polling {
		t.Errorf("the polling GPU port (leaf03/28) is not reported")
	}
	return d
}
