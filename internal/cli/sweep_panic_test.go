package cli

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
)

// TestSweepPanicWritesFailedProm: a sweep that panics (trial A5: a check
// divided by zero, in check and in every cron sweep) exits 2 with a
// one-line message, its stack on stderr, and writes ibdoctor_sweep_success
// 0 to --prom as every other failed sweep does. Before, the process died
// with Go's panic and wrote no textfile: the alert on the textfile stayed
// silent. A panic on a check's worker goroutine comes the same way once
// the checks raise it again on their own goroutine (checks.WorkerPanic).
func TestSweepPanicWritesFailedProm(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func() error
	}{
		{"on the sweep's goroutine", func() error {
			var zero int
			return errors.New(string(rune(1 / zero)))
		}},
		{"on a worker", func() error {
			var wp any
			var wg sync.WaitGroup
			wg.Go(func() {
				defer func() { wp = recover() }()
				panic("worker bug")
			})
			wg.Wait()
			panic(&checks.WorkerPanic{Value: wp, Stack: []byte("worker stack")})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prom := filepath.Join(t.TempDir(), "ib.prom")
			var stderr bytes.Buffer
			a := &app{stderr: &stderr}
			o := &sweepOptions{prom: prom}
			err := o.guarded(a, tc.run)
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != ExitUndecided {
				t.Fatalf("err %v, want exit %d", err, ExitUndecided)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "internal error: ") || strings.Contains(msg, "\n") {
				t.Errorf("message %q, want one line 'internal error: ...'", msg)
			}
			if !strings.Contains(stderr.String(), "panic: ") || !strings.Contains(stderr.String(), "stack") && !strings.Contains(stderr.String(), "goroutine") {
				t.Errorf("stderr %q has no panic and stack", stderr.String())
			}
			b, rerr := os.ReadFile(prom)
			if rerr != nil {
				t.Fatalf("--prom not written: %v", rerr)
			}
			if !strings.Contains(string(b), "ibdoctor_sweep_success 0") {
				t.Errorf("--prom lacks ibdoctor_sweep_success 0:\n%s", b)
			}
		})
	}
}
