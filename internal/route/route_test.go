package route

import (
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/internal/transport/transporttest"
	"github.com/ibdoctor/ibdoctor/mad"
)

func fatTree(t testing.TB, ft topology.FatTree2) *fabric.Fabric {
	t.Helper()
	f, err := ft.Build()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := topology.AssignLIDs(f); err != nil {
		t.Fatal(err)
	}
	if err := topology.Route(f); err != nil {
		t.Fatal(err)
	}
	return f
}

func small(t testing.TB) *fabric.Fabric {
	return fatTree(t, topology.FatTree2{Common: topology.Common{SwitchPorts: 8}, Leaves: 3, Spines: 2, HostsPerLeaf: 4, LinksPerPair: 2})
}

func node(f *fabric.Fabric, name string) *fabric.Node { return f.NodesByName(name)[0] }
func lid(f *fabric.Fabric, name string) uint16        { return node(f, name).Ports[1].LID }

func hostLIDs(f *fabric.Fabric) []uint16 {
	var out []uint16
	for _, n := range f.Nodes {
		if n.Type == mad.NodeCA {
			out = append(out, n.Ports[1].LID)
		}
	}
	return out
}

func TestTraceHealthy(t *testing.T) {
	f := small(t)
	tr, err := TraceRoute(f, lid(f, "gpu001 mlx5_0"), lid(f, "gpu012 mlx5_0"))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Outcome != Delivered || len(tr.Hops) != 3 || tr.End != node(f, "gpu012 mlx5_0").Ports[1] {
		t.Fatalf("%v", tr)
	}
	if tr.Hops[0].Switch.Description != "leaf01" || tr.Hops[0].In != 1 || tr.Hops[2].Switch.Description != "leaf03" || tr.Hops[2].Out != 4 {
		t.Fatalf("%v", tr)
	}
	if l := tr.Links(f); len(l) != 4 || l[3].B != tr.End {
		t.Fatalf("links %v", l)
	}
	// Same leaf: one hop. To a switch LID: ends on its port 0.
	if tr, _ := TraceRoute(f, lid(f, "gpu001 mlx5_0"), lid(f, "gpu002 mlx5_0")); tr.Outcome != Delivered || len(tr.Hops) != 1 {
		t.Fatalf("%v", tr)
	}
	sp := node(f, "spine02").Ports[0].LID
	if tr, _ := TraceRoute(f, lid(f, "gpu001 mlx5_0"), sp); tr.Outcome != Delivered || len(tr.Hops) != 2 || tr.Hops[1].Out != 0 {
		t.Fatalf("%v", tr)
	}
	if _, err := TraceRoute(f, 999, 1); err == nil {
		t.Fatal("unknown source accepted")
	}
}

func TestTraceFaults(t *testing.T) {
	a, b := "gpu001 mlx5_0", "gpu012 mlx5_0"
	cases := []struct {
		name string
		edit func(f *fabric.Fabric)
		want Outcome
	}{
		{"black hole", func(f *fabric.Fabric) { node(f, "leaf01").Switch.LFT.Set(lid(f, b), fabric.NoRoute) }, NoRoute},
		{"beyond ports", func(f *fabric.Fabric) { node(f, "leaf01").Switch.LFT.Set(lid(f, b), 30) }, NoRoute},
		{"loop", func(f *fabric.Fabric) {
			// leaf01 -> spine01 (port 5) -> back to leaf01 (spine port 1)
			node(f, "leaf01").Switch.LFT.Set(lid(f, b), 5)
			node(f, "spine01").Switch.LFT.Set(lid(f, b), 1)
		}, Loop},
		{"dead end", func(f *fabric.Fabric) {
			out := node(f, "leaf01").Switch.LFT.At(lid(f, b))
			p := node(f, "leaf01").Ports[out]
			p.State, p.PhysState = mad.PortStateDown, mad.PhysPolling
		}, DeadEnd},
		{"moved destination", func(f *fabric.Fabric) {
			// gpu012 and gpu005 swap LIDs (a re-sweep the LFTs missed).
			x, y := node(f, b).Ports[1], node(f, "gpu005 mlx5_0").Ports[1]
			x.LID, y.LID = y.LID, x.LID
			f.Reindex()
		}, Misdelivered},
		{"no table", func(f *fabric.Fabric) { node(f, "leaf03").Switch.LFT = nil }, NoTable},
		{"source down", func(f *fabric.Fabric) { node(f, a).Ports[1].State = mad.PortStateDown }, SourceDown},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := small(t)
			to := lid(f, b)
			c.edit(f)
			tr, err := TraceRoute(f, lid(f, a), to)
			if err != nil {
				t.Fatal(err)
			}
			if tr.Outcome != c.want {
				t.Fatalf("got %v, want %v", tr, c.want)
			}
			if c.want == Misdelivered && tr.End.Node.Description != "gpu012 mlx5_0" {
				t.Fatalf("misdelivered to %v", tr.End.Node.Description)
			}
			// The all-pairs analysis agrees with the single trace.
			hp, err := NewAnalyzer(f).HostPaths([]uint16{lid(f, a), to}, 10)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, p := range hp.Failed {
				if p.From == lid(f, a) && p.To == to {
					found = p.Outcome == c.want
				}
			}
			if !found {
				t.Fatalf("HostPaths failures %v lack %v", hp.Failed, c.want)
			}
		})
	}
}

func TestAsymmetric(t *testing.T) {
	f := small(t)
	a, b := lid(f, "gpu001 mlx5_0"), lid(f, "gpu012 mlx5_0")
	links := func(from, to uint16) map[fabric.Link]bool {
		tr, err := TraceRoute(f, from, to)
		if err != nil || tr.Outcome != Delivered {
			t.Fatalf("%v %v", tr, err)
		}
		m := map[fabric.Link]bool{}
		for _, l := range tr.Links(f) {
			if l.B.Node.GUID < l.A.Node.GUID || l.B.Node == l.A.Node && l.B.Num < l.A.Num {
				l.A, l.B = l.B, l.A
			}
			m[l] = true
		}
		return m
	}
	same := func() bool {
		x, y := links(a, b), links(b, a)
		for l := range x {
			if !y[l] {
				return false
			}
		}
		return len(x) == len(y)
	}
	// Make A->B and B->A take the same spine link pair, then diverge.
	leaf1, leaf3 := node(f, "leaf01"), node(f, "leaf03")
	leaf1.Switch.LFT.Set(b, 5)              // leaf01 port 5 -> spine01 port 1
	node(f, "spine01").Switch.LFT.Set(b, 5) // spine01 port 5 -> leaf03 port 5
	leaf3.Switch.LFT.Set(a, 5)              // back the same way
	node(f, "spine01").Switch.LFT.Set(a, 1) //
	if !same() {
		t.Fatal("symmetric routes reported asymmetric")
	}
	leaf3.Switch.LFT.Set(a, 7)              // via spine02 instead
	node(f, "spine02").Switch.LFT.Set(a, 1) // spine02 port 1 -> leaf01 port 7
	if same() {
		t.Fatal("asymmetric routes reported symmetric")
	}
}

// bruteForce walks every ordered pair one by one: the oracle for
// HostPaths.
func bruteForce(t *testing.T, f *fabric.Fabric, hosts []uint16) (map[*fabric.Port]int64, [numOutcomes]int64) {
	loads := map[*fabric.Port]int64{}
	var outc [numOutcomes]int64
	for _, d := range hosts {
		for _, s := range hosts {
			if s == d {
				continue
			}
			tr, err := TraceRoute(f, s, d)
			if err != nil {
				t.Fatal(err)
			}
			outc[tr.Outcome]++
			if tr.Outcome == Delivered {
				for _, h := range tr.Hops {
					loads[h.Switch.Ports[h.Out]]++
				}
			}
		}
	}
	return loads, outc
}

func TestHostPathsMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 30; round++ {
		f := fatTree(t, topology.FatTree2{Common: topology.Common{SwitchPorts: 12}, Leaves: 4, Spines: 3, HostsPerLeaf: 6, LinksPerPair: 2})
		hosts := hostLIDs(f)
		// Random damage: rewritten entries, black holes, a down link.
		var sws []*fabric.Node
		for _, n := range f.Nodes {
			if n.Type == mad.NodeSwitch {
				sws = append(sws, n)
			}
		}
		for k := 0; k < round; k++ {
			sw := sws[rng.IntN(len(sws))]
			l := hosts[rng.IntN(len(hosts))]
			switch rng.IntN(3) {
			case 0:
				sw.Switch.LFT.Set(l, fabric.NoRoute)
			default:
				sw.Switch.LFT.Set(l, uint8(1+rng.IntN(12)))
			}
		}
		if round%3 == 0 {
			p := sws[rng.IntN(len(sws))].Ports[1+rng.IntN(12)]
			p.State = mad.PortStateDown
		}
		set := hosts
		if round%2 == 1 {
			set = hosts[:len(hosts)/2+round%5]
		}
		want, wantOut := bruteForce(t, f, set)
		hp, err := NewAnalyzer(f).HostPaths(set, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if hp.Outcomes != wantOut {
			t.Fatalf("round %d: outcomes %v, brute force %v", round, hp.Outcomes, wantOut)
		}
		if int64(len(hp.Failed)) != hp.Pairs()-hp.Outcomes[Delivered] {
			t.Fatalf("round %d: %d failures listed, %d counted", round, len(hp.Failed), hp.Pairs()-hp.Outcomes[Delivered])
		}
		for _, sw := range sws {
			for i, v := range hp.Loads.Switch(sw) {
				if v != want[sw.Ports[i]] {
					t.Fatalf("round %d: %s port %d: %d paths, brute force %d", round, sw.Description, i, v, want[sw.Ports[i]])
				}
			}
		}
	}
}

func TestLIDLoadsBalanced(t *testing.T) {
	f := fatTree(t, topology.FatTree2{Common: topology.Common{SwitchPorts: 16}, Leaves: 4, Spines: 4, HostsPerLeaf: 8, LinksPerPair: 2})
	a := NewAnalyzer(f)
	l := a.LIDLoads()
	leaf := node(f, "leaf02")
	loads := l.Switch(leaf)
	// 24 remote CA LIDs over 8 up ports: 3 each; 1 per host port.
	for p := 1; p <= 16; p++ {
		want := int64(3)
		if p <= 8 {
			want = 1
		}
		if loads[p] != want || l.Of(leaf.Ports[p]) != want {
			t.Errorf("leaf02 port %d carries %d CA LIDs, want %d", p, loads[p], want)
		}
	}
	// All pairs: each leaf up port carries 8 hosts × 24 remote dests / 8 ports.
	hp, err := a.HostPaths(hostLIDs(f), 0)
	if err != nil {
		t.Fatal(err)
	}
	if hp.Pairs() != 32*31 || hp.Outcomes[Delivered] != 32*31 {
		t.Fatalf("outcomes %v", hp.Outcomes)
	}
	for p := 9; p <= 16; p++ {
		if v := hp.Loads.Of(leaf.Ports[p]); v != 24 {
			t.Errorf("leaf02 up port %d carries %d paths, want 24", p, v)
		}
	}
	// Skew one leaf: move every remote LID onto port 9; LIDLoads sees it.
	for lid, out := range leaf.Switch.LFT.Bytes() {
		if out > 9 {
			leaf.Switch.LFT.Set(uint16(lid), 9)
		}
	}
	if v := NewAnalyzer(f).LIDLoads().Of(leaf.Ports[9]); v != 24 {
		t.Errorf("skewed port 9 carries %d CA LIDs, want 24", v)
	}
}

// smaHandler answers DR SwitchInfo and LFT reads from f, addressed by the
// nodes' Paths; switches in silent never answer.
func smaHandler(f *fabric.Fabric, silent map[*fabric.Node]bool) transporttest.Handler {
	byPath := map[string]*fabric.Node{}
	for _, n := range f.Nodes {
		if n.Path != nil {
			byPath["dr:"+n.Path.String()] = n
		}
	}
	return func(p *transport.Packet) []transporttest.Reply {
		n := byPath[transporttest.DestKey(p)]
		if n == nil || silent[n] {
			return nil
		}
		attr := mad.AttrID(binary.BigEndian.Uint16(p.MAD[16:18]))
		mod := binary.BigEndian.Uint32(p.MAD[20:24])
		data := make([]byte, 64)
		switch attr {
		case mad.AttrSwitchInfo:
			si := mad.SwitchInfo{LinearFDBCap: n.Switch.LinearFDBCap, LinearFDBTop: n.Switch.LinearFDBTop, EnhancedPort0: true, LifeTimeValue: 18}
			si.MarshalAttr(data)
		case mad.AttrLinearForwardingTable:
			var blk mad.LFTBlock
			for i := range blk.Ports {
				blk.Ports[i] = fabric.NoRoute
			}
			copy(blk.Ports[:], n.Switch.LFT.Bytes()[min(n.Switch.LFT.Len(), int(mod)*64):])
			blk.MarshalAttr(data)
		default:
			return []transporttest.Reply{{Packet: &transport.Packet{MAD: transporttest.Respond(p.MAD, nil, mad.StatusMethodAttrUnsupported)}}}
		}
		return []transporttest.Reply{{Packet: &transport.Packet{Addr: p.Addr, MAD: transporttest.Respond(p.MAD, data, mad.StatusOK)}}}
	}
}

// setPaths gives every switch a directed route from HCA port local.
func setPaths(f *fabric.Fabric, local *fabric.Port) {
	first := local.Remote.Node
	first.Path = mad.Path{local.Num}
	q := []*fabric.Node{first}
	for len(q) > 0 {
		u := q[0]
		q = q[1:]
		for _, p := range u.Ports[1:] {
			if p.Remote == nil || p.Remote.Node.Type != mad.NodeSwitch || p.Remote.Node.Path != nil {
				continue
			}
			p.Remote.Node.Path = u.Path.Extend(p.Num)
			q = append(q, p.Remote.Node)
		}
	}
}

func TestReadLFTs(t *testing.T) {
	// A table spanning 3 blocks (top 0x84 = 132).
	want := fatTree(t, topology.FatTree2{Common: topology.Common{SwitchPorts: 40}, Leaves: 4, Spines: 2, HostsPerLeaf: 32})
	local := node(want, "gpu001 mlx5_0").Ports[1]
	setPaths(want, local)
	silent := map[*fabric.Node]bool{node(want, "leaf03"): true}
	conn := transporttest.New(transport.LocalPort{Name: "test", PortNum: 1}, smaHandler(want, silent))
	eng := transport.NewEngine(conn, transport.Options{Timeout: 20 * time.Millisecond, Retries: -1})
	defer eng.Close()

	// Read into a copy without LFTs.
	got := fatTree(t, topology.FatTree2{Common: topology.Common{SwitchPorts: 40}, Leaves: 4, Spines: 2, HostsPerLeaf: 32})
	for i, n := range got.Nodes {
		if n.Switch != nil {
			n.Switch.LFT, n.Switch.LinearFDBTop = nil, 0
			n.Path = want.Nodes[i].Path
		}
	}
	err := ReadLFTs(context.Background(), eng, got, ReadOptions{})
	var se *SwitchError
	if !errors.As(err, &se) || se.Switch.Description != "leaf03" || se.What != "SwitchInfo" {
		t.Fatalf("error %v, want leaf03's SwitchInfo to fail", err)
	}
	for i, n := range got.Nodes {
		if n.Switch == nil {
			continue
		}
		if n.Description == "leaf03" {
			if n.Switch.LFT != nil {
				t.Fatal("leaf03 got a table")
			}
			continue
		}
		w := want.Nodes[i].Switch
		if n.Switch.LinearFDBTop != 134 || !n.Switch.LFT.Equal(w.LFT) {
			t.Fatalf("%s: top %d, LFT %v, want %v", n.Description, n.Switch.LinearFDBTop, n.Switch.LFT, w.LFT)
		}
	}
}

// BenchmarkHostPaths10k measures all-pairs path loads over the 10,240
// hosts of a 3-level fat tree (10 pods of 32 leaves × 32 hosts).
func BenchmarkHostPaths10k(b *testing.B) {
	f, err := topology.FatTree3{Pods: 10, LeavesPerPod: 32, SpinesPerPod: 32, HostsPerLeaf: 32, Cores: 32 * 16}.Build()
	if err != nil {
		b.Fatal(err)
	}
	if _, err := topology.AssignLIDs(f); err != nil {
		b.Fatal(err)
	}
	if err := topology.Route(f); err != nil {
		b.Fatal(err)
	}
	hosts := hostLIDs(f)
	b.ResetTimer()
	start := processCPU(b)
	for i := 0; i < b.N; i++ {
		a := NewAnalyzer(f)
		hp, err := a.HostPaths(hosts, 10)
		if err != nil {
			b.Fatal(err)
		}
		if hp.Outcomes[Delivered] != int64(len(hosts))*int64(len(hosts)-1) {
			b.Fatalf("outcomes %v", hp.Outcomes)
		}
	}
	b.ReportMetric(float64(processCPU(b)-start)/float64(b.N)/1e9, "cpu-s/op")
	b.ReportMetric(float64(len(hosts)), "hosts")
	b.ReportMetric(float64(len(hosts))*float64(len(hosts)-1), "pairs")
}

// BenchmarkHostPaths50k is BenchmarkHostPaths10k over the 45,056 hosts of
// the min-hop routed FatTree50k (3,840 switches): tables far larger than
// the caches, where a hop's table lookup costs most.
func BenchmarkHostPaths50k(b *testing.B) {
	f, err := topology.Routed(topology.FatTree50k())
	if err != nil {
		b.Fatal(err)
	}
	hosts := hostLIDs(f)
	b.ReportAllocs()
	b.ResetTimer()
	start := processCPU(b)
	for b.Loop() {
		hp, err := NewAnalyzer(f).HostPaths(hosts, 10)
		if err != nil {
			b.Fatal(err)
		}
		if hp.Outcomes[Delivered] != int64(len(hosts))*int64(len(hosts)-1) {
			b.Fatalf("outcomes %v", hp.Outcomes)
		}
	}
	b.ReportMetric(float64(processCPU(b)-start)/float64(b.N)/1e9, "cpu-s/op")
}

// BenchmarkLIDLoads10k measures per-port CA LID counts on the same fabric.
func BenchmarkLIDLoads10k(b *testing.B) {
	f, err := topology.FatTree3{Pods: 10, LeavesPerPod: 32, SpinesPerPod: 32, HostsPerLeaf: 32, Cores: 32 * 16}.Build()
	if err != nil {
		b.Fatal(err)
	}
	if _, err := topology.AssignLIDs(f); err != nil {
		b.Fatal(err)
	}
	if err := topology.Route(f); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		NewAnalyzer(f).LIDLoads()
	}
}
