package checks

import (
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// BenchmarkLinkChecks8k runs the link group (every link's verdict: rates
// against the enabled, the peers' and the capability table's) on
// FatTree8k (9,472 nodes).
func BenchmarkLinkChecks8k(b *testing.B) {
	f, err := topology.Routed(topology.FatTree8k())
	if err != nil {
		b.Fatal(err)
	}
	s := &Snapshot{Fabric: f}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Run(s, "link"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMissingHCA8k runs topology.missing-hca (the hosts' census, each
// host's HCAs against its kind's) on FatTree8k.
func BenchmarkMissingHCA8k(b *testing.B) {
	f, err := topology.Routed(topology.FatTree8k())
	if err != nil {
		b.Fatal(err)
	}
	s := &Snapshot{Fabric: f}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Run(s, "topology.missing-hca"); err != nil {
			b.Fatal(err)
		}
	}
}
