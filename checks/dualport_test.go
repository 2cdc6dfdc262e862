package checks_test

import (
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/mad"
)

// dualNet is trial A15's shape (ibsim odd.net without its oddities): HCA
// "dual" has port 1 on odda and port 2 on oddb (dual-rail), HCA "solo" is
// a 2-port adapter with only port 1 cabled (its port 2 never had a link,
// as on many hosts).
const dualNet = `Hca 1 "a1" # "a1 HCA-1"
[1] "odda"[1]

Hca 1 "b1" # "b1 HCA-1"
[1] "oddb"[1]

Hca 2 "dual" # "dual HCA-1"
[1] "odda"[3]
[2] "oddb"[3]

Hca 2 "solo" # "solo HCA-1"
[1] "odda"[4]

Switch 8 "odda" # "odda"
[1] "a1"[1]
[3] "dual"[1]
[4] "solo"[1]
[7] "core"[1]

Switch 8 "oddb" # "oddb"
[1] "b1"[1]
[3] "dual"[2]
[8] "core"[2]

Switch 4 "core" # "core"
[1] "odda"[7]
[2] "oddb"[8]
`

// TestDualPortHCASecondPortDown (trial A15): the second port of a
// dual-rail HCA loses its link (ibsim 'Unlink "dual"[2]'); no SM sweeps
// since. Discovery reaches the adapter through port 1 and does not read
// its port 2, but every table still forwards port 2's LID into oddb/3,
// which polls: routing.lost-lid reports it there (before 81bb5cd check
// said nothing). The unused port 2 of "solo", which never had a link and
// holds no LID the tables route, is no finding: dual-port adapters with
// one port cabled are common, and paging on them would bury the real
// ones.
func TestDualPortHCASecondPortDown(t *testing.T) {
	run := func(faults string) []checks.Finding {
		t.Helper()
		f, _, err := fabric.ParseNetFile(strings.NewReader(dualNet))
		if err != nil {
			t.Fatal(err)
		}
		// as a subnet manager left it: every cabled port Active
		for _, n := range f.Nodes {
			for _, p := range n.Ports {
				if p != nil && p.Remote != nil {
					p.State = mad.PortStateActive
				}
			}
		}
		sw := sweepSim(t, f, 0, func(s *sim.Sim) {
			fs, err := sim.ParseFaults(strings.NewReader(faults))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.ApplyFaults(fs); err != nil {
				t.Fatal(err)
			}
		})
		res, err := checks.Run(sw.Snapshot(checks.Expectations{}, nil, nil))
		if err != nil {
			t.Fatal(err)
		}
		return res.Findings
	}
	for _, fd := range run("") {
		if fd.Severity >= checks.Warning {
			t.Errorf("healthy: %s %s %q", fd.Severity, fd.Check, fd.Title)
		}
	}
	fs := run("polling \"dual HCA-1\"/2\n")
	lost := byCheck(fs, "routing.lost-lid")
	if len(lost) != 1 || lost[0].Severity != checks.Error || !strings.HasPrefix(lost[0].Title, "oddb/3 is Down/Polling: 3 switches still forward LID ") {
		t.Errorf("dual HCA-1/2 down: routing.lost-lid %s, want one error at oddb/3", titles(lost))
	}
	for _, fd := range fs {
		for _, e := range fd.Entities {
			if strings.HasPrefix(e.Node, "solo") {
				t.Errorf("dual HCA-1/2 down: %s %s %q names solo's unused port", fd.Severity, fd.Check, fd.Title)
			}
		}
	}
}
