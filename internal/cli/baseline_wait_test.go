package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/snapshot"
)

// TestBaselineAcceptRefusesSweepItWaitedFor (trial B11): accept, run
// while a sweep holds the lock, waited and then accepted that newer sweep
// (with a fault nobody reviewed). Now it says it waited and refuses
// unless --taken-at names the sweep; --taken-at of another sweep is
// refused, of the last one accepted.
func TestBaselineAcceptRefusesSweepItWaitedFor(t *testing.T) {
	topo := chkTopology(t)
	dir := t.TempDir()
	state, other := filepath.Join(dir, "state"), filepath.Join(dir, "other")
	for _, d := range []string{state, other} {
		if code, _, stderr := run("sweep", "--sim="+topo, "--state-dir", d, "--out", filepath.Join(dir, "r.json")); code != ExitHealthy {
			t.Fatalf("sweep: exit %d: %s", code, stderr)
		}
	}
	reviewed, _ := snapshot.Load(state)
	reviewed.Close()
	newer, _ := snapshot.Load(other)
	newer.Close()
	lock, err := snapshot.Acquire(context.Background(), state, 0)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		code        int
		out, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, out, stderr := run("baseline", "accept", "--state-dir", state, "--lock-wait", "30s")
		done <- result{code, out, stderr}
	}()
	time.Sleep(2 * time.Second) // accept has read the snapshot and waits for the lock
	// The "cron sweep" finishing: the other dir's newer sweep moved in,
	// snapshot.json last.
	ents, _ := os.ReadDir(other)
	for _, e := range ents {
		if n := e.Name(); n != snapshot.FileName && !strings.HasPrefix(n, "baseline") && n != snapshot.LockName {
			data, _ := os.ReadFile(filepath.Join(other, n))
			os.WriteFile(filepath.Join(state, n), data, 0o644)
		}
	}
	data, _ := os.ReadFile(filepath.Join(other, snapshot.FileName))
	os.WriteFile(filepath.Join(state, snapshot.FileName), data, 0o644)
	lock.Release()
	r := <-done
	newAt := newer.TakenAt.UTC().Format(time.RFC3339)
	if r.code != ExitUndecided || r.out != "" || !strings.Contains(r.stderr, "finished while accept waited") || !strings.Contains(r.stderr, "--taken-at "+newAt) || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("accept after waiting for a sweep: exit %d, stdout %q, stderr %q; want 2 naming --taken-at %s", r.code, r.out, r.stderr, newAt)
	}
	oldAt := reviewed.TakenAt.UTC().Format(time.RFC3339Nano)
	if code, out, stderr := run("baseline", "accept", "--state-dir", state, "--taken-at", oldAt); code != ExitUndecided || out != "" || !strings.Contains(stderr, "not --taken-at "+oldAt) {
		t.Errorf("--taken-at of the reviewed, replaced sweep: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	if code, out, stderr := run("baseline", "accept", "--state-dir", state, "--taken-at", newAt); code != 0 || !strings.Contains(out, "accepted the sweep of "+newAt) {
		t.Errorf("--taken-at of the last sweep: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}
