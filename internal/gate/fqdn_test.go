package gate

import (
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// TestResolveFQDN: Slurm names hosts short ("gpu001") while node_desc is
// often the FQDN ("gpu001.cluster.local mlx5_0"); both name one host, as
// does a --nodes given as the FQDN. Before, --nodes gpu001 found only the
// short-named HCAs (trial B10).
func TestResolveFQDN(t *testing.T) {
	f := build(t, topology.FatTree2{Leaves: 2, Spines: 2, HostsPerLeaf: 4, Hosts: topology.Hosts{HCAsPerServer: 2}})
	renamed := 0
	for _, n := range f.Nodes {
		if strings.HasPrefix(n.Description, "gpu001 ") && renamed == 0 {
			n.Description = strings.Replace(n.Description, "gpu001", "gpu001.cluster.local", 1)
			renamed++
		}
	}
	if renamed != 1 {
		t.Fatal("no gpu001 HCA to rename")
	}
	for _, h := range []string{"gpu001", "gpu001.cluster.local"} {
		nodes, unmatched := Resolve(f, []string{h}, nil)
		if len(nodes) != 2 || len(unmatched) != 0 {
			t.Errorf("Resolve(%q): %d nodes, unmatched %v; want gpu001's 2 HCAs", h, len(nodes), unmatched)
		}
	}
	// gpu0010 is not gpu001.
	if nodes, _ := Resolve(f, []string{"gpu00"}, nil); len(nodes) != 0 {
		t.Errorf("Resolve(gpu00) found %d nodes", len(nodes))
	}
}
