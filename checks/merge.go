package checks

import (
	"fmt"
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
			f.Impact.PathShare = max(f.Impact.PathShare, m.Impact.PathShare)
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
