package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCheckDeadSwitchOneLine: the sample's spine03 does not answer; it is
// seen from ports 49-56 of each of the 8 leaves. The text says so in one
// line (before: 64 lines, 20 shown); --json keeps the 64 entries.
func TestCheckDeadSwitchOneLine(t *testing.T) {
	faults := writeFile(t, "faults", "dead spine03\n")
	args := []string{"check", "--sim", "--faults", faults, "--timeout", deadTimeout, "--retries", "0", "--checks", "topology.missing-hca"}
	_, out, stderr := run(append(args, "--no-color")...)
	_, list, ok := strings.Cut(out, "Could not read (64):\n")
	if !ok {
		t.Fatalf("no 'Could not read (64):'\n%s\n%s", out, stderr)
	}
	want := "  NodeInfo at 64 paths behind ports 49-56 of leaf01, leaf02, leaf03, leaf04, leaf05, leaf06, leaf07, leaf08: no response"
	if lines := strings.Split(strings.TrimRight(list, "\n"), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], want) {
		t.Errorf("unread list:\n%s\nwant one line starting %q", list, want)
	}
	_, js, _ := run(append(args, "--json")...)
	var d struct {
		Unreached []struct{ What, Where string } `json:"unreached"`
	}
	if err := json.Unmarshal([]byte(js), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Unreached) != 64 || !strings.Contains(d.Unreached[0].Where, "(behind leaf01 port 49)") {
		t.Errorf("--json: %d unreached entries, want 64 with their paths: %+v", len(d.Unreached), d.Unreached[:min(2, len(d.Unreached))])
	}
}
