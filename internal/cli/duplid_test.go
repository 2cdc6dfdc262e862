package cli

import (
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
)

// TestDuplicateLIDNotReadByLID: gpu001 mlx5_1 takes spine02's LID 2. A
// GeneralInfo or PerfMgt read sent to LID 2 is answered by whichever
// owner the tables lead to, so neither owner is read by LID: its firmware
// and counters are unread ("LID 2 is shared with ..."), not spine02's
// firmware filed under the HCA (trial T11: a firmware.mixed-version
// warning naming the switches' 31.2012.1068 on gpu001 mlx5_1), and LID 2
// is no destination behind leaf01 in the ECMP count (three 1.2x
// routing.ecmp-imbalance warnings on spine01, 03, 04).
func TestDuplicateLIDNotReadByLID(t *testing.T) {
	faults := writeFile(t, "dl.faults", "lid \"gpu001 mlx5_1\"/1 lid=2\n")
	code, out, stderr := run("check", "--sim", "--json")
	if code != ExitFindings {
		t.Fatalf("clean: exit %d: %s", code, stderr)
	}
	clean := chkParse(t, out)
	code, out, stderr = run("check", "--sim", "--faults", faults, "--json")
	if code != ExitFindings {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	d := chkParse(t, out)
	ecmp := func(fs []checks.Finding) []string {
		var s []string
		for _, f := range fs {
			if f.Check == "routing.ecmp-imbalance" {
				s = append(s, f.Title)
			}
		}
		return s
	}
	var dup bool
	for _, f := range d.Findings {
		switch f.Check {
		case "addr.duplicate-lid":
			dup = true
		case "firmware.mixed-version":
			t.Errorf("firmware finding from a LID another port answers: %s / %v", f.Title, f.Evidence)
		}
	}
	if !dup {
		t.Error("no addr.duplicate-lid")
	}
	if got, want := ecmp(d.Findings), ecmp(clean.Findings); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("ECMP findings with the duplicate LID:\n%s\nwithout it:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	wants := map[string]string{
		"GeneralInfo gpu001 mlx5_1 (":        "LID 2 is shared with spine02",
		"GeneralInfo spine02 (":              "LID 2 is shared with gpu001 mlx5_1 port 1",
		"PortCounters gpu001 mlx5_1 port 1 ": "LID 2 is shared with spine02",
		"PortCounters spine02 (LID 2)":       "LID 2 is shared with gpu001 mlx5_1 port 1",
	}
	for _, u := range d.Unreached {
		for k, why := range wants {
			if strings.HasPrefix(u.What+" "+u.Where, k) && strings.Contains(u.Reason, why) {
				delete(wants, k)
			}
		}
	}
	if len(wants) > 0 {
		t.Errorf("not listed as unread for the shared LID: %v\nunreached: %+v", wants, d.Unreached)
	}
	if d.Complete || d.Status != "unhealthy" {
		t.Errorf("complete %v status %s", d.Complete, d.Status)
	}
}
