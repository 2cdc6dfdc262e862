// Package outfile writes ibdoctor's output files — the JSON report, the
// Prometheus textfile, the state directory's files — so that a reader
// (node_exporter, a gate, a script) sees the old file or the new one,
// never a mix, and so that a path naming something other than a regular
// file is refused instead of being replaced by one.
package outfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Stdout is the path that means standard output.
const Stdout = "-"

// maxLinks bounds how many symlinks Resolve follows (as the kernel's
// ELOOP limit does), so a loop ends in an error.
const maxLinks = 40

// Write writes data to the output path names: "-" is stdout (w);
// anything else is written with WriteAtomic.
func Write(path string, data []byte, stdout io.Writer) error {
	if path == Stdout {
		if _, err := stdout.Write(data); err != nil {
			return fmt.Errorf("writing to standard output: %w", err)
		}
		return nil
	}
	return WriteAtomic(path, data)
}

// WriteAtomic writes data to path: symlinks are followed to their final
// target, the target must be a regular file or absent (a FIFO, device,
// socket or directory is refused), its folder is created if needed, and
// the data goes to a temporary file in that folder which is synced and
// then renamed over the target. An existing file keeps its permissions;
// a new one is 0644 (node_exporter must read it).
func WriteAtomic(path string, data []byte) error {
	return WriteAtomicFunc(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteAtomicFunc is WriteAtomic with the data written by write, through
// a buffer, so a big document (a 49k-node fabric) need not be whole in
// memory first. An error from write leaves the target as it was.
func WriteAtomicFunc(path string, write func(io.Writer) error) error {
	st, err := Stage(path, write)
	if err != nil {
		return err
	}
	return st.Commit()
}

// Staged is a file written and synced under a temporary name beside its
// target, not yet renamed over it: Commit publishes it, Abort removes it.
// A command stages an output whose encoding can fail before it replaces
// other state, and publishes it after, without holding its bytes.
type Staged struct {
	path, final, tmp string
	dir              string
}

// Stage writes write's data to a temporary file beside path's target
// (resolved and refused as WriteAtomic does), synced and closed. An error
// from write leaves no temporary file and the target as it was.
func Stage(path string, write func(io.Writer) error) (*Staged, error) {
	final, mode, err := Resolve(path)
	if err != nil {
		return nil, err
	}
	return stage(path, final, mode, write)
}

// StageHere is Stage for a file of a folder's own (a state directory's
// files, which name each other by relative name): a symlink at path is
// not followed but replaced by the new file, so writing never reaches
// through it into another folder. A folder, FIFO, device or socket at
// path is refused as Stage refuses it.
func StageHere(path string, write func(io.Writer) error) (*Staged, error) {
	mode := fs.FileMode(0o644)
	st, err := os.Lstat(path)
	switch {
	case err == nil && st.Mode().IsRegular():
		mode = st.Mode().Perm()
	case err == nil && st.Mode()&fs.ModeSymlink != 0:
		// Replaced by a regular file: the link's target is not ours.
	case err == nil:
		if _, _, err := Resolve(path); err != nil {
			return nil, err
		}
	case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	return stage(path, path, mode, write)
}

// WriteHere is WriteAtomic through StageHere.
func WriteHere(path string, write func(io.Writer) error) error {
	st, err := StageHere(path, write)
	if err != nil {
		return err
	}
	return st.Commit()
}

func stage(path, final string, mode fs.FileMode, write func(io.Writer) error) (*Staged, error) {
	dir := filepath.Dir(final)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("writing %s: creating its folder: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(final)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	name := tmp.Name()
	fail := func(err error) (*Staged, error) {
		tmp.Close()
		os.Remove(name)
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	bw := bufio.NewWriterSize(tmp, 1<<16)
	if err := write(bw); err != nil {
		return fail(err)
	}
	if err := bw.Flush(); err != nil {
		return fail(err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return fail(err)
	}
	// Sync before the rename: after a crash the name points at the
	// whole new file or the old one, never at an empty one.
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(name)
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	return &Staged{path: path, final: final, tmp: name, dir: dir}, nil
}

// Commit renames the staged file over its target. It is done once; a
// failed rename removes the temporary file.
func (s *Staged) Commit() error {
	if s.tmp == "" {
		return fmt.Errorf("writing %s: already committed or aborted", s.path)
	}
	name := s.tmp
	s.tmp = ""
	if err := os.Rename(name, s.final); err != nil {
		os.Remove(name)
		return fmt.Errorf("writing %s: %w", s.path, err)
	}
	return syncDir(s.dir)
}

// Abort removes the staged file, leaving the target as it was; after
// Commit it does nothing.
func (s *Staged) Abort() {
	if s != nil && s.tmp != "" {
		os.Remove(s.tmp)
		s.tmp = ""
	}
}

// Resolve follows path's symlinks to the file that would be written and
// returns it with the mode to write it with. It refuses anything that is
// not a regular file, with one line saying what it is and what to give.
func Resolve(path string) (string, fs.FileMode, error) {
	p := path
	for range maxLinks {
		st, err := os.Lstat(p)
		// Under a file (ENOTDIR) the target is absent too: creating its
		// folder fails, and CheckWritable names the file in the way.
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return p, 0o644, nil
		}
		if err != nil {
			return "", 0, fmt.Errorf("writing %s: %w", path, err)
		}
		m := st.Mode()
		switch {
		case m&fs.ModeSymlink != 0:
			to, err := os.Readlink(p)
			if err != nil {
				return "", 0, fmt.Errorf("writing %s: %w", path, err)
			}
			if !filepath.IsAbs(to) {
				to = filepath.Join(filepath.Dir(p), to)
			}
			p = to
			continue
		case m.IsRegular():
			return p, m.Perm(), nil
		}
		what := "not a regular file"
		switch {
		case m.IsDir():
			what = "a directory"
		case m&fs.ModeNamedPipe != 0:
			what = "a named pipe (FIFO)"
		case m&fs.ModeDevice != 0:
			what = "a device"
		case m&fs.ModeSocket != 0:
			what = "a socket"
		}
		if p != path {
			what += " (" + p + ")"
		}
		return "", 0, &NotFileError{Path: path, What: what}
	}
	return "", 0, fmt.Errorf("writing %s: too many levels of symbolic links", path)
}

// NotFileError is an output path whose target is no regular file (a
// directory, a FIFO, a device): replacing it would clobber what is not a
// file. The fix it gives is a file path; a flag that takes "-" adds that
// (OrStdout), the others do not offer what they refuse.
type NotFileError struct {
	Path string
	What string // "a directory", "a named pipe (FIFO)", ...
}

func (e *NotFileError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file: give a file path (it is replaced atomically)", e.Path, e.What)
}

// OrStdout adds, to a NotFileError of an output that takes "-", that "-"
// writes to standard output; other errors are returned as they are.
func OrStdout(err error) error {
	var nf *NotFileError
	if errors.As(err, &nf) {
		return fmt.Errorf("%w, or - for standard output", err)
	}
	return err
}

// CheckWritable says, before any work is done, whether path can be
// written as Stage writes it: its target is a regular file or absent
// (Resolve), and the nearest folder on its way that exists is a folder
// this process can create a file in, tried with an empty temporary file
// removed at once (permissions alone do not say it: root on /proc, a
// read-only mount). A command checks its outputs with it so that it
// refuses them before it works, not after.
func CheckWritable(path string) error {
	final, _, err := Resolve(path)
	if err != nil {
		return err
	}
	const fix = "give a path in a folder this user can write"
	dir := filepath.Dir(final)
	for {
		st, err := os.Stat(dir)
		if err == nil {
			if !st.IsDir() {
				return fmt.Errorf("%s: %s is a file, not a folder: %s", path, dir, fix)
			}
			break
		}
		parent := filepath.Dir(dir)
		if (!errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR)) || parent == dir {
			return fmt.Errorf("%s: cannot look at %s (%v): %s", path, dir, bareErr(err), fix)
		}
		dir = parent
	}
	f, err := os.CreateTemp(dir, ".ibdoctor-probe-*")
	if err != nil {
		return fmt.Errorf("%s: cannot create files in %s (%v): %s", path, dir, bareErr(err), fix)
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// bareErr is err without the file name a PathError repeats (a probe's
// temporary name means nothing to the reader).
func bareErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}

// RemoveStale removes the temporaries Stage left beside path's target
// (".NAME.tmp-*") when a writer was killed before renaming them: only
// regular files of that pattern, last written before before (when the
// caller took the lock that a writer of path holds), so a writer still
// staging is not touched. A SIGKILLed cron sweep otherwise leaked one
// report-sized file per kill beside --out (trial B12).
func RemoveStale(path string, before time.Time) {
	if path == "" || path == Stdout {
		return
	}
	final, _, err := Resolve(path)
	if err != nil {
		return
	}
	dir, prefix := filepath.Dir(final), "."+filepath.Base(final)+".tmp-"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), prefix) || !e.Type().IsRegular() {
			continue
		}
		if st, err := e.Info(); err == nil && st.Mode().IsRegular() && st.ModTime().Before(before) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
