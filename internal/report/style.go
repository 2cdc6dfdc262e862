// Package report renders ibdoctor's results for people (tables, colour,
// a summary screen) and for programs (a versioned JSON document, a
// Prometheus textfile). It holds no diagnosis logic.
package report

import (
	"io"
	"os"

	"github.com/fatih/color"
	"github.com/mattn/go-isatty"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Style says how to draw for one output stream.
type Style struct {
	// Color enables ANSI colour.
	Color bool
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// StyleFor returns the style for w: colour only on a terminal, never with
// NO_COLOR set (any value) or when noColor is true.
func StyleFor(w io.Writer, noColor bool) Style {
	_, nocolorEnv := os.LookupEnv("NO_COLOR")
	return Style{Color: !noColor && !nocolorEnv && IsTerminal(w)}
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

// Table writes rows under header as an aligned table with a header rule
// and no borders, the way iblinkinfo-style listings read.
func Table(w io.Writer, header []string, rows [][]string) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleASCII),
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenColumns: tw.Off, BetweenRows: tw.Off},
				Lines:      tw.Lines{ShowHeaderLine: tw.On},
			},
		})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
	)
	anyHeader := make([]any, len(header))
	for i, h := range header {
		anyHeader[i] = h
	}
	t.Header(anyHeader...)
	for _, r := range rows {
		if err := t.Append(r); err != nil {
			return err
		}
	}
	return t.Render()
}
