package snapshot

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/mad"
)

// TestIndexHostCase (review R6): gate.idx's host lookup (Index.Resolve)
// finds what a gate's own sweep finds on the same fabric
// (fabric.NodesByHost, switches left out), whatever the case of the
// names, in a file written before the keys were folded
// (testdata/gate-561534f-hostcase.idx, written by 561534f's encoder: keys
// as the descriptions have them) and in one written now. Its fabric has
// one host in two cases ("gpu001 mlx5_0", "GPU001 mlx5_1"), one as two
// FQDNs in two cases, and gpu0010, which is not gpu001. Before, a name
// that matched some key exactly found only those ("gpu001": one HCA of
// two), and another case was looked for key by key.
func TestIndexHostCase(t *testing.T) {
	data, err := os.ReadFile("testdata/gate-561534f-hostcase.idx")
	if err != nil {
		t.Fatal(err)
	}
	old, err := ParseIndex(data)
	if err != nil {
		t.Fatalf("an older gate.idx is refused: %v", err)
	}
	f, err := old.Whole()
	if err != nil {
		t.Fatal(err)
	}
	now, err := EncodeIndex(f, nil, old.TakenAt, old.Source, true)
	if err != nil {
		t.Fatal(err)
	}
	x, err := ParseIndex(now)
	if err != nil {
		t.Fatal(err)
	}
	if !x.foldedKeys || old.foldedKeys {
		t.Fatalf("folded host keys: %v in a new file, %v in 561534f's", x.foldedKeys, old.foldedKeys)
	}
	hosts := []string{
		"gpu001", "GPU001", "Gpu001", "gpu001.cluster.local", "GPU001.example",
		"gpu002", "GPU002", "gpu002.cluster.local", "gpu002.CLUSTER.LOCAL",
		"gpu0010", "gpu00", "gpu003", "gpu999", "leaf01", "",
		"GPU001 mlx5_1", "gpu001 mlx5_1", "gpu002.cluster.local mlx5_0",
	}
	for _, c := range []struct {
		name string
		x    *Index
	}{{"561534f's file", old}, {"a new file", x}} {
		for _, h := range hosts {
			var want []string
			for _, n := range f.NodesByHost(h) {
				if n.Type != mad.NodeSwitch {
					want = append(want, n.Description)
				}
			}
			var got []string
			for _, i := range c.x.Resolve([]string{h}, nil) {
				got = append(got, f.Nodes[i].Description)
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s: Resolve(%q) = %q, the own sweep's %q", c.name, h, got, want)
			}
		}
		if got := len(c.x.Resolve([]string{"gpu001"}, nil)); got != 2 {
			t.Errorf("%s: gpu001 has %d HCAs, want 2", c.name, got)
		}
	}
	if err := x.Damaged(); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkIndexResolve is a gate's host lookup in gate.idx on FatTree8k
// (8,192 HCAs): 64 hosts named as the fabric has them, 64 in upper case
// and 64 not in the fabric. Before the keys were folded, each of the
// last two was a read of every key.
func BenchmarkIndexResolve(b *testing.B) {
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
	var cas []string
	for _, n := range f.Nodes {
		if n.Type != mad.NodeSwitch {
			cas = append(cas, fabric.HostName(strings.Fields(n.Description)[0]))
		}
	}
	for _, c := range []struct {
		name string
		host func(i int) string
	}{
		{"as-named", func(i int) string { return cas[i*len(cas)/64] }},
		{"upper-case", func(i int) string { return strings.ToUpper(cas[i*len(cas)/64]) }},
		{"absent", func(i int) string { return fmt.Sprintf("login%02d", i) }},
	} {
		hosts := make([]string, 64)
		for i := range hosts {
			hosts[i] = c.host(i)
		}
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if n := len(x.Resolve(hosts, nil)); (n == 0) != (c.name == "absent") {
					b.Fatalf("%d nodes", n)
				}
			}
		})
	}
}
