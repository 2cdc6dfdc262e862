package checks

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// BaselineDiff says how two Baselines differ, field by field (every
// field but the lazily made description set); "" when they do not. For
// the tests of checks_test that build one from a state file.
func BaselineDiff(x, y *Baseline) string {
	if (x == nil) != (y == nil) {
		return fmt.Sprintf("nil %v, %v", x == nil, y == nil)
	}
	if x == nil {
		return ""
	}
	switch {
	case x.Accepted != y.Accepted:
		return fmt.Sprintf("Accepted %v, %v", x.Accepted, y.Accepted)
	case x.in != y.in:
		return fmt.Sprintf("in %d, %d", x.in, y.in)
	case !slices.Equal(x.guid, y.guid):
		return "guid"
	case !slices.Equal(x.typ, y.typ):
		return "typ"
	case !slices.Equal(x.lid, y.lid):
		return "lid"
	case x.desc != y.desc:
		return "desc"
	case !slices.Equal(x.descEnd, y.descEnd):
		return "descEnd"
	case !slices.Equal(x.byGUID, y.byGUID):
		return "byGUID"
	case !slices.Equal(x.first, y.first):
		return "first"
	case !slices.Equal(x.at, y.at):
		return "at"
	case !slices.Equal(x.peer, y.peer):
		return "peer"
	case !slices.Equal(x.peerNum, y.peerNum):
		return "peerNum"
	case (x.links == nil) != (y.links == nil):
		return fmt.Sprintf("links kept %v, %v", x.links != nil, y.links != nil)
	case !slices.Equal(x.links, y.links):
		return "links"
	}
	return ""
}

// MemoParts names memo parts for the tests ("links verdicts routes").
func MemoParts(p memoPart) string {
	var out []string
	for _, x := range []struct {
		part memoPart
		name string
	}{{memoLinks, "links"}, {memoVerdicts, "verdicts"}, {memoRoutes, "routes"}, {memoLost, "lost"}} {
		if p&x.part != 0 {
			out = append(out, x.name)
		}
	}
	return strings.Join(out, " ")
}

// held is what m holds now.
func (m *runMemo) held() memoPart {
	var p memoPart
	if m.links != nil {
		p |= memoLinks
	}
	if m.verdicts != nil || m.judged {
		p |= memoVerdicts
	}
	if m.routeGraph != nil || m.routeFails != nil {
		p |= memoRoutes
	}
	if m.lost != nil {
		p |= memoLost
	}
	return p
}

// ProbeMemo registers, until the test ends, a check id that records what
// the Run's memo holds when it runs (MemoParts), in *held. Not for
// parallel tests: it changes the registry.
func ProbeMemo(t testing.TB, id string) *string {
	held := new(string)
	*held = "not run"
	n := len(registry)
	registry = append(registry, Check{ID: id, Summary: "test probe", run: func(s *Snapshot) []Finding {
		*held = MemoParts(s.memo.held())
		return nil
	}})
	t.Cleanup(func() { registry = registry[:n] })
	return held
}

// MemoReads runs check id alone on s with a fresh memo and says what it
// asked of the memo and what it declares it reads (Check.reads).
func MemoReads(s *Snapshot, id string) (used, declared string) {
	for _, c := range registry {
		if c.ID != id {
			continue
		}
		if why, _ := missing(s, c.ID, c.Needs); why != "" {
			return "", MemoParts(c.reads)
		}
		s.memo = &runMemo{}
		s.undecided = nil
		c.run(s)
		used = MemoParts(s.memo.used)
		s.memo = nil
		return used, MemoParts(c.reads)
	}
	return "", "no such check"
}

// MissingLeafName is missingLeafName, for the tests of checks_test.
func MissingLeafName(own, rail []string) (name, railRun, ownRun string, ok bool) {
	return missingLeafName(own, rail)
}
