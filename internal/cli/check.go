package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/ibdoctor/ibdoctor/internal/snapshot"
	"github.com/spf13/cobra"
)

// checkCmdOptions are check's flags.
type checkCmdOptions struct {
	check   checkOptions
	json    bool
	list    bool
	detail  int
	verbose bool
	html    string
}

// newCheckCmd builds check; runF, when not nil, runs instead of runCheck
// (tests parse the flags without sweeping).
func newCheckCmd(a *app, runF func(*checkCmdOptions) error) *cobra.Command {
	var o checkCmdOptions
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Discover the fabric, read counters and routes, and rank what is wrong",
		Long: `check sweeps the whole fabric (discovery, every switch's forwarding table, every
port's counters), runs every check, and prints the findings worst first with
their evidence, impact and next step. Exit status: 0 healthy, 1 findings at or
above --fail-on, 2 could not decide (see docs/exit-codes.md).`,
		Example: `  ibdoctor check --sim                    # the built-in sample fabric
  ibdoctor check --interval 30s --expect-rate 4xNDR
  ibdoctor check --json --fail-on warning
  ibdoctor check --sim --html fabric.html  # a page drawing the fabric`,
		Args: a.noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o)
			}
			return a.runCheck(cmd.Context(), &o)
		},
	}
	cmd.SetFlagErrorFunc(flagError)
	o.check.flags(cmd, "error")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the report as JSON (docs/schema-report.md)")
	cmd.Flags().BoolVar(&o.list, "list", false, "list the checks and exit")
	htmlFlag(cmd.Flags(), &o.html)
	detailFlag(cmd.Flags(), &o.detail, 10)
	cmd.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "also say why each check that did not run was skipped")
	return cmd
}

// runCheck validates the flags, sweeps, runs the checks and prints.
func (a *app) runCheck(parent context.Context, opts *checkCmdOptions) error {
	o := &opts.check
	if opts.list {
		return printCheckList(a)
	}
	if err := checkHTMLPath(opts.html, false); err != nil {
		return withExit(ExitUndecided, err)
	}
	failOn, err := checks.ParseSeverity(o.failOn)
	if err != nil {
		return withExit(ExitUndecided, fmt.Errorf("--fail-on: %w", err))
	}
	expect, err := o.expectations()
	if err != nil {
		return withExit(ExitUndecided, err)
	}
	designed, err := a.loadBaseline(parent, o.expectTopology)
	if err != nil {
		return withExit(ExitUndecided, err)
	}
	// What the checks compare against, not the decoded file: that is let
	// go of before the fabric is read.
	baseline := checks.BaselineOf(designed)
	designed = nil
	ctx, stop := signalContext(parent)
	defer stop()
	sw, sess, err := a.runSweep(ctx, diagnose.Options{
		Routes: true, Counters: !o.noCounters, Interval: o.interval,
		SL: o.sl, PKeyIndex: o.pkeyIndex,
	})
	if ctx.Err() != nil {
		// Checked once every read is done: a signal after this point
		// only cuts the printing of a report judged on a whole sweep.
		if sess != nil {
			sess.Close()
		}
		return withExit(ExitUndecided, readInterrupted(ctx, "check", sw))
	}
	if err != nil {
		return err
	}
	defer sess.Close()
	if baseline != nil {
		local := sess.Engine.Local()
		if other, why := snapshot.PlanOfAnotherFabric(sess.Name, local.Name, local.NodeGUID, baseline.Has); other {
			// sweep's refusal of a state dir's baseline of another
			// fabric, for the plan: judged against it every switch of
			// the plan is "missing".
			return withExit(ExitUndecided, fmt.Errorf("--expect-topology %s: %s: nothing judged; give this fabric's expected topology (or check from a host of that fabric)", o.expectTopology, why))
		}
	}
	snap := sw.Snapshot(expect, baseline, nil)
	snap.BaselineDesigned = baseline != nil // check's only baseline is --expect-topology
	res, err := checks.Run(snap, o.only...)
	if err != nil {
		return withExit(ExitUndecided, err)
	}
	doc := sw.Document("check", sess.Name, res, failOn)
	if opts.html != "" {
		if err := writeHTML(opts.html, doc, snap); err != nil {
			return err
		}
	}
	if err := a.printReport(doc, printOptions{json: opts.json, detail: opts.detail, verbose: opts.verbose}); err != nil {
		return err
	}
	return exitForStatus(doc.Status)
}

// printOptions say how to print a report.
type printOptions struct {
	json    bool
	detail  int  // evidence and next steps for the first detail findings
	verbose bool // the reasons of the checks that did not run
}

// printDocument prints a report as JSON, or as the summary screen and the
// ranked findings with details for the first detail of them.
func (a *app) printDocument(doc *report.Document, asJSON bool, detail int) error {
	return a.printReport(doc, printOptions{json: asJSON, detail: detail})
}

// printReport prints a report as JSON, or as the summary, the ranked
// findings, and with o.verbose why checks did not run, fitted to the
// terminal.
func (a *app) printReport(doc *report.Document, o printOptions) error {
	if o.json {
		w := bufio.NewWriterSize(a.stdout, 64<<10)
		if err := doc.WriteJSON(w); err != nil {
			return err
		}
		return w.Flush()
	}
	st := a.style()
	w := bufio.NewWriter(a.stdout)
	report.Summary(w, st, doc)
	if err := report.Findings(w, st, doc.Findings, o.detail); err != nil {
		return err
	}
	if o.verbose {
		report.NotRun(w, st, doc.Skipped)
	}
	printUnreached(w, st, doc)
	return w.Flush()
}

func exitForStatus(status string) error {
	switch status {
	case "unhealthy":
		return withExit(ExitFindings, nil)
	case "undecided":
		return withExit(ExitUndecided, nil)
	}
	return nil
}

func printUnreached(w io.Writer, st report.Style, d *report.Document) {
	if len(d.Undecided) > 0 {
		fmt.Fprintf(w, "\nCould not decide (%d):\n", len(d.Undecided))
		for i, u := range d.Undecided {
			if i == 20 {
				fmt.Fprintf(w, "  ... %d more (--json lists all)\n", len(d.Undecided)-20)
				break
			}
			io.WriteString(w, report.WrapString("  ", report.UndecidedLine(u), st.Width))
		}
	}
	if len(d.Unreached) == 0 {
		return
	}
	fmt.Fprintf(w, "\nCould not read (%d):\n", len(d.Unreached))
	lines := report.UnreachedLines(d.Unreached)
	for i, l := range lines {
		if i == 20 {
			fmt.Fprintf(w, "  ... %d more lines (--json lists every read)\n", len(lines)-20)
			break
		}
		io.WriteString(w, report.WrapString("  ", l, st.Width))
	}
}

func printCheckList(a *app) error {
	var rows [][]string
	for _, c := range checks.All() {
		rows = append(rows, []string{c.ID, strings.Join(c.Needs, ","), c.Summary})
	}
	cols := []report.Column{{Header: "CHECK"}, {Header: "READS"}, {Header: "WHAT IT FINDS", Min: 24, Wrap: true}}
	return report.WriteTable(a.stdout, a.style().Width, cols, rows)
}
