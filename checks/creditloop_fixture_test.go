package checks_test

import (
	"context"
	"strings"
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

// TestRingFixtureSL2VL: the ring with OpenSM's min-hop tables, swept
// live in the simulator, whose SLtoVLMappingTables ibdoctor now reads for
// the ports of each cycle. Trivial tables (every SL on VL0, the
// simulator's default) confirm both loops: critical, saying so. Tables
// that spread the SLs over VLs on one switch of the ring (what a
// VL-aware engine programs) leave both loops undecided: warnings, never
// dropped. A switch that does not answer the attribute: critical as
// before, 'SL2VL not read'. The up/down tables make no cycle: nothing is
// read.
func TestRingFixtureSL2VL(t *testing.T) {
	for _, c := range []struct {
		name, tables, faults string
		sev                  checks.Severity
		want                 []string
		reads                bool
	}{
		{"trivial", "minhop", "", checks.Critical, []string{"SL2VL read on the cycle's 15 port pairs and trivial: every SL maps to VL0"}, true},
		{"spread", "minhop", "sl2vl sw3 map=0,1,2,3,4,5,6,7,0,1,2,3,4,5,6,7\n", checks.Warning,
			[]string{"SLs spread over VLs 0..7 on this cycle (a VL-aware engine such as DFSSSP/LASH); per-path SLs not read, so the cycle may be broken by VLs", "several VLs leaving sw3/"}, true},
		{"one VL per channel", "minhop", "sl2vl sw3 map=2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2\n", checks.Critical, []string{"every SL maps to one VL on each channel (VLs 0, 2)"}, true},
		{"unanswered", "minhop", "drop sw2 attr=SLtoVLMappingTable\n", checks.Critical, []string{"SL2VL not read for 3 of the cycle's 15 port pairs (sw2 in ", "every flow taken to be on VL0"}, true},
		{"updn", "updn", "", 0, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, _, err := sim.Load(context.Background(), "../fixtures/ring/ring5.net", "../fixtures/ring/ring5-"+c.tables+".dump_fts", sim.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if c.faults != "" {
				fs, err := sim.ParseFaults(strings.NewReader(c.faults))
				if err != nil {
					t.Fatal(err)
				}
				if err := s.ApplyFaults(fs); err != nil {
					t.Fatal(err)
				}
			}
			sw := sweepOf(t, s, c.faults == "" || !strings.HasPrefix(c.faults, "drop"))
			if got := sw.SL2VL != nil; got != c.reads {
				t.Errorf("SL2VL read: %v, want %v", got, c.reads)
			}
			res, err := checks.Run(sw.Snapshot(checks.Expectations{}, nil, nil))
			if err != nil {
				t.Fatal(err)
			}
			fs := byCheck(res.Findings, "routing.credit-loop")
			if c.want == nil {
				if len(fs) != 0 {
					t.Errorf("%d credit loops, want none", len(fs))
				}
				return
			}
			if len(fs) != 2 {
				t.Fatalf("%d credit loops, want 2", len(fs))
			}
			for _, f := range fs {
				var ev []string
				for _, e := range f.Evidence {
					ev = append(ev, e.String())
				}
				all := strings.Join(ev, "\n")
				t.Logf("%s %s\n%s", f.Severity, f.Title, all)
				if f.Severity != c.sev {
					t.Errorf("severity %s, want %s", f.Severity, c.sev)
				}
				for _, w := range c.want {
					if !strings.Contains(all, w) {
						t.Errorf("evidence lacks %q", w)
					}
				}
				if c.sev == checks.Warning && !strings.Contains(f.Title, "undecided") {
					t.Errorf("warning not labelled undecided: %s", f.Title)
				}
			}
			if strings.HasPrefix(c.faults, "drop") {
				n := 0
				for _, u := range sw.Unreached {
					if u.What == "SLtoVLMappingTable" {
						n++
					}
				}
				if n == 0 || sw.Complete {
					t.Errorf("unanswered tables: %d unreached, complete %v", n, sw.Complete)
				}
			}
		})
	}
}
