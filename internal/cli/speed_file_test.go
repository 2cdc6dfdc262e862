package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDegradedSpeedSupportedNotInFile: the sample's gpu027 mlx5_6 is an
// HDR-only HCA (live: info link.slower-hardware). Saved as ibnetdiscover
// text, which records no supported speeds, it became an error
// link.degraded-speed "below what both ends can run" (trial T8): the
// simulator's made-up supported mask was judged as read. From the file
// the check cannot know the HCA supports NDR: it must say so, below error.
func TestDegradedSpeedSupportedNotInFile(t *testing.T) {
	dir := t.TempDir()
	topo, fts := filepath.Join(dir, "s.topo"), filepath.Join(dir, "s.fts")
	for _, c := range []struct {
		path string
		args []string
	}{{topo, []string{"discover", "--sim", "--format", "ibnetdiscover"}}, {fts, []string{"routes", "--sim", "--format", "dump_fts"}}} {
		code, out, stderr := run(c.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, stderr)
		}
		if err := os.WriteFile(c.path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, out, stderr := run("check", "--sim="+topo, "--lfts", fts, "--json")
	var doc struct {
		Findings []struct {
			Check    string `json:"check"`
			Severity string `json:"severity"`
			Title    string `json:"title"`
			Evidence []struct {
				Text string `json:"text"`
			} `json:"evidence"`
			Action string `json:"action"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("check --json: %v\n%s", err, stderr)
	}
	found := false
	for _, f := range doc.Findings {
		if f.Check != "link.degraded-speed" || !strings.Contains(f.Title, "gpu027 mlx5_6") {
			continue
		}
		found = true
		ev := ""
		for _, e := range f.Evidence {
			ev += e.Text + "\n"
		}
		if f.Severity != "warning" || !strings.Contains(ev, "(ibnetdiscover) does not record supported speeds") || !strings.Contains(f.Title, "not in the file") || strings.Contains(f.Action, "below what both ends can run") {
			t.Errorf("gpu027 mlx5_6 from a file without supported speeds: %s %q\nevidence: %s\naction: %s\nwant a warning saying the file does not record supported speeds, not 'below what both ends can run'", f.Severity, f.Title, ev, f.Action)
		}
	}
	if !found {
		t.Errorf("no link.degraded-speed finding for gpu027 mlx5_6: a link below its peers must still be shown")
	}
}
