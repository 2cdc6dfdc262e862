package fabric

import "testing"

// benchTables makes n tables of 49,152 entries (768 blocks) sharing their
// blocks through one interner, a few hundred distinct blocks in all like a
// fat tree's.
func benchTables(n int) []*LFT {
	var in BlockInterner
	b := make([]uint8, 49152)
	ts := make([]*LFT, n)
	for s := range ts {
		for lid := range b {
			b[lid] = uint8(1 + (lid/8+s%16)%36 ^ (lid>>12)&7)
		}
		ts[s] = LFTFromBytes(b, &in)
	}
	return ts
}

// BenchmarkLFTViewAt is a walk's per-hop lookup, through a slice of
// views as route.Analyzer holds them: seq reads one table in LID order,
// walk reads 512 tables at pseudo-random switches and LIDs (the cache
// misses of a route walk over a large fabric).
func BenchmarkLFTViewAt(b *testing.B) {
	ts := benchTables(512)
	vs := make([]LFTView, len(ts))
	for i, t := range ts {
		vs[i] = t.View()
	}
	b.Run("seq", func(b *testing.B) {
		var sum int
		for i := 0; i < b.N; i++ {
			sum += int(vs[3].At(uint16(i % 49152)))
		}
		sink = sum
	})
	b.Run("walk", func(b *testing.B) {
		x := uint32(2463534242)
		var sum int
		for i := 0; i < b.N; i++ {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			sum += int(vs[x%512].At(uint16(x>>9) % 49152))
		}
		sink = sum
	})
}

// BenchmarkLFTAt is the same walk through the *LFT.
func BenchmarkLFTAt(b *testing.B) {
	ts := benchTables(512)
	b.ResetTimer()
	x := uint32(2463534242)
	var sum int
	for i := 0; i < b.N; i++ {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		sum += int(ts[x%512].At(uint16(x>>9) % 49152))
	}
	sink = sum
}

// BenchmarkLFTFromBytes is building a table of 768 blocks through an
// interner that already holds its blocks (the common case when reading).
func BenchmarkLFTFromBytes(b *testing.B) {
	var in BlockInterner
	e := make([]uint8, 49152)
	for lid := range e {
		e[lid] = uint8(1 + (lid/8)%36)
	}
	LFTFromBytes(e, &in)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		LFTFromBytes(e, &in)
	}
}

var sink int
