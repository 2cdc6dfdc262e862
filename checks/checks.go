package checks

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Check is one documented unit that reads a Snapshot and returns findings.
type Check struct {
	// ID is stable across releases: scripts and suppressions name it.
	ID string
	// Summary is one line for --list and docs/checks.md.
	Summary string
	// Needs names the inputs the check reads: "topology", "counters",
	// "routes", "baseline".
	Needs []string
	// reads names the parts of a Run's memo the check reads (directly
	// or through another memoized part): Run lets a part go once no
	// check left to run reads it.
	reads memoPart
	run   func(*Snapshot) []Finding
}

var registry []Check

func register(c Check) { registry = append(registry, c) }

// All returns every check in ID order.
func All() []Check {
	cs := slices.Clone(registry)
	slices.SortFunc(cs, func(a, b Check) int { return strings.Compare(a.ID, b.ID) })
	return cs
}

// Skipped is a check that did not run, and why.
type Skipped struct {
	Check  string `json:"check"`
	Reason string `json:"reason"`
	// NoCounters says it was skipped because no counters were read
	// (Reason words it for people): what a rendering that must tell "no
	// counter findings" from "counters not looked at" asks, never the
	// reason's text (review R9).
	NoCounters bool `json:"-"`
}

// Result is the outcome of Run.
type Result struct {
	Findings []Finding `json:"findings"`
	Ran      []string  `json:"checks_run"`
	Skipped  []Skipped `json:"checks_skipped,omitempty"`
	// Undecided lists the subjects a check that ran could not judge
	// because what it needs there was not read.
	Undecided []Undecided `json:"undecided,omitempty"`
	// unfolded are the topology.oversubscribed findings before
	// foldSymptoms (FabricWide's).
	unfolded []Finding
	// portTotals are routing.ecmp-imbalance's on a whole fabric
	// (FabricWide's).
	portTotals *PortTotals
	// CountersCleared says which ports' counters were cleared since the
	// sweep they are compared with ("" when none): a counter back at 0
	// makes no finding, and the report says it once (its summary).
	CountersCleared string `json:"counters_cleared,omitempty"`
	// lost is routing.lost-lid's judgement when a check of the Run
	// made it (runMemo.lost): FabricWide's portTotalsOf, for a sweep
	// that skipped routing.ecmp-imbalance, counts it without walking
	// the lost LIDs' routes again. Small: the lost LIDs' ports.
	lost *lostLIDs
}

// Run runs the selected checks (all when ids is empty) over s and returns
// the findings ranked worst first. A check whose inputs are missing is
// skipped and listed in Result.Skipped; an unknown ID is an error.
func Run(s *Snapshot, ids ...string) (*Result, error) {
	selected, err := selectChecks(ids)
	if err != nil {
		return nil, err
	}
	res := &Result{Findings: []Finding{}}
	s.memo = &runMemo{}
	s.undecided, s.portTotals, s.cleared = nil, nil, clearedPorts{}
	defer func() { s.memo, s.portTotals = nil, nil }()
	for i, c := range selected {
		if why, noCounters := missing(s, c.ID, c.Needs); why != "" {
			res.Skipped = append(res.Skipped, Skipped{Check: c.ID, Reason: why, NoCounters: noCounters})
			continue
		}
		res.Ran = append(res.Ran, c.ID)
		res.Findings = append(res.Findings, c.run(s)...)
		if s.memo.lost != nil {
			res.lost = s.memo.lost
		}
		s.memo.release(selected[i+1:])
	}
	res.Findings = s.notOnMovedCables(res.Findings)
	// Folding may find a symptom whose cause could not be decided: it
	// is undecided too, so the list is taken after.
	for _, f := range res.Findings {
		if f.Check == "topology.oversubscribed" {
			res.unfolded = append(res.unfolded, f)
		}
	}
	res.portTotals = s.portTotals
	res.CountersCleared = s.cleared.text()
	res.Findings = s.foldSymptoms(res.Findings)
	res.Undecided = s.takeUndecided()
	for i := range res.Findings {
		res.Findings[i].heldBack, res.Findings[i].deadEnd, res.Findings[i].sweepFold = nil, nil, nil
	}
	res.Findings = mergeIdentical(res.Findings)
	s.noteAdaptive(res.Findings)
	res.Findings = foldECMP(res.Findings)
	if s.RoutesComputed {
		whatIf(res.Findings)
	}
	Rank(res.Findings)
	return res, nil
}

// whatIf relabels routing findings judged on routes ibdoctor computed
// (a saved topology without forwarding tables): they say what min-hop
// routing would do on this cabling (and any --faults scenario), not what
// the subnet manager did, so they give no advice about the SM.
func whatIf(fs []Finding) {
	for i := range fs {
		f := &fs[i]
		if !strings.HasPrefix(f.Check, "routing.") || f.WhatIf {
			continue
		}
		f.WhatIf = true
		f.Title = "What-if on routes ibdoctor computed (not the fabric's): " + f.Title
		f.Action = "These forwarding tables are ibdoctor's own min-hop routes, computed because the file has none; they say nothing about the subnet manager. Give the fabric's tables with --lfts FILE (dump_fts or ibroute output) to judge its routing."
		whatIf(f.ecmpGroups)
	}
}

// Selectors are what --checks accepts (Validate): the groups, then every
// check's ID, in All's order.
func Selectors() []string {
	var groups, ids []string
	for _, c := range All() {
		g := strings.SplitN(c.ID, ".", 2)[0]
		if !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
		ids = append(ids, c.ID)
	}
	slices.Sort(groups)
	return append(groups, ids...)
}

// Validate reports an error naming the first ID that is neither a check
// nor a group ("link", "counters", "routing", "topology"), so a command can
// refuse a bad --checks before it sweeps the fabric.
func Validate(ids ...string) error {
	_, err := selectChecks(ids)
	return err
}

func selectChecks(ids []string) ([]Check, error) {
	selected := All()
	if len(ids) > 0 {
		want := make(map[string]bool)
		for _, id := range ids {
			want[id] = true
		}
		used := make(map[string]bool)
		selected = slices.DeleteFunc(selected, func(c Check) bool {
			group := strings.SplitN(c.ID, ".", 2)[0]
			switch {
			case want[c.ID]:
				used[c.ID] = true
			case want[group]:
				used[group] = true
			default:
				return true
			}
			return false
		})
		for _, id := range ids {
			if !used[id] {
				return nil, fmt.Errorf("unknown check %q (see 'ibdoctor check --list')", id)
			}
		}
	}
	return selected, nil
}

// CountersNotRead begins the reason a check that needs counters was
// skipped for when none were read, for people; renderings ask
// Skipped.NoCounters.
const CountersNotRead = "counters were not read"

// missing says why a check that needs needs cannot run on s ("" when it
// can), and whether it is that no counters were read.
func missing(s *Snapshot, id string, needs []string) (why string, noCounters bool) {
	for _, n := range needs {
		if why := s.NotRecorded[n]; why != "" {
			return why, false
		}
		if why := s.Stale[n]; why != "" {
			return why, false
		}
		switch n {
		case "topology":
			if s.Fabric == nil {
				return "no topology was read", false
			}
		case "counters":
			if s.Counters == nil && s.CountersNotRead != "" {
				return CountersNotRead + ": " + s.CountersNotRead, true
			}
			if s.Counters == nil {
				return CountersNotRead, true
			}
		case "interval":
			if s.Counters == nil && s.CountersNotRead != "" {
				return CountersNotRead + ": " + s.CountersNotRead, true
			}
			if s.Counters != nil && s.CountersBasis != "" {
				return "needs the span the counters were sampled over: " + s.CountersBasis, false
			}
			if s.Counters == nil {
				return CountersNotRead, true
			}
			if s.Counters.Interval() == 0 {
				return "needs two counter samples (add --interval)", false
			}
		case "lfts":
			if s.Fabric == nil || !hasLFTs(s.Fabric) {
				return "forwarding tables were not read", false
			}
		case "whole-fabric":
			if s.Scope != nil && !s.FabricRouting.Judged(id) {
				if why := s.FabricRouting.notJudged(id); why != "" {
					// The sweep's own hint is to itself: a gate takes the
					// verdict from it, whatever its own flags (trial G9).
					why = strings.Replace(why, "(add --interval)", "(run the sweep with it: 'ibdoctor sweep --interval 2s'; a gate takes this verdict from the last sweep)", 1)
					return fmt.Sprintf("the last sweep (%s) did not judge it: %s", s.FabricRouting.Taken.Format(time.RFC3339), why), false
				}
				return "a gate holds the job's part of the snapshot, not every peer this check compares with, and the snapshot has no sweep's verdict of it (its verdicts are of an older ibdoctor, or the sweep did not run it): run 'ibdoctor sweep'", false
			}
		case "rates":
			if s.RatesNotRead != "" {
				return "link rates were not read: " + s.RatesNotRead, false
			}
		case "routes-read":
			if s.RoutesComputed {
				return "the forwarding tables were computed by ibdoctor (min-hop), not read: they say nothing of the real routing engine's choices (add --lfts FILE with the fabric's tables)", false
			}
		case "routes":
			if s.Loads == nil {
				return "forwarding tables were not read", false
			}
		case "partitions":
			if s.Partitions == nil {
				return "P_Key tables were not read (a live sweep reads them)", false
			}
		case "ar":
			if s.AR == nil && s.ARNotRead != "" {
				return "adaptive-routing state was not read: " + s.ARNotRead, false
			}
			if s.AR == nil {
				return "adaptive-routing state was not read (a live sweep reads it)", false
			}
		case "firmware":
			if s.Firmware == nil && s.FirmwareNotRead != "" {
				return "firmware versions were not read: " + s.FirmwareNotRead, false
			}
			if s.Firmware == nil {
				return "firmware versions were not read (a live sweep reads them)", false
			}
		case "sm":
			// A gate reads no SMInfo: its checks of it are the
			// sweep's verdicts ("whole-fabric").
			if s.SM == nil && s.Scope == nil {
				return "SMInfo was not read (a live sweep reads it)", false
			}
		case "sm-interval":
			if s.Scope != nil {
				continue
			}
			if why := s.SM.notReadTwice(); why != "" {
				return why, false
			}
		case "baseline":
			if s.Baseline == nil {
				return "no expected topology given (add --expect-topology FILE, or sweep once to keep a baseline)", false
			}
		}
	}
	return "", false
}
