package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// mkeyFindings returns the titles of a JSON report's sm.mkey-policy findings.
func mkeyFindings(t *testing.T, out string) []string {
	t.Helper()
	var titles []string
	for _, f := range chkParse(t, out).Findings {
		if f.Check == "sm.mkey-policy" {
			titles = append(titles, f.Title)
		}
	}
	return titles
}

// mkeyLeases returns a faults file's mkey lines giving every node of the
// fabric file topo the lease leaseOf says for its reference (a switch's
// policy is its port 0's, which all its ports share).
func mkeyLeases(t *testing.T, topo string, leaseOf func(ref string) int) string {
	t.Helper()
	b, err := os.ReadFile(topo)
	if err != nil {
		t.Fatal(err)
	}
	var lease strings.Builder
	for _, m := range regexp.MustCompile(`(?m)^(switchguid|caguid)=(0x[0-9a-f]+)`).FindAllStringSubmatch(string(b), -1) {
		ref := m[2]
		if m[1] == "switchguid" {
			ref += "/0"
		}
		fmt.Fprintf(&lease, "mkey %s protect=0 lease=%d\n", ref, leaseOf(ref))
	}
	if lease.Len() == 0 {
		t.Fatal("no node GUIDs in " + topo)
	}
	return lease.String()
}

// TestGateMKeyPolicyIsTheSweeps (trial A9): on a fabric whose SM sets an
// M_Key lease (OpenSM's default 4089 s on ibsim), every gate warned
// "2 of 7 ports run another M_Key policy (protection bits 0, lease 4089 s)
// than the fabric's (protection bits 0, lease 0 s)" naming the job's own
// HCAs, while the sweep and check of the same fabric said nothing: the
// snapshot does not keep the switches' M_Key fields, so the gate compared
// the HCAs it re-read with switches read as lease 0. sm.mkey-policy
// compares every port with the fabric's policy, a verdict on the whole
// fabric: a gate carries the sweep's, for the job's nodes.
func TestGateMKeyPolicyIsTheSweeps(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	topo := "../../fixtures/sample/fabric.txt"
	lease := mkeyLeases(t, topo, func(string) int { return 60 })
	all := writeFile(t, "lease.faults", lease)
	odd := writeFile(t, "odd.faults", lease+"mkey \"gpu003 mlx5_2\" protect=0 lease=120\n")
	for _, tc := range []struct {
		name, faults string
		want         map[string]string // gate --nodes: a title part, "" for none
	}{
		{"one policy", all, map[string]string{"gpu003,gpu017": "", "gpu001,gpu032": ""}},
		{"one odd HCA", odd, map[string]string{"gpu003,gpu017": "1 of 268 ports runs another M_Key policy (protection bits 0, lease 120 s) than the fabric's (protection bits 0, lease 60 s): gpu003 mlx5_2/1", "gpu001,gpu032": ""}},
	} {
		state := filepath.Join(t.TempDir(), "state")
		rep := filepath.Join(t.TempDir(), "r.json")
		if code, _, stderr := run("sweep", "--sim="+topo, "--faults", tc.faults, "--state-dir", state, "--out", rep); code != ExitHealthy && code != ExitFindings {
			t.Fatalf("%s: sweep: exit %d\n%s", tc.name, code, stderr)
		}
		sweep, err := os.ReadFile(rep)
		if err != nil {
			t.Fatal(err)
		}
		swept := mkeyFindings(t, string(sweep))
		for nodes, want := range tc.want {
			_, out, stderr := run("gate", "--sim="+topo, "--faults", tc.faults, "--state-dir", state, "--nodes", nodes, "--json")
			got := mkeyFindings(t, out)
			switch {
			case want == "" && len(got) > 0:
				t.Errorf("%s: gate --nodes %s: %q, want no sm.mkey-policy finding (the sweep's: %q)\n%s", tc.name, nodes, got, swept, stderr)
			case want != "" && (len(got) != 1 || !strings.Contains(got[0], want)):
				t.Errorf("%s: gate --nodes %s: %q, want one containing %q (the sweep's: %q)\n%s", tc.name, nodes, got, want, swept, stderr)
			}
		}
		if tc.faults == odd && (len(swept) != 1 || !strings.Contains(swept[0], "gpu003 mlx5_2/1")) {
			t.Errorf("%s: sweep: %q, want the odd HCA", tc.name, swept)
		}
	}
}
