package snapshot

import (
	"context"
	"errors"
	"fmt"
	"github.com/ibdoctor/ibdoctor/checks"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestLoadReadsAfterTheLock (reviewer R9): a reader that found the state
// between two renames of a sweep reads it again under the shared lock,
// so that no sweep renames meanwhile. It needs the lock only to open the
// set of files (renames replace names, not the files it holds open): a
// sweep starting while the reader reads them must get the lock. Here the
// reader's verdicts.json is a FIFO that the test fills only after that
// sweep's Acquire returned: a reader still holding the lock while it
// reads makes the Acquire time out with ErrLocked. (Failed before: the
// lock was held for the whole read.)
func TestLoadReadsAfterTheLock(t *testing.T) {
	dir := t.TempDir()
	taken := time.Date(2026, 11, 27, 5, 0, 0, 0, time.UTC)
	s0 := testSnap(t, taken)
	s0.SetFabricVerdicts(&checks.FabricVerdicts{})
	if _, err := s0.Save(dir); err != nil {
		t.Fatal(err)
	}
	l, err := Acquire(context.Background(), dir, 0) // leaves sweep.lock behind, as a sweep does
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
	vPath := filepath.Join(dir, s0.VerdictsFile)
	os.Remove(vPath)
	if err := unix.Mkfifo(vPath, 0o644); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	acquired := make(chan error, 1)
	go func() {
		// First read: a newer sweep's verdicts, as when a sweep is
		// between its renames; the reader then reads again under the
		// lock.
		w, err := os.OpenFile(vPath, os.O_WRONLY, 0)
		if err != nil {
			acquired <- err
			return
		}
		fmt.Fprintf(w, `{"taken_at":%q}`, taken.Add(time.Minute).Format(time.RFC3339Nano))
		// The next open finds another FIFO (renamed over it, as a
		// sweep renames), so this one ends for the reader at close.
		next := vPath + ".next"
		if err := unix.Mkfifo(next, 0o644); err != nil {
			acquired <- err
			return
		}
		if err := os.Rename(next, vPath); err != nil {
			acquired <- err
			return
		}
		w.Close()
		// Second read: opened (under the lock), its bytes not written
		// yet. A sweep starts now.
		w, err = os.OpenFile(vPath, os.O_WRONLY, 0)
		if err != nil {
			acquired <- err
			return
		}
		l, err := Acquire(context.Background(), dir, 2*time.Second)
		if err == nil {
			l.Release()
		}
		acquired <- err
		w.WriteString("{}") // no verdicts of this sweep
		w.Close()
	}()
	s, err := Load(dir)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	defer s.Close()
	if !s.TakenAt.Equal(taken) {
		t.Errorf("loaded the sweep of %v, want %v", s.TakenAt, taken)
	}
	if err := <-acquired; err != nil {
		t.Errorf("a sweep starting while a reader read the state: %v", err)
	}
}

// TestLockHeldByReader (reviewer R9): when only readers hold the lock
// (shared, while they open the state) and the pid recorded in it is a
// sweep that has exited, a sweep giving up says a reader holds it, not
// "another sweep is still running" by that pid.
func TestLockHeldByReader(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, LockName)
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	gone := cmd.Process.Pid
	if err := os.WriteFile(path, fmt.Appendf(nil, "%d %s\n", gone, time.Now().UTC().Format(time.RFC3339)), 0o644); err != nil {
		t.Fatal(err)
	}
	unlock, ok := quiet(dir)
	if !ok {
		t.Fatal("no shared lock on a free sweep.lock")
	}
	defer unlock()
	_, err := Acquire(context.Background(), dir, 50*time.Millisecond)
	if !errors.Is(err, ErrLocked) || strings.Contains(err.Error(), "another sweep is still running") ||
		strings.Contains(err.Error(), fmt.Sprintf("by pid %d", gone)) || !strings.Contains(err.Error(), "reading the state") ||
		!strings.Contains(err.Error(), "--lock-wait") {
		t.Errorf("Acquire beside a reader: %v\nwant it held by a process reading the state, not the exited sweep's pid %d", err, gone)
	}
}
