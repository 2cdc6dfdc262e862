package snapshot

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/outfile"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/mad"
)

func routedTree(t testing.TB) *fabric.Fabric {
	t.Helper()
	f, err := topology.Routed(topology.FatTree2{Common: topology.Common{SwitchPorts: 8}, Leaves: 4, Spines: 4, HostsPerLeaf: 4})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func testCounters(f *fabric.Fabric) map[string]PortCounters {
	c := map[string]PortCounters{}
	for i, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil || p.Num == 0 || i%3 == 0 {
				continue
			}
			pc := PortCounters{Errors: map[string]uint64{"SymbolErrorCounter": uint64(i * 7), "LinkDownedCounter": 0, "PortRcvErrors": uint64(p.Num)}}
			if i%5 == 0 {
				pc.Errors["SymbolErrorCounter"] = 65535
				pc.Saturated = []string{"SymbolErrorCounter"}
			}
			// PortXmitWait on most ports, 0 on some, saturated on a few.
			if i%4 != 1 {
				w := uint64(i * 1000 * int(p.Num) % 7)
				if i%7 == 0 {
					w = 1<<32 - 1
					pc.Saturated = append(pc.Saturated, "PortXmitWait")
				}
				pc.XmitWait = &w
			}
			c[Key(p)] = pc
		}
	}
	return c
}

// TestIndexRoundTrip: every node materialized from gate.idx is the node
// saved (the JSON encodings agree byte for byte), and every port's saved
// counters come back.
func TestIndexRoundTrip(t *testing.T) {
	f := routedTree(t)
	f.Nodes[0].Path = nil
	ctr := testCounters(f)
	taken := time.Date(2026, 11, 23, 1, 2, 3, 4, time.UTC)
	data, err := EncodeIndex(f, ctr, taken, "sim:test", true)
	if err != nil {
		t.Fatal(err)
	}
	x, err := ParseIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	if !x.TakenAt.Equal(taken) || x.Source != "sim:test" || !x.Complete {
		t.Errorf("header: %v %q %v", x.TakenAt, x.Source, x.Complete)
	}
	all := map[uint32]bool{}
	for i := range f.Nodes {
		all[uint32(i)] = true
	}
	g, err := x.build(all, all)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := fabric.Marshal(f)
	got, _ := fabric.Marshal(g)
	if !bytes.Equal(want, got) {
		wl, gl := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
		for i := range min(len(wl), len(gl)) {
			if !bytes.Equal(wl[i], gl[i]) {
				t.Errorf("fabric from the index differs from the saved one at line %d: %s vs %s", i+1, gl[i], wl[i])
				break
			}
		}
	}
	for i, n := range f.Nodes {
		if (n.Path == nil) != (g.Nodes[i].Path == nil) {
			t.Errorf("node %d path nil-ness changed", i)
		}
		for _, p := range n.Ports {
			if p == nil {
				continue
			}
			w, wok := ctr[Key(p)]
			c, ok := x.SavedCounters(n.GUID, p.Num)
			if ok != wok || (ok && (!maps.Equal(c.Errors, w.Errors) || !slices.Equal(slices.Sorted(slices.Values(c.Saturated)), slices.Sorted(slices.Values(w.Saturated))) ||
				(c.XmitWait == nil) != (w.XmitWait == nil) || (c.XmitWait != nil && *c.XmitWait != *w.XmitWait))) {
				t.Errorf("%s: counters %v %+v, want %v %+v", Key(p), ok, c, wok, w)
			}
		}
		if n.Type != 2 { // switches are never hosts
			if got := x.Resolve([]string{n.Description}, nil); len(got) != 1 || got[0] != uint32(i) {
				t.Errorf("Resolve(%q) = %v, want [%d]", n.Description, got, i)
			}
		}
	}
	for _, p := range f.Nodes[len(f.Nodes)-1].Ports {
		if p != nil && p.LID != 0 {
			if n, port, ok := x.NodeByLID(p.LID); !ok || n != uint32(len(f.Nodes)-1) || port != p.Num {
				t.Errorf("NodeByLID(%d) = %d/%d %v", p.LID, n, port, ok)
			}
		}
	}
}

// TestIndexSubFabricScope: the sub-fabric of a job has the job's scope —
// the same ports and switches checks.ScopeFor finds on the whole fabric.
func TestIndexSubFabricScope(t *testing.T) {
	f := routedTree(t)
	data, err := EncodeIndex(f, nil, time.Now(), "sim:test", true)
	if err != nil {
		t.Fatal(err)
	}
	x, err := ParseIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, hosts := range [][]string{{"gpu001", "gpu016"}, {"gpu001", "gpu002"}, {"gpu005", "gpu009", "gpu013"}} {
		seeds := x.Resolve(hosts, nil)
		g, err := x.SubFabric(seeds)
		if err != nil {
			t.Fatal(err)
		}
		var fullNodes, subNodes []*fabric.Node
		for _, h := range hosts {
			fullNodes = append(fullNodes, f.NodesByHost(h)...)
			subNodes = append(subNodes, g.NodesByHost(h)...)
		}
		full, sub := checks.ScopeFor(f, fullNodes), checks.ScopeFor(g, subNodes)
		names := func(sc *checks.Scope) (ps, ss []string) {
			for p := range sc.Ports {
				ps = append(ps, Key(p))
			}
			for s := range sc.Switches {
				ss = append(ss, s.Description)
			}
			slices.Sort(ps)
			slices.Sort(ss)
			return
		}
		fp, fs := names(full)
		sp, ss := names(sub)
		if !slices.Equal(fp, sp) || !slices.Equal(fs, ss) {
			t.Errorf("%v: scope of the sub-fabric (%d nodes) differs: ports %d vs %d, switches %v vs %v", hosts, len(g.Nodes), len(sp), len(fp), ss, fs)
		}
		if len(g.Nodes) >= len(f.Nodes) && len(hosts) < 3 {
			t.Logf("%v: sub-fabric has all %d nodes", hosts, len(g.Nodes))
		}
	}
}

// FuzzIndex: any bytes are refused or read without a panic.
func FuzzIndex(f *testing.F) {
	fab := routedTree(f)
	data, err := EncodeIndex(fab, testCounters(fab), time.Now(), "sim:test", true)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	// The same without its checksums (a file from before them): read
	// unchecked, so the fuzzer's changes reach the decoder.
	if x, err := ParseIndex(data); err == nil {
		old := bytes.Clone(data[:x.sums.end])
		copy(old[sumMarkAt:], "\x00\x00\x00\x00")
		f.Add(old)
	}
	f.Add(data[:headerSize])
	f.Add([]byte(indexMagic))
	f.Add([]byte(indexMagic3))
	as3 := append([]byte(indexMagic3), data[8:]...)
	as3[17] = 3
	f.Add(as3)
	// The fabric a snapshot's fabric file decodes to (no tables), which
	// FillLFTs completes from the index.
	bare, err := fabric.MarshalWith(fab, fabric.MarshalOptions{OmitLFT: true})
	if err != nil {
		f.Fatal(err)
	}
	noLFT, err := fabric.Unmarshal(bare)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		x, err := ParseIndex(data)
		if err != nil {
			return
		}
		seeds := x.Resolve([]string{"gpu001", "gpu016", "leaf01"}, fabric.NodeNameMap{fab.Nodes[0].GUID: "gpu001"})
		x.SubFabric(append(seeds, 0, 1, 1<<30), 2, 1<<30)
		x.JobPart([]string{"gpu001", "gpu016"}, nil)
		x.SavedCounters(fab.Nodes[3].GUID, 1)
		// SavedInto's decoding (its name sets cached across ports)
		// answers as SavedCounters'.
		var v Saved
		for _, n := range fab.Nodes[:min(len(fab.Nodes), 12)] {
			for p := range uint8(4) {
				ok := x.savedInto(n.GUID, p, &v)
				c, cok := x.SavedCounters(n.GUID, p)
				if !sameSaved(&v, ok, c, cok) {
					t.Fatalf("%#x/%d: savedInto %v %+v, SavedCounters %v %+v", n.GUID, p, ok, savedOf(&v), cok, c)
				}
			}
		}
		x.NodeByLID(5)
		x.FillLFTs(noLFT)
	})
}

// TestOpenIndex: the file sweep writes opens; a truncated one is refused.
func TestOpenIndex(t *testing.T) {
	dir := t.TempDir()
	fab := routedTree(t)
	data, _ := EncodeIndex(fab, nil, time.Now(), "sim:test", true)
	if err := outfile.WriteAtomic(filepath.Join(dir, IndexName), data); err != nil {
		t.Fatal(err)
	}
	x, err := OpenIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	if x.Source != "sim:test" {
		t.Errorf("source %q", x.Source)
	}
	x.Close()
	outfile.WriteAtomic(filepath.Join(dir, IndexName), data[:len(data)/2])
	if _, err := OpenIndex(dir); err == nil {
		t.Error("a truncated index opened")
	}
}

// TestWiden: a port of the job's part with no peer there, but one in the
// sweep, makes FabricFor's fabric the whole one (once); a port without a
// cable in the sweep does not.
func TestWiden(t *testing.T) {
	f := routedTree(t)
	dir := t.TempDir()
	s, err := New(f, nil, time.Now(), "sim:test", "test", true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Save(dir); err != nil {
		t.Fatal(err)
	}
	g, err := LoadForGate(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	part, err := g.FabricFor([]string{"gpu001", "gpu002"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(part.Nodes) >= len(f.Nodes) {
		t.Fatalf("the job's part has all %d nodes", len(part.Nodes))
	}
	var cut, uncabled *fabric.Port
	for _, n := range part.Nodes {
		for _, p := range n.Ports {
			if p == nil || p.Num == 0 || p.Remote != nil {
				continue
			}
			if full := f.NodeByGUID(n.GUID).Ports[p.Num]; full.Remote != nil {
				cut = p
			} else {
				uncabled = p
			}
		}
	}
	if cut == nil {
		t.Fatal("no port of the part lost its peer")
	}
	if uncabled != nil && g.Widen(map[*fabric.Port]bool{uncabled: true}) {
		t.Error("an uncabled port widened the fabric")
	}
	if !g.Widen(map[*fabric.Port]bool{cut: true}) {
		t.Fatal("a port whose peer is outside the part did not widen it")
	}
	whole, _ := g.FabricFor([]string{"gpu001", "gpu002"}, nil)
	if len(whole.Nodes) != len(f.Nodes) || g.Widen(map[*fabric.Port]bool{cut: true}) {
		t.Errorf("after Widen: %d of %d nodes, or widened twice", len(whole.Nodes), len(f.Nodes))
	}
}

// OpenSM's tables on a 49k-node fabric have more than 65,536 distinct
// blocks; their numbers then take 3 bytes (4 before, a quarter of the
// ids section wasted), and every table reads back as written.
func TestIndexManyDistinctBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const switches, top = 96, 48*1024 - 1 // 96 × 768 = 73,728 distinct blocks
	f := &fabric.Fabric{}
	for i := range switches {
		n := &fabric.Node{Type: mad.NodeSwitch, GUID: 0x1000 + uint64(i), Description: fmt.Sprintf("sw%d", i),
			Switch: &fabric.Switch{LinearFDBTop: top}}
		n.Ports = []*fabric.Port{{Node: n, Num: 0, LID: uint16(i + 1), State: mad.PortStateActive}}
		lft := make([]uint8, top+1)
		for j := range lft {
			lft[j] = uint8(rng.IntN(64))
		}
		n.Switch.LFT = fabric.LFTFromBytes(lft, nil)
		f.Nodes = append(f.Nodes, n)
	}
	data, err := EncodeIndex(f, nil, time.Unix(1, 0), "test", true)
	if err != nil {
		t.Fatal(err)
	}
	x, err := ParseIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	if ids, want := len(x.sec[secBlockIDs]), 3*switches*(top+1)/64; ids != want {
		t.Errorf("block numbers take %d bytes, want %d (3 a block)", ids, want)
	}
	// An ibdoctor that knows only IBDGIDX1 reads 4-byte numbers: it must
	// not take this file for one.
	if string(data[:8]) == indexMagic {
		t.Errorf("3-byte block numbers under the magic %s", indexMagic)
	}
	w, err := x.Whole()
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range w.Nodes {
		if !n.Switch.LFT.Equal(f.Nodes[i].Switch.LFT) {
			t.Fatalf("%s: table read back differs", n.Description)
		}
	}
}
