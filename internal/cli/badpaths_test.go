package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --faults and --state-dir given something that is not a file of faults
// or a directory fail in one line naming the flag, what is wrong and the
// fix, never with a Go error ("bufio.Scanner: token too long", "read
// /tmp: is a directory", "mkdir /dev/null: not a directory").
func TestBadFaultsAndStateDirPaths(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	if err := os.WriteFile(bin, append([]byte("dead spine03\n"), 0, 1, 2), 0o644); err != nil {
		t.Fatal(err)
	}
	long := filepath.Join(dir, "long")
	if err := os.WriteFile(long, []byte(strings.Repeat("a", 2<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"check", "--sim", "--faults", "/dev/zero"}, []string{"--faults /dev/zero: binary data", "docs/faults.md"}},
		{[]string{"check", "--sim", "--faults", bin}, []string{"--faults " + bin + ": binary data", "docs/faults.md"}},
		{[]string{"check", "--sim", "--faults", dir}, []string{"--faults " + dir + ": a directory", "docs/faults.md"}},
		{[]string{"check", "--sim", "--faults", long}, []string{"--faults " + long + ": line 1: longer than", "docs/faults.md"}},
		{[]string{"sweep", "--sim", "--state-dir", "/dev/null"}, []string{"--state-dir /dev/null: not a directory", "give a directory"}},
		{[]string{"sweep", "--sim", "--state-dir", file}, []string{"--state-dir " + file + ": not a directory", "give a directory"}},
		{[]string{"gate", "--sim", "--nodes", "gpu001", "--state-dir", "/dev/null"}, []string{"--state-dir /dev/null: not a directory"}},
		{[]string{"baseline", "accept", "--state-dir", "/dev/null"}, []string{"--state-dir /dev/null: not a directory"}},
		// a bare "stat nothere.json: no such file or directory" before
		{[]string{"discover", "--sim", "--diff", filepath.Join(dir, "nothere.json")}, []string{"--diff " + filepath.Join(dir, "nothere.json") + ": no such file", "ibdoctor discover --format json"}},
		{[]string{"check", "--sim", "--expect-topology", filepath.Join(dir, "nothere.json")}, []string{"--expect-topology " + filepath.Join(dir, "nothere.json") + ": no such file", "give a designed or saved fabric"}},
		// mkdir fails even for root in /proc: a bare "mkdir /proc/ibd: no such file or directory" before
		{[]string{"sweep", "--sim", "--state-dir", "/proc/ibdoctor-test"}, []string{"--state-dir /proc/ibdoctor-test: cannot create it (no such file or directory)", "give a directory"}},
		{[]string{"sweep", "--sim", "--state-dir", "/proc/ibdoctor-test/sub"}, []string{"--state-dir /proc/ibdoctor-test/sub: cannot create it", "give a directory"}},
	}
	for _, c := range cases {
		code, _, stderr := run(c.args...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		last := lines[len(lines)-1]
		if code != ExitUndecided {
			t.Errorf("%v: exit %d, want %d: %s", c.args, code, ExitUndecided, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(last, w) {
				t.Errorf("%v: %q lacks %q", c.args, last, w)
			}
		}
		for _, bad := range []string{"bufio.", "read " + dir, "mkdir ", "open /dev/null/", "open /proc/", "stat "} {
			if strings.Contains(stderr, bad) {
				t.Errorf("%v: Go error in %q", c.args, stderr)
			}
		}
	}
}
