package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCountersSaysWhatItsThresholdsHide (trial A6): with LinkDownedCounter
// 5 on a spine port, SymbolErrorCounter 9 on a leaf port and PortRcvErrors
// 3 on a host, ibqueryerrors (its shipped error_thresholds all commented:
// thresholds 0) flagged them and exited 1 while counters said "no port over
// threshold" and exited 0, without saying which thresholds hid them. The
// thresholds are not changed; the summary names them and their source and
// counts the ports with non-zero error counters within them (--all lists
// them), and the JSON summary counts them.
func TestCountersSaysWhatItsThresholdsHide(t *testing.T) {
	topo := chkTopology(t)
	faults := writeFile(t, "below.faults", "counter spine01/3 LinkDownedCounter=5\ncounter leaf01/1 SymbolErrorCounter=9\ncounter gpu002/1 PortRcvErrors=3\n")
	code, out, stderr := run("counters", "--sim="+topo, "--faults", faults, "--no-color")
	if code != ExitHealthy {
		t.Fatalf("exit %d, want 0 (the thresholds are not changed)\n%s\n%s", code, out, stderr)
	}
	for _, want := range []string{
		"no port over threshold",
		"3 ports have non-zero error counters within ibdoctor's default thresholds (LinkDownedCounter 10 on 1 port, PortRcvErrors 10 on 1 port, SymbolErrorCounter 10 on 1 port",
		"ibqueryerrors with its shipped error_thresholds file (every line commented) flags any non-zero count",
		"--all lists them",
	} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	thr := writeFile(t, "thr.txt", "LinkDownedCounter=20\n")
	_, out, _ = run("counters", "--sim="+topo, "--faults", faults, "--no-color", "--thresholds", thr)
	if want := "within the thresholds of " + thr; !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
		t.Errorf("with --thresholds: missing %q in:\n%s", want, out)
	}
	_, out, _ = run("counters", "--sim="+topo, "--faults", faults, "--json")
	var d struct {
		Summary map[string]int `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if d.Summary["ports_within_threshold_with_errors"] != 3 {
		t.Errorf("JSON summary %v: want ports_within_threshold_with_errors 3", d.Summary)
	}
}
