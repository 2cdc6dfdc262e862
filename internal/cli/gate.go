package cli

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/discover"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/gate"
	"github.com/ibdoctor/ibdoctor/internal/hostlist"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/ibdoctor/ibdoctor/internal/snapshot"
	"github.com/ibdoctor/ibdoctor/internal/source"
	"github.com/ibdoctor/ibdoctor/internal/words"
	"github.com/spf13/cobra"
)

// gateOptions are gate's flags, and what validate makes of them.
type gateOptions struct {
	check    checkOptions
	nodes    string
	nameMap  string
	stateDir string
	maxAge   time.Duration
	json     bool
	detail   int
	verbose  bool

	hosts  []string // nodes (or $SLURM_JOB_NODELIST), expanded
	failOn checks.Severity
	expect checks.Expectations
}

// newGateCmd builds gate; runF, when not nil, runs instead of runGate once
// the flags are validated (tests parse them without a fabric).
func newGateCmd(a *app, runF func(*gateOptions) error) *cobra.Command {
	var o gateOptions
	cmd := &cobra.Command{
		Use:   "gate",
		Short: "Pre-job check for a scheduler prolog: only the job's hosts and the links and switches on their routes",
		Long: `gate decides whether the fabric is fit for a job on the given hosts. It uses the
last sweep's snapshot (ibdoctor sweep) for the topology and forwarding tables
when it is fresher than --max-age. It follows the routes among the job's hosts
as the switches' forwarding tables hold them now (re-reading the table blocks
that hold the job's LIDs), re-reads live the ports those routes use (their
PortInfo and their PerfMgt counters, judged on their value and on their increase
since the sweep, as check judges them), and runs the checks on that scope.
Without a fresh snapshot it sweeps the whole fabric first, counters included.

Exit status: 0 healthy; 1 a finding at or above --fail-on in what it read (the
fabric is bad for this job, even if some of it could not be read); 2 could not
decide: no such finding, but a host was not found, a port or table block on the
routes could not be read, the job's LIDs or the cables on its routes changed
since the sweep (its routes are then not judged), or no device. A gate never
says healthy when it could not look.`,
		Example: `  # Slurm prolog
  ibdoctor gate --fail-on error || exit 1          # reads SLURM_JOB_NODELIST
  ibdoctor gate --nodes "gpu[001-064]" --json`,
		Args: a.noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return withExit(ExitUndecided, err)
			}
			if runF != nil {
				return runF(&o)
			}
			return a.runGate(cmd.Context(), &o)
		},
	}
	cmd.SetFlagErrorFunc(flagError)
	o.check.flags(cmd, "error")
	cmd.Flags().StringVar(&o.nodes, "nodes", "", "the job's hosts in Slurm hostlist syntax, e.g. gpu[001-064] (default $SLURM_JOB_NODELIST)")
	cmd.Flags().StringVar(&o.nameMap, "node-name-map", "", "map node GUIDs to host names (ibnetdiscover's node-name-map format)")
	cmd.Flags().StringVar(&o.stateDir, "state-dir", defaultStateDir(), "where sweep keeps its snapshot ($IBDOCTOR_STATE_DIR)")
	cmd.Flags().DurationVar(&o.maxAge, "max-age", snapshotMaxAge, "oldest snapshot to trust; older ones are replaced by a live sweep")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the report as JSON")
	detailFlag(cmd.Flags(), &o.detail, 5)
	cmd.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "also say why each check that did not run was skipped")
	return cmd
}

// validate checks the flags and expands the host list before anything
// is read.
func (o *gateOptions) validate() error {
	if err := checkStateDir(o.stateDir); err != nil {
		return err
	}
	if o.maxAge < 0 {
		return fmt.Errorf("--max-age %v: give a duration of 0 or more (e.g. 30m; 0 always sweeps)", o.maxAge)
	}
	// An error names where the list came from: a prolog without --nodes
	// has no flag to fix.
	source := "--nodes"
	if o.nodes == "" {
		o.nodes = os.Getenv("SLURM_JOB_NODELIST")
		source = "SLURM_JOB_NODELIST (read because --nodes is absent)"
	}
	if o.nodes == "" {
		return fmt.Errorf("no hosts: give --nodes \"gpu[001-064]\" or run inside a Slurm job (SLURM_JOB_NODELIST)")
	}
	hosts, err := hostlist.Expand(o.nodes)
	if err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	if len(hosts) == 0 {
		return fmt.Errorf("%s %q names no host: give e.g. gpu[001-064] or gpu001,gpu002", source, o.nodes)
	}
	failOn, err := checks.ParseSeverity(o.check.failOn)
	if err != nil {
		return fmt.Errorf("--fail-on: %w", err)
	}
	expect, err := o.check.expectations()
	if err != nil {
		return err
	}
	o.hosts, o.failOn, o.expect = hosts, failOn, expect
	return nil
}

// runGate judges the job's hosts: from a fresh snapshot, or after a sweep.
func (a *app) runGate(parent context.Context, o *gateOptions) error {
	var names fabric.NodeNameMap
	if o.nameMap != "" {
		fh, err := os.Open(o.nameMap)
		if err != nil {
			return withExit(ExitUndecided, fmt.Errorf("--node-name-map: %w", err))
		}
		names, err = fabric.ParseNodeNameMap(fh)
		fh.Close()
		if err != nil {
			return withExit(ExitUndecided, fmt.Errorf("--node-name-map %s: %w", o.nameMap, err))
		}
	}
	ctx, stop := signalContext(parent)
	defer stop()

	snap, err := snapshot.LoadForGate(o.stateDir)
	if err == nil {
		defer snap.Close()
		if why := snap.Fresh(time.Now(), o.maxAge); why != nil {
			a.notef("snapshot in %s %v: sweeping the fabric", o.stateDir, why)
			snap.Close()
			snap = nil
		}
	} else {
		a.notef("%v; sweeping the fabric", err)
	}
	// The accepted topology knows the job hosts' HCAs even when
	// a link was down at the sweep; a designed one replaces it.
	var base *snapshot.Index
	if o.check.expectTopology != "" {
		f, err := a.loadBaseline(ctx, o.check.expectTopology)
		if err != nil {
			return withExit(ExitUndecided, err)
		}
		if base, err = snapshot.IndexOf(f); err != nil {
			return withExit(ExitUndecided, fmt.Errorf("--expect-topology: %w", err))
		}
	} else if base, err = snapshot.OpenBaseline(o.stateDir); err != nil {
		return withExit(ExitUndecided, fmt.Errorf("--state-dir: %w", err))
	}
	defer func() {
		if base != nil {
			base.Close()
		}
	}()
	// A file that recorded counters once has no second sample for
	// --interval: as check (unless counters are not read at all).
	interval := o.check.interval
	if o.check.noCounters {
		interval = 0
	}
	sess, err := a.open(ctx, openOptions{need: source.Need{SMP: true, Perf: !o.check.noCounters}, interval: interval})
	if err != nil {
		if ctx.Err() != nil {
			return withExit(ExitUndecided, readInterrupted(ctx, "gate", nil))
		}
		return err
	}
	defer sess.Close()
	// A --sim file without counters has none to read (the simulator's
	// zeros are not counters read).
	counters := !o.check.noCounters && sess.NoCounters == ""
	local := sess.Engine.Local()
	if snap != nil {
		// A snapshot of another fabric (another subnet, another file):
		// its hosts are not this fabric's, so "hosts not found" would
		// send the operator to the node descriptions (trial T7).
		other, why, err := snap.OfAnotherFabric(sess.Name, local.Name, local.NodeGUID)
		if err != nil {
			a.notef("snapshot in %s: %v: sweeping the fabric", o.stateDir, err)
		} else if other {
			a.notef("snapshot in %s is of %s, not %s (%s): sweeping the fabric", o.stateDir, snap.Source, sess.Name, why)
		}
		if err != nil || other {
			snap.Close()
			snap = nil
		}
	}
	if base != nil && o.check.expectTopology == "" {
		// The state dir's baseline, by the same rule: another fabric's
		// would give the job's hosts that fabric's HCAs and cables.
		other, why, err := base.OfAnotherFabric(sess.Name, local.Name, local.NodeGUID)
		if err == nil && other {
			a.notef("baseline in %s is of %s, not %s (%s): not used (the snapshot's own links are the reference)", o.stateDir, base.Source, sess.Name, why)
			base.Close()
			base = nil
		}
	}
	if snap != nil && local.LID == 0 {
		// No subnet manager has given this very port a LID: nothing
		// can be addressed by LID from here, and the snapshot's
		// directed routes may start at another port. Sweep by directed
		// route from this one, so the checks see the fabric as it is
		// (sm.no-master, as check gives it) instead of a list of reads
		// that could not be sent.
		a.notef("this host's port %s has no LID (no subnet manager has brought it up): sweeping the fabric by directed route instead of using the snapshot", local.Name)
		snap.Close()
		snap = nil
	}
	var doc *report.Document
	for {
		// The snapshot's directed routes start at the sweep's port and
		// cross links that may be down now: a gate addresses nodes by
		// LID, as its PerfMgt MADs are anyway, unless it just swept.
		byLID := true
		var swept *diagnose.Sweep
		if snap == nil {
			// The whole sweep, counters included: they are the
			// baseline the scope's re-read is judged against.
			sw, err := diagnose.Run(ctx, sess.Engine, diagnose.Options{
				Routes: true, Counters: counters, SL: o.check.sl, PKeyIndex: o.check.pkeyIndex,
				NoFirmware: gate.NoFirmware, NoAR: gate.NoAR, Discover: discover.Options{Unread: sess.Unread()},
			})
			if ctx.Err() != nil {
				return withExit(ExitUndecided, readInterrupted(ctx, "gate", sw))
			}
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
			// What only the whole fabric can judge, judged on the whole
			// fabric, as a sweep does for the gates that follow it.
			v, err := checks.RunFabricWide(sw.Snapshot(o.expect, nil, nil))
			if err != nil {
				return withExit(ExitUndecided, err)
			}
			snap.SetFabricVerdicts(v)
			byLID = false // discovered from this very port
		} else if snap.FabricVerdicts() == nil {
			a.notef("the snapshot in %s has no fabric-wide routing verdicts of its sweep (swept by an older ibdoctor, or with --checks leaving out routing.ecmp-imbalance): routing.ecmp-imbalance is judged on the job's destinations alone; run 'ibdoctor sweep'", o.stateDir)
		}
		doc, err = gate.Run(ctx, snap, sess.Engine, gate.Options{
			Hosts: o.hosts, NameMap: names, Expect: o.expect, FailOn: o.failOn, Only: o.check.only, ByLID: byLID, Source: sess.Name, Swept: swept, Baseline: base, BaselineDesigned: o.check.expectTopology != "",
			Counters: counters, Interval: o.check.interval, SL: o.check.sl, PKeyIndex: o.check.pkeyIndex,
			RoutesComputed:  sess.RoutesComputed && !sess.RoutesPlanted,
			CountersNotRead: sess.NoCounters, Increases: sess.Increases, CountersBasis: sess.IncreasesBasis, RatesNotRead: sess.RatesNotRead,
			SupportedNotRead: sess.SupportedNotRead, NotRecorded: sess.NotRecorded, SourceWarnings: sess.File.Warnings(), TablesNotInFile: sess.TablesNotInFile,
		})
		if ctx.Err() != nil {
			// The job's part was read in part: as check, no verdict on it.
			return withExit(ExitUndecided, readInterruptedAt(ctx, "gate", "before the job's ports and forwarding tables were all read", nil))
		}
		// A gate.idx block that failed its checksum where the gate read
		// it (trial F2): nothing judged from the file is used; the gate
		// does as for a missing index, once.
		if d := snap.Damaged(); d != nil && swept == nil {
			a.notef("%v; sweeping the fabric", d)
			snap.Close()
			snap = nil
			continue
		}
		if d := base.Damaged(); d != nil {
			return withExit(ExitUndecided, fmt.Errorf("--state-dir: %w", d))
		}
		break
	}
	if err != nil {
		return withExit(ExitUndecided, err)
	}
	if doc.Scope != nil && len(doc.Scope.Unmatched) > 0 {
		label := doc.Scope.UnmatchedLabel(doc.GeneratedAt)
		switch {
		case doc.Scope.NotWalked:
			a.notef("%s %s", label, doc.Scope.UnmatchedList())
		case doc.Scope.Snapshot != "" && !doc.Scope.OwnSweep:
			a.notef("%s %s: %s, or give --node-name-map", label, doc.Scope.UnmatchedList(), report.HostNotInSnapshotHint)
		default:
			a.notef("%s %s (check the node descriptions, or give --node-name-map)", label, doc.Scope.UnmatchedList())
		}
	}
	if err := a.printReport(doc, printOptions{json: o.json, detail: o.detail, verbose: o.verbose}); err != nil {
		return err
	}
	if doc.Status == "unhealthy" {
		// As for exit 2: a prolog drains with a one-line reason
		// (slurmd logs its stderr; scontrol's reason=), trial F4.
		a.notef("unhealthy (exit 1): %s", unhealthyReason(doc, o.failOn))
	}
	if doc.Status == "undecided" {
		// A prolog's log is read by someone deciding what to do with
		// exit 2: one line saying why, and where that is answered
		// (trial N5: the same three causes were listed whatever the
		// cause). Hosts not found alone are said on the line above.
		if why := undecidedReasons(doc); len(why) > 0 {
			a.notef("undecided (exit 2): %s: docs/runbook.md, \"Before a job: gating\", says what to do", strings.Join(why, "; "))
		}
	}
	return exitForStatus(doc.Status)
}

// unhealthyReason is a failed gate's reason in a line: how many findings
// at or above failOn, the worst one's title and check, and the job's
// hosts they name (those to drain; none when the fault is a switch or a
// cable on the routes), e.g. "1 error finding: gpu012 has 7 HCAs ...
// (topology.missing-hca); hosts of the job named: gpu012".
func unhealthyReason(doc *report.Document, failOn checks.Severity) string {
	// The job's hosts, as their HCAs found name them: an HCA of the job
	// that is gone (link.down) names a host of the job all the same.
	job := map[string]bool{}
	if doc.Scope != nil {
		for _, d := range doc.Scope.Hosts {
			job[fabric.HostKey(strings.Fields(d + " ")[0])] = true
		}
	}
	bySev := map[checks.Severity]int{}
	var worst *checks.Finding
	var hosts []string
	for i, f := range doc.Findings {
		if f.Severity < failOn {
			continue
		}
		bySev[f.Severity]++
		if worst == nil || f.Severity > worst.Severity {
			worst = &doc.Findings[i]
		}
		for _, e := range f.Entities {
			h := fabric.HostName(strings.Fields(e.Node + " ")[0])
			if job[fabric.HostKey(h)] && !slices.Contains(hosts, h) {
				hosts = append(hosts, h)
			}
		}
	}
	if worst == nil {
		return "no finding at or above " + failOn.String() + " (see the report)"
	}
	var counts []string
	total := 0
	for sev := checks.Critical; sev >= failOn; sev-- {
		if n := bySev[sev]; n > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", n, sev))
			total += n
		}
	}
	line := fmt.Sprintf("%s %s: %s (%s)", words.And(counts), words.Noun(total, "finding"), worst.Title, worst.Check)
	if total > 1 {
		line += fmt.Sprintf(" and %d more", total-1)
	}
	if len(hosts) == 0 {
		return line + "; no host of the job named (a switch or cable on its routes)"
	}
	return line + "; hosts of the job named: " + words.First(hosts, 8)
}

// undecidedReasons says why an undecided gate could not decide, in the
// terms of the runbook's list ("Before a job: gating"): the nodes that
// did not answer, those that refused a read (with the attribute and MAD
// status: they are up), the counters not read, a route out of a port the
// sweep saw uncabled, an HCA of the accepted topology missing, and else
// the checks that could not decide. How a node failed a read is worded
// by report.Unreached.Why alone. Hosts not found are not among them: the
// gate says so on its own line.
func undecidedReasons(doc *report.Document) []string {
	// Nodes go in the middle of a reason: pre + nodes + post.
	type reason struct {
		pre, post string
		nodes     []string
	}
	var (
		reasons []*reason
		byText  = map[[2]string]*reason{}
	)
	add := func(pre, post, node string) {
		k := [2]string{pre, post}
		r := byText[k]
		if r == nil {
			r = &reason{pre: pre, post: post}
			byText[k] = r
			reasons = append(reasons, r)
		}
		if node != "" && !slices.Contains(r.nodes, node) {
			r.nodes = append(r.nodes, node)
		}
	}
	// The ports behind which an HCA did not answer the snapshot's sweep:
	// said once, by the HCA (trial B8).
	silent := map[string]bool{}
	for _, u := range doc.Unreached {
		if port, ok := gate.SilentBehind(u.Reason); ok && u.What == "HCA" {
			silent[port] = true
		}
	}
	// A node found at a LID of its own since the sweep did not answer at
	// the snapshot's: that is why, said once (review R4).
	lidMoved := map[string]bool{}
	for _, u := range doc.Unreached {
		if u.What == gate.WhatLID {
			lidMoved[unreachedNode(u.Where)] = true
		}
	}
	for _, u := range doc.Unreached {
		node := unreachedNode(u.Where)
		if u.What != gate.WhatLID && u.Failure == report.NoAnswer && (lidMoved[node] || slices.ContainsFunc(slices.Collect(maps.Keys(lidMoved)), func(k string) bool { return strings.HasPrefix(node, k+" ports ") })) {
			continue
		}
		if strings.HasPrefix(u.Reason, gate.NoTableOnRoute) {
			// The simulator's file lacks a table on the way: not a
			// node that did not answer (trial B14).
			add("", " not read by LID: a switch on the route has no forwarding table in the --lfts/--sim file (give a dump_fts of the whole fabric)", unreachedNode(u.Where))
			continue
		}
		switch u.What {
		case "host":
			continue
		case "link":
			port := strings.Replace(u.Where, " port ", "/", 1)
			if strings.Contains(u.Reason, gate.FarEndSilent) {
				if !silent[port] {
					add("the far end of ", " did not answer the snapshot's sweep: a new sweep does not help", port)
				}
			} else if strings.Contains(u.Reason, gate.BackSinceSweep) {
				add("a port the sweep saw without a link is up now (", "): "+gate.BackSinceSweep+", the sweep's verdicts on its switch are not the fabric's; run 'ibdoctor sweep'", strings.Replace(u.Where, " port ", "/", 1))
			} else {
				add("a route leaves by a port the sweep saw without a cable", "", "")
			}
		case "HCA":
			if port, ok := gate.SilentBehind(u.Reason); ok {
				add("", " did not answer the snapshot's sweep: a new sweep does not help", u.Where+" (behind "+port+")")
			} else {
				add("an HCA of the accepted topology is not in the snapshot", "", "")
			}
		case gate.WhatNodeGUID:
			// Said as the gate found it: only a GUID the snapshot does
			// not have is a board changed.
			switch {
			case strings.Contains(u.Reason, gate.LIDsChanged):
				add("the LIDs changed since the sweep (the snapshot's LID of ", " answers as another node): routes and LIDs not judged; run 'ibdoctor sweep'", unreachedNode(u.Where))
			case strings.Contains(u.Reason, gate.CloneUntold):
				add("", " answers another known node's NodeGUID, and a clone could not be told from a change since the sweep", unreachedNode(u.Where))
			case strings.Contains(u.Reason, gate.PlaceChanged):
				add("the cabling changed since the sweep (", "'s place in the snapshot holds another node); run 'ibdoctor sweep'", unreachedNode(u.Where))
			default:
				add("", " answers another NodeGUID than the snapshot's (a board changed since the sweep)", unreachedNode(u.Where))
			}
		case gate.WhatLID:
			add("the LIDs changed since the sweep (", " answers with another LID): routes and LIDs not judged; run 'ibdoctor sweep'", unreachedNode(u.Where))
		case gate.WhatCable:
			// Named by port: what moved is a cable, not a node.
			port := strings.Replace(u.Where, " port ", "/", 1)
			if strings.Contains(u.Reason, gate.CablingChanged) {
				add("the cabling changed since the sweep on the job's routes (", "): routes not judged; run 'ibdoctor sweep'", port)
			} else {
				add("the cable out of ", " could not be checked against the snapshot's: routes not judged", port)
			}
		case "ClassPortInfo", "PortCounters", "PortCountersExtended", "counters":
			add("counters not read on ", "", unreachedNode(u.Where))
		case fabric.WhatNoLID:
			add("no LID to address ", " by", unreachedNode(u.Where))
		default:
			if u.OwnLeaf() {
				// Nothing past it was read: that is the reason, whatever
				// else is listed.
				path, _, _, _ := fabric.ParseBehind(u.Where)
				why := u.Why()
				if why == "" {
					why = "was not read"
				}
				add(fmt.Sprintf("the switch at path %s (this host's leaf) %s: the fabric could not be walked", path, why), "", "")
			} else if why := u.Why(); why != "" {
				add("", " "+why, unreachedNode(u.Where))
			} else {
				attr, _, _ := strings.Cut(u.What, " ")
				add(attr+" not read on ", "", unreachedNode(u.Where))
			}
		}
	}
	var why []string
	for _, r := range reasons {
		if len(r.nodes) == 0 {
			why = append(why, r.pre+r.post)
		} else {
			why = append(why, r.pre+andMore(r.nodes)+r.post)
		}
	}
	if len(why) == 0 {
		var names []string
		for _, u := range doc.Undecided {
			if !slices.Contains(names, u.Check) {
				names = append(names, u.Check)
			}
		}
		if len(names) > 0 {
			why = append(why, "could not decide "+andMore(names))
		}
	}
	return why
}

// unreachedNode is the node a report.Unreached's Where names: "switch
// spine03 (0x…)", "spine03 port 2 (LID 3)", "gpu003 mlx5_0 port 1".
func unreachedNode(where string) string {
	if _, _, _, ok := fabric.ParseBehind(where); ok {
		return where // "path 0,1,49 (behind leaf01 port 49)": a node not known by name
	}
	where = strings.TrimPrefix(where, "switch ")
	if i := strings.Index(where, " (0x"); i > 0 {
		where = where[:i]
	}
	if i := strings.LastIndex(where, " port "); i > 0 {
		where = where[:i]
	}
	return where
}

// andMore lists names as "a", "a and b", "a, b and c", "a, b and 3 more".
func andMore(names []string) string {
	if len(names) > 3 {
		return words.First(names, 2)
	}
	return words.And(names)
}
