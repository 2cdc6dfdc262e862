package cli

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestClassPortInfoSaysWhy (trial T7 follow-up): a PMA that did not answer
// its ClassPortInfo is one line, and when what was read shows why — the
// LID route to it from the reading port leaves by a port that is down
// (`down leaf01/49`: the SM has not routed around it) — the line says so.
// Where nothing read shows a cause (the agent drops the attribute), the
// line says only that it did not answer, as before.
func TestClassPortInfoSaysWhy(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	because := regexp.MustCompile(`ClassPortInfo at spine03 \(LID 3\): .*\(counters of ports [0-9,-]+ not read\); the LID route to it from this port \(gpu001 mlx5_0/1\) leaves leaf01 by port 49, which is down\n`)
	down := writeFile(t, "down.faults", "down leaf01/49\n")
	_, out, stderr := runAt(400, "check", "--sim", "--faults", down, "--timeout", deadTimeout, "--retries", "0")
	if !because.MatchString(out) {
		t.Errorf("check: the ClassPortInfo line does not say the route leaves by the down port:\n%s\n%s", out, stderr)
	}
	state := filepath.Join(t.TempDir(), "state")
	if code, _, stderr := run("sweep", "--sim", "--state-dir", state, "--out", filepath.Join(t.TempDir(), "r.json")); code != ExitHealthy {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	_, out, stderr = runAt(400, "gate", "--sim", "--faults", down, "--state-dir", state, "--nodes", "gpu003,gpu017", "--timeout", deadTimeout, "--retries", "0")
	if !because.MatchString(out) {
		t.Errorf("gate: the ClassPortInfo line does not say the route leaves by the down port:\n%s\n%s", out, stderr)
	}
	// At 80 columns the longer lines wrap within the width.
	_, out, _ = runAt(80, "gate", "--sim", "--faults", down, "--state-dir", state, "--nodes", "gpu003,gpu017", "--timeout", deadTimeout, "--retries", "0")
	if i := strings.Index(out, "Could not read"); i < 0 || len(wider(out[i:], 80)) > 0 || !strings.Contains(out[i:], "which is down") {
		t.Errorf("gate at 80 columns: Could not read missing, without its cause, or wider than 80:\n%s", out)
	}
	drop := writeFile(t, "drop.faults", "drop spine03 attr=ClassPortInfo\n")
	_, out, stderr = runAt(400, "check", "--sim", "--faults", drop, "--timeout", deadTimeout, "--retries", "0")
	line := regexp.MustCompile(`ClassPortInfo at spine03 \(LID 3\): transport: no response .*\(counters of ports [0-9,-]+ not read\)\n`)
	if !line.MatchString(out) || strings.Contains(out, "LID route") {
		t.Errorf("check: a dropped ClassPortInfo is said with a cause nothing read shows:\n%s\n%s", out, stderr)
	}
}

// TestGeneralInfoSaysWhy: GeneralInfo (firmware) goes by LID, as the
// PMA's reads do, and is kept from its node by the same causes. With
// leaf01's port 49 down, spine03's ClassPortInfo line said the LID route
// leaves by the down port while its GeneralInfo line said only "no
// response". Both now say it, from the one judgement (diagnose.Silence);
// a dropped GeneralInfo keeps the bare line.
func TestGeneralInfoSaysWhy(t *testing.T) {
	because := regexp.MustCompile(`GeneralInfo at spine03 \(0x[0-9a-f]{16}\): transport: no response [^\n]*; the LID route to it from this port \(gpu001 mlx5_0/1\) leaves leaf01 by port 49, which is down\n`)
	down := writeFile(t, "down.faults", "down leaf01/49\n")
	_, out, stderr := runAt(400, "check", "--sim", "--faults", down, "--timeout", deadTimeout, "--retries", "0")
	if !because.MatchString(out) {
		t.Errorf("check: the GeneralInfo line does not say the route leaves by the down port:\n%s\n%s", out, stderr)
	}
	_, js, _ := run("check", "--sim", "--faults", down, "--timeout", deadTimeout, "--retries", "0", "--json")
	var d struct {
		Unreached []struct{ What, Where, Reason string } `json:"unreached"`
	}
	if err := json.Unmarshal([]byte(js), &d); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, u := range d.Unreached {
		if u.What == "GeneralInfo" && strings.HasPrefix(u.Where, "spine03 ") {
			found = true
			if !strings.HasSuffix(u.Reason, "; the LID route to it from this port (gpu001 mlx5_0/1) leaves leaf01 by port 49, which is down") {
				t.Errorf("--json: spine03's GeneralInfo reason %q lacks the cause", u.Reason)
			}
		}
	}
	if !found {
		t.Errorf("--json: no GeneralInfo entry for spine03: %+v", d.Unreached)
	}
	drop := writeFile(t, "drop.faults", "drop spine03 attr=GeneralInfo\n")
	_, out, stderr = runAt(400, "check", "--sim", "--faults", drop, "--timeout", deadTimeout, "--retries", "0")
	line := regexp.MustCompile(`GeneralInfo at spine03 \(0x[0-9a-f]{16}\): transport: no response [^\n]*\n`)
	if !line.MatchString(out) || strings.Contains(out, "LID route") {
		t.Errorf("check: a dropped GeneralInfo is said with a cause nothing read shows:\n%s\n%s", out, stderr)
	}
}
