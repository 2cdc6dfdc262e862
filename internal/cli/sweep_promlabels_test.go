package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// promSeries are the ibdoctor_finding_impact_score lines of a textfile
// whose check label is check.
func promSeries(text, check string) []string {
	var out []string
	for l := range strings.Lines(text) {
		if strings.HasPrefix(l, `ibdoctor_finding_impact_score{check="`+check+`"`) {
			out = append(out, strings.TrimSuffix(l, "\n"))
		}
	}
	return out
}

// TestSweepPromLabelsWhereTheFaultIs: a grouped routing.unreachable is
// labelled at its egress port, so two down uplinks on two leaves are two
// series naming the leaves, and every finding at or above
// --prom-min-severity is a series or counted in
// ibdoctor_finding_series_dropped (trial T5: both were labelled with
// their first destination, 'gpu003 mlx5_1/1', one series for two
// findings, dropped 0).
func TestSweepPromLabelsWhereTheFaultIs(t *testing.T) {
	dir := t.TempDir()
	faults := writeFile(t, "f6.txt", "down leaf03/50\ndown leaf04/50\nblackhole leaf01 dlid=\"gpu020 mlx5_0\"\nblackhole leaf02 dlid=\"gpu020 mlx5_0\"\n")
	out, prom := filepath.Join(dir, "r.json"), filepath.Join(dir, "p.prom")
	if code, _, stderr := run("sweep", "--sim", "--faults", faults, "--no-save", "--out", out, "--prom", prom); code != ExitHealthy && code != ExitPartial {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	p, _ := os.ReadFile(prom)
	text := string(p)
	series := promSeries(text, "routing.unreachable")
	for _, want := range []string{
		`ibdoctor_finding_impact_score{check="routing.unreachable",node="leaf03",port="50",peer=""}`,
		`ibdoctor_finding_impact_score{check="routing.unreachable",node="leaf04",port="50",peer=""}`,
		// One blackhole at two leaves is one finding at both: labelled
		// with the first only, the alert sent the operator to leaf01 and
		// fired anew for leaf02 once leaf01 was fixed.
		`ibdoctor_finding_impact_score{check="routing.unreachable",node="leaf01 and leaf02",port="",peer=""}`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("textfile lacks %s; routing.unreachable series:\n%s", want, strings.Join(series, "\n"))
		}
	}
	var doc struct {
		Findings []struct {
			Check    string `json:"check"`
			Severity string `json:"severity"`
		} `json:"findings"`
	}
	r, _ := os.ReadFile(out)
	if err := json.Unmarshal(r, &doc); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range doc.Findings {
		if f.Severity != "info" {
			n++
		}
	}
	dropped := regexp.MustCompile(`(?m)^ibdoctor_finding_series_dropped (\d+)$`).FindStringSubmatch(text)
	all := strings.Count(text, "\nibdoctor_finding_impact_score{")
	if dropped == nil || all+mustAtoi(dropped[1]) != n {
		t.Errorf("%d findings at or above warning, %d series + dropped %v", n, all, dropped)
	}
}

// TestSweepPromLabelsNameTheGroup: a finding about a group of hosts is
// labelled with the group as its title names it, not with one member
// (trial T13: node="a05-p1-dgx-01-c01" for '10 a05-p1-dgx-01-c* hosts
// have no HCA-5').
func TestSweepPromLabelsNameTheGroup(t *testing.T) {
	f := corpusPath(t, "dgx-ndr-2025.ibnetdiscover")
	dir := t.TempDir()
	out, prom := filepath.Join(dir, "r.json"), filepath.Join(dir, "p.prom")
	if code, _, stderr := run("sweep", "--sim="+f, "--no-save", "--out", out, "--prom", prom); code > ExitHealthy && code != ExitPartial {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	p, _ := os.ReadFile(prom)
	series := promSeries(string(p), "topology.missing-hca")
	want := `ibdoctor_finding_impact_score{check="topology.missing-hca",node="a05-p1-dgx-01-c*",port="",peer=""}`
	if len(series) != 1 || !strings.HasPrefix(series[0], want+" ") {
		t.Errorf("missing-hca series %q, want one %s", series, want)
	}
	r, _ := os.ReadFile(out)
	if !strings.Contains(string(r), `"group": "a05-p1-dgx-01-c*"`) {
		t.Error(`the JSON report's missing-hca finding has no "group": "a05-p1-dgx-01-c*"`)
	}
}

func mustAtoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}
