package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
)

// TestFindingsTableKeepsWhatDiffers: trial B13. At 80 columns two
// link.down rows of a DGX fabric read "Link MF0;A09-P1-IBLEAF-01-02:MQ…"
// both: the title was cut before the only part that differs (which host
// port), UFM-style switch names taking 35 columns. The table now cuts a
// long node name of the finding's entities in its middle first, so the
// rows stay apart.
func TestFindingsTableKeepsWhatDiffers(t *testing.T) {
	leaf := "MF0;A09-P1-IBLEAF-01-02:MQM9701/U1"
	var fs []checks.Finding
	for _, h := range []string{"a06-p1-dgx-02-c01 HCA-1", "a06-p1-dgx-02-c02 HCA-1"} {
		fs = append(fs, checks.Finding{Check: "link.down", Severity: checks.Error,
			Title:    "Link " + leaf + "/1 <-> " + h + "/1 from the expected topology is down",
			Entities: []checks.Entity{{Node: leaf, Port: 1}, {Node: h, Port: 1}}})
	}
	var b bytes.Buffer
	if err := Findings(&b, Style{Width: 80}, fs, 0); err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, "link.down") {
			if VisibleWidth(l) > 80 {
				t.Errorf("row wider than 80: %q", l)
			}
			rows = append(rows, l)
		}
	}
	if len(rows) != 2 || rows[0][4:] == rows[1][4:] || !strings.Contains(rows[0], "dgx-02-c01") || !strings.Contains(rows[1], "dgx-02-c02") {
		t.Errorf("rows do not tell the two links apart:\n%s", b.String())
	}
	// A title that fits is left whole.
	b.Reset()
	if err := Findings(&b, Style{Width: 200}, fs, 0); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), fs[0].Title) {
		t.Errorf("wide terminal cut the title:\n%s", b.String())
	}
}
