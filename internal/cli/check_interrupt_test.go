package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/iostreams"
)

// runCtx runs ibdoctor as Main does (stdout and stderr pipes) under ctx,
// a context the test cancels as a signal would.
func runCtx(ctx context.Context, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	ios := iostreams.New(strings.NewReader(""), &out, &errb)
	o := &errWriter{w: ios.Out}
	a := &app{io: ios, stdin: ios.In, stdout: o, stderr: ios.ErrOut}
	a.io.Out = o
	root := newRootCmd(a)
	root.SetArgs(args)
	root.SetContext(ctx)
	code := execute(root, &errb, 0)
	a.stopProfiles()
	return code, out.String(), errb.String()
}

// TestCheckInterrupted: a check whose context is cancelled (SIGINT,
// SIGTERM) judges nothing from the walk it abandoned (trial N3: a ^C
// mid-discovery printed "5 leaves are oversubscribed 32.0:1 (32 hosts, 1
// uplink each) ... this is the design", status unhealthy, exit 1, and
// nothing on stderr). It exits 2 with one line saying it was interrupted,
// prints no report, and writes no --html page.
func TestCheckInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("interrupt signal received"))
	dir := t.TempDir()
	for _, args := range [][]string{
		{"check", "--sim"},
		{"check", "--sim", "--json"},
		{"check", "--sim", "--html", filepath.Join(dir, "f.html")},
	} {
		code, out, stderr := runCtx(ctx, args...)
		if code != ExitUndecided {
			t.Errorf("%v: exit %d, want %d (stdout %q)", args, code, ExitUndecided, out)
		}
		if out != "" {
			t.Errorf("%v: an interrupted check printed a report:\n%s", args, out)
		}
		if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "check interrupted (interrupt signal received)") {
			t.Errorf("%v: stderr %q, want one line saying the check was interrupted", args, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "f.html")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an interrupted check wrote its --html page: %v", err)
	}
}

// TestGateInterrupted: a gate stopped by a signal gives no verdict on
// what it read in part: exit 2 and one line saying it was interrupted,
// whether it swept the fabric itself or read a snapshot.
func TestGateInterrupted(t *testing.T) {
	state := filepath.Join(t.TempDir(), "st")
	if code, _, stderr := run("sweep", "--sim", "--state-dir", state); code != ExitHealthy {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("interrupt signal received"))
	for _, args := range [][]string{
		{"gate", "--sim", "--nodes", "gpu001,gpu012", "--state-dir", filepath.Join(t.TempDir(), "none")},
		{"gate", "--sim", "--nodes", "gpu001,gpu012", "--state-dir", state},
		{"gate", "--sim", "--nodes", "gpu001,gpu012", "--state-dir", state, "--json"},
	} {
		code, out, stderr := runCtx(ctx, args...)
		if code != ExitUndecided {
			t.Errorf("%v: exit %d, want %d (stdout %q)", args, code, ExitUndecided, out)
		}
		if out != "" {
			t.Errorf("%v: an interrupted gate printed a report:\n%s", args, out)
		}
		// Without a snapshot the gate first says it sweeps itself.
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		if strings.Count(stderr, "interrupted") != 1 || !strings.Contains(lines[len(lines)-1], "gate interrupted (interrupt signal received)") {
			t.Errorf("%v: stderr %q, want one last line saying the gate was interrupted", args, stderr)
		}
	}
}
