package checks

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// sinceClearNote is what a finding on a value since an unknown clear
// keeps for foldPortCounters.
type sinceClearNote struct {
	port     string         // the port's name, with its far end
	counter  CounterValue   // the counter judged
	counters []CounterValue // the port's error counters since the clear
	suffix   string         // "; not growing while sampled", "; +N while sampled" or ""
}

// phrase names the counter and its value as a title lists it.
func (n *sinceClearNote) phrase() string {
	c := n.counter
	if c.Saturated || c.Value == uint64(1)<<baseFieldBits[c.Name]-1 {
		return fmt.Sprintf("%s saturated (at least %d)", c.Name, c.Value)
	}
	return fmt.Sprintf("%s %d", c.Name, c.Value)
}

// tellingOrder ranks error counters by how directly they name a link's
// fault, for the order a port's folded finding lists them in: a link that
// goes down, then the physical layer's own counts, then what follows from
// them (receive errors, overruns, discards), then the rest.
var tellingOrder = []string{
	"LinkDownedCounter", "SymbolErrorCounter", "LinkErrorRecoveryCounter", "LocalLinkIntegrityErrors",
	"PortRcvErrors", "ExcessiveBufferOverrunErrors", "PortXmitDiscards", "PortRcvRemotePhysicalErrors",
	"PortXmitConstraintErrors", "PortRcvConstraintErrors", "PortRcvSwitchRelayErrors", "VL15Dropped", "QP1Dropped",
}

func telling(name string) int {
	if i := slices.Index(tellingOrder, name); i >= 0 {
		return i
	}
	return len(tellingOrder)
}

// foldPortCounters makes one finding of the counters.errors findings on
// one port's values since an unknown clear (trial H6: one bad link at
// is-north-7-compute-27 mlx5_11 was three warnings, its 55 link-downs
// only an "also"). The finding kept leads with the most telling counter
// (the highest severity, then tellingOrder), lists every counter judged
// in its title with the port's link-downs, and keeps each counter's
// evidence in that order, the port's other counters said once.
func foldPortCounters(fs []Finding) []Finding {
	groups := map[string][]int{}
	var order []string
	for i, f := range fs {
		if f.Check != "counters.errors" || f.history == nil || f.deadEnd != nil || len(f.Entities) == 0 {
			continue
		}
		k := f.Entities[0].String() + "\x00" + f.Entities[0].GUID
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	var drop []bool
	for _, k := range order {
		idx := groups[k]
		if len(idx) < 2 {
			continue
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			x, y := fs[a], fs[b]
			return cmp.Or(cmp.Compare(y.Severity, x.Severity), cmp.Compare(telling(x.history.counter.Name), telling(y.history.counter.Name)))
		})
		first := slices.Min(idx)
		best := fs[idx[0]]
		m := best
		m.Evidence = nil
		judged := map[string]bool{}
		var phrases []string
		suffix := best.history.suffix
		for _, i := range idx {
			o := fs[i]
			judged[o.history.counter.Name] = true
			phrases = append(phrases, o.history.phrase())
			if o.history.suffix != suffix {
				suffix = "" // each counter's evidence says its increase
			}
			m.Severity = max(m.Severity, o.Severity)
			m.Impact.Score = max(m.Impact.Score, o.Impact.Score)
		}
		// Each counter's own evidence, in order; its "also" line is
		// said once, below, without the counters judged here.
		var increases []Evidence
		for _, i := range idx {
			for _, e := range fs[i].Evidence {
				switch e.Name {
				case "others":
				case "increase", "increase unknown":
					increases = append(increases, e)
				default:
					m.Evidence = append(m.Evidence, e)
				}
			}
		}
		var others []string
		downs := uint64(0)
		for _, c := range best.history.counters {
			if c.Value > 0 && !judged[c.Name] {
				others = append(others, fmt.Sprintf("%s %d", c.Name, c.Value))
				if c.Name == "LinkDownedCounter" {
					downs = c.Value
				}
			}
		}
		slices.SortStableFunc(others, func(a, b string) int {
			return cmp.Compare(telling(strings.Fields(a)[0]), telling(strings.Fields(b)[0]))
		})
		if len(others) > 0 {
			m.Evidence = append(m.Evidence, Evidence{Name: "others", Text: "also on this port since the last clear: " + strings.Join(others, ", ")})
		}
		if flat := slices.IndexFunc(increases, func(e Evidence) bool { return e.Name != "increase" || e.Value != 0 }); flat < 0 && len(increases) > 1 {
			// None grew: one line says so of them all.
			var names []string
			for _, i := range idx {
				names = append(names, fs[i].history.counter.Name)
			}
			increases = []Evidence{{Name: "increase", Text: fmt.Sprintf("%s +0 while the counters were sampled (each within its per-interval threshold): not climbing then; %s", strings.Join(names, ", "), spanNotInFile)}}
		}
		m.Evidence = append(m.Evidence, increases...)
		list := strings.Join(phrases[:len(phrases)-1], ", ") + " and " + phrases[len(phrases)-1]
		if downs > 0 {
			list = strings.Join(phrases, ", ") + fmt.Sprintf(" and %d link-downs", downs)
		}
		m.Title = fmt.Sprintf("%s on %s since the last clear%s", list, best.history.port, suffix)
		if drop == nil {
			drop = make([]bool, len(fs))
		}
		for _, i := range idx {
			drop[i] = i != first
		}
		fs[first] = m
	}
	return withoutDropped(fs, drop)
}
