package report

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ibdoctor/ibdoctor/checks"
)

// needTool returns the path of an external tool, skipping the test when it
// is absent, unless CI=true, where absence is a failure.
func needTool(t *testing.T, name, debPkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s not found and CI=true: install the Debian package %s", name, debPkg)
	}
	t.Skipf("%s not found: install the Debian package %s to run this test", name, debPkg)
	return ""
}

// promtoolCheck runs `promtool check metrics` (the exposition format and
// Prometheus' naming conventions) over a textfile.
func promtoolCheck(t *testing.T, text []byte) {
	t.Helper()
	promtool := needTool(t, "promtool", "prometheus")
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(text)
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics: %v\n%s\non:\n%s", err, out, text)
	}
}

// manyFindings is a document with n warning findings on distinct ports,
// plus one awkward name, and two findings of one check on one port.
func manyFindings(n int) *Document {
	d := goldenDoc()
	d.Findings = nil
	for i := range n {
		d.Findings = append(d.Findings, checks.Finding{
			Check: "counters.errors", Severity: checks.Warning, Title: "x",
			Entities: []checks.Entity{{Node: fmt.Sprintf("leaf%03d", i), Port: i%36 + 1, Role: "end"}, {Node: "spine01", Port: i%36 + 1, Role: "peer"}},
			Impact:   checks.Impact{Score: float64(n-i) / 1e4},
		})
	}
	d.Findings = append(d.Findings,
		checks.Finding{Check: "link.degraded-width", Severity: checks.Critical, Entities: []checks.Entity{{Node: "gpu\"7\" mlx5_0\\a\tb", Port: 1, Role: "end"}}, Impact: checks.Impact{Score: 0.5}},
		checks.Finding{Check: "link.degraded-width", Severity: checks.Critical, Entities: []checks.Entity{{Node: "gpu\"7\" mlx5_0\\a\tb", Port: 1, Role: "end"}}, Impact: checks.Impact{Score: 0.7}},
		checks.Finding{Check: "counters.congestion", Severity: checks.Info, Entities: []checks.Entity{{Node: "leaf001", Port: 3}}, Impact: checks.Impact{Score: 0.9}},
	)
	d.CountBySeverity()
	return d
}

// TestPrometheusFindingSeries: one series per finding at or above the
// minimum severity, named by check, severity, node, port and peer, worth
// its impact score; duplicates merged; capped with the cap reported.
func TestPrometheusFindingSeries(t *testing.T) {
	var b bytes.Buffer
	if err := Prometheus(&b, manyFindings(600), PromOptions{MinSeverity: checks.Warning}); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	series := strings.Count(text, "\nibdoctor_finding_impact_score{")
	if series != DefaultMaxSeries {
		t.Errorf("%d finding series, want the cap %d", series, DefaultMaxSeries)
	}
	for _, want := range []string{
		`ibdoctor_finding_impact_score{check="link.degraded-width",node="gpu\"7\" mlx5_0\\a` + "\t" + `b",port="1",peer=""} 0.7` + "\n",
		`ibdoctor_finding_impact_score{check="counters.errors",node="leaf000",port="1",peer="spine01/1"} 0.06` + "\n",
		"ibdoctor_finding_series_limit 500\n",
		"ibdoctor_finding_series_dropped 102\n", // 602 findings: 601 distinct series (the two criticals share one), 500 kept, the other critical counted
		"ibdoctor_sweep_success 1\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("textfile lacks %q", want)
		}
	}
	if regexp.MustCompile(`(?m)^ibdoctor_finding_severity\{.*\} 1$`).MatchString(text) {
		t.Error("an info finding got a series below --prom-min-severity warning")
	}
	if strings.Contains(text, `leaf599"`) {
		t.Error("the cap kept the least important finding")
	}
	promtoolCheck(t, b.Bytes())

	b.Reset()
	Prometheus(&b, manyFindings(3), PromOptions{MinSeverity: checks.Info})
	if !strings.Contains(b.String(), `ibdoctor_finding_impact_score{check="counters.congestion",node="leaf001",port="3",peer=""} 0.9`) {
		t.Errorf("--prom-min-severity info left the info finding out:\n%s", b.String())
	}
}

// TestPrometheusGoldenPromtool: the golden textfile passes promtool.
func TestPrometheusGoldenPromtool(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("testdata", "report.golden.prom"))
	if err != nil {
		t.Fatal(err)
	}
	promtoolCheck(t, text)
}

// TestPrometheusFailed: a failed sweep's textfile says success 0, keeps
// the last success's time and the last good counts, and passes promtool;
// failing twice keeps the time of the success before both.
func TestPrometheusFailed(t *testing.T) {
	var good bytes.Buffer
	d := goldenDoc()
	d.Complete = true
	Prometheus(&good, d, PromOptions{MinSeverity: checks.Warning})
	at := d.GeneratedAt.Add(15 * time.Minute)
	var failed bytes.Buffer
	if err := PrometheusFailed(&failed, good.Bytes(), at, nil, FailedState{}); err != nil {
		t.Fatal(err)
	}
	again := bytes.Buffer{}
	PrometheusFailed(&again, append([]byte("# a foreign comment\nother_metric 1\n"), failed.Bytes()...), at.Add(15*time.Minute), nil, FailedState{})
	for i, text := range []string{failed.String(), again.String()} {
		for _, want := range []string{
			"ibdoctor_sweep_success 0\n",
			// The kept series are all the last successful sweep's
			// (trial T15: complete 0 beside the kept unreached 0).
			"ibdoctor_sweep_complete 1\n",
			"# HELP ibdoctor_sweep_complete 1 if the last successful sweep read everything it needed",
			"# HELP ibdoctor_unreached Things the last successful sweep could not read.\n",
			"# HELP ibdoctor_findings Findings of the last successful sweep by severity.\n",
			fmt.Sprintf("ibdoctor_sweep_last_success_timestamp_seconds %d\n", d.GeneratedAt.Unix()),
			fmt.Sprintf("ibdoctor_sweep_timestamp_seconds %d\n", at.Add(time.Duration(i)*15*time.Minute).Unix()),
			`ibdoctor_findings{severity="critical"} 1` + "\n",
			`ibdoctor_finding_impact_score{check="link.degraded-width",node="leaf02",port="6",peer="spine02/2"} 0.05` + "\n",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("failure %d: textfile lacks %q:\n%s", i+1, want, text)
			}
		}
		if strings.Count(text, "# TYPE ibdoctor_sweep_success ") != 1 || strings.Contains(text, "other_metric") {
			t.Errorf("failure %d: status metrics repeated or foreign lines kept:\n%s", i+1, text)
		}
		promtoolCheck(t, []byte(text))
	}
	// Never a success: the last success is 0, so a staleness alert fires.
	var never bytes.Buffer
	PrometheusFailed(&never, nil, at, nil, FailedState{})
	if !strings.Contains(never.String(), "ibdoctor_sweep_last_success_timestamp_seconds 0\n") || strings.Contains(never.String(), "ibdoctor_sweep_complete") {
		t.Errorf("no previous textfile:\n%s", never.String())
	}
	promtoolCheck(t, never.Bytes())
}

// FuzzPrometheusFailed: whatever the previous textfile holds, the failed
// one has the status series exactly once, keeps only ibdoctor_ lines and
// carries a last-success time parsed from it or 0.
func FuzzPrometheusFailed(f *testing.F) {
	var good bytes.Buffer
	Prometheus(&good, goldenDoc(), PromOptions{MinSeverity: checks.Warning})
	f.Add(good.Bytes())
	f.Add([]byte("ibdoctor_sweep_last_success_timestamp_seconds 12 34\n# TYPE x\nibdoctor_sweep_last_success_timestamp_seconds -1\n"))
	f.Add([]byte("\x00\n\n{}"))
	f.Fuzz(func(t *testing.T, prev []byte) {
		var b bytes.Buffer
		if err := PrometheusFailed(&b, prev, time.Unix(1000, 0), nil, FailedState{}); err != nil {
			t.Fatal(err)
		}
		text := b.String()
		for _, name := range []string{"ibdoctor_sweep_success ", "ibdoctor_sweep_last_success_timestamp_seconds ", "ibdoctor_sweep_timestamp_seconds "} {
			if n := strings.Count("\n"+text, "\n"+name); n != 1 {
				t.Fatalf("%q %d times in:\n%s", name, n, text)
			}
		}
		// The kept sweep's completeness: once, or not at all without one.
		if n := strings.Count("\n"+text, "\nibdoctor_sweep_complete "); n > 1 {
			t.Fatalf("ibdoctor_sweep_complete %d times in:\n%s", n, text)
		}
		for l := range strings.Lines(text) {
			if !strings.HasPrefix(l, "ibdoctor_") && !strings.HasPrefix(l, "# HELP ibdoctor_") && !strings.HasPrefix(l, "# TYPE ibdoctor_") {
				t.Fatalf("foreign line %q", l)
			}
		}
	})
}

// TestPrometheusLabelsNameTheSubject: the series of a missing HCA names
// the host, with the leaf port where its cable belongs as peer, and an
// ECMP group's series names its switch and busiest port (entities as
// the checks give them on the sample). Before: node="leaf03" for the
// host gpu012, and port="" for spine01's group.
func TestPrometheusLabelsNameTheSubject(t *testing.T) {
	d := goldenDoc()
	d.Findings = []checks.Finding{
		{Check: "topology.missing-hca", Severity: checks.Error, Impact: checks.Impact{Score: 0.004}, Entities: []checks.Entity{
			{NodeGUID: 0x59, Node: "gpu012 mlx5_0", LID: 101, Role: "host"},
			{NodeGUID: 0x07, Node: "leaf03", Port: 28, LID: 7, Role: "end"}}},
		{Check: "routing.ecmp-imbalance", Severity: checks.Critical, Impact: checks.Impact{Score: 0.2}, Entities: []checks.Entity{
			{NodeGUID: 0x01, Node: "spine01", LID: 1, Role: "switch"},
			{NodeGUID: 0x01, Node: "spine01", Port: 33, LID: 1, Role: "busiest"},
			{NodeGUID: 0x09, Node: "leaf05", Port: 33, LID: 9, Role: "peer"}}},
		{Check: "link.degraded-width", Severity: checks.Critical, Impact: checks.Impact{Score: 0.1}, Entities: []checks.Entity{
			{NodeGUID: 0x0b, Node: "leaf07", Port: 41, Role: "end"},
			{NodeGUID: 0x02, Node: "spine02", Port: 49, Role: "peer"}}},
		// Where the routes end, not the first destination (trial T5).
		{Check: "routing.unreachable", Severity: checks.Critical, Impact: checks.Impact{Score: 0.15}, Entities: []checks.Entity{
			{NodeGUID: 0x33, Node: "gpu003 mlx5_1", Port: 1, Role: "destination"},
			{NodeGUID: 0x04, Node: "leaf04", Role: "switch"},
			{NodeGUID: 0x04, Node: "leaf04", Port: 50, Role: "egress"}}},
		{Check: "routing.unreachable", Severity: checks.Critical, Impact: checks.Impact{Score: 0.14}, Entities: []checks.Entity{
			{NodeGUID: 0x34, Node: "gpu020 mlx5_0", Port: 1, Role: "destination"},
			{NodeGUID: 0x02, Node: "leaf02", Role: "switch"}}},
		// A group's finding is at the group (trial T13).
		{Check: "topology.missing-hca", Severity: checks.Error, Impact: checks.Impact{Score: 0.017}, Group: "a05-p1-dgx-01-c*", Entities: []checks.Entity{
			{NodeGUID: 0x61, Node: "a05-p1-dgx-01-c01 HCA-1", Role: "host"},
			{NodeGUID: 0x62, Node: "a05-p1-dgx-01-c02 HCA-1", Role: "host"}}},
	}
	d.CountBySeverity()
	var b bytes.Buffer
	if err := Prometheus(&b, d, PromOptions{MinSeverity: checks.Warning}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`ibdoctor_finding_impact_score{check="topology.missing-hca",node="gpu012",port="",peer="leaf03/28"} 0.004` + "\n",
		`ibdoctor_finding_impact_score{check="routing.ecmp-imbalance",node="spine01",port="33",peer="leaf05/33"} 0.2` + "\n",
		`ibdoctor_finding_impact_score{check="link.degraded-width",node="leaf07",port="41",peer="spine02/49"} 0.1` + "\n",
		`ibdoctor_finding_impact_score{check="routing.unreachable",node="leaf04",port="50",peer=""} 0.15` + "\n",
		`ibdoctor_finding_impact_score{check="routing.unreachable",node="leaf02",port="",peer=""} 0.14` + "\n",
		`ibdoctor_finding_impact_score{check="topology.missing-hca",node="a05-p1-dgx-01-c*",port="",peer=""} 0.017` + "\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("textfile lacks %q:\n%s", want, b.String())
		}
	}
	promtoolCheck(t, b.Bytes())
}

// FuzzParseLabel: an accepted --prom-label is a valid label name, not one
// of ibdoctor's own, with a value; written on a sample line it is its
// first label, its value quoted as the exposition format wants.
func FuzzParseLabel(f *testing.F) {
	for _, s := range []string{"fabric=compute", "a=b=c", "node=x", "__x=y", "1a=b", "f=\"q\"\\\n", "=x", "x="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseLabel(s)
		if err != nil {
			return
		}
		if l.Value == "" || !utf8.ValidString(l.Value) || l.Name == "" || strings.HasPrefix(l.Name, "__") || ownLabels[l.Name] || l.Name+"="+l.Value != s {
			t.Fatalf("%q accepted as %+v", s, l)
		}
		got := string(withLabels([]byte("m{a=\"1\"} 2\nn 3\n# HELP n x\n"), []Label{l}))
		want := "m{" + l.Name + "=" + labelValue(l.Value) + ",a=\"1\"} 2\nn{" + l.Name + "=" + labelValue(l.Value) + "} 3\n# HELP n x\n"
		if got != want {
			t.Fatalf("withLabels: %q, want %q", got, want)
		}
	})
}
