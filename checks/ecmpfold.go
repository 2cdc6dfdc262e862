package checks

import (
	"fmt"
	"slices"

	"github.com/ibdoctor/ibdoctor/internal/words"
)

// foldECMP makes one routing.ecmp-imbalance finding per switch of its
// groups' (trial D1: a spine uneven toward several leaves said the same
// fix once per leaf). Each group is judged as before (judgeGroup); the
// worst leads, and each keeps its evidence, named by its busiest port.
// The groups' own findings stay with the folded one (ecmpGroups) for the
// sweep's verdicts, which a gate takes group by group (jobECMP).
func foldECMP(fs []Finding) []Finding {
	const id = "routing.ecmp-imbalance"
	at := map[uint64][]int{}
	var order []uint64
	for i, f := range fs {
		if f.Check != id || len(f.Entities) == 0 || f.Entities[0].Role != "switch" {
			continue
		}
		g := entityGUID(f.Entities[0])
		if at[g] == nil {
			order = append(order, g)
		}
		at[g] = append(at[g], i)
	}
	var drop []bool
	for _, g := range order {
		idx := at[g]
		if len(idx) < 2 {
			continue
		}
		grps := make([]Finding, len(idx))
		for k, i := range idx {
			grps[k] = fs[i]
		}
		Rank(grps)
		fs[idx[0]] = ecmpFolded(grps)
		if drop == nil {
			drop = make([]bool, len(fs))
		}
		for _, i := range idx[1:] {
			drop[i] = true
		}
	}
	return withoutDropped(fs, drop)
}

// withoutDropped returns fs without the findings a fold merged into
// another (drop[i]), in order, in fs's own array; fs when drop is nil.
func withoutDropped(fs []Finding, drop []bool) []Finding {
	if drop == nil {
		return fs
	}
	out := fs[:0]
	for i, f := range fs {
		if !drop[i] {
			out = append(out, f)
		}
	}
	return out
}

// ecmpFolded is the one finding of a switch's uneven groups, worst
// first.
func ecmpFolded(grps []Finding) Finding {
	f := grps[0]
	f.ecmpGroups = grps
	f.Entities = []Entity{grps[0].Entities[0]}
	f.Evidence = nil
	// Evidence every group gives alike (the adaptive-routing note, a
	// gate's word on a changed table) is said once; the rest is named
	// by its group's busiest port.
	type key struct{ name, text string }
	seen := map[key]int{}
	for _, g := range grps {
		for _, e := range slices.CompactFunc(slices.Clone(g.Evidence), func(a, b Evidence) bool { return a.Name == b.Name && a.Text == b.Text }) {
			seen[key{e.Name, e.Text}]++
		}
	}
	var common []Evidence
	var parts []string
	for k, g := range grps {
		busiest, peer := "", ""
		for _, e := range g.Entities[1:] {
			if !slices.Contains(f.Entities, e) {
				f.Entities = append(f.Entities, e)
			}
			switch e.Role {
			case "busiest":
				busiest = fmt.Sprintf("port %d", e.Port)
			case "peer":
				peer = e.Node
			}
		}
		name := busiest
		if peer != "" {
			name += " (to " + peer + ")"
		}
		if k < 3 {
			if k == 0 {
				parts = append(parts, fmt.Sprintf("%s carries %.1fx the mean", name, g.Impact.Slowdown))
			} else {
				parts = append(parts, fmt.Sprintf("%s %.1fx", name, g.Impact.Slowdown))
			}
		}
		for _, e := range g.Evidence {
			if seen[key{e.Name, e.Text}] == len(grps) {
				if !slices.Contains(common, e) {
					common = append(common, e)
				}
				continue
			}
			if e.Text != "" && busiest != "" {
				e.Text = fmt.Sprintf("group of %s: %s", name, e.Text)
			}
			f.Evidence = append(f.Evidence, e)
		}
		f.Severity = max(f.Severity, g.Severity)
		f.Impact.Score = max(f.Impact.Score, g.Impact.Score)
		if g.Impact.PathShare > f.Impact.PathShare {
			f.Impact.PathShare, f.Impact.PathShareLowerBound = g.Impact.PathShare, g.Impact.PathShareLowerBound
		}
		if g.Impact.Slowdown > f.Impact.Slowdown {
			f.Impact.Slowdown, f.Impact.Summary = g.Impact.Slowdown, g.Impact.Summary
		}
	}
	f.Evidence = append(f.Evidence, common...)
	f.Title = fmt.Sprintf("%s spreads destinations unevenly in %d groups of equal-cost ports: busiest %s", f.Entities[0].Node, len(grps), words.FirstOf(parts, len(grps)))
	return f
}
