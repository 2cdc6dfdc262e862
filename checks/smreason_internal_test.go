package checks

import (
	"strings"
	"testing"
)

// TestSMStalledReasonNamesNoFile: trial A7. On a live fabric whose SM
// had exited, sm.stalled's reason said "(a fabric file records none)":
// no file was involved. The reason is what was read, for either source.
func TestSMStalledReasonNamesNoFile(t *testing.T) {
	got := (&SMView{}).notReadTwice()
	if strings.Contains(got, "file") || !strings.Contains(got, "no port advertises a subnet manager (none has IsSM in its CapabilityMask)") {
		t.Errorf("reason %q", got)
	}
}
