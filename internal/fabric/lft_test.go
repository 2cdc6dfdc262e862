package fabric

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
)

// checkLFT asserts t holds exactly want, entry by entry and through every
// accessor, with the last block's tail NoRoute.
func checkLFT(t *testing.T, lft *LFT, want []uint8) {
	t.Helper()
	v := lft.View()
	if lft.Len() != len(want) || v.Len() != len(want) {
		t.Fatalf("Len = %d, want %d", lft.Len(), len(want))
	}
	if got := lft.Bytes(); !bytes.Equal(got, want) {
		t.Fatalf("Bytes = %x, want %x", got, want)
	}
	if got := lft.AppendTo([]uint8{7}); !bytes.Equal(got[1:], want) || got[0] != 7 {
		t.Fatalf("AppendTo = %x, want 07%x", got, want)
	}
	for i := 0; i < len(want)+130 && i <= 0xffff; i++ {
		w := uint8(NoRoute)
		if i < len(want) {
			w = want[i]
		}
		if got := lft.At(uint16(i)); got != w {
			t.Fatalf("At(%d) = %d, want %d", i, got, w)
		}
		if got := v.At(uint16(i)); got != w {
			t.Fatalf("View().At(%d) = %d, want %d", i, got, w)
		}
	}
	if nb := (len(want) + 63) / 64; lft.NumBlocks() != nb {
		t.Fatalf("NumBlocks = %d, want %d", lft.NumBlocks(), nb)
	}
	for i := range lft.NumBlocks() {
		b := lft.Block(i)
		for k, v := range b {
			w := uint8(NoRoute)
			if j := i*64 + k; j < len(want) {
				w = want[j]
			}
			if v != w {
				t.Fatalf("Block(%d)[%d] = %d, want %d", i, k, v, w)
			}
		}
	}
}

func TestLFTNil(t *testing.T) {
	var lft *LFT
	v := lft.View()
	if lft.Len() != 0 || v.Len() != 0 || v.At(1) != NoRoute || lft.At(0) != NoRoute || lft.At(0xffff) != NoRoute || lft.Bytes() != nil || lft.NumBlocks() != 0 || lft.Clone() != nil {
		t.Fatal("a nil table must read as empty")
	}
	if !lft.Equal(nil) || lft.Equal(NewLFT(0)) || NewLFT(0).Equal(nil) {
		t.Fatal("nil equals only nil")
	}
}

func TestLFTSharesBlocks(t *testing.T) {
	var in BlockInterner
	a := make([]uint8, 200)
	for i := range a {
		a[i] = uint8(i % 3)
	}
	b := append([]uint8(nil), a...)
	b[150] = 9
	ta, tb := LFTFromBytes(a, &in), LFTFromBytes(b, &in)
	checkLFT(t, ta, a)
	checkLFT(t, tb, b)
	// blocks 0 and 1 are equal in both (and block 0 and 3 within a differ
	// in length only, which the NoRoute tail tells apart)
	if ta.Block(0) != tb.Block(0) || ta.Block(1) != tb.Block(1) || ta.Block(2) == tb.Block(2) {
		t.Fatal("equal blocks not shared, or different blocks shared")
	}
	if in.Distinct() != 5 { // a: 3 full + tail, b: its block 2
		t.Fatalf("Distinct = %d, want 5", in.Distinct())
	}
	// Set on a shared block copies it: tb and the interner's block keep
	// their entries.
	shared := *ta.Block(0)
	ta.Set(5, 42)
	a[5] = 42
	checkLFT(t, ta, a)
	checkLFT(t, tb, b)
	if *tb.Block(0) != shared {
		t.Fatal("Set wrote into a shared block")
	}
	// Clone: a Set on the clone leaves the original.
	c := tb.Clone()
	c.Set(0, 1)
	checkLFT(t, tb, b)
	if !tb.Equal(LFTFromBytes(b, nil)) || tb.Equal(c) || tb.Equal(ta) {
		t.Fatal("Equal")
	}
}

func TestLFTGrow(t *testing.T) {
	lft := NewLFT(3)
	checkLFT(t, lft, []uint8{NoRoute, NoRoute, NoRoute})
	lft.Set(70, 4)
	want := bytes.Repeat([]uint8{NoRoute}, 71)
	want[70] = 4
	checkLFT(t, lft, want)
	var blk LFTBlock
	for i := range blk {
		blk[i] = uint8(i)
	}
	lft.SetBlock(3, &blk, nil)
	want = append(want, bytes.Repeat([]uint8{NoRoute}, 256-71)...)
	copy(want[192:], blk[:])
	checkLFT(t, lft, want)
	lft.Truncate(193, nil)
	checkLFT(t, lft, want[:193])
	lft.Truncate(64, nil)
	checkLFT(t, lft, want[:64])
	var empty LFT
	empty.Set(0, 2)
	checkLFT(t, &empty, []uint8{2})
}

// FuzzLFT builds a table from bytes, edits it, and compares every
// accessor with the same edits on a plain slice.
func FuzzLFT(f *testing.F) {
	f.Add([]byte{1, 2, 3}, []byte{0, 5, 1, 0, 7})
	f.Add(bytes.Repeat([]byte{NoRoute}, 130), []byte{200, 1, 2})
	f.Fuzz(func(t *testing.T, entries, edits []byte) {
		var in BlockInterner
		want := append([]uint8(nil), entries...)
		lft := LFTFromBytes(entries, &in)
		other := LFTFromBytes(entries, &in) // shares every block with lft
		checkLFT(t, lft, want)
		for len(edits) >= 3 {
			lid := uint16(edits[0])<<2 | uint16(edits[1]&3)
			port := edits[2]
			switch edits[1] >> 6 {
			case 0, 1:
				lft.Set(lid, port)
				for len(want) <= int(lid) {
					want = append(want, NoRoute)
				}
				want[lid] = port
			case 2:
				n := int(lid) % (len(want) + 1)
				lft.Truncate(n, &in)
				want = want[:n]
			case 3:
				var blk LFTBlock
				for i := range blk {
					blk[i] = port + uint8(i)
				}
				i := int(lid) % 20
				lft.SetBlock(i, &blk, &in)
				for len(want) < (i+1)*64 {
					want = append(want, NoRoute)
				}
				copy(want[i*64:], blk[:])
			}
			edits = edits[3:]
		}
		checkLFT(t, lft, want)
		checkLFT(t, other, entries)
		if !lft.Equal(LFTFromBytes(want, nil)) {
			t.Fatal("Equal to its own bytes")
		}
	})
}

// FuzzLFTHex checks the JSON decoder's block-at-a-time hex reading
// against hex.DecodeString (same entries, same error) and the encoder
// against hex.EncodeToString.
func FuzzLFTHex(f *testing.F) {
	f.Add("ff0100020301")
	f.Add(strings.Repeat("07", 130) + "f")
	f.Add(strings.Repeat("0a", 64) + "zz")
	f.Fuzz(func(t *testing.T, s string) {
		var in BlockInterner
		lft, err := lftFromHex(s, &in)
		want, werr := hex.DecodeString(s)
		if (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
			t.Fatalf("error %v, hex.DecodeString's %v", err, werr)
		}
		if err != nil {
			return
		}
		checkLFT(t, lft, want)
		if got := lftHex(lft); got != hex.EncodeToString(want) {
			t.Fatalf("lftHex = %q, want %q", got, hex.EncodeToString(want))
		}
	})
}

// TestLFTPool: tables built block by block through one pool share its
// blocks; a table takes the pool it is first given; Equal holds across
// pools; block pointers and views taken before the pool grows stay valid.
func TestLFTPool(t *testing.T) {
	var in BlockInterner
	blk := func(v uint8) *LFTBlock {
		var b LFTBlock
		for i := range b {
			b[i] = v + uint8(i%3)
		}
		return &b
	}
	a, b := NewLFT(130), NewLFT(130)
	a.PutBlock(0, blk(1), &in)
	b.PutBlock(0, blk(1), &in)
	a.PutBlock(2, blk(2), &in) // entries 128, 129 kept, the rest NoRoute
	b.PutBlock(2, blk(2), nil) // b already has in as its pool
	if a.Block(0) != b.Block(0) || a.Block(2) != b.Block(2) || in.Distinct() != 2 {
		t.Fatalf("blocks not shared: Distinct %d", in.Distinct())
	}
	want := a.Bytes()
	if want[128] != 2 || want[129] != 3 || want[127] != NoRoute {
		t.Fatalf("PutBlock past Len: %x", want[120:])
	}
	first, view := a.Block(0), a.View()
	saved := *first
	// Grow the pool well past its first array through another table.
	c := a.Clone()
	for i := range 100 {
		c.Set(uint16(i*64%130), uint8(10+i))
	}
	if in.Distinct() < 40 {
		t.Fatalf("Distinct %d after 100 Sets: the pool did not grow", in.Distinct())
	}
	if *first != saved || view.At(1) != want[1] || view.At(129) != want[129] {
		t.Fatal("a block or view from before the pool grew changed")
	}
	checkLFT(t, a, want)
	checkLFT(t, b, want)
	// The same entries in another pool, and in a table with no pool.
	var other BlockInterner
	if o := LFTFromBytes(want, &other); !a.Equal(o) || !o.Equal(a) {
		t.Fatal("equal tables in different pools not Equal")
	}
	if a.Equal(c) || c.Equal(a) {
		t.Fatal("a clone's Sets leaked into Equal")
	}
	empty := NewLFT(130)
	if !empty.Equal(LFTFromBytes(bytes.Repeat([]uint8{NoRoute}, 130), &in)) || empty.Equal(a) || a.Equal(empty) {
		t.Fatal("Equal with a table without a pool")
	}
	// A table of NoRoute only takes no pool; given one later, it adopts it.
	n := in.Distinct()
	d := NewLFT(64)
	d.SetBlock(1, blk(1), &in)
	if d.Block(1) != a.Block(0) || in.Distinct() != n {
		t.Fatal("SetBlock on a table without a pool did not use the one given")
	}
}

// TestLFTConcurrentPool: tables sharing a pool are read on several
// goroutines while another goroutine edits a clone (its Sets add blocks
// and grow the pool). Run under -race.
func TestLFTConcurrentPool(t *testing.T) {
	var in BlockInterner
	e := make([]uint8, 4096)
	tabs := make([]*LFT, 8)
	for s := range tabs {
		for i := range e {
			e[i] = uint8(1 + (i+s)%7)
		}
		tabs[s] = LFTFromBytes(e, &in)
	}
	want := make([][]uint8, len(tabs))
	for s, tb := range tabs {
		want[s] = tb.Bytes()
	}
	edit := tabs[0].Clone()
	done := make(chan struct{})
	errs := make(chan string, 4)
	for g := range 3 {
		go func() {
			defer func() { errs <- "" }()
			for { // one pass at least, then until the edits end
				for s, tb := range tabs {
					v := tb.View()
					for lid := g; lid < len(want[s]); lid += 37 {
						if v.At(uint16(lid)) != want[s][lid] || tb.At(uint16(lid)) != want[s][lid] {
							errs <- "a shared table changed"
							return
						}
					}
				}
				select {
				case <-done:
					return
				default:
				}
			}
		}()
	}
	for i := range 3000 {
		edit.Set(uint16(i%4096), uint8(i))
	}
	close(done)
	for range 3 {
		if msg := <-errs; msg != "" {
			t.Fatal(msg)
		}
	}
	for s, tb := range tabs {
		checkLFT(t, tb, want[s])
	}
}

// TestBlockInternerCompact: a pool compacted once its reader is done holds
// its blocks and nothing else (no index, no room to grow into), its tables
// read the same, and adding to it again finds the blocks it has (no second
// copy) and appends new ones.
func TestBlockInternerCompact(t *testing.T) {
	var in BlockInterner
	var tables []*LFT
	var want [][]uint8
	for s := range 20 {
		b := make([]uint8, 64*5+7)
		for i := range b {
			b[i] = uint8((i/64*7 + s%6 + i%5) % 40)
		}
		tables = append(tables, LFTFromBytes(b, &in))
		want = append(want, b)
	}
	n := in.Distinct()
	if a := *in.arr.Load(); len(a) == in.n {
		t.Fatalf("test needs a pool with room past its %d blocks", n)
	}
	view := tables[3].View()
	in.Compact()
	if in.off != nil {
		t.Fatal("Compact kept the index of blocks")
	}
	if a := *in.arr.Load(); len(a) != in.n || cap(a) != in.n {
		t.Fatalf("Compact kept %d bytes (cap %d) for %d in use", len(a), cap(a), in.n)
	}
	if in.Distinct() != n {
		t.Fatalf("Distinct %d after Compact, was %d", in.Distinct(), n)
	}
	for i, lft := range tables {
		checkLFT(t, lft, want[i])
	}
	if view.At(70) != want[3][70] {
		t.Fatal("a view taken before Compact changed")
	}
	// The same entries again: every block found, none added.
	again := LFTFromBytes(want[5], &in)
	if in.Distinct() != n || !again.Equal(tables[5]) || again.Block(2) != tables[5].Block(2) {
		t.Fatalf("re-adding known blocks after Compact: Distinct %d, was %d", in.Distinct(), n)
	}
	// A new block is added once, and found after.
	c := tables[0].Clone()
	c.Set(1, 200)
	c.Set(2, 201)
	if in.Distinct() != n+2 {
		t.Fatalf("Distinct %d after two new blocks, want %d", in.Distinct(), n+2)
	}
	checkLFT(t, tables[0], want[0])
	d := tables[0].Clone()
	d.Set(1, 200)
	d.Set(2, 201)
	if in.Distinct() != n+2 || d.Block(0) != c.Block(0) {
		t.Fatal("a block added after Compact was added twice")
	}
	// Compacting an empty pool, twice, is harmless.
	var empty BlockInterner
	empty.Compact()
	empty.Compact()
	if empty.Distinct() != 0 || LFTFromBytes(want[0], &empty).Bytes()[5] != want[0][5] {
		t.Fatal("an empty pool compacted does not take blocks")
	}
}
