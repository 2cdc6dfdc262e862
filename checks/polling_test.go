package checks_test

import (
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
)

// TestTrainingLinkReported: a cable whose ends see each other and never
// finish training (fault 'training') is a link that should be there. An
// uplink: each switch end is a warning (a link that does not come up
// carries no hint of where it leads, so the two ends are not paired);
// with the expected topology it is link.down, once. A host's cable on
// the sample: its leaf port is where topology.missing-hca says the HCA
// belongs, one finding.
func TestTrainingLinkReported(t *testing.T) {
	fs := byCheck(sampleWith(t, "training leaf02/35\n", false), "link.polling")
	if len(fs) != 2 {
		t.Fatalf("want leaf02/35 and spine01/11, got:%s", titles(fs))
	}
	for _, f := range fs {
		if f.Severity != checks.Warning || !strings.Contains(f.Title, "PortConfigurationTraining") {
			t.Errorf("%s %q: want a warning naming the state", f.Severity, f.Title)
		}
	}
	if e := fs[0].Entities[0].String() + " " + fs[1].Entities[0].String(); !strings.Contains(e, "leaf02/35") || !strings.Contains(e, "spine01/11") {
		t.Errorf("ends %s, want leaf02/35 and spine01/11", e)
	}

	all := sampleWith(t, "training leaf02/35\n", true)
	if p := byCheck(all, "link.polling"); len(p) > 0 {
		t.Errorf("with the expected topology, link.polling:%s", titles(p))
	}
	if d := byCheck(all, "link.down"); len(d) != 1 || !strings.Contains(d[0].Title, "leaf02/35") {
		t.Errorf("with the expected topology, want link.down leaf02/35 once, got:%s", titles(d))
	}

	all = sampleWith(t, "training \"gpu012 mlx5_3\"/1\n", false)
	if p := byCheck(all, "link.polling"); len(p) > 0 {
		t.Errorf("link.polling beside missing-hca:%s", titles(p))
	}
	if m := byCheck(all, "topology.missing-hca"); len(m) != 1 || !strings.Contains(m[0].Title, "leaf03/28") {
		t.Errorf("want missing-hca naming leaf03/28, got:%s", titles(m))
	}
}
