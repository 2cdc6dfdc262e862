package snapshot

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
)

// damageRig is an index of a small routed tree with saved counters and
// what reading all of it gives.
type damageRig struct {
	fab  *fabric.Fabric
	data []byte
	want string
}

func newDamageRig(t testing.TB) *damageRig {
	t.Helper()
	f := routedTree(t)
	data, err := EncodeIndex(f, testCounters(f), time.Date(2026, 11, 27, 1, 2, 3, 0, time.UTC), "sim:test", true)
	if err != nil {
		t.Fatal(err)
	}
	r := &damageRig{fab: f, data: data}
	x, err := ParseIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	r.want = r.readAll(x)
	if err := x.Damaged(); err != nil {
		t.Fatal(err)
	}
	return r
}

// readAll reads everything a gate or a sweep may read of x, as text.
func (r *damageRig) readAll(x *Index) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v %q %v %v %v\n", x.TakenAt, x.Source, x.Complete, x.Accepted, x.WalkStopped)
	if g, err := x.Whole(); err != nil {
		fmt.Fprintf(&b, "whole: %v\n", err)
	} else {
		j, _ := fabric.Marshal(g)
		b.Write(j)
	}
	for _, n := range r.fab.Nodes {
		for _, p := range n.Ports {
			if p == nil {
				continue
			}
			c, ok := x.SavedCounters(n.GUID, p.Num)
			var v Saved
			vok := x.savedInto(n.GUID, p.Num, &v)
			fmt.Fprintf(&b, "%x/%d %v %v %v %v %v %v %v %v\n", n.GUID, p.Num, ok, c.Errors, c.Saturated, c.From, c.ReadAt, vok, v.names, v.vals)
			if c.XmitWait != nil {
				fmt.Fprintf(&b, " xw %d\n", *c.XmitWait)
			}
			fmt.Fprintf(&b, " peer %v\n", x.hasPeer(n.GUID, p.Num))
		}
		d, path, ok := x.nodeNamed(n.GUID)
		fmt.Fprintf(&b, "%q %v %v %v\n", d, path, ok, x.Resolve([]string{n.Description}, nil))
	}
	for lid := range uint16(x.maxLID + 2) {
		n, p, ok := x.NodeByLID(lid)
		fmt.Fprintf(&b, "lid %d %d %d %v\n", lid, n, p, ok)
	}
	fmt.Fprintf(&b, "%v\n", x.HCACensus())
	part, err := x.JobPart([]string{"gpu001", "gpu016"}, nil)
	if err == nil {
		j, _ := fabric.Marshal(part)
		b.Write(j)
	}
	fmt.Fprintf(&b, "jobpart %v\n", err)
	return b.String()
}

// flip says what a flipped bit does: "refused" (ParseIndex), "damaged"
// (found where read), "same", or the change.
func (r *damageRig) flip(bit int) string {
	data := bytes.Clone(r.data)
	data[bit/8] ^= 1 << (bit % 8)
	x, err := ParseIndex(data)
	if err != nil {
		if !strings.Contains(err.Error(), errCorrupt.Error()) {
			return "refused without saying corrupt: " + err.Error()
		}
		return "refused"
	}
	got := r.readAll(x)
	if x.Damaged() != nil {
		return "damaged"
	}
	if got != r.want {
		return "read as another fabric"
	}
	return "same"
}

// TestIndexBitFlips (trial F2): no single flipped bit of gate.idx is read
// silently as another fabric: the file is refused at open, or a block
// read is found damaged, or what is read is unchanged. Every bit of the
// header and every 7th bit after it.
func TestIndexBitFlips(t *testing.T) {
	r := newDamageRig(t)
	count := map[string]int{}
	for bit := 0; bit < 8*len(r.data); bit++ {
		if bit >= 8*headerSize && bit%7 != 0 {
			continue
		}
		what := r.flip(bit)
		count[what]++
		if what != "refused" && what != "damaged" && what != "same" {
			t.Errorf("bit %d of %d (byte %d): %s", bit, 8*len(r.data), bit/8, what)
		}
	}
	t.Logf("%d bytes: %v", len(r.data), count)
}

// FuzzIndexFlip: a flipped byte anywhere in gate.idx is refused, found
// damaged, or changes nothing read.
func FuzzIndexFlip(f *testing.F) {
	r := newDamageRig(f)
	f.Add(uint32(9733), byte(1))
	f.Add(uint32(144), byte(0x80))
	f.Add(uint32(sumMarkAt), byte(0xff))
	f.Add(uint32(len(r.data)-1), byte(1))
	f.Fuzz(func(t *testing.T, at uint32, mask byte) {
		data := bytes.Clone(r.data)
		data[int(at)%len(data)] ^= mask
		x, err := ParseIndex(data)
		if err != nil {
			return
		}
		if got := r.readAll(x); x.Damaged() == nil && got != r.want {
			t.Fatalf("byte %d ^ %#x read as another fabric", int(at)%len(data), mask)
		}
	})
}

// TestIndexWithoutSums: a file from before the checksums (no mark, no
// sums) is read as before, unchecked (docs/schema-snapshot.md).
func TestIndexWithoutSums(t *testing.T) {
	r := newDamageRig(t)
	x, err := ParseIndex(r.data)
	if err != nil {
		t.Fatal(err)
	}
	old := bytes.Clone(r.data[:x.sums.end])
	copy(old[sumMarkAt:], "\x00\x00\x00\x00")
	y, err := ParseIndex(old)
	if err != nil {
		t.Fatal(err)
	}
	if y.sums != nil {
		t.Fatal("a file without the mark is checked")
	}
	if got := r.readAll(y); got != r.want {
		t.Error("a file without checksums reads otherwise")
	}
	// With the mark but without the sums: refused.
	if _, err := ParseIndex(r.data[:x.sums.end]); err == nil {
		t.Error("a file whose sums are cut off opened")
	}
}
