package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
)

// TestPrometheusSaysWhatWasNotRead (trial F9): the textfile tells "0
// findings" from "could not look": the sweep's duration, whether its
// counters were read, and each check that did not run; a dashboard
// otherwise shows a sweep without counters (--no-counters, a --sim file
// that carries none) as 0 counter findings, healthy.
func TestPrometheusSaysWhatWasNotRead(t *testing.T) {
	text := func(d *Document) string {
		d.CountBySeverity()
		var b bytes.Buffer
		if err := Prometheus(&b, d, PromOptions{MinSeverity: checks.Warning}); err != nil {
			t.Fatal(err)
		}
		promtoolCheck(t, b.Bytes())
		return b.String()
	}
	read := text(&Document{Complete: true, Timings: map[string]string{"total": "1.5s", "counters": "300ms"}})
	notRead := text(&Document{Complete: true, Timings: map[string]string{"total": "28ms"},
		Skipped: []checks.Skipped{{Check: "counters.errors", Reason: "counters were not read"}, {Check: "counters.congestion", Reason: "counters were not read"}}})
	file := text(&Document{Complete: true, Timings: map[string]string{"total": "2m3s"}, CountersNotRead: "the file carries no counters"})
	for _, c := range []struct {
		text string
		want []string
	}{
		{read, []string{"ibdoctor_sweep_duration_seconds 1.5\n", "ibdoctor_counters_read 1\n"}},
		{notRead, []string{"ibdoctor_sweep_duration_seconds 0.028\n", "ibdoctor_counters_read 0\n", `ibdoctor_check_skipped{check="counters.congestion"} 1` + "\n", `ibdoctor_check_skipped{check="counters.errors"} 1` + "\n"}},
		{file, []string{"ibdoctor_sweep_duration_seconds 123\n", "ibdoctor_counters_read 0\n"}},
	} {
		for _, w := range c.want {
			if !strings.Contains(c.text, w) {
				t.Errorf("textfile lacks %q:\n%s", w, c.text)
			}
		}
	}
	if strings.Contains(read, "ibdoctor_check_skipped{") {
		t.Error("a check series for a sweep that skipped none")
	}
}
