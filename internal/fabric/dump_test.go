package fabric

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// dump prints every field of the model in a fixed order, so two fabrics
// can be compared as text and a difference shows as a readable diff.
func dump(f *Fabric) string {
	var b strings.Builder
	for _, n := range f.Nodes {
		fmt.Fprintf(&b, "node %v guid=%#x sys=%#x desc=%q ven=%#x dev=%#x rev=%#x ports=%d path=%s\n",
			n.Type, n.GUID, n.SystemImageGUID, n.Description, n.VendorID, n.DeviceID, n.Revision, n.NumPorts(), pathString(n))
		if s := n.Switch; s != nil {
			fmt.Fprintf(&b, "  switch %+v lft=%x\n", struct {
				A, B, C, D uint16
				E          bool
				F, G       uint8
				H, I       uint16
			}{s.LinearFDBCap, s.LinearFDBTop, s.MulticastCap, s.LIDsPerPort, s.EnhancedPort0, s.LifeTimeValue, s.DefaultPort, s.PartitionCap, s.MulticastTop}, s.LFT.Bytes())
		}
		for i, p := range n.Ports {
			if p == nil {
				continue
			}
			if int(p.Num) != i || p.Node != n {
				fmt.Fprintf(&b, "  BAD port index %d num %d\n", i, p.Num)
			}
			peer := "-"
			if p.Remote != nil {
				peer = fmt.Sprintf("%#x[%d]", p.Remote.Node.GUID, p.Remote.Num)
				if p.Remote.Remote != p {
					peer += " NOT-RECIPROCAL"
				}
			}
			fmt.Fprintf(&b, "  [%d] guid=%#x lid=%d lmc=%d %v/%v w=%v/%v/%v s=%v/%v/%v mtu=%v/%v cap=%#x/%#x -> %s\n",
				p.Num, p.GUID, p.LID, p.LMC, p.State, p.PhysState,
				p.WidthActive, p.WidthEnabled, p.WidthSupported, p.SpeedActive, p.SpeedEnabled, p.SpeedSupported,
				p.NeighborMTU, p.MTUCap, p.CapMask, p.CapMask2, peer)
			if r := f.Recorded; r != (Recorded{}) {
				// Only the recorded inputs' fields are data.
				fmt.Fprintf(&b, "      recorded")
				if r.SMInfo {
					fmt.Fprintf(&b, " msm=%d", p.MasterSMLID)
				}
				if r.VLs {
					fmt.Fprintf(&b, " vls=%d/%d", p.VLCap, p.OperVLs)
				}
				if r.MKey {
					fmt.Fprintf(&b, " mkey=%d/%d", p.MKeyProtect, p.MKeyLease)
				}
				if r.PKeys {
					fmt.Fprintf(&b, " enforce=%d pkeys=%v", p.PKeyEnforce, f.PKeys[p])
				}
				b.WriteString("\n")
			}
		}
	}
	if f.Recorded != (Recorded{}) {
		fmt.Fprintf(&b, "recorded %+v sms-nil=%v\n", f.Recorded, f.SMs == nil)
	}
	for _, r := range f.SMs {
		fmt.Fprintf(&b, "sm %#x[%d] guid=%#x %v pri=%d act=%d\n", r.Port.Node.GUID, r.Port.Num, r.GUID, r.State, r.Priority, r.ActCount)
	}
	for _, u := range f.Unreachable {
		fmt.Fprintf(&b, "unreachable %s from %#x[%d] %q %q\n", u.Path, u.FromGUID, u.FromPort, u.What, u.Reason)
	}
	for _, d := range f.DuplicateGUIDs {
		fmt.Fprintf(&b, "dup %#x %v %q\n", d.GUID, d.Paths, d.Descs)
	}
	return b.String()
}

func pathString(n *Node) string {
	if n.Path == nil {
		return "nil"
	}
	return n.Path.String()
}

// topo is the part of a fabric that survives every codec and the
// simulator: node identity and the cables with their active rates.
func topo(f *Fabric) string {
	var lines []string
	for _, n := range f.Nodes {
		lines = append(lines, fmt.Sprintf("node %v %#x %q ports=%d", n.Type, n.GUID, n.Description, n.NumPorts()))
	}
	for _, l := range f.Links() {
		lines = append(lines, fmt.Sprintf("link %#x[%d] %v %v <-> %#x[%d] %v %v", l.A.Node.GUID, l.A.Num, l.A.WidthActive, l.A.SpeedActive,
			l.B.Node.GUID, l.B.Num, l.B.WidthActive, l.B.SpeedActive))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

func diffText(t *testing.T, what, want, got string) {
	t.Helper()
	if want == got {
		return
	}
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			t.Fatalf("%s differ at line %d:\nwant: %s\ngot:  %s", what, i+1, w, g)
		}
	}
}
