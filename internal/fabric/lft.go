package fabric

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ibdoctor/ibdoctor/mad"
)

// LFTBlock is 64 consecutive entries of a linear forwarding table, the
// unit a LinearForwardingTable SMP carries.
type LFTBlock = [mad.LFTBlockSize]uint8

// LFT is a switch's linear forwarding table: entry i is the egress port
// for destination LID i, NoRoute for none. It holds, per 64 entries, where
// its block starts in a pool of distinct blocks (a BlockInterner) shared
// with the other tables built through it: a fat tree's switches hold a
// few hundred distinct blocks among millions, and offsets, unlike
// pointers, are not scanned by the garbage collector (one pointer per
// table, to its pool). Offsets rather than block numbers save a shift
// per lookup.
//
// Offset 0 is the all-NoRoute block in every pool, and a table without a
// pool holds only that one. The entries of the last block past Len are
// NoRoute, so equal tables in one pool have equal offsets. A block in a
// pool is never written: Set and SetBlock change this table's offset
// only. The methods accept a nil *LFT, a table not read: Len 0, every
// entry NoRoute.
type LFT struct {
	pool *BlockInterner // nil while every block is NoRoute
	offs []uint32       // block i's first entry in pool.bytes()
	n    int
}

// noRouteBytes is the pool of a table without one: the all-NoRoute block
// at offset 0. Never written.
var noRouteBytes = func() []uint8 {
	b := make([]uint8, mad.LFTBlockSize)
	for i := range b {
		b[i] = NoRoute
	}
	return b
}()

// isNoRoute reports whether b is the all-NoRoute block.
func isNoRoute(b *LFTBlock) bool { return *b == LFTBlock(noRouteBytes) }

// maxPool bounds a pool's bytes so that every offset fits a uint32.
const maxPool = 1 << 32

// BlockInterner is a pool of distinct blocks, each at an offset that is a
// multiple of 64; the tables built through it (by a reader, a decoder)
// hold offsets into it and keep it alive. It is safe for concurrent use.
//
// The pool grows by copying its bytes into an array twice the size and
// publishing that array atomically; an array is never written below the
// length in use when it was published, so a reader (At, View, Block)
// needs no lock while another goroutine adds blocks for its own table,
// and a view or block pointer taken before a growth stays valid.
type BlockInterner struct {
	mu  sync.Mutex
	off map[LFTBlock]uint32 // under mu; the NoRoute block (0) not in it; nil after Compact until a block is added
	n   int                 // bytes in use, under mu
	arr atomic.Pointer[[]uint8]
}

// bytes returns the pool's blocks end to end (only the NoRoute block for
// a nil or empty pool).
func (in *BlockInterner) bytes() []uint8 {
	if in != nil {
		if a := in.arr.Load(); a != nil {
			return *a
		}
	}
	return noRouteBytes
}

// intern returns the offset of the block equal to *b, adding a copy of it
// the first time.
func (in *BlockInterner) intern(b *LFTBlock) uint32 {
	if isNoRoute(b) {
		return 0
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.internLocked(b)
}

// internLocked is intern for a block that is not all NoRoute, in.mu held.
func (in *BlockInterner) internLocked(b *LFTBlock) uint32 {
	if in.off == nil && in.n > 0 {
		in.reindexLocked()
	}
	if off, ok := in.off[*b]; ok {
		return off
	}
	var a []uint8
	if p := in.arr.Load(); p != nil {
		a = *p
	} else {
		in.off = map[LFTBlock]uint32{}
		a = make([]uint8, 16*mad.LFTBlockSize)
		copy(a, noRouteBytes)
		in.n = mad.LFTBlockSize
		in.arr.Store(&a)
	}
	if in.n == len(a) {
		if 2*uint64(len(a)) > maxPool {
			panic("fabric: more than 2^26 distinct LFT blocks in one pool")
		}
		g := make([]uint8, 2*len(a))
		copy(g, a[:in.n])
		a = g
		in.arr.Store(&a)
	}
	off := uint32(in.n)
	copy(a[off:], b[:])
	in.n += mad.LFTBlockSize
	in.off[*b] = off
	return off
}

// Compact lets go of what only adding blocks needs, for a pool whose
// tables are whole (a reader done): the index from a block to its offset,
// which is larger than the blocks themselves, and the room the pool grew
// into past its last block. Both come back if a block is added later (the
// index rebuilt from the pool). Tables, views and blocks taken before read
// the same after.
func (in *BlockInterner) Compact() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.off = nil
	if p := in.arr.Load(); p != nil && cap(*p) > in.n {
		a := make([]uint8, in.n)
		copy(a, (*p)[:in.n])
		in.arr.Store(&a)
	}
}

// reindexLocked rebuilds the index Compact let go of, in.mu held.
func (in *BlockInterner) reindexLocked() {
	a := *in.arr.Load()
	in.off = make(map[LFTBlock]uint32, in.n/mad.LFTBlockSize)
	for off := mad.LFTBlockSize; off < in.n; off += mad.LFTBlockSize {
		in.off[LFTBlock(a[off:off+mad.LFTBlockSize])] = uint32(off)
	}
}

// Distinct returns the number of distinct blocks in the pool (the
// all-NoRoute block not counted).
func (in *BlockInterner) Distinct() int {
	if in == nil {
		return 0
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return max(in.n/mad.LFTBlockSize-1, 0)
}

// NewLFT returns a table of n entries, all NoRoute.
func NewLFT(n int) *LFT {
	return &LFT{offs: make([]uint32, (n+mad.LFTBlockSize-1)/mad.LFTBlockSize), n: n}
}

// LFTFromBytes returns the table holding entries b (one per LID), its
// blocks in pool in (nil: a pool of its own).
func LFTFromBytes(b []uint8, in *BlockInterner) *LFT {
	t := NewLFT(len(b))
	locked := false // the pool's lock is taken once for the whole table
	for i := range t.offs {
		var blk LFTBlock
		j := i * mad.LFTBlockSize
		if c := copy(blk[:], b[j:]); c < mad.LFTBlockSize {
			for k := c; k < mad.LFTBlockSize; k++ {
				blk[k] = NoRoute
			}
		}
		if isNoRoute(&blk) {
			continue
		}
		if !locked {
			if in == nil {
				in = new(BlockInterner)
			}
			t.pool, locked = in, true
			in.mu.Lock()
		}
		t.offs[i] = in.internLocked(&blk)
	}
	if locked {
		in.mu.Unlock()
	}
	return t
}

// put makes block i *b, in t's pool; a table without one takes in (a new
// pool for nil) when it first holds a block that is not all NoRoute.
func (t *LFT) put(i int, b *LFTBlock, in *BlockInterner) {
	if isNoRoute(b) {
		t.offs[i] = 0
		return
	}
	if t.pool == nil {
		if in == nil {
			in = new(BlockInterner)
		}
		t.pool = in
	}
	t.offs[i] = t.pool.intern(b)
}

// Len returns the number of entries (LinearFDBTop+1 for a table read
// whole).
func (t *LFT) Len() int {
	if t == nil {
		return 0
	}
	return t.n
}

// At returns the entry for lid, NoRoute beyond the end.
func (t *LFT) At(lid uint16) uint8 {
	// Past Len in the last block the entries are NoRoute: the block count
	// bounds the lookup.
	if t == nil || int(lid/mad.LFTBlockSize) >= len(t.offs) {
		return NoRoute
	}
	off := t.offs[lid/mad.LFTBlockSize]
	if off == 0 {
		return NoRoute
	}
	return (*t.pool.arr.Load())[off+uint32(lid%mad.LFTBlockSize)]
}

// LFTView reads a table with one load fewer per entry than through the
// *LFT (a walk's per-hop lookup). It is valid until the table changes.
// Its methods take a pointer: the view is larger than the compiler keeps
// in registers, and a value receiver would copy it at every lookup.
type LFTView struct {
	offs  []uint32
	bytes []uint8
	n     int
}

// View returns a view of t's entries (of no entries for nil).
func (t *LFT) View() LFTView {
	if t == nil {
		return LFTView{}
	}
	return LFTView{t.offs, t.pool.bytes(), t.n}
}

// Len returns the number of entries.
func (v *LFTView) Len() int { return v.n }

// At returns the entry for lid, NoRoute beyond the end.
func (v *LFTView) At(lid uint16) uint8 {
	if x := int(lid / mad.LFTBlockSize); x < len(v.offs) {
		return v.bytes[v.offs[x]+uint32(lid%mad.LFTBlockSize)]
	}
	return NoRoute
}

// NumBlocks returns the number of 64-entry blocks.
func (v *LFTView) NumBlocks() int { return len(v.offs) }

// Block returns block i (< NumBlocks), entries past Len NoRoute: a walk
// to the LIDs of one block looks the block up once per switch, not once
// per LID. The block is shared: it must not be written.
func (v *LFTView) Block(i int) *LFTBlock {
	off := v.offs[i]
	return (*LFTBlock)(v.bytes[off : off+mad.LFTBlockSize])
}

// NumBlocks returns the number of 64-entry blocks.
func (t *LFT) NumBlocks() int {
	if t == nil {
		return 0
	}
	return len(t.offs)
}

// Block returns block i (entries i×64 …), entries past Len NoRoute. The
// block is shared: it must not be written.
func (t *LFT) Block(i int) *LFTBlock {
	off := t.offs[i]
	return (*LFTBlock)(t.pool.bytes()[off : off+mad.LFTBlockSize])
}

// Set makes lid's entry port, growing the table to hold lid (new entries
// NoRoute). The changed block goes into the table's pool, and each
// distinct intermediate block of a run of Sets stays there, so Set is for
// edits (tests, a fault), not for building tables: use PutBlock or
// LFTFromBytes.
func (t *LFT) Set(lid uint16, port uint8) {
	t.grow(int(lid) + 1)
	i := int(lid) / mad.LFTBlockSize
	b := *t.Block(i)
	if b[lid%mad.LFTBlockSize] == port {
		return
	}
	b[lid%mad.LFTBlockSize] = port
	t.put(i, &b, nil)
}

// SetBlock makes block i *b, growing the table to hold it whole; the
// block goes into the table's pool, in for a table that has none yet.
func (t *LFT) SetBlock(i int, b *LFTBlock, in *BlockInterner) {
	t.grow((i + 1) * mad.LFTBlockSize)
	t.put(i, b, in)
}

// Truncate cuts the table to n entries (n ≤ Len), the dropped entries of
// its last block made NoRoute in a copy.
func (t *LFT) Truncate(n int, in *BlockInterner) {
	if n >= t.n {
		return
	}
	nb := (n + mad.LFTBlockSize - 1) / mad.LFTBlockSize
	t.offs = t.offs[:nb]
	t.n = n
	if r := n % mad.LFTBlockSize; r != 0 {
		b := *t.Block(nb - 1)
		for k := r; k < mad.LFTBlockSize; k++ {
			b[k] = NoRoute
		}
		t.put(nb-1, &b, in)
	}
}

// PutBlock makes block i (< NumBlocks) *b, in the table's pool (in for a
// table that has none yet), for a table being built: the entries of b
// past Len are dropped (NoRoute), so the table does not grow.
func (t *LFT) PutBlock(i int, b *LFTBlock, in *BlockInterner) {
	if r := t.n - i*mad.LFTBlockSize; r < mad.LFTBlockSize {
		c := *b
		for k := max(r, 0); k < mad.LFTBlockSize; k++ {
			c[k] = NoRoute
		}
		b = &c
	}
	t.put(i, b, in)
}

// Grow makes the table at least n entries long, the new entries NoRoute.
func (t *LFT) Grow(n int) { t.grow(n) }

func (t *LFT) grow(n int) {
	if n <= t.n {
		return
	}
	nb := (n + mad.LFTBlockSize - 1) / mad.LFTBlockSize
	for len(t.offs) < nb {
		t.offs = append(t.offs, 0)
	}
	t.n = n
}

// Bytes returns the entries as a new slice, one byte per LID.
func (t *LFT) Bytes() []uint8 {
	if t == nil {
		return nil
	}
	b := make([]uint8, t.n)
	p := t.pool.bytes()
	for i, off := range t.offs {
		copy(b[i*mad.LFTBlockSize:], p[off:off+mad.LFTBlockSize])
	}
	return b
}

// AppendTo appends the entries to b.
func (t *LFT) AppendTo(b []uint8) []uint8 {
	if t == nil {
		return b
	}
	p := t.pool.bytes()
	for i, off := range t.offs {
		b = append(b, p[off:off+uint32(min(mad.LFTBlockSize, t.n-i*mad.LFTBlockSize))]...)
	}
	return b
}

// Clone returns a table with the same entries that a Set on either does
// not change in the other (the pool stays shared).
func (t *LFT) Clone() *LFT {
	if t == nil {
		return nil
	}
	return &LFT{pool: t.pool, offs: slices.Clone(t.offs), n: t.n}
}

// Equal reports whether t and u hold the same entries (nil equals only
// nil).
func (t *LFT) Equal(u *LFT) bool {
	if t == nil || u == nil {
		return t == u
	}
	if t.n != u.n {
		return false
	}
	// In one pool a block has one offset, and 0 is NoRoute in every pool.
	if t.pool == u.pool || t.pool == nil || u.pool == nil {
		return slices.Equal(t.offs, u.offs)
	}
	tp, up := t.pool.bytes(), u.pool.bytes()
	for i, off := range t.offs {
		if LFTBlock(tp[off:]) != LFTBlock(up[u.offs[i]:]) {
			return false
		}
	}
	return true
}

// String shows the length and the blocks, for test failures.
func (t *LFT) String() string {
	if t == nil {
		return "LFT(nil)"
	}
	return fmt.Sprintf("LFT(%d entries, %d blocks)", t.n, len(t.offs))
}
