package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSourceWarningsInEveryArtifact (trial C3): what the file reader says
// about how it read a dump (a GUID read as two nodes, CA ports without a
// DR path line, values replaced) went to stderr only; a cron sweep's
// --out JSON, --html page and --prom textfile, and check --json, said
// nothing of it. The one list is in each: source_warnings[] in the JSON,
// a line each on the page, and ibdoctor_source_warnings in the textfile.
func TestSourceWarningsInEveryArtifact(t *testing.T) {
	path := corpusPath(t, "treydock-hdr.ibnetdiscover-p")
	dir := t.TempDir()
	out, html, prom := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.html"), filepath.Join(dir, "r.prom")
	code, _, stderr := run("sweep", "--sim="+path, "--state-dir", filepath.Join(dir, "st"), "--out", out, "--html", html, "--prom", prom)
	if code == ExitUndecided && !strings.Contains(stderr, "claimed by") {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	want := []string{"is claimed by 2 nodes at different LIDs", "have no DR path line naming their node"}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Fatalf("stderr does not warn %q: %s", w, stderr)
		}
	}
	var doc struct {
		SourceWarnings []string `json:"source_warnings"`
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(prom)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		if !strings.Contains(strings.Join(doc.SourceWarnings, "\n"), w) {
			t.Errorf("--out: source_warnings %q lacks %q", doc.SourceWarnings, w)
		}
		if !strings.Contains(string(page), w) {
			t.Errorf("--html does not say %q", w)
		}
	}
	n := strings.Count(stderr, "warning: ") // the 2 above and the file's parts
	if len(doc.SourceWarnings) != n {
		t.Errorf("--out: %d source_warnings, stderr %d warnings", len(doc.SourceWarnings), n)
	}
	if !strings.Contains(string(text), fmt.Sprintf("\nibdoctor_source_warnings %d\n", n)) {
		t.Errorf("--prom has no ibdoctor_source_warnings %d:\n%s", n, text)
	}
	code, jout, stderr := run("check", "--json", "--sim="+path)
	if err := json.Unmarshal([]byte(jout), &doc); err != nil {
		t.Fatalf("check: exit %d: %v: %s", code, err, stderr)
	}
	if len(doc.SourceWarnings) != n {
		t.Errorf("check --json: source_warnings %q, want the %d of stderr", doc.SourceWarnings, n)
	}
	// A source read without a word says none: the key is left out and
	// the gauge is 0.
	topo, _ := simTopology(t)
	prom2 := filepath.Join(dir, "q.prom")
	if code, _, stderr := run("sweep", "--sim="+topo, "--state-dir", filepath.Join(dir, "st2"), "--out", filepath.Join(dir, "q.json"), "--prom", prom2); code == ExitUndecided {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "q.json")); strings.Contains(string(b), "source_warnings") {
		t.Errorf("source_warnings on a file read without warnings")
	}
	if b, _ := os.ReadFile(prom2); !strings.Contains(string(b), "\nibdoctor_source_warnings 0\n") {
		t.Errorf("no ibdoctor_source_warnings 0:\n%s", b)
	}
}
