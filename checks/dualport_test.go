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
// dual-rail HCA loses its link (ibsim 'Unlink "dual"[2]'). Discovery
// reached the adapter through port 1 and never read port 2: until the SM
// swept again, only the tables still forwarding port 2's LID into oddb/3
// told (routing.lost-lid, "a node was lost there"); once it swept (a
// running SM does at once) nothing did. Every port of a CA is read now;
// port 2, Polling and still holding the LID the SM gave it, is
// link.polling's error, with the lost routes folded in as evidence while
// the tables still send them there. The unused port 2 of "solo" (never
// cabled, no LID) is no finding: dual-port adapters with one port cabled
// are common, and paging on them would bury the real ones.
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
	for _, tc := range []struct {
		faults string
		lost   bool // the tables still send port 2's LID to oddb/3
	}{
		{"polling \"dual HCA-1\"/2\n", true},
		{"polling \"dual HCA-1\"/2\nsweep\n", false}, // the SM swept since
	} {
		fs := run(tc.faults)
		name := strings.ReplaceAll(strings.TrimSpace(tc.faults), "\n", "; ")
		if lost := byCheck(fs, "routing.lost-lid"); len(lost) != 0 {
			t.Errorf("%s: routing.lost-lid %s, want it folded into dual HCA-1/2's finding", name, titles(lost))
		}
		poll := byCheck(fs, "link.polling")
		if len(poll) != 1 || poll[0].Severity != checks.Error || poll[0].Title != "Port dual HCA-1/2 is stuck in Polling" {
			t.Errorf("%s: link.polling %s, want one error on dual HCA-1/2", name, titles(poll))
			continue
		}
		var holds, folded bool
		for _, e := range poll[0].Evidence {
			holds = holds || strings.Contains(e.Text, "it holds LID ")
			folded = folded || e.Name == "lost LIDs" && strings.Contains(e.Text, "into oddb/3")
		}
		if !holds || folded != tc.lost {
			t.Errorf("%s: evidence %+v: want the LID it holds, and the lost routes into oddb/3: %v", name, poll[0].Evidence, tc.lost)
		}
		for _, fd := range fs {
			for _, e := range fd.Entities {
				if strings.HasPrefix(e.Node, "solo") {
					t.Errorf("%s: %s %s %q names solo's unused port", name, fd.Severity, fd.Check, fd.Title)
				}
			}
		}
	}
}

// TestDualPortHCARefusesOtherPort: an adapter whose agent answers
// PortInfo only for the port the SMP came in by (status 0x001C for the
// other) is read as before: its port 2 stays out of the model, nothing is
// listed as not read, and the LID it lost is routing.lost-lid's at the
// leaf port.
func TestDualPortHCARefusesOtherPort(t *testing.T) {
	f, _, err := fabric.ParseNetFile(strings.NewReader(dualNet))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil && p.Remote != nil {
				p.State = mad.PortStateActive
			}
		}
	}
	sw := sweepSim(t, f, 0, func(s *sim.Sim) {
		fs, err := sim.ParseFaults(strings.NewReader("polling \"dual HCA-1\"/2\nrefuse \"dual HCA-1\"/2 attr=PortInfo\n"))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.ApplyFaults(fs); err != nil {
			t.Fatal(err)
		}
	}) // fails the test when anything is listed as not read
	res, err := checks.Run(sw.Snapshot(checks.Expectations{}, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	lost := byCheck(res.Findings, "routing.lost-lid")
	if len(lost) != 1 || !strings.HasPrefix(lost[0].Title, "oddb/3 is Down/Polling: 3 switches still forward LID ") || !strings.HasSuffix(lost[0].Title, "which no port found holds: a node was lost there") {
		t.Errorf("routing.lost-lid %s, want one at oddb/3", titles(lost))
	}
}
