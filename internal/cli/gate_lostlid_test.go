package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// trialFatTree is ibsim's net file of trial A's ft.net: leaf1..4 with
// hosts h001..h024 on ports 1-6, two cables to spine1 (ports 7, 8) and
// two to spine2 (9, 10).
func trialFatTree() string {
	var b strings.Builder
	for h := 1; h <= 24; h++ {
		fmt.Fprintf(&b, "Hca 1 \"h%03d\" # \"h%03d HCA-1\"\n[1] \"leaf%d\"[%d]\n\n", h, h, (h-1)/6+1, (h-1)%6+1)
	}
	for l := 1; l <= 4; l++ {
		fmt.Fprintf(&b, "Switch 10 \"leaf%d\" # \"leaf%d\"\n", l, l)
		for p := 1; p <= 6; p++ {
			fmt.Fprintf(&b, "[%d] \"h%03d\"[1]\n", p, (l-1)*6+p)
		}
		for k := range 4 {
			fmt.Fprintf(&b, "[%d] \"spine%d\"[%d]\n", 7+k, k/2+1, 2*(l-1)+k%2+1)
		}
		b.WriteString("\n")
	}
	for s := 1; s <= 2; s++ {
		fmt.Fprintf(&b, "Switch 8 \"spine%d\" # \"spine%d\"\n", s, s)
		for p := 1; p <= 8; p++ {
			fmt.Fprintf(&b, "[%d] \"leaf%d\"[%d]\n", p, (p-1)/2+1, 7+2*(s-1)+(p-1)%2)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestSweepAndGateLostHostsNoImbalance (trial A8, cron and gate path):
// two hosts of leaf3 unplugged; the sweep said "warning
// routing.ecmp-imbalance leaf4 spreads 16 destinations ... 1.2x" (and
// the same for other leaves) with "check for static or edited routes",
// and exported it to Prometheus, and a gate whose routes leave by the
// busiest port carried the sweep's verdict. The tables still forward
// the two LIDs into leaf3's dead ports: routing.lost-lid says so, one
// finding per port, and the balance is the subnet manager's, lost LIDs
// included. Jobs from leaf4 (the trial's warning) to every host of
// leaf1 and leaf2 gate without it.
func TestSweepAndGateLostHostsNoImbalance(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	dir := t.TempDir()
	topo := filepath.Join(dir, "ft.net")
	if err := os.WriteFile(topo, []byte(trialFatTree()), 0o644); err != nil {
		t.Fatal(err)
	}
	// The tables as a subnet manager left them (min-hop, balanced with
	// every host up), given as read: ibdoctor judges the balance of
	// tables it read, not of routes it computed.
	code, lfts, stderr := run("routes", "--sim="+topo, "--format", "dump_fts")
	if code != ExitHealthy {
		t.Fatalf("routes: exit %d: %s", code, stderr)
	}
	lftFile := filepath.Join(dir, "ft.dump_fts")
	if err := os.WriteFile(lftFile, []byte(lfts), 0o644); err != nil {
		t.Fatal(err)
	}
	faults := writeFile(t, "unplug.faults", "polling h015/1\npolling h016/1\n")
	state := filepath.Join(dir, "state")
	report := filepath.Join(dir, "r.json")
	prom := filepath.Join(dir, "p.prom")
	code, _, stderr = run("sweep", "--sim="+topo, "--lfts", lftFile, "--faults", faults, "--state-dir", state, "--out", report, "--prom", prom)
	if code == ExitUndecided {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	lost := 0
	for _, f := range chkParse(t, string(b)).Findings {
		switch f.Check {
		case "routing.ecmp-imbalance":
			t.Errorf("sweep: %s %q", f.Severity, f.Title)
		case "routing.lost-lid":
			lost++
		}
	}
	if lost != 2 {
		t.Errorf("sweep: %d routing.lost-lid findings, want 2 (leaf3/3 and leaf3/4)", lost)
	}
	if p, err := os.ReadFile(prom); err != nil || strings.Contains(string(p), `check="routing.ecmp-imbalance"`) && !strings.Contains(string(p), `check="routing.ecmp-imbalance",severity="warning"} 0`) {
		t.Errorf("prom exports an ecmp-imbalance (err %v):\n%s", err, grepLines(string(p), "ecmp"))
	}
	for dst := 1; dst <= 12; dst++ {
		nodes := fmt.Sprintf("h019,h%03d", dst)
		code, out, stderr := run("gate", "--sim="+topo, "--lfts", lftFile, "--faults", faults, "--state-dir", state, "--nodes", nodes, "--json")
		if code == ExitUndecided {
			t.Fatalf("gate %s: exit %d: %s", nodes, code, stderr)
		}
		for _, f := range chkParse(t, out).Findings {
			if f.Check == "routing.ecmp-imbalance" {
				t.Errorf("gate %s: %s %q", nodes, f.Severity, f.Title)
			}
		}
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
