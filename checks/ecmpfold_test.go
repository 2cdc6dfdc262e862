package checks_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// TestECMPOneFindingPerSwitch (trial D1's leftover): a spine whose
// groups of parallel cables to two leaves are both uneven made one
// routing.ecmp-imbalance finding per group, two findings for one
// switch's routing. The judgement of each group is unchanged; the
// report says it once per switch, naming each group.
func TestECMPOneFindingPerSwitch(t *testing.T) {
	f, err := topology.FatTree2{Leaves: 4, Spines: 2, HostsPerLeaf: 6, LinksPerPair: 2}.Build()
	if err != nil {
		t.Fatal(err)
	}
	// spine01's first cable to leaf01 and to leaf02
	first := func(leaf string) int {
		for _, p := range byDesc(f, "spine01").Ports {
			if p != nil && p.Remote != nil && p.Remote.Node.Description == leaf {
				return int(p.Num)
			}
		}
		t.Fatalf("spine01 has no cable to %s", leaf)
		return 0
	}
	a, b := first("leaf01"), first("leaf02")
	snap := ecmpTreeSnap(t, fmt.Sprintf("lft spine01 behind=leaf01 port=%d\nlft spine01 behind=leaf02 port=%d\n", a, b))
	res, err := checks.Run(snap)
	if err != nil {
		t.Fatal(err)
	}
	// The sweep's verdicts keep the groups apart: a gate takes the one
	// its job's routes cross (jobECMP), by its busiest port.
	if v := checks.FabricWide(snap, res, time.Now()); len(byCheck(v.Findings, "routing.ecmp-imbalance")) != 2 {
		t.Errorf("the sweep's verdicts hold %s, want spine01's two groups apart", titles(byCheck(v.Findings, "routing.ecmp-imbalance")))
	}
	got := byCheck(res.Findings, "routing.ecmp-imbalance")
	var at []checks.Finding
	for _, fd := range got {
		if len(fd.Entities) > 0 && fd.Entities[0].Node == "spine01" {
			at = append(at, fd)
		}
	}
	if len(at) != 1 {
		t.Fatalf("spine01 with two uneven groups: %d routing.ecmp-imbalance findings %s, want one naming both groups", len(at), titles(at))
	}
	fd := at[0]
	for _, want := range []string{"spine01", "2 groups", "leaf01", "leaf02"} {
		if !strings.Contains(fd.Title, want) {
			t.Errorf("title %q lacks %q", fd.Title, want)
		}
	}
	var busiest []int
	for _, e := range fd.Entities {
		if e.Role == "busiest" {
			busiest = append(busiest, e.Port)
		}
	}
	if len(busiest) != 2 || busiest[0] != a && busiest[0] != b || busiest[1] != a && busiest[1] != b || busiest[0] == busiest[1] {
		t.Errorf("busiest ports %v, want %d and %d (one per group)", busiest, a, b)
	}
	t.Logf("title: %s", fd.Title)
	groups := 0
	for _, e := range fd.Evidence {
		if e.Name == "max/mean" {
			groups++
		}
		t.Logf("evidence %s: %s", e.Name, e.Text)
	}
	if groups != 2 {
		t.Errorf("%d max/mean evidence lines, want one per group (2)", groups)
	}
	if fd.Severity != checks.Critical {
		t.Errorf("severity %s, want critical (each group 6:0, a port idle)", fd.Severity)
	}
}

func byDesc(f *fabric.Fabric, desc string) *fabric.Node {
	for _, n := range f.Nodes {
		if n.Description == desc {
			return n
		}
	}
	return nil
}
