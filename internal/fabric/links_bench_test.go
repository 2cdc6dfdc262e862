package fabric_test

import (
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// BenchmarkLinks8k lists FatTree8k's links (9,472 nodes): checks, the
// summary and the page each list them.
func BenchmarkLinks8k(b *testing.B) {
	f, err := topology.FatTree8k().Build()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if len(f.Links()) == 0 {
			b.Fatal("no links")
		}
	}
}
