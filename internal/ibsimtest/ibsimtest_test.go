package ibsimtest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/mad"
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

// TestStartFabric starts ibsim from a generated *fabric.Fabric and checks
// that ibnetdiscover sees exactly its node GUIDs.
func TestStartFabric(t *testing.T) {
	Require(t, "ibnetdiscover")
	f, err := topology.FatTree2{Leaves: 3, Spines: 2, HostsPerLeaf: 2}.Build()
	if err != nil {
		t.Fatal(err)
	}
	s := StartFabric(t, f, fabric.NetFileOptions{})
	var ca *fabric.Node
	for _, n := range f.Nodes {
		if n.Type == mad.NodeCA {
			ca = n
			break
		}
	}
	out := s.MustRun(fabric.DefaultNodeID(ca), "ibnetdiscover")
	var want, got []string
	for _, n := range f.Nodes {
		want = append(want, fmt.Sprintf("0x%016x", n.GUID))
	}
	for _, m := range regexp.MustCompile(`(?m)^(?:switchguid|caguid)=(0x[0-9a-f]+)`).FindAllStringSubmatch(out, -1) {
		g, err := strconv.ParseUint(m[1], 0, 64)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("0x%016x", g))
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("ibnetdiscover GUIDs\n%v\nwant\n%v", got, want)
	}
}
