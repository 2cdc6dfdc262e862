package cli

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
)

// smFindings returns "severity check title" of a JSON report's sm.*
// findings other than sm.no-master (which a gate judges live) and
// sm.mkey-policy (TestGateMKeyPolicyIsTheSweeps), and whether every one
// carries the evidence saying whose verdict it is.
func smFindings(t *testing.T, out string) (got []string, judged bool) {
	t.Helper()
	judged = true
	for _, f := range chkParse(t, out).Findings {
		if !strings.HasPrefix(f.Check, "sm.") || f.Check == "sm.no-master" || f.Check == "sm.mkey-policy" {
			continue
		}
		got = append(got, f.Severity.String()+" "+f.Check+" "+f.Title)
		if !slices.ContainsFunc(f.Evidence, func(e checks.Evidence) bool {
			return e.Name == "judged" && strings.Contains(e.Text, "the sweep's verdict of")
		}) {
			judged = false
		}
	}
	return got, judged
}

// TestGateSMIsTheSweeps (trial B15): two master SMs were critical in the
// sweep ("2 subnet managers are master at once") and every gate said
// healthy, exit 0 — with a snapshot, and with none (the gate's own sweep
// read SMInfo and still said "SMInfo was not read"). An SM's state is the
// whole fabric's: a gate reports the sweep's sm.* findings whatever its
// job's hosts (evidence 'judged' saying whose), so a gate fails as the
// sweep does.
func TestGateSMIsTheSweeps(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	topo := "../../fixtures/sample/fabric.txt"
	for _, tc := range []struct {
		name, faults string
		code         int // the gate's exit
		want         string
	}{
		{"two masters", "sm \"gpu005 mlx5_0\"/1 state=master\n", ExitFindings, "critical sm.multiple-masters 2 subnet managers are master at once"},
		{"standby outranks", "sm \"gpu005 mlx5_0\"/1 state=standby priority=15\n", ExitHealthy, "warning sm.priority"},
	} {
		faults := writeFile(t, "sm.faults", tc.faults)
		state := filepath.Join(t.TempDir(), "state")
		rep := filepath.Join(t.TempDir(), "r.json")
		if code, _, stderr := run("sweep", "--sim="+topo, "--faults", faults, "--state-dir", state, "--out", rep); code != ExitHealthy && code != ExitFindings {
			t.Fatalf("%s: sweep: exit %d\n%s", tc.name, code, stderr)
		}
		swept, _ := smFindings(t, readFile(t, rep))
		if len(swept) != 1 || !strings.HasPrefix(swept[0], tc.want) {
			t.Fatalf("%s: sweep: %q, want one %q", tc.name, swept, tc.want)
		}
		for _, g := range []struct{ how, state string }{
			{"snapshot", state},
			{"own sweep", filepath.Join(t.TempDir(), "none")},
		} {
			code, out, stderr := run("gate", "--sim="+topo, "--faults", faults, "--state-dir", g.state, "--nodes", "gpu[001-004]", "--json")
			got, judged := smFindings(t, out)
			if !slices.Equal(got, swept) {
				t.Errorf("%s, %s: gate: %q, want the sweep's %q\n%s", tc.name, g.how, got, swept, stderr)
			}
			if !judged {
				t.Errorf("%s, %s: gate: an sm.* finding without 'judged' evidence naming the sweep", tc.name, g.how)
			}
			if code != tc.code {
				t.Errorf("%s, %s: gate exit %d, want %d\n%s", tc.name, g.how, code, tc.code, stderr)
			}
		}
	}
}
