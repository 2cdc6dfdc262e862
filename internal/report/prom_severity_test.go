package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
)

// TestPrometheusSeverityNotIdentity (trial F7): a finding's series keeps
// its labels when its severity changes between sweeps (a port's
// counters.errors judged absolute on a first sweep, warning, then by
// growth, error): severity is the value of ibdoctor_finding_severity at
// the same labels, not a label, so an alert keyed on the series neither
// resolves nor restarts its `for:`.
func TestPrometheusSeverityNotIdentity(t *testing.T) {
	doc := func(s checks.Severity) []byte {
		d := &Document{Complete: true}
		d.Findings = append(d.Findings, checks.Finding{Check: "counters.errors", Severity: s,
			Entities: []checks.Entity{{Node: "spine02", Port: 49}, {Node: "leaf01", Port: 1}}, Impact: checks.Impact{Score: 0.01}})
		d.CountBySeverity()
		var b bytes.Buffer
		if err := Prometheus(&b, d, PromOptions{MinSeverity: checks.Warning}); err != nil {
			t.Fatal(err)
		}
		promtoolCheck(t, b.Bytes())
		return b.Bytes()
	}
	series := func(text []byte, name string) []string {
		var out []string
		for l := range strings.Lines(string(text)) {
			if strings.HasPrefix(l, name+"{") {
				out = append(out, strings.TrimSpace(l))
			}
		}
		return out
	}
	w, e := doc(checks.Warning), doc(checks.Error)
	wi, ei := series(w, "ibdoctor_finding_impact_score"), series(e, "ibdoctor_finding_impact_score")
	if len(wi) != 1 || len(ei) != 1 || wi[0] != ei[0] {
		t.Errorf("impact series of the warning %q and of the error %q differ", wi, ei)
	}
	want := func(text []byte, line string) {
		t.Helper()
		if got := series(text, "ibdoctor_finding_severity"); len(got) != 1 || got[0] != line {
			t.Errorf("severity series %q, want %q", got, line)
		}
	}
	// The per-check counts keep their series too: every severity of a
	// check with findings, 0 where it has none.
	wc, ec := series(w, "ibdoctor_check_findings"), series(e, "ibdoctor_check_findings")
	if len(wc) != 4 || len(ec) != 4 || !strings.HasSuffix(wc[1], `severity="error"} 0`) || !strings.HasSuffix(ec[1], `severity="error"} 1`) ||
		!strings.HasSuffix(wc[3], `severity="warning"} 1`) || !strings.HasSuffix(ec[3], `severity="warning"} 0`) {
		t.Errorf("check series of the warning %q, of the error %q: want all 4 severities of counters.errors each time", wc, ec)
	}
	want(w, `ibdoctor_finding_severity{check="counters.errors",node="spine02",port="49",peer=""} 2`)
	want(e, `ibdoctor_finding_severity{check="counters.errors",node="spine02",port="49",peer=""} 3`)
}
