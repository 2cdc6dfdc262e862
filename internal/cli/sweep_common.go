package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/discover"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/ibdoctor/ibdoctor/internal/source"
	"github.com/ibdoctor/ibdoctor/mad"
	"github.com/spf13/cobra"
)

// checkOptions are the flags check, sweep and gate share.
type checkOptions struct {
	interval       time.Duration
	failOn         string
	expectRate     string
	expectSwitch   string
	expectTopology string
	thresholds     string
	oversub        float64
	imbalance      float64
	only           []string
	sl             uint8
	pkeyIndex      uint16
	noCounters     bool
}

func (o *checkOptions) flags(cmd *cobra.Command, failOnDefault string) {
	fs := cmd.Flags()
	fs.DurationVar(&o.interval, "interval", 0, "read counters twice this far apart and judge their increase (e.g. 30s); 0 reads once and judges absolute values")
	fs.StringVar(&o.failOn, "fail-on", failOnDefault, "lowest severity that makes the exit status unhealthy: info, warning, error or critical")
	fs.StringVar(&o.expectRate, "expect-rate", "", "acceptable rates of host links, e.g. 4xNDR or 4xHDR,4xNDR (default: what both ends have enabled)")
	fs.StringVar(&o.expectSwitch, "expect-switch-rate", "", "acceptable rates of switch-to-switch links (default: --expect-rate, else enabled rates and siblings)")
	fs.StringVar(&o.expectTopology, "expect-topology", "", "expected topology (ibnetdiscover text or ibdoctor JSON) for topology.miswired/changed and link.down")
	fs.StringVar(&o.thresholds, "thresholds", "", "counter thresholds file (docs/checks.md: Name=value, delta.Name=value, ber=...)")
	fs.Float64Var(&o.oversub, "oversubscription", 2, "largest acceptable host:uplink bandwidth ratio of a leaf")
	fs.Float64Var(&o.imbalance, "imbalance", 1.2, "largest acceptable max/mean route load over equal-cost ports")
	fs.StringSliceVar(&o.only, "checks", nil, "run only these checks or groups (link, counters, routing, topology)")
	fs.Uint8Var(&o.sl, "sl", 0, "service level of PerfMgt MADs (default 0, as ibqueryerrors --skip-sl uses)")
	fs.Uint16Var(&o.pkeyIndex, "pkey-index", 0, "P_Key table index of PerfMgt MADs (0: the default partition)")
	fs.BoolVar(&o.noCounters, "no-counters", false, "do not read PerfMgt counters")
	completeValues(cmd, "fail-on", checks.SeverityNames())
	completeValues(cmd, "checks", checks.Selectors())
}

// expectations turns the flags into checks.Expectations.
func (o *checkOptions) expectations() (checks.Expectations, error) {
	e := checks.Expectations{Oversubscription: o.oversub, ImbalanceRatio: o.imbalance}
	// Refuse a bad --checks before sweeping the fabric, not after.
	if err := checks.Validate(o.only...); err != nil {
		return e, fmt.Errorf("--checks: %w", err)
	}
	var err error
	if e.HostRates, err = parseRates("--expect-rate", o.expectRate); err != nil {
		return e, err
	}
	if e.SwitchRates, err = parseRates("--expect-switch-rate", o.expectSwitch); err != nil {
		return e, err
	}
	if len(e.SwitchRates) == 0 {
		e.SwitchRates = e.HostRates
	}
	if o.thresholds != "" {
		f, err := os.Open(o.thresholds)
		if err != nil {
			return e, notFound("--thresholds", o.thresholds, err, "a file of Name=value lines (docs/checks.md), or leave --thresholds out for the defaults")
		}
		defer f.Close()
		if e.Thresholds, err = checks.ParseThresholds(f); err != nil {
			return e, fmt.Errorf("--thresholds %s: %w", o.thresholds, err)
		}
	}
	return e, nil
}

func parseRates(flag, s string) ([]mad.Rate, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []mad.Rate
	for _, part := range strings.Split(s, ",") {
		r, err := mad.ParseRate(part)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", flag, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// flagError is the FlagErrorFunc of check, sweep and gate: a bad flag is
// bad input (exit 2), and the message says where the flags are listed.
func flagError(cmd *cobra.Command, err error) error {
	return withExit(ExitUndecided, fmt.Errorf("%w (see '%s --help')", err, cmd.CommandPath()))
}

// noArgs is the Args check of the commands that take only flags. A stray
// word is most often the value of a bare --sim or --ibsim (both may stand
// alone, so pflag gives them a value only with '='): say so, rather than
// cobra's "unknown command".
func (a *app) noArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if err := bareValueHint(cmd, args[0], true); err != nil {
		return err
	}
	return withExit(ExitUndecided, fmt.Errorf("unexpected argument %q: %s takes only flags (see '%s --help')%s", args[0], cmd.Name(), cmd.CommandPath(), bareSimNote(cmd, "it")))
}

// exactArgs is the Args check of a command that takes n arguments: a
// wrong count names the usage line, and one word too many after a bare
// --sim or --ibsim says to join them with '='.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == n {
			return nil
		}
		if len(args) > n {
			if err := bareValueHint(cmd, args[0], true); err != nil {
				return err
			}
		} else if err := bareValueHint(cmd, args[0], false); err != nil {
			return err
		}
		note := ""
		if len(args) > n {
			note = bareSimNote(cmd, "the first")
		}
		return withExit(ExitUndecided, fmt.Errorf("%s takes %d arguments, got %d (%q): usage: %s%s", cmd.Name(), n, len(args), args, cmd.UseLine(), note))
	}
}

// bareValueHint returns the error for word following a bare --sim or
// --ibsim, or nil when neither stood alone. An existing file is taken for
// --sim's value, and with any a missing one that reads as a path; a bare
// word that is no file is an argument too many, which the caller says
// first (bareSimNote adds the file's case: trial E4).
// With any, the word after a bare --ibsim is taken for its socket name.
func bareValueHint(cmd *cobra.Command, word string, any bool) error {
	fs := cmd.Flags()
	if bareSim(cmd) {
		if _, err := os.Stat(word); err == nil {
			return withExit(ExitUndecided, fmt.Errorf("--sim %s: write --sim=%s to read a fabric file (--sim alone is the built-in sample fabric)", word, word))
		}
		if any && pathLike(word) {
			return withExit(ExitUndecided, fmt.Errorf("--sim %s: no such file: give %s as --sim=FILE, or --sim alone for the built-in sample", word, fabric.TopologyFormats))
		}
	}
	if f := fs.Lookup("ibsim"); f != nil && f.Changed && f.Value.String() == f.NoOptDefVal && any {
		return withExit(ExitUndecided, fmt.Errorf("--ibsim %s: give the ibsim socket name with '=' (--ibsim=%s); a bare --ibsim uses $IBSIM_SOCKNAME or \"sim\"", word, word))
	}
	return nil
}

// pathLike says whether a word reads as a file path (a folder or an
// extension in it): after a bare --sim it was meant as the file; a bare
// word ("13", "extra") is an argument too many.
func pathLike(word string) bool {
	return strings.ContainsAny(word, `/\.`) || strings.HasPrefix(word, "~")
}

// bareSim says whether --sim was given without a value (the sample).
func bareSim(cmd *cobra.Command) bool {
	f := cmd.Flags().Lookup("sim")
	return f != nil && f.Changed && f.Value.String() == f.NoOptDefVal
}

// bareSimNote is the second clause of an argument-count error after a
// bare --sim: the first word too many (which: "it", "the first") may have
// been meant as its file, which does not exist.
func bareSimNote(cmd *cobra.Command, which string) string {
	if !bareSim(cmd) {
		return ""
	}
	return fmt.Sprintf("; if %s was meant as --sim's file, there is no such file: give %s as --sim=FILE, or --sim alone for the built-in sample", which, fabric.TopologyFormats)
}

// notFound is the error of flag's file at path: when it does not exist,
// one line saying so and what to give, in --sim's words, not Go's
// "stat FILE: no such file or directory"; else err under the flag.
func notFound(flag, path string, err error, want string) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s %s: no such file: give %s", flag, path, want)
	}
	return fmt.Errorf("%s: %w", flag, err)
}

// loadBaseline reads an expected topology file.
func (a *app) loadBaseline(parent context.Context, path string) (*fabric.Fabric, error) {
	if path == "" {
		return nil, nil
	}
	f, err := a.loadInterruptible(parent, path)
	if err != nil {
		return nil, notFound("--expect-topology", path, err, "a designed or saved fabric: ibnetdiscover text (default or -p), an ibdiagnet2 file, an ibsim net file or ibdoctor JSON (ibdoctor discover --format json)")
	}
	return f, nil
}

// loadInterruptible reads a fabric file, giving up on SIGINT/SIGTERM.
func (a *app) loadInterruptible(parent context.Context, path string) (*fabric.Fabric, error) {
	ctx, stop := signalContext(parent)
	defer stop()
	return loadFabricFile(ctx, path, func(w string) { a.warnf("%s", w) })
}

// signalContext is cancelled on SIGINT/SIGTERM, so an interrupted sweep
// still releases what it holds (an ibsim slot) and reports what it read.
func signalContext(parent context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
}

// openOptions are what a command asks of the fabric it opens: what it
// will do with it, what to refuse once it is open, and whether to walk it.
type openOptions struct {
	need source.Need
	// interval is the command's --interval over counters: refused when a
	// file recorded them once (intervalOnFile).
	interval time.Duration
	// requireCounters, the command's name, refuses a source without
	// counters (a --sim file that carries none): the command has nothing
	// else to show, and the simulator's zeros are not the fabric's.
	requireCounters string
	// requireRates refuses as well a file whose counters are one reading:
	// rates need two, and the file's values do not move between reads.
	requireRates bool
	// discover walks the subnet, with a progress line on stderr, into
	// session.fabric (discover semantics: an interrupted walk is kept).
	discover bool
}

// session is an open fabric: the source's session and, when asked for,
// the fabric discovered through it. Close releases the source.
type session struct {
	*source.Session
	fabric *fabric.Fabric
}

// open is the one session opener of every command that talks to a
// fabric: it opens the source the global flags select, prints the file's
// warnings, refuses what o refuses, and discovers when o asks. Every
// error is exit 2 and leaves nothing open.
func (a *app) open(ctx context.Context, o openOptions) (*session, error) {
	so := a.opts.source
	so.Need = o.need
	if so.LFTs != "" && (so.Sim == "" || so.Sim == "sample") {
		return nil, withExit(ExitUndecided, fmt.Errorf("--lfts %s: give it beside --sim=FILE (the fabric file whose tables they are)", so.LFTs))
	}
	src, err := source.Open(ctx, ctx, so)
	if err != nil {
		return nil, withExit(ExitUndecided, err)
	}
	for _, w := range src.File.Warnings() {
		a.warnf("%s", w)
	}
	s := &session{Session: src}
	if err := intervalOnFile(src, o.interval); err != nil {
		src.Close()
		return nil, err
	}
	if o.requireCounters != "" && src.NoCounters != "" {
		src.Close()
		if o.requireRates {
			return nil, withExit(ExitUndecided, fmt.Errorf("%s: %s: no rates to show (run it on the fabric)", o.requireCounters, src.NoCounters))
		}
		return nil, withExit(ExitUndecided, fmt.Errorf("%s: %s: nothing to judge (an ibdiagnet2.db_csv with PM counters has them, or run on the fabric)", o.requireCounters, src.NoCounters))
	}
	if o.requireRates && src.CountersOnce != "" {
		src.Close()
		return nil, withExit(ExitUndecided, fmt.Errorf("%s: %s: no rates to show, they need two readings ('ibdoctor counters' judges the values as read; run %s on the fabric for rates)", o.requireCounters, src.CountersOnce, o.requireCounters))
	}
	if o.discover {
		if s.fabric, err = a.discover(ctx, src.Engine, src.Unread()); err != nil {
			src.Close()
			return nil, err
		}
	}
	return s, nil
}

// warnf prints a warning on stderr: on a terminal wrapped at its width
// under "warning: ", in a log one line.
func (a *app) warnf(format string, args ...any) {
	io.WriteString(a.stderr, report.WrapString("warning: ", fmt.Sprintf(format, args...), a.io.ErrWidth()))
}

// notef prints a note on stderr under "ibdoctor: ", wrapped like warnf.
func (a *app) notef(format string, args ...any) {
	io.WriteString(a.stderr, report.WrapString("ibdoctor: ", fmt.Sprintf(format, args...), a.io.ErrWidth()))
}

// listStderr prints title and the lines under it on stderr, each indented
// two spaces and, on a terminal, wrapped at its width.
func (a *app) listStderr(title string, lines []string) {
	var b strings.Builder
	b.WriteString(title + "\n")
	for _, l := range lines {
		b.WriteString(report.WrapString("  ", l, a.io.ErrWidth()))
	}
	io.WriteString(a.stderr, b.String())
}

// runSweep opens the source and sweeps it with a progress line on stderr.
func (a *app) runSweep(ctx context.Context, o diagnose.Options) (*diagnose.Sweep, *session, error) {
	sess, err := a.open(ctx, openOptions{need: source.Need{SMP: true, Perf: o.Counters, Vendor: true}, interval: o.Interval})
	if err != nil {
		return nil, nil, err
	}
	if sess.NoCounters != "" {
		// The simulator would answer with zeros: not counters read.
		o.Counters, o.Interval = false, 0
	}
	o.TablesNotRead = sess.TablesNotInFile
	o.NoSL2VL = sess.NoSL2VL
	o.Discover.Unread = sess.Unread()
	pr := newProgress(a.stderr)
	o.Stage = pr.Stage
	o.Discover.Progress = func(p discover.Progress) { pr.Discover(p) }
	sw, err := diagnose.Run(ctx, sess.Engine, o)
	pr.Done()
	if sw == nil {
		sess.Close()
		return nil, nil, withExit(ExitUndecided, err)
	}
	sess.DropStandIns(sw.Fabric)
	// Planted tables (--faults that edit routes) are judged like the SM's.
	sw.RoutesComputed = sess.RoutesComputed && !sess.RoutesPlanted
	sw.CountersNotRead = sess.NoCounters
	if sess.File != nil && sw.SM != nil {
		// The simulator stands in for the file's SM: a second read of
		// it would say nothing of the fabric, --interval or not.
		sw.SM.AgainNotRead = fmt.Sprintf("%s (%s) records no subnet manager, so there is no SMInfo to read twice", filepath.Base(sess.File.Name), sess.File.Format)
		if why := sess.NotRecorded["sm-recorded"]; why != "" {
			sw.SM.AgainNotRead = why
		}
		if sess.File.Recorded.SMInfo {
			// An ibdiagnet2.db_csv's SM_INFO (or a fabric saved from
			// one): the simulator answers that reading, whose ActCount
			// stays as recorded.
			table := ""
			if sess.File.Format == fabric.FormatDBCSV {
				table = " (SM_INFO)"
			}
			sw.SM.AgainNotRead = fmt.Sprintf("%s (%s) records one SMInfo reading of each subnet manager%s: whether ActCount advances needs two", filepath.Base(sess.File.Name), sess.File.Format, table)
		}
	}
	sw.RatesNotRead = sess.RatesNotRead
	sw.SourceWarnings = sess.File.Warnings()
	sw.SupportedNotRead = sess.SupportedNotRead
	sw.NotRecorded = sess.NotRecorded
	if sess.Increases != nil && sw.Counters != nil {
		sw.Counters = diagnose.WithIncreases(sw.Counters, sess.Increases)
		sw.CountersBasis = sess.IncreasesBasis
	}
	return sw, sess, nil
}

// intervalOnFile refuses --interval over counters a file recorded once:
// they do not move, so every increase would read zero.
func intervalOnFile(sess *source.Session, interval time.Duration) error {
	if interval <= 0 || sess.CountersOnce == "" {
		return nil
	}
	return withExit(ExitUndecided, fmt.Errorf("--interval %v: %s: there is no second sample to compare; drop --interval to judge the values as read", interval, sess.CountersOnce))
}
