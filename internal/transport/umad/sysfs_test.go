package umad

import (
	"errors"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/mad"
)

func TestEnumerateFixtures(t *testing.T) {
	tests := []struct {
		root string
		want []CA
	}{
		{
			root: "ib2port",
			want: []CA{{
				Name: "mlx5_0", NodeType: mad.NodeCA,
				NodeGUID: 0x0002c90300a1b2c2, SysImageGUID: 0x0002c90300a1b2c2,
				NodeDesc: "gpu-node-07 HCA-1", FWVer: "28.39.1002",
				Ports: []Port{
					{
						CA: "mlx5_0", Num: 1, LID: 0x1a, SMLID: 1, LMC: 0,
						State: mad.PortStateActive, PhysState: mad.PhysLinkUp,
						RateText: "400 Gb/sec (4X NDR)", Rate: mad.Rate{Width: mad.Width4X, Speed: mad.SpeedNDR},
						CapMask: 0xa651e848, LinkLayer: "InfiniBand",
						GID0:     netip.MustParseAddr("fe80::2:c903:a1:b2c3"),
						PortGUID: 0x0002c90300a1b2c3, UMAD: "umad1",
					},
					{
						CA: "mlx5_0", Num: 2,
						State: mad.PortStateDown, PhysState: mad.PhysPolling,
						RateText: "10 Gb/sec (4X SDR)", Rate: mad.Rate{Width: mad.Width4X, Speed: mad.SpeedSDR},
						CapMask: 0xa651e848, LinkLayer: "InfiniBand",
						GID0:     netip.MustParseAddr("fe80::2:c903:a1:b2c4"),
						PortGUID: 0x0002c90300a1b2c4, UMAD: "umad0",
					},
				},
			}},
		},
		{
			root: "roce",
			want: []CA{{
				Name: "rxe0", NodeType: mad.NodeCA,
				NodeGUID: 0x000000fffe000001, SysImageGUID: 0x000000fffe000001, NodeDesc: "rxe0",
				Ports: []Port{{
					CA: "rxe0", Num: 1, State: mad.PortStateActive, PhysState: mad.PhysLinkUp,
					RateText: "10 Gb/sec (1X FDR10)", Rate: mad.Rate{Width: mad.Width1X, Speed: mad.SpeedFDR10},
					CapMask: 0x00010000, LinkLayer: "Ethernet",
					GID0:     netip.MustParseAddr("fe80::ff:fe00:1"),
					PortGUID: 0x000000fffe000001, UMAD: "umad0",
				}},
			}},
		},
		{
			root: "switch",
			want: []CA{{
				Name: "mlxsw_0", NodeType: mad.NodeSwitch,
				NodeGUID: 0x98039b0300785a10, SysImageGUID: 0x98039b0300785a10,
				NodeDesc: "MF0;leaf-03:MQM9700/U1", FWVer: "31.2012.2206",
				Ports: []Port{{
					CA: "mlxsw_0", Num: 0, LID: 5, SMLID: 1, State: mad.PortStateActive, PhysState: mad.PhysLinkUp,
					RateText: "400 Gb/sec (4X NDR)", Rate: mad.Rate{Width: mad.Width4X, Speed: mad.SpeedNDR},
					CapMask: 0x0042484a, LinkLayer: "InfiniBand",
					GID0:     netip.MustParseAddr("fe80::9803:9b03:78:5a10"),
					PortGUID: 0x98039b0300785a10, UMAD: "umad0",
				}},
			}},
		},
		{
			// No infiniband_mad class (ib_umad not loaded) and no
			// link_layer file (old kernel): no UMAD, InfiniBand assumed.
			root: "noumad",
			want: []CA{{
				Name: "mlx5_0", NodeType: mad.NodeCA,
				NodeGUID: 0x0002c90300a1b2c2, SysImageGUID: 0x0002c90300a1b2c2, NodeDesc: "n",
				Ports: []Port{{
					CA: "mlx5_0", Num: 1, LID: 0x1a, SMLID: 1, State: mad.PortStateActive, PhysState: mad.PhysLinkUp,
					RateText: "400 Gb/sec (4X NDR)", Rate: mad.Rate{Width: mad.Width4X, Speed: mad.SpeedNDR},
					CapMask: 0xa651e848, LinkLayer: "InfiniBand",
					GID0:     netip.MustParseAddr("fe80::2:c903:a1:b2c3"),
					PortGUID: 0x0002c90300a1b2c3,
				}},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.root, func(t *testing.T) {
			got, err := Enumerate(filepath.Join("testdata", tt.root))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Enumerate:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestEnumerateNoDevice(t *testing.T) {
	root := t.TempDir()
	_, err := Enumerate(root)
	if !errors.Is(err, ErrNoDevice) {
		t.Fatalf("empty root: got %v, want ErrNoDevice", err)
	}
	// It says how to get the device, not only how to do without one.
	for _, w := range []string{"--sim", "ib_umad", "driver", "/dev/infiniband/umad"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("no-device message lacks %q: %v", w, err)
		}
	}
	if !strings.Contains(err.Error(), "--sim") {
		t.Errorf("message %q does not suggest --sim", err)
	}
	// The class directory exists but is empty (all drivers unloaded).
	if err := os.MkdirAll(filepath.Join(root, "class", "infiniband"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Enumerate(root); !errors.Is(err, ErrNoDevice) {
		t.Fatalf("empty class dir: got %v, want ErrNoDevice", err)
	}
}

func TestEnumerateMalformedFixture(t *testing.T) {
	_, err := Enumerate(filepath.Join("testdata", "malformed"))
	if err == nil {
		t.Fatal("no error for a malformed lid file")
	}
	want := filepath.Join("testdata", "malformed", "class", "infiniband", "mlx5_0", "ports", "1", "lid")
	if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `"lid?"`) {
		t.Errorf("error %q does not name %s and its content", err, want)
	}
}

// copyTree copies a fixture tree so a test can corrupt it.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestEnumerateCorrupted injects one bad file at a time into a good tree and
// checks that the error names the file and what is wrong with it.
func TestEnumerateCorrupted(t *testing.T) {
	const dev = "class/infiniband/mlx5_0"
	const p1 = dev + "/ports/1"
	tests := []struct {
		file    string
		content string // "" with remove: delete the file
		remove  bool
		want    string
	}{
		{file: dev + "/node_type", content: "CA", want: `"CA" is not of the form "N: NAME"`},
		{file: dev + "/node_type", content: "x: CA", want: "does not start with a number"},
		{file: dev + "/node_guid", content: "0002:c903:00a1", want: "is not a GUID"},
		{file: dev + "/node_guid", content: "0002:c903:00a1:b2cZ", want: "is not a GUID"},
		{file: dev + "/sys_image_guid", content: "0002c90300a1b2c2", want: "is not a GUID"},
		{file: dev + "/node_guid", remove: true, want: "missing"},
		{file: p1 + "/lid", content: "26", want: "is not a hex number"},
		{file: p1 + "/lid", content: "0x1ffff", want: "of 16 bits"},
		{file: p1 + "/sm_lid", content: "", want: "is not a hex number"},
		{file: p1 + "/lid_mask_count", content: "0x1", want: "is not a decimal number"},
		{file: p1 + "/cap_mask", content: "0xg", want: "is not a hex number"},
		{file: p1 + "/state", content: "ACTIVE", want: "is not of the form"},
		{file: p1 + "/phys_state", content: "LinkUp: 5", want: "does not start with a number"},
		{file: p1 + "/gids/0", content: "fe80::1", want: ""}, // short form is still a GID
		{file: p1 + "/gids/0", content: "10.0.0.1", want: "is not a GID"},
		{file: p1 + "/gids/0", content: "fe80::1%eth0", want: "is not a GID"},
		{file: p1 + "/gids/0", remove: true, want: "missing"},
		{file: p1 + "/state", remove: true, want: "missing"},
		{file: "class/infiniband_mad/umad1/port", content: "one", want: "is not a decimal number"},
		{file: "class/infiniband_mad/umad1/ibdev", remove: true, want: "missing"},
	}
	for _, tt := range tests {
		t.Run(strings.ReplaceAll(tt.file, "/", "_"), func(t *testing.T) {
			root := copyTree(t, filepath.Join("testdata", "ib2port"))
			path := filepath.Join(root, filepath.FromSlash(tt.file))
			var err error
			if tt.remove {
				err = os.Remove(path)
			} else {
				err = os.WriteFile(path, []byte(tt.content+"\n"), 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err = Enumerate(root)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error for %s = %q", tt.file, tt.content)
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q: want it to name %s and say %q", err, path, tt.want)
			}
		})
	}
}

func TestEnumerateSkipsNonUMAD(t *testing.T) {
	// issm and abi_version live beside umad*; they must not be read as
	// umad devices, and issm must never be what a port maps to.
	cas, err := Enumerate(filepath.Join("testdata", "ib2port"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range cas[0].Ports {
		if !strings.HasPrefix(p.UMAD, "umad") {
			t.Errorf("port %s maps to %q", p.Name(), p.UMAD)
		}
	}
}

func TestSelect(t *testing.T) {
	load := func(root string) []CA {
		cas, err := Enumerate(filepath.Join("testdata", root))
		if err != nil {
			t.Fatal(err)
		}
		return cas
	}
	tests := []struct {
		name    string
		root    string
		sel     Selection
		want    string // "dev/port" or ""
		wantErr []string
	}{
		{name: "auto picks the active port", root: "ib2port", sel: Selection{SMP: true}, want: "mlx5_0/1"},
		{name: "auto perf", root: "ib2port", sel: Selection{Perf: true}, want: "mlx5_0/1"},
		{name: "named CA, auto port", root: "ib2port", sel: Selection{CA: "mlx5_0", SMP: true}, want: "mlx5_0/1"},
		{name: "named port", root: "ib2port", sel: Selection{CA: "mlx5_0", Port: 1, SMP: true, Perf: true}, want: "mlx5_0/1"},
		{name: "named down port", root: "ib2port", sel: Selection{CA: "mlx5_0", Port: 2, SMP: true},
			wantErr: []string{"port mlx5_0/2 is not ACTIVE", "state Down", "physical state Polling", "check the cable"}},
		{name: "unknown CA", root: "ib2port", sel: Selection{CA: "mlx4_0"},
			wantErr: []string{`no RDMA device named "mlx4_0"`, "mlx5_0 port 1 ACTIVE, port 2 DOWN"}},
		{name: "unknown port", root: "ib2port", sel: Selection{CA: "mlx5_0", Port: 3},
			wantErr: []string{"mlx5_0 has no port 3", "port 1 ACTIVE, port 2 DOWN"}},
		{name: "port without CA", root: "ib2port", sel: Selection{Port: 2},
			wantErr: []string{"needs a device name"}},
		{name: "mixed: skips RoCE, prefers ACTIVE over INIT", root: "mixed", sel: Selection{SMP: true, Perf: true}, want: "mlx5_1/2"},
		{name: "mixed: named INIT port is fine for SMP only", root: "mixed", sel: Selection{CA: "mlx5_1", Port: 1, SMP: true}, want: "mlx5_1/1"},
		{name: "mixed: named INIT port refused for PerfMgt", root: "mixed", sel: Selection{CA: "mlx5_1", Port: 1, Perf: true},
			wantErr: []string{"mlx5_1/1 is not ACTIVE", "state Init", "is an SM running"}},
		{name: "mixed: named RoCE port is selectable", root: "mixed", sel: Selection{CA: "mlx5_0", Port: 1, Perf: true}, want: "mlx5_0/1"},
		{name: "roce only, auto", root: "roce", sel: Selection{SMP: true},
			wantErr: []string{"only Ethernet (RoCE) ports: rxe0/1", "SMP discovery needs an InfiniBand port"}},
		{name: "roce named", root: "roce", sel: Selection{CA: "rxe0", Port: 1, Perf: true}, want: "rxe0/1"},
		{name: "switch uses port 0", root: "switch", sel: Selection{SMP: true}, want: "mlxsw_0/0"},
		{name: "switch named", root: "switch", sel: Selection{CA: "mlxsw_0", SMP: true}, want: "mlxsw_0/0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, p, err := Select(load(tt.root), tt.sel)
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("no error, got port %s", p.Name())
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Name() != tt.want {
				t.Errorf("picked %s, want %s", p.Name(), tt.want)
			}
		})
	}
}

func TestSelectNoActive(t *testing.T) {
	cas, err := Enumerate(filepath.Join("testdata", "ib2port"))
	if err != nil {
		t.Fatal(err)
	}
	cas[0].Ports[0].State = mad.PortStateDown
	cas[0].Ports[0].PhysState = mad.PhysDisabled
	_, _, err = Select(cas, Selection{SMP: true})
	if err == nil || !strings.Contains(err.Error(), "no ACTIVE InfiniBand port") || !strings.Contains(err.Error(), "ibstat") {
		t.Fatalf("got %v", err)
	}
	// Link up but no SM: SMP discovery may use it, PerfMgt may not.
	cas[0].Ports[0].State = mad.PortStateInit
	cas[0].Ports[0].PhysState = mad.PhysLinkUp
	if _, p, err := Select(cas, Selection{SMP: true}); err != nil || p.Num != 1 {
		t.Fatalf("SMP on an INIT port: %v", err)
	}
	if _, _, err := Select(cas, Selection{Perf: true}); err == nil || !strings.Contains(err.Error(), "SM running") {
		t.Fatalf("Perf on an INIT port: %v", err)
	}
	if _, _, err := Select(nil, Selection{}); !errors.Is(err, ErrNoDevice) {
		t.Fatalf("no devices: %v", err)
	}
}

func FuzzParseGUID(f *testing.F) {
	f.Add("0002:c903:00a1:b2c3")
	f.Add("0002:c903:00a1")
	f.Add("ffff:ffff:ffff:ffff")
	f.Fuzz(func(t *testing.T, s string) {
		g, err := parseGUID("f", s)
		if err != nil {
			return
		}
		// A GUID that parsed prints back to the same text (lower case).
		back := strings.Join([]string{hex4(g >> 48), hex4(g >> 32), hex4(g >> 16), hex4(g)}, ":")
		if !strings.EqualFold(back, s) {
			t.Errorf("%q parsed to %#x which prints as %q", s, g, back)
		}
	})
}

func hex4(v uint64) string {
	const digits = "0123456789abcdef"
	v &= 0xffff
	return string([]byte{digits[v>>12], digits[v>>8&0xf], digits[v>>4&0xf], digits[v&0xf]})
}

func FuzzParseNumbered(f *testing.F) {
	f.Add("4: ACTIVE")
	f.Add("5: LinkUp")
	f.Add("ACTIVE")
	f.Fuzz(func(t *testing.T, s string) {
		v, err := parseNumbered("f", s)
		if err == nil && v > 255 {
			t.Errorf("%q gave %d, out of range", s, v)
		}
	})
}
