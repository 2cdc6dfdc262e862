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
	if lft.Len() != len(want) || lft.View().Len() != len(want) {
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
		if got := lft.View().At(uint16(i)); got != w {
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
	if lft.Len() != 0 || lft.View().Len() != 0 || lft.View().At(1) != NoRoute || lft.At(0) != NoRoute || lft.At(0xffff) != NoRoute || lft.Bytes() != nil || lft.NumBlocks() != 0 || lft.Clone() != nil {
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
	lft.SetBlock(3, &blk)
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
				lft.SetBlock(i, in.Intern(&blk))
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
