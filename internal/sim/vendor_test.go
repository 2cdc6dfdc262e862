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
