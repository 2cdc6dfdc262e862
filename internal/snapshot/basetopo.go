package snapshot

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/outfile"
	"github.com/ibdoctor/ibdoctor/mad"
)

// BaselineTopologyName is the accepted topology as the checks compare
// against it (checks.BaselineColumns: every node's GUID, type, LID and
// description, every cable), so that a later sweep reads it instead of
// decoding baseline.json.gz whole only to reduce it to that (at 49k
// nodes the decode was 5 CPU seconds, issue 13). baseline.idx cannot
// stand in: it holds the host edge only, without the switches further in
// and their cables. It records the size and CRC of the baseline file it
// was made from: beside any other (an older ibdoctor's accept) it is not
// used.
const BaselineTopologyName = "baseline.topo"

const (
	topoMagic = "IBDBTOP1"
	// The header: magic, the baseline file's size (8) and CRC-32C (4),
	// flags (1), then node, fabric node, cable, description byte and
	// link counts (4 each).
	topoHeadSize = 8 + 8 + 4 + 1 + 5*4
	// Flags.
	topoKeptLinks = 1 // the links are kept, not derived from the cables
	topoOfV1      = 2 // made from baseline.json, not baseline.json.gz
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// baselineFile is what baseline.topo records of the baseline file it was
// made from.
type baselineFile struct {
	v1   bool
	size uint64
	sum  uint32
}

// errNoBaseline: dir has no baseline file.
var errNoBaseline = errors.New("no baseline")

// sumBaselineFile reads dir's baseline file (baseline.json.gz, else the
// v1 baseline.json) for its size and CRC: a few MB at 49k nodes, read in
// milliseconds.
func sumBaselineFile(dir string) (baselineFile, error) {
	var bf baselineFile
	fh, err := os.Open(filepath.Join(dir, BaselineName))
	if errors.Is(err, fs.ErrNotExist) {
		bf.v1 = true
		fh, err = os.Open(filepath.Join(dir, BaselineV1Name))
		if errors.Is(err, fs.ErrNotExist) {
			return bf, errNoBaseline
		}
	}
	if err != nil {
		return bf, fmt.Errorf("baseline: %w", err)
	}
	defer fh.Close()
	h := crc32.New(castagnoli)
	n, err := io.Copy(h, fh)
	if err != nil {
		return bf, fmt.Errorf("baseline: %w", err)
	}
	bf.size, bf.sum = uint64(n), h.Sum32()
	return bf, nil
}

// WriteBaselineTopology writes baseline.topo from f, dir's baseline (the
// file just written, or decoded). The caller holds dir's Lock.
func WriteBaselineTopology(dir string, f *fabric.Fabric) error {
	bf, err := sumBaselineFile(dir)
	if err != nil {
		return err
	}
	if !roundTrips(f) {
		// The checks must compare against what the file decodes to, as
		// when it was decoded each sweep: decoded here, once.
		d, err := LoadBaseline(dir)
		if err != nil || d == nil {
			// A later sweep decodes it and fails as it did.
			return nil
		}
		f = d
	}
	c := checks.BaselineOf(f).Columns()
	if err := outfile.WriteHere(filepath.Join(dir, BaselineTopologyName), func(w io.Writer) error {
		z, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
		if err != nil {
			return err
		}
		bw := bufio.NewWriterSize(z, 64<<10)
		if err := encodeTopology(bw, bf, c); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		return z.Close()
	}); err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	return nil
}

// roundTrips says whether the baseline file written from f decodes to
// what the checks read of f itself: its nodes distinct, each a CA,
// switch or router with a description JSON keeps as it is (valid
// UTF-8), each port at its number in Ports, each cable's far end a port
// of f cabled back. A sweep's fabric is; one that is not is decoded.
func roundTrips(f *fabric.Fabric) bool {
	in := make(map[*fabric.Node]bool, len(f.Nodes))
	for _, n := range f.Nodes {
		if n == nil || in[n] {
			return false
		}
		in[n] = true
	}
	for _, n := range f.Nodes {
		switch n.Type {
		case mad.NodeCA, mad.NodeSwitch, mad.NodeRouter:
		default:
			return false
		}
		if !utf8.ValidString(n.Description) {
			return false
		}
		for i, p := range n.Ports {
			if p == nil {
				continue
			}
			if int(p.Num) != i || p.Node != n {
				return false
			}
			r := p.Remote
			if r == nil {
				continue
			}
			if r == p || r.Remote != p || r.Node == nil || !in[r.Node] || int(r.Num) >= len(r.Node.Ports) || r.Node.Ports[r.Num] != r {
				return false
			}
		}
	}
	return true
}

// encodeTopology writes the header and the columns, little-endian.
func encodeTopology(w *bufio.Writer, bf baselineFile, c checks.BaselineColumns) error {
	var h [topoHeadSize]byte
	copy(h[:], topoMagic)
	le.PutUint64(h[8:], bf.size)
	le.PutUint32(h[16:], bf.sum)
	if c.KeptLinks {
		h[20] |= topoKeptLinks
	}
	if bf.v1 {
		h[20] |= topoOfV1
	}
	for i, v := range []int{len(c.GUID), c.In, len(c.At), len(c.Desc), len(c.LinkNode) / 2} {
		if uint64(v) > 0xffffffff {
			return fmt.Errorf("baseline topology: %d too many", v)
		}
		le.PutUint32(h[21+4*i:], uint32(v))
	}
	w.Write(h[:])
	var b [8]byte
	for _, g := range c.GUID {
		le.PutUint64(b[:], g)
		w.Write(b[:8])
	}
	for _, t := range c.Type {
		w.WriteByte(byte(t))
	}
	for _, l := range c.LID {
		le.PutUint16(b[:], l)
		w.Write(b[:2])
	}
	for _, e := range c.DescEnd {
		le.PutUint32(b[:], e)
		w.Write(b[:4])
	}
	w.WriteString(c.Desc)
	for _, v := range c.First {
		le.PutUint32(b[:], uint32(v))
		w.Write(b[:4])
	}
	for _, v := range c.At {
		le.PutUint16(b[:], v)
		w.Write(b[:2])
	}
	for _, v := range c.Peer {
		le.PutUint32(b[:], uint32(v))
		w.Write(b[:4])
	}
	w.Write(c.PeerNum)
	for _, v := range c.LinkNode {
		le.PutUint32(b[:], uint32(v))
		w.Write(b[:4])
	}
	_, err := w.Write(c.LinkNum)
	return err // bufio keeps the first error
}

// topoCounts are the counts in a baseline.topo header.
type topoCounts struct {
	nodes, in, cables, desc, links uint64
}

// bodySize is how many bytes the columns of these counts take.
func (n topoCounts) bodySize() uint64 {
	return n.nodes*(8+1+2+4) + n.desc + (n.nodes+1)*4 + n.cables*(2+4+1) + n.links*2*(4+1)
}

// parseTopoHead reads a baseline.topo header.
func parseTopoHead(h []byte) (baselineFile, byte, topoCounts, error) {
	var bf baselineFile
	var n topoCounts
	if len(h) < topoHeadSize || string(h[:8]) != topoMagic {
		return bf, 0, n, fmt.Errorf("not a baseline topology")
	}
	bf.size, bf.sum = le.Uint64(h[8:]), le.Uint32(h[16:])
	flags := h[20]
	bf.v1 = flags&topoOfV1 != 0
	n.nodes, n.in, n.cables = uint64(le.Uint32(h[21:])), uint64(le.Uint32(h[25:])), uint64(le.Uint32(h[29:]))
	n.desc, n.links = uint64(le.Uint32(h[33:])), uint64(le.Uint32(h[37:]))
	return bf, flags, n, nil
}

// decodeTopology makes the Baseline a whole baseline.topo (uncompressed)
// holds, and says which baseline file it was made from.
func decodeTopology(data []byte) (baselineFile, *checks.Baseline, error) {
	bf, flags, n, err := parseTopoHead(data)
	if err != nil {
		return bf, nil, err
	}
	if uint64(len(data)-topoHeadSize) != n.bodySize() {
		return bf, nil, fmt.Errorf("%d bytes of columns, its counts need %d", len(data)-topoHeadSize, n.bodySize())
	}
	d := data[topoHeadSize:]
	take := func(k uint64) []byte {
		s := d[:k]
		d = d[k:]
		return s
	}
	c := checks.BaselineColumns{
		In:        int(n.in),
		GUID:      make([]uint64, n.nodes),
		Type:      make([]mad.NodeType, n.nodes),
		LID:       make([]uint16, n.nodes),
		DescEnd:   make([]uint32, n.nodes),
		First:     make([]int32, n.nodes+1),
		At:        make([]uint16, n.cables),
		Peer:      make([]int32, n.cables),
		KeptLinks: flags&topoKeptLinks != 0,
	}
	s := take(8 * n.nodes)
	for i := range c.GUID {
		c.GUID[i] = le.Uint64(s[8*i:])
	}
	for i, t := range take(n.nodes) {
		c.Type[i] = mad.NodeType(t)
	}
	s = take(2 * n.nodes)
	for i := range c.LID {
		c.LID[i] = le.Uint16(s[2*i:])
	}
	s = take(4 * n.nodes)
	for i := range c.DescEnd {
		c.DescEnd[i] = le.Uint32(s[4*i:])
	}
	c.Desc = string(take(n.desc))
	s = take(4 * (n.nodes + 1))
	for i := range c.First {
		c.First[i] = int32(le.Uint32(s[4*i:]))
	}
	s = take(2 * n.cables)
	for i := range c.At {
		c.At[i] = le.Uint16(s[2*i:])
	}
	s = take(4 * n.cables)
	for i := range c.Peer {
		c.Peer[i] = int32(le.Uint32(s[4*i:]))
	}
	c.PeerNum = append([]uint8(nil), take(n.cables)...)
	if n.links > 0 {
		c.LinkNode = make([]int32, 2*n.links)
		s = take(8 * n.links)
		for i := range c.LinkNode {
			c.LinkNode[i] = int32(le.Uint32(s[4*i:]))
		}
		c.LinkNum = append([]uint8(nil), take(2*n.links)...)
	}
	b, err := checks.NewBaseline(c)
	if err != nil {
		return bf, nil, err
	}
	return bf, b, nil
}

// LoadBaselineTopology reads dir's baseline as the checks compare against
// it from baseline.topo, Accepted left false (baseline.idx records it:
// BaselineAccepted). nil, nil when dir has no baseline. An error says
// why baseline.topo cannot stand for the baseline — absent (a state dir
// from before it), made from another baseline file, or damaged — and the
// caller decodes the baseline instead (LoadBaseline), saying so.
func LoadBaselineTopology(dir string) (*checks.Baseline, error) {
	bf, err := sumBaselineFile(dir)
	if errors.Is(err, errNoBaseline) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, BaselineTopologyName)
	fh, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s is absent (a state dir from before it): %w", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	corrupt := func(err error) error { return fmt.Errorf("%s is corrupt (%v)", path, err) }
	z, err := gzip.NewReader(bufio.NewReaderSize(fh, 64<<10))
	if err != nil {
		return nil, corrupt(err)
	}
	var h [topoHeadSize]byte
	if _, err := io.ReadFull(z, h[:]); err != nil {
		return nil, corrupt(err)
	}
	of, _, n, err := parseTopoHead(h[:])
	if err != nil {
		return nil, corrupt(err)
	}
	if of != bf {
		return nil, fmt.Errorf("%s is not of the %s beside it (made from another baseline, an older ibdoctor's accept or a hand-copied file)", path, map[bool]string{false: BaselineName, true: BaselineV1Name}[bf.v1])
	}
	// Deflate expands at most about 1032 to 1: counts claiming more than
	// the file can hold are not allocated.
	if size := n.bodySize(); size > 1032*uint64(st.Size()) {
		return nil, corrupt(fmt.Errorf("its counts need %d bytes, more than its %d compressed bytes hold", size, st.Size()))
	}
	data := make([]byte, topoHeadSize+n.bodySize())
	copy(data, h[:])
	if _, err := io.ReadFull(z, data[topoHeadSize:]); err != nil {
		return nil, corrupt(err)
	}
	// Read to the end, where gzip checks its CRC.
	if k, err := io.CopyN(io.Discard, z, 1); k != 0 || err != io.EOF {
		if err == nil {
			err = errors.New("bytes after the columns")
		}
		return nil, corrupt(err)
	}
	_, b, err := decodeTopology(data)
	if err != nil {
		return nil, corrupt(err)
	}
	return b, nil
}
