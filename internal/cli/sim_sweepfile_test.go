package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckSimSweepFabricFile: a sweep's own fabric-<ns>.json.gz is
// ibdoctor JSON, gzip-compressed; check --sim reads it (trial T10: refused
// as "binary data ... not a fabric file") and says that its tables and
// counters, which the sweep kept in gate.idx, were not read.
func TestCheckSimSweepFabricFile(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	if code, _, stderr := run("sweep", "--sim", "--state-dir", state, "--out", filepath.Join(dir, "r.json")); code == ExitUndecided {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	files, _ := filepath.Glob(filepath.Join(state, "fabric-*.json.gz"))
	if len(files) != 1 {
		t.Fatalf("state dir: fabric files %v", files)
	}
	code, out, stderr := run("check", "--sim="+files[0])
	if code == ExitUndecided {
		t.Fatalf("check --sim=%s: exit %d: %s", files[0], code, stderr)
	}
	if !strings.Contains(out, "Fabric:    267 nodes") {
		t.Errorf("not the sweep's fabric:\n%s", out)
	}
	if !strings.Contains(out, "(a sweep's fabric, ibdoctor JSON) carries no counters: the sweep kept them in gate.idx") {
		t.Errorf("Counters line does not say where the sweep's counters are:\n%s", out)
	}
	if !strings.Contains(stderr, "this is not the sweep's verdict") {
		t.Errorf("stderr does not say the re-judgement is not the sweep's: %q", stderr)
	}
}
