package checks

import (
	"fmt"
	"slices"
	"strings"
)

// mergeIdentical folds findings that say the same thing (same check,
// severity and title) into the first of them: one line for one problem,
// with the other places it was seen added to its entities and evidence.
// Routes that fail the same way at several switches, or a link seen from
// both ends, would otherwise be listed once per place.
func mergeIdentical(fs []Finding) []Finding {
	type key struct {
		check, title string
		sev          Severity
	}
	first := map[key]int{}
	extra := map[int][]Finding{}
	out := fs[:0:0]
	for _, f := range fs {
		k := key{f.Check, f.Title, f.Severity}
		if i, ok := first[k]; ok {
			extra[i] = append(extra[i], f)
			continue
		}
		first[k] = len(out)
		out = append(out, f)
	}
	for i, more := range extra {
		f := &out[i]
		seen := map[Entity]bool{}
		for _, e := range f.Entities {
			seen[e] = true
		}
		var where []string
		for _, m := range more {
			for _, e := range m.Entities {
				if !seen[e] {
					seen[e] = true
					f.Entities = append(f.Entities, e)
					where = append(where, e.String())
				}
			}
			f.Impact.Score = max(f.Impact.Score, m.Impact.Score)
			if m.Impact.PathShare > f.Impact.PathShare {
				f.Impact.PathShare, f.Impact.PathShareLowerBound = m.Impact.PathShare, m.Impact.PathShareLowerBound
			}
		}
		text := fmt.Sprintf("seen %d times", len(more)+1)
		if len(where) > 0 {
			if len(where) > 10 {
				where = append(where[:10:10], fmt.Sprintf("... %d more", len(where)-10))
			}
			text += "; also at " + strings.Join(where, ", ")
		}
		f.Evidence = append(f.Evidence, Evidence{Name: "merged", Value: float64(len(more) + 1), Text: text})
	}
	return out
}

// linkDownCauses ties a routing.unreachable whose routes leave by a port
// whose link is down to the link.down finding on that port: the cable is
// the cause, the lost routes its consequence (trial T14: two findings side
// by side that said nothing of each other). Both stay: the lost routes
// rank as critical, the cable says what to fix.
func linkDownCauses(fs []Finding) {
	for i := range fs {
		u := &fs[i]
		if u.Check != "routing.unreachable" || u.deadEnd == nil {
			continue
		}
		p := u.deadEnd
		for j := range fs {
			d := &fs[j]
			if d.Check != "link.down" {
				continue
			}
			k := slices.IndexFunc(d.Entities, func(e Entity) bool {
				return e.NodeGUID == p.Node.GUID && e.Port == int(p.Num)
			})
			if k < 0 {
				continue
			}
			u.Evidence = append(u.Evidence, Evidence{Name: "cause", Text: fmt.Sprintf("the routes leave by %s, whose link is down: see link.down %q", d.Entities[k], d.Title)})
			d.Evidence = append(d.Evidence, Evidence{Name: "consequence", Text: fmt.Sprintf("the forwarding tables still send routes out of %s: see routing.unreachable %q", d.Entities[k], u.Title)})
			// The link's share of paths is what its lost routes carried
			// (the route loads count delivered paths only, so a dead
			// link's own share reads 0): trial A2's link left in Init
			// showed no impact beside 18+6 hosts' lost routes. Each
			// unreachable finding is its own host pairs: they add up.
			d.Impact.PathShare = min(1, d.Impact.PathShare+u.Impact.PathShare)
			break
		}
	}
}

// portDownCauses are the checks whose finding says why a port carries
// no link: the finding a relay-error finding's next step points at.
var portDownCauses = map[string]bool{"link.down": true, "link.polling": true, "topology.missing-hca": true, "topology.miswired": true, "topology.changed": true}

// relayCauses names, in a relay-error finding's next step, the finding
// on the down port its switch's table sends LIDs out of: a link.down when
// an ISL on the route is down against the expected topology, a
// topology.missing-hca for a host's missing cable. With none (a switch
// port down and no expected topology to say a cable belongs there) the
// step names none rather than one that is not in the report.
func relayCauses(fs []Finding) {
	const bring = "Bring that link back"
	for i := range fs {
		r := &fs[i]
		if r.Check != "counters.errors" || r.deadEnd == nil {
			continue
		}
		p := r.deadEnd
		for j := range fs {
			d := &fs[j]
			if !portDownCauses[d.Check] || !slices.ContainsFunc(d.Entities, func(e Entity) bool {
				return e.NodeGUID == p.Node.GUID && e.Port == int(p.Num)
			}) {
				continue
			}
			r.Action = strings.Replace(r.Action, bring, fmt.Sprintf("%s (see %s %q)", bring, d.Check, d.Title), 1)
			break
		}
	}
}
