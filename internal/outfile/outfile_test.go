package outfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestWriteCreatesParentsAndMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a", "b", "report.json")
	if err := Write(path, []byte("one"), nil); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "one" {
		t.Fatalf("read %q, %v", got, err)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o644 {
		t.Errorf("new file mode %v, want 0644", st.Mode().Perm())
	}
	// An existing file keeps the mode the operator gave it.
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("two"), nil); err != nil {
		t.Fatal(err)
	}
	st, _ = os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("rewritten file mode %v, want 0600 kept", st.Mode().Perm())
	}
	noTemps(t, filepath.Dir(path))
}

func TestWriteDashIsStdout(t *testing.T) {
	var b bytes.Buffer
	if err := Write("-", []byte("x\n"), &b); err != nil {
		t.Fatal(err)
	}
	if b.String() != "x\n" {
		t.Errorf("stdout got %q", b.String())
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error(`"-" created a file named -`)
	}
}

// TestWriteFollowsSymlink: a symlink stays a symlink and its target gets
// the data, also through a chain and a relative link, and a dangling link
// creates its target.
func TestWriteFollowsSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real", "report.json")
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(target, []byte("old"), 0o644)
	if err := os.Symlink("real/report.json", filepath.Join(dir, "mid")); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(filepath.Join(dir, "mid"), link); err != nil {
		t.Fatal(err)
	}
	if err := Write(link, []byte("new"), nil); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("link replaced by a regular file: %v %v", st.Mode(), err)
	}
	if got, _ := os.ReadFile(target); string(got) != "new" {
		t.Errorf("target has %q", got)
	}
	noTemps(t, dir)
	noTemps(t, filepath.Dir(target))

	dangling := filepath.Join(dir, "dangling.prom")
	os.Symlink("textfile/ibdoctor.prom", dangling)
	if err := Write(dangling, []byte("p"), nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "textfile", "ibdoctor.prom")); string(got) != "p" {
		t.Errorf("dangling link's target has %q", got)
	}

	loop := filepath.Join(dir, "loop")
	os.Symlink("loop", loop)
	if err := Write(loop, []byte("x"), nil); err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("symlink loop: %v", err)
	}
}

// TestWriteRefusesSpecialFiles: a FIFO, a device or a directory is
// refused with one line naming the path, and is left as it was.
func TestWriteRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	linkToNull := filepath.Join(dir, "null")
	os.Symlink("/dev/full", linkToNull)
	for _, c := range []struct{ path, want string }{
		{fifo, "named pipe"},
		{"/dev/full", "device"},
		{linkToNull, "device"},
		{dir, "directory"},
	} {
		before, _ := os.Lstat(c.path)
		err := Write(c.path, []byte("x"), nil)
		if err == nil {
			t.Errorf("%s: written", c.path)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, c.want) || !strings.Contains(msg, c.path) || strings.Contains(msg, "\n") {
			t.Errorf("%s: error %q, want one line naming the path and %q", c.path, msg, c.want)
		}
		after, _ := os.Lstat(c.path)
		if before.Mode() != after.Mode() {
			t.Errorf("%s: mode changed %v -> %v", c.path, before.Mode(), after.Mode())
		}
	}
	noTemps(t, dir)
}

func TestWriteUnwritableDir(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes anywhere")
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o555)
	defer os.Chmod(dir, 0o755)
	err := Write(filepath.Join(dir, "r.json"), []byte("x"), nil)
	if err == nil || !strings.Contains(err.Error(), "r.json") {
		t.Errorf("got %v", err)
	}
}

func noTemps(t *testing.T, dir string) {
	t.Helper()
	es, _ := os.ReadDir(dir)
	for _, e := range es {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

// TestWriteAtomic has a reader poll a file while it is rewritten with
// two different megabytes: every read sees one whole version, never a
// mix or a short file, and no temporary file is left behind.
func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.json")
	versions := [][]byte{bytes.Repeat([]byte("a"), 1<<20), bytes.Repeat([]byte("b"), 1<<20)}
	if err := WriteAtomic(path, versions[0]); err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		for i := range 40 {
			if err := WriteAtomic(path, versions[i%2]); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	reads := 0
	for finished := false; !finished; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			finished = true
		default:
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		reads++
		if !bytes.Equal(got, versions[0]) && !bytes.Equal(got, versions[1]) {
			t.Fatalf("read %d: %d bytes, a mix or a partial write", reads, len(got))
		}
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
	es, _ := os.ReadDir(dir)
	if len(es) != 1 {
		t.Errorf("files left: %v", es)
	}
	t.Logf("%d reads during 40 rewrites", reads)
}

// TestWriteAtomicFuncError: a writer that fails half way leaves the old
// file whole and no temporary file; one that succeeds replaces it with
// everything it wrote, past the buffer's size.
func TestWriteAtomicFuncError(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fabric.json")
	if err := WriteAtomic(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("encoding failed")
	err := WriteAtomicFunc(path, func(w io.Writer) error {
		w.Write(bytes.Repeat([]byte("x"), 1<<17))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Fatalf("file is %d bytes after a failed write", len(got))
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Fatalf("files left: %v", es)
	}
	big := bytes.Repeat([]byte("0123456789"), 20000)
	if err := WriteAtomicFunc(path, func(w io.Writer) error {
		for i := 0; i < len(big); i += 777 {
			if _, err := w.Write(big[i:min(i+777, len(big))]); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, big) {
		t.Fatalf("file is %d bytes, want %d", len(got), len(big))
	}
}

// TestStageCommitAbort: a staged file leaves the target as it was until
// Commit renames it over it (keeping the target's permissions); Abort
// removes it and leaves the target alone; a second Commit is refused.
func TestStageCommitAbort(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.json")
	if err := WriteAtomic(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("new "), 1<<15)
	st, err := Stage(path, func(w io.Writer) error { _, err := w.Write(body); return err })
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Fatalf("target is %d bytes before Commit", len(got))
	}
	if es, _ := os.ReadDir(dir); len(es) != 2 {
		t.Fatalf("want the target and one staged file, have %v", es)
	}
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, body) {
		t.Fatalf("target is %d bytes after Commit, want %d", len(got), len(body))
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the old file's 0600", fi.Mode().Perm())
	}
	noTemps(t, dir)
	if err := st.Commit(); err == nil {
		t.Error("a second Commit succeeded")
	}
	st.Abort() // after Commit: nothing

	st, err = Stage(path, func(w io.Writer) error { _, err := w.Write([]byte("never")); return err })
	if err != nil {
		t.Fatal(err)
	}
	st.Abort()
	if got, _ := os.ReadFile(path); !bytes.Equal(got, body) {
		t.Fatalf("Abort changed the target (%d bytes)", len(got))
	}
	noTemps(t, dir)

	boom := errors.New("encoding failed")
	if _, err := Stage(path, func(w io.Writer) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	noTemps(t, dir)
	if _, err := Stage(dir, func(io.Writer) error { return nil }); err == nil {
		t.Error("staged over a directory")
	}
}

// TestCheckWritable: a path under a file, or in a folder no file can be
// created in, is refused naming that folder and the fix; a missing
// folder under a writable one is accepted (Stage creates it) and the
// probe leaves nothing behind.
func TestCheckWritable(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(dir, "new", "sub", "x"), filepath.Join(dir, "x"), file} {
		if err := CheckWritable(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Errorf("the probe left %d entries in %s, want 1 (f)", len(es), dir)
	}
	for _, p := range []string{filepath.Join(file, "x"), filepath.Join(file, "a", "x")} {
		err := CheckWritable(p)
		if err == nil || !strings.Contains(err.Error(), file+" is a file, not a folder") || !strings.Contains(err.Error(), "give a path") {
			t.Errorf("%s: %v", p, err)
		}
	}
	if st, err := os.Stat("/proc/version"); err == nil && st.Mode().IsRegular() {
		if err := CheckWritable("/proc/version"); err == nil || !strings.Contains(err.Error(), "cannot create files in /proc") {
			t.Errorf("/proc/version: %v", err)
		}
	}
}

// TestStageHereReplacesLink: StageHere replaces a symlink at its path by
// the new file and leaves the link's target as it was; a folder there is
// refused as Stage refuses it.
func TestStageHereReplacesLink(t *testing.T) {
	dir := t.TempDir()
	target, link := filepath.Join(dir, "target"), filepath.Join(dir, "link")
	os.WriteFile(target, []byte("theirs"), 0o600)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteHere(link, func(w io.Writer) error { _, err := w.Write([]byte("ours")); return err }); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(target); string(got) != "theirs" {
		t.Errorf("target written through the link: %q", got)
	}
	if st, err := os.Lstat(link); err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o644 {
		t.Errorf("link after WriteHere: %v %v, want a regular 0644 file", st, err)
	}
	if got, _ := os.ReadFile(link); string(got) != "ours" {
		t.Errorf("new file holds %q", got)
	}
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	if _, err := StageHere(sub, func(io.Writer) error { return nil }); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("StageHere over a folder: %v", err)
	}
}

// TestRemoveStale (trial B12): a killed writer's temporary beside the
// target, older than the cut-off, is removed; a newer one, one of
// another file, and a folder of the pattern are left.
func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json")
	old := time.Now().Add(-time.Hour)
	mk := func(name string, at time.Time) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte("x"), 0o644)
		os.Chtimes(p, at, at)
		return p
	}
	stale := mk(".r.json.tmp-1", old)
	fresh := mk(".r.json.tmp-2", time.Now().Add(time.Minute))
	other := mk(".p.prom.tmp-3", old)
	os.Mkdir(filepath.Join(dir, ".r.json.tmp-dir"), 0o755)
	RemoveStale(path, time.Now())
	if _, err := os.Stat(stale); err == nil {
		t.Error("the stale temporary stayed")
	}
	for _, p := range []string{fresh, other, filepath.Join(dir, ".r.json.tmp-dir")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
}
