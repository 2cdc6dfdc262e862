// Package tmuxtest runs a command in a real terminal — a detached tmux
// session of a given size — for tests of what ibdoctor draws there: the
// pane is a pty with a window size, so TIOCGWINSZ, wrapping and key
// presses behave as in an on-call engineer's SSH window.
package tmuxtest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// ExitMarker precedes the command's exit status in the pane once it ends.
const ExitMarker = "tmuxtest-exit="

// Require skips t when tmux is not installed; with CI=true it fails.
func Require(t testing.TB) {
	t.Helper()
	msg := "tmuxtest: tmux not installed (Debian package tmux)"
	if _, err := exec.LookPath("tmux"); err == nil {
		// tmux's server daemonises onto /dev/null and dies when it is not
		// the character device (a test that renamed a file over it).
		st, err := os.Stat("/dev/null")
		if err == nil && st.Mode()&os.ModeCharDevice != 0 {
			return
		}
		msg = "tmuxtest: /dev/null is not a character device here (was it replaced by a file?); tmux cannot start"
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + " (CI=true: failing instead of skipping)")
	}
	t.Skip(msg)
}

// Pane is one tmux server with one session of one pane.
type Pane struct {
	t      testing.TB
	socket string
	Width  int
	Height int
}

// Start runs argv in a new detached tmux session width x height on a
// private server (its own socket, no configuration file), in dir. When
// argv ends, the pane prints ExitMarker and its exit status and stays
// open; the server is killed on t.Cleanup.
func Start(t testing.TB, width, height int, dir string, argv ...string) *Pane {
	t.Helper()
	Require(t)
	p := &Pane{t: t, socket: fmt.Sprintf("ibdt-%d-%08x", os.Getpid(), rand.Uint32()), Width: width, Height: height}
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	// The shell keeps the pane open after the command so that what it
	// printed can be captured, and says how it ended.
	script := fmt.Sprintf("cd '%s' && %s; echo %s$?; exec sleep 600", dir, strings.Join(quoted, " "), ExitMarker)
	args := []string{"new-session", "-d", "-x", fmt.Sprint(width), "-y", fmt.Sprint(height), "-s", "t", "sh", "-c", script}
	if out, err := p.tmux(args...); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { p.tmux("kill-server") })
	// A long history, so a capture holds everything the command printed.
	p.tmux("set-option", "-t", "t", "history-limit", "100000")
	return p
}

func (p *Pane) tmux(args ...string) (string, error) {
	cmd := exec.Command("tmux", append([]string{"-L", p.socket, "-f", "/dev/null"}, args...)...)
	env := []string{}
	for _, e := range os.Environ() {
		// The pane's own size must decide, not the test's environment.
		if !strings.HasPrefix(e, "COLUMNS=") && !strings.HasPrefix(e, "LINES=") && !strings.HasPrefix(e, "TMUX=") && !strings.HasPrefix(e, "TERM=") {
			env = append(env, e)
		}
	}
	cmd.Env = append(env, "TERM=xterm-256color")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Capture returns the pane's screen and history. joined joins the lines
// the terminal wrapped (tmux -J), so a line longer than the pane shows as
// one long line; without it every line is at most the pane's width.
func (p *Pane) Capture(joined bool) string {
	p.t.Helper()
	args := []string{"capture-pane", "-p", "-S", "-", "-t", "t"}
	if joined {
		args = append(args, "-J")
	}
	out, err := p.tmux(args...)
	if err != nil {
		p.t.Fatalf("tmux capture-pane: %v\n%s", err, out)
	}
	return out
}

// Screen returns only what is on the screen now.
func (p *Pane) Screen() string {
	p.t.Helper()
	out, err := p.tmux("capture-pane", "-p", "-t", "t")
	if err != nil {
		p.t.Fatalf("tmux capture-pane: %v\n%s", err, out)
	}
	return out
}

// SendKeys types keys into the pane (tmux key names: "q", "C-c", "Enter").
func (p *Pane) SendKeys(keys ...string) {
	p.t.Helper()
	if out, err := p.tmux(append([]string{"send-keys", "-t", "t"}, keys...)...); err != nil {
		p.t.Fatalf("tmux send-keys: %v\n%s", err, out)
	}
}

// WaitFor polls the screen and history until cond holds, and fails t with
// the last capture after timeout.
func (p *Pane) WaitFor(what string, timeout time.Duration, cond func(capture string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		c := p.Capture(true)
		if cond(c) {
			return c
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("tmux pane: waited %v for %s; the pane shows:\n%s", timeout, what, c)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// WaitExit waits for the command to end and returns its exit status and
// the capture.
func (p *Pane) WaitExit(timeout time.Duration) (int, string) {
	p.t.Helper()
	c := p.WaitFor("the command to exit", timeout, func(c string) bool { return strings.Contains(c, ExitMarker) })
	i := strings.LastIndex(c, ExitMarker)
	var code int
	fmt.Sscanf(c[i+len(ExitMarker):], "%d", &code)
	return code, c[:i]
}
