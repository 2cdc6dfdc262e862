package fabric_test

import (
	"bytes"
	"syscall"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// BenchmarkReadJSONTables8k decodes topology.FatTree8k with every
// switch's table (1,280 tables of 9,473 entries, as `check --sim=FILE`
// loads a file written with its tables): the hex strings are most of the
// document, and the decode is one goroutine's.
func BenchmarkReadJSONTables8k(b *testing.B) {
	f, err := topology.Routed(topology.FatTree8k())
	if err != nil {
		b.Fatal(err)
	}
	var doc bytes.Buffer
	if err := fabric.WriteJSON(&doc, f, fabric.MarshalOptions{}); err != nil {
		b.Fatal(err)
	}
	// CPU time as well as wall time: on a shared machine the wall clock
	// measures the neighbours.
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	b.SetBytes(int64(doc.Len()))
	b.ReportAllocs()
	b.ResetTimer()
	start := cpu()
	for b.Loop() {
		if _, err := fabric.ReadJSON(bytes.NewReader(doc.Bytes())); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpu()-start)/float64(b.N)/1e9, "cpu-s/op")
}
