package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/ibsimtest"
)

// TestGateDualPortHCAWithLostRail (trial A15): every port of a CA is read
// now, so a job's dual-port HCA whose port 2 lost its cable is in the
// snapshot with the LID it kept, which leads nowhere. The gate re-read
// that port by that LID, got no answer and exited 2 ('PortInfo at dual
// HCA-1 port 2: no response'); it reads it through the adapter's port 1.
// The sweep's verdict on that port (link.polling, error) is the gate's
// too, exit 1 (review R4: a gate for a job on a dual-rail host whose
// second port was down at the sweep must not pass it): before, this
// test took any exit but 2, a gate that said nothing included.
func TestGateDualPortHCAWithLostRail(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	dir := t.TempDir()
	topo := filepath.Join(dir, "dual.net")
	if err := os.WriteFile(topo, []byte(dualRailNet), 0o644); err != nil {
		t.Fatal(err)
	}
	faults := writeFile(t, "rail.faults", "polling \"dual HCA-1\"/2\n")
	state := filepath.Join(dir, "state")
	if code, _, stderr := run("sweep", "--sim="+topo, "--faults", faults, "--state-dir", state, "--out", filepath.Join(dir, "r.json")); code == ExitUndecided {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	code, out, stderr := run("gate", "--sim="+topo, "--faults", faults, "--state-dir", state, "--nodes", "a1,dual", "--no-color")
	if code != ExitFindings || strings.Contains(out+stderr, "Could not read") || !strings.Contains(out, "error     link.polling  Port dual HCA-1/2 is stuck in Polling") {
		t.Errorf("exit %d, want 1 with the sweep's link.polling on dual HCA-1/2\n%s%s", code, out, stderr)
	}
	// A job without the host: not its finding.
	if code, out, stderr := run("gate", "--sim="+topo, "--faults", faults, "--state-dir", state, "--nodes", "a1", "--no-color"); code != ExitHealthy {
		t.Errorf("a1 alone: exit %d, want 0\n%s%s", code, out, stderr)
	}
}

// TestGateDualPortHCAWithLostRailIBSim is review R4 on ibsim beside
// OpenSM, as trial A15 ran it: 'Unlink "dual"[2]' after the SM swept, the
// SM sweeping again (the tables drop port 2's LID) or not, then a sweep,
// then the gate of a job on dual run from dual itself (a prolog runs on
// the job's first host). The sweep reports link.polling on dual HCA-1/2;
// so does the gate, exit 1 (docs/exit-codes.md).
func TestGateDualPortHCAWithLostRailIBSim(t *testing.T) {
	ibsimtest.Require(t, "opensm")
	t.Setenv("SLURM_JOB_NODELIST", "")
	for _, resweep := range []bool{false, true} {
		s := ibsimtest.Start(t, dualRailNet)
		s.StartOpenSM(ibsimtest.OpenSMOptions{Host: "a1", Once: true})
		s.MustConsole(`Unlink "dual"[2]`)
		if resweep {
			s.StartOpenSM(ibsimtest.OpenSMOptions{Host: "a1", Once: true})
		}
		state := filepath.Join(t.TempDir(), "state")
		report := filepath.Join(t.TempDir(), "r.json")
		if code, _, stderr := run("sweep", "--ibsim="+s.SockName, "--ibsim-host", "a1", "--state-dir", state, "--out", report, "--no-counters"); code != ExitHealthy {
			t.Fatalf("SM swept again %v: sweep exit %d: %s", resweep, code, stderr)
		}
		if data, err := os.ReadFile(report); err != nil || !strings.Contains(string(data), `"title": "Port dual HCA-1/2 is stuck in Polling"`) {
			t.Fatalf("SM swept again %v: the sweep's report has no link.polling on dual HCA-1/2 (%v)", resweep, err)
		}
		code, out, stderr := run("gate", "--ibsim="+s.SockName, "--ibsim-host", "dual", "--state-dir", state, "--nodes", "a1,dual", "--no-counters", "--no-color")
		if code != ExitFindings || !strings.Contains(out, "link.polling         Port dual HCA-1/2 is stuck in Polling") || !strings.Contains(out, "Reached:   everything") {
			t.Errorf("SM swept again %v: gate exit %d, want 1 with link.polling on dual HCA-1/2\n%s%s", resweep, code, out, stderr)
		}
	}
}

// dualRailNet is trial A15's odd.net part: a host "dual" whose dual-port
// HCA has port 1 on odda and port 2 on oddb (two rails), beside a1.
const dualRailNet = `Hca 1 "a1" # "a1 HCA-1"
[1] "odda"[1]

Hca 2 "dual" # "dual HCA-1"
[1] "odda"[3]
[2] "oddb"[3]

Switch 8 "odda" # "odda"
[1] "a1"[1]
[3] "dual"[1]
[7] "core"[1]

Switch 8 "oddb" # "oddb"
[3] "dual"[2]
[8] "core"[2]

Switch 4 "core" # "core"
[1] "odda"[7]
[2] "oddb"[8]
`
