package discover

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

type builder interface {
	Build() (*fabric.Fabric, error)
}

func simDiscover(t testing.TB, topo builder, so sim.Options, fault func(*sim.Sim) error, eo transport.Options, opts Options) (want, got *fabric.Fabric) {
	t.Helper()
	want, err := topo.Build()
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.New(want, so)
	if err != nil {
		t.Fatal(err)
	}
	if fault != nil {
		if err := fault(s); err != nil {
			t.Fatal(err)
		}
	}
	c, err := s.Attach("", 0)
	if err != nil {
		t.Fatal(err)
	}
	e := transport.NewEngine(c, eo)
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	got, err = Run(ctx, e, opts)
	if err != nil {
		t.Fatal(err)
	}
	if tb, ok := t.(*testing.T); ok {
		tb.Logf("%d nodes, engine: %v", len(got.Nodes), e.Stats())
	}
	return want, got
}

func linkSet(f *fabric.Fabric) []string {
	var ls []string
	for _, l := range f.Links() {
		ls = append(ls, linkKey(l.A.Node.GUID, l.A.Num, l.B.Node.GUID, l.B.Num))
	}
	slices.Sort(ls)
	return ls
}

func TestSimFatTree3(t *testing.T) {
	topo := topology.FatTree3{Pods: 3, LeavesPerPod: 4, SpinesPerPod: 2, HostsPerLeaf: 4, Cores: 4,
		Common: topology.Common{SwitchPorts: 16}}
	want, got := simDiscover(t, topo, sim.Options{HopLatency: time.Microsecond, ServiceTime: 20 * time.Microsecond},
		nil, transport.Options{}, Options{})
	if len(got.Nodes) != len(want.Nodes) || len(got.Unreachable) != 0 || len(got.DuplicateGUIDs) != 0 {
		t.Fatalf("%d nodes (want %d), unreachable %v, duplicates %v", len(got.Nodes), len(want.Nodes), got.Unreachable, got.DuplicateGUIDs)
	}
	if g, w := linkSet(got), linkSet(want); !slices.Equal(g, w) {
		t.Errorf("links differ: got %d, want %d", len(g), len(w))
	}
	for _, wn := range want.Nodes {
		gn := got.NodeByGUID(wn.GUID)
		if gn == nil || gn.Description != wn.Description || gn.Type != wn.Type || gn.NumPorts() != wn.NumPorts() {
			t.Errorf("node %x %q: got %+v", wn.GUID, wn.Description, gn)
			continue
		}
		for p, wp := range wn.Ports {
			if wp == nil || wp.Remote == nil || p == 0 {
				continue
			}
			gp := gn.Ports[p]
			if gp == nil || gp.Rate() != wp.Rate() || gp.State != mad.PortStateActive {
				t.Errorf("%s port %d: got %+v, want rate %v", wn.Description, p, gp, wp.Rate())
			}
		}
	}
}

func TestSimFaults(t *testing.T) {
	topo := topology.FatTree2{Leaves: 4, Spines: 2, HostsPerLeaf: 3, Common: topology.Common{SwitchPorts: 8}}
	t.Run("dead spine and host", func(t *testing.T) {
		host := want0(t, topo, 11) // the last CA, behind leaf04
		want, got := simDiscover(t, topo, sim.Options{}, func(s *sim.Sim) error {
			if err := s.Kill("spine02"); err != nil {
				return err
			}
			return s.Kill(host)
		}, transport.Options{Timeout: 20 * time.Millisecond, Retries: 1}, Options{})
		if len(got.Nodes) != len(want.Nodes)-2 || got.NodesByName("spine02") != nil {
			t.Errorf("%d nodes, want %d", len(got.Nodes), len(want.Nodes)-2)
		}
		// The dead spine is tried from every leaf; the host from its leaf.
		if len(got.Unreachable) != 4+1 {
			t.Errorf("unreachable: %+v", got.Unreachable)
		}
		leaf4 := got.NodesByName("leaf04")[0]
		for _, u := range got.Unreachable {
			if u.What != "NodeInfo" || u.FromGUID == 0 || u.Reason != "no response after 2 attempts" {
				t.Errorf("unreachable entry %+v", u)
			}
			// Each path ends at the port it was tried from.
			from := got.NodeByGUID(u.FromGUID)
			if from == nil || !slices.Equal(u.Path, from.Path.Extend(u.FromPort)) {
				t.Errorf("unreachable %v from %x[%d]", u.Path, u.FromGUID, u.FromPort)
			}
		}
		if !slices.ContainsFunc(got.Unreachable, func(u fabric.Unreachable) bool {
			return u.FromGUID == leaf4.GUID && u.FromPort == 3 && u.Path.String() == "0,1,4,4,3"
		}) {
			t.Errorf("dead host: no entry from leaf04 port 3 at 0,1,4,4,3 in %+v", got.Unreachable)
		}
	})
	t.Run("duplicate leaf GUID", func(t *testing.T) {
		want, got := simDiscover(t, topo, sim.Options{}, func(s *sim.Sim) error {
			return s.DuplicateGUID("leaf02", "leaf04")
		}, transport.Options{}, Options{})
		if len(got.Nodes) != len(want.Nodes) {
			t.Errorf("%d nodes, want %d: the duplicate must not be merged", len(got.Nodes), len(want.Nodes))
		}
		if len(got.DuplicateGUIDs) != 1 || !slices.Equal(got.DuplicateGUIDs[0].Descs, []string{"leaf02", "leaf04"}) {
			t.Errorf("duplicates: %+v", got.DuplicateGUIDs)
		}
		if g := len(linkSet(got)); g != len(linkSet(want)) {
			t.Errorf("%d links, want %d", g, len(linkSet(want)))
		}
	})
	t.Run("duplicate host GUID", func(t *testing.T) {
		want, got := simDiscover(t, topo, sim.Options{}, func(s *sim.Sim) error {
			return s.DuplicateGUID(want0(t, topo, 5), want0(t, topo, 9))
		}, transport.Options{}, Options{})
		if len(got.Nodes) != len(want.Nodes) || len(got.DuplicateGUIDs) != 1 {
			t.Errorf("%d nodes (want %d), duplicates %+v", len(got.Nodes), len(want.Nodes), got.DuplicateGUIDs)
		}
	})
}

// want0 names the i-th CA of topo by GUID.
func want0(t testing.TB, topo builder, i int) string {
	f, err := topo.Build()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range f.Nodes {
		if n.Type == mad.NodeCA {
			if i == 0 {
				return fmt.Sprintf("0x%016x", n.GUID)
			}
			i--
		}
	}
	t.Fatal("not enough CAs")
	return ""
}

// BenchmarkSimFatTree8k discovers topology.FatTree8k (9,472 nodes) in the
// in-process simulator with 1µs per cable and 20µs of agent service time
// per MAD, one MAD at a time per node.
func BenchmarkSimFatTree8k(b *testing.B) {
	topo := topology.FatTree8k()
	want, err := topo.Build()
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		eo   transport.Options
	}{
		{"window64", transport.Options{}},
		{"window256", transport.Options{Window: 256}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var nodes int
			var st transport.Stats
			for b.Loop() {
				s, err := sim.New(want, sim.Options{HopLatency: time.Microsecond, ServiceTime: 20 * time.Microsecond})
				if err != nil {
					b.Fatal(err)
				}
				c, err := s.Attach("", 0)
				if err != nil {
					b.Fatal(err)
				}
				e := transport.NewEngine(c, bc.eo)
				got, err := Run(context.Background(), e, Options{})
				if err != nil {
					b.Fatal(err)
				}
				nodes, st = len(got.Nodes), e.Stats()
				e.Close()
			}
			if nodes != len(want.Nodes) {
				b.Fatalf("%d nodes, want %d", nodes, len(want.Nodes))
			}
			b.ReportMetric(float64(st.Sent), "SMPs/op")
			b.ReportMetric(float64(st.Latency.P50.Microseconds()), "rtt-p50-µs")
			b.ReportMetric(float64(nodes)/(b.Elapsed().Seconds()/float64(b.N)), "nodes/s")
		})
	}
}
