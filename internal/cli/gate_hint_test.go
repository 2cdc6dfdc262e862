package cli

import (
	"strings"
	"testing"
)

// TestGateUndecidedHint (new-user trial N5): the stderr line of an
// undecided gate names what made it undecided, not the same three causes
// whatever they were. Hosts not found are said on the line before: no
// second line then. A switch that did not answer is named.
func TestGateUndecidedHint(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	topo := chkTopology(t)
	state := gateState(t, topo)
	canned := "a switch that did not answer, counters not read, or a stale snapshot"

	code, _, stderr := run("gate", "--sim="+topo, "--state-dir", state, "--nodes", "gpu[01-02]")
	if code != ExitUndecided {
		t.Fatalf("unknown hosts: exit %d, want 2\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "hosts not in the snapshot of ") || !strings.Contains(stderr, "old): gpu01, gpu02: ") {
		t.Errorf("unknown hosts: stderr does not name them:\n%s", stderr)
	}
	if strings.Contains(stderr, canned) || strings.Contains(stderr, "undecided (exit 2)") {
		t.Errorf("unknown hosts: a second line about other causes:\n%s", stderr)
	}

	dead := writeFile(t, "dead.faults", "dead spine01\n")
	code, _, stderr = run("gate", "--sim="+topo, "--faults", dead, "--state-dir", state, "--nodes", "gpu[001-016]", "--timeout", deadTimeout, "--retries", "0")
	if code != ExitUndecided {
		t.Fatalf("dead spine: exit %d, want 2\n%s", code, stderr)
	}
	var hint string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "undecided (exit 2)") {
			hint = l
		}
	}
	if strings.Count(stderr, "docs/runbook.md") != 1 || !strings.Contains(hint, "spine01 did not answer") || strings.Contains(hint, "stale snapshot") || !strings.Contains(hint, `docs/runbook.md, "Before a job: gating"`) {
		t.Errorf("dead spine: hint %q; want it to name spine01 as not answering and point at the runbook, nothing about a stale snapshot\n%s", hint, stderr)
	}
}

// TestGateUndecidedHintRefused (review R6): a switch that answered its
// LFT block with a MAD status error, or a host that answered its P_Key
// table so, is up: the hint says what it refused and with which status,
// not that it did not answer (which sends the operator to check cables
// and agents of a node that answers).
func TestGateUndecidedHintRefused(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	topo := chkTopology(t)
	state := gateState(t, topo)
	for _, c := range []struct{ fault, want string }{
		{"refuse spine01 attr=LinearForwardingTable", "spine01 refused LinearForwardingTable (status 0x001C)"},
		{`refuse "gpu001 mlx5_0" attr=P_KeyTable`, "gpu001 mlx5_0 refused P_KeyTable (status 0x001C)"},
	} {
		faults := writeFile(t, "refuse.faults", c.fault+"\n")
		code, _, stderr := run("gate", "--sim="+topo, "--faults", faults, "--state-dir", state, "--nodes", "gpu[001-016]", "--timeout", deadTimeout, "--retries", "0")
		if code != ExitUndecided {
			t.Fatalf("%s: exit %d, want 2\n%s", c.fault, code, stderr)
		}
		var hint string
		for _, l := range strings.Split(stderr, "\n") {
			if strings.Contains(l, "undecided (exit 2)") {
				hint = l
			}
		}
		if !strings.Contains(hint, c.want) || strings.Contains(hint, "did not answer") {
			t.Errorf("%s: hint %q; want it to say %q, not that a node did not answer", c.fault, hint, c.want)
		}
	}
}

// TestGateOwnLeafDead (new-user trial T5): when the switch the gate's own
// port is cabled to does not answer, nothing past it was walked: the
// job's hosts could not be looked for (not "not found in the fabric",
// which sends the operator to the node descriptions), the hint says that
// this host's leaf did not answer, with its parentheses closed, and the
// unread node is not said to be off the job's routes.
func TestGateOwnLeafDead(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	topo := chkTopology(t)
	dead := writeFile(t, "dead.faults", "dead leaf01\n")
	code, stdout, stderr := run("gate", "--sim="+topo, "--faults", dead, "--state-dir", t.TempDir(), "--nodes", "gpu005,gpu009", "--timeout", deadTimeout, "--retries", "0")
	if code != ExitUndecided {
		t.Fatalf("exit %d, want 2\n%s\n%s", code, stdout, stderr)
	}
	if strings.Contains(stdout+stderr, "not found in the fabric") || strings.Contains(stdout+stderr, "no node in the fabric has this name") || strings.Contains(stdout+stderr, "node-name-map") {
		t.Errorf("hosts said not to be in the fabric, though it was not walked:\n%s\n%s", stdout, stderr)
	}
	if !strings.Contains(stderr, "could not be looked for") || !strings.Contains(stderr, "gpu005, gpu009") {
		t.Errorf("stderr does not say the hosts could not be looked for:\n%s", stderr)
	}
	if strings.Contains(stdout, "not on the job's routes") {
		t.Errorf("the unread leaf is said to be off the job's routes:\n%s", stdout)
	}
	var hint string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "undecided (exit 2)") {
			hint = l
		}
	}
	if !strings.Contains(hint, "the switch at path 0,1 (this host's leaf") || !strings.Contains(hint, "did not answer: the fabric could not be walked") || strings.Count(hint, "(") != strings.Count(hint, ")") {
		t.Errorf("hint %q: want this host's leaf at path 0,1 named as not answering, parentheses balanced", hint)
	}
}

// TestGateFromPartialSnapshotNotWalked (reviewer V5): T5's wording held
// only when the gate swept itself. Gating from a snapshot whose sweep
// could not walk past a dead leaf said gpu017 (behind it) was "not found
// in the fabric (check the node descriptions ...)": gate.idx did not
// record that the walk stopped. It does now, and the gate says the host
// could not be looked for.
func TestGateFromPartialSnapshotNotWalked(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	dir := t.TempDir()
	dead := writeFile(t, "dead.faults", "dead leaf05\n")
	if code, _, stderr := run("sweep", "--sim", "--faults", dead, "--state-dir", dir, "--timeout", deadTimeout, "--retries", "0"); code != ExitPartial {
		t.Fatalf("sweep: exit %d, want 3 (partial)\n%s", code, stderr)
	}
	code, stdout, stderr := run("gate", "--sim", "--faults", dead, "--state-dir", dir, "--nodes", "gpu003,gpu017", "--fail-on", "critical", "--timeout", deadTimeout, "--retries", "0")
	if code != ExitUndecided {
		t.Fatalf("gate: exit %d, want 2\n%s\n%s", code, stdout, stderr)
	}
	if strings.Contains(stdout+stderr, "not found in the fabric") || strings.Contains(stdout+stderr, "no node in the fabric has this name") || strings.Contains(stdout+stderr, "node-name-map") {
		t.Errorf("gpu017 said not to be in the fabric, though the snapshot's sweep stopped at leaf05:\n%s\n%s", stdout, stderr)
	}
	if !strings.Contains(stderr, "could not be looked for") || !strings.Contains(stderr, "gpu017") {
		t.Errorf("stderr does not say gpu017 could not be looked for:\n%s", stderr)
	}
}
