package checks_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// TestSlowerBoardAcrossNamings: gpu005, the one host of sixteen whose
// adapters are named HCA-1..HCA-4 where the others' are mlx5_0..mlx5_3
// (another udev naming), has two ConnectX-6 boards (HDR) among ConnectX-7
// (NDR). Its rail peers are the other hosts' mlx5_n: the namings join in
// device order as topology.rail-miswired joins rails. Before, the host's
// naming made a group of its own four links, two of them HDR, with no
// majority: the boards were reported by nothing, while with mlx5_n names
// both are link.slower-hardware.
func TestSlowerBoardAcrossNamings(t *testing.T) {
	for _, rename := range []bool{false, true} {
		t.Run(fmt.Sprintf("renamed=%v", rename), func(t *testing.T) {
			f, err := topology.RailOptimized{Servers: 16, ServersPerLeaf: 8, Spines: 2, Hosts: topology.Hosts{HCAsPerServer: 4}}.Build()
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range f.Nodes {
				if n.Type == mad.NodeCA {
					n.VendorID, n.DeviceID = 0x02c9, 0x1021 // ConnectX-7
				}
			}
			name := func(k int) string { return fmt.Sprintf("gpu005 mlx5_%d", k) }
			for k := 0; k < 2; k++ {
				f.NodesByName(name(k))[0].DeviceID = 0x101b // ConnectX-6
			}
			if rename {
				for k := 0; k < 4; k++ {
					f.NodesByName(name(k))[0].Description = fmt.Sprintf("gpu005 HCA-%d", k+1)
				}
				name = func(k int) string { return fmt.Sprintf("gpu005 HCA-%d", k+1) }
			}
			f.Reindex()
			if _, err := topology.AssignLIDs(f); err != nil {
				t.Fatal(err)
			}
			if err := topology.Route(f); err != nil {
				t.Fatal(err)
			}
			s, err := sim.New(f, sim.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for k := 0; k < 2; k++ {
				if err := s.Limit(name(k)+"/1", 0, mad.SpeedHDR); err != nil {
					t.Fatal(err)
				}
			}
			c, err := s.Attach("gpu001 mlx5_0", 1)
			if err != nil {
				t.Fatal(err)
			}
			e := transport.NewEngine(c, transport.Options{Timeout: 200 * time.Millisecond})
			t.Cleanup(func() { e.Close(); c.Close() })
			sw, err := diagnose.Run(context.Background(), e, diagnose.Options{Routes: true})
			if err != nil {
				t.Fatal(err)
			}
			res, err := checks.Run(sw.Snapshot(checks.Expectations{}, nil, nil))
			if err != nil {
				t.Fatal(err)
			}
			fs := byCheck(res.Findings, "link.slower-hardware")
			for _, x := range fs {
				t.Logf("%s %s\n    %v", x.Severity, x.Title, x.Evidence)
			}
			if len(fs) != 2 {
				t.Fatalf("%d link.slower-hardware findings, want gpu005's two ConnectX-6 boards", len(fs))
			}
			for k, x := range fs {
				if !strings.Contains(x.Title, name(k)+"/1") {
					t.Errorf("finding %d: %q does not name %s", k, x.Title, name(k))
				}
			}
			if rename {
				var ev []string
				for _, e := range fs[0].Evidence {
					ev = append(ev, e.Text)
				}
				if j := strings.Join(ev, "\n"); !strings.Contains(j, "HCA-") || !strings.Contains(j, "mlx5_") || !strings.Contains(j, "device order") {
					t.Errorf("evidence does not say the namings were joined:\n%s", j)
				}
			}
		})
	}
}
