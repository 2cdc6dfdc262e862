package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestThresholdsBinaryFile (trial E9): a binary file given to --thresholds
// echoed its first bytes ("thresholds line 1: \"\x87\x8f\x12!n\xaa…\" is not
// Name=value") where --sim and --faults say it is binary data. With or
// without a NUL byte, it is one line naming the flag and the file, saying
// binary data, and no raw bytes.
func TestThresholdsBinaryFile(t *testing.T) {
	dir := t.TempDir()
	withNUL := filepath.Join(dir, "nul.dat")
	noNUL := filepath.Join(dir, "high.dat")
	if err := os.WriteFile(withNUL, []byte("\x87\x8f\x12!n\xaa\x00\x01\x02\nmore\xff\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(noNUL, []byte("\x87\x8f\x12!n\xaa\xc3\x28=\xfe\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"check", "counters"} {
		for _, path := range []string{withNUL, noNUL} {
			code, _, stderr := run(cmd, "--sim", "--thresholds", path)
			if code != ExitUndecided || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("%s %s: exit %d, want 2 and one line:\n%s", cmd, path, code, stderr)
			}
			for _, w := range []string{"--thresholds " + path, "binary data", "Name=value"} {
				if !strings.Contains(stderr, w) {
					t.Errorf("%s %s: lacks %q:\n%s", cmd, path, w, stderr)
				}
			}
			if strings.Contains(stderr, `\x`) || strings.ContainsRune(stderr, 0xFFFD) {
				t.Errorf("%s %s: echoes the file's bytes:\n%s", cmd, path, stderr)
			}
		}
	}
}
