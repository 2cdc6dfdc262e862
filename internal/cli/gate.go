package cli

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/gate"
	"github.com/ibdoctor/ibdoctor/internal/hostlist"
	"github.com/ibdoctor/ibdoctor/internal/snapshot"
	"github.com/ibdoctor/ibdoctor/internal/source"
	"github.com/spf13/cobra"
)

func newGateCmd(a *app) *cobra.Command {
	var (
		o        checkOptions
		nodes    string
		nameMap  string
		stateDir string
		maxAge   time.Duration
		asJSON   bool
	)
	cmd := &cobra.Command{
		Use:   "gate",
		Short: "Pre-job check for a scheduler prolog: only the job's hosts and the links and switches on their routes",
		Long: `gate decides whether the fabric is fit for a job on the given hosts. It uses the
last sweep's snapshot (ibdoctor sweep) for the topology and forwarding tables when
it is fresher than --max-age. It follows the routes among the job's hosts as the
switches' forwarding tables hold them now (re-reading the table blocks that hold
the job's LIDs), re-reads live the ports those routes use (their PortInfo and
their PerfMgt counters, judged on their value and on their increase since the
sweep, as check judges them), and runs the checks on that scope. Without a fresh
snapshot it sweeps the whole fabric first, counters included.

Exit status: 0 healthy; 1 a finding at or above --fail-on in what it read (the
fabric is bad for this job, even if some of it could not be read); 2 could not
decide: no such finding, but a host was not found, a port or table block on the
routes could not be read, or no device. A gate never says healthy when it could
not look.`,
		Example: `  # Slurm prolog
  ibdoctor gate --fail-on error || exit 1          # reads SLURM_JOB_NODELIST
  ibdoctor gate --nodes "gpu[001-064]" --json`,
		Args: a.noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if maxAge < 0 {
				return withExit(ExitUndecided, fmt.Errorf("--max-age %v: give a duration of 0 or more (e.g. 30m; 0 always sweeps)", maxAge))
			}
			if nodes == "" {
				nodes = os.Getenv("SLURM_JOB_NODELIST")
			}
			if nodes == "" {
				return withExit(ExitUndecided, fmt.Errorf("no hosts: give --nodes \"gpu[001-064]\" or run inside a Slurm job (SLURM_JOB_NODELIST)"))
			}
			hosts, err := hostlist.Expand(nodes)
			if err != nil {
				return withExit(ExitUndecided, fmt.Errorf("--nodes: %w", err))
			}
			if len(hosts) == 0 {
				return withExit(ExitUndecided, fmt.Errorf("--nodes %q names no host: give e.g. gpu[001-064] or gpu001,gpu002", nodes))
			}
			failOn, err := checks.ParseSeverity(o.failOn)
			if err != nil {
				return withExit(ExitUndecided, fmt.Errorf("--fail-on: %w", err))
			}
			expect, err := o.expectations()
			if err != nil {
				return withExit(ExitUndecided, err)
			}
			var names fabric.NodeNameMap
			if nameMap != "" {
				fh, err := os.Open(nameMap)
				if err != nil {
					return withExit(ExitUndecided, fmt.Errorf("--node-name-map: %w", err))
				}
				names, err = fabric.ParseNodeNameMap(fh)
				fh.Close()
				if err != nil {
					return withExit(ExitUndecided, fmt.Errorf("--node-name-map %s: %w", nameMap, err))
				}
			}
			ctx, stop := signalContext(cmd.Context())
			defer stop()

			snap, err := snapshot.LoadForGate(stateDir)
			if err == nil {
				defer snap.Close()
				if why := snap.Fresh(time.Now(), maxAge); why != nil {
					fmt.Fprintf(a.stderr, "ibdoctor: snapshot in %s %v: sweeping the fabric\n", stateDir, why)
					snap.Close()
					snap = nil
				}
			} else {
				fmt.Fprintf(a.stderr, "ibdoctor: %v; sweeping the fabric\n", err)
			}
			// The accepted topology knows the job hosts' HCAs even when
			// a link was down at the sweep; a designed one replaces it.
			var base *snapshot.Index
			if o.expectTopology != "" {
				f, err := a.loadBaseline(ctx, o.expectTopology)
				if err != nil {
					return withExit(ExitUndecided, err)
				}
				if base, err = snapshot.IndexOf(f); err != nil {
					return withExit(ExitUndecided, fmt.Errorf("--expect-topology: %w", err))
				}
			} else if base, err = snapshot.OpenBaseline(stateDir); err != nil {
				return withExit(ExitUndecided, fmt.Errorf("--state-dir: %w", err))
			}
			if base != nil {
				defer base.Close()
			}
			sess, err := a.openSource(ctx, source.Need{SMP: true, Perf: !o.noCounters})
			if err != nil {
				return err
			}
			defer sess.Close()
			// The snapshot's directed routes start at the sweep's port and
			// cross links that may be down now: a gate addresses nodes by
			// LID, as its PerfMgt MADs are anyway, unless it just swept.
			byLID := true
			var swept *diagnose.Sweep
			if snap == nil {
				// The whole sweep, counters included: they are the
				// baseline the scope's re-read is judged against.
				sw, err := diagnose.Run(ctx, sess.Engine, diagnose.Options{
					Routes: true, Counters: !o.noCounters, SL: o.sl, PKeyIndex: o.pkeyIndex,
				})
				if sw == nil {
					return withExit(ExitUndecided, err)
				}
				if err != nil {
					return withExit(ExitUndecided, fmt.Errorf("sweeping the fabric: %w", err))
				}
				swept = sw
				if snap, err = snapshot.New(sw.Fabric, sw.Counters, sw.Taken, sess.Name, "", sw.Complete); err != nil {
					return withExit(ExitUndecided, err)
				}
				byLID = false // discovered from this very port
			}
			doc, err := gate.Run(ctx, snap, sess.Engine, gate.Options{
				Hosts: hosts, NameMap: names, Expect: expect, FailOn: failOn, Only: o.only, ByLID: byLID, Source: sess.Name, Swept: swept, Baseline: base,
				Counters: !o.noCounters, Interval: o.interval, SL: o.sl, PKeyIndex: o.pkeyIndex,
			})
			if err != nil {
				return withExit(ExitUndecided, err)
			}
			if doc.Scope != nil && len(doc.Scope.Unmatched) > 0 {
				fmt.Fprintf(a.stderr, "ibdoctor: hosts not found in the fabric: %s (check the node descriptions, or give --node-name-map)\n", strings.Join(doc.Scope.Unmatched, ", "))
			}
			if err := a.printDocument(doc, asJSON, 5); err != nil {
				return err
			}
			return exitForStatus(doc.Status)
		},
	}
	cmd.SetFlagErrorFunc(flagError)
	o.flags(cmd.Flags(), "error")
	cmd.Flags().StringVar(&nodes, "nodes", "", "the job's hosts in Slurm hostlist syntax, e.g. gpu[001-064] (default $SLURM_JOB_NODELIST)")
	cmd.Flags().StringVar(&nameMap, "node-name-map", "", "map node GUIDs to host names (ibnetdiscover's node-name-map format)")
	cmd.Flags().StringVar(&stateDir, "state-dir", defaultStateDir(), "where sweep keeps its snapshot ($IBDOCTOR_STATE_DIR)")
	cmd.Flags().DurationVar(&maxAge, "max-age", time.Hour, "oldest snapshot to trust; older ones are replaced by a live sweep")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}
