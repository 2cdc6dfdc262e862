package checks

import (
	"fmt"
	"slices"
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
