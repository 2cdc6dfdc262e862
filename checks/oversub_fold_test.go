package checks_test

import (
	"strings"
	"testing"
)

// TestOversubscriptionFoldsSameLeaves: the Quantum-2 capture has 8 leaves
// each with 32 hosts on one 400 Gb/s uplink, the typical leaf: the same
// info about 8 leaves. It is one finding naming them (as other checks
// group their subjects), in every format of the same capture. Before: 8
// identical infos, one per leaf.
func TestOversubscriptionFoldsSameLeaves(t *testing.T) {
	for _, name := range []string{"quantum2-ndr-ibdiagnet2.ibnetdiscover", "quantum2-ndr-ibdiagnet2.lst", "quantum2-ndr-ibdiagnet2.db_csv"} {
		t.Run(name, func(t *testing.T) {
			res := corpusCheck(t, name, false)
			fs := byCheck(res.Findings, "topology.oversubscribed")
			if len(fs) != 1 {
				for _, f := range fs {
					t.Logf("%s", f.Title)
				}
				t.Fatalf("%d topology.oversubscribed findings, want one naming the leaves", len(fs))
			}
			f := fs[0]
			if len(f.Entities) != 8 || !strings.HasPrefix(f.Title, "8 leaves are oversubscribed 32.0:1 (32 hosts, 1 uplink each)") {
				t.Errorf("%q with %d entities: want the 8 leaves", f.Title, len(f.Entities))
			}
			for _, e := range f.Entities[:3] {
				if !strings.Contains(f.Title, e.String()) {
					t.Errorf("title %q does not name %s", f.Title, e)
				}
			}
		})
	}
}
