package topology

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// checkStructure asserts what every generated fabric must satisfy: links
// symmetric, ports numbered by index, cabled ports Active/LinkUp at the
// rate, uncabled ones Down/Polling, GUIDs unique.
func checkStructure(t *testing.T, f *fabric.Fabric, rate mad.Rate) {
	t.Helper()
	guids := map[uint64]*fabric.Node{}
	for _, n := range f.Nodes {
		if o := guids[n.GUID]; o != nil {
			t.Fatalf("GUID %#x used by %q and %q", n.GUID, o.Description, n.Description)
		}
		guids[n.GUID] = n
		if n.Type == mad.NodeSwitch && (n.Switch == nil || n.Ports[0] == nil) {
			t.Fatalf("switch %q lacks Switch or port 0", n.Description)
		}
		if n.Type == mad.NodeCA && n.Ports[0] != nil {
			t.Fatalf("CA %q has a port 0", n.Description)
		}
		for i, p := range n.Ports {
			if p == nil {
				continue
			}
			if int(p.Num) != i || p.Node != n {
				t.Fatalf("%q port index %d has Num %d / node %p", n.Description, i, p.Num, p.Node)
			}
			if i == 0 {
				continue
			}
			if p.Remote != nil {
				if p.Remote.Remote != p {
					t.Fatalf("%q port %d: link not symmetric", n.Description, i)
				}
				if p.State != mad.PortStateActive || p.PhysState != mad.PhysLinkUp || p.Rate() != rate {
					t.Fatalf("%q port %d cabled but %v/%v at %v", n.Description, i, p.State, p.PhysState, p.Rate())
				}
				if !p.SpeedSupported.Has(rate.Speed) || !p.WidthEnabled.Has(rate.Width) {
					t.Fatalf("%q port %d: rate %v not in supported/enabled masks", n.Description, i, rate)
				}
			} else if p.State != mad.PortStateDown || p.PhysState != mad.PhysPolling {
				t.Fatalf("%q port %d uncabled but %v/%v", n.Description, i, p.State, p.PhysState)
			}
		}
	}
}

func count(f *fabric.Fabric) (sw, ca, links int) {
	for _, n := range f.Nodes {
		if n.Type == mad.NodeSwitch {
			sw++
		} else {
			ca++
		}
	}
	return sw, ca, len(f.Links())
}

func TestFatTree2Structure(t *testing.T) {
	ft := FatTree2{Leaves: 6, Spines: 4, HostsPerLeaf: 24, LinksPerPair: 2, Hosts: Hosts{HCAsPerServer: 8}}
	f, err := ft.Build()
	if err != nil {
		t.Fatal(err)
	}
	checkStructure(t, f, mad.Rate{Width: mad.Width4X, Speed: mad.SpeedNDR})
	sw, ca, links := count(f)
	if sw != 10 || ca != 144 || links != 144+6*4*2 {
		t.Fatalf("got %d switches, %d CAs, %d links; want 10, 144, %d", sw, ca, links, 144+48)
	}
	// Names, GUIDs and server grouping.
	if d := f.Nodes[0].Description; d != "spine01" {
		t.Errorf("first node %q, want spine01", d)
	}
	if d := f.Nodes[4].Description; d != "leaf01" {
		t.Errorf("node 4 %q, want leaf01", d)
	}
	h := f.Nodes[10+42]
	if h.Description != "gpu006 mlx5_2" {
		t.Errorf("HCA 42 is %q, want %q", h.Description, "gpu006 mlx5_2")
	}
	if h.GUID>>40 != OUINVIDIA || h.VendorID != OUIMellanox || h.Ports[1].CapMask != 0xa651e848 {
		t.Errorf("HCA GUID %#x vendor %#x capmask %#x", h.GUID, h.VendorID, h.Ports[1].CapMask)
	}
	for i := 0; i < 8; i++ {
		if g := f.Nodes[10+40+i].SystemImageGUID; g != h.SystemImageGUID {
			t.Errorf("HCA %d of gpu006 has system image %#x, want %#x", i, g, h.SystemImageGUID)
		}
	}
	if f.Nodes[10+39].SystemImageGUID == h.SystemImageGUID {
		t.Errorf("gpu005 and gpu006 share a system image GUID")
	}
	// Leaf 2's ports: 1..24 hosts, 25..32 spines (2 per spine), rest down.
	leaf := f.NodesByName("leaf02")[0]
	if r := leaf.Ports[1].Remote.Node.Description; r != "gpu004 mlx5_0" {
		t.Errorf("leaf02 port 1 -> %q", r)
	}
	for p, want := range map[int]string{25: "spine01", 26: "spine01", 27: "spine02", 32: "spine04"} {
		if r := leaf.Ports[p].Remote; r == nil || r.Node.Description != want || int(r.Num) != 2+1+(p-25)%2 {
			t.Errorf("leaf02 port %d -> %v, want %s port %d", p, r, want, 3+(p-25)%2)
		}
	}
	if leaf.Ports[33].Remote != nil || leaf.NumPorts() != 64 {
		t.Errorf("leaf02 port 33 cabled or %d ports", leaf.NumPorts())
	}
}

func TestFatTree2Errors(t *testing.T) {
	for _, ft := range []FatTree2{
		{Leaves: 2, Spines: 2, HostsPerLeaf: 63},
		{Leaves: 65, Spines: 1, HostsPerLeaf: 1},
		{Leaves: 0},
		{Common: Common{SwitchPorts: 300}, Leaves: 1},
	} {
		if _, err := ft.Build(); err == nil {
			t.Errorf("%+v: no error", ft)
		}
	}
}

func TestLongSwitchNames(t *testing.T) {
	f, err := FatTree2{Common: Common{LongSwitchNames: true, Rate: mad.Rate{Width: mad.Width4X, Speed: mad.SpeedHDR}, SwitchPorts: 40},
		Leaves: 2, Spines: 1, HostsPerLeaf: 2}.Build()
	if err != nil {
		t.Fatal(err)
	}
	if d := f.Nodes[1].Description; d != "MF0;leaf01:MQM8700/U1" {
		t.Errorf("got %q", d)
	}
	checkStructure(t, f, mad.Rate{Width: mad.Width4X, Speed: mad.SpeedHDR})
}

func routed(t *testing.T, f *fabric.Fabric) uint16 {
	t.Helper()
	top, err := AssignLIDs(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := Route(f); err != nil {
		t.Fatal(err)
	}
	return top
}

// walk follows the LFTs from switch sw to lid and returns the hop count,
// or an error describing where it went wrong.
func walk(f *fabric.Fabric, sw *fabric.Node, lid uint16) (int, error) {
	dst := f.PortByLID(lid)
	for hops := 0; hops < 64; hops++ {
		if sw == dst.Node {
			return hops, nil
		}
		if int(lid) >= sw.Switch.LFT.Len() {
			return 0, fmt.Errorf("%s: LID %d beyond LFT", sw.Description, lid)
		}
		out := sw.Switch.LFT.At(lid)
		if out == fabric.NoRoute || int(out) >= len(sw.Ports) {
			return 0, fmt.Errorf("%s: LID %d has no route (%d)", sw.Description, lid, out)
		}
		if out == 0 {
			return 0, fmt.Errorf("%s: LID %d delivered to port 0 but belongs to %s", sw.Description, lid, dst.Node.Description)
		}
		p := sw.Ports[out]
		if p.Remote == nil {
			return 0, fmt.Errorf("%s: LID %d out of uncabled port %d", sw.Description, lid, out)
		}
		if p.Remote == dst {
			return hops + 1, nil
		}
		sw = p.Remote.Node
		if sw.Type != mad.NodeSwitch {
			return 0, fmt.Errorf("LID %d delivered to wrong CA %s", lid, sw.Description)
		}
	}
	return 0, fmt.Errorf("LID %d: loop", lid)
}

// checkRoutes walks from every switch to every LID and checks the hop
// counts are minimal against a BFS.
func checkRoutes(t *testing.T, f *fabric.Fabric, top uint16) {
	t.Helper()
	for _, n := range f.Nodes {
		if n.Type != mad.NodeSwitch {
			continue
		}
		if n.Switch.LinearFDBTop != top || n.Switch.LFT.Len() != int(top)+1 {
			t.Fatalf("%s: top %d len %d, want %d", n.Description, n.Switch.LinearFDBTop, n.Switch.LFT.Len(), top)
		}
		dist := bfs(n)
		for lid := uint16(1); lid <= top; lid++ {
			h, err := walk(f, n, lid)
			if err != nil {
				t.Fatal(err)
			}
			p := f.PortByLID(lid)
			want := dist[p.Node]
			if p.Node.Type != mad.NodeSwitch {
				want = dist[p.Remote.Node] + 1
			}
			if h != want {
				t.Fatalf("%s -> LID %d (%s): %d hops, shortest is %d", n.Description, lid, p.Node.Description, h, want)
			}
		}
	}
}

func bfs(from *fabric.Node) map[*fabric.Node]int {
	d := map[*fabric.Node]int{from: 0}
	q := []*fabric.Node{from}
	for len(q) > 0 {
		u := q[0]
		q = q[1:]
		for _, p := range u.Ports[1:] {
			if p == nil || p.Remote == nil || p.Remote.Node.Type != mad.NodeSwitch {
				continue
			}
			if _, ok := d[p.Remote.Node]; !ok {
				d[p.Remote.Node] = d[u] + 1
				q = append(q, p.Remote.Node)
			}
		}
	}
	return d
}

// checkBalance asserts that on every switch, the CA LIDs sent up
// (towards a node of a higher tier) are spread over the up ports with
// counts differing by at most one, and that parallel down links share
// their leaf's LIDs within one too.
func checkBalance(t *testing.T, f *fabric.Fabric, tier func(*fabric.Node) int) {
	t.Helper()
	for _, n := range f.Nodes {
		if n.Type != mad.NodeSwitch {
			continue
		}
		perPort := make([]int, len(n.Ports))
		for lid, out := range n.Switch.LFT.Bytes() {
			p := f.PortByLID(uint16(lid))
			if p == nil || p.Node.Type == mad.NodeSwitch || out == fabric.NoRoute {
				continue
			}
			perPort[out]++
		}
		group := map[string][]int{} // "up" or "down:<remote>"
		for i, p := range n.Ports[1:] {
			if p.Remote == nil || p.Remote.Node.Type != mad.NodeSwitch {
				continue
			}
			key := "down:" + p.Remote.Node.Description
			if tier(p.Remote.Node) > tier(n) {
				key = "up"
			}
			group[key] = append(group[key], perPort[i+1])
		}
		for k, cs := range group {
			lo, hi := cs[0], cs[0]
			for _, c := range cs {
				lo, hi = min(lo, c), max(hi, c)
			}
			if hi-lo > 1 {
				t.Errorf("%s %s ports carry %v CA LIDs: imbalanced", n.Description, k, cs)
			}
		}
	}
}

func tierByName(n *fabric.Node) int {
	switch {
	case strings.Contains(n.Description, "leaf"):
		return 1
	case strings.Contains(n.Description, "spine"):
		return 2
	case strings.Contains(n.Description, "core"):
		return 3
	}
	return 0
}

func TestAssignLIDs(t *testing.T) {
	f, err := FatTree2{Leaves: 3, Spines: 2, HostsPerLeaf: 4}.Build()
	if err != nil {
		t.Fatal(err)
	}
	// An uncabled HCA gets no LID.
	f.Nodes[len(f.Nodes)-1].Ports[1].Remote.Remote = nil
	f.Nodes[len(f.Nodes)-1].Ports[1].Remote = nil
	f.Nodes[len(f.Nodes)-1].Ports[1].State = mad.PortStateDown
	top, err := AssignLIDs(f)
	if err != nil {
		t.Fatal(err)
	}
	if top != 5+11 {
		t.Fatalf("top %d, want 16", top)
	}
	seen := map[uint16]bool{}
	for i, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil {
				continue
			}
			if n.Type == mad.NodeSwitch {
				if p.LID != uint16(i+1) {
					t.Fatalf("%s port %d LID %d, want %d", n.Description, p.Num, p.LID, i+1)
				}
				continue
			}
			if p.LID == 0 {
				if i != len(f.Nodes)-1 {
					t.Fatalf("%s has no LID", n.Description)
				}
				continue
			}
			if seen[p.LID] {
				t.Fatalf("LID %d twice", p.LID)
			}
			seen[p.LID] = true
		}
		if n.Type == mad.NodeSwitch {
			seen[uint16(i+1)] = true
		}
	}
	if f.PortByLID(6).Node.Description != "gpu001 mlx5_0" {
		t.Errorf("LID 6 is %s", f.PortByLID(6).Node.Description)
	}
}

func TestRouteFatTree2(t *testing.T) {
	for _, ft := range []FatTree2{
		{Leaves: 3, Spines: 2, HostsPerLeaf: 4, LinksPerPair: 2, Common: Common{SwitchPorts: 8}},
		{Leaves: 8, Spines: 4, HostsPerLeaf: 16, Common: Common{SwitchPorts: 32}},
		{Leaves: 6, Spines: 3, HostsPerLeaf: 18, LinksPerPair: 2, Common: Common{SwitchPorts: 36}}, // 3:1 oversubscribed
		{Leaves: 1, Spines: 0, HostsPerLeaf: 5},
	} {
		t.Run(fmt.Sprintf("%dx%dx%d", ft.Leaves, ft.Spines, ft.HostsPerLeaf), func(t *testing.T) {
			f, err := ft.Build()
			if err != nil {
				t.Fatal(err)
			}
			top := routed(t, f)
			checkRoutes(t, f, top)
			checkBalance(t, f, tierByName)
		})
	}
}

func TestRouteDownLink(t *testing.T) {
	f, err := FatTree2{Leaves: 3, Spines: 2, HostsPerLeaf: 4, Common: Common{SwitchPorts: 8}}.Build()
	if err != nil {
		t.Fatal(err)
	}
	// Take leaf01's link to spine01 down: nothing may route over it.
	leaf := f.NodesByName("leaf01")[0]
	up := leaf.Ports[5]
	up.State, up.Remote.State = mad.PortStateDown, mad.PortStateDown
	routed(t, f)
	for _, n := range f.Nodes {
		if n.Type != mad.NodeSwitch {
			continue
		}
		for lid, out := range n.Switch.LFT.Bytes() {
			if (n == leaf && out == 5) || (n == up.Remote.Node && out == up.Remote.Num) {
				t.Fatalf("%s routes LID %d over the down link", n.Description, lid)
			}
		}
	}
	// Every CA still reachable from every switch (spine01 via other leaves).
	for _, n := range f.Nodes {
		if n.Type != mad.NodeSwitch {
			continue
		}
		for _, c := range f.Nodes {
			if c.Type == mad.NodeCA {
				if _, err := walk(f, n, c.Ports[1].LID); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

func TestPortSetPick(t *testing.T) {
	cnt := []uint32{0, 5, 3, 3, 4}
	s := &portSet{ports: []uint8{1, 2, 3, 4}}
	var got []uint8
	for i := 0; i < 8; i++ {
		p := s.pick(cnt)
		got = append(got, p)
		cnt[p]++
		if i == 3 {
			cnt[2] += 10 // another set used port 2 meanwhile
		}
	}
	// naive: lowest port with the smallest count each time
	want := []uint8{2, 3, 2, 3, 4, 1, 3, 4}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("picked %v, want %v", got, want)
	}
}

func TestFatTree3(t *testing.T) {
	ft := FatTree3{Common: Common{SwitchPorts: 16}, Pods: 3, LeavesPerPod: 4, SpinesPerPod: 4, HostsPerLeaf: 4, Cores: 8, LinksSpineCore: 2}
	f, err := ft.Build()
	if err != nil {
		t.Fatal(err)
	}
	checkStructure(t, f, mad.Rate{Width: mad.Width4X, Speed: mad.SpeedNDR})
	sw, ca, links := count(f)
	// 12 leaves + 12 spines + 8 cores; 48 hosts; links: 48 host + 3·4·4 leaf-spine + 3·4·2·2 spine-core
	if sw != 32 || ca != 48 || links != 48+48+48 || len(f.Nodes) != ft.Nodes() {
		t.Fatalf("got %d switches, %d CAs, %d links", sw, ca, links)
	}
	// spine 6 (pod 2, index 1) reaches cores 3 and 4 of group 1, two links each.
	spine := f.NodesByName("spine06")[0]
	for p, want := range map[int]string{5: "core03", 6: "core03", 7: "core04", 8: "core04"} {
		if r := spine.Ports[p].Remote; r == nil || r.Node.Description != want || r.Num != uint8(2+1+(p-5)%2) {
			t.Errorf("spine06 port %d -> %v, want %s", p, r, want)
		}
	}
	top := routed(t, f)
	checkRoutes(t, f, top)
	checkBalance(t, f, tierByName)
	if _, err := (FatTree3{Pods: 2, LeavesPerPod: 2, SpinesPerPod: 3, Cores: 4}).Build(); err == nil {
		t.Error("cores not a multiple of spines accepted")
	}
}

func TestRailOptimized(t *testing.T) {
	r := RailOptimized{Common: Common{SwitchPorts: 32}, Servers: 20, ServersPerLeaf: 8, Spines: 8, LinksPerPair: 1}
	f, err := r.Build()
	if err != nil {
		t.Fatal(err)
	}
	checkStructure(t, f, mad.Rate{Width: mad.Width4X, Speed: mad.SpeedNDR})
	sw, ca, _ := count(f)
	if sw != 8+3*8 || ca != 160 {
		t.Fatalf("%d switches, %d CAs", sw, ca)
	}
	// Every HCA i of every server sits on a rail-i leaf: leaf (unit·8 + i + 1).
	for _, n := range f.Nodes {
		if n.Type != mad.NodeCA {
			continue
		}
		var srv, dev int
		fmt.Sscanf(n.Description, "gpu%d mlx5_%d", &srv, &dev)
		want := name("leaf", (srv-1)/8*8+dev+1, 24, 2)
		if got := n.Ports[1].Remote.Node.Description; got != want {
			t.Fatalf("%s on %s, want %s", n.Description, got, want)
		}
	}
	top := routed(t, f)
	checkRoutes(t, f, top)
	checkBalance(t, f, tierByName)
}

func TestDragonfly(t *testing.T) {
	d := Dragonfly{Common: Common{SwitchPorts: 16}, Groups: 5, SwitchesPerGroup: 4, HostsPerSwitch: 4, GlobalPerSwitch: 1}
	f, err := d.Build()
	if err != nil {
		t.Fatal(err)
	}
	checkStructure(t, f, mad.Rate{Width: mad.Width4X, Speed: mad.SpeedNDR})
	sw, ca, links := count(f)
	// 20 switches, 80 hosts; links: 80 + 5·6 local + 10 global
	if sw != 20 || ca != 80 || links != 80+30+10 {
		t.Fatalf("%d switches, %d CAs, %d links", sw, ca, links)
	}
	top := routed(t, f)
	checkRoutes(t, f, top)
	// Diameter 3 between switches: local, global, local.
	for _, n := range f.Nodes[:20] {
		for _, h := range bfs(n) {
			if h > 3 {
				t.Fatalf("%s: a switch %d hops away", n.Description, h)
			}
		}
	}
	if _, err := (Dragonfly{Groups: 10, SwitchesPerGroup: 2, GlobalPerSwitch: 1}).Build(); err == nil {
		t.Error("too few global ports accepted")
	}
}
