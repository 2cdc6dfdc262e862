package fabric_test

import (
	"io"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// BenchmarkWriteJSON8k writes FatTree8k (9,472 nodes, routed) as a sweep
// writes its fabric file, without the tables (gate.idx holds them): its
// garbage is made while the checks run (issue 13).
func BenchmarkWriteJSON8k(b *testing.B) {
	f, err := topology.Routed(topology.FatTree8k())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := fabric.WriteJSON(io.Discard, f, fabric.MarshalOptions{OmitLFT: true}); err != nil {
			b.Fatal(err)
		}
	}
}
