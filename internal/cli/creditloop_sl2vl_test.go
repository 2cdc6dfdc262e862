package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckRingFileSL2VL: 'check --sim=ring5.net --lfts ring5-minhop' runs
// on a file, which carries no SL2VL tables: the loops stay critical and
// say the tables were not read because the file has none, not that the
// simulator's every-SL-on-VL0 was read. A --faults file that plants
// SL2VL (sl2vl) is a what-if: the planted tables are read and judged.
func TestCheckRingFileSL2VL(t *testing.T) {
	args := []string{"check", "--sim=../../fixtures/ring/ring5.net", "--lfts", "../../fixtures/ring/ring5-minhop.dump_fts", "--checks", "routing.credit-loop", "--json"}
	code, out, stderr := run(args...)
	if code != ExitFindings || strings.Count(out, `"severity": "critical"`) != 2 || !strings.Contains(out, "SL2VL not read (ring5.net carries no SL2VL tables, so none were read)") {
		t.Errorf("file: exit %d\n%s\n%s", code, out, stderr)
	}
	if strings.Contains(out, "SL2VL read on") {
		t.Errorf("file: the simulator's default tables presented as read:\n%s", out)
	}
	faults := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(faults, []byte("sl2vl sw3 map=0,1,2,3,4,5,6,7,0,1,2,3,4,5,6,7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr = run(append(args, "--faults", faults)...)
	if strings.Count(out, `"severity": "warning"`) != 2 || !strings.Contains(out, "SLs spread over VLs 0..7") {
		t.Errorf("planted SL2VL: exit %d\n%s\n%s", code, out, stderr)
	}
}
