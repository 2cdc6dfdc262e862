package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestLinksMarksInactive: a link physically up but left in Init or
// Armed carries no data (check: link.down, error; routes over it are
// lost). Trial A2: 'links' listed it "Init/LinkUp" with the MARK column
// empty and "none below its rate", exit 0: an operator reading links
// did not see it. It is marked, counted and exits 1.
func TestLinksMarksInactive(t *testing.T) {
	topo, _ := simTopology(t)
	for _, c := range []struct{ fault, state string }{{"init leaf03/4\n", "Init"}, {"armed leaf03/4\n", "Armed"}} {
		faults := writeFile(t, "faults", c.fault)
		code, out, stderr := run("links", "--sim="+topo, "--faults", faults, "--no-color")
		if code != ExitFindings {
			t.Errorf("%s: exit %d, want %d\n%s", c.state, code, ExitFindings, stderr)
		}
		var row string
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) > 2 && f[0] == "leaf03" && f[1] == "4" {
				row = l
			}
		}
		want := "NOT ACTIVE: " + c.state + ": no data passes until the subnet manager activates it (check: link.down)"
		if !strings.HasSuffix(strings.TrimSpace(row), want) {
			t.Errorf("%s: leaf03/4's row %q lacks the mark %q\n%s", c.state, row, want, out)
		}
		if !strings.Contains(out, "1 not Active (no data passes)") || strings.Contains(out, "none below its rate") && !strings.Contains(out, "1 not Active") {
			t.Errorf("%s: summary:\n%s", c.state, out)
		}
		code, js, _ := run("links", "--sim="+topo, "--faults", faults, "--json")
		var doc struct {
			Links []struct {
				A         *linkEndJSON
				NotActive string `json:"not_active"`
			}
		}
		if err := json.Unmarshal([]byte(js), &doc); err != nil || code != ExitFindings {
			t.Fatalf("%s: --json exit %d: %v", c.state, code, err)
		}
		n := 0
		for _, l := range doc.Links {
			if l.NotActive != "" {
				n++
				if l.NotActive != c.state || l.A.Node != "leaf03" || l.A.Port != 4 {
					t.Errorf("%s: --json marks %+v %q", c.state, l.A, l.NotActive)
				}
			}
		}
		if n != 1 {
			t.Errorf("%s: --json marks %d links not active, want 1", c.state, n)
		}
	}
}
