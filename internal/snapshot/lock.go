package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// LockName is the lock file in the state directory that sweeps (and
// `baseline accept`) hold while they change the state.
const LockName = "sweep.lock"

// Lock is a held lock on a state directory.
type Lock struct{ f *os.File }

// ErrLocked is returned by Acquire when another process held the lock
// for longer than the wait.
var ErrLocked = errors.New("state directory is locked")

// Acquire takes the state directory's lock (creating the directory),
// waiting at most wait for another sweep to finish; ctx cancels the wait.
// The lock is flock(2) on LockName, so it is released when its holder
// exits, however it exits: a killed sweep never leaves a stale lock.
func Acquire(ctx context.Context, dir string, wait time.Duration) (*Lock, error) {
	const fix = "give a directory this user may create and write (--state-dir DIR or $IBDOCTOR_STATE_DIR)"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--state-dir %s: cannot create it (%v): %s", dir, bareErr(err), fix)
	}
	path := filepath.Join(dir, LockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("--state-dir %s: cannot create %s in it (%v): %s", dir, LockName, bareErr(err), fix)
	}
	deadline := time.Now().Add(wait)
	for delay := 5 * time.Millisecond; ; delay = min(2*delay, 200*time.Millisecond) {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, fmt.Errorf("--state-dir: locking %s: %w", path, err)
		}
		if !time.Now().Before(deadline) {
			err := heldBy(f, path, wait)
			f.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(min(delay, time.Until(deadline)+time.Millisecond)):
		}
	}
	// Say who holds it, for the message of a sweep that gives up.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(fmt.Sprintf("%d %s\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339))), 0)
	}
	return &Lock{f: f}, nil
}

// quiet takes a shared lock on dir's LockName when no sweep holds it:
// a sweep holds the lock while it renames its files, so with it free no
// sweep is between two renames, and none can start one until unlock. ok
// is false while a sweep holds it, or when that cannot be told (the lock
// file not readable): then waiting for a sweep may help. No lock file:
// no sweep has taken the lock in dir, so none is renaming.
func quiet(dir string) (unlock func(), ok bool) {
	f, err := os.Open(filepath.Join(dir, LockName))
	if errors.Is(err, fs.ErrNotExist) {
		return func() {}, true
	}
	if err != nil {
		return nil, false
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, false
	}
	return func() { f.Close() }, true
}

// heldBy is Acquire's error once it waited wait for the lock at path
// (f, its descriptor, not locked). The file names the last process that
// took it to write (a sweep, `baseline accept`); readers take it shared,
// without writing, so that pid is named only when the holder is a writer
// and it is running.
func heldBy(f *os.File, path string, wait time.Duration) error {
	pid, since := readHolder(path)
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err == nil {
		// Only shared holders: processes opening the state's files.
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		return fmt.Errorf("%w: %s is held for over %v by a process reading the state (a gate, sweep or baseline accept opening its files), not by a sweep: try again, or raise --lock-wait", ErrLocked, path, wait)
	}
	if pid > 0 && unix.Kill(pid, 0) == unix.ESRCH {
		return fmt.Errorf("%w: %s is held for over %v by a process that is not pid %d (which took it at %s and has exited): another sweep or baseline accept, perhaps in another PID namespace (wait for it, or raise --lock-wait)", ErrLocked, path, wait, pid, since)
	}
	holder := ""
	if pid > 0 {
		holder = fmt.Sprintf(" by pid %d since %s", pid, since)
	}
	return fmt.Errorf("%w: %s is held%s for over %v: another sweep is still running (wait for it, or raise --lock-wait)", ErrLocked, path, holder, wait)
}

// readHolder is the pid and start time the lock file at path records, 0
// when it records none.
func readHolder(path string) (int, string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, ""
	}
	fs := strings.Fields(string(b))
	if len(fs) != 2 {
		return 0, ""
	}
	pid, err := strconv.Atoi(fs[0])
	if err != nil || pid <= 0 {
		return 0, ""
	}
	return pid, fs[1]
}

// Release gives the lock up.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the descriptor releases the flock
	l.f = nil
	return err
}

// bareErr is err without the operation and path a PathError repeats: the
// message names the directory itself.
func bareErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
