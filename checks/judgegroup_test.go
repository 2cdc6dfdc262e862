package checks

import (
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
)

// TestJudgeGroupEdges: judgeGroup's edge inputs decide nothing and never
// panic: a group with no port read (a switch whose PortInfo went
// unanswered: trial A5 crashed on it, integer divide by zero), a single
// port, ports that carry no destination, counts on ports not in the
// group, and a nil load.
func TestJudgeGroupEdges(t *testing.T) {
	sw := &fabric.Node{Description: "sw"}
	p := func(n uint8) *fabric.Port { return &fabric.Port{Node: sw, Num: n} }
	a, b, c := p(1), p(2), p(3)
	noLoad := func() map[*fabric.Port]int { return nil }
	cases := []struct {
		name string
		grp  ecmpGroup
	}{
		{"empty", ecmpGroup{sw: sw, dlids: map[*fabric.Port]int{}, load: noLoad}},
		{"empty with counts elsewhere", ecmpGroup{sw: sw, dlids: map[*fabric.Port]int{a: 9, b: 1}, load: noLoad, unread: 10, maybe: []*fabric.Port{a, b}}},
		{"nil maps", ecmpGroup{sw: sw}},
		{"one port", ecmpGroup{sw: sw, ports: []*fabric.Port{a}, dlids: map[*fabric.Port]int{a: 7}, load: noLoad}},
		{"idle ports", ecmpGroup{sw: sw, ports: []*fabric.Port{a, b}, dlids: map[*fabric.Port]int{}, load: noLoad}},
		{"fewer destinations than ports", ecmpGroup{sw: sw, ports: []*fabric.Port{a, b, c}, dlids: map[*fabric.Port]int{a: 2}, load: noLoad}},
		{"nil load", ecmpGroup{sw: sw, ports: []*fabric.Port{a, b}, dlids: map[*fabric.Port]int{a: 1, b: 1}}},
	}
	s := &Snapshot{Fabric: &fabric.Fabric{Nodes: []*fabric.Node{sw}}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if f, ok := s.judgeGroup(&tc.grp, 1.2); ok {
				t.Errorf("judged uneven: %s", f.Title)
			}
		})
	}
}

// FuzzJudgeGroup: any split of destinations over up to eight ports,
// against any ratio, judges without panicking, and a group of fewer than
// two ports is never uneven.
func FuzzJudgeGroup(f *testing.F) {
	f.Add([]byte{}, uint8(12))
	f.Add([]byte{0, 0}, uint8(12))
	f.Add([]byte{9, 1, 1, 1}, uint8(12))
	f.Add([]byte{5, 4, 3, 4}, uint8(12))
	f.Fuzz(func(t *testing.T, counts []byte, r uint8) {
		if len(counts) > 8 {
			counts = counts[:8]
		}
		sw := &fabric.Node{Description: "sw"}
		grp := ecmpGroup{sw: sw, dlids: map[*fabric.Port]int{}}
		load := map[*fabric.Port]int{}
		for i, c := range counts {
			p := &fabric.Port{Node: sw, Num: uint8(i + 1)}
			grp.ports = append(grp.ports, p)
			grp.dlids[p] = int(c)
			load[p] = int(c)
		}
		grp.load = func() map[*fabric.Port]int { return load }
		s := &Snapshot{Fabric: &fabric.Fabric{Nodes: []*fabric.Node{sw}}}
		fd, ok := s.judgeGroup(&grp, 1+float64(r)/64)
		if ok && len(grp.ports) < 2 {
			t.Errorf("a group of %d ports judged uneven: %s", len(grp.ports), fd.Title)
		}
	})
}

// TestJudgeGroupGranularity (trial D1): stock OpenSM ftree on a fat tree
// of 6 hosts per leaf and 2+2 parallel uplinks puts a leaf's 6
// destinations 4:2 on a spine's two cables to it: one destination above
// the best split ceil(6/2)=3, which was a warning (1.33x the mean) telling
// the operator to look for edited routes. One destination above the best
// achievable split is the engine's placement granularity, not worth a
// finding; more is judged, an idle port always, and the advice names the
// routing engine's own placement as a cause.
func TestJudgeGroupGranularity(t *testing.T) {
	sw := &fabric.Node{Description: "spine2"}
	s := &Snapshot{Fabric: &fabric.Fabric{Nodes: []*fabric.Node{sw}}}
	judge := func(counts ...int) (Finding, bool) {
		grp := ecmpGroup{sw: sw, dlids: map[*fabric.Port]int{}}
		load := map[*fabric.Port]int{}
		for i, c := range counts {
			p := &fabric.Port{Node: sw, Num: uint8(i + 1)}
			grp.ports = append(grp.ports, p)
			grp.dlids[p], load[p] = c, c
		}
		grp.load = func() map[*fabric.Port]int { return load }
		return s.judgeGroup(&grp, 1.2)
	}
	if f, ok := judge(4, 2); ok {
		t.Errorf("4:2 (one destination above the best split 3:3) judged: %s %s", f.Severity, f.Title)
	}
	if f, ok := judge(6, 5, 5, 4); ok {
		t.Errorf("6:5:5:4 judged: %s %s", f.Severity, f.Title)
	}
	f, ok := judge(5, 1)
	if !ok || f.Severity != Error {
		t.Fatalf("5:1 (two above the best split): %v %s %q", ok, f.Severity, f.Title)
	}
	for _, w := range []string{"routing engine's own placement", "routing_engine", "best split 3"} {
		if !strings.Contains(f.Action+" "+f.Evidence[0].Text, w) {
			t.Errorf("finding lacks %q:\n%s\n%s", w, f.Evidence[0].Text, f.Action)
		}
	}
	if f, ok := judge(9, 9, 0, 0); !ok || f.Severity != Critical {
		t.Errorf("DOR's 9:9:0:0: %v %s %q", ok, f.Severity, f.Title)
	}
	if f, ok := judge(2, 0); !ok {
		t.Errorf("2:0 (a port idle) not judged: %s", f.Title)
	}
}
