package snapshot

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// errorNames are the error counters a sweep saves per port (PortCounters).
var errorNames = []string{
	"SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter", "PortRcvErrors",
	"PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors", "PortXmitDiscards",
	"PortXmitConstraintErrors", "PortRcvConstraintErrors", "LocalLinkIntegrityErrors",
	"ExcessiveBufferOverrunErrors", "VL15Dropped",
}

// everyPort is a counters reading of every port of f, mostly zero (a
// healthy fabric), a few nonzero and saturated.
type everyPort struct{ f *fabric.Fabric }

func (everyPort) Interval() time.Duration { return 0 }

func (c everyPort) Ports(fn func(checks.PortReading)) {
	i := 0
	for _, n := range c.f.Nodes {
		for _, p := range n.Ports {
			if p == nil || (p.Num == 0 && n.Switch == nil) {
				continue
			}
			i++
			r := checks.PortReading{Port: p, XmitWait: &checks.CounterValue{Name: "PortXmitWait", Value: uint64(i * 7)}}
			for j, name := range errorNames {
				v := checks.CounterValue{Name: name}
				if (i+j)%97 == 0 {
					v.Value = uint64(i)
				}
				r.Errors = append(r.Errors, v)
			}
			fn(r)
		}
	}
}

// TestStateBytesPerNode: the state a sweep leaves (its snapshot with
// tables and every port's counters, and the accepted baseline) on
// FatTree8k (9,472 nodes) is at most 1 KB per node (issue 13). It prints
// each file's share.
func TestStateBytesPerNode(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and routes a 9,472-node fabric")
	}
	f, err := topology.Routed(topology.FatTree8k())
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(f, everyPort{f}, time.Now(), "sim:size", "test", true)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := s.Save(dir); err != nil {
		t.Fatal(err)
	}
	if err := SaveBaseline(dir, f, "sim:test", false); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	nodes := float64(len(f.Nodes))
	var total int64
	for _, e := range ents {
		st, err := os.Stat(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		total += st.Size()
		t.Logf("%-28s %10d B %7.0f B/node", e.Name(), st.Size(), float64(st.Size())/nodes)
	}
	per := float64(total) / nodes
	t.Logf("state: %d B for %d nodes, %.0f B/node", total, len(f.Nodes), per)
	if per > 1024 {
		t.Errorf("state is %.0f B per node, over 1 KB", per)
	}
}

// BenchmarkSaveFatTree8k is a sweep's save on FatTree8k (9,472 nodes,
// every table, every port's counters): snapshot.New from the readings,
// then Save into a state dir. -benchmem gives what saving allocates (the
// sweep's peak memory is reached around it); state-B/node the state it
// leaves (without a baseline; TestStateBytesPerNode counts that too).
func BenchmarkSaveFatTree8k(b *testing.B) { benchSave(b, topology.FatTree8k()) }

// BenchmarkSaveFatTree50k is the same on FatTree50k (48,896 nodes, just
// under the LID limit); routing it takes a minute and GBs, so it runs
// only with IBDOCTOR_BENCH_BIG=1.
func BenchmarkSaveFatTree50k(b *testing.B) {
	if os.Getenv("IBDOCTOR_BENCH_BIG") != "1" {
		b.Skip("set IBDOCTOR_BENCH_BIG=1 to build the 49k-node fabric")
	}
	benchSave(b, topology.FatTree50k())
}

func benchSave(b *testing.B, tree topology.FatTree3) {
	f, err := topology.Routed(tree)
	if err != nil {
		b.Fatal(err)
	}
	// The readings are made once, as a sweep holds them: what is
	// measured is the save's own allocation.
	var rs readings
	everyPort{f}.Ports(func(r checks.PortReading) { rs = append(rs, r) })
	dir := b.TempDir()
	taken := time.Now()
	for b.Loop() {
		taken = taken.Add(time.Second)
		s, err := New(f, rs, taken, "sim:bench", "bench", true)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Save(dir); err != nil {
			b.Fatal(err)
		}
	}
	if err := SaveBaseline(dir, f, "sim:test", false); err != nil {
		b.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	var total int64
	for _, e := range ents {
		if st, err := os.Stat(filepath.Join(dir, e.Name())); err == nil {
			total += st.Size()
		}
	}
	b.ReportMetric(float64(total)/float64(len(f.Nodes)), "state-B/node")
}

// readings are counters read once.
type readings []checks.PortReading

func (readings) Interval() time.Duration { return 0 }

func (rs readings) Ports(fn func(checks.PortReading)) {
	for _, r := range rs {
		fn(r)
	}
}
