package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestTopUnknownIncreaseAndNarrowRead: switch two's PortCountersExtended
// never answers (its ports are read from the 16/32-bit PortCounters) and
// port 1's SymbolErrorCounter is stuck at 65535 in both readings. Before,
// top showed switch two/1 with ERR/s "0" and verdict "-" (a clean port),
// and said "1 ports could not be read" although every port was read, two
// of them from the narrower attribute. Now the unknown increase is "?"
// with check's undecided verdict, the two ports are marked as read from
// PortCounters, and nothing is counted as not read.
func TestTopUnknownIncreaseAndNarrowRead(t *testing.T) {
	topo := writeFile(t, "fabric.net", countersNet)
	faults := writeFile(t, "faults.txt", unknownFaults)
	args := []string{"top", "--sim=" + topo, "--faults", faults, "-n", "1s", "--once", "--timeout", deadTimeout, "--retries", "0", "--no-color"}
	_, out, stderr := run(args...)
	rows := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 2 && strings.HasPrefix(l, " switch") {
			rows[f[0]+" "+f[1]] = l
		}
	}
	r1 := rows["switch two/1"]
	if f := strings.Fields(r1); len(f) < 7 || f[6] != "?" || !strings.Contains(r1, "undecided") {
		t.Errorf("switch two/1: want ERR/s ? and the undecided verdict:\n%s", out)
	}
	for _, k := range []string{"switch two/1", "switch two/2"} {
		if !strings.Contains(rows[k], "PortCounters only") {
			t.Errorf("%s not marked as read from PortCounters only:\n%s", k, out)
		}
	}
	if strings.Contains(rows["switch one/1"], "PortCounters only") || strings.Contains(rows["switch one/1"], "?") {
		t.Errorf("switch one/1 read in full, rendered as narrow or unknown: %q", rows["switch one/1"])
	}
	if strings.Contains(stderr, "could not be read") || strings.Contains(stderr, "Could not read") {
		t.Errorf("a port read from PortCounters counted as not read:\n%s", stderr)
	}
	if !strings.Contains(stderr, "PortCountersExtended") || !strings.Contains(stderr, "were read instead") {
		t.Errorf("the unanswered PortCountersExtended is not said:\n%s", stderr)
	}

	_, out, _ = run(append(args, "--json")...)
	var doc struct {
		NotRead []string `json:"not_read"`
		Narrow  []string `json:"read_narrow"`
		Ports   []struct {
			Node            string   `json:"node"`
			Port            int      `json:"port"`
			ErrorsPerSecond *float64 `json:"errors_per_second"`
			Counters        string   `json:"counters"`
			Verdict         string   `json:"verdict"`
			Check           string   `json:"check"`
			Unknown         string   `json:"unknown"`
		} `json:"ports"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(doc.NotRead) != 0 || len(doc.Narrow) != 1 {
		t.Errorf("not_read %q, read_narrow %q: want none and the one PMA", doc.NotRead, doc.Narrow)
	}
	for _, p := range doc.Ports {
		narrow := p.Node == "switch two"
		if narrow != (p.Counters == "PortCounters") {
			t.Errorf("%s/%d: counters %q", p.Node, p.Port, p.Counters)
		}
		if p.Node == "switch two" && p.Port == 1 {
			if p.ErrorsPerSecond != nil || p.Verdict != "undecided" || p.Check != "counters.errors" || !strings.Contains(p.Unknown, "stuck at its maximum") {
				t.Errorf("switch two/1: %+v; want errors_per_second null, undecided counters.errors, the reason", p)
			}
		} else if p.ErrorsPerSecond == nil {
			t.Errorf("%s/%d: errors_per_second null", p.Node, p.Port)
		}
	}
}
