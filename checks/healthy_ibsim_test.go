package checks_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/ibsimtest"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/internal/transport/ibsim"
	"github.com/ibdoctor/ibdoctor/mad"
)

// TestHealthyOpenSMFabricsQuiet: healthy fabrics routed by a real OpenSM
// (min-hop, up/down, fat-tree engines) on ibsim give no finding at
// warning or above: 2- and 3-level fat trees, a rail-optimised fabric
// and a dragonfly, each small enough for CI.
func TestHealthyOpenSMFabricsQuiet(t *testing.T) {
	ibsimtest.Require(t, "opensm")
	fabrics := []struct {
		name    string
		build   func() (*fabric.Fabric, error)
		engines []string
	}{
		{"fattree2", topology.FatTree2{Leaves: 4, Spines: 4, HostsPerLeaf: 4, Common: topology.Common{SwitchPorts: 16}}.Build, []string{"minhop", "updn", "ftree"}},
		{"fattree2-2cables", topology.FatTree2{Leaves: 4, Spines: 2, HostsPerLeaf: 4, LinksPerPair: 2, Common: topology.Common{SwitchPorts: 16}}.Build, []string{"minhop", "updn", "ftree"}},
		{"fattree3", topology.FatTree3{Pods: 2, LeavesPerPod: 2, SpinesPerPod: 2, HostsPerLeaf: 4, Cores: 4, Common: topology.Common{SwitchPorts: 16}}.Build, []string{"minhop", "updn", "ftree"}},
		{"rail", topology.RailOptimized{Servers: 8, ServersPerLeaf: 4, Spines: 2, Hosts: topology.Hosts{HCAsPerServer: 2}, Common: topology.Common{SwitchPorts: 16}}.Build, []string{"minhop", "updn"}},
		{"dragonfly", topology.Dragonfly{Groups: 5, SwitchesPerGroup: 4, HostsPerSwitch: 2, GlobalPerSwitch: 1}.Build, []string{"minhop", "updn"}},
	}
	for _, fc := range fabrics {
		for _, engine := range fc.engines {
			t.Run(fc.name+"/"+engine, func(t *testing.T) {
				f, err := fc.build()
				if err != nil {
					t.Fatal(err)
				}
				s := ibsimtest.StartFabric(t, f, fabric.NetFileOptions{})
				host := ""
				for _, n := range f.Nodes {
					if n.Type == mad.NodeCA { // the first CA
						host = fabric.DefaultNodeID(n)
						break
					}
				}
				s.StartOpenSM(ibsimtest.OpenSMOptions{Host: host, Extra: []string{"-R", engine}})
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				c, err := ibsim.Dial(ctx, ibsim.Options{SockName: s.SockName, Host: host})
				if err != nil {
					t.Fatal(err)
				}
				eng := transport.NewEngine(c, transport.Options{Timeout: 2 * time.Second})
				defer eng.Close()
				sw, err := diagnose.Run(ctx, eng, diagnose.Options{Routes: true, Counters: true})
				if err != nil {
					t.Fatal(err)
				}
				if !sw.Complete {
					t.Fatalf("sweep incomplete: %+v", sw.Unreached)
				}
				res, err := checks.Run(sw.Snapshot(checks.Expectations{}, nil, nil))
				if err != nil {
					t.Fatal(err)
				}
				bad := atOrAbove(res.Findings, checks.Warning)
				if fc.name == "dragonfly" {
					// Min-hop routes on a dragonfly close channel
					// dependency cycles on VL0 (a real deadlock risk:
					// production dragonflies route with VLs, DFSSSP or
					// dfp), and OpenSM's updn finds no root on a fabric
					// where every switch has hosts and falls back to
					// min-hop. The credit loop is the expected finding.
					loops := byCheck(bad, "routing.credit-loop")
					if len(loops) == 0 {
						t.Errorf("dragonfly routed %s: no routing.credit-loop", engine)
					}
					bad = slices.DeleteFunc(bad, func(f checks.Finding) bool { return f.Check == "routing.credit-loop" })
				}
				if len(bad) > 0 {
					var b strings.Builder
					for _, f := range bad {
						b.WriteString("\n  " + f.Severity.String() + " " + f.Check + ": " + f.Title)
						for _, e := range f.Evidence {
							b.WriteString("\n      " + e.String())
						}
					}
					t.Errorf("healthy fabric, %s routing: %d findings at warning or above:%s", engine, len(bad), b.String())
				}
			})
		}
	}
}
