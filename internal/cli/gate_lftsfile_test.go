package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestGatePartialLFTsFileSaysWhy: the simulator loaded with an --lfts
// file that gives one switch's table of 25 forwards no LID-routed MAD
// through the others. Trial B14: the sweep said "its forwarding table is
// not in avakas-qlogic-qdr.ibroute-lid1" for them, the gate that read the
// job's ports by LID across such a switch said the hosts and the switch
// "did not answer" (a dead agent, by the runbook). The reason the sweep
// gave is carried into the gate's lines.
func TestGatePartialLFTsFileSaysWhy(t *testing.T) {
	fab := corpusPath(t, "avakas-qlogic-qdr.ibnetdiscover-v-p")
	lfts := corpusPath(t, "avakas-qlogic-qdr.ibroute-lid1")
	state := filepath.Join(t.TempDir(), "st")
	if code, _, stderr := run("sweep", "--sim="+fab, "--lfts", lfts, "--state-dir", state, "--out", filepath.Join(state, "r.json")); code != ExitPartial {
		t.Fatalf("sweep: exit %d, want %d\n%s", code, ExitPartial, stderr)
	}
	code, out, stderr := run("gate", "--sim="+fab, "--lfts", lfts, "--state-dir", state, "--nodes", "node[001-002]",
		"--timeout", deadTimeout, "--retries", "0", "--no-color")
	if code != ExitUndecided {
		t.Errorf("exit %d, want %d\n%s\n%s", code, ExitUndecided, out, stderr)
	}
	if strings.Contains(out, "no response") || strings.Contains(stderr, "did not answer") {
		t.Errorf("nodes the simulator cannot reach by LID are said not to answer:\n%s\n%s", out, stderr)
	}
	const want = "not read by LID: the route to it crosses QLogic 12800-180 GUID=0x00066a00e8001310 L110, whose forwarding table is not in avakas-qlogic-qdr.ibroute-lid1"
	if !strings.Contains(out, "PortInfo at node001 HCA-1 port 1: "+want) {
		t.Errorf("node001's line lacks %q:\n%s", want, out)
	}
	const hint = "not read by LID: a switch on the route has no forwarding table in the --lfts/--sim file (give a dump_fts of the whole fabric)"
	if !strings.Contains(stderr, hint) {
		t.Errorf("stderr lacks %q:\n%s", hint, stderr)
	}
}
