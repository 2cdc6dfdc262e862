package snapshot

import (
	"fmt"
	"hash/crc32"
	"sync/atomic"
)

// gate.idx's integrity check (trial F2): the file is cut into sumBlock-
// byte blocks from its first byte, and after the sections comes one
// CRC-32C per block. A gate reads a few records of a large file, so a
// block is checked the first time a record in it is read, not the whole
// file at open: a check touches only the page the read faults in anyway.
// A block that fails its check makes the index damaged (Index.Damaged):
// what was read from it is not used, and the caller treats the file as
// missing.
const (
	sumBlock = 4096
	// sumMarkAt is where the header says the file has the checksums:
	// sumMark there, 0 in files from before them (accepted unchecked,
	// docs/schema-snapshot.md). The mark has bits in every byte, so no
	// single flipped bit turns a checked file into an unchecked one.
	sumMarkAt = 44
	sumMark   = "C4K\x5a"
)

// blockSums is the CRC-32C of each sumBlock-byte block of the parts,
// taken as one stream.
func blockSums(parts ...[]byte) []byte {
	var (
		out  []byte
		h    = crc32.New(castagnoli)
		fill int
	)
	for _, p := range parts {
		for len(p) > 0 {
			n := min(len(p), sumBlock-fill)
			h.Write(p[:n])
			p, fill = p[n:], fill+n
			if fill == sumBlock {
				out = le.AppendUint32(out, h.Sum32())
				h.Reset()
				fill = 0
			}
		}
	}
	if fill > 0 {
		out = le.AppendUint32(out, h.Sum32())
	}
	return out
}

// indexSums is what ParseIndex keeps of a checked file: where the data
// ends, the block checksums, and which blocks have passed.
type indexSums struct {
	end    uint64
	sums   []byte
	passed []atomic.Uint64 // a bit a block
	// damaged is the first block that failed, as an error.
	damaged atomic.Pointer[error]
}

// parseSums finds the checksums of data, whose sections end at end: nil
// for a file from before them.
func parseSums(data []byte, end uint64) (*indexSums, error) {
	mark := string(data[sumMarkAt : sumMarkAt+4])
	if mark == "\x00\x00\x00\x00" {
		return nil, nil
	}
	if mark != sumMark {
		return nil, fmt.Errorf("%w: its header's checksum mark is damaged", errCorrupt)
	}
	blocks := (end + sumBlock - 1) / sumBlock
	if uint64(len(data)) != end+4*blocks {
		return nil, fmt.Errorf("%w: %d bytes where its header says %d", errCorrupt, len(data), end+4*blocks)
	}
	s := &indexSums{end: end, sums: data[end:], passed: make([]atomic.Uint64, (blocks+63)/64)}
	return s, nil
}

// check says whether data[off:off+n] lies in blocks that pass their
// checksums, checking those not checked yet.
func (s *indexSums) check(data []byte, off, n uint64) bool {
	if s == nil || n == 0 {
		return true
	}
	if off+n > s.end {
		return false
	}
	for b := off / sumBlock; b <= (off+n-1)/sumBlock; b++ {
		w, bit := &s.passed[b/64], uint64(1)<<(b%64)
		if w.Load()&bit != 0 {
			continue // passed: a record read twice reads the same
		}
		if s.damaged.Load() != nil {
			return false // nothing more once the file is damaged
		}
		lo, hi := b*sumBlock, min((b+1)*sumBlock, s.end)
		if crc32.Checksum(data[lo:hi], castagnoli) != le.Uint32(s.sums[4*b:]) {
			err := fmt.Errorf("%w: bytes %d-%d fail their checksum (the file is damaged)", errCorrupt, lo, hi-1)
			s.damaged.CompareAndSwap(nil, &err)
			return false
		}
		w.Or(bit)
	}
	return true
}

// Damaged says whether a block read from the index failed its checksum:
// then records from it were read as absent, and nothing decided from the
// index may be used. nil for an index without damage found (or from
// before the checksums).
func (x *Index) Damaged() error {
	if x == nil || x.sums == nil {
		return nil
	}
	if err := x.sums.damaged.Load(); err != nil {
		if x.path != "" {
			return fmt.Errorf("%s: %w: run 'ibdoctor sweep' again", x.path, *err)
		}
		return *err
	}
	return nil
}

// Damaged says whether the snapshot's gate.idx was found damaged where
// it was read (Index.Damaged): nothing judged from this snapshot may be
// used.
func (s *Snapshot) Damaged() error {
	if s == nil {
		return nil
	}
	if err := s.idx.Damaged(); err != nil {
		return err
	}
	return s.ctrs.Damaged()
}

// CheckAll checks every block of the index: for a reader that reads the
// whole file anyway (Whole, FillLFTs).
func (x *Index) CheckAll() error {
	if x == nil || x.sums == nil {
		return nil
	}
	if !x.sums.check(x.data, 0, x.sums.end) {
		return x.Damaged()
	}
	return nil
}

// span is n bytes at off of section sec, or nil when out of the section
// or in a damaged block.
func (x *Index) span(sec int, off, n uint64) []byte {
	s := x.sec[sec]
	if off > uint64(len(s)) || n > uint64(len(s))-off {
		return nil
	}
	if !x.sums.check(x.data, x.secAt[sec]+off, n) {
		return nil
	}
	return s[off : off+n : off+n]
}

// spanUpTo is at most n bytes at off of section sec (fewer at the
// section's end), or nil as span: for records of varying length.
func (x *Index) spanUpTo(sec int, off, n uint64) []byte {
	if l := uint64(len(x.sec[sec])); off < l {
		n = min(n, l-off)
	}
	return x.span(sec, off, n)
}
