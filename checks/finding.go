// Package checks turns a snapshot of a fabric (topology, port states,
// counters and their deltas, forwarding tables, route loads) into findings:
// what is wrong, on which ports, with the evidence, what it costs, and what
// to do. Each check is a small documented unit in its own file; Run runs
// them and ranks the findings worst first. docs/checks.md describes every
// check.
package checks

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
)

// Severity of a finding.
type Severity int

// Severities, least to most severe.
const (
	Info Severity = iota
	Warning
	Error
	Critical
)

var severityNames = [...]string{"info", "warning", "error", "critical"}

func (s Severity) String() string {
	if s >= 0 && int(s) < len(severityNames) {
		return severityNames[s]
	}
	return fmt.Sprintf("Severity(%d)", int(s))
}

// SeverityNames are the severities' names, least first: what
// ParseSeverity accepts (and shell completion offers).
func SeverityNames() []string { return severityNames[:] }

// ParseSeverity parses "info", "warning", "error" or "critical".
func ParseSeverity(s string) (Severity, error) {
	for i, n := range severityNames {
		if strings.EqualFold(strings.TrimSpace(s), n) {
			return Severity(i), nil
		}
	}
	return 0, fmt.Errorf("unknown severity %q (want info, warning, error or critical)", s)
}

// MarshalText encodes the severity as its name.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText decodes a severity name.
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// Entity is a node or port a finding is about.
type Entity struct {
	NodeGUID uint64 `json:"-"`
	GUID     string `json:"node_guid"`
	Node     string `json:"node"`
	Port     int    `json:"port,omitempty"`
	LID      uint16 `json:"lid,omitempty"`
	// Role says what the entity is to the finding: "end", "peer",
	// "switch", "source", "destination".
	Role string `json:"role,omitempty"`
}

func (e Entity) String() string {
	if e.Port > 0 {
		return fmt.Sprintf("%s/%d", e.Node, e.Port)
	}
	return e.Node
}

// Evidence is one number behind a finding.
type Evidence struct {
	Name      string  `json:"name"`
	Value     float64 `json:"value"`
	Unit      string  `json:"unit,omitempty"`
	Threshold float64 `json:"threshold,omitempty"`
	// Text, when set, is how the evidence reads to a person
	// ("active 1X, both ends enabled 4X").
	Text string `json:"text,omitempty"`
}

func (e Evidence) String() string {
	if e.Text != "" {
		return e.Text
	}
	s := fmt.Sprintf("%s %s", e.Name, fmtNum(e.Value))
	if e.Unit != "" {
		s += " " + e.Unit
	}
	if e.Threshold != 0 {
		s += fmt.Sprintf(" (threshold %s)", fmtNum(e.Threshold))
	}
	return s
}

// Impact estimates what a finding costs.
type Impact struct {
	// PathShare is the share of host-to-host paths (of the job's hosts
	// when gating, of all hosts otherwise) whose routes cross the
	// affected link or port, 0..1.
	PathShare float64 `json:"path_share"`
	// PathShareLowerBound marks PathShare as a lower bound: some host
	// routes could not be followed (they leave by a port that was not
	// read or cross a switch whose table was not read) and may cross the
	// link too.
	PathShareLowerBound bool `json:"path_share_lower_bound,omitempty"`
	// LostGbps is the bandwidth the affected link lost against what it
	// should run at.
	LostGbps float64 `json:"lost_gbps,omitempty"`
	// Slowdown is the predicted slowdown factor of a ring all-reduce
	// across the affected hosts (1 = none, 2 = twice as long).
	Slowdown float64 `json:"allreduce_slowdown,omitempty"`
	// Score orders findings of one severity: the expected share of the
	// fabric's collective bandwidth lost, 0..1.
	Score float64 `json:"score"`
	// Summary says the impact in words.
	Summary string `json:"summary"`
}

// Finding is one thing wrong with the fabric.
type Finding struct {
	Check    string   `json:"check"`
	Severity Severity `json:"severity"`
	Title    string   `json:"title"`
	Entities []Entity `json:"entities"`
	// Group, when set, names the things the finding is about together,
	// as its title does: a group of hosts ("a05-p1-dgx-01-c*"; the
	// entities are its hosts) or the places one routing fault is at
	// ("leaf01 and leaf02"; the entities name each).
	Group    string     `json:"group,omitempty"`
	Evidence []Evidence `json:"evidence"`
	Impact   Impact     `json:"impact"`
	Action   string     `json:"action"`
	// Basis says what the judgement rests on: "absolute" counter values,
	// a "delta" over the sampled interval, "topology", "routes".
	Basis string `json:"basis,omitempty"`
	// WhatIf marks a routing finding judged on forwarding tables ibdoctor
	// computed, not read (Snapshot.RoutesComputed).
	WhatIf bool `json:"what_if,omitempty"`
	// heldBack names, for a routing.traffic-imbalance, the switches its
	// lighter uplinks lead to (foldSymptoms' input; cleared by Run).
	heldBack []*fabric.Node
	// deadEnd is, for a routing.unreachable, the egress port its routes
	// leave by whose link is down (linkDownCauses' input), and for a
	// relay-error counters.errors the down port the switch's table sends
	// LIDs out of (relayCauses'); cleared by Run.
	deadEnd *fabric.Port
	// spanless marks a per-port counters.congestion verdict on an
	// increase without its span; the check folds those into one finding
	// (spanlessCongestion).
	spanless *spanlessWait
	// sweepFold is, for a gate's topology.oversubscribed (the sweep's
	// count), the finding the sweep's report folded it into
	// (FabricVerdicts.Folds): rendered instead when the gate's own
	// findings do not fold it (foldSymptoms; cleared by Run).
	sweepFold *Finding
	// masterLID is, for an sm.stale-master-lid, the master SM LID it
	// names: FabricWide keeps it in FabricVerdicts.MasterLIDs, so a gate
	// need not read it back out of the title.
	masterLID uint16
	// history is, for a counters.errors finding on a value since an
	// unknown clear, what foldPortCounters needs to make one finding of
	// a port's: its counter, the port and its other counters.
	history *sinceClearNote
	// ecmpGroups are, for a routing.ecmp-imbalance folded by switch
	// (foldECMP), its groups' own findings: the sweep's verdicts keep
	// them (FabricWide).
	ecmpGroups []Finding
}

// Rank orders findings worst first: severity, then impact score, then
// check ID and the first entity, so the order is stable.
func Rank(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(
			cmp.Compare(b.Severity, a.Severity),
			cmp.Compare(b.Impact.Score, a.Impact.Score),
			cmp.Compare(a.Check, b.Check),
			cmp.Compare(firstValue(b), firstValue(a)), // more errors first

			compareFirstEntity(a, b),
		)
	})
}

// compareFirstEntity orders by the first entity's node name, then GUID,
// then port number (as a number: port 9 before port 21).
func compareFirstEntity(a, b Finding) int {
	switch {
	case len(a.Entities) == 0 || len(b.Entities) == 0:
		return cmp.Compare(len(a.Entities), len(b.Entities))
	}
	x, y := a.Entities[0], b.Entities[0]
	return cmp.Or(cmp.Compare(x.Node, y.Node), cmp.Compare(x.NodeGUID, y.NodeGUID), cmp.Compare(x.GUID, y.GUID), cmp.Compare(x.Port, y.Port))
}

func firstValue(f Finding) float64 {
	if len(f.Evidence) == 0 {
		return 0
	}
	return f.Evidence[0].Value
}

// Count tallies findings by severity.
func Count(fs []Finding) map[Severity]int {
	m := make(map[Severity]int)
	for _, f := range fs {
		m[f.Severity]++
	}
	return m
}

// Worst returns the highest severity among fs and whether there is any.
func Worst(fs []Finding) (Severity, bool) {
	if len(fs) == 0 {
		return 0, false
	}
	w := fs[0].Severity
	for _, f := range fs[1:] {
		w = max(w, f.Severity)
	}
	return w, true
}

func fmtNum(v float64) string {
	switch {
	case v == float64(int64(v)) && v < 1e15 && v > -1e15:
		return fmt.Sprintf("%d", int64(v))
	case v != 0 && (v < 1e-3 && v > -1e-3):
		return fmt.Sprintf("%.2e", v)
	default:
		return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", v), "0"), ".")
	}
}

// fmtGbps prints a link rate to two decimals at most, the way vendors
// quote FDR (54.55 Gb/s for 4X), where fmtNum's three would print 54.545.
func fmtGbps(v float64) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
}

// MarshalJSON keeps the GUID string in step with NodeGUID.
func (e Entity) MarshalJSON() ([]byte, error) {
	type plain Entity
	p := plain(e)
	if e.NodeGUID != 0 {
		p.GUID = fmt.Sprintf("0x%016x", e.NodeGUID)
	}
	return json.Marshal(p)
}
