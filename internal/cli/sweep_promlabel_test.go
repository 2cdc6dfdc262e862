package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSweepPromLabelTwoFabrics: two sweeps of two fabrics, each with its
// own --state-dir and --prom-label fabric=NAME, write textfiles that one
// textfile collector can read together: every series of each carries its
// fabric's label, so no series of one is a series of the other (trial T9:
// both files had ibdoctor_findings{severity="critical"}, and so on).
// Merged family by family, as the collector merges files, they pass
// promtool when it is installed.
func TestSweepPromLabelTwoFabrics(t *testing.T) {
	topo := chkTopology(t)
	dir := t.TempDir()
	var texts []string
	for _, fab := range []string{"compute", "storage"} {
		prom := filepath.Join(dir, fab+".prom")
		args := []string{"sweep", "--sim=" + topo, "--state-dir", filepath.Join(dir, fab), "--out", filepath.Join(dir, fab+".json"), "--prom", prom, "--prom-label", "fabric=" + fab}
		if code, _, stderr := run(args...); code != ExitHealthy && code != ExitPartial {
			t.Fatalf("%s: exit %d: %s", fab, code, stderr)
		}
		p, _ := os.ReadFile(prom)
		for l := range strings.Lines(string(p)) {
			if !strings.HasPrefix(l, "#") && !strings.Contains(l, `{fabric="`+fab+`"`) {
				t.Errorf("%s: series without its label: %q", fab, l)
			}
		}
		texts = append(texts, string(p))
	}
	// A failed sweep's textfile keeps the label on what it writes anew.
	bad := writeFile(t, "badthr.txt", "SymbolErrorCounter=abc\n")
	prom := filepath.Join(dir, "storage.prom")
	if code, _, _ := run("sweep", "--sim="+topo, "--state-dir", filepath.Join(dir, "storage"), "--prom", prom, "--prom-label", "fabric=storage", "--thresholds", bad); code != ExitUndecided {
		t.Fatalf("bad thresholds: exit %d", code)
	}
	p, _ := os.ReadFile(prom)
	if !strings.Contains(string(p), "\nibdoctor_sweep_success{fabric=\"storage\"} 0\n") {
		t.Errorf("failed textfile:\n%s", p)
	}
	texts[1] = string(p)
	seen := map[string]bool{}
	families := map[string][]string{}
	var order []string
	for _, text := range texts {
		for l := range strings.Lines(text) {
			if strings.HasPrefix(l, "#") {
				continue
			}
			series, _, _ := strings.Cut(strings.TrimSuffix(l, "\n"), "} ")
			if seen[series] {
				t.Errorf("series %s} in both textfiles", series)
			}
			seen[series] = true
			name, _, _ := strings.Cut(series, "{")
			if families[name] == nil {
				order = append(order, name)
			}
			families[name] = append(families[name], l)
		}
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed: the merged textfile is not linted")
	}
	var merged bytes.Buffer
	for _, name := range order {
		merged.WriteString("# HELP " + name + " x.\n# TYPE " + name + " gauge\n")
		for _, l := range families[name] {
			merged.WriteString(l)
		}
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = &merged
	if out, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics on the merged textfiles: %v\n%s", err, out)
	}
}

// TestSweepPromLabelRefused: a --prom-label that is not name=value, names
// a label ibdoctor's series use, or repeats a name, is refused in one
// line before anything is read.
func TestSweepPromLabelRefused(t *testing.T) {
	topo := chkTopology(t)
	dir := t.TempDir()
	for _, c := range []struct{ args []string }{
		{[]string{"--prom-label", "fabric"}},
		{[]string{"--prom-label", "1fabric=x"}},
		{[]string{"--prom-label", "__name__=x"}},
		{[]string{"--prom-label", "node=x"}},
		{[]string{"--prom-label", "fabric="}},
		{[]string{"--prom-label", "fabric=a", "--prom-label", "fabric=b"}},
	} {
		args := append([]string{"sweep", "--sim=" + topo, "--no-save", "--out", filepath.Join(dir, "r.json"), "--prom", filepath.Join(dir, "p.prom")}, c.args...)
		code, _, stderr := run(args...)
		if code != ExitUndecided || !strings.Contains(stderr, "--prom-label") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%q: exit %d: %s", c.args, code, stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "r.json")); err == nil {
			t.Errorf("%q: a report was written", c.args)
		}
	}
}
