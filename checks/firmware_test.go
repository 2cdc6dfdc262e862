package checks_test

import (
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
)

func TestFirmwareMixedRevision(t *testing.T) {
	_, res := smSweep(t, "", 0)
	if fs := byCheck(res.Findings, "firmware.mixed-revision"); len(fs) != 0 {
		t.Errorf("uniform fabric: %s", fs[0].Title)
	}
	_, res = smSweep(t, "revision leaf02 rev=0xa1\n", 0)
	fs := byCheck(res.Findings, "firmware.mixed-revision")
	if len(fs) != 1 || fs[0].Severity != checks.Info || !strings.HasPrefix(fs[0].Title, "1 of 4 nodes of device") || !strings.Contains(fs[0].Evidence[0].Text, "revision 0xa1: leaf02") {
		logFindings(t, res.Findings)
		t.Fatalf("%d firmware.mixed-revision findings", len(fs))
	}
}
