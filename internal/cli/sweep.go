package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/buildinfo"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/gate"
	"github.com/ibdoctor/ibdoctor/internal/outfile"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/ibdoctor/ibdoctor/internal/snapshot"
	"github.com/ibdoctor/ibdoctor/internal/words"
	"github.com/spf13/cobra"
)

// defaultStateDir is where sweep keeps its snapshot and gate reads it.
func defaultStateDir() string {
	if d := os.Getenv("IBDOCTOR_STATE_DIR"); d != "" {
		return d
	}
	return "/var/lib/ibdoctor"
}

// checkStateDir refuses a --state-dir that exists and is not a directory
// (or lies under a file): mkdir and open would otherwise fail later with a
// bare "not a directory". A missing one is created when written.
func checkStateDir(dir string) error {
	const fix = "give a directory ibdoctor may create and write (--state-dir DIR or $IBDOCTOR_STATE_DIR; default /var/lib/ibdoctor)"
	st, err := os.Stat(dir)
	switch {
	case err == nil && st.IsDir():
		return nil
	case err == nil:
		kind := "a file"
		switch m := st.Mode(); {
		case m&fs.ModeDevice != 0:
			kind = "a device"
		case m&fs.ModeNamedPipe != 0:
			kind = "a FIFO"
		case m&fs.ModeSocket != 0:
			kind = "a socket"
		}
		return fmt.Errorf("--state-dir %s: not a directory (%s): %s", dir, kind, fix)
	case errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("--state-dir %s: not a directory (part of the path is a file): %s", dir, fix)
	}
	return nil
}

// sweepOptions are sweep's flags.
type sweepOptions struct {
	check       checkOptions
	out         string
	prom        string
	html        string
	promMinSev  string
	stateDir    string
	noSave      bool
	lockWait    time.Duration
	maxAge      time.Duration
	failOn      checks.Severity // parsed check.failOn; -1: none
	promMin     checks.Severity
	promLabel   []string         // --prom-label as given
	promLabels  []report.Label   // parsed (promLabelsOf)
	designed    *checks.Baseline // --expect-topology
	expectation checks.Expectations
}

// newSweepCmd builds sweep; runF, when not nil, runs instead of
// runSweepCmd, after the flags were validated (tests parse them without
// sweeping).
func newSweepCmd(a *app, runF func(*sweepOptions) error) *cobra.Command {
	var o sweepOptions
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "Sweep the fabric for cron: JSON report, Prometheus textfile, and a snapshot for the next sweep and for gate",
		Long: `sweep does what check does but for machines: it writes the report as JSON
(docs/schema-report.md) to --out or stdout, optionally a Prometheus textfile
(--prom), and keeps a snapshot of the fabric, its forwarding tables and counters
in --state-dir, from which gate answers. Every output is written atomically
(a temporary file beside it, synced, then renamed; symlinks are followed, a
FIFO, device or directory, or a folder that cannot be written, is refused
before the sweep; missing folders are created).

The topology is compared against the accepted baseline in --state-dir (the
first complete sweep's fabric, until 'ibdoctor baseline accept' accepts the
last sweep's), so a lost cable stays reported on every sweep until it is
fixed or accepted. --expect-topology compares against a designed one instead.

Sweeps sharing a --state-dir take turns: a second one waits up to --lock-wait
for the first, then exits 2 and leaves the outputs alone. A sweep that fails
or is interrupted (SIGTERM, SIGINT) keeps the previous report and snapshot,
writes ibdoctor_sweep_success 0 to the textfile and exits 2; so does one that
refuses its flags (a value out of range, a bad --thresholds file), and one
that crashes on a bug in ibdoctor (its stack goes to stderr).
Without --interval, error counters are judged by their growth since the
previous sweep in --state-dir (one of the same fabric, at most --max-age
old; a partial one for the ports it read); a count since the last clear
that did not grow since is reported as info, not at its severity; congestion
is the share of time each port could not send since that sweep. Without
such a sweep (the first one), their values since the last clear are judged.
The report's counters_basis says which.
The report's status is judged at --fail-on, or at error (as check) without it.
Exit status: 0 done, 3 done but parts could not be read, 2 failed, 1 findings
at or above --fail-on when that is given.`,
		Example: `  ibdoctor sweep --state-dir /var/lib/ibdoctor \
    --out /var/lib/ibdoctor/report.json \
    --prom /var/lib/node_exporter/textfile/ibdoctor.prom
  # every 15 minutes from cron, a script holding the command above:
  */15 * * * * root /usr/local/sbin/ibdoctor-sweep`,
		// Every refusal of the command line marks the textfile failed
		// (refused): the flags pflag cannot parse, the stray words, the
		// numeric ranges, then validate.
		Args: func(cmd *cobra.Command, args []string) error { return o.refused(a.noArgs(cmd, args)) },
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return o.refused(a.preRun(cmd))
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(cmd.Context(), a); err != nil {
				return o.refused(withExit(ExitUndecided, err))
			}
			if runF != nil {
				return runF(&o)
			}
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			return o.guarded(a, func() error { return runSweepCmd(ctx, a, &o) })
		},
	}
	cmd.SetFlagErrorFunc(a.sweepFlagError)
	o.check.flags(cmd, "")
	cmd.Flags().StringVar(&o.out, "out", "-", "write the JSON report to this file (atomically; - is stdout)")
	cmd.Flags().StringVar(&o.prom, "prom", "", "also write a Prometheus textfile-collector file (atomically)")
	htmlFlag(cmd.Flags(), &o.html)
	cmd.Flags().StringArrayVar(&o.promLabel, "prom-label", nil, "add the label NAME=VALUE to every series of --prom (repeatable), e.g. fabric=compute when sweeps of two fabrics write to one textfile collector")
	cmd.Flags().StringVar(&o.promMinSev, "prom-min-severity", "warning", "lowest severity whose findings get a series of their own in --prom: info, warning, error or critical")
	cmd.Flags().StringVar(&o.stateDir, "state-dir", defaultStateDir(), "where to keep the snapshot and the accepted baseline ($IBDOCTOR_STATE_DIR); created if missing")
	cmd.Flags().BoolVar(&o.noSave, "no-save", false, "do not write the snapshot (nor take the state directory's lock)")
	cmd.Flags().DurationVar(&o.maxAge, "max-age", snapshotMaxAge, "oldest previous sweep whose counters error counters' growth is judged against (0: never; their values since the last clear are judged)")
	cmd.Flags().DurationVar(&o.lockWait, "lock-wait", time.Minute, "how long to wait for another sweep of the same --state-dir to finish before giving up (exit 2)")
	return cmd
}

// validate checks the flags before anything is read or written.
func (o *sweepOptions) validate(ctx context.Context, a *app) error {
	if err := checkStateDir(o.stateDir); err != nil {
		return err
	}
	o.failOn = -1
	if o.check.failOn != "" {
		s, err := checks.ParseSeverity(o.check.failOn)
		if err != nil {
			return fmt.Errorf("--fail-on: %w", err)
		}
		o.failOn = s
	}
	s, err := checks.ParseSeverity(o.promMinSev)
	if err != nil {
		return fmt.Errorf("--prom-min-severity: %w", err)
	}
	if o.promLabels, err = promLabelsOf(o.promLabel); err != nil {
		return err
	}
	o.promMin = s
	if o.maxAge < 0 {
		return fmt.Errorf("--max-age %v: give a duration of 0 or more (e.g. 1h; 0 judges error counters by their values since the last clear)", o.maxAge)
	}
	if o.lockWait < 0 {
		return fmt.Errorf("--lock-wait %v: give a duration of 0 or more (e.g. 1m; 0 gives up at once)", o.lockWait)
	}
	if o.out == "" {
		o.out = outfile.Stdout
	}
	// Refuse a FIFO, device or directory, or a folder that cannot be
	// written, now, not after the sweep replaced the state.
	if err := checkHTMLPath(o.html, true); err != nil {
		return err
	}
	for _, f := range []struct{ flag, path string }{{"--out", o.out}, {"--prom", o.prom}} {
		if f.path == "" || f.path == outfile.Stdout {
			continue
		}
		if err := outfile.CheckWritable(f.path); err != nil {
			if f.flag == "--out" {
				err = outfile.OrStdout(err)
			}
			return fmt.Errorf("%s: %w", f.flag, err)
		}
	}
	if o.prom == outfile.Stdout {
		return fmt.Errorf("--prom -: the textfile must be a file node_exporter reads (e.g. /var/lib/node_exporter/textfile/ibdoctor.prom)")
	}
	if err := checkOutputsApart(o.stateDir, []outputPath{{"--out", o.out}, {"--prom", o.prom}, {"--html", o.html}}); err != nil {
		return err
	}
	if o.expectation, err = o.check.expectations(); err != nil {
		return err
	}
	designed, err := a.loadBaseline(ctx, o.check.expectTopology)
	if err != nil {
		return err
	}
	o.designed = checks.BaselineOf(designed)
	return nil
}

// outputPath is an output flag and the path it was given.
type outputPath struct{ flag, path string }

// checkOutputsApart refuses two outputs that name one file (the same
// path, a symlink to it, a hard link: the last written would replace
// the other) and an output that names one of the state directory's own
// files (it would replace the state gate and the next sweep read).
func checkOutputsApart(stateDir string, outs []outputPath) error {
	type target struct {
		outputPath
		file string
	}
	var seen []target
	for _, o := range outs {
		if o.path == "" || o.path == outfile.Stdout {
			continue
		}
		final, _, err := outfile.Resolve(o.path)
		if err != nil {
			if o.flag == "--out" {
				err = outfile.OrStdout(err)
			}
			return fmt.Errorf("%s: %w", o.flag, err)
		}
		file, err := filepath.Abs(final)
		if err != nil {
			return fmt.Errorf("%s %s: %w", o.flag, o.path, err)
		}
		if name := filepath.Base(file); snapshot.IsStateFile(name) && sameDir(filepath.Dir(file), stateDir) {
			return fmt.Errorf("%s %s is a file of the state directory %s (%s, which gate and the next sweep read): give the output a name of its own", o.flag, o.path, stateDir, name)
		}
		for _, s := range seen {
			if sameFile(file, s.file) {
				return fmt.Errorf("%s %s is the same file as %s %s: give each output a file of its own", o.flag, o.path, s.flag, s.path)
			}
		}
		seen = append(seen, target{o, file})
	}
	return nil
}

// sameFile says whether the absolute, symlink-resolved paths a and b
// name one file: the same cleaned path, the same name in one folder
// reached two ways, or one existing file (a hard link).
func sameFile(a, b string) bool {
	if a == b {
		return true
	}
	if filepath.Base(a) == filepath.Base(b) && sameDir(filepath.Dir(a), filepath.Dir(b)) {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// sameDir says whether folders a and b are one: the same cleaned
// absolute path, or, when both exist, the same folder.
func sameDir(a, b string) bool {
	aa, errA := filepath.Abs(a)
	ab, errB := filepath.Abs(b)
	if errA == nil && errB == nil && aa == ab {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// runSweepCmd sweeps and publishes. Until the sweep's report is complete
// in its temporary file nothing is replaced; a failure after the flags
// were accepted writes the failed textfile (ibdoctor_sweep_success 0) and
// exits 2.
func runSweepCmd(ctx context.Context, a *app, o *sweepOptions) error {
	fail := func(err error) error {
		if o.prom != "" {
			if perr := writeFailedProm(o.prom, o.promLabels, o.stateDir); perr != nil {
				err = fmt.Errorf("%w; and --prom: %v", err, perr)
			}
		}
		return withExit(ExitUndecided, err)
	}
	var locked time.Time // when this sweep took the state dir's lock
	if !o.noSave {
		lock, err := snapshot.Acquire(ctx, o.stateDir, o.lockWait)
		locked = time.Now()
		if errors.Is(err, snapshot.ErrLocked) {
			// The running sweep owns the outputs: leave them to it.
			return withExit(ExitUndecided, err)
		}
		if err != nil {
			return fail(err)
		}
		defer lock.Release()
	}
	baseline, prev, accepted, err := sweepBaseline(a, o)
	if err != nil {
		return fail(err)
	}
	// since is the earlier sweep the counters are paired with when it is
	// not prev (STATE/partial's, sweepSince).
	var since *snapshot.Snapshot
	defer func() {
		if prev != nil {
			prev.Close()
		}
		if since != nil {
			since.Close()
		}
	}()

	a.stderr = quietTerminal(a.stderr)
	sw, sess, err := a.runSweep(ctx, diagnose.Options{
		Routes: true, Counters: !o.check.noCounters, Interval: o.check.interval, SL: o.check.sl, PKeyIndex: o.check.pkeyIndex,
	})
	if err != nil {
		if ctx.Err() != nil {
			// Interrupted before discovery returned anything: the
			// same one line as later (not "discover: context canceled").
			return fail(sweepInterrupted(ctx))
		}
		return fail(err)
	}
	defer func() {
		if sess != nil {
			sess.Close()
		}
	}()
	if ctx.Err() != nil {
		return fail(sweepInterrupted(ctx))
	}
	if why := checks.FabricNotReached(sw.Fabric); why != "" {
		// Saved, its one node would be the baseline every later sweep
		// compares with (trial A11: they said healthy while check said
		// link.polling). The link findings on its own port are check's
		// verdict of it, said here.
		msg := "the fabric could not be reached: " + why
		if res, err := checks.Run(sw.Snapshot(o.expectation, nil, nil), "link"); err == nil {
			for _, f := range res.Findings {
				if f.Severity >= checks.Warning {
					msg += fmt.Sprintf("; %s %s: %s", f.Severity, f.Check, f.Title)
				}
			}
		}
		return fail(errors.New(msg + "; nothing saved (the previous report and snapshot stay): fix this host's link or sweep from another host"))
	}
	if baseline != nil && o.designed == nil {
		why, err := baselineOfAnotherFabric(o.stateDir, sess)
		if err != nil {
			return fail(fmt.Errorf("--state-dir: %w", err))
		}
		if why != "" {
			// Compared with another fabric's baseline every node of this
			// one would be "missing" (trial T6: two subnets on one host,
			// both cron lines on the default state dir); saved, this
			// sweep would replace the other fabric's snapshot, which its
			// gates read.
			fix := "give each fabric its own state dir (--state-dir per fabric, or IBDOCTOR_STATE_DIR), or make this fabric the baseline with 'ibdoctor baseline accept'"
			if !o.noSave {
				return fail(fmt.Errorf("--state-dir %s: %s: nothing saved; %s", o.stateDir, why, fix))
			}
			a.notef("--state-dir %s: %s: not compared against it (%s)", o.stateDir, why, fix)
			baseline = nil
		}
	}
	// The fabric file does not depend on the findings: it is written
	// while the checks run (docs/architecture.md), and published with
	// the rest of the state once they are done. Until then it is a
	// temporary file, removed if the sweep fails or is interrupted.
	savedAs := sess.SavedAs(sw.Fabric)
	var ahead *snapshot.FabricAhead
	if !o.noSave && (sw.Complete || !keepsComplete(prev, o, sw.Taken)) {
		ahead = snapshot.WriteFabricAhead(ctx, o.stateDir, sw.Fabric, sw.Taken, savedAs)
		defer ahead.Abort()
	}
	// The state keeps the readings themselves; the checks judge them
	// paired with the previous sweep's.
	read := sw.Counters
	basis := ""
	if sw.Counters != nil && o.check.interval == 0 && sess.Increases == nil {
		var s *snapshot.Snapshot
		s, basis = sweepSince(prev, o, sess, sw.Taken)
		if s != nil {
			sw.Counters = gate.SinceSweep(sw.Counters, s, sw.Taken)
		}
		if s != prev {
			since = s
		}
	}
	snap := sw.Snapshot(o.expectation, baseline, nil)
	snap.BaselineDesigned = o.designed != nil
	res, err := checks.Run(snap, o.check.only...)
	if err != nil {
		return fail(err)
	}
	// Without --fail-on the report is judged as check judges (error): a
	// report never says healthy beside findings check fails on. Only the
	// exit status ignores them then (cron records, it does not fail).
	judge := o.failOn
	if judge < 0 {
		judge = checks.Error
	}
	doc := sw.Document("sweep", sess.Name, res, judge)
	if doc.CountersBasis == "" {
		doc.CountersBasis = basis
	}
	if !o.noSave {
		doc.SnapshotTakenAt = sw.Taken
		if !sw.Complete && keepsComplete(prev, o, sw.Taken) {
			// saveSnapshot keeps the complete one (trial T12: with a
			// host always down, no later sweep replaces it, and once it
			// is over a gate's --max-age every gate sweeps the fabric
			// itself; said here and in the textfile so it is seen).
			doc.SnapshotTakenAt = prev.TakenAt
			doc.SnapshotKept = fmt.Sprintf("not replaced: this sweep is partial (%s not read); %s keeps the complete sweep of %s, which gates answer from until it is over their --max-age (default %v: from %s), then sweep the fabric themselves; the first partial sweep after it is over this sweep's --max-age replaces it, saved marked partial", words.Count(len(doc.Unreached), "thing"), o.stateDir, prev.TakenAt.UTC().Format(time.RFC3339), words.Span(snapshotMaxAge), prev.TakenAt.Add(snapshotMaxAge).UTC().Format(time.RFC3339))
		} else if !sw.Complete && prev != nil && prev.Complete {
			a.notef("the complete sweep of %s in %s is past --max-age %v: replaced by this partial sweep, saved marked partial (gates see it as partial), so the next sweep judges error counters by their growth since this one", prev.TakenAt.UTC().Format(time.RFC3339), o.stateDir, words.Span(o.maxAge))
		}
	}
	// The report is encoded before the state is replaced (an encoding
	// error keeps the old state), streamed into its temporary file, and
	// published after the state.
	out, err := stageReport(o.out, doc)
	if err != nil {
		return fail(fmt.Errorf("--out: %w", err))
	}
	defer out.abort()
	// What the state needs of the sweep is kept; the rest (the checks'
	// views and caches, the accepted baseline, the simulator) is let go
	// before the state is encoded, whose working set then takes the
	// place of the checks' instead of adding to it (issue 13). --html
	// draws from the checks' snapshot: it is staged before that.
	st := sweptState{
		fabric: sw.Fabric, counters: read, taken: sw.Taken, complete: sw.Complete, source: sess.Name,
		prevComplete: keepsComplete(prev, o, sw.Taken),
		verdicts:     checks.FabricWide(snap, res, sw.Taken),
	}
	// The textfile and the page are staged beside their targets too: an
	// output that cannot be written keeps the state as it was (README:
	// on an error the previous report and snapshot stay). Only a rename
	// failing after the state was saved can leave an old output beside
	// a new state.
	var prom, html *outfile.Staged
	if o.prom != "" {
		if prom, err = outfile.Stage(o.prom, func(w io.Writer) error {
			return report.Prometheus(w, doc, report.PromOptions{MinSeverity: o.promMin, Labels: o.promLabels})
		}); err != nil {
			return fail(fmt.Errorf("--prom: %w", err))
		}
		defer prom.Abort()
	}
	if o.html != "" {
		if html, err = stageHTML(o.html, doc, snap); err != nil {
			return fail(err)
		}
		defer html.Abort()
	}
	if ahead != nil {
		// The writer reads the fabric: it is changed only after it.
		if err := ahead.Wait(); err != nil && ctx.Err() == nil {
			return fail(fmt.Errorf("--state-dir: %w", err))
		}
	}
	if ctx.Err() != nil {
		// Nothing is published yet: the previous state stays whole.
		return fail(sweepInterrupted(ctx))
	}
	// The checks have judged the fabric: what the simulator stood in
	// for is not saved as read.
	savedAs.Apply(st.fabric)
	if prev != nil {
		// Its gate.idx is about to be replaced.
		prev.Close()
	}
	if since != nil {
		since.Close()
	}
	snap, res, sw, baseline, prev, since = nil, nil, nil, nil, nil, nil
	sess.Close()
	sess = nil
	if !o.noSave {
		// What was let go of is collected before the save starts: else
		// the collector's goal is still the checks' and the save's
		// allocations grow the heap past the checks' peak before the
		// next collection (issue 13, figures in docs/architecture.md).
		runtime.GC()
		saved, src, err := saveSnapshot(&st, o.stateDir, ahead)
		if err != nil {
			return fail(err)
		}
		if err := snapshot.SaveLastSweep(o.stateDir, snapshot.LastSweep{
			TakenAt: st.taken, Source: st.source, Complete: st.complete, Saved: saved,
		}); err != nil {
			return fail(fmt.Errorf("--state-dir: %w", err))
		}
		// The first complete sweep of a state dir is the baseline until
		// the operator accepts another.
		if o.designed == nil && !accepted && st.complete {
			// The fabric file just saved holds its bytes: copied, not
			// encoded again.
			if err := snapshot.SaveBaselineFrom(o.stateDir, src, st.fabric, st.source); err != nil {
				return fail(fmt.Errorf("--state-dir: %w", err))
			}
		}
	}
	if err := out.publish(a.stdout); err != nil {
		return fail(fmt.Errorf("--out: %w", err))
	}
	if prom != nil {
		if err := prom.Commit(); err != nil {
			return withExit(ExitUndecided, fmt.Errorf("--prom: %w", err))
		}
	}
	if html != nil {
		if err := html.Commit(); err != nil {
			return withExit(ExitUndecided, fmt.Errorf("--html: %w", err))
		}
	}
	if !locked.IsZero() {
		// Holding the lock, as the state dir's own temporaries are
		// removed: a killed sweep's staged outputs, older than the lock.
		for _, p := range []string{o.out, o.prom, o.html} {
			outfile.RemoveStale(p, locked)
		}
	}
	switch {
	case o.failOn >= 0 && doc.Status == "unhealthy":
		return withExit(ExitFindings, nil)
	case !st.complete:
		return withExit(ExitPartial, nil)
	}
	return nil
}

// keepsComplete says whether a partial sweep at now leaves prev, the
// state dir's snapshot, in place: a complete one within --max-age (or any
// complete one at --max-age 0, when sweeps are not paired). Past it the
// partial sweep is saved, marked partial, so the next sweep pairs its
// counters with it: kept, the complete one paired with nothing and every
// later sweep judged static counts on their values again (review V1).
func keepsComplete(prev *snapshot.Snapshot, o *sweepOptions, now time.Time) bool {
	if prev == nil || !prev.Complete {
		return false
	}
	return o.maxAge == 0 || prev.Fresh(now, o.maxAge) == nil
}

// sweptState is what a sweep's state is written from, once its report
// is made.
type sweptState struct {
	fabric       *fabric.Fabric
	counters     checks.Counters
	taken        time.Time
	complete     bool
	source       string
	prevComplete bool // the state dir holds a complete sweep
	verdicts     *checks.FabricVerdicts
}

// stagedReport is sweep's JSON report, encoded and waiting to be
// published: in its temporary file beside --out, or, for stdout, encoded
// once to check it can be and written again when published (a pipe
// cannot be staged).
type stagedReport struct {
	file *outfile.Staged
	doc  *report.Document // stdout
}

// stageReport streams doc's JSON into a temporary file beside path (or,
// for stdout, encodes it to nowhere): an encoding error comes out before
// anything is replaced, and the report is never whole in memory.
func stageReport(path string, doc *report.Document) (*stagedReport, error) {
	if path == outfile.Stdout {
		if err := doc.WriteJSON(io.Discard); err != nil {
			return nil, err
		}
		return &stagedReport{doc: doc}, nil
	}
	f, err := outfile.Stage(path, doc.WriteJSON)
	if err != nil {
		return nil, err
	}
	return &stagedReport{file: f}, nil
}

// publish renames the staged file over --out, or writes the report to
// stdout.
func (r *stagedReport) publish(stdout io.Writer) error {
	if r.file != nil {
		return r.file.Commit()
	}
	w := bufio.NewWriterSize(stdout, 64<<10)
	if err := r.doc.WriteJSON(w); err != nil {
		return fmt.Errorf("writing to standard output: %w", err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("writing to standard output: %w", err)
	}
	return nil
}

// abort removes a staged file not published (a failed sweep keeps the
// previous report).
func (r *stagedReport) abort() {
	if r.file != nil {
		r.file.Abort()
	}
}

// sweepBaseline finds what the sweep compares the topology against: the
// designed topology (--expect-topology), else the accepted baseline in
// the state dir. A state dir from before baselines existed has only a
// snapshot: its fabric becomes the accepted baseline. accepted says a
// baseline exists in the state dir (so this sweep must not set one).
// The baseline is read from baseline.topo, what the checks compare
// against and no more: decoding baseline.json.gz whole only to reduce it
// to that was 5 CPU seconds of a later sweep at 49k nodes (issue 13). It
// is decoded only when baseline.topo cannot stand for it (absent,
// damaged, or of another baseline file: said, and rewritten), or when
// baseline.idx, the gates' copy, must be written from it. With a
// designed topology only the baseline's existence is looked at.
func sweepBaseline(a *app, o *sweepOptions) (baseline *checks.Baseline, prev *snapshot.Snapshot, accepted bool, err error) {
	p, err := snapshot.Load(o.stateDir)
	if err == nil {
		// Kept open: its gate.idx holds the counters this sweep's
		// growth is judged from (the caller closes it).
		prev = p
		defer func() {
			if err != nil {
				p.Close()
			}
		}()
	} else if !errors.Is(err, snapshot.ErrNone) {
		a.notef("ignoring the previous snapshot: %v", err)
	}
	// topoErr says why baseline.topo cannot stand for the baseline.
	var b *checks.Baseline
	var topoErr error
	// present: with --expect-topology the state dir's baseline is not
	// compared against, so whether it exists (this sweep must not take
	// one then) is all that is read of it, by a stat: decoding it only
	// to learn that was seconds of CPU at 49k nodes (issue 13).
	present := false
	if o.designed == nil {
		b, topoErr = snapshot.LoadBaselineTopology(o.stateDir)
	} else if present, err = snapshot.HasBaseline(o.stateDir); err != nil {
		return nil, nil, false, fmt.Errorf("--state-dir: %w", err)
	}
	var acc *fabric.Fabric
	decoded := false
	decode := func() error {
		if decoded {
			return nil
		}
		decoded = true
		f, err := snapshot.LoadBaseline(o.stateDir)
		if err == nil && f == nil && b != nil {
			err = fmt.Errorf("the baseline went away while it was read")
		}
		acc = f
		return err
	}
	need := b == nil || (!o.noSave && !snapshot.HasBaselineIndex(o.stateDir))
	if o.designed != nil {
		// Decoded only to write the gates' baseline.idx it lacks.
		need = present && !o.noSave && !snapshot.HasBaselineIndex(o.stateDir)
	}
	if need {
		if err := decode(); err != nil {
			return nil, nil, false, fmt.Errorf("--state-dir: %w", err)
		}
	}
	if acc != nil && !o.noSave {
		// A baseline from before baseline.idx: the gates read that.
		if err := snapshot.EnsureBaselineIndex(o.stateDir, acc); err != nil {
			return nil, nil, false, fmt.Errorf("--state-dir: %w", err)
		}
	}
	if b == nil && acc == nil && !present && prev != nil && prev.Complete && !o.noSave {
		if f, err := prev.FabricModel(); err == nil {
			if err := snapshot.SaveBaseline(o.stateDir, f, prev.Source, false); err != nil {
				return nil, nil, false, fmt.Errorf("--state-dir: %w", err)
			}
			acc = f
		}
	}
	exists := b != nil || acc != nil || present
	if o.designed != nil {
		return o.designed, prev, exists, nil
	}
	if topoErr != nil && acc != nil {
		// Never a silent fallback: the next sweep should not pay it.
		if o.noSave {
			a.notef("%v: the baseline was decoded whole instead; --no-save: %s left as it is", topoErr, snapshot.BaselineTopologyName)
		} else {
			if err := snapshot.WriteBaselineTopology(o.stateDir, acc); err != nil {
				return nil, nil, false, fmt.Errorf("--state-dir: %w", err)
			}
			a.notef("%v: the baseline was decoded whole instead, and %s written from it for the next sweep", topoErr, snapshot.BaselineTopologyName)
		}
	}
	if b == nil {
		b = checks.BaselineOf(acc)
	}
	if b != nil {
		if b.Accepted, err = snapshot.BaselineAccepted(o.stateDir); snapshot.IsCorrupt(err) {
			// baseline.idx is the gates' copy of baseline.json.gz: a
			// damaged one must not fail every cron sweep (review V9),
			// nor its lost "accepted" mark be guessed. Rewritten from
			// the baseline itself, decoded for it.
			if !o.noSave {
				if err := decode(); err != nil {
					return nil, nil, false, fmt.Errorf("--state-dir: %w", err)
				}
			}
			if err = corruptBaselineIndex(a, o, acc); err != nil {
				return nil, nil, false, fmt.Errorf("--state-dir: %w", err)
			}
		} else if err != nil {
			return nil, nil, false, fmt.Errorf("--state-dir: %w", err)
		}
	}
	return b, prev, exists, nil
}

// corruptBaselineIndex deals with a damaged baseline.idx beside acc, the
// baseline it copies: rewritten from acc (unless --no-save), and either
// way taken as a baseline the operator did not accept, said on stderr.
func corruptBaselineIndex(a *app, o *sweepOptions, acc *fabric.Fabric) error {
	path := filepath.Join(o.stateDir, snapshot.BaselineIndexName)
	again := "if it had been accepted with 'ibdoctor baseline accept', accept it again"
	if o.noSave {
		a.notef("%s is corrupt (not a readable baseline index): the baseline is taken as not accepted and not checked for being of another fabric; --no-save: left as it is (a sweep without --no-save rewrites it from %s)", path, snapshot.BaselineName)
		return nil
	}
	if err := snapshot.RewriteBaselineIndex(o.stateDir, acc); err != nil {
		return err
	}
	a.notef("%s was corrupt (not a readable baseline index): rewritten from %s, marked not accepted (the mark was in the damaged file; %s)", path, snapshot.BaselineName, again)
	return nil
}

// baselineOfAnotherFabric says why the accepted baseline in dir is of a
// fabric other than the one sess talks to (the snapshot's rule,
// Index.OfAnotherFabric), or "" when it is this fabric's or there is none.
func baselineOfAnotherFabric(dir string, sess *session) (string, error) {
	x, err := snapshot.OpenBaseline(dir)
	if snapshot.IsCorrupt(err) {
		// Only under --no-save (a sweep rewrites it first), said then.
		return "", nil
	}
	if err != nil || x == nil {
		return "", err
	}
	defer x.Close()
	local := sess.Engine.Local()
	other, why, err := x.OfAnotherFabric(sess.Name, local.Name, local.NodeGUID)
	if err != nil || !other {
		return "", err
	}
	return fmt.Sprintf("its baseline is of %s, not %s (%s)", x.Source, sess.Name, why), nil
}

// snapshotMaxAge is the default --max-age of gate and sweep: the oldest
// snapshot a gate answers from, and the oldest previous sweep a sweep
// judges its error counters' growth against (cron runs every 15 minutes:
// a few missed runs are still "since the previous sweep").
const snapshotMaxAge = time.Hour

// sweepSince decides which earlier sweep this one's error counters are
// judged against: the previous sweep in the state dir when it is of this
// fabric (gate's rule: of this source, or holding this very port) and at
// most --max-age old (gate's Fresh). A partial one is paired too, port by
// port: a port it read and saved is judged on its growth, one it did not
// on its values (trial T2: one host always down somewhere must not turn
// the whole fabric back to its values). It returns that snapshot, or nil;
// and, for the report's counters_basis, which was used or why none was
// ("" for a first sweep: the values since the clear are judged, as
// always).
func sweepSince(prev *snapshot.Snapshot, o *sweepOptions, sess *session, now time.Time) (*snapshot.Snapshot, string) {
	const values = "error counters judged on their values since the last clear"
	switch {
	case prev == nil:
		return nil, ""
	case o.maxAge == 0:
		return nil, values + " (--max-age 0: not against the previous sweep)"
	}
	if why := prev.Fresh(now, o.maxAge); why != nil {
		// The complete sweep kept past the partial ones after it is
		// too old; the last of those is not.
		var err error
		if prev, err = partialSince(o, prev, now); prev == nil {
			if err != nil {
				// Damaged (its checksum) or broken: said, never paired.
				return nil, fmt.Sprintf("%s: the previous sweep in %s %v, and the partial sweep after it could not be read (%v)", values, o.stateDir, why, err)
			}
			return nil, fmt.Sprintf("%s: the previous sweep in %s %v", values, o.stateDir, why)
		}
	}
	// gate's rule for its snapshot, the same function.
	local := sess.Engine.Local()
	other, why, err := prev.OfAnotherFabric(sess.Name, local.Name, local.NodeGUID)
	if err != nil {
		return nil, fmt.Sprintf("%s: the previous sweep in %s could not be read (%v)", values, o.stateDir, err)
	}
	if other {
		return nil, fmt.Sprintf("%s: the previous sweep in %s is of %s, not %s (%s)", values, o.stateDir, prev.Source, sess.Name, why)
	}
	partial := ""
	if !prev.Complete {
		partial = "; that sweep was partial: the ports it did not read are judged on their values since the last clear"
	}
	return prev, fmt.Sprintf("error counters judged by their growth since the previous sweep at %s (%v before; %s); counts since the last clear that did not grow are info; congestion by the share of time stalled since then (PortXmitWait; its value where that sweep did not save it)%s", prev.TakenAt.Format(time.RFC3339), words.Span(now.Sub(prev.TakenAt)), prev.Source, partial)
}

// sweepInterrupted is the error of a sweep stopped by a signal; it wraps
// ctx's error so that execute knows it for an interrupt.
func sweepInterrupted(ctx context.Context) error {
	return interruptedError{fmt.Sprintf("sweep interrupted (%v): the previous report and snapshot are kept", context.Cause(ctx)), ctx.Err()}
}

// readInterrupted is the error of a check or gate stopped by a signal
// while it read the fabric: what it had read, and that nothing is judged
// from it, since a walk abandoned half-way looks like a smaller fabric
// (leaves with 1 uplink, hosts without HCAs) and every verdict on it
// would be invented (trial N3). sw is what the sweep read, nil if none.
func readInterrupted(ctx context.Context, cmd string, sw *diagnose.Sweep) error {
	return readInterruptedAt(ctx, cmd, "before the fabric was read", sw)
}

// readInterruptedAt is readInterrupted where read says how far a reader
// other than a sweep got (sw nil).
func readInterruptedAt(ctx context.Context, cmd, read string, sw *diagnose.Sweep) error {
	if sw != nil && sw.Fabric != nil {
		n := len(sw.Fabric.Nodes)
		if _, ok := sw.Timings["sm"]; !ok {
			read = fmt.Sprintf("during discovery, %d nodes walked", n)
		} else {
			read = fmt.Sprintf("after discovering %d nodes, before their tables and counters were all read", n)
		}
	}
	return interruptedError{fmt.Sprintf("%s interrupted (%v) %s: nothing is judged or printed from a fabric read in part; run it again", cmd, context.Cause(ctx), read), ctx.Err()}
}

// interruptedError is a message of its own that still unwraps to the
// context's error.
type interruptedError struct {
	msg string
	err error
}

func (e interruptedError) Error() string { return e.msg }
func (e interruptedError) Unwrap() error { return e.err }

// writeFailedProm replaces the textfile by one saying the sweep failed,
// keeping the last success's time and the last good counts; what the
// textfile lacks of those times is taken from stateDir ("" or
// unreadable: not known).
func writeFailedProm(path string, labels []report.Label, stateDir string) error {
	prev, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		prev = nil
	}
	var state report.FailedState
	if stateDir != "" {
		if l, err := snapshot.LoadLastSweep(stateDir); err == nil && l != nil {
			state.LastSuccess = l.TakenAt
		}
		if at, err := snapshot.TakenAt(stateDir); err == nil {
			state.SnapshotTakenAt = at
			if state.LastSuccess.IsZero() {
				state.LastSuccess = at // a state dir from before last-sweep.json
			}
		}
	}
	var b bytes.Buffer
	if err := report.PrometheusFailed(&b, prev, time.Now(), labels, state); err != nil {
		return err
	}
	return outfile.WriteAtomic(path, b.Bytes())
}

// saveSnapshot keeps the sweep for gate and the next sweep, and says
// whether it did, and which file of dir holds the fabric as a baseline
// would (snapshot.BaselineSource). A partial sweep does not replace a
// complete one within --max-age (keepsComplete): gate would lose sight
// of what the partial sweep could not reach.
func saveSnapshot(st *sweptState, dir string, ahead *snapshot.FabricAhead) (bool, string, error) {
	keep := !st.complete && st.prevComplete
	s, err := snapshot.New(st.fabric, st.counters, st.taken, st.source, buildinfo.Get().Version, st.complete)
	if err != nil {
		return false, "", err
	}
	// The snapshot holds the readings alone from here, so Save can let
	// go of them once it has encoded them.
	st.counters = nil
	s.SetFabricVerdicts(st.verdicts)
	if keep {
		// Gates keep the complete sweep; the next sweep pairs its
		// counters with this one once that is past --max-age
		// (sweepSince), not with nothing.
		if _, err := s.Save(filepath.Join(dir, partialDir)); err != nil {
			return false, "", fmt.Errorf("--state-dir: %w", err)
		}
		return false, "", nil
	}
	s.WriteAhead(ahead)
	if _, err := s.Save(dir); err != nil {
		return false, "", fmt.Errorf("--state-dir: %w", err)
	}
	// A partial sweep kept beside the complete one is older than this.
	if err := os.RemoveAll(filepath.Join(dir, partialDir)); err != nil {
		return false, "", fmt.Errorf("--state-dir: %w", err)
	}
	return true, s.BaselineSource(), nil
}

// partialDir is where, under the state dir, a partial sweep that kept
// the complete snapshot in place (keepsComplete) saves itself: the
// counters the next sweep pairs with once the complete one is past
// --max-age. Gates do not read it.
const partialDir = snapshot.PartialName

// partialSince is the partial sweep saved in partialDir when it is
// later than prev (the state dir's snapshot, past --max-age) and within
// --max-age at now; nil otherwise, with why it could not be read when it
// is there (the values are then judged, as without it).
func partialSince(o *sweepOptions, prev *snapshot.Snapshot, now time.Time) (*snapshot.Snapshot, error) {
	p, err := snapshot.Load(filepath.Join(o.stateDir, partialDir))
	if errors.Is(err, snapshot.ErrNone) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !p.TakenAt.After(prev.TakenAt) || p.Fresh(now, o.maxAge) != nil {
		p.Close()
		return nil, nil
	}
	return p, nil
}
