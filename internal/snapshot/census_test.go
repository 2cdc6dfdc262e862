package snapshot

import (
	"slices"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/mad"
)

// TestIndexHCACensus: the census a gate reads from gate.idx's records is
// the one checks takes from the whole fabric, HCA by HCA (host, device,
// leaf and leaf port), with a host port down among them.
func TestIndexHCACensus(t *testing.T) {
	f, _, err := sim.SampleFabric()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range f.Nodes {
		if n.Description == "gpu002 mlx5_0" {
			p := n.Ports[1]
			p.Remote.Remote = nil
			p.Remote, p.State, p.PhysState = nil, mad.PortStateDown, mad.PhysDisabled
		}
	}
	want := checks.HCACensus(f)
	data, err := EncodeIndex(f, nil, time.Now(), "sim:test", true)
	if err != nil {
		t.Fatal(err)
	}
	x, err := ParseIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	got := x.HCACensus()
	if len(want) != 256 || !slices.Equal(got, want) || slices.ContainsFunc(got, func(h checks.HostHCA) bool { return h.Leaf == 0 && h.Host != "gpu002" }) {
		t.Errorf("census from gate.idx differs (%d HCAs, want %d)", len(got), len(want))
	}
	if i := slices.IndexFunc(got, func(h checks.HostHCA) bool { return h.Host == "gpu002" && h.Dev == "mlx5_0" }); i < 0 || got[i].Leaf != 0 {
		t.Errorf("gpu002 mlx5_0 with its link down: %+v", got[max(i, 0)])
	}
}

// BenchmarkIndexHCACensus8k is what a gate spends on the fabric-wide HCA
// census from gate.idx on FatTree8k (8,192 HCAs): -benchmem's B/op is
// its share of the gate's peak memory.
func BenchmarkIndexHCACensus8k(b *testing.B) {
	f, err := topology.FatTree8k().Build()
	if err != nil {
		b.Fatal(err)
	}
	data, err := EncodeIndex(f, nil, time.Now(), "sim:bench", true)
	if err != nil {
		b.Fatal(err)
	}
	x, err := ParseIndex(data)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if len(x.HCACensus()) == 0 {
			b.Fatal("empty census")
		}
	}
}
