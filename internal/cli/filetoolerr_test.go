package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// A dump whose own tool recorded a timeout (switchib-sx6012-mixed-2016's
// line 1: DR path 0,1,1,31 timed out) is not a complete fabric: the report
// lists that path as unreached, says complete false, and with nothing at
// or above --fail-on check cannot vouch for it (exit 2); discover lists
// it and exits partial.
func TestFileToolErrorIsUnreached(t *testing.T) {
	f := corpusPath(t, "switchib-sx6012-mixed-2016.ibnetdiscover")
	code, out, stderr := run("check", "--json", "--fail-on", "critical", "--sim="+f)
	if code != ExitUndecided {
		t.Errorf("check --fail-on critical: exit %d, want %d (could not decide): %s", code, ExitUndecided, stderr)
	}
	var doc struct {
		Complete  bool `json:"complete"`
		Unreached []struct {
			What, Where, Reason string
		} `json:"unreached"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Complete {
		t.Errorf("complete: true for a file whose tool timed out at 0,1,1,31")
	}
	found := false
	for _, u := range doc.Unreached {
		if strings.Contains(u.Where, "path 0,1,1,31") && strings.Contains(u.Reason, "per the file's own error line") && u.What == "NodeInfo" {
			found = true
		}
	}
	if !found {
		t.Errorf("no unreached entry for path 0,1,1,31 per the file's error line: %+v", doc.Unreached)
	}
	code, out, _ = run("check", "--sim="+f)
	if code != ExitFindings || !strings.Contains(out, "Reached:   1 thing could not be read") {
		t.Errorf("check: exit %d, want %d and a Reached line naming 1 thing:\n%s", code, ExitFindings, out)
	}
	code, out, _ = run("discover", "--sim="+f)
	if code != ExitPartial || strings.Contains(out, "Everything answered") || !strings.Contains(out, "NodeInfo at path 0,1,1,31 (behind SwitchIB Mellanox Technologies port 31)") {
		t.Errorf("discover: exit %d, want %d and the path listed as not reached:\n%s", code, ExitPartial, out)
	}
}
