package fabric

import (
	"fmt"

	"github.com/ibdoctor/ibdoctor/mad"
)

// LFTBlock is 64 consecutive entries of a linear forwarding table, the
// unit a LinearForwardingTable SMP carries.
type LFTBlock = [mad.LFTBlockSize]uint8

// LFT is a switch's linear forwarding table: entry i is the egress port
// for destination LID i, NoRoute for none. It is held as pointers to
// 64-entry blocks so that switches with the same blocks (most of a fat
// tree's: FatTree50k has 2.9 million blocks, 490 distinct) share them
// through a BlockInterner instead of a byte per LID each.
//
// A block an LFT points to is never written once the LFT holds it (it may
// be shared); Set and SetBlock replace the pointer instead. The entries of
// the last block past Len are NoRoute, so equal tables have equal blocks.
// The methods accept a nil *LFT, a table not read: Len 0, every entry
// NoRoute.
type LFT struct {
	blocks []*LFTBlock
	n      int
}

// noRouteBlock is the block of an unrouted range; never written.
var noRouteBlock = func() *LFTBlock {
	var b LFTBlock
	for i := range b {
		b[i] = NoRoute
	}
	return &b
}()

// BlockInterner hands out one shared block per distinct content. Whoever
// builds tables (a reader, a decoder) owns one; it is not safe for
// concurrent use.
type BlockInterner struct {
	m map[LFTBlock]*LFTBlock
}

// Intern returns the shared block equal to *b, making one (a copy of *b)
// the first time. The result must not be written.
func (in *BlockInterner) Intern(b *LFTBlock) *LFTBlock {
	if in == nil {
		c := *b
		return &c
	}
	if *b == *noRouteBlock {
		return noRouteBlock
	}
	if s, ok := in.m[*b]; ok {
		return s
	}
	if in.m == nil {
		in.m = map[LFTBlock]*LFTBlock{}
	}
	c := new(LFTBlock)
	*c = *b
	in.m[*c] = c
	return c
}

// Distinct returns the number of distinct blocks interned so far (the
// all-NoRoute block not counted).
func (in *BlockInterner) Distinct() int {
	if in == nil {
		return 0
	}
	return len(in.m)
}

// NewLFT returns a table of n entries, all NoRoute.
func NewLFT(n int) *LFT {
	t := &LFT{blocks: make([]*LFTBlock, (n+mad.LFTBlockSize-1)/mad.LFTBlockSize), n: n}
	for i := range t.blocks {
		t.blocks[i] = noRouteBlock
	}
	return t
}

// LFTFromBytes returns the table holding entries b (one per LID), its
// blocks shared through in (nil: not shared).
func LFTFromBytes(b []uint8, in *BlockInterner) *LFT {
	t := &LFT{blocks: make([]*LFTBlock, (len(b)+mad.LFTBlockSize-1)/mad.LFTBlockSize), n: len(b)}
	for i := range t.blocks {
		var blk LFTBlock
		j := i * mad.LFTBlockSize
		if c := copy(blk[:], b[j:]); c < mad.LFTBlockSize {
			for k := c; k < mad.LFTBlockSize; k++ {
				blk[k] = NoRoute
			}
		}
		t.blocks[i] = in.Intern(&blk)
	}
	return t
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
	if t == nil || int(lid) >= t.n {
		return NoRoute
	}
	return t.blocks[lid/mad.LFTBlockSize][lid%mad.LFTBlockSize]
}

// LFTView reads a table as it was when View was called, one load fewer
// per entry than through the *LFT (a walk's per-hop lookup).
type LFTView struct {
	blocks []*LFTBlock
	n      int
}

// View returns a view of t's entries (of no entries for nil).
func (t *LFT) View() LFTView {
	if t == nil {
		return LFTView{}
	}
	return LFTView{t.blocks, t.n}
}

// Len returns the number of entries.
func (v LFTView) Len() int { return v.n }

// At returns the entry for lid, NoRoute beyond the end.
func (v LFTView) At(lid uint16) uint8 {
	if int(lid) >= v.n {
		return NoRoute
	}
	return v.blocks[lid/mad.LFTBlockSize][lid%mad.LFTBlockSize]
}

// NumBlocks returns the number of 64-entry blocks.
func (t *LFT) NumBlocks() int {
	if t == nil {
		return 0
	}
	return len(t.blocks)
}

// Block returns block i (entries i×64 …), entries past Len NoRoute. The
// block may be shared: it must not be written.
func (t *LFT) Block(i int) *LFTBlock { return t.blocks[i] }

// Set makes lid's entry port, growing the table to hold lid (new entries
// NoRoute). It copies the block it changes, which may be shared, so it is
// for edits (tests, a fault), not for building tables: use SetBlock or
// LFTFromBytes with an interner.
func (t *LFT) Set(lid uint16, port uint8) {
	t.grow(int(lid) + 1)
	i := int(lid) / mad.LFTBlockSize
	if t.blocks[i][lid%mad.LFTBlockSize] == port {
		return
	}
	b := *t.blocks[i]
	b[lid%mad.LFTBlockSize] = port
	t.blocks[i] = &b
}

// SetBlock makes block i b, growing the table to hold it whole. b must
// not be written afterwards (pass an interned block, or a fresh one).
func (t *LFT) SetBlock(i int, b *LFTBlock) {
	t.grow((i + 1) * mad.LFTBlockSize)
	t.blocks[i] = b
}

// Truncate cuts the table to n entries (n ≤ Len), the dropped entries of
// its last block made NoRoute in a copy.
func (t *LFT) Truncate(n int, in *BlockInterner) {
	if n >= t.n {
		return
	}
	nb := (n + mad.LFTBlockSize - 1) / mad.LFTBlockSize
	clear(t.blocks[nb:])
	t.blocks = t.blocks[:nb]
	t.n = n
	if r := n % mad.LFTBlockSize; r != 0 {
		b := *t.blocks[nb-1]
		for k := r; k < mad.LFTBlockSize; k++ {
			b[k] = NoRoute
		}
		t.blocks[nb-1] = in.Intern(&b)
	}
}

// PutBlock makes block i (< NumBlocks) *b, shared through in, for a
// table being built: the entries of b past Len are dropped (NoRoute), so
// the table does not grow.
func (t *LFT) PutBlock(i int, b *LFTBlock, in *BlockInterner) {
	if r := t.n - i*mad.LFTBlockSize; r < mad.LFTBlockSize {
		c := *b
		for k := max(r, 0); k < mad.LFTBlockSize; k++ {
			c[k] = NoRoute
		}
		b = &c
	}
	t.blocks[i] = in.Intern(b)
}

// Grow makes the table at least n entries long, the new entries NoRoute.
func (t *LFT) Grow(n int) { t.grow(n) }

func (t *LFT) grow(n int) {
	if n <= t.n {
		return
	}
	nb := (n + mad.LFTBlockSize - 1) / mad.LFTBlockSize
	for len(t.blocks) < nb {
		t.blocks = append(t.blocks, noRouteBlock)
	}
	t.n = n
}

// Bytes returns the entries as a new slice, one byte per LID.
func (t *LFT) Bytes() []uint8 {
	if t == nil {
		return nil
	}
	b := make([]uint8, t.n)
	for i, blk := range t.blocks {
		copy(b[i*mad.LFTBlockSize:], blk[:])
	}
	return b
}

// AppendTo appends the entries to b.
func (t *LFT) AppendTo(b []uint8) []uint8 {
	if t == nil {
		return b
	}
	for i, blk := range t.blocks {
		b = append(b, blk[:min(mad.LFTBlockSize, t.n-i*mad.LFTBlockSize)]...)
	}
	return b
}

// Clone returns a table with the same entries that a Set on either does
// not change in the other (the blocks stay shared).
func (t *LFT) Clone() *LFT {
	if t == nil {
		return nil
	}
	return &LFT{blocks: append([]*LFTBlock(nil), t.blocks...), n: t.n}
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
	for i, b := range t.blocks {
		if b != u.blocks[i] && *b != *u.blocks[i] {
			return false
		}
	}
	return true
}

// String shows the length and the distinct blocks, for test failures.
func (t *LFT) String() string {
	if t == nil {
		return "LFT(nil)"
	}
	return fmt.Sprintf("LFT(%d entries, %d blocks)", t.n, len(t.blocks))
}
