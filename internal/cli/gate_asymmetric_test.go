package cli

import (
	"path/filepath"
	"testing"
)

// TestAsymmetricCheckAndGateAgree (trial N1): on the sample fabric
// gpu001 -> gpu012 crosses spine04 and gpu012 -> gpu001 spine01, as
// min-hop routing picks a spine per destination LID. check (one host
// per leaf sampled, gpu012 not among them) said nothing; a gate on
// gpu012,gpu001 reported "1 of 1 sampled leaf pairs route A->B and B->A
// through different switches" for the same leaf pair. Equal-length
// paths through different spines are per-destination spine selection,
// not a finding: both must agree, with nothing to say.
func TestAsymmetricCheckAndGateAgree(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	count := func(out string) (n int) {
		for _, f := range chkParse(t, out).Findings {
			if f.Check == "routing.asymmetric" {
				n++
			}
		}
		return n
	}
	code, out, stderr := run("check", "--sim", "--json")
	if code == ExitUndecided {
		t.Fatalf("check: exit %d\n%s", code, stderr)
	}
	checked := count(out)
	state := filepath.Join(t.TempDir(), "state")
	code, out, stderr = run("gate", "--sim", "--state-dir", state, "--nodes", "gpu012,gpu001", "--json")
	if code == ExitUndecided {
		t.Fatalf("gate: exit %d\n%s", code, stderr)
	}
	if gated := count(out); gated != checked || gated != 0 {
		t.Errorf("routing.asymmetric: check %d, gate on gpu012,gpu001 %d findings; want the same verdict, none (equal-length paths through other spines)", checked, gated)
	}
}
