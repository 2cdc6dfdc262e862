package checks_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/transport"
)

// incidentWith sweeps the sample fabric with its incident and the extra
// faults (one retry), and runs every check.
func incidentWith(t *testing.T, faults string) (*checks.Result, *diagnose.Sweep) {
	t.Helper()
	return incidentSweep(t, faults, sim.Options{}, 1, 250*time.Millisecond)
}

// incidentSweep sweeps the sample fabric with its incident and the extra
// faults, with a short timeout (the simulator answers at once or never,
// so the timeout only sets how long an unanswered MAD costs), and runs
// every check.
func incidentSweep(t *testing.T, faults string, opts sim.Options, retries int, timeout time.Duration) (*checks.Result, *diagnose.Sweep) {
	t.Helper()
	s, err := sim.Sample(opts)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := sim.ParseFaults(strings.NewReader(faults))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ApplyFaults(fs); err != nil {
		t.Fatal(err)
	}
	c, err := s.Attach("", 0)
	if err != nil {
		t.Fatal(err)
	}
	e := transport.NewEngine(c, transport.Options{Timeout: timeout, Retries: retries})
	t.Cleanup(func() { e.Close(); c.Close() })
	sw, err := diagnose.Run(context.Background(), e, diagnose.Options{Routes: true, Counters: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := checks.Run(sw.Snapshot(checks.Expectations{}, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	return res, sw
}

// TestECMPImbalanceBesideDeadLeaf: leaf08's agent is dead (it still
// forwards), so the spines' eight ports to it lead to a far end that
// never answered. The spines' own tables were read and still pile all of
// leaf05's destinations on one port: the two critical
// routing.ecmp-imbalance findings stay. Before, a switch with any unread
// port was skipped whole and the criticals vanished without a word.
func TestECMPImbalanceBesideDeadLeaf(t *testing.T) {
	res, sw := incidentWith(t, "dead leaf08\n")
	if sw.Complete {
		t.Fatal("leaf08 is dead, yet the sweep read everything")
	}
	got := map[string]bool{}
	for _, f := range byCheck(res.Findings, "routing.ecmp-imbalance") {
		got[f.Entities[0].Node] = f.Severity == checks.Critical
	}
	for _, sp := range []string{"spine01", "spine02"} {
		if !got[sp] {
			t.Errorf("no critical routing.ecmp-imbalance on %s beside the dead leaf (findings:%s)", sp, titles(res.Findings))
		}
	}
}

// TestECMPImbalanceUndecided: spine01's PortInfo of port 33, the port its
// table sends all of leaf05's destinations out of, went unanswered. Whether
// the spread is uneven depends on that port (down, the routes are broken;
// up, it is the busiest of eight): the check could not decide for spine01
// and says so in Result.Undecided, while spine02, read whole, keeps its
// finding.
func TestECMPImbalanceUndecided(t *testing.T) {
	res, _ := incidentWith(t, "drop spine01/33 attr=PortInfo\n")
	got := map[string]bool{}
	for _, f := range byCheck(res.Findings, "routing.ecmp-imbalance") {
		got[f.Entities[0].Node] = true
	}
	if got["spine01"] || !got["spine02"] {
		t.Errorf("ecmp-imbalance findings on %v, want spine02 only", got)
	}
	var und []string
	for _, u := range res.Undecided {
		if u.Check == "routing.ecmp-imbalance" {
			und = append(und, u.String()+": "+u.Reason)
		}
	}
	if len(und) != 1 || !strings.HasPrefix(und[0], "spine01: ") || !strings.Contains(und[0], "33") {
		t.Errorf("undecided %q, want spine01 naming port 33", und)
	}
}

// TestCableUnreadAtBothEnds: the PortInfo of both ends of one cable went
// unanswered (leaf03/33 and spine01/17), so discovery never crossed it:
// nothing says whether it is there. Routes out of those ports are "not
// read", not a black hole. Before, the ports were absent from the model
// and every route over the cable "could not reach" its destinations
// (routing.unreachable, critical: "egress port is down or uncabled").
func TestCableUnreadAtBothEnds(t *testing.T) {
	fs := sampleWith(t, "drop leaf03/33 attr=PortInfo\ndrop spine01/17 attr=PortInfo\n", false)
	if bad := atOrAbove(fs, checks.Warning); len(bad) != 0 {
		t.Errorf("want nothing at warning or above, got %d:%s", len(bad), titles(bad[:min(10, len(bad))]))
	}
}

// TestMissingHCAUndecided: gpu012's mlx5_3 is missing (the incident) and
// a port of leaf03, where its cable would land, was not read (both ends
// of one leaf03 uplink unanswered). The HCA may be there: the check does
// not report it missing, and says it could not decide for gpu012. Before,
// the finding vanished without a word.
func TestMissingHCAUndecided(t *testing.T) {
	res, _ := incidentWith(t, "drop leaf03/33 attr=PortInfo\ndrop spine01/17 attr=PortInfo\n")
	if fs := byCheck(res.Findings, "topology.missing-hca"); len(fs) != 0 {
		t.Errorf("missing-hca reported beside an unread port of its leaf:%s", titles(fs))
	}
	found := false
	for _, u := range res.Undecided {
		found = found || (u.Check == "topology.missing-hca" && strings.HasPrefix(u.Subject.Node, "gpu012 ") && strings.Contains(u.Reason, "mlx5_3"))
	}
	if !found {
		t.Errorf("gpu012 not undecided for topology.missing-hca: %+v", res.Undecided)
	}
}

// TestIncidentUnderMADLoss: with 20% of all MAD exchanges lost (seeded)
// and the engine's default retries (3: a MAD is given up after four
// losses, 0.2^4 = 0.16%, a few per sweep), check on the sample incident
// gives the clean run's findings, by check and subject. A clean finding
// may be missing only where the check said it could not decide for that
// subject (Result.Undecided), or — for a link or counter finding — where
// the finding's own port was not read (the report's unreached list names
// it); none may be added. The lossy runs' timeout is 25 ms: the
// simulator answers at once or never, so it sets only how long each of
// the ~950 retries waits (250 ms: 13-15 s a sweep); an answer slower than
// that on a loaded machine is one more loss, which the test allows.
func TestIncidentUnderMADLoss(t *testing.T) {
	start := time.Now()
	clean, csw := incidentSweep(t, "", sim.Options{Seed: 1}, 3, 250*time.Millisecond)
	t.Logf("clean sweep %v", time.Since(start))
	if !csw.Complete {
		t.Fatalf("clean sweep incomplete: %+v", csw.Unreached)
	}
	for run, seed := range []uint64{1, 17} {
		start := time.Now()
		lossy, sw := incidentSweep(t, "loss share=20%\n", sim.Options{Seed: seed}, 3, 25*time.Millisecond)
		t.Logf("lossy sweep %v", time.Since(start))
		if sw.Stats.Retried == 0 {
			t.Fatalf("seed %d: no MAD retried: the loss fault did nothing", seed)
		}
		got := map[string]bool{}
		for _, f := range lossy.Findings {
			got[findingKey(f)] = true
		}
		want := map[string]bool{}
		for _, f := range clean.Findings {
			k := findingKey(f)
			want[k] = true
			if got[k] {
				continue
			}
			switch {
			case undecidedFor(lossy.Undecided, f):
			case (strings.HasPrefix(f.Check, "link.") || strings.HasPrefix(f.Check, "counters.")) && ownPortUnread(sw, f):
			default:
				t.Errorf("seed %d: clean finding %q missing, neither undecided nor its port unread (undecided %v)", seed, k, lossy.Undecided)
			}
		}
		for k := range got {
			if !want[k] {
				t.Errorf("seed %d: finding %q is not in the clean run's", seed, k)
			}
		}
		for _, u := range lossy.Undecided {
			t.Logf("undecided %s on %s: %s", u.Check, u, u.Reason)
		}
		t.Logf("run %d seed %d: %d findings (clean %d), %d undecided, %d unreached, MADs sent %d retried %d timed out %d",
			run, seed, len(lossy.Findings), len(clean.Findings), len(lossy.Undecided), len(sw.Unreached), sw.Stats.Sent, sw.Stats.Retried, sw.Stats.TimedOut)
	}
}

// findingKey names a finding by check and subject (its first entity):
// titles carry counter values that move with the simulated clock.
func findingKey(f checks.Finding) string {
	if len(f.Entities) == 0 {
		return f.Check
	}
	return f.Check + " " + f.Entities[0].String()
}

func undecidedFor(us []checks.Undecided, f checks.Finding) bool {
	for _, u := range us {
		if u.Check == f.Check && len(f.Entities) > 0 && u.Subject.NodeGUID == f.Entities[0].NodeGUID && (u.Subject.Port == 0 || u.Subject.Port == f.Entities[0].Port) {
			return true
		}
	}
	return false
}

// ownPortUnread reports whether one of the finding's ports was not read
// in sw: its node not found, its PortInfo or far end not read, or (a
// counter finding) its counters not read.
func ownPortUnread(sw *diagnose.Sweep, f checks.Finding) bool {
	read := map[*fabric.Port]bool{}
	if sw.Counters != nil {
		sw.Counters.Ports(func(r checks.PortReading) { read[r.Port] = true })
	}
	for _, e := range f.Entities {
		n := sw.Fabric.NodeByGUID(e.NodeGUID)
		if n == nil {
			return true
		}
		if e.Port == 0 || e.Port >= len(n.Ports) {
			continue
		}
		p := n.Ports[e.Port]
		if p == nil || !p.Reached() || (p.Remote != nil && !p.Remote.Reached()) {
			return true
		}
		if strings.HasPrefix(f.Check, "counters.") && !read[p] {
			return true
		}
	}
	return false
}

// TestRoutingUndecidedWhereNotRead: spine03's forwarding table went
// unanswered. The routes that reach it are not followed further: whether
// they arrive, loop or close a credit cycle is not known there, and each
// routing check says it could not decide at the switch where the routes
// stop, instead of saying nothing. The spines read whole keep their
// findings.
func TestRoutingUndecidedWhereNotRead(t *testing.T) {
	res, _ := incidentWith(t, "drop spine03 attr=LinearForwardingTable\n")
	und := map[string][]string{}
	for _, u := range res.Undecided {
		und[u.Check] = append(und[u.Check], u.String()+": "+u.Reason)
	}
	for _, id := range []string{"routing.unreachable", "routing.loop", "routing.credit-loop", "routing.ecmp-imbalance"} {
		if len(und[id]) == 0 {
			t.Errorf("%s: nothing undecided (%v)", id, und)
		}
	}
	if !slices.ContainsFunc(und["routing.unreachable"], func(s string) bool {
		return strings.HasPrefix(s, "spine03: ") && strings.Contains(s, "forwarding table, which was not read")
	}) {
		t.Errorf("routing.unreachable undecided %q: spine03's unread table is not named", und["routing.unreachable"])
	}
	if !slices.ContainsFunc(und["routing.ecmp-imbalance"], func(s string) bool { return strings.HasPrefix(s, "spine03: its forwarding table") }) {
		t.Errorf("routing.ecmp-imbalance undecided %q, want spine03", und["routing.ecmp-imbalance"])
	}
	if n := len(byCheck(res.Findings, "routing.ecmp-imbalance")); n != 2 {
		t.Errorf("%d routing.ecmp-imbalance findings, want spine01's and spine02's", n)
	}
	for _, f := range res.Findings {
		if f.Check == "routing.unreachable" || f.Check == "routing.loop" || f.Check == "routing.credit-loop" {
			t.Errorf("finding on a table not read: %s %s", f.Check, f.Title)
		}
	}
}

// TestMissingHCADeadSpineDecided (trial T4): with spine03's agent dead,
// leaf03's uplinks 49-56 lead to a node that did not answer, but ports
// 33-48 between them and leaf03's host block are known to be cabled to
// spines, and leaf03/28 — where gpu012's mlx5_3 belongs — was read and
// is Polling. What was read decides: still the error. Before, the unread
// uplinks anywhere on leaf03 made gpu012 undecided.
func TestMissingHCADeadSpineDecided(t *testing.T) {
	res, _ := incidentWith(t, "dead spine03\n")
	fs := byCheck(res.Findings, "topology.missing-hca")
	if len(fs) != 1 || fs[0].Severity != checks.Error || !strings.Contains(fs[0].Title, "gpu012") || !strings.Contains(fs[0].Title, "leaf03/28") {
		t.Errorf("want the error naming gpu012 and leaf03/28, got:%s\nundecided %+v", titles(fs), res.Undecided)
	}
	for _, u := range res.Undecided {
		if u.Check == "topology.missing-hca" {
			t.Errorf("undecided: %+v", u)
		}
	}
}

// TestPathShareDeadSpine: with spine03 dead, the routes that leave the
// leaves by their unread ports to it are not followed. gpu027 mlx5_6's
// link is its port's only one: it carries every path to and from the
// port (2 of the 255 host ports' shares) whatever is dead. A link between
// switches carries what was followed and perhaps more: its share is a
// lower bound and says so. Before, the host link showed 0.44% (0.78%
// without the fault), as read.
func TestPathShareDeadSpine(t *testing.T) {
	res, _ := incidentWith(t, "dead spine03\n")
	var host, isl *checks.Finding
	for i, f := range res.Findings {
		switch {
		case f.Check == "link.slower-hardware" && strings.Contains(f.Title, "gpu027 mlx5_6"):
			host = &res.Findings[i]
		case f.Check == "link.degraded-width" && strings.Contains(f.Title, "leaf07/41 <-> spine02/49"):
			isl = &res.Findings[i]
		}
	}
	if host == nil || isl == nil {
		t.Fatalf("want gpu027's slower-hardware and leaf07/41's degraded-width, got:%s", titles(res.Findings))
	}
	if want := 2.0 / 255; host.Impact.PathShare < want-1e-12 || host.Impact.PathShare > want+1e-12 || host.Impact.PathShareLowerBound {
		t.Errorf("gpu027's host link: share %v (lower bound %v), want %v exactly", host.Impact.PathShare, host.Impact.PathShareLowerBound, want)
	}
	if !strings.Contains(host.Impact.Summary, "carries 0.78% of host-to-host paths") {
		t.Errorf("host link summary: %s", host.Impact.Summary)
	}
	if !isl.Impact.PathShareLowerBound || !strings.Contains(isl.Impact.Summary, "at least") || !strings.Contains(isl.Impact.Summary, "not followed") {
		t.Errorf("leaf07/41 <-> spine02/49: share %v lower bound %v: %s", isl.Impact.PathShare, isl.Impact.PathShareLowerBound, isl.Impact.Summary)
	}
}
