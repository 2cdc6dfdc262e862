package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/buildinfo"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/ibdoctor/ibdoctor/internal/snapshot"
	"github.com/spf13/cobra"
)

// defaultStateDir is where sweep keeps its snapshot and gate reads it.
func defaultStateDir() string {
	if d := os.Getenv("IBDOCTOR_STATE_DIR"); d != "" {
		return d
	}
	return "/var/lib/ibdoctor"
}

func newSweepCmd(a *app) *cobra.Command {
	var (
		o        checkOptions
		out      string
		prom     string
		stateDir string
		noSave   bool
	)
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "Sweep the fabric for cron: JSON report, Prometheus textfile, and a snapshot for the next sweep and for gate",
		Long: `sweep does what check does but for machines: it writes the report as JSON
(docs/schema-report.md) to --out or stdout, optionally a Prometheus textfile
(--prom, written atomically), and keeps a snapshot of the fabric, its forwarding
tables and counters in --state-dir, against which the next sweep compares the
topology and from which gate answers. It never prints colour or progress.
Exit status: 0 done, 3 done but parts could not be read, 2 failed, 1 findings
at or above --fail-on when that is given.`,
		Example: `  */15 * * * * root ibdoctor sweep --out /var/lib/ibdoctor/report.json --prom /var/lib/node_exporter/ibdoctor.prom`,
		Args:    a.noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			failOn := checks.Severity(-1)
			if o.failOn != "" {
				s, err := checks.ParseSeverity(o.failOn)
				if err != nil {
					return withExit(ExitUndecided, fmt.Errorf("--fail-on: %w", err))
				}
				failOn = s
			}
			expect, err := o.expectations()
			if err != nil {
				return withExit(ExitUndecided, err)
			}
			baseline, err := loadBaseline(o.expectTopology)
			if err != nil {
				return withExit(ExitUndecided, err)
			}
			// Without a designed topology, the last sweep is the baseline.
			var prev *snapshot.Snapshot
			if baseline == nil {
				if p, err := snapshot.Load(stateDir); err == nil {
					prev = p
					if baseline, err = p.FabricModel(); err != nil {
						fmt.Fprintf(a.stderr, "ibdoctor: ignoring the previous snapshot: %v\n", err)
						baseline = nil
					}
				} else if !errors.Is(err, snapshot.ErrNone) {
					fmt.Fprintf(a.stderr, "ibdoctor: ignoring the previous snapshot: %v\n", err)
				}
			}
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			a.stderr = quietTerminal(a.stderr)
			sw, sess, err := a.runSweep(ctx, diagnose.Options{
				Routes: true, Counters: !o.noCounters, Interval: o.interval, SL: o.sl, PKeyIndex: o.pkeyIndex,
			})
			if err != nil {
				return err
			}
			defer sess.Close()
			res, err := checks.Run(sw.Snapshot(expect, baseline, nil), o.only...)
			if err != nil {
				return withExit(ExitUndecided, err)
			}
			effective := failOn
			if effective < 0 {
				effective = checks.Critical + 1 // never unhealthy by findings
			}
			doc := sw.Document("sweep", sess.Name, res, effective)
			if failOn < 0 {
				doc.FailOn = "none"
				if doc.Status == "unhealthy" {
					doc.Status = "healthy"
				}
			}
			data, err := doc.JSON()
			if err != nil {
				return err
			}
			if out == "" || out == "-" {
				if _, err := a.stdout.Write(data); err != nil {
					return err
				}
			} else if err := report.WriteFileAtomic(out, data); err != nil {
				return withExit(ExitUndecided, fmt.Errorf("--out: %w", err))
			}
			if prom != "" {
				var b bytes.Buffer
				if err := report.Prometheus(&b, doc); err != nil {
					return err
				}
				if err := report.WriteFileAtomic(prom, b.Bytes()); err != nil {
					return withExit(ExitUndecided, fmt.Errorf("--prom: %w", err))
				}
			}
			if !noSave {
				if err := saveSnapshot(sw, sess.Name, stateDir, prev); err != nil {
					return withExit(ExitUndecided, err)
				}
			}
			switch {
			case failOn >= 0 && doc.Status == "unhealthy":
				return withExit(ExitFindings, nil)
			case !sw.Complete:
				return withExit(ExitPartial, nil)
			}
			return nil
		},
	}
	cmd.SetFlagErrorFunc(flagError)
	o.flags(cmd.Flags(), "")
	cmd.Flags().StringVar(&out, "out", "", "write the JSON report to this file (atomically) instead of stdout")
	cmd.Flags().StringVar(&prom, "prom", "", "also write a Prometheus textfile-collector file (atomically)")
	cmd.Flags().StringVar(&stateDir, "state-dir", defaultStateDir(), "where to keep the snapshot for the next sweep and for gate ($IBDOCTOR_STATE_DIR)")
	cmd.Flags().BoolVar(&noSave, "no-save", false, "do not write the snapshot")
	return cmd
}

// saveSnapshot keeps the sweep for gate and the next sweep. A partial
// sweep does not replace a complete one of the same fabric: gate would
// lose sight of what the partial sweep could not reach.
func saveSnapshot(sw *diagnose.Sweep, source, dir string, prev *snapshot.Snapshot) error {
	if !sw.Complete && prev != nil && prev.Complete {
		return nil
	}
	s, err := snapshot.New(sw.Fabric, sw.Counters, sw.Taken, source, buildinfo.Get().Version, sw.Complete)
	if err != nil {
		return err
	}
	if _, err := s.Save(dir); err != nil {
		return fmt.Errorf("--state-dir: %w", err)
	}
	return nil
}
