package checks

import (
	"testing"

	"github.com/ibdoctor/ibdoctor/mad"
)

// TestLinkChecksMemoHoldsReportedVerdicts: what the link checks share
// within a Run is the verdicts they act on (degraded, slower hardware, a
// part open), not one per link: on a healthy fabric that was 152 bytes a
// link held through every link check, most of the checks' peak heap at
// 8.7k nodes (issue 13). The findings are those of every verdict judged,
// and LinkVerdicts still gives them all.
func TestLinkChecksMemoHoldsReportedVerdicts(t *testing.T) {
	f := fatTree(t)
	degrade(t, node(t, f, "leaf01"), 1, mad.Width1X)
	s := &Snapshot{Fabric: f}
	all := s.LinkVerdicts()
	reported := 0
	for _, v := range all {
		if v.Degraded() || v.SlowerHardware() || v.HardwareOpen || (v.Unread != nil && (v.WidthOpen || v.SpeedOpen)) {
			reported++
		}
	}
	if reported != 1 || len(all) < 10 {
		t.Fatalf("%d verdicts, %d reported: want one degraded link among many", len(all), reported)
	}
	s.memo = &runMemo{}
	fs := s.degradedLinks(true)
	if len(fs) != 1 {
		t.Fatalf("%d link.degraded-width findings, want 1", len(fs))
	}
	if len(s.memo.verdicts) != reported {
		t.Errorf("the Run's memo holds %d link verdicts, want the %d a link check reports", len(s.memo.verdicts), reported)
	}
	s.memo = nil
	if got := byCheck(run(t, s), "link.degraded-width"); len(got) != 1 || got[0].Title != fs[0].Title {
		t.Errorf("Run: %d findings", len(got))
	}
}
