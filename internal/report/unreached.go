package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
)

// UnreachedLines says for people what could not be read, one line per
// entry, except that reads of one kind that failed the same way behind
// ports of nodes that were read are one line: a switch whose agent is
// dead is seen from every leaf port cabled to it, and 64 lines would hide
// that the ports are the same few per leaf ("NodeInfo at 64 paths behind
// ports 49-56 of leaf01, ..., leaf08: no response"). Whether it is one
// node behind them is not known, so not said. --json keeps every entry.
func UnreachedLines(us []Unreached) []string {
	type key struct{ what, reason string }
	type group struct {
		k     key
		nodes []string
		ports map[string][]int
		n     int
		one   string // the line of a group of one
	}
	groups := map[key]*group{}
	var lines []string
	var at []*group // at[i]: the group whose line is lines[i], or nil
	for _, u := range us {
		line := fmt.Sprintf("%s at %s: %s", u.What, u.Where, u.Reason)
		_, node, port, ok := fabric.ParseBehind(u.Where)
		if !ok {
			lines, at = append(lines, line), append(at, nil)
			continue
		}
		k := key{u.What, u.Reason}
		g := groups[k]
		if g == nil {
			g = &group{k: k, ports: map[string][]int{}, one: line}
			groups[k] = g
			lines, at = append(lines, ""), append(at, g)
		}
		if _, seen := g.ports[node]; !seen {
			g.nodes = append(g.nodes, node)
		}
		g.ports[node] = append(g.ports[node], port)
		g.n++
	}
	for i, g := range at {
		if g == nil {
			continue
		}
		if g.n == 1 {
			lines[i] = g.one
			continue
		}
		// Nodes with the same ports behind them share a clause.
		var sets []string
		bySet := map[string][]string{}
		for _, n := range g.nodes {
			s := portRanges(g.ports[n])
			if _, ok := bySet[s]; !ok {
				sets = append(sets, s)
			}
			bySet[s] = append(bySet[s], n)
		}
		var clauses []string
		for _, s := range sets {
			clauses = append(clauses, s+" of "+nameList(bySet[s], 8))
		}
		lines[i] = fmt.Sprintf("%s at %d paths behind %s: %s", g.k.what, g.n, strings.Join(clauses, "; "), g.k.reason)
	}
	return lines
}

// portRanges writes port numbers as "port 7" or "ports 49-56,60".
func portRanges(ps []int) string {
	ps = slices.Compact(slices.Sorted(slices.Values(ps)))
	var parts []string
	for i := 0; i < len(ps); {
		j := i
		for j+1 < len(ps) && ps[j+1] == ps[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, strconv.Itoa(ps[i])+"-"+strconv.Itoa(ps[j]))
		} else {
			parts = append(parts, strconv.Itoa(ps[i]))
		}
		i = j + 1
	}
	if len(ps) == 1 {
		return "port " + parts[0]
	}
	return "ports " + strings.Join(parts, ",")
}

// nameList joins names, the first max of them and how many more.
func nameList(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:max], ", "), len(names)-max)
}
