package layout

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/mad"
)

func build(t *testing.T, b interface {
	Build() (*fabric.Fabric, error)
}) *fabric.Fabric {
	t.Helper()
	f, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func sample(t *testing.T) *fabric.Fabric {
	t.Helper()
	f, _, err := sim.SampleFabric()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// fabrics are the shapes the geometry must hold for.
func fabrics(t *testing.T) map[string]*fabric.Fabric {
	return map[string]*fabric.Fabric{
		"sample":   sample(t),
		"fattree2": build(t, topology.FatTree2{Common: topology.Common{SwitchPorts: 8}, Leaves: 4, Spines: 4, HostsPerLeaf: 4}),
		"fattree3": build(t, topology.FatTree3{Common: topology.Common{SwitchPorts: 8}, Pods: 3, LeavesPerPod: 2, SpinesPerPod: 2, HostsPerLeaf: 2, Cores: 4, LinksLeafSpine: 2}),
		"rail":     build(t, topology.RailOptimized{Common: topology.Common{SwitchPorts: 16}, Servers: 8, Spines: 4}),
		"dragonfly": build(t, topology.Dragonfly{Common: topology.Common{SwitchPorts: 16},
			Groups: 3, SwitchesPerGroup: 3, HostsPerSwitch: 2, GlobalPerSwitch: 1}),
	}
}

// checkGeometry asserts what every drawing must satisfy: boxes of a row
// do not overlap and lie inside the drawing; every cable is drawn exactly
// once, in the bundle between the boxes of its two ends (or inside the
// one box holding both ends); every node is in a box.
func checkGeometry(t *testing.T, f *fabric.Fabric, d *Drawing) {
	t.Helper()
	byRow := map[int][]int{}
	for i, b := range d.Boxes {
		byRow[b.Row] = append(byRow[b.Row], i)
		if b.X < 0 || b.Y < 0 || b.X+b.W > d.Width+1e-9 || b.Y+b.H > d.Height+1e-9 {
			t.Errorf("box %q at (%.1f,%.1f) %gx%g outside the %gx%g drawing", b.Label, b.X, b.Y, b.W, b.H, d.Width, d.Height)
		}
		if b.Row+1 < len(d.Rows) && (b.Y < d.Rows[b.Row].Y || b.Y+b.H > d.Rows[b.Row+1].Y) {
			t.Errorf("box %q at y %.1f-%.1f, outside its row %.1f-%.1f", b.Label, b.Y, b.Y+b.H, d.Rows[b.Row].Y, d.Rows[b.Row+1].Y)
		}
	}
	for r, ids := range byRow {
		for x, i := range ids {
			for _, j := range ids[x+1:] {
				a, b := d.Boxes[i], d.Boxes[j]
				if a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H {
					t.Errorf("row %d (%s): boxes %q [%.1f,%.1f] and %q [%.1f,%.1f] overlap", r, d.Rows[r].Label, a.Label, a.X, a.X+a.W, b.Label, b.X, b.X+b.W)
				}
			}
		}
	}
	drawn := map[*fabric.Port]int{}
	pairs := map[[2]int]bool{}
	for bi, b := range d.Bundles {
		if pairs[[2]int{b.A, b.B}] || pairs[[2]int{b.B, b.A}] {
			t.Errorf("two bundles between boxes %d and %d", b.A, b.B)
		}
		pairs[[2]int{b.A, b.B}] = true
		if len(b.Cables) == 0 {
			t.Errorf("bundle %d has no cables", bi)
		}
		for _, l := range b.Cables {
			drawn[l.A]++
			ends := [2]int{d.BoxOf(l.A.Node), d.BoxOf(l.B.Node)}
			if ends != [2]int{b.A, b.B} && ends != [2]int{b.B, b.A} {
				t.Errorf("cable %s/%d-%s/%d in the bundle between boxes %d and %d, its ends are in %v", l.A.Node.Description, l.A.Num, l.B.Node.Description, l.B.Num, b.A, b.B, ends)
			}
			if d.BundleOf(l.A) != bi || d.BundleOf(l.B) != bi {
				t.Errorf("BundleOf disagrees for cable %s/%d", l.A.Node.Description, l.A.Num)
			}
		}
	}
	for bi, b := range d.Boxes {
		for _, l := range b.Internal {
			drawn[l.A]++
			if d.BoxOf(l.A.Node) != bi || d.BoxOf(l.B.Node) != bi {
				t.Errorf("cable %s/%d inside box %q has an end elsewhere", l.A.Node.Description, l.A.Num, b.Label)
			}
		}
	}
	for _, l := range f.Links() {
		if drawn[l.A] != 1 && drawn[l.B] != 1 || drawn[l.A]+drawn[l.B] != 1 {
			t.Errorf("cable %s/%d-%s/%d drawn %d times", l.A.Node.Description, l.A.Num, l.B.Node.Description, l.B.Num, drawn[l.A]+drawn[l.B])
		}
	}
	for _, n := range f.Nodes {
		if d.BoxOf(n) < 0 {
			t.Errorf("node %s is in no box", n.Description)
		}
	}
}

func TestGeometry(t *testing.T) {
	for name, f := range fabrics(t) {
		t.Run(name, func(t *testing.T) {
			checkGeometry(t, f, Build(f, Options{}))
		})
		t.Run(name+"/by-pod", func(t *testing.T) {
			checkGeometry(t, f, Build(f, Options{PodAbove: 1}))
		})
	}
}

// TestSampleRows: the sample fabric's 4 spines sit in a row above its 8
// leaves, each leaf's 4 hosts (32 HCAs: before, labelled "32 hosts") in
// one box centred under it, and each
// leaf-spine pair's 8 cables in one bundle.
func TestSampleRows(t *testing.T) {
	f := sample(t)
	d := Build(f, Options{})
	var labels []string
	for _, r := range d.Rows {
		labels = append(labels, r.Label)
	}
	if fmt.Sprint(labels) != "[spine leaf hosts]" {
		t.Fatalf("rows %v, want [spine leaf hosts]", labels)
	}
	count := map[string]int{}
	for _, b := range d.Boxes {
		count[d.Rows[b.Row].Label]++
		if b.Kind == Hosts {
			if b.Label != "4 hosts" || len(b.Members) != 32 {
				t.Errorf("hosts box %q has %d members, want 4 hosts of 32 HCAs", b.Label, len(b.Members))
			}
			u := d.Boxes[b.Under]
			if math.Abs((b.X+b.W/2)-(u.X+u.W/2)) > 1e-9 {
				t.Errorf("hosts box of %s not centred under it", u.Label)
			}
		}
	}
	if count["spine"] != 4 || count["leaf"] != 8 || count["hosts"] != 8 {
		t.Errorf("boxes per row %v, want 4 spines, 8 leaves, 8 hosts boxes", count)
	}
	// Leaves in name order from the left.
	prev := -1.0
	for i := 1; i <= 8; i++ {
		b := d.Boxes[d.BoxOf(f.NodesByName(fmt.Sprintf("leaf%02d", i))[0])]
		if b.X <= prev {
			t.Errorf("leaf%02d at x %.1f, left of leaf%02d", i, b.X, i-1)
		}
		prev = b.X
	}
	sw := 0
	for _, b := range d.Bundles {
		if d.Boxes[b.A].Kind == Switch && d.Boxes[b.B].Kind == Switch {
			sw++
			if len(b.Cables) != 8 {
				t.Errorf("bundle %s-%s has %d cables, want 8", d.Boxes[b.A].Label, d.Boxes[b.B].Label, len(b.Cables))
			}
		}
	}
	if sw != 32 {
		t.Errorf("%d switch bundles, want 32 (8 leaves x 4 spines)", sw)
	}
}

// TestPods: a 3-level fat tree is drawn core over spine over leaf with its
// pods' extents; above the switch limit each pod is one box whose
// leaf-spine cables are inside it, and the pod-core cables are bundled.
func TestPods(t *testing.T) {
	f := build(t, topology.FatTree3{Common: topology.Common{SwitchPorts: 8}, Pods: 3, LeavesPerPod: 2, SpinesPerPod: 2, HostsPerLeaf: 2, Cores: 4})
	d := Build(f, Options{})
	if len(d.Rows) != 4 || d.Rows[0].Label != "core" || d.Rows[1].Label != "spine" {
		t.Fatalf("rows %+v", d.Rows)
	}
	if len(d.Groups) != 3 {
		t.Fatalf("%d pods, want 3", len(d.Groups))
	}
	for g := 1; g < 3; g++ {
		if d.Groups[g].X < d.Groups[g-1].X+d.Groups[g-1].W {
			t.Errorf("pod %d [%.0f+%.0f] overlaps pod %d [%.0f+%.0f]", g+1, d.Groups[g].X, d.Groups[g].W, g, d.Groups[g-1].X, d.Groups[g-1].W)
		}
	}
	p := Build(f, Options{PodAbove: 1})
	if !p.ByPod {
		t.Fatal("not drawn by pod")
	}
	pods, cores := 0, 0
	for _, b := range p.Boxes {
		switch b.Kind {
		case Pod:
			pods++
			if len(b.Switches) != 4 || len(b.Internal) != 4 {
				t.Errorf("pod %q: %d switches, %d internal cables; want 4 and 4", b.Label, len(b.Switches), len(b.Internal))
			}
		case Switch:
			cores++
		}
	}
	if pods != 3 || cores != 4 {
		t.Errorf("%d pods and %d cores, want 3 and 4", pods, cores)
	}
}

// TestAggregationNodeWithItsSwitch: a SHARP Aggregation Node cabled to a
// spine is drawn inside the spine's box, not as a host box under it.
func TestAggregationNodeWithItsSwitch(t *testing.T) {
	f := build(t, topology.FatTree2{Common: topology.Common{SwitchPorts: 8}, Leaves: 2, Spines: 2, HostsPerLeaf: 2})
	spine := f.NodesByName("spine01")[0]
	an := &fabric.Node{Type: mad.NodeCA, GUID: 0xa1, Description: "Mellanox Technologies Aggregation Node"}
	an.Ports = []*fabric.Port{nil, {Node: an, Num: 1, State: mad.PortStateActive, PhysState: mad.PhysLinkUp}}
	sp := spine.Ports[len(spine.Ports)-1]
	sp.State, sp.PhysState = mad.PortStateActive, mad.PhysLinkUp
	sp.Remote, an.Ports[1].Remote = an.Ports[1], sp
	f.Nodes = append(f.Nodes, an)
	f.Reindex()
	d := Build(f, Options{})
	checkGeometry(t, f, d)
	if d.BoxOf(an) != d.BoxOf(spine) {
		t.Errorf("the Aggregation Node is drawn in box %d, its spine in %d", d.BoxOf(an), d.BoxOf(spine))
	}
	if b := d.Boxes[d.BoxOf(spine)]; b.Others != 1 {
		t.Errorf("spine box counts %d built-in CAs, want 1", b.Others)
	}
}

// TestWrapWideRow: drawn by pod, a fabric with far more cores than pods
// wraps its core row onto lines (at least 16 boxes wide); its boxes still
// do not overlap, and the sample's rows do not wrap.
func TestWrapWideRow(t *testing.T) {
	f := build(t, topology.FatTree3{Common: topology.Common{SwitchPorts: 48}, Pods: 2, LeavesPerPod: 2, SpinesPerPod: 2, HostsPerLeaf: 2, Cores: 80})
	d := Build(f, Options{PodAbove: 1})
	checkGeometry(t, f, d)
	ys := map[float64]int{}
	for _, b := range d.Boxes {
		if b.Kind == Switch {
			ys[b.Y]++
		}
	}
	if len(ys) != 5 {
		t.Errorf("80 cores on %d lines, want 5 of 16: %v", len(ys), ys)
	}
	if want := 2*Margin + 16*(d.BoxW+Gap) - Gap; d.Width != want {
		t.Errorf("width %.0f, want %.0f (16 boxes)", d.Width, want)
	}
	s := Build(sample(t), Options{})
	if want := 2*Margin + 8*(s.BoxW+Gap) - Gap; s.Width != want {
		t.Errorf("sample drawing %.0f wide, want %.0f (8 leaves)", s.Width, want)
	}
}

// TestHostsBoxHostCase: a host's adapters spelled in two cases
// ("gpu001 mlx5_0", "GPU001 mlx5_1") are one host, as topology.missing-hca
// and the gates match host names (fabric.HostKey, review R6b): the box
// still says "4 hosts" (before, 5).
func TestHostsBoxHostCase(t *testing.T) {
	f := sample(t)
	renamed := 0
	for _, n := range f.Nodes {
		if h, dev, ok := strings.Cut(n.Description, " "); ok && strings.HasSuffix(dev, "_1") {
			n.Description = strings.ToUpper(h) + " " + dev
			renamed++
		}
	}
	if renamed == 0 {
		t.Fatal("no adapter renamed")
	}
	for _, b := range Build(f, Options{}).Boxes {
		if b.Kind == Hosts && b.Label != "4 hosts" {
			t.Errorf("hosts box %q, want 4 hosts", b.Label)
		}
	}
}
