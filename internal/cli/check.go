package cli

import (
	"fmt"
	"strings"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/spf13/cobra"
)

func newCheckCmd(a *app) *cobra.Command {
	var (
		o      checkOptions
		asJSON bool
		list   bool
		detail int
	)
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Discover the fabric, read counters and routes, and rank what is wrong",
		Long: `check sweeps the whole fabric (discovery, every switch's forwarding table, every
port's counters), runs every check, and prints the findings worst first with their
evidence, impact and next step. Exit status: 0 healthy, 1 findings at or above
--fail-on, 2 could not decide (see docs/exit-codes.md).`,
		Example: `  ibdoctor check --sim                       # the built-in sample fabric
  ibdoctor check --interval 30s --expect-rate 4xNDR
  ibdoctor check --json --fail-on warning`,
		Args: a.noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if list {
				return printCheckList(a)
			}
			failOn, err := checks.ParseSeverity(o.failOn)
			if err != nil {
				return withExit(ExitUndecided, fmt.Errorf("--fail-on: %w", err))
			}
			expect, err := o.expectations()
			if err != nil {
				return withExit(ExitUndecided, err)
			}
			baseline, err := loadBaseline(o.expectTopology)
			if err != nil {
				return withExit(ExitUndecided, err)
			}
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			sw, sess, err := a.runSweep(ctx, diagnose.Options{
				Routes: true, Counters: !o.noCounters, Interval: o.interval,
				SL: o.sl, PKeyIndex: o.pkeyIndex,
			})
			if err != nil {
				return err
			}
			defer sess.Close()
			res, err := checks.Run(sw.Snapshot(expect, baseline, nil), o.only...)
			if err != nil {
				return withExit(ExitUndecided, err)
			}
			doc := sw.Document("check", sess.Name, res, failOn)
			if err := a.printDocument(doc, asJSON, detail); err != nil {
				return err
			}
			return exitForStatus(doc.Status)
		},
	}
	cmd.SetFlagErrorFunc(flagError)
	o.flags(cmd.Flags(), "error")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON (docs/schema-report.md)")
	cmd.Flags().BoolVar(&list, "list", false, "list the checks and exit")
	cmd.Flags().IntVar(&detail, "detail", 10, "show evidence and next steps for the first N findings")
	return cmd
}

// printDocument prints a report as JSON, or as the summary screen and the
// ranked findings with details for the first detail of them.
func (a *app) printDocument(doc *report.Document, asJSON bool, detail int) error {
	if asJSON {
		data, err := doc.JSON()
		if err != nil {
			return err
		}
		_, err = a.stdout.Write(data)
		return err
	}
	st := report.StyleFor(a.stdout, a.opts.noColor)
	report.Summary(a.stdout, st, doc)
	if err := report.Findings(a.stdout, st, doc.Findings, detail); err != nil {
		return err
	}
	printUnreached(a, doc)
	return nil
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

func printUnreached(a *app, d *report.Document) {
	if len(d.Unreached) == 0 {
		return
	}
	fmt.Fprintf(a.stdout, "\nCould not read (%d):\n", len(d.Unreached))
	for i, u := range d.Unreached {
		if i == 20 {
			fmt.Fprintf(a.stdout, "  ... %d more (--json lists all)\n", len(d.Unreached)-20)
			break
		}
		fmt.Fprintf(a.stdout, "  %s at %s: %s\n", u.What, u.Where, u.Reason)
	}
}

func printCheckList(a *app) error {
	var rows [][]string
	for _, c := range checks.All() {
		rows = append(rows, []string{c.ID, strings.Join(c.Needs, ","), c.Summary})
	}
	return report.Table(a.stdout, []string{"CHECK", "READS", "WHAT IT FINDS"}, rows)
}
