package words

import (
	"testing"
	"time"
)

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n          int
		noun, want string
	}{
		{1, "destination", "1 destination"}, {0, "destination", "0 destinations"}, {2, "switch", "2 switches"},
		{1, "switch", "1 switch"}, {3, "leaf", "3 leaves"}, {1, "attempt", "1 attempt"}, {5, "HCA", "5 HCAs"},
		{2, "LID", "2 LIDs"}, {2, "box", "2 boxes"},
	} {
		if got := Count(c.n, c.noun); got != c.want {
			t.Errorf("Count(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
	for _, c := range []struct {
		n          int
		verb, want string
	}{{1, "run", "runs"}, {2, "run", "run"}, {1, "are", "is"}, {1, "have", "has"}, {3, "have", "have"}, {1, "lead", "leads"}, {1, "were", "was"}} {
		if got := Verb(c.n, c.verb); got != c.want {
			t.Errorf("Verb(%d, %q) = %q, want %q", c.n, c.verb, got, c.want)
		}
	}
}

func TestNatural(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"leaf2", "leaf10", -1}, {"leaf10", "leaf2", 1}, {"leaf02", "leaf2", 0}, {"a", "b", -1}, {"gpu1 mlx5_0", "gpu1 mlx5_1", -1}} {
		if got := Natural(c.a, c.b); got != c.want {
			t.Errorf("Natural(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// TestDuration: one way to print a span for a reader: milliseconds,
// "<1ms" below one (not "0s", which reads as "not done", trial N6), and
// Span to the second from one second up.
func TestDuration(t *testing.T) {
	for _, c := range []struct {
		d          time.Duration
		want, span string
	}{
		{0, "<1ms", "<1ms"}, {400 * time.Microsecond, "<1ms", "<1ms"}, {time.Millisecond, "1ms", "1ms"},
		{312400 * time.Microsecond, "312ms", "312ms"}, {4512 * time.Millisecond, "4.512s", "5s"}, {90 * time.Second, "1m30s", "1m30s"},
	} {
		if got := Duration(c.d); got != c.want {
			t.Errorf("Duration(%v) = %q, want %q", c.d, got, c.want)
		}
		if got := Span(c.d); got != c.span {
			t.Errorf("Span(%v) = %q, want %q", c.d, got, c.span)
		}
	}
}

func TestFirst(t *testing.T) {
	names := []string{"a", "b", "c", "d", "e"}
	for _, c := range []struct {
		n    int
		want string
	}{{5, "a, b, c, d, e"}, {9, "a, b, c, d, e"}, {3, "a, b, c and 2 more"}, {1, "a and 4 more"}, {0, " and 5 more"}} {
		if got := First(names, c.n); got != c.want {
			t.Errorf("First(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	if got := FirstOf([]string{"x", "y"}, 7); got != "x, y and 5 more" {
		t.Errorf("FirstOf = %q", got)
	}
	if got := FirstSep(names, 2, "; "); got != "a; b and 3 more" {
		t.Errorf("FirstSep = %q", got)
	}
	if got := FirstOf([]string{"x", "y"}, 2); got != "x, y" {
		t.Errorf("FirstOf all = %q", got)
	}
	for in, want := range map[int]string{0: "", 1: "a", 2: "a and b", 3: "a, b and c"} {
		if got := And(names[:in]); got != want {
			t.Errorf("And(%d) = %q, want %q", in, got, want)
		}
	}
}
