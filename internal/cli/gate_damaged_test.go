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
	g := newGateDamage(t)
	idx, _ := filepath.Glob(filepath.Join(g.ref, "gate-*.idx"))
	if len(idx) != 1 {
		t.Fatalf("gate index: %v", idx)
	}
	name := filepath.Base(idx[0])
	good, err := os.ReadFile(idx[0])
	if err != nil {
		t.Fatal(err)
	}
	// trial F's offsets, and every 1/97th of the file.
	at := []int{144, 5495, 5589, 8229, 9733}
	for o := 0; o < len(good); o += len(good) / 97 {
		at = append(at, o)
	}
	found := g.flips(t, name, good, at, regexp.MustCompile("corrupt"))
	t.Logf("%d flips in %d bytes, %d found damaged (the rest in records the gate does not read)", len(at), len(good), found)
}

// TestGateDamagedStateFiles (review: the JSON state files carried no
// checksum): a bit flipped in snapshot.json, census-<ns>.json or
// verdicts-<ns>.json never changes a gate's verdict silently. Each flip
// fails the file's checksum (one line naming the file, then the gate
// sweeps itself), or is one the file's reading does not see (in the
// checksum member's name: what it covers is as written), or is refused
// as JSON. Before, a flipped digit or letter was read as another state.
func TestGateDamagedStateFiles(t *testing.T) {
	g := newGateDamage(t)
	for _, pat := range []string{"snapshot.json", "census-*.json", "verdicts-*.json"} {
		m, _ := filepath.Glob(filepath.Join(g.ref, pat))
		if len(m) != 1 {
			t.Fatalf("%s: %v", pat, m)
		}
		name := filepath.Base(m[0])
		good, err := os.ReadFile(m[0])
		if err != nil {
			t.Fatal(err)
		}
		// Every 1/23rd of the file, and the checksum member at its end.
		var at []int
		for o := 0; o < len(good); o += max(1, len(good)/23) {
			at = append(at, o)
		}
		for o := len(good) - 22; o < len(good); o += 3 {
			at = append(at, o)
		}
		found := g.flips(t, name, good, at, damagedJSON)
		t.Logf("%s: %d flips in %d bytes, %d found damaged", name, len(at), len(good), found)
		if found < len(at)/2 {
			t.Errorf("%s: only %d of %d flips found damaged", name, found, len(at))
		}
	}
}

// gateDamage is a sweep's state dir on the simulator, the gate's verdict
// from it, and the verdict of the gate's own sweep (what it answers when
// it cannot use the state).
type gateDamage struct {
	ref      string
	gone     string // ref without its index: the gate sweeps itself
	wantCode int
	want     string
	ownCode  int
	own      string
}

func newGateDamage(t *testing.T) *gateDamage {
	t.Helper()
	t.Setenv("SLURM_JOB_NODELIST", "")
	g := &gateDamage{ref: filepath.Join(t.TempDir(), "state")}
	if code, _, stderr := run("sweep", "--sim", "--state-dir", g.ref, "--out", filepath.Join(t.TempDir(), "r.json")); code != ExitHealthy && code != ExitFindings {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	var stderr string
	g.wantCode, g.want, stderr = gateVerdict(g.ref)
	if g.wantCode != ExitFindings || !strings.Contains(g.want, "topology.missing-hca") {
		t.Fatalf("undamaged: exit %d, want 1 with gpu012's missing HCA\n%s\n%s", g.wantCode, g.want, stderr)
	}
	// With the index gone the gate sweeps itself: its counters are then
	// judged as read, not as grown since the sweep.
	g.gone = filepath.Join(t.TempDir(), "state")
	if err := os.CopyFS(g.gone, os.DirFS(g.ref)); err != nil {
		t.Fatal(err)
	}
	idx, _ := filepath.Glob(filepath.Join(g.gone, "gate-*.idx"))
	if len(idx) != 1 || os.Remove(idx[0]) != nil {
		t.Fatalf("gate index: %v", idx)
	}
	g.ownCode, g.own, stderr = gateVerdict(g.gone)
	if !strings.Contains(stderr, "sweeping the fabric\n") {
		t.Fatalf("index removed: stderr %q", stderr)
	}
	return g
}

// gateVerdict is the gate's exit code and verdict from the state dir:
// status and findings, counts left out (the simulator's counters grow
// with time).
func gateVerdict(dir string) (int, string, string) {
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
			title = countDigits.ReplaceAllString(title, "#")
		}
		fs = append(fs, f.Severity+" "+f.Check+" "+title)
	}
	slices.Sort(fs)
	return code, doc.Status + "\n" + strings.Join(fs, "\n"), stderr
}

// damagedJSON is what a gate says of a JSON state file it refuses: it
// fails its checksum, or (a flip in the checksum member's name, which
// leaves the file without one) it is no longer JSON.
var damagedJSON = regexp.MustCompile(`fails its checksum|is not valid JSON`)

var countDigits = regexp.MustCompile(`[0-9]+(\.[0-9]+)?(e-?[0-9]+)?`)

// flips runs the gate on a copy of the state for each offset o of at
// within good (the bytes of the file name), with bit o%8 of byte o
// flipped, and judges each: it returns how many the gate found damaged
// (its stderr matches damaged). Then its first line must name the file
// and end in the gate sweeping itself, with its own sweep's verdict;
// else the verdict must be the undamaged state's. The gates run
// GOMAXPROCS at a time, each on a state dir of its own: one at a time
// they were most of the package's longest test under -race (18b40bb).
func (g *gateDamage) flips(t *testing.T, name string, good []byte, at []int, damaged *regexp.Regexp) int {
	t.Helper()
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
		if err := os.CopyFS(dir, os.DirFS(g.ref)); err != nil {
			t.Fatal(err)
		}
		bad := slices.Clone(good)
		bad[o] ^= 1 << (o % 8)
		if err := os.WriteFile(filepath.Join(dir, name), bad, 0o644); err != nil {
			t.Fatal(err)
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			code, got, stderr := gateVerdict(dir)
			results[i] = result{code, got, stderr}
		})
	}
	wg.Wait()
	found := 0
	for i, o := range at {
		if o >= len(good) {
			continue
		}
		if g.judge(t, name, o, results[i].code, results[i].got, results[i].stderr, damaged) {
			found++
		}
	}
	return found
}

// judge judges the gate's answer to the flip at byte o of name (see
// flips), and says whether the gate found the file damaged.
func (g *gateDamage) judge(t *testing.T, name string, o, code int, got, stderr string, damaged *regexp.Regexp) bool {
	t.Helper()
	if !damaged.MatchString(stderr) {
		if code == g.wantCode && got == g.want {
			return false
		}
		// The sample's counters grow with time: one that had not grown
		// since the sweep when want was taken may have by now, so the
		// undamaged state's verdict now is the one to match.
		nowCode, now, _ := gateVerdict(g.ref)
		if code != nowCode || got != now {
			t.Errorf("%s: bit %d of byte %d flipped, nothing said: exit %d, want %d\n%s\nwant\n%s\n%s", name, o%8, o, code, nowCode, got, now, stderr)
		}
		return false
	}
	if code != g.ownCode || got != g.own {
		// Counters judged on their values may cross a threshold since.
		if ownCode, own, _ := gateVerdict(g.gone); code != ownCode || got != own {
			t.Errorf("%s: bit %d of byte %d flipped, found damaged: exit %d, want %d (the gate's own sweep)\n%s\nwant\n%s", name, o%8, o, code, ownCode, got, own)
		}
	}
	// The first line; an exit 1 says its verdict on the next.
	first, _, _ := strings.Cut(stderr, "\n")
	if !strings.Contains(first, name) || !damaged.MatchString(first) || !strings.HasSuffix(first, "sweeping the fabric") {
		t.Errorf("%s: byte %d: stderr %q, want one line naming the file, then 'sweeping the fabric'", name, o, stderr)
	}
	return true
}
