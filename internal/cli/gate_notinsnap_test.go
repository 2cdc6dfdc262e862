package cli

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGateHostNotInSnapshot: a host whose HCAs had another description at
// the sweep (rdma-ndd had not named them yet; or racked since) is in the
// fabric now but not in the snapshot the gate answers from. Trial B9: the
// gate said "hosts not found in the fabric: gpu004 (check the node
// descriptions, or give --node-name-map)" and listed "host at gpu004: no
// node in the fabric has this name", blaming a hostlist that was right.
// It cannot tell the two apart without a walk, so it says both, the
// snapshot's time first.
func TestGateHostNotInSnapshot(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	var b strings.Builder
	for i := range 8 {
		fmt.Fprintf(&b, "desc \"gpu004 mlx5_%d\" text=\"localhost mlx5_%d\"\n", i, i)
	}
	faults := writeFile(t, "faults.txt", b.String())
	state := filepath.Join(t.TempDir(), "st")
	if code, _, stderr := run("sweep", "--sim", "--faults", faults, "--state-dir", state, "--out", filepath.Join(state, "r.json")); code != 0 && code != 1 {
		t.Fatalf("sweep: exit %d\n%s", code, stderr)
	}
	code, out, stderr := run("gate", "--sim", "--state-dir", state, "--nodes", "gpu[001,004]", "--no-color")
	if code != ExitUndecided {
		t.Errorf("exit %d, want %d\n%s\n%s", code, ExitUndecided, out, stderr)
	}
	if strings.Contains(out+stderr, "not found in the fabric") || strings.Contains(out+stderr, "no node in the fabric has this name") || strings.Contains(out, "host at gpu004") {
		t.Errorf("says the fabric has no such host, though the gate only looked in the snapshot:\n%s\n%s", out, stderr)
	}
	at := `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(\S+ old\)`
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`hosts not in the snapshot of ` + at + `: gpu004`),
		regexp.MustCompile(`host gpu004: not in the snapshot of ` + at + `: a host added or renamed since that sweep is found by the next one \('ibdoctor sweep'\); else check the node descriptions or --node-name-map`),
	} {
		if !want.MatchString(out) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
	want := regexp.MustCompile(`ibdoctor: hosts not in the snapshot of ` + at + `: gpu004: a host added or renamed since that sweep is found by the next one \('ibdoctor sweep'\); else check the node descriptions, or give --node-name-map`)
	if !want.MatchString(stderr) {
		t.Errorf("stderr lacks %s:\n%s", want, stderr)
	}
}
