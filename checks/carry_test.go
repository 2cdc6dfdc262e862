package checks

import (
	"sync"
	"testing"
)

// TestCarryRaisesWorkerPanic: a worker's panic is raised again, as a
// *WorkerPanic with the worker's value and stack, by rethrow on the
// waiting goroutine, where sweep's recover can see it; without a panic
// rethrow does nothing.
func TestCarryRaisesWorkerPanic(t *testing.T) {
	var c carry
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			defer c.catch()
			if i == 2 {
				panic("bug in worker 2")
			}
		})
	}
	wg.Wait()
	defer func() {
		wp, ok := recover().(*WorkerPanic)
		if !ok || wp.Value != "bug in worker 2" || len(wp.Stack) == 0 {
			t.Errorf("rethrow raised %+v, want the worker's panic and stack", wp)
		}
	}()
	var none carry
	none.rethrow()
	c.rethrow()
	t.Error("rethrow did not panic")
}
