package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/snapshot"
	"github.com/spf13/cobra"
)

// baselineOptions are `baseline accept`'s flags.
type baselineOptions struct {
	stateDir string
	lockWait time.Duration
	partial  bool
	previous bool
	takenAt  string
}

func newBaselineCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "baseline",
		Short: "Manage the accepted topology that sweeps compare the fabric against",
		Long: `Sweeps compare the fabric against the accepted baseline in --state-dir
(baseline.json): a link or node missing from it, or a cable moved, is reported
by every sweep until it is fixed or accepted. The first complete sweep of a
state dir is its first baseline; one you accept is also your word that the
fabric is built so (a group of hosts without an adapter their peers have is
then not reported).`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newBaselineAcceptCmd(a, nil))
	return cmd
}

// newBaselineAcceptCmd builds baseline accept; runF, when not nil, runs
// instead of runBaselineAccept (tests parse the flags).
func newBaselineAcceptCmd(a *app, runF func(*baselineOptions) error) *cobra.Command {
	var o baselineOptions
	cmd := &cobra.Command{
		Use:   "accept",
		Short: "Accept the fabric of the last sweep as the baseline",
		Long: `accept makes the fabric of the last sweep (snapshot.json in --state-dir) the
accepted baseline: what it lacks or has moved is no longer reported. Run it
after a planned change (a cable removed, a switch added), once a sweep has seen
it, or to say the fabric is built as it is (a rack of hosts with fewer HCAs than
hosts named like them: topology.missing-hca's "rail missing for the whole
group", which the first sweep's own baseline does not silence). When the last
sweep could not read everything, it did not replace the complete snapshot
before it: accept then refuses (the fabric it would accept is older than the
last sweep) unless --previous is given. When a sweep finishes while accept waits
for its lock, accept refuses that newer sweep (nobody reviewed it) unless
--taken-at names it.`,
		Example: `  ibdoctor sweep --state-dir /var/lib/ibdoctor --out report.json
  ibdoctor baseline accept --state-dir /var/lib/ibdoctor`,
		Args: a.noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.lockWait < 0 {
				return withExit(ExitUndecided, fmt.Errorf("--lock-wait %v: give a duration of 0 or more", o.lockWait))
			}
			if runF != nil {
				return runF(&o)
			}
			return runBaselineAccept(cmd.Context(), a, &o)
		},
	}
	cmd.SetFlagErrorFunc(flagError)
	cmd.Flags().StringVar(&o.stateDir, "state-dir", defaultStateDir(), "the sweeps' state directory ($IBDOCTOR_STATE_DIR)")
	cmd.Flags().DurationVar(&o.lockWait, "lock-wait", time.Minute, "how long to wait for a running sweep to finish")
	cmd.Flags().BoolVar(&o.partial, "partial", false, "accept a sweep that could not read everything (what it missed becomes accepted as absent)")
	cmd.Flags().StringVar(&o.takenAt, "taken-at", "", "accept only the sweep taken at this time (RFC 3339, as the report's taken_at), the one you reviewed: refused if the last sweep is another")
	cmd.Flags().BoolVar(&o.previous, "previous", false, "when the last sweep could not read everything and kept the snapshot of an earlier complete sweep, accept that earlier sweep")
	return cmd
}

func runBaselineAccept(ctx context.Context, a *app, o *baselineOptions) error {
	if err := checkStateDir(o.stateDir); err != nil {
		return withExit(ExitUndecided, err)
	}
	var want time.Time
	if o.takenAt != "" {
		t, err := time.Parse(time.RFC3339Nano, o.takenAt)
		if err != nil {
			return withExit(ExitUndecided, fmt.Errorf("--taken-at %q: give the sweep's time as the report's taken_at says it (RFC 3339, e.g. 2026-11-27T11:14:13Z)", o.takenAt))
		}
		want = t
	}
	snap, err := snapshot.Load(o.stateDir)
	if err != nil {
		return withExit(ExitUndecided, fmt.Errorf("nothing to accept: %w", err))
	}
	first := snap.TakenAt
	snap.Close()
	// Under the sweeps' lock: the snapshot accepted is the newest one.
	lock, err := snapshot.Acquire(ctx, o.stateDir, o.lockWait)
	if err != nil {
		return withExit(ExitUndecided, err)
	}
	defer lock.Release()
	if snap, err = snapshot.Load(o.stateDir); err != nil {
		return withExit(ExitUndecided, fmt.Errorf("nothing to accept: %w", err))
	}
	defer snap.Close()
	at := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	// The sweep accepted is the one the operator reviewed: a sweep that
	// finished while accept waited for the lock (cron's) may carry a
	// fault nobody read, which accepting would silence for good (B11).
	switch {
	case !want.IsZero() && !sameSweep(snap.TakenAt, want):
		return withExit(ExitUndecided, fmt.Errorf("the last sweep is of %s, not --taken-at %s: read its report and accept it with --taken-at %s", at(snap.TakenAt), o.takenAt, at(snap.TakenAt)))
	case want.IsZero() && !snap.TakenAt.Equal(first):
		return withExit(ExitUndecided, fmt.Errorf("a sweep (%s) finished while accept waited for its lock; the last sweep was %s when accept started: read the new sweep's report, then accept it with --taken-at %s", at(snap.TakenAt), at(first), at(snap.TakenAt)))
	}
	if !snap.Complete && !o.partial {
		return withExit(ExitUndecided, fmt.Errorf("the last sweep (%s) could not read everything: accepting it would accept what it missed as absent; run a sweep that completes, or give --partial", snap.TakenAt.Format(time.RFC3339)))
	}
	// A partial sweep after a complete one keeps the complete snapshot:
	// accepting it then accepts a fabric older than the last sweep (the
	// cable lost since still in it), which must be asked for.
	last, err := snapshot.LoadLastSweep(o.stateDir)
	if err != nil {
		return withExit(ExitUndecided, err)
	}
	var skipped *snapshot.LastSweep
	if last != nil && !last.Saved && last.TakenAt.After(snap.TakenAt) {
		skipped = last
	}
	if skipped != nil && !o.previous {
		return withExit(ExitUndecided, fmt.Errorf("the last sweep (%s) could not read everything, so the state still holds the complete sweep of %s: accepting now would accept that older fabric, not what the last sweep saw; fix what it could not read and sweep again, or give --previous to accept the sweep of %s",
			skipped.TakenAt.UTC().Format(time.RFC3339), snap.TakenAt.UTC().Format(time.RFC3339), snap.TakenAt.UTC().Format(time.RFC3339)))
	}
	f, err := snap.FabricModel()
	if err != nil {
		return withExit(ExitUndecided, err)
	}
	// Recorded as the operator's: what it lacks is as built, as in a
	// designed topology (a group built without a rail is not raised).
	if err := snapshot.SaveBaseline(o.stateDir, f, snap.Source, true); err != nil {
		return withExit(ExitUndecided, err)
	}
	fmt.Fprintf(a.stdout, "accepted the sweep of %s (%s: %d nodes, %d links) as the baseline in %s\n",
		snap.TakenAt.UTC().Format(time.RFC3339), snap.Source, len(f.Nodes), len(f.Links()), o.stateDir)
	if skipped != nil {
		fmt.Fprintf(a.stdout, "(the last sweep, of %s, was incomplete and is not in the baseline)\n", skipped.TakenAt.UTC().Format(time.RFC3339))
	}
	return nil
}

// sameSweep says whether taken, a sweep's time, is the time want the
// operator gave: exactly, or to the second when want has no fraction
// (the text report prints seconds).
func sameSweep(taken, want time.Time) bool {
	if taken.Equal(want) {
		return true
	}
	return want.Nanosecond() == 0 && taken.Truncate(time.Second).Equal(want)
}
