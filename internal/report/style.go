// Package report renders ibdoctor's results for people (tables, colour,
// a summary screen) and for programs (a versioned JSON document, a
// Prometheus textfile). It holds no diagnosis logic.
package report

import (
	"io"
	"os"

	"github.com/fatih/color"
	"github.com/mattn/go-isatty"
)

// Style says how to draw for one output stream.
type Style struct {
	// Color enables ANSI colour.
	Color bool
	// Width is the terminal width text must fit; 0 for a pipe or a file,
	// which get the full text, nothing cut or wrapped.
	Width int
	// RuleWidth, on a pipe (Width 0), is the widest a table's header rule
	// is drawn: the reader's terminal ($COLUMNS, else 80). The rows keep
	// their full text; one long row does not stretch the rule past it.
	RuleWidth int
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

func (s Style) paint(attr color.Attribute, text string) string {
	if !s.Color {
		return text
	}
	c := color.New(attr)
	c.EnableColor()
	return c.Sprint(text)
}

// Red, Yellow, Green, Bold, Dim colour text when the style allows.
func (s Style) Red(t string) string    { return s.paint(color.FgRed, t) }
func (s Style) Yellow(t string) string { return s.paint(color.FgYellow, t) }
func (s Style) Green(t string) string  { return s.paint(color.FgGreen, t) }
func (s Style) Cyan(t string) string   { return s.paint(color.FgCyan, t) }
func (s Style) Bold(t string) string   { return s.paint(color.Bold, t) }
func (s Style) Dim(t string) string    { return s.paint(color.Faint, t) }
