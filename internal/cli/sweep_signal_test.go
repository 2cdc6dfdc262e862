package cli

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/snapshot"
)

// TestSweepInterrupted sends SIGTERM or SIGINT to a sweep (a child
// process) at random points: before the handler is installed, during
// discovery, counters and routes, while publishing. Whatever the point,
// the report on disk is the last good one or a new complete one — never
// a partial one — the snapshot loads, an interrupted sweep exits 2, and
// its textfile says ibdoctor_sweep_success 0.
func TestSweepInterrupted(t *testing.T) {
	topo := chkTopology(t)
	faults := writeFile(t, "host.faults", faultHost1X)
	dir := t.TempDir()
	out, prom, state := filepath.Join(dir, "r.json"), filepath.Join(dir, "x.prom"), filepath.Join(dir, "state")
	args := []string{"sweep", "--sim=" + topo, "--faults", faults, "--out", out, "--prom", prom, "--state-dir", state}
	if code, _, stderr := run(args...); code != ExitHealthy {
		t.Fatalf("good sweep: exit %d: %s", code, stderr)
	}
	data, _ := os.ReadFile(out)
	good := chkParse(t, string(data))
	if good.Counts["error"] == 0 || !good.Complete {
		t.Fatalf("the good report has no error finding: %v", good.Counts)
	}
	// A slowed simulator, timed once: the signal lands anywhere from the
	// process' start to a little after the sweep would have finished.
	args = append(args, "--sim-service-time", "700us")
	child := func(args ...string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "IBDOCTOR_CLI_CHILD=1")
		return cmd
	}
	// The sweep writes its pid into the state dir's lock file once it
	// holds the lock, after its signal handler is installed: from there
	// the signal lands anywhere in the sweep, timed once unsignalled.
	locked := func(cmd *exec.Cmd) time.Time {
		want := fmt.Sprintf("%d ", cmd.Process.Pid)
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Microsecond) {
			if b, _ := os.ReadFile(filepath.Join(state, snapshot.LockName)); strings.HasPrefix(string(b), want) {
				return time.Now()
			}
		}
		t.Fatal("the child sweep never took the lock")
		return time.Time{}
	}
	cmd := child(args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	at := locked(cmd)
	// Until the report is replaced: a child under the race detector takes
	// long to exit after that.
	before, _ := os.Stat(out)
	for {
		if st, err := os.Stat(out); err == nil && !os.SameFile(st, before) {
			break
		}
		time.Sleep(200 * time.Microsecond)
	}
	span := time.Since(at) * 11 / 10
	if err := cmd.Wait(); err != nil {
		t.Fatalf("unsignalled child sweep: %v", err)
	}
	// Until 3 sweeps were interrupted mid-way (at most 12 rounds; 8 under
	// the race detector, whose children take ~1 s to start).
	maxRounds := 12
	if raceEnabled {
		maxRounds = 8
	}
	rounds := 0
	rng := rand.New(rand.NewPCG(17, uint64(time.Now().UnixNano())))
	counts := map[string]int{}
	for i := 0; i < maxRounds && counts["interrupted"] < 3; i++ {
		rounds++
		cmd := child(args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sig := []os.Signal{syscall.SIGTERM, os.Interrupt}[i%2]
		delay := time.Duration(rng.Int64N(int64(span)))
		if i == 0 {
			delay = -1 // before the handler: killed, nothing written
		} else {
			locked(cmd)
			time.Sleep(delay)
		}
		cmd.Process.Signal(sig)
		werr := cmd.Wait()
		code := 0
		var ee *exec.ExitError
		if errors.As(werr, &ee) {
			code = ee.ExitCode() // -1: killed by the signal
		}
		data, _ := os.ReadFile(out)
		d := chkParse(t, string(data))
		if !d.Complete || d.Counts["error"] != good.Counts["error"] || len(d.Findings) != len(good.Findings) {
			t.Errorf("%v after %v (exit %d): report complete %v, counts %v; want the good one's %v", sig, delay, code, d.Complete, d.Counts, good.Counts)
		}
		snap, err := snapshot.Load(state)
		if err != nil {
			t.Errorf("%v after %v: snapshot: %v", sig, delay, err)
		} else if _, err := snap.FabricModel(); err != nil || !snap.Complete {
			t.Errorf("%v after %v: snapshot fabric: %v, complete %v", sig, delay, err, snap.Complete)
		}
		p, _ := os.ReadFile(prom)
		switch code {
		case ExitHealthy:
			counts["finished"]++
		case -1:
			// Before the handler was installed, or after it was removed
			// once everything was published.
			counts["killed outside the sweep"]++
		case ExitUndecided:
			counts["interrupted"]++
			if !strings.Contains(string(p), "ibdoctor_sweep_success 0\n") || !strings.Contains(stderr.String(), "interrupted") {
				t.Errorf("%v after %v: exit 2 but textfile %q / stderr %q", sig, delay, p, stderr.String())
			}
		default:
			t.Errorf("%v after %v: exit %d: %s", sig, delay, code, stderr.String())
		}
		sweepFiles(t, dir)
		sweepFiles(t, state)
	}
	t.Logf("%d signalled sweeps, the signal up to %v into the sweep: %v", rounds, span, counts)
	if counts["interrupted"] == 0 {
		t.Error("no sweep was interrupted mid-way: the sweep is too fast for the delays")
	}
}
