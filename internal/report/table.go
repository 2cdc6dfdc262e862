package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Column describes one column of a table that fits the terminal.
type Column struct {
	Header string
	// Min is the narrowest a column of long text may be cut to, its
	// cells ending in "…"; 0 means the column is never cut.
	Min int
	// Drop > 0 lets the column go entirely when the table does not fit
	// even with every column cut to its Min: the lowest Drop goes first.
	Drop int
	// Wrap, on the last column, wraps its text onto continuation lines
	// at word boundaries instead of cutting it.
	Wrap bool
	// CutMiddle cuts the column's text in its middle, not at its end:
	// for names whose end (a port) matters as much as their start.
	CutMiddle bool
	// Fit, when set, shortens a cell of row (an index into rows; -1 for
	// the header) that is wider than width before it is cut at its end:
	// the findings table cuts long node names in their middle so that
	// what tells two rows apart stays (trial B13).
	Fit func(row int, cell string, width int) string
}

// Table writes rows under header as an aligned table with a header rule
// and no borders, the way iblinkinfo-style listings read, at full width.
func Table(w io.Writer, header []string, rows [][]string) error {
	return WriteTable(w, 0, columnsOf(header), rows)
}

// Table writes rows under header fitted to the style's width: the last
// column's text wraps onto continuation lines when the table is wider.
// Piped, the rows stay whole and the rule stops at s.RuleWidth.
func (s Style) Table(w io.Writer, header []string, rows [][]string) error {
	cols := columnsOf(header)
	if len(cols) > 0 {
		cols[len(cols)-1].Min, cols[len(cols)-1].Wrap = 16, true
	}
	return WriteTableRule(w, s.Width, s.RuleWidth, cols, rows)
}

func columnsOf(header []string) []Column {
	cols := make([]Column, len(header))
	for i, h := range header {
		cols[i] = Column{Header: h}
	}
	return cols
}

// WriteTable writes rows as a table at most width columns wide (0: no
// limit). When the natural table is wider, the columns with a Min are cut
// (sharing the room left evenly), then Drop columns are removed.
func WriteTable(w io.Writer, width int, cols []Column, rows [][]string) error {
	return WriteTableRule(w, width, 0, cols, rows)
}

// WriteTableRule is WriteTable whose header rule is at most ruleMax
// columns wide (0: as wide as the table), though never narrower than the
// header.
func WriteTableRule(w io.Writer, width, ruleMax int, cols []Column, rows [][]string) error {
	return writeTable(w, width, ruleMax, cols, len(rows), func(i int) []string { return rows[i] })
}

// WriteTableFunc is WriteTable of n rows that row makes when asked, more
// than once each (to size the columns, then to write them; it must give
// the same cells each time): a table of every port of a large fabric is
// not held whole (top --once at 8.7k: 49,152 rows of eight cells).
func WriteTableFunc(w io.Writer, width int, cols []Column, n int, row func(i int) []string) error {
	return writeTable(w, width, 0, cols, n, row)
}

func writeTable(w io.Writer, width, ruleMax int, cols []Column, n int, row func(i int) []string) error {
	cols, _, keep, widths, below := layout(width, cols, n, row)
	bw := bufio.NewWriter(w)
	last := -1
	for i := range cols {
		if keep[i] {
			last = i
		}
	}
	const belowIndent = "     "
	line := func(row int, cells []string) {
		var b strings.Builder
		var more []string
		for i := range cols {
			if !keep[i] {
				continue
			}
			cell := ""
			if i < len(cells) {
				cell = cells[i]
			}
			if i == last && cols[i].Wrap && width > 0 {
				wrapped := Wrap("", cell, widths[i])
				cell, more = wrapped[0], wrapped[1:]
				indent := strings.Repeat(" ", tableWidth(keep, widths)-widths[last]-1)
				for j := range more {
					more[j] = Truncate(indent+more[j], width)
				}
			}
			if cols[i].Fit != nil && VisibleWidth(cell) > widths[i] {
				cell = cols[i].Fit(row, cell, widths[i])
			}
			if cols[i].CutMiddle {
				cell = TruncateMiddle(cell, widths[i])
			}
			cell = Truncate(cell, widths[i])
			b.WriteByte(' ')
			b.WriteString(cell)
			b.WriteString(strings.Repeat(" ", max(0, widths[i]-VisibleWidth(cell))+1))
		}
		bw.WriteString(strings.TrimRight(b.String(), " "))
		bw.WriteByte('\n')
		for _, m := range more {
			bw.WriteString(m + "\n")
		}
		if below >= 0 && below < len(cells) && strings.TrimSpace(cells[below]) != "" {
			for _, m := range Wrap(belowIndent, cells[below], width) {
				bw.WriteString(Truncate(m, width) + "\n")
			}
		}
	}
	header := make([]string, len(cols))
	for i, c := range cols {
		header[i] = c.Header
	}
	if below >= 0 {
		header[below] = "" // its text is under each row
	}
	line(-1, header)
	rule := tableWidth(keep, widths)
	if ruleMax > 0 && rule > ruleMax {
		headerWidth := 0
		for i, h := range header {
			if keep[i] {
				headerWidth = tableWidth(keep[:i], widths[:i]) + VisibleWidth(h) + 1
			}
		}
		rule = max(ruleMax, headerWidth)
	}
	bw.WriteString(strings.Repeat("-", rule))
	bw.WriteByte('\n')
	for i := range n {
		line(i, row(i))
	}
	return bw.Flush()
}

// layout decides a table's columns at width: natural is each column's
// widest cell, keep and widths what is shown and how wide, below the
// wrapping last column moved under its rows (-1: none). cols comes back
// with the wrapping column's Min raised (wrapMin).
func layout(width int, cols []Column, rows int, row func(int) []string) (_ []Column, natural []int, keep []bool, widths []int, below int) {
	natural = make([]int, len(cols))
	for i, c := range cols {
		natural[i] = VisibleWidth(c.Header)
	}
	for j := range rows {
		r := row(j)
		for i := range cols {
			if i < len(r) {
				natural[i] = max(natural[i], VisibleWidth(r[i]))
			}
		}
	}
	cols = wrapMin(width, cols, rows, row)
	keep, widths = fitColumns(cols, natural, width)
	last := -1
	for i := range cols {
		if keep[i] {
			last = i
		}
	}
	// A wrapping last column squeezed below its Min reads better under
	// its row, across the whole width, than as a sliver at the right;
	// the other columns then share the width without it (trial E13:
	// counters cut its node names to "…" for a column that went below).
	// It goes under its rows too rather than cost another column its
	// place (links: the LIDs, for a DEGRADED mark).
	below = -1
	n := len(cols)
	if width > 0 && n > 0 && cols[n-1].Wrap {
		k, wd := fitColumns(cols[:n-1], natural[:n-1], width)
		lost := false
		for i := range k {
			lost = lost || (k[i] && !keep[i])
		}
		if lost || (last == n-1 && widths[last] < min(cols[last].Min, natural[last])) {
			below = n - 1
			copy(keep, k)
			copy(widths, wd)
			keep[n-1] = false
		}
	}
	return cols, natural, keep, widths, below
}

// wrapMin raises a wrapping last column's Min to its longest word: a
// word cut at the column's edge ("[SymbolErrorCoun…") loses the figure
// the operator ran the command for. Columns that may go are dropped for
// it first; failing that, the text goes under its row.
func wrapMin(width int, cols []Column, rows int, row func(int) []string) []Column {
	n := len(cols)
	if n == 0 || width <= 0 || !cols[n-1].Wrap {
		return cols
	}
	cols = append([]Column(nil), cols...)
	for j := range rows {
		if r := row(j); n-1 < len(r) {
			for _, u := range wrapUnits(r[n-1]) {
				cols[n-1].Min = max(cols[n-1].Min, VisibleWidth(u))
			}
		}
	}
	return cols
}

// LeftOut is the headers of the columns (each once) that WriteTable at
// width drops to fit and that hold text in some row: what the reader of
// the screen does not see, to be said under the table (LeftOutNote). A
// column with nothing in it is not missed.
func LeftOut(width int, cols []Column, rows [][]string) []string {
	if width <= 0 {
		return nil
	}
	_, _, keep, _, below := layout(width, cols, len(rows), func(i int) []string { return rows[i] })
	var out []string
	seen := map[string]bool{}
	for i, k := range keep {
		if k || i == below || seen[cols[i].Header] {
			continue
		}
		for _, r := range rows {
			if i < len(r) && strings.TrimSpace(r[i]) != "" {
				seen[cols[i].Header] = true
				out = append(out, cols[i].Header)
				break
			}
		}
	}
	return out
}

// LeftOutNote is the line under a table saying which columns (LeftOut)
// did not fit width, and where to see them; "" when none.
func LeftOutNote(headers []string, width int) string {
	if len(headers) == 0 {
		return ""
	}
	return WrapString("", fmt.Sprintf("(%s left out to fit %d columns: widen the terminal, or pipe the output, to see every column)",
		strings.Join(headers, ", "), width), width)
}

// tableWidth is the width of a row: one space before each kept column,
// one after, two between neighbours.
func tableWidth(keep []bool, widths []int) int {
	n := 0
	for i, k := range keep {
		if k {
			n += widths[i] + 2
		}
	}
	return n
}

// fitColumns decides which columns are shown and how wide.
func fitColumns(cols []Column, natural []int, width int) ([]bool, []int) {
	keep := make([]bool, len(cols))
	for i := range keep {
		keep[i] = true
	}
	widths := append([]int(nil), natural...)
	if width <= 0 {
		return keep, widths
	}
	for {
		if tableWidth(keep, natural) <= width {
			return keep, append([]int(nil), natural...)
		}
		least := make([]int, len(cols))
		for i, c := range cols {
			least[i] = natural[i]
			if c.Min > 0 {
				least[i] = min(natural[i], c.Min)
			}
		}
		if spare := width - tableWidth(keep, least); spare >= 0 {
			// The room left is shared a column at a time among the cut
			// columns, the narrowest first, so a long name on the left
			// does not take it all and leave its peer on the right cut
			// to its Min (trial E13: counters' NODE 50 columns, PEER 16).
			for spare > 0 {
				j := -1
				for i := range cols {
					if keep[i] && least[i] < natural[i] && (j < 0 || least[i] < least[j]) {
						j = i
					}
				}
				if j < 0 {
					break
				}
				least[j]++
				spare--
			}
			return keep, least
		}
		drop := -1
		for i, c := range cols {
			if keep[i] && c.Drop > 0 && (drop < 0 || c.Drop < cols[drop].Drop) {
				drop = i
			}
		}
		if drop < 0 {
			// Nothing left to drop: cut the first cuttable column further,
			// down to one character; the row may still be too wide.
			over := tableWidth(keep, least) - width
			for i, c := range cols {
				if keep[i] && c.Min > 0 && over > 0 {
					cut := min(over, least[i]-1)
					least[i] -= cut
					over -= cut
				}
			}
			return keep, least
		}
		keep[drop] = false
	}
}
