package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/report"
)

// wholeReport is sweep's report as it was written before it streamed:
// the whole document encoded at once (Document.JSON's encoding).
func wholeReport(t *testing.T, d *report.Document) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestSweepReportStreamedIsWhole: the report sweep streams into --out (a
// file, or stdout) is byte for byte the whole encoding of its document,
// on a sweep with findings (a degraded link, counters, "<" and ">" in
// the text), unreached entries (a dead host) and timings.
func TestSweepReportStreamedIsWhole(t *testing.T) {
	topo := chkTopology(t)
	faults := writeFile(t, "mixed.faults", "dead \"gpu016 mlx5_0\"\ndegrade leaf01/5 width=1x\ncounter leaf02/1 SymbolErrorCounter=1200\n")
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	code, _, stderr := run("sweep", "--sim="+topo, "--faults", faults, "--timeout", deadTimeout, "--retries", "0",
		"--out", out, "--state-dir", filepath.Join(dir, "state"))
	if code != ExitPartial {
		t.Fatalf("exit %d, want %d (partial): %s", code, ExitPartial, stderr)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var d report.Document
	if err := json.Unmarshal(got, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Findings) == 0 || len(d.Unreached) == 0 || len(d.Timings) == 0 || !strings.Contains(string(got), "<->") {
		t.Fatalf("the sweep gave %d findings, %d unreached, %d timings: the test needs each", len(d.Findings), len(d.Unreached), len(d.Timings))
	}
	want := wholeReport(t, &d)
	if !bytes.Equal(got, want) {
		t.Fatalf("--out differs from the whole encoding of its document:\n%s", firstLineDiff(string(want), string(got)))
	}

	// The staging itself, on that document: to a file and to stdout.
	again := filepath.Join(dir, "again.json")
	st, err := stageReport(again, &d)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(again); !os.IsNotExist(err) {
		t.Fatalf("the report is in place before it is published (%v)", err)
	}
	if err := st.publish(nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(again); !bytes.Equal(b, want) {
		t.Fatalf("staged file differs from the whole encoding:\n%s", firstLineDiff(string(want), string(b)))
	}
	st, err = stageReport("-", &d)
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	if err := st.publish(&stdout); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(stdout.Bytes(), want) {
		t.Fatalf("stdout differs from the whole encoding:\n%s", firstLineDiff(string(want), stdout.String()))
	}
	sweepFiles(t, dir)
}

// TestSweepStateFailureKeepsReport: the report is staged before the state
// is written; when writing the state fails, the previous report stays
// and its temporary file is removed.
func TestSweepStateFailureKeepsReport(t *testing.T) {
	topo := chkTopology(t)
	dir := t.TempDir()
	out, state := filepath.Join(dir, "r.json"), filepath.Join(dir, "state")
	if err := os.WriteFile(out, []byte("the last report\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// snapshot.json a directory: the save fails after the fabric file
	// and gate.idx are staged.
	if err := os.MkdirAll(filepath.Join(state, "snapshot.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run("sweep", "--sim="+topo, "--out", out, "--state-dir", state)
	if code != ExitUndecided || stdout != "" || !strings.Contains(stderr, "snapshot.json") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 2 naming snapshot.json", code, stdout, stderr)
	}
	if b, _ := os.ReadFile(out); string(b) != "the last report\n" {
		t.Errorf("a sweep whose state failed replaced the report: %q", b)
	}
	sweepFiles(t, dir)
}

// firstLineDiff shows the first line where got leaves want.
func firstLineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(w), len(g)) {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\nwant %q\ngot  %q", i+1, a, b)
		}
	}
	return "(same lines)"
}

// TestSweepRemovesStaleOutputTemps (trial B12): the temporaries a killed
// sweep left beside --out and --prom (".r.json.tmp-*", older than this
// sweep's lock) are removed by the next sweep; a newer one, and a folder
// of that name, are not.
func TestSweepRemovesStaleOutputTemps(t *testing.T) {
	topo := chkTopology(t)
	dir := t.TempDir()
	out, prom, state := filepath.Join(dir, "r.json"), filepath.Join(dir, "p.prom"), filepath.Join(dir, "state")
	old, later := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	mk := func(name string, at time.Time) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("killed"), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, at, at)
		return p
	}
	stale := []string{mk(".r.json.tmp-1", old), mk(".p.prom.tmp-2", old)}
	kept := []string{mk(".r.json.tmp-3", later), filepath.Join(dir, ".p.prom.tmp-dir")}
	os.Mkdir(kept[1], 0o755)
	if code, _, stderr := run("sweep", "--sim="+topo, "--out", out, "--prom", prom, "--state-dir", state); code != ExitHealthy {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, p := range stale {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s stayed", p)
		}
	}
	for _, p := range kept {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
}
