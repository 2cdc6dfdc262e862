package checks_test

import (
	"strings"
	"testing"
)

// TestLoneSlowHostOnItsLeaf (trial C12): on the plafrim dump dancharia
// HCA-2 runs 4X DDR on the Voltaire 4036 leaf 4036-8C9E, whose 26 other
// hosts run 4X QDR, and was not reported: every HCA of a -p file is of
// one unknown model, and the 27 DDR hosts behind other switches (bonobo*
// on the Infiniscale-IV leaf, devel* on the Infiniscale-III) made DDR "a
// sub-fleet running alike". The verdict on one cable turned on hosts
// behind other switches (the file without them reported it). On its own
// leaf a link alone at its rate among the model's faster links is below
// its peers; the DDR hosts that fill their own leaves stay quiet.
func TestLoneSlowHostOnItsLeaf(t *testing.T) {
	res := corpusCheck(t, "plafrim-voltaire-qdr.ibnetdiscover-p", false)
	var hits []string
	for _, f := range byCheck(res.Findings, "link.degraded-speed") {
		if !strings.Contains(f.Title, "dancharia HCA-2") {
			if strings.Contains(f.Title, "bonobo") || strings.Contains(f.Title, "devel") {
				t.Errorf("a host on a leaf of hosts at its own rate is reported: %s", f.Title)
			}
			continue
		}
		hits = append(hits, f.Title)
		if !strings.Contains(f.Title, "trained at DDR") || !strings.Contains(f.Evidence[0].Text, "on Voltaire 4036 # 4036-8C9E run 4X QDR") {
			t.Errorf("want DDR against the leaf's QDR hosts: %s / %s", f.Title, f.Evidence[0].Text)
		}
	}
	if len(hits) != 1 {
		t.Errorf("dancharia HCA-2 at DDR among 26 QDR hosts on its leaf: %d findings %q", len(hits), hits)
	}
}
