package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// readmeProlog returns the README's Slurm prolog script whose sh block
// holds marker (its path comment).
func readmeProlog(t *testing.T, marker string) string {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	i := strings.Index(s, "### A Slurm prolog gate")
	if i < 0 {
		t.Fatal("README.md has no prolog section")
	}
	for s = s[i:]; ; {
		start := strings.Index(s, "```sh\n")
		if start < 0 {
			t.Fatalf("the prolog section has no sh block with %q", marker)
		}
		s = s[start+6:]
		end := strings.Index(s, "```")
		if end < 0 {
			t.Fatal("an sh block of the prolog section does not end")
		}
		if strings.Contains(s[:end], marker) {
			return s[:end]
		}
		s = s[end+3:]
	}
}

// prologHarness runs a README prolog with sh as written, but for its
// folders (moved under a temporary root), ibdoctor (this test binary on
// the simulated rel.net fabric) and scontrol (a fake that records its
// arguments). jq is the system's.
type prologHarness struct {
	t                   *testing.T
	root, prolog, bin   string
	net, scontrolCalled string
}

func newPrologHarness(t *testing.T, marker string) *prologHarness {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	root := t.TempDir()
	h := &prologHarness{t: t, root: root, prolog: filepath.Join(root, "prolog.sh"), bin: filepath.Join(root, "bin"), scontrolCalled: filepath.Join(root, "scontrol.args")}
	script := readmeProlog(t, marker)
	script = strings.ReplaceAll(script, "/var/lib/ibdoctor", filepath.Join(root, "state"))
	script = strings.ReplaceAll(script, "/var/log/ibdoctor", filepath.Join(root, "log"))
	if err := os.WriteFile(h.prolog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	h.net = writeFile(t, "rel.net", relNet())
	if err := os.Mkdir(h.bin, 0o755); err != nil {
		t.Fatal(err)
	}
	wrapper := "#!/bin/sh\nIBDOCTOR_CLI_CHILD=1 exec " + os.Args[0] + " \"$@\" --sim=" + h.net + " $FAULTS\n"
	if err := os.WriteFile(filepath.Join(h.bin, "ibdoctor"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	scontrol := "#!/bin/sh\necho \"$@\" >>" + h.scontrolCalled + "\n"
	if err := os.WriteFile(filepath.Join(h.bin, "scontrol"), []byte(scontrol), 0o755); err != nil {
		t.Fatal(err)
	}
	return h
}

// run runs the prolog with env (besides PATH and the job id) and the
// fault file's flags; it returns the exit code, stderr and what scontrol
// was called with (removed after).
func (h *prologHarness) run(faults string, env ...string) (int, string, string) {
	h.t.Helper()
	cmd := exec.Command("sh", h.prolog)
	cmd.Env = append([]string{"PATH=" + h.bin, "SLURM_JOB_ID=42"}, env...)
	if faults != "" {
		cmd.Env = append(cmd.Env, "FAULTS=--faults="+faults)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		h.t.Fatal(err)
	}
	called, _ := os.ReadFile(h.scontrolCalled)
	os.Remove(h.scontrolCalled)
	return code, stderr.String(), string(called)
}

func (h *prologHarness) sweep() {
	h.t.Helper()
	if code, _, stderr := run("sweep", "--sim="+h.net, "--state-dir", filepath.Join(h.root, "state"), "--out", filepath.Join(h.root, "report.json")); code != ExitHealthy {
		h.t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
}

// TestREADMEPrologScript (trial F10) runs the README's PrologSlurmctld
// script for a job on h0001 and h0017 of rel.net: healthy; errors on
// h0017's link (drains h0017 alone, exit 1: requeue); errors on a spine
// cable of the routes (drains nobody, exit 1); a job host that does not
// answer, or one not in the fabric (could not decide: drains nobody, lets
// the job through, says why); a gate stopped before its report. Before,
// the README's prolog exited 1 on exit 2 too and, run as slurmd's
// Prolog on each node, drained every node of the job.
func TestREADMEPrologScript(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("jq not installed (Debian package jq): the README's prolog needs it")
		}
		t.Skip("jq not installed (Debian package jq)")
	}
	h := newPrologHarness(t, "PrologSlurmctld=")
	job := "SLURM_JOB_NODELIST=h[0001,0017]"
	log := filepath.Join(h.root, "log", "gate-42.json")

	// No snapshot yet: the gate sweeps the fabric itself.
	if code, stderr, _ := h.run("", job); code != 0 {
		t.Fatalf("no snapshot: prolog exit %d: %s", code, stderr)
	}
	h.sweep()
	if code, stderr, called := h.run("", job); code != 0 || called != "" {
		t.Fatalf("healthy: prolog exit %d, scontrol %q: %s", code, called, stderr)
	}
	data, _ := os.ReadFile(log)
	if d := chkParse(t, string(data)); d.Status != "healthy" || len(d.Scope.Hosts) != 2 {
		t.Errorf("log: status %q hosts %v", d.Status, d.Scope.Hosts)
	}
	// h0017 is leaf003's port 1.
	hostLink := writeFile(t, "host.txt", "counter leaf003/1 PortRcvErrors=500\n")
	code, stderr, called := h.run(hostLink, job)
	if code != 1 || called != "update nodename=h0017 state=drain reason=ibdoctor gate, job 42: see "+log+"\n" ||
		!strings.Contains(stderr, "ibdoctor gate, job 42: drained h0017: ibdoctor: unhealthy (exit 1): ") {
		t.Errorf("errors on h0017's link: prolog exit %d, scontrol %q: %s", code, called, stderr)
	}
	spine := writeFile(t, "spine.txt", "counter spine001/3 PortRcvErrors=500\n")
	code, stderr, called = h.run(spine, job)
	if code != 1 || called != "" || !strings.Contains(stderr, "drained no host: ibdoctor: unhealthy (exit 1): ") || !strings.Contains(stderr, "no host of the job named") {
		t.Errorf("errors on a spine cable of the routes: prolog exit %d, scontrol %q: %s", code, called, stderr)
	}
	dead := writeFile(t, "dead.txt", "dead h0017\n")
	code, stderr, called = h.run(dead+" --timeout="+deadTimeout+" --retries=0", job)
	if code != 0 || called != "" || !strings.Contains(stderr, "fabric not verified, job let through: ibdoctor: undecided (exit 2): ") {
		t.Errorf("a job host that does not answer: prolog exit %d, scontrol %q: %s", code, called, stderr)
	}
	code, stderr, called = h.run("", "SLURM_JOB_NODELIST=h[0001,9999]")
	if code != 0 || called != "" || !strings.Contains(stderr, "fabric not verified, job let through: ") || !strings.Contains(stderr, "h9999") {
		t.Errorf("a job host not in the fabric: prolog exit %d, scontrol %q: %s", code, called, stderr)
	}
	// A gate that stops before its report (here a flag it refuses; on a
	// host, no device): the prolog says why.
	code, stderr, called = h.run(dead+" --timeout=0", job)
	if code != 0 || called != "" || !strings.Contains(stderr, "--timeout") {
		t.Errorf("gate stopped before its report: prolog exit %d, scontrol %q: %s", code, called, stderr)
	}
	// h0017's cable went down before the last sweep (trial G5): only the
	// accepted baseline has its HCA, link.down names it, and the prolog
	// drains h0017. Before, scope.hosts lacked it and nothing was drained.
	unlinked := writeFile(t, "unlinked.txt", "polling leaf003/1\n")
	if code, _, stderr := run("sweep", "--sim="+h.net, "--faults", unlinked, "--state-dir", filepath.Join(h.root, "state"), "--out", filepath.Join(h.root, "report.json")); code != ExitHealthy && code != ExitFindings {
		t.Fatalf("sweep with h0017's cable down: exit %d: %s", code, stderr)
	}
	code, stderr, called = h.run(unlinked, job)
	if code != 1 || called != "update nodename=h0017 state=drain reason=ibdoctor gate, job 42: see "+log+"\n" ||
		!strings.Contains(stderr, "drained h0017: ") || !strings.Contains(stderr, "hosts of the job named: h0017") {
		t.Errorf("h0017's cable down at the sweep: prolog exit %d, scontrol %q: %s", code, called, stderr)
	}
}

// TestREADMEPerNodePrologScript (trial F10) runs the README's per-node
// Prolog: each node gates its own host, so errors on h0017's link fail
// h0017's prolog alone (slurmd drains that node) and h0001's passes.
func TestREADMEPerNodePrologScript(t *testing.T) {
	h := newPrologHarness(t, "prolog.d/50-ibdoctor.sh")
	h.sweep()
	hostLink := writeFile(t, "host.txt", "counter leaf003/1 PortRcvErrors=500\n")
	job := "SLURM_JOB_NODELIST=h[0001,0017]"
	if code, stderr, _ := h.run(hostLink, job, "SLURMD_NODENAME=h0001"); code != 0 || stderr != "" {
		t.Errorf("h0001: prolog exit %d: %s", code, stderr)
	}
	if code, stderr, _ := h.run(hostLink, job, "SLURMD_NODENAME=h0017"); code != 1 || !strings.HasPrefix(stderr, "ibdoctor gate, h0017: ibdoctor: unhealthy (exit 1): ") {
		t.Errorf("h0017: prolog exit %d: %s", code, stderr)
	}
	if code, stderr, _ := h.run("", job, "SLURMD_NODENAME=h9999"); code != 0 || !strings.HasPrefix(stderr, "ibdoctor gate, h9999: not verified, job let through: ") {
		t.Errorf("h9999: prolog exit %d: %s", code, stderr)
	}
}
