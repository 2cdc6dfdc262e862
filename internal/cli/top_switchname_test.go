package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestTopSwitchNameWithComma: a node description may hold a comma
// ("leaf02, rack B"), and top --switch split its value on commas, so such
// a switch could not be named ("--switch  rack B: no node or port in the
// fabric has name  rack B"). --switch takes each value whole, as routes
// --switch does (repeat the flag for more switches), and a value with a
// comma that names no switch is a one-line error saying so.
func TestTopSwitchNameWithComma(t *testing.T) {
	const name = "leaf02, rack B"
	faults := writeFile(t, "faults", `desc leaf02 text="`+name+`"`+"\n")
	code, out, stderr := run("top", "--sim", "--faults", faults, "--once", "-n", "300ms", "--json", "--switch", name, "--switch", "spine01")
	if code != ExitHealthy && code != ExitFindings {
		t.Fatalf("top --switch %q: exit %d: %s", name, code, stderr)
	}
	var doc struct {
		Ports []struct {
			Node string `json:"node"`
		} `json:"ports"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v: %.300s", err, out)
	}
	watched := map[string]int{}
	for _, p := range doc.Ports {
		watched[p.Node]++
	}
	if watched[name] == 0 || watched["spine01"] == 0 || len(watched) != 2 {
		t.Errorf("ports watched by node: %v, want %q's and spine01's", watched, name)
	}

	code, _, stderr = run("top", "--sim", "--once", "-n", "300ms", "--switch", "leaf01,leaf02")
	if code != ExitUndecided || strings.Count(strings.TrimSpace(stderr), "\n") != 0 ||
		!strings.Contains(stderr, "--switch leaf01,leaf02: ") || !strings.Contains(stderr, "give each switch its own --switch") {
		t.Errorf("top --switch leaf01,leaf02: exit %d, want %d and one line naming the value and the fix: %s", code, ExitUndecided, stderr)
	}
}
