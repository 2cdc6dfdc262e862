package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCountersNotInFile: an ibnetdiscover dump carries no counters. The
// simulator built from it answers PortCounters with zeros; those zeros
// were shown as read ("2228 ports read ...: no port over threshold").
// counters must say the file has none and decide nothing; check must
// leave the counter checks not run, saying why, and read no port.
func TestCountersNotInFile(t *testing.T) {
	dgx := corpusPath(t, "dgx-ndr-2025.ibnetdiscover")
	code, out, stderr := run("counters", "--sim="+dgx)
	if code != ExitUndecided || strings.Contains(out, "no port over threshold") || !strings.Contains(stderr, "carries no counters") {
		t.Errorf("counters --sim dgx: exit %d (want %d), stdout %q, stderr %q: want the file's lack of counters said, no verdict", code, ExitUndecided, out, stderr)
	}
	if n := strings.Count(strings.TrimSpace(stderr), "\n"); n > 0 {
		t.Errorf("want one line on stderr, got:\n%s", stderr)
	}
	code, out, stderr = run("check", "--sim="+dgx, "--json")
	if code == ExitUndecided {
		t.Fatalf("check: exit %d: %s", code, stderr)
	}
	var doc struct {
		Fabric struct {
			PortsRead int `json:"ports_counters_read"`
		} `json:"fabric"`
		Skipped []struct {
			Check  string `json:"check"`
			Reason string `json:"reason"`
		} `json:"checks_skipped"`
		CountersNotRead string `json:"counters_not_read"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Fabric.PortsRead != 0 {
		t.Errorf("check read the counters of %d ports from a file that has none", doc.Fabric.PortsRead)
	}
	if !strings.Contains(doc.CountersNotRead, "carries no counters") {
		t.Errorf("counters_not_read = %q, want why", doc.CountersNotRead)
	}
	skipped := map[string]string{}
	for _, s := range doc.Skipped {
		skipped[s.Check] = s.Reason
	}
	if r := skipped["counters.errors"]; !strings.Contains(r, "carries no counters") {
		t.Errorf("counters.errors skipped for %q, want the file's lack of counters", r)
	}
	_, out, _ = run("check", "--sim="+dgx, "--no-color")
	if !strings.Contains(out, "Counters:") || !strings.Contains(out, "carries no counters") {
		t.Errorf("check's header does not say the counters were not in the file:\n%s", out)
	}
}
