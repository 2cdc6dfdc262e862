package cli

import (
	"strings"
	"testing"
)

// TestGateUnmatchedListBounded: trial B13(b). A mistyped range ('gpu[1-
// 100000]') printed a 989 KB stderr line naming every host not found
// (the prolog captures it into Slurm's log), where the "Could not read"
// list stops at 20. The line gives the hostlist back, compressed, and
// the count; so does the report's Scope line.
func TestGateUnmatchedListBounded(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	code, out, stderr := run("gate", "--sim", "--state-dir", t.TempDir(), "--nodes", "gpu[1-5000]", "--no-color")
	if code != ExitUndecided {
		t.Fatalf("exit %d, want %d\n%s", code, ExitUndecided, stderr)
	}
	for name, text := range map[string]string{"stderr": stderr, "stdout": out} {
		for _, l := range strings.Split(text, "\n") {
			if len(l) > 400 {
				t.Errorf("%s: a line of %d bytes: %.200s...", name, len(l), l)
			}
		}
	}
	const want = "hosts not found in the fabric: gpu[1-5000] (5000 hosts)"
	if !strings.Contains(stderr, want) || !strings.Contains(out, want) {
		t.Errorf("lacks %q:\n%s\n%s", want, stderr, out)
	}
	// A short list reads as before.
	_, _, stderr = run("gate", "--sim", "--state-dir", t.TempDir(), "--nodes", "gpu001,nosuch,other", "--no-color")
	if !strings.Contains(stderr, "hosts not found in the fabric: nosuch, other (check the node descriptions") {
		t.Errorf("short list:\n%s", stderr)
	}
}
