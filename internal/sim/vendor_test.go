package sim

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// TestVendorGeneralInfo: the simulator answers Mellanox's vendor-class
// GeneralInfo Get (engine.GetVendor) with each node's firmware version,
// the firmware fault changes one node's, and a node of another vendor
// does not answer (the request times out: could not look).
func TestVendorGeneralInfo(t *testing.T) {
	s, err := SampleHealthy(Options{})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := ParseFaults(strings.NewReader("firmware leaf02 version=31.2010.5000\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ApplyFaults(fs); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"31.2010", "31.x.1", "0.0.0"} {
		fs, err := ParseFaults(strings.NewReader("firmware leaf02 version=" + bad + "\n"))
		if err == nil {
			err = s.ApplyFaults(fs)
		}
		if err == nil || !strings.Contains(err.Error(), "version=") {
			t.Errorf("version=%s: %v, want an error naming the option", bad, err)
		}
	}
	lid := map[string]uint16{}
	for _, n := range s.Fabric().Nodes {
		for _, p := range n.Ports {
			if p != nil && p.LID != 0 && lid[n.Description] == 0 {
				lid[n.Description] = p.LID
			}
		}
	}
	c, err := s.Attach("gpu001 mlx5_0", 1)
	if err != nil {
		t.Fatal(err)
	}
	e := transport.NewEngine(c, transport.Options{Timeout: 100 * time.Millisecond, Retries: 0})
	defer func() { e.Close(); c.Close() }()
	for _, w := range []struct{ node, version string }{{"leaf01", "31.2012.1068"}, {"leaf02", "31.2010.5000"}, {"gpu002 mlx5_3", "28.39.1002"}} {
		var gi mad.GeneralInfo
		if _, err := e.GetVendor(context.Background(), lid[w.node], &gi, 0); err != nil {
			t.Fatalf("%s: %v", w.node, err)
		}
		if gi.Version() != w.version || gi.DeviceID == 0 {
			t.Errorf("%s: %+v, want version %s", w.node, gi, w.version)
		}
	}
	for i := range s.nodes {
		if s.nodes[i].desc == "leaf03" {
			s.nodes[i].vendor = 0x001175 // another vendor's switch
		}
	}
	var gi mad.GeneralInfo
	if _, err := e.GetVendor(context.Background(), lid["leaf03"], &gi, 0); !errors.Is(err, transport.ErrTimeout) {
		t.Errorf("another vendor's node: %v, want a timeout", err)
	}
}

// TestVendorGeneralInfoFromFile: a fabric file that recorded firmware
// versions (an ibdiagnet2.db_csv's NODES_INFO) is answered with them,
// PSID included, and only for the nodes it lists; a file without them
// answers nobody, and the attached port says why (NoVendorMADs), so no
// version is made up.
func TestVendorGeneralInfoFromFile(t *testing.T) {
	s, _, err := Load(context.Background(), "../fabric/testdata/nodesinfo.db_csv", "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Attach("h", 1)
	if err != nil {
		t.Fatal(err)
	}
	if why := c.Local().NoVendorMADs; why != "" {
		t.Errorf("NoVendorMADs %q on a file with NODES_INFO", why)
	}
	e := transport.NewEngine(c, transport.Options{Timeout: 50 * time.Millisecond, Retries: 0})
	defer func() { e.Close(); c.Close() }()
	for lid, want := range map[uint16]string{1: "31.2012.1024 MT_0000000577", 3: "2.40.0100 MT_1090110018"} {
		var gi mad.GeneralInfo
		if _, err := e.GetVendor(context.Background(), lid, &gi, 0); err != nil || gi.Version()+" "+gi.PSID != want {
			t.Errorf("LID %d: %s %s (%v), want %s", lid, gi.Version(), gi.PSID, err, want)
		}
	}
	var gi mad.GeneralInfo
	if _, err := e.GetVendor(context.Background(), 4, &gi, 0); !errors.Is(err, transport.ErrTimeout) {
		t.Errorf("node the file has no version for: %v, want a timeout", err)
	}

	s, _, err = Load(context.Background(), "../../fixtures/ibnetdiscover/chassis.txt", "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	c2, err := s.Attach("", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if why := c2.Local().NoVendorMADs; !strings.Contains(why, "carries no firmware versions") {
		t.Errorf("NoVendorMADs %q on an ibnetdiscover file", why)
	}
	if why := c2.Local().NoARInfo; !strings.Contains(why, "carries no adaptive-routing state") {
		t.Errorf("NoARInfo %q on an ibnetdiscover file: a file records no AdaptiveRoutingInfo", why)
	}
}
