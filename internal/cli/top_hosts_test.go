package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestTopHostsWatchesSwitchEnd (trial G4): top --hosts watches both ends
// of each host link. The switch port facing gpu005 mlx5_1 (leaf02/2)
// takes 100 symbol errors a second; before, --hosts showed the HCA ports
// only, all clean, and the receive side of the host's uplink was not on
// the screen at all.
func TestTopHostsWatchesSwitchEnd(t *testing.T) {
	faults := writeFile(t, "faults.txt", "counter leaf02/2 SymbolErrorCounter=+100/s\n")
	code, out, stderr := run("top", "--sim", "--faults", faults, "-n", "300ms", "--once", "--json", "--hosts", "gpu005")
	if code != ExitHealthy && code != ExitFindings {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Watched int `json:"ports_watched"`
		Ports   []struct {
			Node   string   `json:"node"`
			Port   int      `json:"port"`
			FarEnd string   `json:"far_end"`
			Errs   *float64 `json:"errors_per_second"`
			Check  string   `json:"check"`
		} `json:"ports"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, firstLines(out, 20))
	}
	hcas, switches := 0, 0
	var leaf string
	for _, p := range doc.Ports {
		switch {
		case strings.HasPrefix(p.Node, "gpu005 "):
			hcas++
		case strings.HasPrefix(p.FarEnd, "gpu005 "):
			switches++
			if p.Node == "leaf02" && p.Port == 2 {
				leaf = p.Check
				if p.Errs == nil || *p.Errs <= 0 {
					t.Errorf("leaf02/2: errors per second %v, want > 0", p.Errs)
				}
			}
		default:
			t.Errorf("%s/%d (far end %s) is not a port of gpu005's links", p.Node, p.Port, p.FarEnd)
		}
	}
	if hcas == 0 || switches != hcas {
		t.Errorf("%d HCA ports and %d switch ports facing them watched; want both ends of every link", hcas, switches)
	}
	if leaf != "counters.errors" {
		t.Errorf("leaf02/2 not watched or not judged by counters.errors (check %q)", leaf)
	}
}
