package checks_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/sim"
)

// corpusCheckIncreases is corpusCheck as 'ibdoctor check --sim FILE' does
// it for a file that records its counters' increases (an ibdiagnet2.db_csv's
// PM_DELTA): the increases are judged, with the values since the clear.
func corpusCheckIncreases(t *testing.T, name string) *checks.Result {
	t.Helper()
	s, info, err := sim.Load(context.Background(), corpusFile(t, name), "", sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if info.Increases == nil {
		t.Fatalf("%s: no counter increases read", name)
	}
	sw := sweepOf(t, s, true)
	sw.RoutesComputed = !info.Routes
	sw.Counters = diagnose.WithIncreases(sw.Counters, info.Increases)
	sw.CountersBasis = "the increase during ibdiagnet's run (PM_DELTA), span not in the file"
	res, err := checks.Run(sw.Snapshot(checks.Expectations{}, checks.BaselineOf(nil), nil))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestCorpusSinceClearOutliers (trial H1): on the Quantum-2 db_csv 242 of
// the 256 host ports read SymbolErrorCounter 0 since the last clear, and
// three read 44375, 23817 and 2497 (a fourth 11160 beside a saturated
// PortRcvErrors): nothing was said of them, since a value since an unknown
// clear was judged only once its field was full (65535). A physical-layer
// counter far above its threshold and far above the same counter on the
// ports of the same role is a finding (warning: none grew while ibdiagnet
// sampled); the routine small counts (26..141) and the LinkDowned and
// discard history of the switch ports stay unjudged.
func TestCorpusSinceClearOutliers(t *testing.T) {
	res := corpusCheckIncreases(t, "quantum2-ndr-ibdiagnet2.db_csv")
	type key struct {
		port, counter string
	}
	got := map[key]checks.Finding{}
	for _, f := range byCheck(res.Findings, "counters.errors") {
		if len(f.Entities) == 0 {
			continue
		}
		for _, e := range f.Evidence {
			got[key{f.Entities[0].String(), e.Name}] = f
		}
	}
	want := map[key]float64{
		{"is-north-7-compute-24 mlx5_10/1", "SymbolErrorCounter"}: 44375,
		{"is-north-7-compute-5 mlx5_3/1", "SymbolErrorCounter"}:   23817,
		{"is-north-7-compute-20 mlx5_1/1", "SymbolErrorCounter"}:  2497,
		{"is-north-7-compute-8 mlx5_0/1", "SymbolErrorCounter"}:   11160,
		{"is-north-7-compute-7 mlx5_3/1", "PortRcvErrors"}:        35549,
		{"is-north-7-compute-1 mlx5_3/1", "PortRcvErrors"}:        6258,
	}
	for k, v := range want {
		f, ok := got[k]
		if !ok {
			t.Errorf("no finding says %s = %.0f on %s", k.counter, v, k.port)
			continue
		}
		if f.Severity != checks.Warning {
			t.Errorf("%s on %s: %s, want warning (it did not grow while sampled)", k.counter, k.port, f.Severity)
		}
		var ev string
		for _, e := range f.Evidence {
			if e.Name == k.counter {
				ev = e.Text
				if e.Value != v {
					t.Errorf("%s on %s: evidence value %.0f, want %.0f", k.counter, k.port, e.Value, v)
				}
			}
		}
		for _, w := range []string{"of the 256 host ports read 0", "90th percentile is 0", "+0 while"} {
			if !strings.Contains(ev+evidenceText(f), w) {
				t.Errorf("%s on %s: evidence does not say %q:\n%s", k.counter, k.port, w, evidenceText(f))
			}
		}
		if !strings.Contains(f.Action, "sample again") || !strings.Contains(f.Action, "ibdoctor top") {
			t.Errorf("%s on %s: the next step does not say to clear and sample again or watch with top: %s", k.counter, k.port, f.Action)
		}
	}
	// Small counts since an unknown clear stay unjudged.
	for _, k := range []key{
		{"is-north-7-compute-7 mlx5_1/1", "SymbolErrorCounter"},  // 141
		{"is-north-7-compute-18 mlx5_8/1", "SymbolErrorCounter"}, // 67
		{"is-north-7-compute-10 mlx5_0/1", "PortRcvErrors"},      // 311, beside a saturated SymbolErrorCounter
		{"is-north-7-compute-24 mlx5_10/1", "PortRcvErrors"},     // 14
	} {
		if f, ok := got[k]; ok {
			if e := evidenceNamed(f, k.counter); e != nil {
				t.Errorf("%s on %s judged: %s", k.counter, k.port, e.Text)
			}
		}
	}
}

func evidenceText(f checks.Finding) string {
	var ev []string
	for _, e := range f.Evidence {
		ev = append(ev, e.String())
	}
	return strings.Join(ev, "\n")
}

func evidenceNamed(f checks.Finding, name string) *checks.Evidence {
	for i := range f.Evidence {
		if f.Evidence[i].Name == name {
			return &f.Evidence[i]
		}
	}
	return nil
}
