package checks_test

import (
	"strings"
	"testing"
)

// TestCorpusOversubscribedIsland (trial H3): on plafrim, MT47396
// (Infiniscale-III, 6 DDR hosts) has 2 DDR links up into the QDR fabric
// (to 4036-84FA and 4036-8524) and 2 down to the Infiniscale-IV, whose
// only way out it is. Counting those as uplinks gave 96/64 = 1.5:1 and no
// finding; its uplinks are 32 Gb/s: 3.0:1, and the island's 32 hosts
// (472 Gb/s) leave over those 32 Gb/s, 14.8:1. The Infiniscale-IV's own
// 11.8:1 stays as it was.
func TestCorpusOversubscribedIsland(t *testing.T) {
	res := corpusCheck(t, "plafrim-voltaire-qdr.ibnetdiscover-p", false)
	var mt, is4 bool
	for _, f := range byCheck(res.Findings, "topology.oversubscribed") {
		switch {
		case strings.HasPrefix(f.Title, "Leaf MT47396 Infiniscale-III Mellanox Technologies is oversubscribed 3.0:1 (6 hosts, 2 uplinks)"):
			mt = true
			if f.Severity.String() != "warning" {
				t.Errorf("%s: %s, want a warning", f.Title, f.Severity)
			}
			ev := f.Evidence[0].Text
			for _, want := range []string{"host links 96 Gb/s, uplinks 32 Gb/s",
				"the links to Infiniscale-IV Mellanox Technologies, chained below it (its only way out), are not counted as uplinks",
				"the island's 32 hosts (472 Gb/s) reach the rest of the fabric over 32 Gb/s, 14.8:1",
				"its uplinks go to Voltaire 4036 # 4036-84FA and Voltaire 4036 # 4036-8524"} {
				if !strings.Contains(ev, want) {
					t.Errorf("evidence %q: want %q", ev, want)
				}
			}
		case strings.HasPrefix(f.Title, "Leaf Infiniscale-IV Mellanox Technologies is oversubscribed 11.8:1"):
			is4 = true
		}
	}
	if !mt || !is4 {
		t.Errorf("MT47396 3.0:1 %v, Infiniscale-IV 11.8:1 %v:%s", mt, is4, titles(byCheck(res.Findings, "topology.oversubscribed")))
	}
}
