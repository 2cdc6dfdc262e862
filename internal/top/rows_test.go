package top

import (
	"slices"
	"strings"
)

// The rows' order and filter a frame's View gives, of rows at hand: what
// TestSampler compares View with (review R4: they were exported API that
// nothing but the tests called).

// Sort orders rows as View orders the records (sortBy.compare).
func Sort(rows []*Row, k SortKey) {
	by := sortBy[*Row]{
		fig: func(r *Row) float64 {
			switch k {
			case ByXmitWait:
				return r.XmitWait
			case ByUtilization:
				return r.Util()
			}
			return r.ErrorsPerSecond
		},
		sev:  func(r *Row) int { return severity(r.HasVerdict, r.Verdict) },
		name: func(r *Row) string { return r.Node },
		num:  func(r *Row) int { return r.Num },
	}
	slices.SortStableFunc(rows, func(a, b *Row) int { return by.compare(k, a, b) })
}

// Filter keeps the rows whose node or far end contains substr (case
// insensitive); "" keeps all.
func Filter(rows []*Row, substr string) []*Row {
	if substr == "" {
		return rows
	}
	s := strings.ToLower(substr)
	var out []*Row
	for _, r := range rows {
		if matches(r.Node, r.Peer, s) {
			out = append(out, r)
		}
	}
	return out
}
