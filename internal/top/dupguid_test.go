package top

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/discover"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/transport"
)

// TestDuplicateGUIDPortsOwnRows: gpu017 mlx5_1 reports gpu003 mlx5_1's
// NodeGUID (docs/faults.md dupguid; topology.duplicate-guid). They are
// two HCAs on two cables, each read at its own LID: each port is its own
// row, named as the findings name it, with its own far end and its own
// figures. Before, the rows were by GUID and port: the two shared one
// row (one name, one far end) and each refresh compared one HCA's
// counters with the other's.
func TestDuplicateGUIDPortsOwnRows(t *testing.T) {
	sm, err := sim.SampleHealthy(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := sim.ParseFaults(strings.NewReader(`dupguid "gpu003 mlx5_1" "gpu017 mlx5_1"` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sm.ApplyFaults(fs); err != nil {
		t.Fatal(err)
	}
	c, err := sm.Attach("gpu001 mlx5_0", 1)
	if err != nil {
		t.Fatal(err)
	}
	eng := transport.NewEngine(c, transport.Options{Timeout: 100 * time.Millisecond, Retries: -1})
	t.Cleanup(func() { eng.Close() })
	ctx := context.Background()
	f, err := discover.Run(ctx, eng, discover.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.DuplicateGUIDs) != 1 {
		t.Fatalf("discovery found %d duplicate GUIDs, want 1", len(f.DuplicateGUIDs))
	}
	var ports []*fabric.Port
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil && p.Num != 0 && p.Remote != nil {
				ports = append(ports, p)
			}
		}
	}
	s := NewSampler(eng, f, Options{Ports: ports, PortInfo: eng})
	if _, err := s.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if err := sm.AddCounter("gpu017 mlx5_1/1", "SymbolErrorCounter", 300); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	fr, err := s.Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string][]*Row{}
	n := 0
	for _, r := range rowsOf(fr) {
		byName[r.Node+"/"+itoa(r.Num)] = append(byName[r.Node+"/"+itoa(r.Num)], r)
		n++
	}
	if n != len(ports) {
		t.Errorf("%d rows for %d watched ports", n, len(ports))
	}
	want := map[string]string{"gpu003 mlx5_1/1": "leaf01/18", "gpu017 mlx5_1/1": "leaf05/2"}
	for name, peer := range want {
		rs := byName[name]
		if len(rs) != 1 {
			t.Errorf("%s: %d rows, want 1", name, len(rs))
			continue
		}
		r := rs[0]
		if r.Peer != peer || !r.Measured || r.ErrorsUnknown {
			t.Errorf("%s: far end %q, measured %v, errors unknown %v; want far end %s, measured", name, r.Peer, r.Measured, r.ErrorsUnknown, peer)
		}
		hit := name == "gpu017 mlx5_1/1"
		if (r.ErrorsPerSecond > 0) != hit || r.HasVerdict != hit || hit && r.Check != "counters.errors" {
			t.Errorf("%s: %.1f errors/s, verdict %v %q; want the 300 symbol errors on gpu017 mlx5_1 alone", name, r.ErrorsPerSecond, r.HasVerdict, r.Check)
		}
	}
}
