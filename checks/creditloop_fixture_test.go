package checks_test

import (
	"context"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/sim"
)

// TestRingFixtureCreditLoop is 'ibdoctor check --sim
// fixtures/ring/ring5.net --lfts fixtures/ring/ring5-ENGINE.dump_fts': the
// ring of five switches with the tables a real OpenSM programmed on ibsim
// (dump_fts). Min-hop's have a credit loop each way round, up/down's none.
func TestRingFixtureCreditLoop(t *testing.T) {
	for engine, want := range map[string]int{"minhop": 2, "updn": 0} {
		s, info, err := sim.Load(context.Background(), "../fixtures/ring/ring5.net", "../fixtures/ring/ring5-"+engine+".dump_fts", sim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !info.Routes {
			t.Fatalf("%s: the tables were not taken from the dump", engine)
		}
		sw := sweepOf(t, s, true)
		res, err := checks.Run(sw.Snapshot(checks.Expectations{}, nil, nil))
		if err != nil {
			t.Fatal(err)
		}
		if got := len(byCheck(res.Findings, "routing.credit-loop")); got != want {
			t.Errorf("OpenSM %s tables: %d credit loops, want %d", engine, got, want)
		}
		if bad := atOrAbove(res.Findings, checks.Warning); len(bad) != want {
			t.Errorf("OpenSM %s tables: %d findings at warning or above, want %d:\n%s", engine, len(bad), want, titles(bad))
		}
	}
}
