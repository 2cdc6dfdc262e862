package report

import (
	"bufio"
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
// (the leftmost keeps the most room), then Drop columns are removed.
func WriteTable(w io.Writer, width int, cols []Column, rows [][]string) error {
	return WriteTableRule(w, width, 0, cols, rows)
}

// WriteTableRule is WriteTable whose header rule is at most ruleMax
// columns wide (0: as wide as the table), though never narrower than the
// header.
func WriteTableRule(w io.Writer, width, ruleMax int, cols []Column, rows [][]string) error {
	natural := make([]int, len(cols))
	for i, c := range cols {
		natural[i] = VisibleWidth(c.Header)
	}
	for _, r := range rows {
		for i := range cols {
			if i < len(r) {
				natural[i] = max(natural[i], VisibleWidth(r[i]))
			}
		}
	}
	// A wrapping last column is never narrower than its longest word:
	// a word cut at the column's edge ("[SymbolErrorCoun…") loses the
	// figure the operator ran the command for. Columns that may go are
	// dropped for it first; failing that, the text goes under its row.
	if n := len(cols); n > 0 && width > 0 && cols[n-1].Wrap {
		cols = append([]Column(nil), cols...)
		for _, r := range rows {
			if n-1 < len(r) {
				for _, u := range wrapUnits(r[n-1]) {
					cols[n-1].Min = max(cols[n-1].Min, VisibleWidth(u))
				}
			}
		}
	}
	keep, widths := fitColumns(cols, natural, width)
	bw := bufio.NewWriter(w)
	last := -1
	for i := range cols {
		if keep[i] {
			last = i
		}
	}
	// A wrapping last column squeezed below its Min reads better under
	// its row, across the whole width, than as a sliver at the right.
	below := -1
	if width > 0 && last >= 0 && cols[last].Wrap && widths[last] < min(cols[last].Min, natural[last]) {
		below, keep[last] = last, false
		last = -1
		for i := range cols {
			if keep[i] {
				last = i
			}
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
	for i, r := range rows {
		line(i, r)
	}
	return bw.Flush()
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
			for i := range cols {
				if keep[i] && least[i] < natural[i] {
					add := min(spare, natural[i]-least[i])
					least[i] += add
					spare -= add
				}
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
