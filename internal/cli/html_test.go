package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHTMLOutput: check and sweep write the page with --html, next to
// their usual output; the page names the findings and draws the fabric.
func TestHTMLOutput(t *testing.T) {
	topo := chkTopology(t)
	faults := writeFile(t, "f.faults", faultSpine1X)
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		args []string
		code int
	}{
		{"check", []string{"check", "--sim=" + topo, "--faults", faults}, ExitFindings},
		{"sweep", []string{"sweep", "--sim=" + topo, "--faults", faults, "--no-save", "--out", filepath.Join(dir, "r.json")}, ExitHealthy},
	} {
		t.Run(c.name, func(t *testing.T) {
			page := filepath.Join(dir, c.name+".html")
			code, out, stderr := run(append(c.args, "--html", page)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, c.code, out, stderr)
			}
			b, err := os.ReadFile(page)
			if err != nil {
				t.Fatal(err)
			}
			s := string(b)
			for _, want := range []string{"<!DOCTYPE html>", "ibdoctor " + c.name, `<svg id="fab"`, "leaf02/6 &lt;-&gt; spine02", ">spine02</text>", `class="l v2 s3`} {
				if !strings.Contains(s, want) {
					t.Errorf("page lacks %q", want)
				}
			}
			// The topology file has no forwarding tables: the page says the
			// routes are computed, as the text and JSON do.
			if !strings.Contains(s, "<dt>Routes</dt>") || !strings.Contains(s, "computed by ibdoctor (min-hop)") {
				t.Error("page does not say the routes are computed")
			}
			if c.name == "check" && !strings.Contains(out, "Status:") {
				t.Errorf("check printed no report with --html:\n%s", out)
			}
		})
	}
}

// TestHTMLBadPath: a path that cannot take the page (a directory,
// stdout) is refused before the sweep with a one-line error naming the
// flag, exit 2.
func TestHTMLBadPath(t *testing.T) {
	topo := chkTopology(t)
	dir := t.TempDir()
	for _, cmd := range []string{"check", "sweep"} {
		for _, bad := range []string{dir, "-"} {
			code, out, stderr := run(cmd, "--sim="+topo, "--no-save", "--html", bad)
			if cmd == "check" {
				code, out, stderr = run(cmd, "--sim="+topo, "--html", bad)
			}
			if code != ExitUndecided || !strings.Contains(stderr, "--html") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("%s --html %s: exit %d, stderr %q; want 2 and one line naming --html", cmd, bad, code, stderr)
			}
			if strings.Contains(out, "Status:") || strings.Contains(out, "schema") {
				t.Errorf("%s --html %s swept anyway:\n%s", cmd, bad, out)
			}
		}
	}
}

// TestCheckHTMLMissingFolder: an interactive check does not create the
// folders of a typo'd --html path (it did, silently, and wrote the page
// there); it refuses before the sweep naming the missing folder and the
// fix. sweep, the cron command, still creates them.
func TestCheckHTMLMissingFolder(t *testing.T) {
	topo := chkTopology(t)
	dir := t.TempDir()
	missing := filepath.Join(dir, "nonexistent")
	page := filepath.Join(missing, "dir", "x.html")
	code, out, stderr := run("check", "--sim="+topo, "--html", page)
	want := "--html " + page + ": folder " + missing + " does not exist"
	if code != ExitUndecided || !strings.Contains(stderr, want) || !strings.Contains(stderr, "mkdir -p") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Errorf("exit %d, stderr %q; want 2 and one line with %q and the fix", code, stderr, want)
	}
	if strings.Contains(out, "Status:") {
		t.Errorf("swept anyway:\n%s", out)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("check created %s", missing)
	}
	if code, _, stderr := run("sweep", "--sim="+topo, "--no-save", "--out", filepath.Join(dir, "r.json"), "--html", page); code != ExitHealthy {
		t.Fatalf("sweep --html %s: exit %d: %s", page, code, stderr)
	}
	if _, err := os.Stat(page); err != nil {
		t.Errorf("sweep did not write its page: %v", err)
	}
}
