package report

import (
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
)

// TestFindingsTableKeepsThePort: at 80 columns a title whose port comes
// after a long figure is cut before the figure, not the port (trial E5:
// "PortRcvSwitchRelayErrors = 18393494963…" hid leaf03/60, and finding 12
// had no detail block to show it). Piped, the title is whole.
func TestFindingsTableKeepsThePort(t *testing.T) {
	f := checks.Finding{
		Check: "counters.errors", Severity: checks.Info,
		Title:    "PortRcvSwitchRelayErrors = 18393494963 on leaf03/60 (to spine02/33) since the counters were last cleared",
		Entities: []checks.Entity{{Node: "leaf03", Port: 60, Role: "end"}, {Node: "spine02", Port: 33, Role: "peer"}},
	}
	var b strings.Builder
	if err := Findings(&b, Style{Width: 80}, []checks.Finding{f}, 0); err != nil {
		t.Fatal(err)
	}
	var row string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, "counters.errors") {
			row = l
		}
		if VisibleWidth(l) > 80 {
			t.Errorf("line wider than 80: %q", l)
		}
	}
	if !strings.Contains(row, "leaf03/60") || !strings.Contains(row, Ellipsis) || !strings.HasPrefix(strings.Fields(row)[3], "PortRcvSwitchRelay") {
		t.Errorf("the row does not show the port leaf03/60 after a cut title:\n%s", b.String())
	}
	b.Reset()
	Findings(&b, Style{}, []checks.Finding{f}, 0)
	if !strings.Contains(b.String(), f.Title) {
		t.Errorf("piped, the title is not whole:\n%s", b.String())
	}
}
