package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// goldenDoc is a fixed report with every field of ibdoctor.report/v1 set:
// a gate over two hosts with a degraded uplink and a counter warning.
func goldenDoc() *Document {
	d := &Document{
		Schema:      Schema,
		Version:     "v1.2.3",
		GeneratedAt: time.Date(2026, 11, 22, 4, 30, 0, 0, time.UTC),
		Command:     "gate",
		Source:      "ibsim:sim/gpu001",
		Status:      "unhealthy",
		FailOn:      "error",
		Complete:    false,
		Fabric: FabricSummary{
			Nodes: 24, Switches: 8, CAs: 15, Routers: 1, Links: 32, PortsRead: 63, SwitchesRouted: 8,
		},
		Findings: []checks.Finding{
			{
				Check:    "link.degraded-width",
				Severity: checks.Critical,
				Title:    "Link leaf02/6 <-> spine02/2 trained at 1X instead of 4X",
				Entities: []checks.Entity{
					{NodeGUID: 0xb83fd20400000006, Node: "leaf02", Port: 6, LID: 11, Role: "end"},
					{NodeGUID: 0xb83fd20400000002, Node: "spine02", Port: 2, LID: 3, Role: "peer"},
				},
				Evidence: []checks.Evidence{{Name: "LinkWidthActive", Value: 1, Unit: "lanes", Threshold: 4, Text: "active 1X HDR, expected 4X HDR (the expected rate 4X HDR)"}},
				Impact:   checks.Impact{PathShare: 0.0667, PathShareLowerBound: true, LostGbps: 150, Slowdown: 4, Score: 0.05, Summary: "runs at 50 of 200 Gb/s (75% lost)"},
				Action:   "Reseat or replace the cable between leaf02/6 and spine02/2.",
				Basis:    "topology",
			},
			{
				Check:    "counters.errors",
				Severity: checks.Warning,
				Title:    "SymbolErrorCounter = 65535 on gpu006 mlx5_0/1 (saturated)",
				Entities: []checks.Entity{{NodeGUID: 0xb83fd20300000007, Node: "gpu006 mlx5_0", Port: 1, LID: 12, Role: "end"}},
				Evidence: []checks.Evidence{
					{Name: "SymbolErrorCounter", Value: 65535, Threshold: 10, Text: "SymbolErrorCounter = 65535 since the counters were last cleared (threshold 10)"},
					{Name: "saturated", Value: 65535, Text: "the 16-bit counter is stuck at its maximum 65535: the true count is larger"},
				},
				Impact: checks.Impact{PathShare: 0.125, Score: 0.00125, Summary: "the link carries 12.5% of host-to-host paths"},
				Action: "Physical-layer errors on the link: reseat or replace the cable (gpu006 mlx5_0/1).",
				Basis:  "absolute",
			},
		},
		ChecksRun: []string{"counters.errors", "link.degraded-width", "routing.ecmp-imbalance"},
		Skipped:   []checks.Skipped{{Check: "counters.utilization", Reason: "needs two counter samples (--interval)"}},
		Unreached: []Unreached{{What: "PortCounters", Where: "gpu007 mlx5_0 port 1 (LID 14)", Reason: "timed out after 3 retries"}},
		Undecided: []checks.Undecided{{Check: "routing.ecmp-imbalance", Subject: checks.Entity{NodeGUID: 0xb83fd20400000001, Node: "spine01"}, Reason: "its spread over ports 34,35,36,37,38,39,40 is uneven or not depending on what was not read: ports 33 (state or far end not read) may be more equal-cost ports"},
			{Check: "link.degraded-width", Subject: checks.Entity{NodeGUID: 0xb83fd20400000005, Node: "leaf01", Port: 33}, Reason: "the far end's PortInfo (spine01/1) was not read"}},
		Timings: map[string]string{"discovery": "12ms", "routes": "8ms", "counters": "31ms", "sm": "2ms", "partitions": "4ms", "firmware": "3ms", "ar": "1ms", "total": "61ms"},
		MADs:    &MADStats{Sent: 420, Answered: 417, Retried: 3, TimedOut: 3, Errors: 0, P50ms: 0.25, P99ms: 1.5},
		Scope: &ScopeSummary{
			Hosts: []string{"gpu005 mlx5_0", "gpu006 mlx5_0"}, JobHosts: 2, Unmatched: []string{"gpu099"}, NotWalked: true, Ports: 14, Switches: 5,
			Snapshot: "ibsim:sim/gpu001", SnapshotAt: "2026-11-22T04:15:00Z", OwnSweep: true, FabricPart: true, LiveReads: 13,
		},
		Interval:       "30s",
		RoutesComputed: true,
		// Not with counters read: here to cover the field.
		CountersNotRead: "fabric.txt (ibnetdiscover) carries no counters, so none were read",
		RatesNotRead:    "fabric.net (ibsim net file) gives no link rates ibsim reads (width=, speed=, w=, s=, e=): every link shows ibsim's default 4X SDR",
		// Not with the above either (a db_csv with PM_DELTA): the field.
		CountersBasis: "the increase during ibdiagnet's run (PM_DELTA), span not in the file",
		// Not with a file's counters either (a gate or a later sweep).
		CountersCleared: "1 port's counters were cleared since the previous sweep at 2026-11-27T02:00:00Z (4m0s before), by perfquery -R, a reboot or a reset: errors counted before the clear are not visible (leaf01/3)",
		SourceWarnings:  []string{"q2.db_csv: line 4400: START_PM_INFO PortRcvErrorsExt 18446744073709551576 (node 0x5c25730300e68e76 port 1) is not a count (2^63 or more: a negative number printed unsigned); PortRcvErrors 65535 read instead"},
		SnapshotKept:    "not replaced: this sweep is partial (1 thing not read); /var/lib/ibdoctor keeps the complete sweep of 2026-11-27T02:00:00Z, which gates answer from until it is over their --max-age (default 1h0m0s: from 2026-11-27T03:00:00Z), then sweep the fabric themselves",
	}
	d.Findings = append(d.Findings, checks.Finding{
		Check: "routing.ecmp-imbalance", Severity: checks.Info, WhatIf: true,
		Title:    "What-if on routes ibdoctor computed (not the fabric's): leaf01 sends 12 destinations up one of 4 uplinks",
		Entities: []checks.Entity{},
		Evidence: []checks.Evidence{},
		Action:   "These forwarding tables are ibdoctor's own min-hop routes; give the fabric's with --lfts FILE.",
		Basis:    "routes",
	}, checks.Finding{
		Check: "topology.missing-hca", Severity: checks.Error, Group: "gpu00*",
		Title: "2 gpu00* hosts have no mlx5_1 where the hosts of 1 other group have it: a rail missing for the whole group",
		Entities: []checks.Entity{
			{NodeGUID: 0xb83fd20300000007, Node: "gpu006 mlx5_0", LID: 12, Role: "host"},
			{NodeGUID: 0xb83fd20300000008, Node: "gpu007 mlx5_0", LID: 14, Role: "host"},
		},
		Evidence: []checks.Evidence{{Name: "HCAs", Value: 0, Threshold: 4, Text: "none of 2 hosts has mlx5_1"}},
		Impact:   checks.Impact{Score: 0.1333, Summary: "jobs on these hosts run without that rail"},
		Action:   "Check whether the group's mlx5_1 leaf switch is powered, cabled and in the fabric.",
		Basis:    "topology",
	})
	d.CountBySeverity()
	return d
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// TestReportGolden pins the JSON a fixed Document encodes to: field
// names, order, number formatting, GUIDs as strings, severities as
// names, RFC 3339 UTC time. Run with -update after an intended change
// (a v1 change may only add fields).
func TestReportGolden(t *testing.T) {
	got, err := goldenDoc().JSON()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "report.golden.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("report JSON differs from %s (go test -update to accept):\n%s", path, lineDiff(string(want), string(got)))
	}
	// It reads back into the same document.
	var back Document
	if err := json.Unmarshal(want, &back); err != nil {
		t.Fatal(err)
	}
	if again, _ := back.JSON(); !bytes.Equal(again, want) {
		t.Errorf("decode/encode is not stable:\n%s", lineDiff(string(want), string(again)))
	}
}

// TestReportFieldsDocumented checks docs/schema-report.md against the JSON
// both ways: every field it documents (top-level rows, the keys listed
// for objects, the {a, b} sets of arrays, the finding table) is in the
// golden document, and every key the document has is documented.
func TestReportFieldsDocumented(t *testing.T) {
	md, err := os.ReadFile(filepath.Join("..", "..", "docs", "schema-report.md"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(marshal(t, goldenDoc()), &doc); err != nil {
		t.Fatal(err)
	}
	documented := docFields(t, string(md))
	if len(documented) < 50 {
		t.Fatalf("read only %d documented fields from docs/schema-report.md: has its table layout changed?", len(documented))
	}
	present := map[string]bool{}
	collectKeys("", doc, present)
	for _, f := range sortedKeys(documented) {
		if !present[f] {
			t.Errorf("docs/schema-report.md documents %q but the report has no such field", f)
		}
	}
	for _, f := range sortedKeys(present) {
		if !documented[f] {
			t.Errorf("the report has %q but docs/schema-report.md does not document it", f)
		}
	}
}

var (
	tick  = regexp.MustCompile("`([a-z_0-9]+)`")
	brace = regexp.MustCompile(`\{([a-z_, 0-9]+)\}`)
)

// docFields reads the two tables of schema-report.md into dotted paths:
// "fabric.nodes", "findings[].entities[].node_guid", "scope.hosts".
func docFields(t *testing.T, md string) map[string]bool {
	out := map[string]bool{}
	table := 0
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| field |") {
			table++
			continue
		}
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cols := strings.Split(strings.Trim(line, "|"), "|")
		if len(cols) < 3 {
			t.Fatalf("schema-report.md row %q: want field | type | meaning", line)
		}
		m := tick.FindStringSubmatch(cols[0])
		if m == nil {
			continue
		}
		typ, meaning := strings.TrimSpace(cols[1]), cols[2]
		prefix := ""
		if table == 2 {
			prefix = "findings[]."
		}
		name := prefix + m[1]
		out[name] = true
		switch {
		case strings.HasPrefix(typ, "array"):
			// {a, b} lists the keys of the array's objects.
			if b := brace.FindStringSubmatch(meaning); b != nil {
				for _, k := range strings.Split(b[1], ",") {
					out[name+"[]."+strings.TrimSpace(k)] = true
				}
			}
		case typ == "object":
			for _, k := range tick.FindAllStringSubmatch(meaning, -1) {
				out[name+"."+k[1]] = true
			}
		}
	}
	return out
}

func collectKeys(prefix string, v any, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			out[prefix+k] = true
			// The report's own maps (stage timings, counts) are values,
			// listed in the docs as keys too.
			collectKeys(prefix+k+".", e, out)
		}
	case []any:
		p := strings.TrimSuffix(prefix, ".") + "[]."
		for _, e := range x {
			if _, ok := e.(map[string]any); ok {
				collectKeys(p, e, out)
			}
		}
	}
}

func sortedKeys(m map[string]bool) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// lineDiff shows the first lines where two texts differ.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)) && b.Len() < 2000; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			b.WriteString("line " + strconv.Itoa(i+1) + ":\n  want " + wl + "\n  got  " + gl + "\n")
		}
	}
	return b.String()
}

// TestPrometheusGolden pins the textfile-collector output of the golden
// document.
func TestPrometheusGolden(t *testing.T) {
	var b bytes.Buffer
	if err := Prometheus(&b, goldenDoc(), PromOptions{MinSeverity: checks.Warning}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "report.golden.prom")
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("Prometheus output differs from %s (go test -update to accept):\n%s", path, lineDiff(string(want), b.String()))
	}
}

// TestImpactShortLowerBound: a share that counts only the routes that
// could be followed reads as a lower bound in the table too.
func TestImpactShortLowerBound(t *testing.T) {
	if got := ImpactShort(checks.Impact{PathShare: 0.0069, PathShareLowerBound: true}); got != "at least 0.69% of paths" {
		t.Errorf("got %q", got)
	}
	if got := ImpactShort(checks.Impact{PathShare: 0.0078}); got != "0.78% of paths" {
		t.Errorf("got %q", got)
	}
}

// TestImpactShareOneRounding (trial C8): the table's IMPACT column rounds
// a path share as the impact line does. Before: "6.2% of paths" in the
// table, "carries 6.25% of host-to-host paths" below it.
func TestImpactShareOneRounding(t *testing.T) {
	if got := checks.SharePercent(0.0625); got != "6.25%" {
		t.Fatalf("SharePercent(0.0625) = %q", got)
	}
	for _, v := range []float64{0.0625, 0.0078, 0.031, 0.125, 0.0004} {
		if got, want := ImpactShort(checks.Impact{PathShare: v}), checks.SharePercent(v)+" of paths"; got != want {
			t.Errorf("share %v: table %q, impact line's figure %q", v, got, want)
		}
	}
}
