package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSweepLockHeldByReader (reviewer R9): a sweep with a short
// --lock-wait that finds sweep.lock held shared (a gate or sweep opening
// the state) exits 2 saying a reader holds it, not "another sweep is
// still running" by the pid the last sweep left in the file (it has
// exited), and leaves the outputs alone.
func TestSweepLockHeldByReader(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	out := filepath.Join(t.TempDir(), "r.json")
	if code, _, stderr := run("sweep", "--sim", "--state-dir", state, "--out", out); code == ExitUndecided {
		t.Fatalf("first sweep: exit %d\n%s", code, stderr)
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	gone := cmd.Process.Pid
	lock := filepath.Join(state, "sweep.lock")
	if err := os.WriteFile(lock, fmt.Appendf(nil, "%d %s\n", gone, time.Now().UTC().Format(time.RFC3339)), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(lock)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(out)
	code, _, stderr := run("sweep", "--sim", "--state-dir", state, "--out", out, "--lock-wait", "100ms")
	if code != ExitUndecided || !strings.Contains(stderr, "reading the state") || strings.Contains(stderr, "another sweep is still running") ||
		strings.Contains(stderr, fmt.Sprintf("pid %d", gone)) {
		t.Errorf("sweep beside a reader: exit %d\n%s\nwant exit 2 naming a reader, not the exited sweep's pid %d", code, stderr, gone)
	}
	if after, _ := os.ReadFile(out); string(after) != string(before) {
		t.Error("the sweep that gave up replaced --out")
	}
}
