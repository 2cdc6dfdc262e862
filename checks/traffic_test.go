package checks_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
)

// TestTrafficImbalance: a ring all-reduce over the fat tree, and leaf01
// sending every data flow bound up the tree out of port 5 (the skew
// fault: the tables stay balanced). Measured over an interval, the
// skewed leaf is found; the healthy run is quiet, and the table-based
// routing.ecmp-imbalance sees nothing either way.
func TestTrafficImbalance(t *testing.T) {
	const traffic = "traffic ring-allreduce rate=100 stride=4\n"
	_, res := smSweep(t, traffic, 100*time.Millisecond)
	if fs := byCheck(res.Findings, "routing.traffic-imbalance"); len(fs) != 0 {
		t.Errorf("balanced traffic: %s", fs[0].Title)
	}
	_, res = smSweep(t, traffic+"skew leaf01 port=5\n", 100*time.Millisecond)
	fs := byCheck(res.Findings, "routing.traffic-imbalance")
	if len(fs) != 1 || fs[0].Severity != checks.Critical || !strings.HasPrefix(fs[0].Title, "leaf01 sends 2.0x the mean of its 2 uplinks' data out of port 5, 1 of them idle") {
		logFindings(t, res.Findings)
		t.Fatalf("%d routing.traffic-imbalance findings", len(fs))
	}
	t.Logf("%s\n    %s", fs[0].Title, fs[0].Evidence[0])
	if n := len(byCheck(res.Findings, "routing.ecmp-imbalance")); n != 0 {
		t.Errorf("the tables were not touched, yet %d routing.ecmp-imbalance findings", n)
	}
}
