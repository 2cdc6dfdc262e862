package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/topology"
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
		Skipped: []checks.Skipped{{Check: "counters.errors", Reason: "counters were not read", NoCounters: true}, {Check: "counters.congestion", Reason: "counters were not read", NoCounters: true}}})
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

// TestPrometheusCountersReadNotByText (review R9): ibdoctor_counters_read
// is decided by what the checks were skipped for, not by how the reason
// is worded: a sweep without counters whose skip reasons say it in other
// words is still 0, and a reason that happens to begin as the counter
// one is not.
func TestPrometheusCountersReadNotByText(t *testing.T) {
	f, err := topology.Routed(topology.FatTree2{Leaves: 2, Spines: 2, HostsPerLeaf: 2})
	if err != nil {
		t.Fatal(err)
	}
	res, err := checks.Run(&checks.Snapshot{Fabric: f})
	if err != nil {
		t.Fatal(err)
	}
	reworded := 0
	for i, s := range res.Skipped {
		if strings.HasPrefix(s.Reason, checks.CountersNotRead) {
			res.Skipped[i].Reason = "no port's counters were read" + strings.TrimPrefix(s.Reason, checks.CountersNotRead)
			reworded++
		}
	}
	if reworded == 0 {
		t.Fatalf("no check skipped for counters: %+v", res.Skipped)
	}
	var b bytes.Buffer
	if err := Prometheus(&b, &Document{Complete: true, Skipped: res.Skipped}, PromOptions{MinSeverity: checks.Warning}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "ibdoctor_counters_read 0\n") {
		t.Errorf("counters not read, the reasons reworded: not ibdoctor_counters_read 0:\n%s", b.String())
	}
	b.Reset()
	d := &Document{Complete: true, Skipped: []checks.Skipped{{Check: "routing.ecmp-imbalance", Reason: checks.CountersNotRead + " from the tables' side"}}}
	if err := Prometheus(&b, d, PromOptions{MinSeverity: checks.Warning}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "ibdoctor_counters_read 1\n") {
		t.Errorf("a reason worded as the counters one, for another lack: not ibdoctor_counters_read 1:\n%s", b.String())
	}
}
