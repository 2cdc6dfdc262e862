package checks

import (
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
