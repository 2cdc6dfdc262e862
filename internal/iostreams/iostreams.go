// Package iostreams is the one place that knows what ibdoctor's standard
// streams are: whether each is a terminal, how wide the terminal is, and
// whether to colour. Every command prints through it, so a table fits an
// 80-column SSH window while a pipe or a cron log gets the full text.
package iostreams

import (
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/mattn/go-isatty"
)

// DefaultWidth is the width assumed for a terminal that does not say.
const DefaultWidth = 80

// IOStreams are the standard streams of one ibdoctor run.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	inTTY, outTTY, errTTY bool
	// files are the streams given to New that are files, stdout first:
	// the terminal's size is asked of them, not of Out, which a command
	// may wrap (mainWith's errWriter) after New.
	files []*os.File
	// width is the terminal width fixed by SetWidth; 0 asks the terminal.
	width   int
	noColor bool
	getenv  func(string) string
}

// New wraps the given streams; a stream is a terminal when it is an
// *os.File that isatty says is one.
func New(in io.Reader, out, errOut io.Writer) *IOStreams {
	s := &IOStreams{
		In: in, Out: out, ErrOut: errOut,
		inTTY: isTerminal(in), outTTY: isTerminal(out), errTTY: isTerminal(errOut),
		getenv: os.Getenv,
	}
	for _, v := range []any{out, errOut, in} {
		if f, ok := v.(*os.File); ok && f != nil {
			s.files = append(s.files, f)
		}
	}
	return s
}

// windowSize is the first answer of the streams' terminal: its columns
// and rows, 0 0 when none says.
func (s *IOStreams) windowSize() (cols, rows int) {
	for _, f := range s.files {
		if c, r := windowSize(f.Fd()); c > 0 && r > 0 {
			return c, r
		}
	}
	return 0, 0
}

// System is New on the process's own standard streams.
func System() *IOStreams { return New(os.Stdin, os.Stdout, os.Stderr) }

func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok || f == nil {
		return false
	}
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// IsStdinTTY, IsStdoutTTY and IsStderrTTY say whether each stream is a
// terminal.
func (s *IOStreams) IsStdinTTY() bool  { return s.inTTY }
func (s *IOStreams) IsStdoutTTY() bool { return s.outTTY }
func (s *IOStreams) IsStderrTTY() bool { return s.errTTY }

// SetStdoutTTY and SetStderrTTY override the detection (tests, and
// commands that must never draw on a terminal, such as sweep).
func (s *IOStreams) SetStdoutTTY(v bool) { s.outTTY = v }
func (s *IOStreams) SetStderrTTY(v bool) { s.errTTY = v }

// SetWidth fixes the terminal width instead of asking the terminal.
func (s *IOStreams) SetWidth(n int) { s.width = n }

// SetNoColor turns colour off (--no-color).
func (s *IOStreams) SetNoColor(v bool) { s.noColor = v }

// TerminalWidth is the width of the terminal on stdout (else stderr,
// else stdin): the kernel's window size (TIOCGWINSZ), then $COLUMNS,
// else DefaultWidth.
func (s *IOStreams) TerminalWidth() int {
	if s.width > 0 {
		return s.width
	}
	if w, _ := s.windowSize(); w > 0 {
		return w
	}
	if c, err := strconv.Atoi(strings.TrimSpace(s.getenv("COLUMNS"))); err == nil && c > 0 {
		return c
	}
	return DefaultWidth
}

// TerminalHeight is the height of the terminal on stdout (else stderr,
// else stdin; TIOCGWINSZ, as TerminalWidth), then $LINES, else 24: how
// many lines a full-screen view may draw.
func (s *IOStreams) TerminalHeight() int {
	if _, h := s.windowSize(); h > 0 {
		return h
	}
	if c, err := strconv.Atoi(strings.TrimSpace(s.getenv("LINES"))); err == nil && c > 0 {
		return c
	}
	return 24
}

// OutputWidth is the width text on stdout must fit: the terminal's when
// stdout is one, 0 (no limit: full text, nothing cut) when it is a pipe
// or a file.
func (s *IOStreams) OutputWidth() int {
	if !s.outTTY {
		return 0
	}
	return s.TerminalWidth()
}

// ErrWidth is the width messages on stderr must fit: the terminal's when
// stderr is one, 0 (one line each, for a log) otherwise.
func (s *IOStreams) ErrWidth() int {
	if !s.errTTY {
		return 0
	}
	return s.TerminalWidth()
}

// ColorEnabled says whether stdout may be coloured: only a terminal,
// never with --no-color or a non-empty NO_COLOR (no-color.org: an empty
// value does not count).
func (s *IOStreams) ColorEnabled() bool {
	if s.noColor || !s.outTTY {
		return false
	}
	return os.Getenv("NO_COLOR") == ""
}
