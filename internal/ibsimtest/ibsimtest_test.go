package ibsimtest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestFatTreeGolden(t *testing.T) {
	got := FatTree(2, 2, 1)
	golden := filepath.Join("testdata", "fattree-2x2x1.net")
	if os.Getenv("UPDATE_GOLDEN") != "" {
		os.WriteFile(golden, []byte(got), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("FatTree(2,2,1) =\n%s\nwant\n%s", got, want)
	}
	l := countNet(FatTree(32, 32, 16))
	if l.nodes != 1072 || l.switches != 48 || l.ports != 1024*2+32*49+16*33 {
		t.Errorf("FatTree(32,32,16) counts = %+v, want 1072 nodes, 48 switches", l)
	}
}

// TestHarness runs ibsim, OpenSM and ibnetdiscover on a small fat tree and
// checks the discovered topology, the console, and stale-slot freeing.
func TestHarness(t *testing.T) {
	Require(t, "opensm", "ibnetdiscover")
	s := Start(t, FatTree(2, 2, 2))
	sm := s.StartOpenSM(OpenSMOptions{Host: "h0001"})

	out := s.MustRun("h0002", "ibnetdiscover")
	if n := strings.Count(out, "\nCa\t"); n != 4 {
		t.Errorf("ibnetdiscover found %d CAs, want 4:\n%s", n, out)
	}
	if n := strings.Count(out, "\nSwitch\t"); n != 4 {
		t.Errorf("ibnetdiscover found %d switches, want 4:\n%s", n, out)
	}
	// Every host has a LID from OpenSM.
	for _, m := range regexp.MustCompile(`"h\d{4} HCA-1" lid (\d+)`).FindAllStringSubmatch(out, -1) {
		if m[1] == "0" {
			t.Errorf("host without LID in\n%s", out)
		}
	}

	// The console answers with the command's own output.
	if got := s.MustConsole("# hello"); !strings.Contains(got, "# hello") {
		t.Errorf("console echo = %q", got)
	}
	if got := s.MustConsole("Bogus"); !strings.Contains(got, "unknown") {
		t.Errorf("unknown command output = %q", got)
	}
	cs, err := s.Attached()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(cs, func(c Client) bool { return c.ID == sm.Pid() })
	if i < 0 || !cs[i].SM || cs[i].Node != "h0001" {
		t.Fatalf("Attached = %+v, want OpenSM (pid %d) as SM on h0001", cs, sm.Pid())
	}
	slot := cs[i].Slot

	// A SIGKILLed client keeps its slot until FreeStaleSlots.
	sm.Kill()
	freed, err := s.FreeStaleSlots()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(freed, []int{slot}) {
		t.Errorf("FreeStaleSlots freed %v, want [%d]", freed, slot)
	}
	if cs, _ := s.Attached(); len(cs) != 0 {
		t.Errorf("after FreeStaleSlots, Attached = %+v", cs)
	}
}

// TestBigFabricLimits starts a fabric past ibsim's default 2,048-node
// limit: Start must raise -N (and friends) from the net file.
func TestBigFabricLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 2,656-node fabric")
	}
	Require(t, "ibnetdiscover")
	s := Start(t, FatTree(64, 40, 32))
	out := s.MustRun("h0001", "ibnetdiscover")
	if ca, sw := strings.Count(out, "\nCa\t"), strings.Count(out, "\nSwitch\t"); ca != 64*40 || sw != 96 {
		t.Errorf("ibnetdiscover found %d CAs and %d switches, want 2560 and 96", ca, sw)
	}
}
