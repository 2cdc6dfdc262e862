package diagnose

import (
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
)

// TestSwitchInfoUnreadOnce (trial A14): a switch that never answers
// SwitchInfo was listed twice under "Could not read", once by discovery
// ("SwitchInfo at leaf02 (GUID ..., path ...)") and once by the routes
// stage's re-read ("SwitchInfo at switch leaf02 (...)"): one attribute of
// one switch not read is one thing, named once.
func TestSwitchInfoUnreadOnce(t *testing.T) {
	sw, _ := sweep(t, simFabric(t, func(s *sim.Sim, _ *fabric.Fabric) {
		if err := s.Drop("leaf02", "SwitchInfo"); err != nil {
			t.Fatal(err)
		}
	}))
	var got []string
	for _, u := range sw.Unreached {
		if u.What == "SwitchInfo" {
			got = append(got, u.What+" at "+u.Where+": "+u.Reason)
		}
	}
	if len(got) != 1 || !strings.Contains(got[0], "leaf02") {
		t.Errorf("SwitchInfo entries: %q, want one for leaf02", got)
	}
}
