package gate

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/discover"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/snapshot"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

func TestTimingBreakdown(t *testing.T) {
	if os.Getenv("GATE_TIMING") == "" {
		t.Skip()
	}
	tree := topology.FatTree3{Pods: 9, LeavesPerPod: 32, SpinesPerPod: 32, HostsPerLeaf: 32, Cores: 1024}
	f, _ := topology.Routed(tree)
	s, _ := sim.New(f, sim.Options{})
	e := engineAt(t, s, "gpu0001 mlx5_0")
	sw, _ := diagnose.Run(context.Background(), e, diagnose.Options{Routes: true})
	snap, _ := snapshot.New(sw.Fabric, nil, sw.Taken, "sim:bench", "bench", sw.Complete)
	dir := t.TempDir()
	snap.Save(dir)
	hosts := make([]string, 64)
	for i := range hosts {
		hosts[i] = fmt.Sprintf("gpu%04d", 1+i*137)
	}
	tm := func(name string, f func()) { t0 := time.Now(); f(); t.Logf("%s: %v", name, time.Since(t0)) }
	var sn *snapshot.Snapshot
	var fab *fabric.Fabric
	tm("load", func() { sn, _ = snapshot.Load(dir) })
	tm("fabric", func() { fab, _ = sn.FabricModel() })
	nodes, _ := Resolve(fab, hosts, nil)
	var sc *checks.Scope
	tm("scope", func() { sc = checks.ScopeFor(fab, nodes) })
	var ports []*fabric.Port
	for p := range sc.Ports {
		if p.Num != 0 {
			ports = append(ports, p)
		}
	}
	t.Logf("scope ports %d switches %d", len(ports), len(sc.Switches))
	live := engineAt(t, s, "gpu9000 mlx5_0")
	tm("refresh", func() { discover.Refresh(context.Background(), live, ports, true, 0) })
	var l checks.Loads
	tm("loads", func() { l = diagnose.NewLoadsFor(fab, nodes) })
	tm("checks", func() { checks.Run(&checks.Snapshot{Fabric: fab, Scope: sc, Loads: l}) })
	for _, c := range checks.All() {
		tm("  "+c.ID, func() { checks.Run(&checks.Snapshot{Fabric: fab, Scope: sc, Loads: l}, c.ID) })
	}
}
