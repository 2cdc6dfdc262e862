package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// readmeProlog returns the README's Slurm prolog script.
func readmeProlog(t *testing.T) string {
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
	s = s[i:]
	start := strings.Index(s, "```sh\n")
	end := strings.Index(s[start+6:], "```")
	if start < 0 || end < 0 {
		t.Fatal("the prolog section has no sh block")
	}
	return s[start+6 : start+6+end]
}

// TestREADMEPrologScript runs the README's prolog with sh as written, but
// for its folders (moved under a temporary root) and ibdoctor, which is
// this test binary on the simulated rel.net fabric: a fresh host with no
// log folder, a healthy job, a fault on the job's routes, and no
// snapshot.
func TestREADMEPrologScript(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	root := t.TempDir()
	script := readmeProlog(t)
	script = strings.ReplaceAll(script, "/var/lib/ibdoctor", filepath.Join(root, "state"))
	script = strings.ReplaceAll(script, "/var/log/ibdoctor", filepath.Join(root, "log"))
	prolog := filepath.Join(root, "prolog.sh")
	if err := os.WriteFile(prolog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	net := writeFile(t, "rel.net", relNet())
	bin := filepath.Join(root, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	wrapper := "#!/bin/sh\nIBDOCTOR_CLI_CHILD=1 exec " + os.Args[0] + " \"$@\" --sim=" + net + " $FAULTS\n"
	if err := os.WriteFile(filepath.Join(bin, "ibdoctor"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	prologRun := func(faults string) (int, string) {
		cmd := exec.Command("sh", prolog)
		cmd.Env = []string{"PATH=" + bin, "SLURM_JOB_ID=42", "SLURM_JOB_NODELIST=h[0001,0017]"}
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
			t.Fatal(err)
		}
		return code, stderr.String()
	}
	log := filepath.Join(root, "log", "gate-42.json")

	// No snapshot yet: the gate sweeps the fabric itself.
	if code, stderr := prologRun(""); code != 0 {
		t.Fatalf("no snapshot: prolog exit %d: %s", code, stderr)
	}
	if code, _, stderr := run("sweep", "--sim="+net, "--state-dir", filepath.Join(root, "state"), "--out", filepath.Join(root, "report.json")); code != ExitHealthy {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	if code, stderr := prologRun(""); code != 0 {
		t.Fatalf("healthy: prolog exit %d: %s", code, stderr)
	}
	data, _ := os.ReadFile(log)
	if d := chkParse(t, string(data)); d.Status != "healthy" || len(d.Scope.Hosts) != 2 {
		t.Errorf("log: status %q hosts %v", d.Status, d.Scope.Hosts)
	}
	ctr := writeFile(t, "ctr.txt", "counter spine001/3 PortRcvErrors=500\n")
	code, stderr := prologRun(ctr)
	if code != 1 || !strings.Contains(stderr, "fabric problem on this job's routes") {
		t.Errorf("counter errors on the route: prolog exit %d: %s", code, stderr)
	}
	dead := writeFile(t, "dead.txt", "dead h0017\n")
	code, stderr = prologRun(dead + " --timeout=" + deadTimeout + " --retries=0")
	if code != 1 || !strings.Contains(stderr, "could not verify the fabric") {
		t.Errorf("a job host that does not answer: prolog exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "see "+log) {
		t.Errorf("a report was written: the prolog should point at it: %s", stderr)
	}
	// A gate that stops before its report (here a flag it refuses; on a
	// host, no device): the prolog says why instead of pointing at an
	// empty log. (Failed before: "could not verify the fabric, see
	// .../gate-42.json", an empty file.)
	code, stderr = prologRun(dead + " --timeout=0")
	if code != 1 || strings.Contains(stderr, "see "+log) || !strings.Contains(stderr, "--timeout") {
		t.Errorf("gate stopped before its report: prolog exit %d: %s", code, stderr)
	}
}
