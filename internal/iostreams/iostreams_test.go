package iostreams

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY returns the two ends of a new pseudo-terminal.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

func TestWidthFromTerminal(t *testing.T) {
	m, s := openPTY(t)
	if err := unix.IoctlSetWinsize(int(m.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Col: 97, Row: 30}); err != nil {
		t.Fatal(err)
	}
	io := New(nil, s, s)
	io.getenv = func(string) string { return "55" }
	if !io.IsStdoutTTY() {
		t.Fatal("a pty is not a terminal")
	}
	if w := io.TerminalWidth(); w != 97 {
		t.Errorf("TerminalWidth = %d, want the window size 97 (before $COLUMNS)", w)
	}
	if w := io.OutputWidth(); w != 97 {
		t.Errorf("OutputWidth = %d, want 97", w)
	}
}

func TestWidthFallbacks(t *testing.T) {
	_, s := openPTY(t) // a fresh pty says 0x0: not an answer
	io := New(nil, s, s)
	io.getenv = func(k string) string {
		if k == "COLUMNS" {
			return "132"
		}
		return ""
	}
	if w := io.TerminalWidth(); w != 132 {
		t.Errorf("with a 0x0 window and COLUMNS=132: %d", w)
	}
	io.getenv = func(string) string { return "" }
	if w := io.TerminalWidth(); w != DefaultWidth {
		t.Errorf("with nothing known: %d, want %d", w, DefaultWidth)
	}
	io.SetWidth(61)
	if w := io.TerminalWidth(); w != 61 {
		t.Errorf("SetWidth(61): %d", w)
	}
}

func TestPipeIsNotCut(t *testing.T) {
	var out bytes.Buffer
	io := New(nil, &out, &out)
	if io.IsStdoutTTY() || io.OutputWidth() != 0 || io.ColorEnabled() {
		t.Errorf("a buffer: tty %v, width %d, colour %v; want no tty, no width limit, no colour", io.IsStdoutTTY(), io.OutputWidth(), io.ColorEnabled())
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if New(nil, w, w).OutputWidth() != 0 {
		t.Error("a pipe has a width limit")
	}
}

func TestColor(t *testing.T) {
	_, s := openPTY(t)
	t.Setenv("NO_COLOR", "")
	os.Unsetenv("NO_COLOR")
	io := New(nil, s, s)
	if !io.ColorEnabled() {
		t.Error("a terminal without NO_COLOR: no colour")
	}
	io.SetNoColor(true)
	if io.ColorEnabled() {
		t.Error("--no-color: colour")
	}
	io.SetNoColor(false)
	t.Setenv("NO_COLOR", "1")
	if io.ColorEnabled() {
		t.Error("NO_COLOR=1: colour")
	}
	// no-color.org: only a value that is not empty asks for no colour
	// (trial E7: an empty NO_COLOR= turned colour off).
	t.Setenv("NO_COLOR", "")
	if !io.ColorEnabled() {
		t.Error("NO_COLOR set but empty: no colour")
	}
}

// TestHeightAfterOutWrapped: ibdoctor's mainWith wraps Out (to remember
// a write error) after New; the terminal's height is still its window
// size, as its width is. Before: 24 (the fallback) on a 50-line
// terminal, so top drew 18 rows.
func TestHeightAfterOutWrapped(t *testing.T) {
	m, s := openPTY(t)
	if err := unix.IoctlSetWinsize(int(m.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Col: 80, Row: 50}); err != nil {
		t.Fatal(err)
	}
	io := New(nil, s, s)
	io.getenv = func(string) string { return "" }
	io.Out = &bytes.Buffer{}
	if h := io.TerminalHeight(); h != 50 {
		t.Errorf("TerminalHeight = %d, want the window's 50 rows", h)
	}
	if w := io.TerminalWidth(); w != 80 {
		t.Errorf("TerminalWidth = %d, want 80", w)
	}
}
