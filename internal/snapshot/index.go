package snapshot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
	"golang.org/x/sys/unix"
)

// IndexName is the gate's state file in the state directory: the
// snapshot's fabric and saved counters in a binary layout made for one
// job's question (docs/architecture.md, "Gate state"). A gate maps it
// and reads only the records of the job's hosts, the switches on their
// routes and the neighbours of those, instead of decoding the whole
// fabric from JSON. snapshot.json stays the format for people and
// scripts; this file is ibdoctor's own and may change with any version.
const IndexName = "gate.idx"

const (
	indexMagic = "IBDGIDX1"
	// indexMagic3 marks a file whose block numbers take 3 bytes, so that
	// an ibdoctor from before them refuses it instead of reading them as 4.
	indexMagic3  = "IBDGIDX3"
	noRef        = ^uint32(0)
	nodeRecSize  = 48
	portRecSize  = 40
	swRecSize    = 28
	hostRecSize  = 12
	lftBlock     = 64
	maxCtrNames  = 32
	headerFixed  = 48
	numSections  = 11
	headerSize   = flagsAt + 16
	maxRouteHops = 64
	// acceptedAt is the header byte that is 1 in a baseline.idx the
	// operator accepted (`baseline accept`), 0 in one a first sweep took
	// by itself and in every file from before the byte was kept.
	acceptedAt = 18
	// walkStoppedAt is the header byte that is 1 when the sweep's walk
	// stopped at a node that did not answer NodeInfo: a host not in the
	// file may be behind it (a gate says it could not be looked for). 0
	// in files from before the byte was kept.
	walkStoppedAt = 19
)

const (
	// flagsAt is where the section table ends and, in files written
	// since 2026-11-27, 16 bytes follow it: the format's flags (8 bytes,
	// little endian; 8 more kept for later ones) for changes an older
	// ibdoctor may read past: it reads the table alone and the sections
	// where the table says, so it skips them. A reader tells the two
	// headers apart by where the first section starts.
	flagsAt       = headerFixed + numSections*16
	oldHeaderSize = flagsAt
	// flagFoldedHosts says the host section's keys are fabric.HostKey's
	// (lower case, the first label), sorted so: a lookup is one binary
	// search whatever the case of the name. Before, the keys were the
	// first words as written.
	flagFoldedHosts = 1 << 0
)

// Sections, in the order of the header's section table.
const (
	secStrings = iota
	secNodes
	secPorts
	secSwitches
	secBlockIDs
	secBlocks
	secHosts  // host key -> node, sorted by key
	secGUIDs  // node indexes sorted by GUID
	secLIDs   // LID -> (node, port), 8 bytes per LID
	secCtrSet // counter name sets
	secCtrVal // per port: nonzero bitmap, saturated bitmap, uvarints
)

var le = binary.LittleEndian

// Bits of a port's saturated bitmap in secCtrVal that keep
// PortCounters.From (names use the bits below).
const (
	ctrFromKnown  = 1 << 31
	ctrFromNarrow = 1 << 30
)

// ctrReadAt is the bit of a port's nonzero bitmap in secCtrVal (names
// use the bits below it) that says a varint follows the values: when the
// sweep read the port (PortCounters.ReadAt), in milliseconds from the
// index's TakenAt. A later sweep or a gate times the port's growth from
// it, not from the counter pass's start: a port read late in a long pass
// has its own span. An ibdoctor before it reads only the names' bits.
const ctrReadAt = 1 << 31

// EncodeIndex lays f and the saved counters out as gate.idx.
func EncodeIndex(f *fabric.Fabric, counters map[string]PortCounters, taken time.Time, source string, complete bool) ([]byte, error) {
	e, err := countersEnc(f, counters, taken)
	if err != nil {
		return nil, err
	}
	x, err := encodeIndex(f, e, taken, source, complete, true)
	if err != nil {
		return nil, err
	}
	return x.bytes(), nil
}

// countersEnc encodes the saved counters of f's ports, in f's order;
// their read times from taken, the index's TakenAt.
func countersEnc(f *fabric.Fabric, counters map[string]PortCounters, taken time.Time) (*ctrEnc, error) {
	e := newCtrEnc()
	e.base = taken
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil {
				continue
			}
			if c, ok := counters[Key(p)]; ok && c.Errors != nil {
				if err := e.add(p, c); err != nil {
					return nil, err
				}
			}
		}
	}
	return e, nil
}

// readingsEnc encodes a sweep's readings port by port as they come: no
// map of every port's counters is built (at 49k nodes that map was over
// 100 MB of a sweep's peak).
func readingsEnc(c checks.Counters, taken time.Time) (*ctrEnc, error) {
	e := newCtrEnc()
	e.base = taken
	var err error
	c.Ports(func(r checks.PortReading) {
		if err == nil {
			err = e.add(r.Port, portCountersOf(r))
		}
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// ctrEnc holds the counter sections being encoded and where each port's
// record starts in the values.
type ctrEnc struct {
	sets  []byte
	setAt map[string]uint32
	vals  []byte
	off   map[*fabric.Port]uint32
	// byKey is off by node GUID and port number, built when a port of
	// another model is asked for (Snapshot.SavedCounters after Save).
	byKey map[portKey]uint32
	// base is the index's TakenAt, which the ports' read times are kept
	// from (zero: none kept).
	base time.Time
}

func newCtrEnc() *ctrEnc {
	return &ctrEnc{setAt: map[string]uint32{}, vals: []byte{0} /* offset 0 means none */, off: map[*fabric.Port]uint32{}}
}

func (e *ctrEnc) add(p *fabric.Port, c PortCounters) error {
	off, err := encodeCounters(c, e.base, &e.sets, e.setAt, &e.vals)
	if err != nil {
		return err
	}
	// The port record keeps the offset in 3 bytes.
	if off >= 1<<24 {
		return fmt.Errorf("gate index: counters exceed 16 MB")
	}
	e.off[p] = off
	return nil
}

// indexable says whether gate.idx can lay out f's nodes (the counters
// aside): a node's ports, path and description must fit its record.
func indexable(f *fabric.Fabric) error {
	for _, n := range f.Nodes {
		if len(n.Ports) > 255 || len(n.Path) > 255 {
			return fmt.Errorf("gate index: node 0x%016x has %d ports, path %d hops", n.GUID, len(n.Ports), len(n.Path))
		}
		if len(n.Description) > 0xffff {
			return fmt.Errorf("gate index: node 0x%016x has a %d-byte description", n.GUID, len(n.Description))
		}
	}
	return nil
}

// counters decodes what e holds for p, or, when p is another model's (a
// loaded fabric's), for the port of f with the same node GUID and number
// (the last in f's order, as a map by key would keep).
func (e *ctrEnc) counters(f *fabric.Fabric, p *fabric.Port) (PortCounters, bool) {
	off, ok := e.offset(f, p)
	if !ok {
		return PortCounters{}, false
	}
	return decodeCounters(e.sets, e.vals, off, e.base)
}

// offset is where e's values hold p's counters (counters' rule).
func (e *ctrEnc) offset(f *fabric.Fabric, p *fabric.Port) (uint32, bool) {
	off, ok := e.off[p]
	if !ok && p.Node != nil {
		if e.byKey == nil {
			e.byKey = make(map[portKey]uint32, len(e.off))
			for _, n := range f.Nodes {
				for _, q := range n.Ports {
					if o, ok := e.off[q]; ok && q != nil {
						e.byKey[portKey{n.GUID, q.Num}] = o
					}
				}
			}
		}
		off, ok = e.byKey[portKey{p.Node.GUID, p.Num}]
	}
	return off, ok
}

// portKey names a port by its node's GUID and its number.
type portKey struct {
	guid uint64
	num  uint8
}

// encodeIndex lays out f with the counters in e; without withLFT the
// switches' tables are left out (a baseline is a topology: no reader asks
// for its routes).
func encodeIndex(f *fabric.Fabric, e *ctrEnc, taken time.Time, source string, complete, withLFT bool) (*encodedIndex, error) {
	// The sections are made at their final size (counted first) rather
	// than grown by append, which at 49k nodes held each twice for a
	// moment at the sweep's peak; block numbers go straight into their
	// section, 2 bytes each until a number needs more.
	var nPorts, nSwitches, nBlocks int
	for _, n := range f.Nodes {
		nPorts += len(n.Ports)
		if len(n.Ports) > 0 && n.Ports[0] == nil {
			nPorts--
		}
		if n.Switch != nil {
			nSwitches++
			if withLFT {
				nBlocks += n.Switch.LFT.NumBlocks()
			}
		}
	}
	var (
		strs    bytes.Buffer
		strAt   = map[string]uint32{}
		nodes   = make([]byte, 0, len(f.Nodes)*nodeRecSize)
		ports   = make([]byte, 0, nPorts*portRecSize)
		sws     = make([]byte, 0, nSwitches*swRecSize)
		ids     = make([]byte, 0, 2*nBlocks)
		idWidth = 2
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
	if err := indexable(f); err != nil {
		return nil, err
	}
	portSlot := uint32(0)
	for _, n := range f.Nodes {
		var r [nodeRecSize]byte
		le.PutUint64(r[0:], n.GUID)
		le.PutUint64(r[8:], n.SystemImageGUID)
		le.PutUint32(r[16:], n.VendorID)
		le.PutUint32(r[20:], n.Revision)
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
			le.PutUint32(s[20:], uint32(len(ids)/idWidth))
			for i := range lft.NumBlocks() {
				b := *lft.Block(i) // NoRoute past the table's end
				id, ok := blockAt[b]
				if !ok {
					id = uint32(len(blocks) / lftBlock)
					blockAt[b] = id
					blocks = append(blocks, b[:]...)
				}
				if id > 0xffff && idWidth == 2 {
					ids, idWidth = widenIDs(ids, nBlocks), 4
				}
				if idWidth == 2 {
					ids = le.AppendUint16(ids, uint16(id))
				} else {
					ids = le.AppendUint32(ids, id)
				}
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
	// Host keys: the host every description's first word names, as
	// hosts are matched (fabric.HostKey), sorted (flagFoldedHosts).
	hks := make([]hostEntry, 0, len(f.Nodes))
	for i, n := range f.Nodes {
		if h := hostKey(n.Description); h != "" {
			hks = append(hks, hostEntry{fabric.HostKey(h), uint32(i)})
		}
	}
	slices.SortStableFunc(hks, func(a, b hostEntry) int { return strings.Compare(a.key, b.key) })
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
	if idWidth == 4 && len(blocks)/lftBlock <= 1<<24 {
		ids, idWidth = narrowIDs(ids), 3
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
	if slices.ContainsFunc(f.Unreachable, func(u fabric.Unreachable) bool { return u.What == "NodeInfo" }) {
		out[walkStoppedAt] = 1
	}
	le.PutUint32(out[20:], uint32(len(f.Nodes)))
	le.PutUint32(out[24:], portSlot)
	le.PutUint32(out[28:], uint32(len(sws)/swRecSize))
	le.PutUint32(out[32:], maxLID)
	le.PutUint32(out[36:], srcOff)
	le.PutUint32(out[40:], srcLen)
	copy(out[sumMarkAt:], sumMark)
	le.PutUint64(out[flagsAt:], flagFoldedHosts)
	at := uint64(len(out))
	for i, s := range secs {
		le.PutUint64(out[headerFixed+16*i:], at)
		le.PutUint64(out[headerFixed+16*i+8:], uint64(len(s)))
		at += uint64(len(s))
	}
	return &encodedIndex{head: out, secs: secs}, nil
}

// widenIDs turns 2-byte block numbers into 4-byte ones, with room for
// n in all.
func widenIDs(ids []byte, n int) []byte {
	w := make([]byte, 0, 4*n)
	for i := 0; i < len(ids); i += 2 {
		w = le.AppendUint32(w, uint32(le.Uint16(ids[i:])))
	}
	return w
}

// narrowIDs turns 4-byte block numbers below 2^24 into 3-byte ones, in
// place (each is written at or before where it is read).
func narrowIDs(ids []byte) []byte {
	n := 0
	for i := 0; i < len(ids); i += 4 {
		n += copy(ids[n:], ids[i:i+3])
	}
	return ids[:n]
}

// encodedIndex is gate.idx as its header and sections: Save writes them
// one after the other into the file rather than joining them first, which
// at 49k nodes would hold a second copy of the index (tens of MB, and
// more while an append grows it) at the sweep's peak.
type encodedIndex struct {
	head []byte
	secs [numSections][]byte
}

func (x *encodedIndex) writeTo(w io.Writer) error {
	if _, err := w.Write(x.head); err != nil {
		return err
	}
	for _, s := range x.secs {
		if _, err := w.Write(s); err != nil {
			return err
		}
	}
	_, err := w.Write(x.sums())
	return err
}

// sums is the index's block checksums (blockSums), taken when it is
// written: the header may be changed until then (baseline accept).
func (x *encodedIndex) sums() []byte {
	return blockSums(append([][]byte{x.head}, x.secs[:]...)...)
}

// bytes is the index in one slice.
func (x *encodedIndex) bytes() []byte {
	n := len(x.head)
	for _, s := range x.secs {
		n += len(s)
	}
	out := append(make([]byte, 0, n), x.head...)
	for _, s := range x.secs {
		out = append(out, s...)
	}
	return append(out, x.sums()...)
}

// encodeCounters appends one port's saved counters: the set of names read
// (shared by ports that read the same ones), a bitmap of the nonzero and
// of the saturated ones, and the nonzero values as uvarints. It returns
// the offset of the port's entry in vals. The port's read time follows,
// in milliseconds from base (ctrReadAt), when both are known.
func encodeCounters(c PortCounters, base time.Time, sets *[]byte, setAt map[string]uint32, vals *[]byte) (uint32, error) {
	names := make([]string, 0, len(c.Errors)+1)
	for n := range c.Errors {
		if n != xmitWaitName {
			names = append(names, n)
		}
	}
	if c.XmitWait != nil {
		// Kept among the names (a set without it is a file from before,
		// or a port without it): a later sweep judges the share of time
		// stalled since this one (trial T8).
		names = append(names, xmitWaitName)
	}
	if len(names) > maxCtrNames-2 {
		return 0, fmt.Errorf("gate index: %d counters on one port (at most %d)", len(names), maxCtrNames-2)
	}
	slices.Sort(names)
	key := strings.Join(names, "\x00")
	set, ok := setAt[key]
	if !ok {
		set = uint32(len(*sets))
		*sets = append(*sets, byte(len(names)))
		for _, n := range names {
			if len(n) > 255 {
				return 0, fmt.Errorf("gate index: counter name %q too long", n[:32])
			}
			*sets = append(*sets, byte(len(n)))
			*sets = append(*sets, n...)
		}
		setAt[key] = set
	}
	var nz, sat uint32
	// The top bits of the saturated bitmap (at most maxCtrNames-2 names
	// use it) keep From: recorded, and narrow.
	switch c.From {
	case FromPortCounters:
		sat |= ctrFromKnown | ctrFromNarrow
	case FromPortCountersExtended:
		sat |= ctrFromKnown
	}
	value := func(n string) uint64 {
		if n == xmitWaitName {
			return *c.XmitWait
		}
		return c.Errors[n]
	}
	for i, n := range names {
		if value(n) != 0 {
			nz |= 1 << i
		}
		if slices.Contains(c.Saturated, n) {
			sat |= 1 << i
		}
	}
	readAt, hasReadAt := readOffset(c.ReadAt, base)
	if hasReadAt {
		nz |= ctrReadAt
	}
	off := uint32(len(*vals))
	*vals = le.AppendUint32(*vals, set)
	*vals = le.AppendUint32(*vals, nz)
	*vals = le.AppendUint32(*vals, sat)
	for i, n := range names {
		if nz&(1<<i) != 0 {
			*vals = binary.AppendUvarint(*vals, value(n))
		}
	}
	if hasReadAt {
		*vals = binary.AppendVarint(*vals, readAt)
	}
	return off, nil
}

// maxReadOffset bounds a read time's distance from the index's TakenAt
// (a week): a counter pass is minutes; further is a clock that jumped, and
// the port's span falls back to the passes'.
const maxReadOffset = 7 * 24 * time.Hour

// readOffset is at in whole milliseconds from base, rounded down (the
// span from it is then never shorter than the true one), and whether it
// is kept: both known and within maxReadOffset.
func readOffset(at, base time.Time) (int64, bool) {
	if at.IsZero() || base.IsZero() {
		return 0, false
	}
	d := at.Sub(base)
	if d > maxReadOffset || d < -maxReadOffset {
		return 0, false
	}
	ms := d.Milliseconds()
	if d < 0 && d%time.Millisecond != 0 {
		ms--
	}
	return ms, true
}

// xmitWaitName is PortXmitWait's name in a port's counter set: the one
// name of the set that is not an error counter (PortCounters.XmitWait).
const xmitWaitName = "PortXmitWait"

// Index is an opened gate.idx.
type Index struct {
	data  []byte
	unmap func() error
	sec   [numSections][]byte
	secAt [numSections]uint64 // where each section starts in data
	// sums checks the blocks as they are read; nil for a file from
	// before the checksums.
	sums *indexSums
	path string // the file, for Damaged's line ("" in memory)

	TakenAt  time.Time
	Source   string
	Complete bool
	// Accepted says the operator accepted this baseline.idx's fabric as
	// it is built (`ibdoctor baseline accept`); false for a baseline a
	// first sweep took by itself, an older state dir's, or a gate.idx.
	Accepted bool
	// WalkStopped says the sweep's walk stopped at a node that did not
	// answer NodeInfo (its fabric's Unreachable), so nodes past it are
	// not in the file.
	WalkStopped bool
	nodes       uint32
	ports       uint32
	switches    uint32
	maxLID      uint32
	idWidth     int // bytes of a block number: 2, 3 or 4
	// foldedKeys says the host section's keys are fabric.HostKey's
	// (flagFoldedHosts); without it (an older file) hosts is them folded
	// in memory, made at the first lookup.
	foldedKeys bool
	hostsOnce  sync.Once
	hosts      []hostEntry
}

// hostEntry is a host key and the node filed under it.
type hostEntry struct {
	key  string
	node uint32
}

// noPort0 is a node record's flag (byte 47) for a node whose port 0 is
// absent and has no port record: its port p is at slot first+p-1.
const noPort0 = 2

// absentPort is the record portRec gives for such a port 0: not
// present, no peer (noRef). Only read.
var absentPort = [portRecSize]byte{24: 0xff, 25: 0xff, 26: 0xff, 27: 0xff}

// blockID is the number of the table block at position i of the block
// numbers section.
func (x *Index) blockID(i uint64) (uint64, bool) {
	w := uint64(x.idWidth)
	if i > uint64(len(x.sec[secBlockIDs]))/w {
		return 0, false
	}
	id := x.span(secBlockIDs, w*i, w)
	switch {
	case id == nil:
		return 0, false
	case w == 2:
		return uint64(le.Uint16(id)), true
	case w == 3:
		return uint64(id[0]) | uint64(id[1])<<8 | uint64(id[2])<<16, true
	}
	return uint64(le.Uint32(id)), true
}

var errCorrupt = errors.New("gate index is corrupt")

// OpenIndex maps dir's gate.idx: the one snapshot.json names, else the
// fixed-name one. The mapping stays valid when a sweep removes the file.
func OpenIndex(dir string) (*Index, error) {
	name := IndexName
	if doc, _, err := readDoc(filepath.Join(dir, FileName)); err == nil && doc.IndexFile != "" {
		name = doc.IndexFile
	}
	return openIndexFile(filepath.Join(dir, name))
}

func openIndexFile(path string) (*Index, error) {
	fh, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w at %s", ErrNone, path)
	}
	if err != nil {
		return nil, fmt.Errorf("gate index: %w", err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("gate index: %w", err)
	}
	if st.Size() < oldHeaderSize || st.Size() > 1<<40 {
		return nil, fmt.Errorf("%s: %w (%d bytes): run 'ibdoctor sweep' again", path, errCorrupt, st.Size())
	}
	data, err := unix.Mmap(int(fh.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("gate index: mapping %s: %w", path, err)
	}
	x, err := ParseIndex(data)
	if err != nil {
		unix.Munmap(data)
		return nil, fmt.Errorf("%s: %w: run 'ibdoctor sweep' again", path, err)
	}
	x.unmap = func() error { return unix.Munmap(data) }
	x.path = path
	return x, nil
}

// ParseIndex checks gate.idx's header and section table; the records are
// read (and bounds-checked) only when asked for.
func ParseIndex(data []byte) (*Index, error) {
	if len(data) < oldHeaderSize || (string(data[:8]) != indexMagic && string(data[:8]) != indexMagic3) {
		return nil, fmt.Errorf("%w: not an ibdoctor gate index (%s)", errCorrupt, indexMagic)
	}
	x := &Index{data: data}
	x.TakenAt = time.Unix(0, int64(le.Uint64(data[8:]))).UTC()
	x.Complete = data[16] == 1
	x.Accepted = data[acceptedAt] == 1
	x.WalkStopped = data[walkStoppedAt] == 1
	x.idWidth = 4
	switch {
	case string(data[:8]) == indexMagic3 && data[17] == 3:
		x.idWidth = 3
	case string(data[:8]) == indexMagic3:
		return nil, fmt.Errorf("%w: %s with %d-byte block numbers", errCorrupt, indexMagic3, data[17])
	case data[17] == 2:
		x.idWidth = 2
	}
	x.nodes, x.ports, x.switches, x.maxLID = le.Uint32(data[20:]), le.Uint32(data[24:]), le.Uint32(data[28:]), le.Uint32(data[32:])
	// The first section starts where the header ends: at flagsAt in a
	// file from before the flags, after them since.
	head := le.Uint64(data[headerFixed:])
	switch {
	case head == oldHeaderSize:
	case head >= headerSize && head <= uint64(len(data)):
		x.foldedKeys = le.Uint64(data[flagsAt:])&flagFoldedHosts != 0
	default:
		return nil, fmt.Errorf("%w: its first section starts at byte %d, in its header", errCorrupt, head)
	}
	end := head
	for i := range x.sec {
		off, n := le.Uint64(data[headerFixed+16*i:]), le.Uint64(data[headerFixed+16*i+8:])
		if off > uint64(len(data)) || n > uint64(len(data))-off {
			return nil, fmt.Errorf("%w: section %d out of the file", errCorrupt, i)
		}
		x.sec[i], x.secAt[i] = data[off:off+n], off
		end = max(end, off+n)
	}
	sums, err := parseSums(data, end)
	if err != nil {
		return nil, err
	}
	x.sums = sums
	if !x.sums.check(data, 0, head) {
		return nil, x.Damaged()
	}
	if uint64(len(x.sec[secNodes])) != uint64(x.nodes)*nodeRecSize || uint64(len(x.sec[secPorts])) != uint64(x.ports)*portRecSize ||
		uint64(len(x.sec[secSwitches])) != uint64(x.switches)*swRecSize || uint64(len(x.sec[secLIDs])) != 8*(uint64(x.maxLID)+1) ||
		uint64(len(x.sec[secGUIDs])) != 4*uint64(x.nodes) || len(x.sec[secHosts])%hostRecSize != 0 ||
		len(x.sec[secBlocks])%lftBlock != 0 || len(x.sec[secBlockIDs])%x.idWidth != 0 {
		return nil, fmt.Errorf("%w: section sizes disagree with the header", errCorrupt)
	}
	src, ok := x.str(le.Uint32(data[36:]), le.Uint32(data[40:]))
	if d := x.Damaged(); d != nil {
		return nil, d
	}
	if !ok {
		return nil, fmt.Errorf("%w: source name out of range", errCorrupt)
	}
	x.Source = src
	return x, nil
}

// Close unmaps the file.
func (x *Index) Close() error {
	if x == nil || x.unmap == nil {
		return nil
	}
	err := x.unmap()
	x.unmap, x.data = nil, nil
	return err
}

func (x *Index) str(off, n uint32) (string, bool) {
	s, ok := x.strBytes(off, n)
	return string(s), ok
}

// strBytes is str's bytes, in the mapping.
func (x *Index) strBytes(off, n uint32) ([]byte, bool) {
	if n == 0 && uint64(off) <= uint64(len(x.sec[secStrings])) {
		return nil, true
	}
	s := x.span(secStrings, uint64(off), uint64(n))
	return s, s != nil
}

func (x *Index) node(i uint32) []byte {
	if i >= x.nodes {
		return nil
	}
	return x.span(secNodes, uint64(i)*nodeRecSize, nodeRecSize)
}

// nodeGUID is node i's GUID; 0 for an index out of range (a corrupt
// GUID section: a lookup then finds nothing instead of panicking).
func (x *Index) nodeGUID(i uint32) uint64 {
	r := x.node(i)
	if r == nil {
		return 0
	}
	return le.Uint64(r)
}

// nodesByHost returns the nodes whose description's first word names
// host as fabric.NodesByHost matches it (fabric.HostKey): "gpu001",
// "GPU001" and "gpu001.cluster.local" are one host. One binary search of
// the keys, folded when saved (flagFoldedHosts) or, in an older file, by
// foldHosts.
func (x *Index) nodesByHost(host string) []uint32 {
	want := fabric.HostKey(host)
	if want == "" {
		return nil
	}
	if !x.foldedKeys {
		hosts := x.foldHosts()
		i, _ := slices.BinarySearchFunc(hosts, want, func(e hostEntry, k string) int { return strings.Compare(e.key, k) })
		var out []uint32
		for ; i < len(hosts) && hosts[i].key == want; i++ {
			out = append(out, hosts[i].node)
		}
		return out
	}
	n := len(x.sec[secHosts]) / hostRecSize
	lo, hi := 0, n // binary search, reading keys lazily
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if k, _ := x.hostRec(m); string(k) < want {
			lo = m + 1
		} else {
			hi = m
		}
	}
	var out []uint32
	for j := lo; j < n; j++ {
		k, node := x.hostRec(j)
		if string(k) != want {
			break
		}
		out = append(out, node)
	}
	return out
}

// hostRec is record i of the host section: its key, bytes of the
// mapping (compared, not copied), and node; an empty key where damaged
// (Damaged says so).
func (x *Index) hostRec(i int) ([]byte, uint32) {
	r := x.span(secHosts, uint64(i)*hostRecSize, hostRecSize)
	if r == nil {
		return nil, noRef
	}
	k, _ := x.strBytes(le.Uint32(r), le.Uint32(r[4:]))
	return k, le.Uint32(r[8:])
}

// foldHosts is the host section of a file from before flagFoldedHosts,
// its keys (the first words as written) folded by fabric.HostKey and
// sorted again: read whole once, at the first lookup, until the next
// sweep writes the file again.
func (x *Index) foldHosts() []hostEntry {
	x.hostsOnce.Do(func() {
		n := len(x.sec[secHosts]) / hostRecSize
		x.hosts = make([]hostEntry, 0, n)
		for i := range n {
			if k, node := x.hostRec(i); len(k) > 0 {
				x.hosts = append(x.hosts, hostEntry{fabric.HostKey(string(k)), node})
			}
		}
		slices.SortStableFunc(x.hosts, func(a, b hostEntry) int { return strings.Compare(a.key, b.key) })
	})
	return x.hosts
}

// nodeByGUID finds a node by GUID (the first one when duplicated).
func (x *Index) nodeByGUID(g uint64) (uint32, bool) {
	at := func(m int) uint32 {
		if r := x.span(secGUIDs, 4*uint64(m), 4); r != nil {
			return le.Uint32(r)
		}
		return noRef // damaged: no node (Damaged says so)
	}
	lo, hi := 0, int(x.nodes)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if x.nodeGUID(at(m)) < g {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < int(x.nodes) {
		if i := at(lo); i < x.nodes && x.nodeGUID(i) == g {
			return i, true
		}
	}
	return 0, false
}

// NodeByLID returns the node and port number that own lid.
func (x *Index) NodeByLID(lid uint16) (node uint32, port uint8, ok bool) {
	if uint32(lid) > x.maxLID {
		return 0, 0, false
	}
	r := x.span(secLIDs, 8*uint64(lid), 8)
	if r == nil {
		return 0, 0, false
	}
	n := le.Uint32(r)
	return n, r[4], n != noRef && n < x.nodes
}

// portRec returns the record of node i's port slot p.
func (x *Index) portRec(i uint32, p int) []byte {
	r := x.node(i)
	if r == nil || p >= int(r[45]) {
		return nil
	}
	slot := uint64(le.Uint32(r[36:])) + uint64(p)
	if r[47]&noPort0 != 0 {
		if p == 0 {
			return absentPort[:]
		}
		slot--
	}
	if slot >= uint64(x.ports) {
		return nil
	}
	return x.span(secPorts, slot*portRecSize, portRecSize)
}

// lft returns switch node i's entry for lid, and whether it has one.
func (x *Index) lft(i uint32, lid uint16) (uint8, bool) {
	r := x.node(i)
	if r == nil {
		return 0, false
	}
	sw := le.Uint32(r[40:])
	if sw >= x.switches {
		return 0, false
	}
	s := x.swRec(sw)
	if s == nil || s[12]&2 == 0 || uint32(lid) >= le.Uint32(s[16:]) {
		return 0, false
	}
	id, ok := x.blockID(uint64(le.Uint32(s[20:])) + uint64(lid)/lftBlock)
	if !ok {
		return 0, false
	}
	e := x.span(secBlocks, id*lftBlock+uint64(lid)%lftBlock, 1)
	if e == nil {
		return 0, false
	}
	return e[0], true
}

// FillLFTs gives f's switches the forwarding tables the index holds for
// them. f is the fabric the index was encoded from, decoded again (a
// snapshot's fabric file written without tables): nodes are matched by
// position, and a node whose GUID or kind differs there is an error.
func (x *Index) FillLFTs(f *fabric.Fabric) error {
	if uint32(len(f.Nodes)) != x.nodes {
		return fmt.Errorf("%w: %d nodes, the fabric has %d", errCorrupt, x.nodes, len(f.Nodes))
	}
	if err := x.CheckAll(); err != nil {
		return err
	}
	var in fabric.BlockInterner // the tables share the index's blocks
	for i, n := range f.Nodes {
		r := x.node(uint32(i))
		sw := le.Uint32(r[40:])
		if le.Uint64(r[0:]) != n.GUID || (sw == noRef) != (n.Switch == nil) {
			return fmt.Errorf("%w: node %d is not 0x%016x", errCorrupt, i, n.GUID)
		}
		if sw == noRef {
			continue
		}
		if sw >= x.switches {
			return fmt.Errorf("%w: switch %d", errCorrupt, sw)
		}
		s := x.swRec(sw)
		if s[12]&2 == 0 {
			continue
		}
		lft, err := x.lftOf(s, &in)
		if err != nil {
			return fmt.Errorf("%w: forwarding table of node %d", err, i)
		}
		n.Switch.LFT = lft
	}
	return nil
}

// lftOf makes a switch record's whole forwarding table, its blocks shared
// through in.
func (x *Index) lftOf(s []byte, in *fabric.BlockInterner) (*fabric.LFT, error) {
	n := uint64(le.Uint32(s[16:]))
	first := uint64(le.Uint32(s[20:]))
	nb := (n + lftBlock - 1) / lftBlock
	if _, ok := x.blockID(first + nb - 1); nb > 0 && !ok {
		return nil, errCorrupt
	}
	lft := fabric.NewLFT(int(n))
	for b := range nb {
		id, ok := x.blockID(first + b)
		var blk []byte
		if ok {
			blk = x.span(secBlocks, id*lftBlock, lftBlock)
		}
		if blk == nil {
			return nil, errCorrupt
		}
		lft.PutBlock(int(b), (*fabric.LFTBlock)(blk), in)
	}
	return lft, nil
}

// Resolve finds the nodes a gate's hosts name, as gate.Resolve does on a
// whole fabric: by node-name map first (names maps GUIDs to names whose
// first word is the host), else by the description's first word, or the
// whole description when the host has a space. Switches are left out.
func (x *Index) Resolve(hosts []string, names fabric.NodeNameMap) []uint32 {
	byMapped := map[string][]uint32{}
	for g, name := range names {
		if i, ok := x.nodeByGUID(g); ok {
			h := fabric.HostKey(strings.Fields(name + " ")[0])
			byMapped[h] = append(byMapped[h], i)
		}
	}
	var out []uint32
	for _, h := range hosts {
		ns := byMapped[fabric.HostKey(h)]
		if len(ns) == 0 {
			h = strings.TrimSpace(h)
			first, _, spaced := strings.Cut(h, " ")
			for _, i := range x.nodesByHost(first) {
				if spaced {
					r := x.node(i)
					if r == nil {
						continue
					}
					if d, _ := x.str(le.Uint32(r[24:]), uint32(le.Uint16(r[28:]))); d != h {
						continue
					}
				}
				ns = append(ns, i)
			}
		}
		for _, i := range ns {
			if r := x.node(i); r != nil && mad.NodeType(r[44]) != mad.NodeSwitch {
				out = append(out, i)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// SubFabric builds the part of the fabric a gate for the given host
// nodes looks at: the hosts, every node on the forwarding-table routes
// among them, and the neighbours of all of those (so every port in the
// scope has its peer, and a switch its siblings). Links to nodes left
// out have no Remote. Node order is the snapshot's.
//
// also are more nodes to include with their neighbours, off the routes: a
// gate's switch ports that the baseline has a job host's HCA cabled to.
func (x *Index) SubFabric(hostNodes []uint32, also ...uint32) (*fabric.Fabric, error) {
	in := map[uint32]bool{}
	for _, i := range also {
		if i < x.nodes {
			in[i] = true
		}
	}
	type hp struct {
		node uint32
		port int
	}
	var srcs []hp
	var dsts []uint16
	for _, h := range hostNodes {
		in[h] = true
		r := x.node(h)
		if r == nil {
			return nil, fmt.Errorf("%w: node %d", errCorrupt, h)
		}
		for p := 0; p < int(r[45]); p++ {
			q := x.portRec(h, p)
			if q == nil || q[0] == 0 || q[1] == 0 {
				continue
			}
			if rn := le.Uint32(q[24:]); rn != noRef {
				in[rn] = true
				srcs = append(srcs, hp{h, p})
			}
			if lid := le.Uint16(q[10:]); lid != 0 {
				for l := uint32(lid); l < uint32(lid)+(1<<min(q[2], 7)) && l <= 0xffff; l++ {
					dsts = append(dsts, uint16(l))
				}
			}
		}
	}
	// Follow each source port's route to each destination LID.
	for _, s := range srcs {
		q := x.portRec(s.node, s.port)
		if q == nil {
			continue
		}
		start := le.Uint32(q[24:])
		for _, lid := range dsts {
			cur := start
			for range maxRouteHops {
				in[cur] = true
				r := x.node(cur)
				if r == nil || mad.NodeType(r[44]) != mad.NodeSwitch {
					break
				}
				out, ok := x.lft(cur, lid)
				if !ok || out == 0 || out == fabric.NoRoute {
					break
				}
				pq := x.portRec(cur, int(out))
				if pq == nil || pq[0] == 0 {
					break
				}
				next := le.Uint32(pq[24:])
				if next == noRef {
					break
				}
				cur = next
			}
		}
	}
	// And their neighbours, without forwarding tables: no route among
	// the job's hosts crosses them.
	core := make([]uint32, 0, len(in))
	routed := make(map[uint32]bool, len(in))
	for i := range in {
		core = append(core, i)
		routed[i] = true
	}
	for _, i := range core {
		r := x.node(i)
		for p := 0; r != nil && p < int(r[45]); p++ {
			if q := x.portRec(i, p); q != nil && q[0] == 1 {
				if rn := le.Uint32(q[24:]); rn != noRef && rn < x.nodes {
					in[rn] = true
				}
			}
		}
	}
	return x.build(in, routed)
}

// JobPart builds the nodes hosts name (as Resolve finds them) and their
// neighbours, without forwarding tables: what a gate needs of the
// accepted baseline — which HCAs each host has and where each is cabled.
func (x *Index) JobPart(hosts []string, names fabric.NodeNameMap) (*fabric.Fabric, error) {
	set := map[uint32]bool{}
	for _, i := range x.Resolve(hosts, names) {
		set[i] = true
		r := x.node(i)
		for p := 0; r != nil && p < int(r[45]); p++ {
			if q := x.portRec(i, p); q != nil && q[0] == 1 {
				if rn := le.Uint32(q[24:]); rn != noRef && rn < x.nodes {
					set[rn] = true
				}
			}
		}
	}
	return x.build(set, nil)
}

// build materializes the nodes in set, linking ports whose peers are in it.
func (x *Index) build(set, withLFT map[uint32]bool) (*fabric.Fabric, error) {
	f, err := x.buildRecords(set, withLFT)
	if d := x.Damaged(); d != nil {
		return nil, d // said as what it is, not as the record it hid
	}
	return f, err
}

func (x *Index) buildRecords(set, withLFT map[uint32]bool) (*fabric.Fabric, error) {
	idx := make([]uint32, 0, len(set))
	for i := range set {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	f := &fabric.Fabric{Nodes: make([]*fabric.Node, 0, len(idx))}
	made := make(map[uint32]*fabric.Node, len(idx))
	var in fabric.BlockInterner // the tables share the index's blocks
	for _, i := range idx {
		r := x.node(i)
		if r == nil {
			return nil, fmt.Errorf("%w: node %d", errCorrupt, i)
		}
		desc, ok1 := x.str(le.Uint32(r[24:]), uint32(le.Uint16(r[28:])))
		path, ok2 := x.str(le.Uint32(r[32:]), uint32(r[46]))
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("%w: node %d names", errCorrupt, i)
		}
		n := &fabric.Node{
			Type: mad.NodeType(r[44]), GUID: le.Uint64(r[0:]), SystemImageGUID: le.Uint64(r[8:]),
			VendorID: le.Uint32(r[16:]), Revision: le.Uint32(r[20:]), DeviceID: le.Uint16(r[30:]), Description: desc,
			Ports: make([]*fabric.Port, r[45]),
		}
		if r[47]&1 != 0 {
			n.Path = mad.Path(path)
		}
		if sw := le.Uint32(r[40:]); sw != noRef {
			if sw >= x.switches {
				return nil, fmt.Errorf("%w: switch %d", errCorrupt, sw)
			}
			s := x.swRec(sw)
			if s == nil {
				return nil, fmt.Errorf("%w: switch %d", errCorrupt, sw)
			}
			n.Switch = &fabric.Switch{
				LinearFDBCap: le.Uint16(s[0:]), LinearFDBTop: le.Uint16(s[2:]), MulticastCap: le.Uint16(s[4:]),
				LIDsPerPort: le.Uint16(s[6:]), PartitionCap: le.Uint16(s[8:]), MulticastTop: le.Uint16(s[10:]),
				EnhancedPort0: s[12]&1 != 0, LifeTimeValue: s[13], DefaultPort: s[14],
			}
			if s[12]&2 != 0 && withLFT[i] {
				lft, err := x.lftOf(s, &in)
				if err != nil {
					return nil, fmt.Errorf("%w: forwarding table of node %d", err, i)
				}
				n.Switch.LFT = lft
			}
		}
		for p := range n.Ports {
			q := x.portRec(i, p)
			if q == nil {
				return nil, fmt.Errorf("%w: ports of node %d", errCorrupt, i)
			}
			if q[0] == 0 {
				continue
			}
			n.Ports[p] = &fabric.Port{
				Node: n, GUID: le.Uint64(q[32:]), LID: le.Uint16(q[10:]), Num: q[1], LMC: q[2],
				State: mad.PortState(q[3]), PhysState: mad.PhysState(q[4]),
				WidthActive: mad.Width(q[5]), WidthEnabled: mad.Width(q[6]), WidthSupported: mad.Width(q[7]),
				SpeedActive: mad.Speed(le.Uint16(q[14:])), SpeedEnabled: mad.Speed(le.Uint16(q[16:])), SpeedSupported: mad.Speed(le.Uint16(q[18:])),
				NeighborMTU: mad.MTU(q[8]), MTUCap: mad.MTU(q[9]), CapMask2: le.Uint16(q[12:]), CapMask: le.Uint32(q[20:]),
			}
		}
		made[i] = n
		f.Nodes = append(f.Nodes, n)
	}
	for _, i := range idx {
		n := made[i]
		for p, port := range n.Ports {
			if port == nil {
				continue
			}
			q := x.portRec(i, p)
			if q == nil {
				continue
			}
			rn, rp := le.Uint32(q[24:]), int(q[28])
			if peer := made[rn]; rn != noRef && peer != nil && rp < len(peer.Ports) {
				port.Remote = peer.Ports[rp]
			}
		}
	}
	return f, nil
}

// Whole builds the whole fabric, every switch with its table.
func (x *Index) Whole() (*fabric.Fabric, error) {
	all := make(map[uint32]bool, x.nodes)
	for i := range x.nodes {
		all[i] = true
	}
	return x.build(all, all)
}

// Links builds the whole fabric without forwarding tables: the links a
// directed route is made over, without the tables' memory.
func (x *Index) Links() (*fabric.Fabric, error) {
	all := make(map[uint32]bool, x.nodes)
	for i := range x.nodes {
		all[i] = true
	}
	return x.build(all, nil)
}

// nodeNamed is the description and directed route (nil when the sweep
// recorded none) of the node with GUID g.
func (x *Index) nodeNamed(g uint64) (string, mad.Path, bool) {
	i, ok := x.nodeByGUID(g)
	if !ok {
		return "", nil, false
	}
	r := x.node(i)
	if r == nil {
		return "", nil, false
	}
	desc, ok1 := x.str(le.Uint32(r[24:]), uint32(le.Uint16(r[28:])))
	path, ok2 := x.str(le.Uint32(r[32:]), uint32(r[46]))
	if !ok1 || !ok2 {
		return "", nil, false
	}
	if r[47]&1 == 0 {
		return desc, nil, true
	}
	return desc, mad.Path(path), true
}

// hasPeer says whether the sweep saw a cable on a port.
func (x *Index) hasPeer(guid uint64, port uint8) bool {
	i, ok := x.nodeByGUID(guid)
	if !ok {
		return false
	}
	q := x.portRec(i, int(port))
	return q != nil && q[0] == 1 && le.Uint32(q[24:]) != noRef
}

// SavedCounters returns what the sweep saved for a port (by node GUID
// and port number).
func (x *Index) SavedCounters(guid uint64, port uint8) (PortCounters, bool) {
	off, ok := x.ctrOffset(guid, port)
	if !ok {
		return PortCounters{}, false
	}
	sets, vals, ok := x.ctrSpans(off)
	if !ok {
		return PortCounters{}, false
	}
	return decodeCounters(sets, vals, off, x.TakenAt)
}

// savedInto is SavedCounters decoded into v.
func (x *Index) savedInto(guid uint64, port uint8, v *Saved) bool {
	off, ok := x.ctrOffset(guid, port)
	if !ok {
		return false
	}
	sets, vals, ok := x.ctrSpans(off)
	return ok && v.decode(x, sets, vals, off, x.TakenAt)
}

// ctrSpans are the counter sections as far as the record at off in the
// values (and its name set) can reach, checked (span): the sections
// themselves are not, as a record is decoded from them by offset.
func (x *Index) ctrSpans(off uint32) (sets, vals []byte, ok bool) {
	if off == 0 {
		return nil, nil, false
	}
	// A record: set, two bitmaps, a uvarint a name, the read time.
	const most = 12 + (maxCtrNames-2)*binary.MaxVarintLen64 + binary.MaxVarintLen64
	if x.spanUpTo(secCtrVal, uint64(off), most) == nil {
		return nil, nil, false
	}
	vals = x.sec[secCtrVal][:min(uint64(off)+most, uint64(len(x.sec[secCtrVal])))]
	if uint64(off)+12 > uint64(len(vals)) {
		return x.sec[secCtrSet], vals, true // decode refuses it
	}
	// A name set: its count, then a length and name each.
	set := uint64(le.Uint32(vals[off:]))
	if x.spanUpTo(secCtrSet, set, 1+(maxCtrNames-2)*256) == nil {
		return nil, nil, false
	}
	return x.sec[secCtrSet][:min(set+1+(maxCtrNames-2)*256, uint64(len(x.sec[secCtrSet])))], vals, true
}

// swRec is switch record sw, or nil (span).
func (x *Index) swRec(sw uint32) []byte {
	return x.span(secSwitches, uint64(sw)*swRecSize, swRecSize)
}

// ctrOffset is where the port's saved counters are in the counter
// values section (0: none).
func (x *Index) ctrOffset(guid uint64, port uint8) (uint32, bool) {
	i, ok := x.nodeByGUID(guid)
	if !ok {
		return 0, false
	}
	q := x.portRec(i, int(port))
	if q == nil || q[0] == 0 {
		return 0, false
	}
	return uint32(q[29]) | uint32(q[30])<<8 | uint32(q[31])<<16, true
}

// releasePages drops the pages of the mapped file from this process's
// resident set: each page read counts in it until unmapped, and a walk
// of every port's saved counters reads most of the file. The file's
// data stays in the page cache; the next read maps it again. Only for
// a mapping (madvise on memory ParseIndex was given would zero it).
func (x *Index) releasePages() {
	if x == nil || x.unmap == nil {
		return
	}
	// Advice only: a refusal leaves the pages mapped, as before.
	_ = unix.Madvise(x.data, unix.MADV_DONTNEED)
}

// decodeCounters reads the port's saved counters at off in the counter
// values section (encodeCounters' layout); false when off is 0 (none) or
// the record does not fit the sections. base is the index's TakenAt.
func decodeCounters(sets, vals []byte, off uint32, base time.Time) (PortCounters, bool) {
	var v Saved
	if !v.decode(nil, sets, vals, off, base) {
		return PortCounters{}, false
	}
	pc := PortCounters{Errors: make(map[string]uint64, len(v.names)), From: v.From, ReadAt: v.At}
	for k, name := range v.names {
		if name == xmitWaitName {
			w := v.vals[k]
			pc.XmitWait = &w
		} else {
			pc.Errors[name] = v.vals[k]
		}
		if v.sat[k] {
			pc.Saturated = append(pc.Saturated, name)
		}
	}
	return pc, true
}

// Saved is one port's saved error counters as Snapshot.SavedInto decodes
// them, into storage kept from port to port: pairing every reading of a
// later sweep with the previous sweep's allocated a map per port and
// walk, most of that sweep's garbage (issue 13).
type Saved struct {
	// From is PortCounters.From.
	From string
	// At is PortCounters.ReadAt: when the sweep read the port (zero when
	// not kept).
	At    time.Time
	names []string // the port's set of counter names
	vals  []uint64 // by names' index
	sat   []bool   // by names' index: saturated
	// sets are the name sets decoded so far, by offset in the sets of
	// setsOf (an *Index or *ctrEnc): a fabric's ports share a few.
	setsOf any
	sets   map[uint32][]string
}

// XmitWait returns the saved PortXmitWait, whether it was saturated,
// and whether the sweep saved it (not in a file from before it was kept,
// nor for a port whose PMA does not count it).
func (v *Saved) XmitWait() (value uint64, saturated, ok bool) {
	return v.Error(xmitWaitName)
}

// Error returns the saved value of the counter name, whether it was
// saturated, and whether the sweep saved it.
func (v *Saved) Error(name string) (value uint64, saturated, ok bool) {
	for k, n := range v.names {
		if n == name {
			return v.vals[k], v.sat[k], true
		}
	}
	return 0, false, false
}

// set returns the names of the set at offset set of sets, decoding it
// the first time it is asked for from owner.
func (v *Saved) set(owner any, sets []byte, set uint32) ([]string, bool) {
	if owner != nil && v.setsOf == owner {
		if names, ok := v.sets[set]; ok {
			return names, true
		}
	}
	if uint64(set) >= uint64(len(sets)) {
		return nil, false
	}
	n := int(sets[set])
	pos := int(set) + 1
	names := make([]string, 0, n)
	for range n {
		if pos >= len(sets) {
			return nil, false
		}
		l := int(sets[pos])
		if pos+1+l > len(sets) {
			return nil, false
		}
		names = append(names, string(sets[pos+1:pos+1+l]))
		pos += 1 + l
	}
	if owner != nil {
		if v.setsOf != owner {
			v.setsOf, v.sets = owner, map[uint32][]string{}
		}
		v.sets[set] = names
	}
	return names, true
}

// decode reads the port's saved counters at off in the counter values
// section (encodeCounters' layout) into v; false when off is 0 (none)
// or the record does not fit the sections. owner (nil: none) keys the
// cache of decoded name sets; base is the index's TakenAt, which the
// port's read time is kept from.
func (v *Saved) decode(owner any, sets, vals []byte, off uint32, base time.Time) bool {
	if off == 0 || uint64(off)+12 > uint64(len(vals)) {
		return false
	}
	set, nz, sat := le.Uint32(vals[off:]), le.Uint32(vals[off+4:]), le.Uint32(vals[off+8:])
	names, ok := v.set(owner, sets, set)
	if !ok {
		return false
	}
	v.From = ""
	switch {
	case sat&ctrFromNarrow != 0:
		v.From = FromPortCounters
	case sat&ctrFromKnown != 0:
		v.From = FromPortCountersExtended
	}
	v.names, v.vals, v.sat = names, v.vals[:0], v.sat[:0]
	rest := vals[off+12:]
	for k := range names {
		var x uint64
		if nz&(1<<k) != 0 {
			var m int
			x, m = binary.Uvarint(rest)
			if m <= 0 {
				v.names = nil
				return false
			}
			rest = rest[m:]
		}
		v.vals = append(v.vals, x)
		v.sat = append(v.sat, sat&(1<<k) != 0)
	}
	v.At = time.Time{}
	if nz&ctrReadAt != 0 {
		ms, m := binary.Varint(rest)
		if m <= 0 {
			v.names = nil
			return false
		}
		if limit := int64(maxReadOffset / time.Millisecond); !base.IsZero() && ms >= -limit && ms <= limit {
			v.At = base.Add(time.Duration(ms) * time.Millisecond)
		}
	}
	return true
}

// fill sets v to c (a snapshot whose counters are a map: v1, or a
// fabric gate.idx cannot hold).
func (v *Saved) fill(c PortCounters) {
	// names may be a cached set: a new slice, not appended to
	v.From, v.At, v.names, v.vals, v.sat = c.From, c.ReadAt, make([]string, 0, len(c.Errors)+1), v.vals[:0], v.sat[:0]
	for name := range c.Errors {
		if name != xmitWaitName {
			v.names = append(v.names, name)
		}
	}
	slices.Sort(v.names)
	for _, name := range v.names {
		v.vals = append(v.vals, c.Errors[name])
		v.sat = append(v.sat, slices.Contains(c.Saturated, name))
	}
	if c.XmitWait != nil {
		v.names = append(v.names, xmitWaitName)
		v.vals = append(v.vals, *c.XmitWait)
		v.sat = append(v.sat, slices.Contains(c.Saturated, xmitWaitName))
	}
}

// HCACensus lists every host adapter of the snapshot with the switch
// port its first live link lands on (checks.HCACensus on the whole
// fabric), from the node and port records alone: a gate compares its
// hosts with all their peers (topology.missing-hca) without building
// the whole fabric.
func (x *Index) HCACensus() []checks.HostHCA {
	cas := 0
	for i := uint32(0); i < x.nodes; i++ {
		if r := x.node(i); r != nil && mad.NodeType(r[44]) == mad.NodeCA {
			cas++
		}
	}
	out := make([]checks.HostHCA, 0, cas) // not nil: a census of no host is still one
	var c censusScratch
	for i := uint32(0); i < x.nodes; i++ {
		if h, ok := x.censusEntry(i, &c); ok {
			out = append(out, h)
		}
	}
	return out
}

// censusScratch is one node, its ports and their far ends, reused for
// every CA a census reads (checks.CensusEntry keeps none of them): at
// 49k nodes, a node per CA was half of what a gate allocated for the
// census.
type censusScratch struct {
	n      fabric.Node
	ports  [256]fabric.Port
	remote [256]fabric.Port
	sws    [256]fabric.Node
	ptrs   [256]*fabric.Port
}

// censusEntry is node i's entry in the census (checks.CensusEntry), or
// false for a node that is no host adapter.
func (x *Index) censusEntry(i uint32, c *censusScratch) (checks.HostHCA, bool) {
	r := x.node(i)
	if r == nil || mad.NodeType(r[44]) != mad.NodeCA {
		return checks.HostHCA{}, false
	}
	n := &c.n
	n.Type = mad.NodeCA
	n.Description, _ = x.str(le.Uint32(r[24:]), uint32(le.Uint16(r[28:])))
	n.Ports = c.ptrs[:r[45]]
	clear(n.Ports)
	for p := 1; p < int(r[45]); p++ {
		q := x.portRec(i, p)
		if q == nil || q[0] == 0 {
			continue
		}
		c.ports[p] = fabric.Port{Node: n, Num: q[1], State: mad.PortState(q[3]), PhysState: mad.PhysState(q[4])}
		n.Ports[p] = &c.ports[p]
		rn := le.Uint32(q[24:])
		if rn == noRef || rn >= x.nodes || x.node(rn) == nil || mad.NodeType(x.node(rn)[44]) != mad.NodeSwitch {
			continue
		}
		c.sws[p] = fabric.Node{Type: mad.NodeSwitch, GUID: x.nodeGUID(rn)}
		c.remote[p] = fabric.Port{Node: &c.sws[p], Num: q[28]}
		c.ports[p].Remote = &c.remote[p]
	}
	return checks.CensusEntry(n)
}

// HCALookup gives one host's entries of the census from the records of
// its own nodes (found by their host keys), for a gate that has the
// sweep's summary of the census (checks.HCASummary): the whole census
// is never read. Safe for concurrent use.
func (x *Index) HCALookup() checks.HCALookup { return &indexHCAs{x: x} }

type indexHCAs struct {
	x  *Index
	mu sync.Mutex
	c  *censusScratch // allocated once, on the first lookup
}

// HostHCAs is host's entries of x.HCACensus(), in its order, whatever
// their spelling of it (fabric.HostKey).
func (l *indexHCAs) HostHCAs(host string) []checks.HostHCA {
	host = fabric.HostKey(host)
	nodes := l.x.nodesByHost(host)
	slices.Sort(nodes) // the census's order: the nodes'
	nodes = slices.Compact(nodes)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.c == nil {
		l.c = &censusScratch{}
	}
	var out []checks.HostHCA
	for _, i := range nodes {
		if h, ok := l.x.censusEntry(i, l.c); ok && fabric.HostKey(h.Host) == host {
			out = append(out, h)
		}
	}
	return out
}

// hostKey is the key gate.idx's host section files a node under: the
// first word of its description (split at a space).
func hostKey(desc string) string {
	h, _, _ := strings.Cut(strings.TrimSpace(desc), " ")
	return h
}
