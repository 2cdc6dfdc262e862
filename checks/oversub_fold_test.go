package checks_test

import (
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/words"
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

// TestOversubscriptionFoldNamesSorted: the folded title names its leaves
// in name order, so the same capture read from its .ibnetdiscover, .lst
// and .db_csv says the same thing. Before, they came in each file's node
// order: "(0xfc6a1c030091cf00), (0xfc6a1c03008a4dc0), (0xb0cf0e0300e5b940)"
// from the db_csv, "(0xfc6a1c030091f9c0), ..." from the .lst.
func TestOversubscriptionFoldNamesSorted(t *testing.T) {
	var first string
	for _, name := range []string{"quantum2-ndr-ibdiagnet2.ibnetdiscover", "quantum2-ndr-ibdiagnet2.lst", "quantum2-ndr-ibdiagnet2.db_csv"} {
		fs := byCheck(corpusCheck(t, name, false).Findings, "topology.oversubscribed")
		if len(fs) != 1 {
			t.Fatalf("%s: %d findings, want 1", name, len(fs))
		}
		if first == "" {
			first = fs[0].Title
		} else if fs[0].Title != first {
			t.Errorf("%s: %q\nwant the same title as from the .ibnetdiscover: %q", name, fs[0].Title, first)
		}
		for i := 1; i < len(fs[0].Entities); i++ {
			if words.Natural(fs[0].Entities[i-1].String(), fs[0].Entities[i].String()) > 0 {
				t.Errorf("%s: entities not in name order: %s before %s", name, fs[0].Entities[i-1], fs[0].Entities[i])
			}
		}
	}
}
