package snapshot

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/mad"
)

// wholeEncodeIndex is encodeIndex as it was before its sections were made
// at their final size and the block numbers written straight into theirs
// (4347510): the reference gate.idx and baseline.idx must stay equal to,
// byte for byte (TestIndexSameAsWhole, TestSaveSameAsWhole).
func wholeEncodeIndex(f *fabric.Fabric, e *ctrEnc, taken time.Time, source string, complete, withLFT bool) ([]byte, error) {
	var (
		strs    bytes.Buffer
		strAt   = map[string]uint32{}
		nodes   = make([]byte, 0, len(f.Nodes)*nodeRecSize)
		ports   []byte
		sws     []byte
		blockID []uint32
		blocks  []byte
		blockAt = map[[lftBlock]byte]uint32{}
		maxLID  uint32
	)
	str := func(s string) (uint32, uint32) {
		if s == "" {
			return 0, 0
		}
		if at, ok := strAt[s]; ok {
			return at, uint32(len(s))
		}
		at := uint32(strs.Len())
		strs.WriteString(s)
		strAt[s] = at
		return at, uint32(len(s))
	}
	nodeIdx := make(map[*fabric.Node]uint32, len(f.Nodes))
	for i, n := range f.Nodes {
		nodeIdx[n] = uint32(i)
	}
	portSlot := uint32(0)
	for _, n := range f.Nodes {
		if len(n.Ports) > 255 || len(n.Path) > 255 {
			return nil, fmt.Errorf("gate index: node 0x%016x has %d ports, path %d hops", n.GUID, len(n.Ports), len(n.Path))
		}
		var r [nodeRecSize]byte
		le.PutUint64(r[0:], n.GUID)
		le.PutUint64(r[8:], n.SystemImageGUID)
		le.PutUint32(r[16:], n.VendorID)
		le.PutUint32(r[20:], n.Revision)
		if len(n.Description) > 0xffff {
			return nil, fmt.Errorf("gate index: node 0x%016x has a %d-byte description", n.GUID, len(n.Description))
		}
		off, l := str(n.Description)
		le.PutUint32(r[24:], off)
		le.PutUint16(r[28:], uint16(l))
		le.PutUint16(r[30:], n.DeviceID)
		poff, _ := str(string(n.Path))
		le.PutUint32(r[32:], poff)
		le.PutUint32(r[36:], portSlot)
		sw := noRef
		if n.Switch != nil {
			sw = uint32(len(sws) / swRecSize)
			var s [swRecSize]byte
			x := n.Switch
			le.PutUint16(s[0:], x.LinearFDBCap)
			le.PutUint16(s[2:], x.LinearFDBTop)
			le.PutUint16(s[4:], x.MulticastCap)
			le.PutUint16(s[6:], x.LIDsPerPort)
			le.PutUint16(s[8:], x.PartitionCap)
			le.PutUint16(s[10:], x.MulticastTop)
			if x.EnhancedPort0 {
				s[12] |= 1
			}
			lft := x.LFT
			if !withLFT {
				lft = nil
			}
			if lft != nil {
				s[12] |= 2
			}
			s[13] = x.LifeTimeValue
			s[14] = x.DefaultPort
			le.PutUint32(s[16:], uint32(lft.Len()))
			le.PutUint32(s[20:], uint32(len(blockID)))
			for i := range lft.NumBlocks() {
				b := *lft.Block(i) // NoRoute past the table's end
				id, ok := blockAt[b]
				if !ok {
					id = uint32(len(blocks) / lftBlock)
					blockAt[b] = id
					blocks = append(blocks, b[:]...)
				}
				blockID = append(blockID, id)
			}
			sws = append(sws, s[:]...)
		}
		le.PutUint32(r[40:], sw)
		r[44] = byte(n.Type)
		r[45] = byte(len(n.Ports))
		r[46] = byte(len(n.Path))
		if n.Path != nil {
			r[47] = 1 // nil (not from a discovery) and empty (local) differ
		}
		ps := n.Ports
		if len(ps) > 0 && ps[0] == nil {
			// A CA's absent port 0 takes no record (a CA is most of a
			// fabric's nodes: 40 bytes each, twice with baseline.idx).
			r[47] |= noPort0
			ps = ps[1:]
		}
		nodes = append(nodes, r[:]...)

		for _, p := range ps {
			portSlot++
			var q [portRecSize]byte
			if p == nil {
				le.PutUint32(q[24:], noRef)
				ports = append(ports, q[:]...)
				continue
			}
			q[0] = 1
			q[1] = p.Num
			q[2] = p.LMC
			q[3] = byte(p.State)
			q[4] = byte(p.PhysState)
			q[5], q[6], q[7] = byte(p.WidthActive), byte(p.WidthEnabled), byte(p.WidthSupported)
			q[8], q[9] = byte(p.NeighborMTU), byte(p.MTUCap)
			le.PutUint16(q[10:], p.LID)
			le.PutUint16(q[12:], p.CapMask2)
			le.PutUint16(q[14:], uint16(p.SpeedActive))
			le.PutUint16(q[16:], uint16(p.SpeedEnabled))
			le.PutUint16(q[18:], uint16(p.SpeedSupported))
			le.PutUint32(q[20:], p.CapMask)
			rn := noRef
			if p.Remote != nil {
				if i, ok := nodeIdx[p.Remote.Node]; ok {
					rn = i
					q[28] = p.Remote.Num
				}
			}
			le.PutUint32(q[24:], rn)
			le.PutUint64(q[32:], p.GUID)
			if off, ok := e.off[p]; ok {
				// Bytes 29-31 of the record: offset of the port's saved
				// counters in the counter values section (0: none).
				q[29], q[30], q[31] = byte(off), byte(off>>8), byte(off>>16)
			}
			ports = append(ports, q[:]...)
			if p.LID != 0 && (n.Type != mad.NodeSwitch || p.Num == 0) {
				maxLID = max(maxLID, uint32(p.LID)+(1<<p.LMC)-1)
			}
		}
	}
	if maxLID > 0xffff {
		maxLID = 0xffff
	}
	// Host keys: the first word of every description as hosts are
	// matched (flagFoldedHosts), sorted.
	type hk struct {
		key  string
		node uint32
	}
	var hks []hk
	for i, n := range f.Nodes {
		if h, _, _ := strings.Cut(strings.TrimSpace(n.Description), " "); h != "" {
			hks = append(hks, hk{fabric.HostKey(h), uint32(i)})
		}
	}
	slices.SortStableFunc(hks, func(a, b hk) int { return strings.Compare(a.key, b.key) })
	hosts := make([]byte, 0, len(hks)*hostRecSize)
	for _, h := range hks {
		off, l := str(h.key)
		hosts = le.AppendUint32(hosts, off)
		hosts = le.AppendUint32(hosts, l)
		hosts = le.AppendUint32(hosts, h.node)
	}
	byGUID := make([]uint32, len(f.Nodes))
	for i := range byGUID {
		byGUID[i] = uint32(i)
	}
	slices.SortStableFunc(byGUID, func(a, b uint32) int {
		ga, gb := f.Nodes[a].GUID, f.Nodes[b].GUID
		switch {
		case ga < gb:
			return -1
		case ga > gb:
			return 1
		}
		return 0
	})
	guids := make([]byte, 0, 4*len(byGUID))
	for _, i := range byGUID {
		guids = le.AppendUint32(guids, i)
	}
	lids := make([]byte, 8*(maxLID+1))
	for i := range maxLID + 1 {
		le.PutUint32(lids[8*i:], noRef)
	}
	for i, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil || p.LID == 0 || (n.Type == mad.NodeSwitch && p.Num != 0) {
				continue
			}
			for l := uint32(p.LID); l < uint32(p.LID)+(1<<p.LMC) && l <= maxLID; l++ {
				if le.Uint32(lids[8*l:]) == noRef {
					le.PutUint32(lids[8*l:], uint32(i))
					lids[8*l+4] = p.Num
				}
			}
		}
	}
	srcOff, srcLen := str(source)

	// Block numbers take 2 bytes while there are at most 65,536 distinct
	// blocks (a 49k-node fat tree's are 4 bytes a block a switch, a
	// quarter of its gate.idx otherwise), 3 while there are at most 2^24
	// (tables that share little, such as hand-edited or randomized ones).
	idWidth := 4
	switch distinct := len(blocks) / lftBlock; {
	case distinct <= 1<<16:
		idWidth = 2
	case distinct <= 1<<24:
		idWidth = 3
	}
	ids := make([]byte, 0, idWidth*len(blockID))
	for _, id := range blockID {
		switch idWidth {
		case 2:
			ids = le.AppendUint16(ids, uint16(id))
		case 3:
			ids = append(ids, byte(id), byte(id>>8), byte(id>>16))
		default:
			ids = le.AppendUint32(ids, id)
		}
	}
	secs := [numSections][]byte{strs.Bytes(), nodes, ports, sws, ids, blocks, hosts, guids, lids, e.sets, e.vals}
	out := make([]byte, headerSize)
	copy(out, indexMagic)
	if idWidth == 3 {
		copy(out, indexMagic3)
	}
	le.PutUint64(out[8:], uint64(taken.UnixNano()))
	if complete {
		out[16] = 1
	}
	if idWidth < 4 {
		out[17] = byte(idWidth) // 0: 4-byte block numbers (as files before this byte)
	}
	le.PutUint32(out[20:], uint32(len(f.Nodes)))
	le.PutUint32(out[24:], portSlot)
	le.PutUint32(out[28:], uint32(len(sws)/swRecSize))
	le.PutUint32(out[32:], maxLID)
	le.PutUint32(out[36:], srcOff)
	le.PutUint32(out[40:], srcLen)
	copy(out[sumMarkAt:], sumMark) // the block checksums follow (indexsum.go)
	le.PutUint64(out[flagsAt:], flagFoldedHosts)
	at := uint64(len(out))
	for i, s := range secs {
		le.PutUint64(out[headerFixed+16*i:], at)
		le.PutUint64(out[headerFixed+16*i+8:], uint64(len(s)))
		at += uint64(len(s))
	}
	return (&encodedIndex{head: out, secs: secs}).bytes(), nil
}

// indexFabrics are fabrics whose gate.idx covers each layout case: a
// routed fat tree (shared blocks, 2-byte numbers, CAs without port 0),
// the same with random edits (ports removed, paths nil or empty, LMC,
// duplicate descriptions, tables cut or edited), and tables sharing no
// blocks (over 65,536 distinct: 3-byte numbers).
func indexFabrics(t *testing.T) map[string]*fabric.Fabric {
	t.Helper()
	fs := map[string]*fabric.Fabric{"small": routedSmall(t)}
	big, err := topology.Routed(topology.FatTree2{Common: topology.Common{SwitchPorts: 16}, Leaves: 8, Spines: 4, HostsPerLeaf: 8})
	if err != nil {
		t.Fatal(err)
	}
	fs["fat tree"] = big
	rng := rand.New(rand.NewPCG(13, 49))
	for trial := range 6 {
		f, err := topology.Routed(topology.FatTree2{Common: topology.Common{SwitchPorts: 8}, Leaves: 3, Spines: 2, HostsPerLeaf: 4})
		if err != nil {
			t.Fatal(err)
		}
		in := &fabric.BlockInterner{}
		for _, n := range f.Nodes {
			switch rng.IntN(6) {
			case 0:
				n.Path = nil
			case 1:
				n.Path = mad.Path{}
			case 2:
				n.Description = "same"
			}
			for i, p := range n.Ports {
				if p == nil {
					continue
				}
				switch rng.IntN(8) {
				case 0:
					if i > 0 && p.Remote == nil {
						n.Ports[i] = nil
					}
				case 1:
					p.LMC = uint8(rng.IntN(3))
				}
			}
			if s := n.Switch; s != nil && s.LFT != nil {
				b := s.LFT.Bytes()
				switch rng.IntN(3) {
				case 0:
					b = b[:rng.IntN(len(b))+1]
				case 1:
					for range 5 {
						b[rng.IntN(len(b))] = uint8(rng.IntN(9))
					}
				}
				s.LFT = fabric.LFTFromBytes(b, in)
			}
		}
		fs[fmt.Sprintf("edited %d", trial)] = f
	}
	rng2 := rand.New(rand.NewPCG(1, 2))
	const switches, top = 96, 48*1024 - 1 // 73,728 distinct blocks
	f := &fabric.Fabric{}
	for i := range switches {
		n := &fabric.Node{Type: mad.NodeSwitch, GUID: 0x1000 + uint64(i), Description: fmt.Sprintf("sw%d", i),
			Switch: &fabric.Switch{LinearFDBTop: top}}
		n.Ports = []*fabric.Port{{Node: n, Num: 0, LID: uint16(i + 1), State: mad.PortStateActive}}
		lft := make([]uint8, top+1)
		for j := range lft {
			lft[j] = uint8(rng2.IntN(64))
		}
		n.Switch.LFT = fabric.LFTFromBytes(lft, nil)
		f.Nodes = append(f.Nodes, n)
	}
	fs["distinct"] = f
	return fs
}

// TestIndexSameAsWhole: gate.idx (with the tables and every port's
// counters) and baseline.idx (the host edge, no tables) are byte for
// byte what the whole encoder made, and a fabric it refuses is refused
// with the same error.
func TestIndexSameAsWhole(t *testing.T) {
	taken := time.Date(2026, 11, 26, 21, 0, 0, 0, time.UTC)
	for name, f := range indexFabrics(t) {
		e, err := readingsEnc(everyPort{f}, taken)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			what    string
			f       *fabric.Fabric
			e       *ctrEnc
			withLFT bool
		}{{"gate.idx", f, e, true}, {"baseline.idx", hostEdge(f), newCtrEnc(), false}} {
			want, werr := wholeEncodeIndex(c.f, c.e, taken, "sim:test", true, c.withLFT)
			x, err := encodeIndex(c.f, c.e, taken, "sim:test", true, c.withLFT)
			if err != nil || werr != nil {
				t.Fatalf("%s %s: %v, whole %v", name, c.what, err, werr)
			}
			if got := x.bytes(); !bytes.Equal(got, want) {
				t.Errorf("%s %s: %d bytes, whole %d; first difference at %d", name, c.what, len(got), len(want), firstDiff(got, want))
			}
			var w bytes.Buffer
			if err := x.writeTo(&w); err != nil || !bytes.Equal(w.Bytes(), want) {
				t.Errorf("%s %s: writeTo differs from the whole encoding (%v)", name, c.what, err)
			}
		}
	}
	small := routedSmall(t)
	small.Nodes[2].Description = strings.Repeat("x", 0x10000)
	_, werr := wholeEncodeIndex(small, newCtrEnc(), taken, "", true, true)
	_, err := encodeIndex(small, newCtrEnc(), taken, "", true, true)
	if err == nil || werr == nil || err.Error() != werr.Error() {
		t.Errorf("a 64 KB description: %v, whole %v", err, werr)
	}
	small = routedSmall(t)
	n := small.Nodes[1]
	for len(n.Ports) < 256 {
		n.Ports = append(n.Ports, nil)
	}
	_, werr = wholeEncodeIndex(small, newCtrEnc(), taken, "", true, true)
	_, err = encodeIndex(small, newCtrEnc(), taken, "", true, true)
	if err == nil || werr == nil || err.Error() != werr.Error() {
		t.Errorf("256 ports: %v, whole %v", err, werr)
	}
}

// TestBlockIDWidths: block numbers widened from 2 to 4 bytes and
// narrowed to 3 keep their values.
func TestBlockIDWidths(t *testing.T) {
	vals := []uint32{0, 1, 0xffff, 0x1234, 7}
	var two []byte
	for _, v := range vals {
		two = le.AppendUint16(two, uint16(v))
	}
	four := widenIDs(two, len(vals)+1)
	four = le.AppendUint32(four, 0xabcdef)
	vals = append(vals, 0xabcdef)
	if len(four) != 4*len(vals) || cap(four) < 4*len(vals) {
		t.Fatalf("widened to %d bytes", len(four))
	}
	for i, v := range vals {
		if got := le.Uint32(four[4*i:]); got != v {
			t.Errorf("4-byte number %d is %#x, want %#x", i, got, v)
		}
	}
	three := narrowIDs(slices.Clone(four))
	if len(three) != 3*len(vals) {
		t.Fatalf("narrowed to %d bytes", len(three))
	}
	for i, v := range vals {
		if got := uint32(three[3*i]) | uint32(three[3*i+1])<<8 | uint32(three[3*i+2])<<16; got != v {
			t.Errorf("3-byte number %d is %#x, want %#x", i, got, v)
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestSaveSameAsWhole: the state Save writes is byte for byte what it
// wrote when the index was encoded before the fabric file (the fabric
// file gzip of WriteJSON without tables, gate.idx the whole encoder's
// from the readings); the readings are let go of and SavedCounters
// answers the same from their encoding, for the snapshot's own ports
// and for a loaded model's. A fabric gate.idx cannot hold keeps its
// tables in the fabric file and its counters in snapshot.json, as before.
func TestSaveSameAsWhole(t *testing.T) {
	f := routedSmall(t)
	taken := time.Date(2026, 11, 26, 21, 0, 0, 0, time.UTC)
	s, err := New(f, everyPort{f}, taken, "sim:test", "test", true)
	if err != nil {
		t.Fatal(err)
	}
	before := map[*fabric.Port]PortCounters{}
	everyPort{f}.Ports(func(r checks.PortReading) { before[r.Port] = portCountersOf(r) })
	dir := t.TempDir()
	if _, err := s.Save(dir); err != nil {
		t.Fatal(err)
	}
	e, err := readingsEnc(everyPort{f}, taken)
	if err != nil {
		t.Fatal(err)
	}
	want, err := wholeEncodeIndex(f, e, s.TakenAt, "sim:test", true, true)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, s.IndexFile)); !bytes.Equal(got, want) {
		t.Errorf("gate.idx: %d bytes, whole %d; first difference at %d", len(got), len(want), firstDiff(got, want))
	}
	var j bytes.Buffer
	if err := fabric.WriteJSON(&j, f, fabric.MarshalOptions{OmitLFT: true}); err != nil {
		t.Fatal(err)
	}
	if got := gunzip(t, filepath.Join(dir, s.FabricFile)); !bytes.Equal(got, j.Bytes()) {
		t.Errorf("fabric file: %d bytes, want %d", len(got), j.Len())
	}
	if s.readings != nil {
		t.Error("Save kept the readings after encoding them")
	}
	l, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	loaded, err := l.FabricModel()
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range f.Nodes {
		for k, p := range n.Ports {
			if p == nil {
				continue
			}
			w, wok := before[p]
			for _, q := range []*fabric.Port{p, loaded.Nodes[i].Ports[k]} {
				got, ok := s.SavedCounters(q)
				if ok != wok || (ok && (!maps.Equal(got.Errors, w.Errors) || got.From != w.From || !slices.Equal(got.Saturated, w.Saturated))) {
					t.Fatalf("%s: SavedCounters after Save %v %v, before %v %v", Key(p), got, ok, w, wok)
				}
			}
		}
	}

	// 31 counters on a port: no gate.idx.
	g := routedSmall(t)
	s, err = New(g, manyCounters{g}, taken, "sim:test", "test", true)
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	if _, err := s.Save(dir); err != nil {
		t.Fatal(err)
	}
	if s.IndexFile != "" || s.readings == nil {
		t.Errorf("index %q, readings kept %v", s.IndexFile, s.readings != nil)
	}
	if idxs, _ := filepath.Glob(filepath.Join(dir, "gate*.idx")); len(idxs) != 0 {
		err := idxs
		t.Errorf("gate.idx written for a fabric it cannot hold (%v)", err)
	}
	j.Reset()
	if err := fabric.WriteJSON(&j, g, fabric.MarshalOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := gunzip(t, filepath.Join(dir, s.FabricFile)); !bytes.Equal(got, j.Bytes()) {
		t.Errorf("fabric file without an index: %d bytes, want %d (with the tables)", len(got), j.Len())
	}
	if sj, _ := os.ReadFile(filepath.Join(dir, FileName)); !strings.Contains(string(sj), `"counters":{`) {
		t.Errorf("snapshot.json without the counters: %.300s", sj)
	}
}

// manyCounters reads 31 error counters on every port: more than gate.idx
// keeps.
type manyCounters struct{ f *fabric.Fabric }

func (manyCounters) Interval() time.Duration { return 0 }

func (c manyCounters) Ports(fn func(checks.PortReading)) {
	for _, n := range c.f.Nodes {
		for _, p := range n.Ports {
			if p == nil {
				continue
			}
			r := checks.PortReading{Port: p}
			for j := range maxCtrNames - 1 {
				r.Errors = append(r.Errors, checks.CounterValue{Name: fmt.Sprintf("Counter%02d", j), Value: uint64(j)})
			}
			fn(r)
		}
	}
}

func gunzip(t *testing.T, path string) []byte {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	z, err := gzip.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
