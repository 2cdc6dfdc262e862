package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSweepUnwritableOutputRefused: an --out, --prom or --html that
// cannot be written (a folder the sweep may not create files in, a path
// under a regular file) is refused before the sweep, in one line naming
// the flag, the path and the fix, and the state is left as it was: a
// sweep used to run, replace snapshot.json, and only then fail (exit 2).
func TestSweepUnwritableOutputRefused(t *testing.T) {
	topo := chkTopology(t)
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	if code, _, stderr := run("sweep", "--sim="+topo, "--state-dir", state, "--out", filepath.Join(dir, "r.json")); code != ExitHealthy {
		t.Fatalf("first sweep: exit %d: %s", code, stderr)
	}
	snap, err := os.ReadFile(filepath.Join(state, "snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	afile := filepath.Join(dir, "afile")
	if err := os.WriteFile(afile, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := []string{filepath.Join(afile, "x.out"), filepath.Join(afile, "sub", "x.out")}
	if st, err := os.Stat("/proc/version"); err == nil && st.Mode().IsRegular() {
		bad = append(bad, "/proc/version") // a regular file in a folder no one creates files in
	}
	if os.Geteuid() != 0 {
		ro := filepath.Join(dir, "ro")
		if err := os.Mkdir(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		bad = append(bad, filepath.Join(ro, "x.out"), filepath.Join(ro, "sub", "x.out"))
	}
	for _, flag := range []string{"--out", "--prom", "--html"} {
		for _, p := range bad {
			args := []string{"sweep", "--sim=" + topo, "--state-dir", state, flag, p}
			if flag != "--out" {
				args = append(args, "--out", filepath.Join(dir, "ok.json"))
			}
			code, stdout, stderr := run(args...)
			if code != ExitUndecided || stdout != "" || strings.Count(stderr, "\n") != 1 ||
				!strings.Contains(stderr, flag+": "+p) || !strings.Contains(stderr, "give a") || strings.Contains(stderr, ".tmp-") {
				t.Errorf("%s %s: exit %d, stdout %q, stderr %q; want 2 and one line naming the flag, the path and the fix", flag, p, code, stdout, stderr)
			}
			if now, _ := os.ReadFile(filepath.Join(state, "snapshot.json")); !bytes.Equal(now, snap) {
				t.Fatalf("%s %s: the state's snapshot was replaced although the output could not be written", flag, p)
			}
			if _, err := os.Stat(filepath.Join(dir, "ok.json")); err == nil {
				t.Errorf("%s %s: the sweep ran and wrote --out although %s was refused", flag, p, flag)
			}
		}
	}
	sweepFiles(t, dir)
	sweepFiles(t, state)
}
