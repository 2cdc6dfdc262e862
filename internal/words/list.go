package words

import (
	"strconv"
	"strings"
)

// First lists at most n of names, joined by ", ", and says how many it
// leaves out: "a, b, c and 5 more"; all of them when there are no more
// than n ("a, b"). The one wording of a truncated list, for every
// package that prints one (findings, gate lines, the unread list).
func First(names []string, n int) string {
	return FirstOf(names[:min(n, len(names))], len(names))
}

// FirstSep is First joined by sep, for items that hold commas
// themselves ("gpu001 mlx5_0 port 1 (LID 13, GUID …); …").
func FirstSep(names []string, n int, sep string) string {
	return firstOf(names[:min(n, len(names))], len(names), sep)
}

// FirstOf is First for a caller that kept only the names it shows: shown
// of total, then " and K more" when total is larger.
func FirstOf(shown []string, total int) string { return firstOf(shown, total, ", ") }

func firstOf(shown []string, total int, sep string) string {
	s := strings.Join(shown, sep)
	if total > len(shown) {
		s += " and " + strconv.Itoa(total-len(shown)) + " more"
	}
	return s
}

// And joins names as a sentence does: "a", "a and b", "a, b and c".
func And(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
