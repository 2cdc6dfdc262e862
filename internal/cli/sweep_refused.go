package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ibdoctor/ibdoctor/internal/outfile"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/ibdoctor/ibdoctor/internal/snapshot"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// refused is what sweep returns when it refuses its command line (err,
// exit 2; nil passes through): the textfile, when its own path is fine,
// says ibdoctor_sweep_success 0 as a sweep that failed reading says it,
// so the alert on it fires for a typo in cron's command line or in its
// thresholds file too, not only an hour later as a stale sweep (trial
// T3). A --prom path that is itself refused is left alone.
func (o *sweepOptions) refused(err error) error {
	if err == nil || !o.promPathOK() {
		return err
	}
	labels, lerr := promLabelsOf(o.promLabel)
	if lerr != nil {
		return err // not the textfile's series: left alone
	}
	// The textfile is read, then replaced: a sweep holding the state
	// dir's lock publishes its own, which this could put the older
	// counts back over. Held, the textfile is left to that sweep (as a
	// sweep finding the lock busy leaves it), without waiting: a refused
	// line's --lock-wait may be the refused flag. A state dir that does
	// not exist has no sweep and is not created.
	if st, serr := os.Stat(o.stateDir); o.stateDir != "" && serr == nil && st.IsDir() {
		lock, lerr := snapshot.Acquire(context.Background(), o.stateDir, 0)
		if errors.Is(lerr, snapshot.ErrLocked) {
			return err
		}
		defer lock.Release()
	}
	if perr := writeFailedProm(o.prom, labels, o.stateDir); perr != nil {
		return withExit(ExitUndecided, fmt.Errorf("%w; and --prom: %v", err, perr))
	}
	return err
}

// promPathOK says whether --prom passes the checks validate makes of it:
// a file that can be written, not stdout, not a file of the state
// directory, not another output's file.
func (o *sweepOptions) promPathOK() bool {
	if o.prom == "" || o.prom == outfile.Stdout || outfile.CheckWritable(o.prom) != nil {
		return false
	}
	if checkOutputsApart(o.stateDir, []outputPath{{"--prom", o.prom}}) != nil {
		return false
	}
	for _, other := range []outputPath{{"--out", o.out}, {"--html", o.html}} {
		if checkOutputsApart(o.stateDir, []outputPath{other}) != nil {
			continue // refused on its own, so not written either
		}
		if checkOutputsApart(o.stateDir, []outputPath{{"--prom", o.prom}, other}) != nil {
			return false
		}
	}
	return true
}

// sweepFlagError is sweep's FlagErrorFunc: pflag stops at the first flag
// it cannot parse, so the output paths are read again from the whole
// command line, every other flag skipped, to mark the textfile failed
// wherever --prom stands.
func (a *app) sweepFlagError(cmd *cobra.Command, err error) error {
	err = flagError(cmd, err)
	fs := pflag.NewFlagSet("sweep-outputs", pflag.ContinueOnError)
	fs.ParseErrorsWhitelist.UnknownFlags = true
	fs.SetOutput(io.Discard)
	var o sweepOptions
	fs.StringVar(&o.prom, "prom", "", "")
	fs.StringArrayVar(&o.promLabel, "prom-label", nil, "")
	fs.StringVar(&o.out, "out", outfile.Stdout, "")
	htmlFlag(fs, &o.html)
	fs.StringVar(&o.stateDir, "state-dir", defaultStateDir(), "")
	if fs.Parse(a.args) != nil {
		return err
	}
	return o.refused(err)
}

// promLabelsOf parses --prom-label values; a name given twice is refused
// (the second would silently win or make every line invalid).
func promLabelsOf(args []string) ([]report.Label, error) {
	var out []report.Label
	for _, a := range args {
		l, err := report.ParseLabel(a)
		if err != nil {
			return nil, fmt.Errorf("--prom-label %w", err)
		}
		for _, o := range out {
			if o.Name == l.Name {
				return nil, fmt.Errorf("--prom-label %s=%s and %s=%s: give each label once", o.Name, o.Value, l.Name, l.Value)
			}
		}
		out = append(out, l)
	}
	return out, nil
}
