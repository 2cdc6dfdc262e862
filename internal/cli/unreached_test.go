package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
)

// Unanswered is "could not look", never "broken" (issue 17 item 5): a MAD
// that goes unanswered makes its subject unreached (listed, exit 2 when
// nothing else is found), never a down link, a degraded rate or a route
// that "cannot reach".

// findingKeys names findings by check and entities (titles carry counter
// values that move with the simulated clock).
func findingKeys(fs []checks.Finding) []string {
	var ks []string
	for _, f := range fs {
		var es []string
		for _, e := range f.Entities {
			es = append(es, fmt.Sprintf("%s/%d", e.Node, e.Port))
		}
		ks = append(ks, f.Check+" "+strings.Join(es, ","))
	}
	slices.Sort(ks)
	return ks
}

// findingGUIDKeys keys findings by check and their entities' GUIDs and
// ports, not names: a node whose NodeDescription went unanswered is
// named by its GUID, and is still the same subject. It maps each key to
// the findings' node names, for saying which were unread.
func findingGUIDKeys(fs []checks.Finding) map[string][]string {
	ks := map[string][]string{}
	for _, f := range fs {
		var es, names []string
		for _, e := range f.Entities {
			es = append(es, fmt.Sprintf("%s/%d", e.GUID, e.Port))
			names = append(names, e.Node)
		}
		ks[f.Check+" "+strings.Join(es, ",")] = names
	}
	return ks
}

// TestCheckUnderMADLoss: with 20% of all MAD exchanges lost, check on the
// sample incident finds what it finds without loss, plus the unreached
// list. The engine's retries are at their default (3: a MAD is given up
// after 4 losses, 0.2^4 = 0.16% of MADs, a few per run); the timeout is
// 50ms instead of 1s because the simulator answers at once or never, so
// the timeout changes only the test's wall time, not what is answered.
// A finding may be missing only where its own subject could not be read
// (then the unreached list names it); none may be added.
func TestCheckUnderMADLoss(t *testing.T) {
	dir := filepath.Join("..", "..", "fixtures", "sample")
	topo, incident := filepath.Join(dir, "fabric.txt"), filepath.Join(dir, "faults.txt")
	args := []string{"check", "--sim=" + topo, "--timeout", deadTimeout, "--json"}
	code, out, stderr := run(append(args, "--faults", incident)...)
	if code != ExitFindings {
		t.Fatalf("clean: exit %d\n%s", code, stderr)
	}
	clean := chkParse(t, out)
	if len(clean.Unreached) != 0 {
		t.Fatalf("clean run unreached %+v", clean.Unreached)
	}
	want := findingGUIDKeys(clean.Findings)

	lossy := writeFile(t, "loss.faults", readFile(t, incident)+"\nloss share=20%\n")
	for i := range 2 {
		code, out, stderr = run(append(args, "--faults", lossy)...)
		if code != ExitFindings {
			t.Fatalf("run %d under loss: exit %d, want 1 (the incident is still found)\n%s", i, code, stderr)
		}
		d := chkParse(t, out)
		if d.MADs.Retried == 0 {
			t.Fatalf("run %d: no MAD retried: the loss fault did nothing", i)
		}
		got := findingGUIDKeys(d.Findings)
		var where []string
		for _, u := range d.Unreached {
			where = append(where, u.What+" "+u.Where)
		}
		for k, names := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("run %d: finding %q (%v) is not in the clean run's (unreached: %v)", i, k, names, where)
			}
		}
		for k, names := range want {
			if _, ok := got[k]; ok {
				continue
			}
			// Missing: only if one of its subjects went unread.
			explained := false
			for _, w := range where {
				for _, node := range names {
					if node != "" && strings.Contains(w, node) {
						explained = true
					}
				}
			}
			if !explained {
				t.Errorf("run %d: finding %q missing, and none of its subjects is unreached (%v)", i, k, where)
			}
		}
		t.Logf("run %d: %d findings (clean %d), %d unreached, MADs %+v", i, len(got), len(want), len(d.Unreached), d.MADs)
	}
}

// TestCheckUnansweredNotBroken: on a healthy fabric, what did not answer
// gives no finding, is listed, and check exits 2 (could not decide).
func TestCheckUnansweredNotBroken(t *testing.T) {
	topo := chkTopology(t) // 4 leaves x 4 hosts, 4 spines
	fast := []string{"--timeout", deadTimeout, "--json"}
	for _, c := range []struct{ name, faults, unreached string }{
		// The spine's agent is dead but its switching hardware forwards:
		// before, every route through it "could not reach" (critical).
		{"dead spine agent", "dead spine02\n", "NodeInfo"},
		{"dead leaf agent", "dead leaf03\n", "NodeInfo"},
		// PortInfo of one spine port unanswered: before, a down link and
		// "hosts cannot reach" while the traffic flowed.
		{"PortInfo dropped", "drop spine01/1 attr=PortInfo\n", "PortInfo 1"},
		// A switch's port 0 PortInfo (its speed capability mask) lost:
		// before, its NDR links read as QDR ("QDR instead of NDR").
		{"port 0 PortInfo dropped", "drop leaf02/0 attr=PortInfo\n", "PortInfo 0"},
		{"LFT dropped", "drop spine03 attr=LinearForwardingTable\n", "LinearForwardingTable"},
		{"counters dropped", "drop leaf01 attr=PortCounters\ndrop leaf01 attr=PortCountersExtended\n", "PortCounters"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, stderr := run(append([]string{"check", "--sim=" + topo, "--faults", writeFile(t, "f.faults", c.faults)}, fast...)...)
			d := chkParse(t, out)
			if len(d.Findings) != 0 {
				var ts []string
				for _, f := range d.Findings {
					ts = append(ts, f.Severity.String()+" "+f.Check+": "+f.Title)
				}
				t.Errorf("%d findings, want none:\n%s", len(ts), strings.Join(ts, "\n"))
			}
			if code != ExitUndecided || d.Status != "undecided" || d.Complete {
				t.Errorf("exit %d status %q complete %v, want 2 undecided incomplete\n%s", code, d.Status, d.Complete, stderr)
			}
			found := false
			for _, u := range d.Unreached {
				found = found || strings.Contains(u.What, c.unreached)
			}
			if !found {
				t.Errorf("unreached list %+v does not name %s", d.Unreached, c.unreached)
			}
		})
	}
}

// TestCheckFlakyAgentNoFalseRate: agents answering half their MADs give
// no rate finding: what was not read is unknown, not slow.
func TestCheckFlakyAgentNoFalseRate(t *testing.T) {
	topo := chkTopology(t)
	faults := writeFile(t, "flaky.faults", "flaky leaf01 answer=40%\nflaky leaf02 answer=40%\nflaky spine01 answer=40%\n")
	for i := range 3 {
		code, out, _ := run("check", "--sim="+topo, "--faults", faults, "--timeout", deadTimeout, "--retries", "1", "--json")
		d := chkParse(t, out)
		for _, f := range d.Findings {
			t.Errorf("run %d: %s %s: %s", i, f.Severity, f.Check, f.Title)
		}
		if len(d.Unreached) > 0 && code != ExitUndecided {
			t.Errorf("run %d: %d unreached, exit %d, want 2", i, len(d.Unreached), code)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCheckUndecidedListed: spine01 sends all of leaf05's destinations out
// of port 33, whose PortInfo went unanswered: routing.ecmp-imbalance cannot
// decide for spine01 (port 33 up, it is uneven; down, the routes are
// broken). Nothing else is wrong, so check exits 2, and both the text and
// the JSON report name the check and the switch under "could not decide".
// Before, the switch was skipped without a word.
func TestCheckUndecidedListed(t *testing.T) {
	topo := filepath.Join("..", "..", "fixtures", "sample", "fabric.txt")
	faults := writeFile(t, "f.faults", "lft spine01 behind=leaf05 port=33\ndrop spine01/33 attr=PortInfo\n")
	args := []string{"check", "--sim=" + topo, "--faults", faults, "--timeout", deadTimeout, "--no-color"}
	code, out, stderr := run(args...)
	if code != ExitUndecided {
		t.Fatalf("exit %d, want 2 (could not decide)\n%s%s", code, out, stderr)
	}
	// The routes out of port 33 are not followed either: routing.unreachable
	// and routing.loop stop at spine01 too, and the other checks of the
	// tables say what they could not decide.
	for _, want := range []string{
		"Undecided: 5 subjects could not be decided for what was not read (routing.asymmetric, routing.credit-loop, routing.ecmp-imbalance, routing.loop, routing.unreachable; listed below)",
		"\n  routing.ecmp-imbalance on spine01: its spread over ports 34,35,36,37,38,39,40 is uneven or not depending on what was not read: port 33 (state or far end not read) may be one more equal-cost port",
		"\n  routing.unreachable on spine01: 56 routes (to 8 destinations) lead from here to port 33, whose state or far end was not read: not followed further\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = run(append(args, "--json")...)
	d := chkParse(t, out)
	if code != ExitUndecided || d.Status != "undecided" || !slices.ContainsFunc(d.Undecided, func(u checks.Undecided) bool {
		return u.Check == "routing.ecmp-imbalance" && u.String() == "spine01"
	}) {
		t.Errorf("--json: exit %d status %q undecided %+v", code, d.Status, d.Undecided)
	}
	for _, f := range d.Findings {
		if f.Severity >= checks.Warning {
			t.Errorf("finding %s %s: %s", f.Severity, f.Check, f.Title)
		}
	}
}

// TestGateDeadSwitchOnRoute: a spine on the job's routes whose agent is
// dead (it still forwards): the gate could not look at it, so it is
// undecided (exit 2) — not unhealthy (nothing on the route is known to be
// broken) and not healthy — both from a fresh snapshot and from its own
// sweep when there is none. The same for a dead leaf of one of the job's
// hosts.
func TestGateDeadSwitchOnRoute(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	topo := chkTopology(t)
	state := gateState(t, topo)
	for _, c := range []struct{ name, faults, state string }{
		{"dead spine, snapshot", "dead spine01\n", state},
		{"dead spine, own sweep", "dead spine01\n", filepath.Join(t.TempDir(), "none")},
		{"dead leaf, snapshot", "dead leaf02\n", state},
	} {
		t.Run(c.name, func(t *testing.T) {
			faults := writeFile(t, "f.faults", c.faults)
			code, out, stderr := run("gate", "--sim="+topo, "--faults", faults, "--state-dir", c.state, "--nodes", "gpu[001-016]", "--json", "--timeout", deadTimeout, "--retries", "0")
			if code != ExitUndecided {
				t.Fatalf("exit %d, want 2 (could not decide)\n%s", code, stderr)
			}
			d := chkParse(t, out)
			if d.Status != "undecided" || len(d.Unreached) == 0 {
				t.Errorf("status %q, %d unreached, want undecided with the unread listed", d.Status, len(d.Unreached))
			}
			for _, f := range d.Findings {
				if f.Severity >= checks.Warning {
					t.Errorf("finding on what could not be read: %s %s: %s", f.Severity, f.Check, f.Title)
				}
			}
		})
	}
}
