package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --cpuprofile and --memprofile write gzip-compressed pprof files when the
// command ends (issue 13's benchmark runs check and sweep with them), and
// refuse a target that is not a regular file, as every output does.
func TestProfileFlags(t *testing.T) {
	dir := t.TempDir()
	cpu, heap := filepath.Join(dir, "check.cpu.pprof"), filepath.Join(dir, "check.heap.pprof")
	var out, errb bytes.Buffer
	code := Main([]string{"check", "--sim", "--cpuprofile", cpu, "--memprofile", heap}, strings.NewReader(""), &out, &errb)
	if code != ExitFindings {
		t.Fatalf("exit %d, stderr %s", code, errb.String())
	}
	for _, p := range []string{cpu, heap} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 100 || b[0] != 0x1f || b[1] != 0x8b {
			t.Errorf("%s: %d bytes, not a gzip-compressed profile", filepath.Base(p), len(b))
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("left %d files in the directory, want the 2 profiles", len(ents))
	}

	errb.Reset()
	code = Main([]string{"check", "--sim", "--cpuprofile", dir}, strings.NewReader(""), &out, &errb)
	if code != ExitUndecided || !strings.Contains(errb.String(), "is a directory") {
		t.Errorf("--cpuprofile DIR: exit %d, %q", code, errb.String())
	}
}

// TestHeapProfileWanted: main keeps the runtime's heap profiling on only
// when the arguments ask for --memprofile (its sampled stacks are memory
// held for nothing otherwise), whatever the flag's place or form, and not
// for an argument after "--".
func TestHeapProfileWanted(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"check", "--json"}, false},
		{[]string{"check", "--memprofile", "h.pprof"}, true},
		{[]string{"--memprofile=h.pprof", "sweep"}, true},
		{[]string{"check", "--cpuprofile", "c.pprof"}, false},
		{[]string{"trace", "--", "--memprofile"}, false},
		{nil, false},
	} {
		if got := HeapProfileWanted(c.args); got != c.want {
			t.Errorf("HeapProfileWanted(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}
