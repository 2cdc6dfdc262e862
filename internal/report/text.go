package report

import (
	"strings"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"

	"github.com/ibdoctor/ibdoctor/internal/words"
)

// Ellipsis marks text cut to fit the terminal.
const Ellipsis = "…"

// VisibleWidth is how many terminal columns s takes, not counting ANSI
// colour sequences.
func VisibleWidth(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			i += escapeLen(s[i:])
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n += runewidth.RuneWidth(r)
		i += size
	}
	return n
}

// escapeLen is the length of the ANSI CSI sequence (ESC [ ... final byte)
// at the start of s, or 1 for a lone ESC.
func escapeLen(s string) int {
	if len(s) < 2 || s[1] != '[' {
		return 1
	}
	for j := 2; j < len(s); j++ {
		if s[j] >= 0x40 && s[j] <= 0x7e {
			return j + 1
		}
	}
	return len(s)
}

// Truncate cuts s to at most width columns, ending in "…" when it cut;
// colour sequences are kept and reset after the cut. width <= 0 means no
// limit.
func Truncate(s string, width int) string {
	if width <= 0 || VisibleWidth(s) <= width {
		return s
	}
	var b strings.Builder
	n, colored := 0, false
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			l := escapeLen(s[i:])
			b.WriteString(s[i : i+l])
			colored = true
			i += l
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		rw := runewidth.RuneWidth(r)
		if n+rw > width-1 {
			break
		}
		b.WriteRune(r)
		n += rw
		i += size
	}
	// Cut after a word rather than inside it when that loses little.
	out := b.String()
	// (Not in coloured text: a space may sit inside an escape sequence.)
	if k := strings.LastIndexByte(out, ' '); !colored && k > 0 && VisibleWidth(out[k:]) <= 8 {
		out = strings.TrimRight(out[:k], " ,;:")
	}
	out += Ellipsis
	if colored {
		out += "\x1b[0m"
	}
	return out
}

// TruncateMiddle cuts s to at most width columns by taking text out of
// its middle ("MF0;switch-de…SX6012/U1[1]"): a node name's start and the
// port at its end both stay. Coloured text is cut at its end (Truncate).
func TruncateMiddle(s string, width int) string {
	if width <= 0 || VisibleWidth(s) <= width {
		return s
	}
	if strings.IndexByte(s, 0x1b) >= 0 {
		// A name coloured as a whole (counters' bold node over threshold)
		// is cut in its middle like any other, inside its colour.
		l, e := escapeLen(s), strings.LastIndexByte(s, 0x1b)
		if s[0] == 0x1b && e >= l && e+escapeLen(s[e:]) == len(s) && strings.IndexByte(s[l:e], 0x1b) < 0 {
			return s[:l] + TruncateMiddle(s[l:e], width) + s[e:]
		}
		return Truncate(s, width)
	}
	if width < 3 {
		return Truncate(s, width)
	}
	rs := []rune(s)
	keep := width - VisibleWidth(Ellipsis)
	tail := keep / 2
	i, n := 0, 0
	for i < len(rs) && n+runewidth.RuneWidth(rs[i]) <= keep-tail {
		n += runewidth.RuneWidth(rs[i])
		i++
	}
	j, m := len(rs), 0
	for j > i && m+runewidth.RuneWidth(rs[j-1]) <= keep-n {
		m += runewidth.RuneWidth(rs[j-1])
		j--
	}
	return string(rs[:i]) + Ellipsis + string(rs[j:])
}

// FitNames shortens text toward width by cutting names found in it in
// their middle ("MF0;A09-…9701/U1"), in the order given, down to
// minName columns each, until it fits: a UFM-style switch name takes half
// a narrow column, and cutting the text at its end then loses what tells
// one finding from the next (the host, the port). Names of at most
// longName columns ("gpu027 mlx5_6", "leaf07") are left whole. What still
// does not fit is the caller's to cut.
func FitNames(text string, names []string, width int) string {
	const minName, longName = 16, 20
	for _, n := range names {
		over := VisibleWidth(text) - width
		if over <= 0 {
			break
		}
		if VisibleWidth(n) <= longName {
			continue
		}
		k := strings.Count(text, n)
		if k == 0 {
			continue
		}
		to := max(minName, VisibleWidth(n)-(over+k-1)/k)
		text = strings.ReplaceAll(text, n, TruncateMiddle(n, to))
	}
	return text
}

// Wrap breaks text into lines of at most width columns at spaces. The
// first line starts with first, the others with an indent as wide as
// first (a hanging indent), so continuation lines line up under the text.
// A word longer than a line is put on a line of its own, never cut; a
// bracketed group ("[PortXmitWait == 617147]") is kept whole like a word.
// width <= 0 means no limit: one line.
func Wrap(first, text string, width int) []string {
	if width <= 0 || VisibleWidth(first)+VisibleWidth(text) <= width {
		return []string{first + text}
	}
	indent := strings.Repeat(" ", VisibleWidth(first))
	var (
		lines []string
		line  strings.Builder
		lw    int
		empty = true
	)
	line.WriteString(first)
	lw = VisibleWidth(first)
	for _, word := range wrapUnits(text) {
		ww := VisibleWidth(word)
		if !empty && lw+1+ww > width {
			lines = append(lines, line.String())
			line.Reset()
			line.WriteString(indent)
			lw, empty = len(indent), true
		}
		if !empty {
			line.WriteByte(' ')
			lw++
		}
		line.WriteString(word)
		lw += ww
		empty = false
	}
	return append(lines, line.String())
}

// wrapUnits splits text at spaces, except inside square brackets: the
// counters' "[Name == value]" read as one item, and a line break inside
// one leaves "==" at a line's end and the value orphaned below.
func wrapUnits(text string) []string {
	var units []string
	open := 0
	for _, f := range strings.Fields(text) {
		if open > 0 {
			units[len(units)-1] += " " + f
		} else {
			units = append(units, f)
		}
		open = max(0, open+bracketDepth(f))
	}
	return units
}

// bracketDepth is how many more '[' than ']' s shows, not counting those
// of colour sequences (ESC [ 1 m).
func bracketDepth(s string) int {
	d := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case 0x1b:
			i += escapeLen(s[i:]) - 1
		case '[':
			d++
		case ']':
			d--
		}
	}
	return d
}

// Plural is n and the word, with an "s" unless n is 1: "1 check",
// "3 checks".
func Plural(n int, word string) string { return words.Count(n, word) }

// WrapString is Wrap joined with newlines, ending in one.
func WrapString(first, text string, width int) string {
	return strings.Join(Wrap(first, text, width), "\n") + "\n"
}
