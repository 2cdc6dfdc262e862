package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/words"
)

// UnreachedLines says for people what could not be read, one line per
// entry, except that reads of one kind that failed the same way behind
// ports of nodes that were read are one line: a switch whose agent is
// dead is seen from every leaf port cabled to it, and 64 lines would hide
// that the ports are the same few per leaf ("NodeInfo at 64 paths behind
// ports 49-56 of leaf01, ..., leaf08: no response"). Whether it is one
// node behind them is not known, so not said. Likewise one attribute of
// many ports of one node that failed the same way ("PortInfo at spine01
// ports 1-8,33-40: …", a gate's reads of a switch that stopped
// answering). --json keeps every entry.
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
	type portKey struct{ attr, node, reason string }
	type portGroup struct {
		k     portKey
		ports []int
	}
	byPort := map[portKey]*portGroup{}
	var atPort []*portGroup // atPort[i]: the group of ports whose line is lines[i], or nil
	for _, u := range us {
		line := fmt.Sprintf("%s at %s: %s", u.What, u.Where, u.Reason)
		if u.What == "host" {
			// A name looked up, not a read at a place (trial B9).
			line = fmt.Sprintf("host %s: %s", u.Where, u.Reason)
		}
		if attr, node, port, ok := attrOfPort(u); ok {
			// One attribute of many ports of one node, failed the same
			// way (a switch that stopped answering): one line.
			k := portKey{attr, node, u.Reason}
			g := byPort[k]
			if g == nil {
				g = &portGroup{k: k}
				byPort[k] = g
				lines, at, atPort = append(lines, ""), append(at, nil), append(atPort, g)
			}
			g.ports = append(g.ports, port)
			continue
		}
		_, node, port, ok := fabric.ParseBehind(u.Where)
		if !ok {
			lines, at, atPort = append(lines, line), append(at, nil), append(atPort, nil)
			continue
		}
		k := key{u.What, u.Reason}
		g := groups[k]
		if g == nil {
			g = &group{k: k, ports: map[string][]int{}, one: line}
			groups[k] = g
			lines, at, atPort = append(lines, ""), append(at, g), append(atPort, nil)
		}
		if _, seen := g.ports[node]; !seen {
			g.nodes = append(g.nodes, node)
		}
		g.ports[node] = append(g.ports[node], port)
		g.n++
	}
	// The port is said once, where it was: "PortInfo at spine02 port 2"
	// (the entry's "PortInfo 2" is the attribute modifier, the same port).
	for i, g := range atPort {
		if g != nil {
			lines[i] = fmt.Sprintf("%s at %s %s: %s", g.k.attr, g.k.node, PortRanges(g.ports), g.k.reason)
		}
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
			s := PortRanges(g.ports[n])
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

// attrOfPort splits an entry such as {What: "PortInfo 5", Where: "spine01
// port 5"} into the attribute, the node and the port; ok is false for any
// other entry.
func attrOfPort(u Unreached) (attr, node string, port int, ok bool) {
	i := strings.LastIndexByte(u.What, ' ')
	j := strings.LastIndex(u.Where, " port ")
	if i <= 0 || j <= 0 {
		return "", "", 0, false
	}
	n, err := strconv.Atoi(u.What[i+1:])
	if err != nil || u.Where[j+len(" port "):] != u.What[i+1:] {
		return "", "", 0, false
	}
	return u.What[:i], u.Where[:j], n, true
}

// PortRanges writes port numbers as "port 7" or "ports 49-56,60".
func PortRanges(ps []int) string {
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
func nameList(names []string, max int) string { return words.First(names, max) }
