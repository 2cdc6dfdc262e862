package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFailedPromTakesLastSuccessFromState (trial F6): a sweep that fails
// with no textfile before it (the collector's directory on tmpfs after a
// reboot, a --prom path changed) but a state dir holding a good sweep
// says when that sweep was taken and its snapshot's time, not 0
// ("never") and nothing.
func TestFailedPromTakesLastSuccessFromState(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	dir := t.TempDir()
	state, prom := filepath.Join(dir, "state"), filepath.Join(dir, "new.prom")
	if code, _, stderr := run("sweep", "--sim", "--state-dir", state, "--out", filepath.Join(dir, "r.json")); code == ExitUndecided {
		t.Fatalf("good sweep: exit %d: %s", code, stderr)
	}
	var doc struct {
		TakenAt time.Time `json:"taken_at"`
	}
	data, err := os.ReadFile(filepath.Join(state, "snapshot.json"))
	if err == nil {
		err = json.Unmarshal(data, &doc)
	}
	if err != nil || doc.TakenAt.IsZero() {
		t.Fatalf("snapshot.json: %v %v", err, doc.TakenAt)
	}
	code, _, stderr := run("sweep", "--sim", "--state-dir", state, "--out", filepath.Join(dir, "r2.json"), "--prom", prom, "--fail-on", "bogus")
	if code != ExitUndecided {
		t.Fatalf("refused sweep: exit %d: %s", code, stderr)
	}
	p, err := os.ReadFile(prom)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"ibdoctor_sweep_success 0",
		fmt.Sprintf("ibdoctor_sweep_last_success_timestamp_seconds %d", doc.TakenAt.Unix()),
		fmt.Sprintf("ibdoctor_snapshot_timestamp_seconds %d", doc.TakenAt.Unix()),
	} {
		if got := promLine(string(p), strings.Fields(want)[0]); got != want {
			t.Errorf("textfile has %q, want %q:\n%s", got, want, p)
		}
	}
	// promtool, when installed, accepts it.
	if promtool, err := exec.LookPath("promtool"); err == nil {
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = bytes.NewReader(p)
		if out, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	}
}
