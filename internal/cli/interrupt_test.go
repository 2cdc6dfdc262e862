package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestInterruptMessageOwnLine: on a terminal the echoed ^C sits in the
// first two columns when a command stopped by Ctrl-C prints its error, so
// a message wrapped for column 0 broke ('^Cibdoctor: sweep interrupted
// (...): the previous report a' / 'nd' / '          snapshot are kept').
// It starts on a line of its own; on a pipe it stays one line.
func TestInterruptMessageOwnLine(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("interrupt signal received"))
	for _, c := range []struct {
		name string
		err  error
	}{
		{"sweep", withExit(ExitUndecided, sweepInterrupted(ctx))},
		{"counters", withExit(ExitUndecided, fmt.Errorf("interrupted: %w", ctx.Err()))},
	} {
		for _, width := range []int{80, 0} {
			var errb bytes.Buffer
			cmd := &cobra.Command{Use: "x", SilenceErrors: true, SilenceUsage: true, RunE: func(*cobra.Command, []string) error { return c.err }}
			cmd.SetArgs(nil)
			if code := execute(cmd, &errb, width); code != ExitUndecided {
				t.Errorf("%s: exit %d", c.name, code)
			}
			got := errb.String()
			if width == 0 {
				if strings.HasPrefix(got, "\n") || strings.Count(got, "\n") != 1 {
					t.Errorf("%s on a pipe: %q, want one line", c.name, got)
				}
				continue
			}
			if !strings.HasPrefix(got, "\nibdoctor: ") {
				t.Errorf("%s at %d columns: %q does not start on a line of its own", c.name, width, got)
			}
			if long := wider(got, width); len(long) > 0 {
				t.Errorf("%s: lines wider than %d: %q", c.name, width, long)
			}
		}
	}
	// A message that is no interrupt does not get the blank line.
	var errb bytes.Buffer
	cmd := &cobra.Command{Use: "x", SilenceErrors: true, SilenceUsage: true, RunE: func(*cobra.Command, []string) error { return errors.New("--fail-on: bad") }}
	cmd.SetArgs(nil)
	execute(cmd, &errb, 80)
	if strings.HasPrefix(errb.String(), "\n") {
		t.Errorf("a plain error starts with a blank line: %q", errb.String())
	}
}
