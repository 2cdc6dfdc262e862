package cli

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// TestGateOwnSweepListsEachNotReadOnce (trial G2): with no snapshot the
// gate sweeps the fabric itself; a job host's PMA behind a down uplink
// (leaf01/33) is then not read by that sweep and again by the job's live
// re-read. Each thing not read is one line: before, "ClassPortInfo at
// gpu005 mlx5_0" was listed twice, once "(found by the gate's sweep of
// the whole fabric ...)".
func TestGateOwnSweepListsEachNotReadOnce(t *testing.T) {
	faults := writeFile(t, "faults.txt", "down leaf01/33\n")
	code, out, stderr := run("gate", "--sim", "--faults", faults, "--nodes", "gpu001,gpu005", "--state-dir", filepath.Join(t.TempDir(), "state"), "--json")
	if code != ExitFindings {
		t.Fatalf("exit %d, want %d: %s", code, ExitFindings, stderr)
	}
	var doc struct {
		Unreached []struct {
			What   string `json:"what"`
			Where  string `json:"where"`
			Reason string `json:"reason"`
		} `json:"unreached"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	job := 0
	for _, u := range doc.Unreached {
		k := u.What + " at " + u.Where
		if r, dup := seen[k]; dup {
			t.Errorf("%s listed twice:\n  %s\n  %s", k, r, u.Reason)
		}
		seen[k] = u.Reason
		if u.What == "ClassPortInfo" && len(u.Where) > 7 && u.Where[:7] == "gpu005 " {
			job++
		}
	}
	if job == 0 {
		t.Fatalf("gpu005's PMAs are not listed as not read: %v", doc.Unreached)
	}
}
