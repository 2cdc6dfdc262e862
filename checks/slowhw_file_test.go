package checks

import (
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/mad"
)

// TestSlowerHardwareSupportedNotInFile (trial C1 audit): a --sim file
// that records no supported speeds (ibnetdiscover text) has the
// simulator answer LinkSpeedSupported up to the active speed for an HCA
// the device table does not know, so link.slower-hardware said "HCA ...
// supports at most 4X HDR" about a mask nobody read. With
// SupportedNotRead the finding says the supported speeds are not in the
// file and asks to read them, as link.degraded-speed's hedge does; live
// (supported read) it is as before.
func TestSlowerHardwareSupportedNotInFile(t *testing.T) {
	for _, file := range []bool{false, true} {
		f := fatTree(t)
		p := node(t, f, "leaf01").Ports[3]
		h := p.Remote
		h.Node.VendorID, h.Node.DeviceID = 0, 0 // a model the table does not know
		p.SpeedActive, h.SpeedActive = mad.SpeedHDR, mad.SpeedHDR
		h.SpeedSupported = mad.SpeedSDR | mad.SpeedDDR | mad.SpeedQDR | mad.SpeedFDR | mad.SpeedEDR | mad.SpeedHDR
		h.SpeedEnabled, h.WidthEnabled = 0, 0
		s := &Snapshot{Fabric: f}
		if file {
			s.SupportedNotRead = "f.ibnetdiscover (ibnetdiscover) does not record supported speeds"
		}
		fs := byCheck(run(t, s), "link.slower-hardware")
		if len(fs) != 1 || !strings.Contains(fs[0].Title, h.Node.Description) {
			t.Fatalf("file %v: %+v", file, fs)
		}
		x := fs[0]
		all := x.Title + "\n" + x.Evidence[0].Text + "\n" + x.Action
		if !file {
			if !strings.Contains(x.Title, "supports at most 4X HDR") {
				t.Errorf("live: %q", x.Title)
			}
			continue
		}
		if strings.Contains(all, "supports at most") || !strings.Contains(x.Title, "supported speeds are not in the file") ||
			!strings.Contains(x.Evidence[0].Text, "does not record supported speeds") || !strings.Contains(x.Action, "First read what") {
			t.Errorf("file: the supported mask the file does not record is presented as read:\n%s", all)
		}
	}
}
