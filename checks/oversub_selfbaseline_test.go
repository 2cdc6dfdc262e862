package checks_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
)

// TestCorpusShortLeafNotDesignedBySelfBaseline (trial C7): on the DGX
// SuperPOD 12 leaves have 14 to 17 of their 18 spine cables (26 missing);
// a first sweep reports them ("N cables missing or down"), then keeps the
// fabric as its baseline, and every later sweep read that baseline as the
// design: the warnings were gone with nothing repaired and nothing
// accepted. A baseline the first sweep took by itself may have taken the
// fault in (as topology.missing-hca already holds); only the operator's
// word, 'baseline accept' (Baseline.Accepted) or --expect-topology
// (BaselineDesigned), makes fewer cables the design. Same on the two
// plafrim dumps.
func TestCorpusShortLeafNotDesignedBySelfBaseline(t *testing.T) {
	for _, c := range []struct {
		name string
		want int // leaves short of their spines' design
	}{
		{"dgx-ndr-2025.ibnetdiscover", 12},
		{"plafrim2-qlogic-ts.ibnetdiscover-p", 1},
		{"plafrim-voltaire-qdr.ibnetdiscover-p", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := corpusFile(t, c.name)
			sw := corpusSweep(t, p)
			sw.RoutesComputed = true
			base, _, err := fabric.ReadFile(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range []struct {
				how               string
				base              bool
				accepted, planned bool
				want              int
			}{
				{"no baseline", false, false, false, c.want},
				{"the first sweep's own baseline", true, false, false, c.want},
				{"a baseline the operator accepted", true, true, false, 0},
				{"--expect-topology", true, false, true, 0},
			} {
				var bl *checks.Baseline
				if b.base {
					bl = checks.BaselineOf(base)
					bl.Accepted = b.accepted
				}
				snap := sw.Snapshot(checks.Expectations{}, bl, nil)
				snap.BaselineDesigned = b.planned
				res, err := checks.Run(snap, "topology.oversubscribed")
				if err != nil {
					t.Fatal(err)
				}
				var short []checks.Finding
				for _, f := range byCheck(res.Findings, "topology.oversubscribed") {
					if strings.Contains(f.Title, "missing or down") {
						short = append(short, f)
					}
				}
				if len(short) != b.want {
					t.Errorf("%s: %d leaves with cables missing or down, want %d:%s", b.how, len(short), b.want, titles(res.Findings))
				}
			}
		})
	}
}
