package checks_test

import (
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/sim"
)

// TestAdaptiveRouting: with adaptive routing off everywhere (the
// simulator's default, as before an SM's AR manager runs) nothing is
// said; 'ar leaf01' and 'ar leaf02 sls=0x000f' give one info naming both
// and the SLs covered.
func TestAdaptiveRouting(t *testing.T) {
	sw, res := smSweep(t, "", 0)
	if sw.AR == nil || len(sw.AR.Info) != 4 || len(sw.AR.Unread) != 0 {
		t.Fatalf("AR view %+v, want the 4 switches read", sw.AR)
	}
	if fs := byCheck(res.Findings, "routing.adaptive"); len(fs) != 0 || !slicesContains(res.Ran, "routing.adaptive") {
		t.Errorf("AR off: %d findings, ran %v", len(fs), res.Ran)
	}
	_, res = smSweep(t, "ar leaf01\nar leaf02 sls=0x000f\n", 0)
	fs := byCheck(res.Findings, "routing.adaptive")
	if len(fs) != 1 || fs[0].Severity != checks.Info || len(fs[0].Entities) != 2 ||
		!strings.HasPrefix(fs[0].Title, "adaptive routing is on at 2 of the 4 switches read") ||
		!strings.Contains(fs[0].Evidence[1].Text, "SLs 0-3 on 1") || !strings.Contains(fs[0].Evidence[1].Text, "all SLs on 1") {
		logFindings(t, res.Findings)
		t.Fatalf("%d routing.adaptive findings", len(fs))
	}
}

// TestAdaptiveRoutingNotesImbalance: the sample incident's tables spread
// destinations unevenly at spine01 and spine02 (routing.ecmp-imbalance).
// With adaptive routing on at spine01 its finding says the tables are not
// the whole story there; spine02's says nothing of it.
func TestAdaptiveRoutingNotesImbalance(t *testing.T) {
	s, err := sim.Sample(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := sim.ParseFaults(strings.NewReader("ar spine01\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ApplyFaults(fs); err != nil {
		t.Fatal(err)
	}
	sw := sweepOf(t, s, true)
	res, err := checks.Run(sw.Snapshot(checks.Expectations{}, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	noted := map[string]bool{}
	for _, f := range byCheck(res.Findings, "routing.ecmp-imbalance") {
		for _, e := range f.Evidence {
			if e.Name == "adaptive routing" {
				noted[f.Entities[0].Node] = true
			}
		}
		noted[f.Entities[0].Node] = noted[f.Entities[0].Node] || false
	}
	if len(noted) < 2 || !noted["spine01"] || noted["spine02"] {
		logFindings(t, res.Findings)
		t.Errorf("adaptive-routing note by switch %v, want spine01 only", noted)
	}
	// AR on all of spine01's SLs: its table imbalance is only the
	// fallback's and must not fail a job on its own (it was critical,
	// and a gate over spine01 exited 1); spine02's stays critical.
	for _, f := range byCheck(res.Findings, "routing.ecmp-imbalance") {
		want := checks.Critical
		if f.Entities[0].Node == "spine01" {
			want = checks.Warning
		}
		if f.Severity != want {
			t.Errorf("%s: severity %s, want %s", f.Title, f.Severity, want)
		}
	}
}

func slicesContains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
