package cli

import (
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// TestSweepsAndGatesInterleave runs sweeps of one state dir back to back
// from two goroutines (each waiting for the other's lock) beside gates
// reading the snapshot, 1,000 gates in all: every gate must answer from
// a whole snapshot (exit 0 on the healthy fabric) and every sweep must
// finish. Before sweeps took turns and readers held the fabric file they
// loaded, a sweep could remove the fabric file snapshot.json named.
func TestSweepsAndGatesInterleave(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	topo := chkTopology(t)
	state := gateState(t, topo)
	// 1,000 gates take 5-12 s on 2 shared cores; the race detector makes
	// a gate ~8x slower, so under it (as in CI) 100.
	gates := 1000
	if raceEnabled || testing.Short() {
		gates = 100
	}
	var (
		done       atomic.Bool
		sweeps     atomic.Int64
		next       atomic.Int64
		mu         sync.Mutex
		failures   []string
		sweepWG    sync.WaitGroup
		gateWG     sync.WaitGroup
		outs       = t.TempDir()
		sweepFails atomic.Int64
	)
	fail := func(s string) {
		mu.Lock()
		if len(failures) < 5 {
			failures = append(failures, s)
		}
		mu.Unlock()
	}
	for w := range 2 {
		sweepWG.Add(1)
		go func() {
			defer sweepWG.Done()
			out := filepath.Join(outs, fmt.Sprintf("r%d.json", w))
			for !done.Load() {
				code, _, stderr := run("sweep", "--sim="+topo, "--state-dir", state, "--out", out, "--lock-wait", "5m")
				sweeps.Add(1)
				if code != ExitHealthy {
					sweepFails.Add(1)
					fail(fmt.Sprintf("sweep: exit %d: %s", code, stderr))
				}
			}
		}()
	}
	var gateFails atomic.Int64
	for range 3 {
		gateWG.Add(1)
		go func() {
			defer gateWG.Done()
			for next.Add(1) <= int64(gates) {
				code, out, stderr := run("gate", "--sim="+topo, "--state-dir", state, "--nodes", "gpu001,gpu016")
				if code != ExitHealthy {
					gateFails.Add(1)
					fail(fmt.Sprintf("gate: exit %d: %s %s", code, stderr, out))
				}
			}
		}()
	}
	gateWG.Wait()
	done.Store(true)
	sweepWG.Wait()
	t.Logf("%d gates beside %d sweeps: %d gate failures, %d sweep failures", gates, sweeps.Load(), gateFails.Load(), sweepFails.Load())
	if gateFails.Load() > 0 || sweepFails.Load() > 0 {
		t.Errorf("%d of %d gates and %d of %d sweeps failed; first: %q", gateFails.Load(), gates, sweepFails.Load(), sweeps.Load(), failures)
	}
	sweepFiles(t, state)
}
