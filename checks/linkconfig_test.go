package checks_test

import (
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
)

// TestLinkMTUMismatch: a host whose HCA tops out at MTU 2048 among 4096
// links (the simulator's mtu fault retrains its link to 2048).
func TestLinkMTUMismatch(t *testing.T) {
	_, res := smSweep(t, "mtu \"gpu006 mlx5_0\" mtu=2048\n", 0)
	fs := byCheck(res.Findings, "config.mtu-mismatch")
	if len(fs) != 1 || fs[0].Severity != checks.Warning || !strings.HasPrefix(fs[0].Title, "Link gpu006 mlx5_0/1 <-> leaf02/") || !strings.Contains(fs[0].Title, "runs MTU 2048, below the fabric's 4096") {
		logFindings(t, res.Findings)
		t.Fatalf("%d link.mtu-mismatch findings", len(fs))
	}
	if !strings.Contains(fs[0].Evidence[0].Text, "gpu006 mlx5_0/1 can do no more than MTU 2048 (MTUCap)") {
		t.Errorf("evidence %q", fs[0].Evidence[0].Text)
	}
}

func TestLinkVLMismatch(t *testing.T) {
	_, res := smSweep(t, "vls leaf01/5 vls=2\n", 0)
	fs := byCheck(res.Findings, "config.vl-mismatch")
	if len(fs) != 1 || fs[0].Severity != checks.Warning || !strings.Contains(fs[0].Title, "the ends run different data VLs (VL0-1 and VL0-7)") {
		logFindings(t, res.Findings)
		t.Fatalf("%d link.vl-mismatch findings", len(fs))
	}
	// Both ends low: below the fabric's VL0-7.
	_, res = smSweep(t, "vls leaf01/5 vls=3\nvls spine01/1 vls=3\n", 0)
	fs = byCheck(res.Findings, "config.vl-mismatch")
	if len(fs) != 1 || !strings.Contains(fs[0].Title, "runs VL0-3, fewer data VLs than the fabric's VL0-7") {
		logFindings(t, res.Findings)
		t.Fatalf("%d link.vl-mismatch findings", len(fs))
	}
}
