package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/capture"
	"github.com/ibdoctor/ibdoctor/mad"
)

// relNet is the fabric of issue #17's reproductions as an ibsim net file:
// 8 leaves of 8 hosts (h0001..h0064, ports 1-8) and 4 spines (leaf port
// 8+s to spine s, spine port l to leaf l), all HDR.
func relNet() string {
	const leaves, hosts, spines = 8, 8, 4
	var b strings.Builder
	b.WriteString("extspeed=7\nspeed=7\n\n")
	sw := func(name string, guid uint64, ports []string) {
		fmt.Fprintf(&b, "vendid=0x2c9\ndevid=0xcf08\nsysimgguid=%#x\nswitchguid=%#x\nSwitch 40 %q # %q enhanced port 0 lmc 0\n", guid, guid, name, name)
		for _, p := range ports {
			b.WriteString(p + "\n")
		}
		b.WriteString("\n")
	}
	for s := 1; s <= spines; s++ {
		var ps []string
		for l := 1; l <= leaves; l++ {
			ps = append(ps, fmt.Sprintf("[%d] \"leaf%03d\"[%d]", l, l, hosts+s))
		}
		sw(fmt.Sprintf("spine%03d", s), 0xb83fd20300a00000+uint64(s), ps)
	}
	for l := 1; l <= leaves; l++ {
		var ps []string
		for h := 1; h <= hosts; h++ {
			ps = append(ps, fmt.Sprintf("[%d] \"h%04d\"[1]", h, (l-1)*hosts+h))
		}
		for s := 1; s <= spines; s++ {
			ps = append(ps, fmt.Sprintf("[%d] \"spine%03d\"[%d]", hosts+s, s, l))
		}
		sw(fmt.Sprintf("leaf%03d", l), 0xb83fd20300b00000+uint64(l), ps)
	}
	for l := 1; l <= leaves; l++ {
		for h := 1; h <= hosts; h++ {
			n := (l-1)*hosts + h
			guid := 0xb83fd20300c00000 + uint64(n)
			fmt.Fprintf(&b, "vendid=0x2c9\ndevid=0x101b\nsysimgguid=%#x\ncaguid=%#x\nCa 1 \"h%04d\" # \"h%04d mlx5_0\"\n[1] \"leaf%03d\"[%d]\n\n", guid, guid, n, n, l, h)
		}
	}
	return b.String()
}

// perfMADs counts the PerfMgt requests in a capture.
func perfMADs(t *testing.T, path string) int {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	r, err := capture.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
		// MgmtClass is the MAD header's second byte; a request has the
		// response bit (0x80 of Method) clear.
		if mad.Class(f.MAD[1]) == mad.ClassPerfMgt && f.MAD[3]&0x80 == 0 {
			n++
		}
	}
}

// TestGateReadsCounters is issue #17 item 1 as reported: counter faults on
// the job's route after the sweep. The gate must re-read the counters
// (PerfMgt MADs in its capture), judge them as check does, fail, and name
// the ports.
func TestGateReadsCounters(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	dir := t.TempDir()
	net := writeFile(t, "rel.net", relNet())
	ctr := writeFile(t, "ctr.txt", "counter spine001/3 PortRcvErrors=500 LinkDownedCounter=50\ncounter leaf001/9 SymbolErrorCounter=5000\n")
	state := filepath.Join(dir, "S")
	if code, _, stderr := run("sweep", "--sim="+net, "--state-dir", state, "--out", filepath.Join(t.TempDir(), "r.json")); code != ExitHealthy {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	pcap := filepath.Join(dir, "gate.pcap")
	code, out, stderr := run("gate", "--sim="+net, "--faults", ctr, "--state-dir", state, "--nodes", "h0001,h0017", "--fail-on", "warning", "--json", "--pcap", pcap)
	if code != ExitFindings {
		t.Fatalf("gate: exit %d, want %d\n%s\n%s", code, ExitFindings, out, stderr)
	}
	d := chkParse(t, out)
	named := map[string]bool{}
	for _, f := range d.Findings {
		if f.Check == "counters.errors" {
			named[f.Entities[0].Node+"/"+fmt.Sprint(f.Entities[0].Port)+" "+f.Evidence[0].Name] = true
		}
	}
	for _, want := range []string{"spine001/3 PortRcvErrors", "spine001/3 LinkDownedCounter", "leaf001/9 SymbolErrorCounter"} {
		if !named[want] {
			t.Errorf("no counters.errors finding for %s; got %v", want, named)
		}
	}
	if n := perfMADs(t, pcap); n == 0 {
		t.Errorf("the gate's capture has no PerfMgt request")
	}

	// check on the same fabric agrees (the same verdict code).
	if code, out, _ := run("check", "--sim="+net, "--faults", ctr, "--fail-on", "warning"); code != ExitFindings {
		t.Errorf("check: exit %d\n%s", code, out)
	}

	// --no-counters: no PerfMgt MAD, and the report says counters were not read.
	code, out, _ = run("gate", "--sim="+net, "--faults", ctr, "--state-dir", state, "--nodes", "h0001,h0017", "--fail-on", "warning", "--json", "--no-counters", "--pcap", pcap)
	if code != ExitHealthy || perfMADs(t, pcap) != 0 || !skippedCheck(chkParse(t, out), "counters.errors") {
		t.Errorf("--no-counters: exit %d, %d PerfMgt MADs", code, perfMADs(t, pcap))
	}

	// --thresholds is the same file check reads: raised over the values,
	// nothing is over.
	thr := writeFile(t, "thr.txt", "PortRcvErrors=1000\nLinkDownedCounter=1000\nSymbolErrorCounter=10000\ndelta.PortRcvErrors=1000\ndelta.LinkDownedCounter=1000\ndelta.SymbolErrorCounter=10000\nber=1\n")
	if code, out, _ := run("gate", "--sim="+net, "--faults", ctr, "--state-dir", state, "--nodes", "h0001,h0017", "--fail-on", "warning", "--thresholds", thr); code != ExitHealthy {
		t.Errorf("raised --thresholds: exit %d\n%s", code, out)
	}

	// A counter over its absolute threshold before the sweep and not
	// growing since: history, info, as the next sweep judges it (trial
	// N10; before, an error on its value on every gate and sweep).
	old := filepath.Join(dir, "S2")
	if code, _, stderr := run("sweep", "--sim="+net, "--faults", ctr, "--state-dir", old, "--out", filepath.Join(t.TempDir(), "r.json")); code != ExitHealthy {
		t.Fatalf("sweep with the faults: exit %d: %s", code, stderr)
	}
	code, out, _ = run("gate", "--sim="+net, "--faults", ctr, "--state-dir", old, "--nodes", "h0001,h0017", "--fail-on", "warning", "--json")
	d = chkParse(t, out)
	if code != ExitHealthy || len(d.Findings) == 0 || d.Findings[0].Basis != "absolute" || d.Findings[0].Severity != checks.Info || !strings.Contains(d.Findings[0].Title, "not growing since the last sweep") {
		t.Errorf("old errors: exit %d findings %+v", code, d.Findings)
	}
}

// TestGateWithoutSnapshotSweepsCounters: with no snapshot, the gate sweeps
// the whole fabric, counters included, and judges the job's scope.
func TestGateWithoutSnapshotSweepsCounters(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	dir := t.TempDir()
	net := writeFile(t, "rel.net", relNet())
	ctr := writeFile(t, "ctr.txt", "counter spine001/3 PortRcvErrors=500\n")
	pcap := filepath.Join(dir, "gate.pcap")
	code, out, stderr := run("gate", "--sim="+net, "--faults", ctr, "--state-dir", filepath.Join(dir, "none"), "--nodes", "h0001,h0017", "--json", "--pcap", pcap)
	if code != ExitFindings {
		t.Fatalf("gate: exit %d, want %d\n%s\n%s", code, ExitFindings, out, stderr)
	}
	if !strings.Contains(stderr, "sweeping the fabric") {
		t.Errorf("stderr does not say it sweeps: %s", stderr)
	}
	d := chkParse(t, out)
	if d.Findings[0].Check != "counters.errors" || d.Findings[0].Entities[0].Node != "spine001" {
		t.Errorf("first finding %+v", d.Findings[0])
	}
	// every linked port of the 76 nodes (224 ports, ErrorsOnly: one read
	// each, plus a ClassPortInfo per PMA) and then the scope's again
	if n := perfMADs(t, pcap); n < 224 {
		t.Errorf("%d PerfMgt requests: the whole fabric's counters were not swept", n)
	}
}

// TestGateCounterCleared: a sweep saved SymbolErrorCounter=5000 and
// LinkDownedCounter=3 on leaf001/9 (on h0001 -> h0017); the gate then
// reads them lower, the counters cleared (or the simulator restarted)
// since. Every count since the clear happened after the sweep: at least
// that much growth, judged on the since-sweep thresholds and said "at
// least" (trial D2), never the difference from the saved value ("4818")
// nor a BER (the count's span is unknown). Read as 0, nothing is over.
func TestGateCounterCleared(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	dir := t.TempDir()
	net := writeFile(t, "rel.net", relNet())
	state := filepath.Join(dir, "S")
	swept := writeFile(t, "swept.txt", "counter leaf001/9 SymbolErrorCounter=5000\ncounter leaf001/9 LinkDownedCounter=3\n")
	if code, _, stderr := run("sweep", "--sim="+net, "--faults", swept, "--state-dir", state, "--out", filepath.Join(dir, "r.json")); code != ExitHealthy {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	gate := func(extra ...string) (int, *chkDoc) {
		t.Helper()
		args := append([]string{"gate", "--sim=" + net, "--state-dir", state, "--nodes", "h0001,h0017", "--json"}, extra...)
		code, out, stderr := run(args...)
		if code == ExitUndecided {
			t.Fatalf("gate %q: exit 2: %s", extra, stderr)
		}
		return code, chkParse(t, out)
	}
	if code, d := gate("--fail-on", "warning"); code != ExitHealthy || len(byCheckID(d, "counters.errors")) != 0 {
		t.Errorf("cleared to 0: exit %d, counter findings %+v", code, byCheckID(d, "counters.errors"))
	}
	now := writeFile(t, "now.txt", "counter leaf001/9 SymbolErrorCounter=182\n")
	// A warning (at least 182 symbol errors since the sweep), not the
	// error a BER over the time since the sweep made of it.
	code, d := gate("--faults", now, "--fail-on", "error")
	fs := byCheckID(d, "counters.errors")
	if code != ExitHealthy || len(fs) != 1 {
		t.Fatalf("cleared to 182, --fail-on error: exit %d, counter findings %+v", code, fs)
	}
	f := fs[0]
	if f.Basis != "since-snapshot" || f.Severity != checks.Warning || f.Entities[0].Node != "leaf001" || f.Entities[0].Port != 9 {
		t.Errorf("finding %+v", f)
	}
	text := f.Title + " | " + f.Evidence[0].Text
	for _, bad := range []string{"BER", "4818"} {
		if strings.Contains(text, bad) {
			t.Errorf("%q in %q", bad, text)
		}
	}
	for _, want := range []string{"at least +182 since the last sweep", "cleared since the sweep; at least 182 since", "182 now since the clear"} {
		if !strings.Contains(text, want) {
			t.Errorf("%q not in %q", want, text)
		}
	}
	// Cleared, then one link-down: the warning the same down without
	// the clear gets (before: nothing, 1 within the absolute 10).
	down := writeFile(t, "down.txt", "counter leaf001/9 LinkDownedCounter=1\n")
	code, d = gate("--faults", down, "--fail-on", "warning")
	fs = byCheckID(d, "counters.errors")
	if code != ExitFindings || len(fs) != 1 || fs[0].Severity != checks.Warning ||
		!strings.Contains(fs[0].Title, "went down at least 1 time since the last sweep") ||
		!strings.Contains(fs[0].Evidence[0].Text, "LinkDownedCounter cleared since the sweep; at least 1 since") {
		t.Errorf("cleared, then one down: exit %d, counter findings %+v", code, fs)
	}
}

// byCheckID returns d's findings of check id.
func byCheckID(d *chkDoc, id string) []checks.Finding {
	var out []checks.Finding
	for _, f := range d.Findings {
		if f.Check == id {
			out = append(out, f)
		}
	}
	return out
}

// TestGateLiveRoutes is issue #17 item 2 on rel.net: h0001 -> h0017 goes
// leaf001/9 -> spine001 -> leaf003 when swept. Moved afterwards onto
// leaf001/10 -> spine002 (both ways), whose link then trained at 1X, the
// gate judges the new route; after the SM routed around a down leaf001/9,
// the job passes (no stale "cannot reach" from the snapshot's tables).
func TestGateLiveRoutes(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	net := writeFile(t, "rel.net", relNet())
	state := filepath.Join(t.TempDir(), "S")
	if code, _, stderr := run("sweep", "--sim="+net, "--state-dir", state, "--out", filepath.Join(t.TempDir(), "r.json")); code != ExitHealthy {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	moved := writeFile(t, "moved.txt", "lft leaf001 behind=leaf003 port=10\nlft spine002 behind=leaf003 port=3\nlft leaf003 behind=leaf001 port=10\nlft spine002 behind=leaf001 port=1\ndegrade leaf001/10 width=1x\n")
	code, out, stderr := run("gate", "--sim="+net, "--faults", moved, "--state-dir", state, "--nodes", "h0001,h0017", "--json")
	if code != ExitFindings {
		t.Fatalf("1X on the new route: exit %d\n%s\n%s", code, out, stderr)
	}
	if f := chkParse(t, out).Findings[0]; f.Check != "link.degraded-width" || f.Entities[0].Node != "leaf001" || f.Entities[0].Port != 10 {
		t.Errorf("first finding %s %q", f.Check, f.Title)
	}
	around := writeFile(t, "around.txt", "down leaf001/9\nsweep\n")
	code, out, stderr = run("gate", "--sim="+net, "--faults", around, "--state-dir", state, "--nodes", "h0001,h0017", "--json")
	if code != ExitHealthy {
		t.Fatalf("rerouted around a down link: exit %d\n%s\n%s", code, out, stderr)
	}
}

// TestGateExitPrecedence: docs/exit-codes.md's rule for a gate. A finding
// at or above --fail-on in what was read exits 1 even when part of the
// job's routes could not be read (listed); the unread part alone exits 2.
func TestGateExitPrecedence(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	net := writeFile(t, "rel.net", relNet())
	state := filepath.Join(t.TempDir(), "S")
	if code, _, stderr := run("sweep", "--sim="+net, "--state-dir", state, "--out", filepath.Join(t.TempDir(), "r.json")); code != ExitHealthy {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	fast := []string{"--timeout", deadTimeout, "--retries", "0", "--json"}
	both := writeFile(t, "both.txt", "dead h0017\ndegrade leaf001/1 width=1x\n")
	code, out, stderr := run(append([]string{"gate", "--sim=" + net, "--faults", both, "--state-dir", state, "--nodes", "h0001,h0017"}, fast...)...)
	d := chkParse(t, out)
	if code != ExitFindings || d.Status != "unhealthy" || d.Complete || len(d.Unreached) == 0 {
		t.Errorf("finding and unread port: exit %d status %q complete %v unreached %+v\n%s", code, d.Status, d.Complete, d.Unreached, stderr)
	}
	dead := writeFile(t, "dead.txt", "dead h0017\n")
	code, out, _ = run(append([]string{"gate", "--sim=" + net, "--faults", dead, "--state-dir", state, "--nodes", "h0001,h0017"}, fast...)...)
	if d := chkParse(t, out); code != ExitUndecided || d.Status != "undecided" {
		t.Errorf("unread port only: exit %d status %q", code, d.Status)
	}
}

// TestGateOwnSweepPartial: a gate that sweeps (no snapshot) a fabric where
// a node off the job's routes does not answer lists it; it does not print
// "Reached: everything".
func TestGateOwnSweepPartial(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	net := writeFile(t, "rel.net", relNet())
	dead := writeFile(t, "dead.txt", "dead h0064\n")
	code, out, stderr := run("gate", "--sim="+net, "--faults", dead, "--state-dir", filepath.Join(t.TempDir(), "none"), "--nodes", "h0001,h0017", "--timeout", deadTimeout, "--retries", "0")
	if code != ExitHealthy {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	if strings.Contains(out, "everything") || !strings.Contains(out, "1 thing could not be read") || !strings.Contains(out, "behind leaf008 port 8") {
		t.Errorf("the gate's partial sweep is not reported:\n%s", out)
	}
}

// TestGateSimCountersContinue is the README's cron sweep and prolog gate
// tried on the built-in sample, as two runs: the second simulator is a
// later look at the same fabric, so spine02/49's climbing symbol errors
// read more than the sweep saved, never "cleared since the sweep" (every
// --sim run once restarted the sample's counters from its own start). The
// sweep reads twice 1s apart, so a restart would read less. The sample's
// counters are cleared at the top of each UTC hour (docs/faults.md): a run
// that straddles one is repeated.
func TestGateSimCountersContinue(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	for try := 0; ; try++ {
		hour := time.Now().UTC().Truncate(time.Hour)
		dir := t.TempDir()
		state := filepath.Join(dir, "S")
		if code, _, stderr := run("sweep", "--sim", "--interval", "1s", "--state-dir", state, "--out", filepath.Join(dir, "r.json")); code != ExitHealthy {
			t.Fatalf("sweep: exit %d: %s", code, stderr)
		}
		code, out, stderr := run("gate", "--sim", "--nodes", "gpu[001-032]", "--state-dir", state, "--json")
		if code == ExitUndecided {
			t.Fatalf("gate: exit 2: %s", stderr)
		}
		if !time.Now().UTC().Truncate(time.Hour).Equal(hour) && try == 0 {
			continue
		}
		var found bool
		for _, f := range byCheckID(chkParse(t, out), "counters.errors") {
			text := f.Title + " | " + f.Evidence[0].Text
			if strings.Contains(text, "cleared") {
				t.Errorf("%s", text)
			}
			if f.Entities[0].Node == "spine02" && f.Entities[0].Port == 49 {
				found = true
				if f.Basis != "since-snapshot" || !strings.Contains(text, "since the previous sweep at") {
					t.Errorf("spine02/49: basis %q: %s", f.Basis, text)
				}
			}
		}
		if !found {
			t.Errorf("no counters.errors finding on spine02/49:\n%s", out)
		}
		return
	}
}

// TestGateCounterClearedToZeroSaid (trial D2's leftover): counters cleared
// since the sweep with nothing counted since read 0 and make no finding,
// and the report said nothing: an operator comparing with the sweep saw
// 5000 symbol errors and 3 link-downs vanish without a word. The
// report's summary says once how many ports were cleared and that the
// errors before the clear are not visible, in the text and the JSON
// (report.SummaryRows renders the page's lines as the terminal's).
func TestGateCounterClearedToZeroSaid(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	dir := t.TempDir()
	net := writeFile(t, "rel.net", relNet())
	state := filepath.Join(dir, "S")
	swept := writeFile(t, "swept.txt", "counter leaf001/9 SymbolErrorCounter=5000\ncounter leaf001/9 LinkDownedCounter=3\n")
	if code, _, stderr := run("sweep", "--sim="+net, "--faults", swept, "--state-dir", state, "--out", filepath.Join(dir, "r.json")); code != ExitHealthy {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	// The gate's faults plant counters (a net file carries none: without
	// any, no counters are read at all), leaf001/9's at 0: cleared.
	now := writeFile(t, "now.txt", "counter leaf001/9 SymbolErrorCounter=0\n")
	args := []string{"gate", "--sim=" + net, "--faults", now, "--state-dir", state, "--nodes", "h0001,h0017", "--fail-on", "warning"}
	code, out, stderr := run(append(args, "--json")...)
	if code != ExitHealthy {
		t.Fatalf("gate: exit %d: %s", code, stderr)
	}
	d := chkParse(t, out)
	for _, want := range []string{"1 port", "leaf001/9", "cleared since the previous sweep", "not visible"} {
		if !strings.Contains(d.CountersCleared, want) {
			t.Errorf("JSON counters_cleared %q lacks %q", d.CountersCleared, want)
		}
	}
	code, out, stderr = run(append(args, "--no-color")...)
	if code != ExitHealthy {
		t.Fatalf("gate: exit %d: %s", code, stderr)
	}
	if n := strings.Count(out, "cleared since the previous sweep"); n != 1 || !strings.Contains(out, "leaf001/9") {
		t.Errorf("text report says the clear %d times (want once, naming leaf001/9):\n%s", n, out)
	}
}
