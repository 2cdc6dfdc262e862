package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// unknownFaults: switch two's PMA never answers PortCountersExtended, so
// both samples read its ports from the 16/32-bit PortCounters, and port
// 1's SymbolErrorCounter (70000 errors) is stuck at the 16-bit field's
// 65535 both times: its increase is unknown (perf.delta), and check has
// the port undecided for counters.errors.
const unknownFaults = `counter "switch two"/1 SymbolErrorCounter=70000
drop "switch two" attr=PortCountersExtended
`

// TestCountersUnknownIncrease: an increase perf could not compute is shown
// as unknown, with the reason, in the table and the JSON: never "+0", a
// BER bound, or a port missing from the list as if clean. Before, the
// table had no row for switch two/1 ("no port over threshold"), --all
// showed "SymbolErrorCounter +0 (0/s)" and a BER "<8e-11", and the JSON
// "delta": 0.
func TestCountersUnknownIncrease(t *testing.T) {
	topo := writeFile(t, "fabric.net", countersNet)
	faults := writeFile(t, "faults.txt", unknownFaults)
	args := []string{"counters", "--sim=" + topo, "--faults", faults, "--interval", "1s", "--timeout", deadTimeout, "--retries", "0", "--no-color"}
	code, out, stderr := run(args...)
	if code != ExitPartial {
		t.Fatalf("exit %d, want %d (undecided, not clean): %s\n%s", code, ExitPartial, stderr, out)
	}
	var row string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "switch two") && strings.Contains(l, "switch one[3]") {
			row = l
		}
	}
	if row == "" {
		t.Fatalf("no row for switch two/1 (undecided):\n%s", out)
	}
	if strings.Contains(row, "SymbolErrorCounter +") || !strings.Contains(row, "SymbolErrorCounter ?") || !strings.Contains(out, "stuck at its maximum in both samples") {
		t.Errorf("switch two/1: want SymbolErrorCounter ? with the reason:\n%s", out)
	}
	if f := strings.Fields(row); !strings.Contains(row, " ? ") || strings.Contains(row, "<8e-11") {
		t.Errorf("BER of an unknown symbol-error increase: want ?, got %v", f)
	}
	if !strings.Contains(out, "1 port undecided") {
		t.Errorf("summary does not count the undecided port:\n%s", out)
	}

	code, out, stderr = run(append(args, "--json", "--all")...)
	if code != ExitPartial {
		t.Fatalf("--json: exit %d: %s", code, stderr)
	}
	var doc struct {
		Status  string         `json:"status"`
		Summary map[string]int `json:"summary"`
		Ports   []struct {
			Node      string `json:"node"`
			Port      int    `json:"port"`
			Undecided []struct {
				Check, Reason string
			} `json:"undecided"`
			Delta *struct {
				BER      *float64 `json:"ber"`
				Counters []struct {
					Name      string   `json:"name"`
					Delta     *uint64  `json:"delta"`
					PerSecond *float64 `json:"per_second"`
					Unknown   string   `json:"unknown"`
				} `json:"counters"`
			} `json:"delta"`
		} `json:"ports"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if doc.Status != "partial" || doc.Summary["ports_undecided"] != 1 {
		t.Errorf("status %q, summary %v: want partial, ports_undecided 1", doc.Status, doc.Summary)
	}
	seen := false
	for _, p := range doc.Ports {
		if p.Delta == nil {
			t.Fatalf("%s/%d: no delta", p.Node, p.Port)
		}
		for _, c := range p.Delta.Counters {
			if c.Name != "SymbolErrorCounter" {
				continue
			}
			unknown := p.Node == "switch two" && p.Port == 1
			if unknown {
				seen = true
				if c.Delta != nil || c.PerSecond != nil || !strings.Contains(c.Unknown, "stuck at its maximum") {
					t.Errorf("switch two/1 SymbolErrorCounter: delta %v per_second %v unknown %q: want null, null, the reason", c.Delta, c.PerSecond, c.Unknown)
				}
				if p.Delta.BER != nil {
					t.Errorf("switch two/1: ber %g, want null", *p.Delta.BER)
				}
				if len(p.Undecided) != 1 || p.Undecided[0].Check != "counters.errors" {
					t.Errorf("switch two/1: undecided %+v, want counters.errors", p.Undecided)
				}
			} else if c.Delta == nil || c.Unknown != "" || p.Delta.BER == nil {
				t.Errorf("%s/%d: a known increase rendered unknown: %+v", p.Node, p.Port, c)
			}
		}
	}
	if !seen {
		t.Errorf("switch two/1 not in --all")
	}
}
