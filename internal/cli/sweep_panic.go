package cli

import (
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/ibdoctor/ibdoctor/checks"
)

// guarded runs sweep (runSweepCmd) so that a panic, a bug in ibdoctor,
// ends it as every other failure does: exit 2 and ibdoctor_sweep_success 0
// in --prom (docs/exit-codes.md). A cron sweep that crashed wrote no
// textfile at all (trial A5: a check divided by zero), and the alert on
// it stayed silent until the textfile went stale. The stack goes to
// stderr for the bug report.
func (o *sweepOptions) guarded(a *app, run func() error) (err error) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		stack := debug.Stack()
		if wp, ok := r.(*checks.WorkerPanic); ok {
			r, stack = wp.Value, wp.Stack
		}
		fmt.Fprintf(a.stderr, "panic: %v\n\n%s\n", r, stack)
		err = fmt.Errorf("internal error: %v (a bug in ibdoctor: the stack is above; please report it)", r)
		if o.prom != "" {
			if perr := writeFailedProm(o.prom, o.promLabels, o.stateDir); perr != nil {
				err = errors.Join(err, fmt.Errorf("and --prom: %v", perr))
			}
		}
		err = withExit(ExitUndecided, err)
	}()
	return run()
}
