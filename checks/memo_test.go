package checks_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// incidentSnapshot is TestIncidentGolden's sweep: links degraded and
// polling, routes black-holed and looping, counters grown.
func incidentSnapshot(t *testing.T) *checks.Snapshot {
	t.Helper()
	f, err := topology.FatTree2{Leaves: 4, Spines: 4, HostsPerLeaf: 4}.Build()
	if err != nil {
		t.Fatal(err)
	}
	sw := sweepSim(t, f, 0, func(s *sim.Sim) {
		fs, err := sim.ParseFaults(strings.NewReader(incidentFaults))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.ApplyFaults(fs); err != nil {
			t.Fatal(err)
		}
	})
	return sw.Snapshot(checks.Expectations{}, checks.BaselineOf(f), nil)
}

// TestRunLetsMemoGo: a Run lets each part of what its checks share go
// once no check left to run reads it. Held to the end of the Run, the
// link verdicts (~20 MB at 49k nodes) were live through the routing
// checks, where a sweep's heap peaks, and the route graph through the
// topology checks (issue 13). Probes record what the memo holds after
// the link checks, after the routing checks and after every check.
func TestRunLetsMemoGo(t *testing.T) {
	snap := incidentSnapshot(t)
	// "n.probe" runs after link.slower-hardware and before names.*,
	// "sm.zz-probe" after routing.* and sm.*, "zz.probe" last.
	afterLinks := checks.ProbeMemo(t, "n.probe")
	afterRouting := checks.ProbeMemo(t, "sm.zz-probe")
	last := checks.ProbeMemo(t, "zz.probe")
	res, err := checks.Run(snap)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"link.degraded-width", "routing.asymmetric", "routing.loop", "topology.leaf-to-leaf"} {
		if !slices.Contains(res.Ran, id) {
			t.Fatalf("%s did not run (ran %v)", id, res.Ran)
		}
	}
	// topology.leaf-to-leaf, after the routing checks, still reads the links.
	for _, c := range []struct {
		name       string
		held, want string
	}{
		{"after the link checks", *afterLinks, "links"},
		{"after the routing checks", *afterRouting, "links"},
		{"after every check", *last, ""},
	} {
		if c.held != c.want {
			t.Errorf("%s the memo holds %q, want %q", c.name, c.held, c.want)
		}
	}
}

// TestChecksDeclareTheMemoTheyRead: what Run lets go is decided by what
// each check declares it reads (Check.reads); a check that reads a part
// without declaring it would make it again after it was let go (right,
// but paying the pass over every link or the route graph twice). Each
// check is run alone with a fresh memo on sweeps that make every check
// look (faults, a baseline with a change).
func TestChecksDeclareTheMemoTheyRead(t *testing.T) {
	snap := incidentSnapshot(t)
	asked := map[string]bool{}
	for _, c := range checks.All() {
		used, declared := checks.MemoReads(snap, c.ID)
		for _, u := range strings.Fields(used) {
			asked[u] = true
			if !slices.Contains(strings.Fields(declared), u) {
				t.Errorf("%s reads the memo's %s and declares %q", c.ID, u, declared)
			}
		}
	}
	// The test looks at something: every part was asked for.
	for _, p := range []string{"links", "verdicts", "routes", "lost"} {
		if !asked[p] {
			t.Errorf("no check read the memo's %s on this sweep", p)
		}
	}
}
