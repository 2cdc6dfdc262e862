package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestGateDamagedIndex (trial F2): a bit flipped in gate-<ns>.idx never
// changes a gate's verdict silently. Each flip is refused at open or
// found where the gate reads it (one line naming the file, then the gate
// sweeps itself), or changes nothing the gate reads: on the simulator
// the verdict is then the undamaged snapshot's either way. Before, some
// flips invented a miswire or a duplicate description, or dropped the
// missing HCA of gpu012.
func TestGateDamagedIndex(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	ref := filepath.Join(t.TempDir(), "state")
	if code, _, stderr := run("sweep", "--sim", "--state-dir", ref, "--out", filepath.Join(t.TempDir(), "r.json")); code != ExitHealthy && code != ExitFindings {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	idx, _ := filepath.Glob(filepath.Join(ref, "gate-*.idx"))
	if len(idx) != 1 {
		t.Fatalf("gate index: %v", idx)
	}
	good, err := os.ReadFile(idx[0])
	if err != nil {
		t.Fatal(err)
	}
	// The verdict: status and findings, counts left out (the simulator's
	// counters grow with time).
	digits := regexp.MustCompile(`[0-9]+(\.[0-9]+)?(e-?[0-9]+)?`)
	verdict := func(dir string) (int, string, string) {
		code, out, stderr := run("gate", "--sim", "--nodes", "gpu[001-016]", "--state-dir", dir, "--json")
		var doc struct {
			Status   string
			Findings []struct{ Check, Severity, Title string }
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			return code, "no report: " + err.Error(), stderr
		}
		var fs []string
		for _, f := range doc.Findings {
			title := f.Title
			if f.Check == "counters.errors" {
				title = digits.ReplaceAllString(title, "#")
			}
			fs = append(fs, f.Severity+" "+f.Check+" "+title)
		}
		slices.Sort(fs)
		return code, doc.Status + "\n" + strings.Join(fs, "\n"), stderr
	}
	wantCode, want, stderr := verdict(ref)
	if wantCode != ExitFindings || !strings.Contains(want, "topology.missing-hca") {
		t.Fatalf("undamaged: exit %d, want 1 with gpu012's missing HCA\n%s\n%s", wantCode, want, stderr)
	}
	// With the index gone the gate sweeps itself: its counters are then
	// judged as read, not as grown since the sweep.
	gone := filepath.Join(t.TempDir(), "state")
	if err := os.CopyFS(gone, os.DirFS(ref)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(gone, filepath.Base(idx[0]))); err != nil {
		t.Fatal(err)
	}
	ownCode, own, stderr := verdict(gone)
	if !strings.Contains(stderr, "sweeping the fabric\n") {
		t.Fatalf("index removed: stderr %q", stderr)
	}
	// trial F's offsets, and every 1/97th of the file.
	at := []int{144, 5495, 5589, 8229, 9733}
	for o := 0; o < len(good); o += len(good) / 97 {
		at = append(at, o)
	}
	// The flips' gates run GOMAXPROCS at a time, each on a state dir of
	// its own: each is a whole gate run (most sweep the fabric
	// themselves), and one at a time they were most of the package's
	// longest test under -race.
	type result struct {
		code        int
		got, stderr string
	}
	results := make([]result, len(at))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	defer wg.Wait() // a Fatal below leaves none running past the test
	for i, o := range at {
		if o >= len(good) {
			continue
		}
		dir := filepath.Join(t.TempDir(), "state")
		if err := os.CopyFS(dir, os.DirFS(ref)); err != nil {
			t.Fatal(err)
		}
		bad := slices.Clone(good)
		bad[o] ^= 1 << (o % 8)
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(idx[0])), bad, 0o644); err != nil {
			t.Fatal(err)
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			code, got, stderr := verdict(dir)
			results[i] = result{code, got, stderr}
		})
	}
	wg.Wait()
	found := 0
	for i, o := range at {
		if o >= len(good) {
			continue
		}
		code, got, stderr := results[i].code, results[i].got, results[i].stderr
		damaged := strings.Contains(stderr, "corrupt")
		if !damaged && (code != wantCode || got != want) {
			t.Errorf("bit %d of byte %d flipped, nothing said: exit %d, want %d\n%s\nwant\n%s", o%8, o, code, wantCode, got, want)
		}
		if damaged {
			found++
			if code != ownCode || got != own {
				t.Errorf("bit %d of byte %d flipped, found damaged: exit %d, want %d (the gate's own sweep)\n%s\nwant\n%s", o%8, o, code, ownCode, got, own)
			}
			// The first line; an exit 1 says its verdict on the next.
			first, _, _ := strings.Cut(stderr, "\n")
			if !strings.Contains(first, filepath.Base(idx[0])) || !strings.Contains(first, "corrupt") || !strings.HasSuffix(first, "sweeping the fabric") {
				t.Errorf("byte %d: stderr %q, want one line naming the file, then 'sweeping the fabric'", o, stderr)
			}
		}
	}
	t.Logf("%d flips in %d bytes, %d found damaged (the rest in records the gate does not read)", len(at), len(good), found)
}
