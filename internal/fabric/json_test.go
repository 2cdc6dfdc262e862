package fabric

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/mad"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// fullFabric sets every field of the model at least once: a switch with
// an LFT, a CA with two ports (one down), a router, unreachable entries,
// a duplicated GUID, an MTU code that is not an MTU.
func fullFabric() *Fabric {
	sw := &Node{Type: mad.NodeSwitch, GUID: 0xb83fd20300a10000, SystemImageGUID: 0xb83fd20300a10000,
		Description: "MF0;leaf01:MQM9700/U1", VendorID: 0x2c9, DeviceID: 0xd2f0, Revision: 0xa0, Path: mad.Path{1},
		Switch: &Switch{LinearFDBCap: 49152, LinearFDBTop: 5, MulticastCap: 4096, LIDsPerPort: 0, EnhancedPort0: true,
			LifeTimeValue: 18, DefaultPort: 0, PartitionCap: 8, MulticastTop: 0xc000,
			LFT: LFTFromBytes([]uint8{NoRoute, 1, 0, 2, 3, 1}, nil)}}
	sw.Ports = make([]*Port, 4)
	sw.Ports[0] = &Port{Node: sw, Num: 0, GUID: sw.GUID, LID: 2, State: mad.PortStateActive, PhysState: mad.PhysLinkUp,
		CapMask: 0x0250084a, CapMask2: 0x0004, MTUCap: mad.MTU4096}
	ca := &Node{Type: mad.NodeCA, GUID: 0x043f720300c10000, SystemImageGUID: 0x043f720300c10000,
		Description: "gpu001 mlx5_0", VendorID: 0x2c9, DeviceID: 0x101b, Revision: 0, Path: mad.Path{}}
	ca.Ports = make([]*Port, 3)
	ca.Ports[1] = &Port{Node: ca, Num: 1, GUID: 0x043f720300c10000, LID: 1, LMC: 2,
		State: mad.PortStateActive, PhysState: mad.PhysLinkUp,
		WidthActive: mad.Width4X, WidthEnabled: mad.Width1X | mad.Width4X, WidthSupported: mad.Width1X | mad.Width2X | mad.Width4X,
		SpeedActive: mad.SpeedNDR, SpeedEnabled: mad.SpeedSDR | mad.SpeedHDR | mad.SpeedNDR, SpeedSupported: 0x1ff,
		NeighborMTU: mad.MTU4096, MTUCap: mad.MTU4096, CapMask: 0x2651e848, CapMask2: 0x2}
	ca.Ports[2] = &Port{Node: ca, Num: 2, GUID: 0x043f720300c10001, State: mad.PortStateDown, PhysState: mad.PhysDisabled,
		NeighborMTU: mad.MTU(7)}
	sw.Ports[1] = &Port{Node: sw, Num: 1, GUID: sw.GUID, State: mad.PortStateActive, PhysState: mad.PhysLinkUp,
		WidthActive: mad.Width4X, WidthEnabled: mad.Width1X | mad.Width4X, WidthSupported: mad.Width1X | mad.Width2X | mad.Width4X,
		SpeedActive: mad.SpeedNDR, SpeedEnabled: mad.SpeedNDR, NeighborMTU: mad.MTU4096, MTUCap: mad.MTU4096}
	rt := &Node{Type: mad.NodeRouter, GUID: 0x1, SystemImageGUID: 0, Description: "rtr \"quoted\" <&>", Path: mad.Path{3}}
	rt.Ports = []*Port{nil, {Node: rt, Num: 1, GUID: 2, LID: 9, State: mad.PortStateArmed, PhysState: mad.PhysLinkUp,
		WidthActive: mad.Width1X, SpeedActive: mad.SpeedFDR10}}
	sw.Ports[3] = &Port{Node: sw, Num: 3, GUID: sw.GUID, State: mad.PortStateArmed, PhysState: mad.PhysLinkUp,
		WidthActive: mad.Width1X, SpeedActive: mad.SpeedFDR10}
	link := func(a, b *Port) { a.Remote, b.Remote = b, a }
	link(sw.Ports[1], ca.Ports[1])
	link(sw.Ports[3], rt.Ports[1])
	bare := &Node{Type: mad.NodeType(9), GUID: 0xdead}
	return &Fabric{
		Nodes: []*Node{ca, sw, rt, bare},
		Unreachable: []Unreachable{
			{Path: mad.Path{1, 2}, FromGUID: sw.GUID, FromPort: 2, What: "NodeInfo", Reason: "no response after 3 attempts"},
			{Path: nil, What: "PortInfo 5", Reason: "MAD status 0x001c"},
		},
		DuplicateGUIDs: []DuplicateGUID{{GUID: 0x1234, Paths: []mad.Path{{1, 4}, {1, 5}}, Descs: []string{"a", "b"}}},
	}
}

func TestJSONRoundTripGolden(t *testing.T) {
	f := fullFabric()
	b, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "full.json")
	if *update {
		if err := os.WriteFile(golden, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	diffText(t, "golden", string(want), string(b))
	g, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	diffText(t, "round trip", dump(f), dump(g))
	b2, err := Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, b2) {
		t.Fatal("second Marshal differs from the first")
	}
}

func TestJSONRoundTripFixture(t *testing.T) {
	for _, name := range []string{"hdr.txt", "qdr.txt"} {
		f := parseFixture(t, name)
		b, err := MarshalWith(f, MarshalOptions{})
		if err != nil {
			t.Fatal(err)
		}
		g, err := Unmarshal(b)
		if err != nil {
			t.Fatal(err)
		}
		diffText(t, name, dump(f), dump(g))
		if g.PortByLID(5) == nil || g.NodeByGUID(0x2c90200400000) == nil && name == "qdr.txt" {
			t.Error("lookups fail after Unmarshal")
		}
	}
}

func TestJSONOmitLFT(t *testing.T) {
	b, err := MarshalWith(fullFabric(), MarshalOptions{OmitLFT: true})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(`"lft"`)) {
		t.Fatal("lft written with OmitLFT")
	}
	g, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if g.Nodes[1].Switch.LFT != nil {
		t.Fatal("LFT decoded from nothing")
	}
}

// Hand-written documents may give only the operator strings.
func TestJSONStringsOnly(t *testing.T) {
	doc := `{"schema":"ibdoctor.fabric/v1","nodes":[
 {"type":"switch","guid":"0x10","system_image_guid":"0x0","description":"sw","vendor_id":"0x2c9","device_id":"0xd2f0","revision":"0","num_ports":2,
  "ports":[{"num":1,"guid":"0x10","lid":0,"state":"Active","phys_state":"LinkUp","width":{"active":"1X","enabled":"1X,4X"},"speed":{"active":"NDR","enabled":"HDR,NDR"}}]},
 {"type":"ca","guid":"0x20","system_image_guid":"0x20","description":"h","vendor_id":"0x2c9","device_id":"0x101b","revision":"0x0","num_ports":1,
  "ports":[{"num":1,"guid":"0x21","lid":4,"state":"Active","phys_state":"LinkUp","neighbor_mtu":4096}]}],
 "links":[{"a":{"node":0,"port":1},"b":{"node":1,"guid":"0x20","port":1}}]}`
	f, err := Unmarshal([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	p := f.Nodes[0].Ports[1]
	if p.WidthActive != mad.Width1X || p.WidthEnabled != mad.Width1X|mad.Width4X || p.SpeedActive != mad.SpeedNDR ||
		p.SpeedEnabled != mad.SpeedHDR|mad.SpeedNDR || p.Remote != f.Nodes[1].Ports[1] || f.Nodes[1].Ports[1].NeighborMTU != mad.MTU4096 {
		t.Fatalf("port = %+v", p)
	}
}

func TestJSONErrors(t *testing.T) {
	good, err := Marshal(fullFabric())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, old, new, want string }{
		{"schema", `"ibdoctor.fabric/v1"`, `"ibdoctor.fabric/v9"`, `schema "ibdoctor.fabric/v9"`},
		{"guid", `"guid": "0x043f720300c10000",`, `"guid": "43f720300c10000",`, "0x-prefixed"},
		{"link port", `"port": 3`, `"port": 2`, "no port 2"},
		{"link guid", `"guid": "0x0000000000000001",
        "port": 1`, `"guid": "0x0000000000000005",
        "port": 1`, "link says"},
		{"state", `"state": "Armed"`, `"state": "Bogus"`, `state "Bogus"`},
		{"mtu", `"mtu_cap": 4096`, `"mtu_cap": 4000`, "MTU 4000"},
		{"lft", `"lft": "ff01`, `"lft": "zz01`, "lft"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := strings.Replace(string(good), c.old, c.new, 1)
			if in == string(good) {
				t.Fatalf("test edit %q not found", c.old)
			}
			_, err := Unmarshal([]byte(in))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}

// TestJSONUnknownFieldsIgnored: v1 may gain fields; an older reader skips
// them rather than refusing a newer file.
func TestJSONUnknownFieldsIgnored(t *testing.T) {
	good, err := os.ReadFile("testdata/full.json")
	if err != nil {
		t.Fatal(err)
	}
	in := strings.Replace(string(good), `"lmc": 2`, `"lmc": 2, "future_field": 7`, 1)
	if in == string(good) {
		t.Fatal("test edit not found")
	}
	if _, err := Unmarshal([]byte(in)); err != nil {
		t.Fatalf("unknown field rejected: %v", err)
	}
}

func FuzzUnmarshal(f *testing.F) {
	good, err := Marshal(fullFabric())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"schema":"ibdoctor.fabric/v1","nodes":[],"links":[]}`))
	rec, err := Marshal(fullFabricRecorded())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(rec)
	f.Add([]byte(`{"schema":"ibdoctor.fabric/v1","recorded":["sm_info","pkeys"],"sms":[],"nodes":[{"type":"ca","guid":"0x1","system_image_guid":"0x1","description":"h","vendor_id":"0x0","device_id":"0x0","revision":"0x0","num_ports":1,"ports":[{"num":1,"guid":"0x1","lid":3,"state":"Active","phys_state":"LinkUp","master_sm_lid":3,"pkey_enforce":["in"],"pkeys":["0xffff","0x0000"]}]}],"links":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		fab, err := Unmarshal(b)
		if err != nil {
			return
		}
		out, err := Marshal(fab)
		if err != nil {
			t.Fatal(err)
		}
		// An input the document does not list as recorded has no field
		// written: no value without a source.
		for _, x := range recordedNames {
			if *x.on(&fab.Recorded) {
				continue
			}
			for _, field := range strings.Split(x.fields, ", ") {
				if bytes.Contains(out, []byte(`"`+field+`"`)) {
					t.Fatalf("%s written, but %s is not recorded", field, x.name)
				}
			}
		}
		if !fab.Recorded.SMInfo && (fab.SMs != nil || bytes.Contains(out, []byte(`"sms"`))) {
			t.Fatal("subnet managers without sm_info recorded")
		}
		g, err := Unmarshal(out)
		if err != nil {
			t.Fatalf("re-unmarshal: %v", err)
		}
		if dump(fab) != dump(g) {
			t.Fatal("not stable")
		}
	})
}

// TestHex64: hex64 is fmt's "0x%016x".
func TestHex64(t *testing.T) {
	for _, v := range []uint64{0, 1, 0xf, 0x10, 0xb83fd20300000001, 0xdeadbeef, 1<<63 | 5, ^uint64(0)} {
		if got, want := hex64(v), fmt.Sprintf("0x%016x", v); got != want {
			t.Errorf("hex64(%#x) = %q, want %q", v, got, want)
		}
	}
}
