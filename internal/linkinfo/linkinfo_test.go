package linkinfo

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/mad"
)

// small builds a 4X NDR fat tree: 2 leaves, 2 spines, 2 hosts per leaf
// (every port enables and supports up to 4X NDR).
func small(t *testing.T) *fabric.Fabric {
	t.Helper()
	f, err := topology.FatTree2{Common: topology.Common{SwitchPorts: 8}, Leaves: 2, Spines: 2, HostsPerLeaf: 2}.Build()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := topology.AssignLIDs(f); err != nil {
		t.Fatal(err)
	}
	return f
}

func port(t *testing.T, f *fabric.Fabric, name string, num uint8) *fabric.Port {
	t.Helper()
	ns := f.NodesByName(name)
	if len(ns) != 1 {
		t.Fatalf("%q: %d nodes", name, len(ns))
	}
	return ns[0].Ports[num]
}

func rowOf(rows []Row, p *fabric.Port) *Row {
	for i := range rows {
		if rows[i].A == p || rows[i].B == p {
			return &rows[i]
		}
	}
	return nil
}

func marked(rows []Row) []string {
	var out []string
	for _, r := range rows {
		if r.Degraded() {
			out = append(out, r.A.Node.Description+": "+strings.Join(r.Reasons, "; "))
		}
	}
	return out
}

func TestRowsHealthy(t *testing.T) {
	f := small(t)
	rows := Rows(f, Options{})
	// 4 host links + 4 leaf-spine links.
	if len(rows) != 8 {
		t.Fatalf("%d rows", len(rows))
	}
	if m := marked(rows); m != nil {
		t.Errorf("healthy fabric marked: %v", m)
	}
	for _, r := range rows {
		if r.B == nil || r.A.Remote != r.B {
			t.Errorf("row %+v: ends do not point at each other", r)
		}
		if r.B.Node.Type == mad.NodeSwitch && r.A.Node.Type != mad.NodeSwitch {
			t.Errorf("host link not listed from the switch: %s - %s", r.A.Node.Description, r.B.Node.Description)
		}
		if r.Rate != (mad.Rate{Width: mad.Width4X, Speed: mad.SpeedNDR}) || r.Enabled != r.Rate {
			t.Errorf("%s[%d]: rate %v enabled %v", r.A.Node.Description, r.A.Num, r.Rate, r.Enabled)
		}
	}
	// Rows go by node name, not discovery order (TestRowsNaturalOrder).
	if !slices.IsSortedFunc(rows, func(x, y Row) int { return strings.Compare(x.A.Node.Description, y.A.Node.Description) }) {
		t.Errorf("rows out of name order: %v", rows)
	}
	// A switch's LID is port 0's on every port; a CA port's is its own.
	for _, r := range rows {
		if r.A.Node.Type == mad.NodeSwitch && LID(r.A) != r.A.Node.Ports[0].LID {
			t.Errorf("switch %s LID %d", r.A.Node.Description, LID(r.A))
		}
		if r.B.Node.Type == mad.NodeCA && (LID(r.B) != r.B.LID || r.B.LID == 0) {
			t.Errorf("CA %s LID %d", r.B.Node.Description, LID(r.B))
		}
	}
}

func TestRowsMarkBelowEnabled(t *testing.T) {
	f := small(t)
	// A cable with a bad lane: both ends trained 1X, both enable 4X.
	w := port(t, f, "leaf01", 1)
	w.WidthActive, w.Remote.WidthActive = mad.Width1X, mad.Width1X
	// A marginal uplink: HDR while both enable NDR.
	s := port(t, f, "leaf02", 3)
	s.SpeedActive, s.Remote.SpeedActive = mad.SpeedHDR, mad.SpeedHDR
	// ibsim's case: an end supports NDR but enables only up to HDR; the
	// link runs HDR. Marked all the same: both devices are NDR chips (a
	// port limited on purpose needs --expect-rate).
	h := port(t, f, "leaf02", 1)
	h.SpeedActive, h.Remote.SpeedActive = mad.SpeedHDR, mad.SpeedHDR
	h.Remote.SpeedEnabled = mad.SpeedSDR | mad.SpeedHDR
	rows := Rows(f, Options{})
	if r := rowOf(rows, w); r == nil || !slices.Equal(r.Reasons, []string{"width 1X, expected 4X: the best both ends have enabled"}) || r.A != w {
		t.Errorf("1X link: %+v", r)
	}
	if r := rowOf(rows, s); r == nil || !slices.Equal(r.Reasons, []string{"speed HDR, expected NDR: the best both ends have enabled"}) {
		t.Errorf("HDR uplink: %+v", r)
	}
	if r := rowOf(rows, h); r == nil || !slices.Equal(r.Reasons, []string{"speed HDR, expected NDR: ConnectX-7 runs 4X NDR, Quantum-2 4X NDR"}) || r.Enabled != (mad.Rate{Width: mad.Width4X, Speed: mad.SpeedHDR}) {
		t.Errorf("link at what both ends enable, below its peers: %+v", r)
	}
	if m := marked(rows); len(m) != 3 {
		t.Errorf("marked: %v", m)
	}
	// Supported masks never mark a link on their own.
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil {
				p.WidthSupported, p.SpeedSupported = 0xff, 0x1ff
			}
		}
	}
	if m := marked(Rows(f, Options{})); len(m) != 3 {
		t.Errorf("with everything supported, marked: %v", m)
	}
}

func TestRowsExpectRate(t *testing.T) {
	f := small(t)
	h := port(t, f, "leaf02", 1)
	h.SpeedActive, h.Remote.SpeedActive = mad.SpeedHDR, mad.SpeedHDR
	h.SpeedEnabled, h.Remote.SpeedEnabled = mad.SpeedHDR, mad.SpeedHDR
	ndr := mad.Rate{Width: mad.Width4X, Speed: mad.SpeedNDR}
	hdr := mad.Rate{Width: mad.Width4X, Speed: mad.SpeedHDR}
	rows := Rows(f, Options{Expect: []mad.Rate{ndr}})
	if r := rowOf(rows, h); r == nil || !slices.Equal(r.Reasons, []string{"speed HDR, expected NDR: the expected rate 4X NDR"}) {
		t.Errorf("HDR link against 4xNDR: %+v", r)
	}
	if m := marked(rows); len(m) != 1 {
		t.Errorf("marked: %v", m)
	}
	if m := marked(Rows(f, Options{Expect: []mad.Rate{hdr, ndr}})); m != nil {
		t.Errorf("4xHDR,4xNDR accepted both, yet marked: %v", m)
	}
	// 2X NDR carries as much as 4X HDR: acceptable against a 4X HDR bar.
	h.SpeedActive, h.Remote.SpeedActive = mad.SpeedNDR, mad.SpeedNDR
	h.WidthActive, h.Remote.WidthActive = mad.Width2X, mad.Width2X
	if m := marked(Rows(f, Options{Expect: []mad.Rate{hdr}})); m != nil {
		t.Errorf("2X NDR judged below 4X HDR: %v", m)
	}
	h.WidthActive, h.Remote.WidthActive = mad.Width1X, mad.Width1X
	if r := rowOf(Rows(f, Options{Expect: []mad.Rate{ndr, hdr}}), h); r == nil || !slices.Equal(r.Reasons, []string{"width 1X, expected 4X: the expected rate 4X HDR"}) {
		t.Errorf("1X NDR against 4xNDR,4xHDR: %+v", r)
	}
}

func TestRowsUnreachedAndDown(t *testing.T) {
	f := small(t)
	// The far end of leaf01[1] was not reached: the port is up, Remote nil.
	p := port(t, f, "leaf01", 1)
	host := p.Remote
	p.Remote, host.Remote = nil, nil
	// leaf02[1]'s cable is unplugged: both ends down.
	d := port(t, f, "leaf02", 1)
	for _, q := range []*fabric.Port{d, d.Remote} {
		q.State, q.PhysState = mad.PortStateDown, mad.PhysPolling
	}
	d.Remote.Remote, d.Remote = nil, nil
	rows := Rows(f, Options{Expect: []mad.Rate{{Width: mad.Width4X, Speed: mad.SpeedNDR}}})
	// 2 host links left and 4 uplinks; the unreached cable once from
	// each side (both are up and neither knows the other); the down
	// cable not at all.
	if len(rows) != 2+4+2 {
		for _, r := range rows {
			t.Logf("%s[%d] - %v", r.A.Node.Description, r.A.Num, r.B)
		}
		t.Fatalf("%d rows", len(rows))
	}
	r := rowOf(rows, p)
	if r == nil || r.B != nil || r.Degraded() {
		t.Errorf("unreached far end: %+v", r)
	}
	if rowOf(rows, host) == nil {
		t.Error("the host's own up port is not listed")
	}
	if rowOf(rows, d) != nil {
		t.Error("a down port is listed as a link")
	}
}

// TestRowsLoopback: a cable from spine01's port 7 to its port 8 is one row
// noted Loopback (checks' link.loopback), not marked below its rate; the
// other rows are not loopbacks.
func TestRowsLoopback(t *testing.T) {
	f := small(t)
	a, b := port(t, f, "spine01", 7), port(t, f, "spine01", 8)
	a.Remote, b.Remote = b, a
	for _, p := range []*fabric.Port{a, b} {
		p.State, p.PhysState = mad.PortStateActive, mad.PhysLinkUp
		p.WidthActive, p.SpeedActive = mad.Width4X, mad.SpeedNDR
	}
	rows := Rows(f, Options{})
	if len(rows) != 9 {
		t.Fatalf("%d rows, want 8 links and the loopback", len(rows))
	}
	n := 0
	for _, r := range rows {
		if !r.Loopback {
			continue
		}
		n++
		if r.A.Node != r.B.Node || r.Degraded() {
			t.Errorf("loopback row %s[%d]-%s[%d] degraded %v", r.A.Node.Description, r.A.Num, r.B.Node.Description, r.B.Num, r.Degraded())
		}
	}
	if n != 1 {
		t.Errorf("%d loopback rows, want 1", n)
	}
}

// TestRowsNaturalOrder: rows go by the A end's node description with
// numbers compared as numbers (leaf2 before leaf10), then by port; not
// in discovery order.
func TestRowsNaturalOrder(t *testing.T) {
	f, err := topology.FatTree2{Common: topology.Common{SwitchPorts: 8}, Leaves: 3, Spines: 2, HostsPerLeaf: 2}.Build()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{"leaf01": "leaf10", "leaf02": "leaf2", "leaf03": "leaf9", "spine01": "core1", "spine02": "core0"}
	for _, n := range f.Nodes {
		if to, ok := names[n.Description]; ok {
			n.Description = to
		}
	}
	var got []string
	for _, r := range Rows(f, Options{}) {
		if s := fmt.Sprintf("%s/%d", r.A.Node.Description, r.A.Num); len(got) == 0 || got[len(got)-1] != s {
			got = append(got, s)
		}
	}
	want := []string{"core0/1", "core0/2", "core0/3", "core1/1", "core1/2", "core1/3",
		"leaf2/1", "leaf2/2", "leaf9/1", "leaf9/2", "leaf10/1", "leaf10/2"}
	if !slices.Equal(got, want) {
		t.Errorf("rows\n%q\nwant\n%q", got, want)
	}
}
