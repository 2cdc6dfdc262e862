package checks

import (
	"cmp"
	"encoding/binary"
	"errors"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// PortTotals are a sweep's per-port destination totals: for every switch
// whose table it read, how many CA destinations (the LIDs of the host
// ports the routing checks count, less those another port also owns,
// and the LIDs routing.lost-lid finds lost) the table forwards out of
// each port. routing.ecmp-imbalance weighs a group
// of equal-cost ports against them (a min-hop engine balances those
// totals, not each group's split). A gate's part of the fabric holds few
// of the destinations: for a switch whose table changed since the sweep
// it corrects these totals by the entries it re-read (TableChange), so
// the group is weighed against the whole table as the sweep would
// (trial B2). Binary, to keep the state small (issue 13).
type PortTotals struct {
	// LIDs is the set of LIDs counted: bit lid%8 of byte lid/8.
	LIDs []byte `json:"lids"`
	// Switches holds, in GUID order, for each switch: its GUID (8 bytes,
	// little endian), the number of its ports with a total (uvarint),
	// then for each its number (1 byte) and total (uvarint).
	Switches []byte `json:"switches"`
}

// errTotals is a PortTotals record that does not decode.
var errTotals = errors.New("per-port destination totals do not decode")

// counted reports whether the sweep counted lid as a destination.
func (t *PortTotals) counted(lid uint16) bool {
	i := int(lid) / 8
	return i < len(t.LIDs) && t.LIDs[i]&(1<<(lid%8)) != 0
}

// of returns switch guid's totals by port number; ok false when the
// record has none for it.
func (t *PortTotals) of(guid uint64) (tot [256]int32, ok bool, err error) {
	b := t.Switches
	for len(b) > 0 {
		if len(b) < 9 {
			return tot, false, errTotals
		}
		g := binary.LittleEndian.Uint64(b)
		n, k := binary.Uvarint(b[8:])
		if k <= 0 || n > 256 {
			return tot, false, errTotals
		}
		b = b[8+k:]
		for range n {
			if len(b) < 2 {
				return tot, false, errTotals
			}
			port := b[0]
			v, k := binary.Uvarint(b[1:])
			if k <= 0 || v > 1<<31-1 {
				return tot, false, errTotals
			}
			b = b[1+k:]
			if g == guid {
				tot[port] = int32(v)
			}
		}
		if g == guid {
			return tot, true, nil
		}
		if g > guid {
			break // in GUID order: not there
		}
	}
	return tot, false, nil
}

// totalsRec is one switch's encoded totals, before they are put in GUID
// order.
type totalsRec struct {
	guid uint64
	b    []byte
}

// encodeTotals encodes switch sw's totals by port number: the ports of
// sw only, those with a destination.
func encodeTotals(sw *fabric.Node, tot *[256]int32) totalsRec {
	var ports []uint8
	for num, c := range tot {
		if c > 0 && portOf(sw, uint8(num)) != nil {
			ports = append(ports, uint8(num))
		}
	}
	b := binary.LittleEndian.AppendUint64(make([]byte, 0, 10+4*len(ports)), sw.GUID)
	b = binary.AppendUvarint(b, uint64(len(ports)))
	for _, num := range ports {
		b = append(b, num)
		b = binary.AppendUvarint(b, uint64(tot[num]))
	}
	return totalsRec{sw.GUID, b}
}

// newPortTotals puts the switches' records in GUID order (a GUID twice
// keeps its first record: a duplicate GUID is addr's finding) with the
// set of LIDs counted.
func newPortTotals(recs []totalsRec, dests []uint16) *PortTotals {
	slices.SortStableFunc(recs, func(a, b totalsRec) int { return cmp.Compare(a.guid, b.guid) })
	t := &PortTotals{Switches: []byte{}}
	for i, r := range recs {
		if i > 0 && recs[i-1].guid == r.guid {
			continue
		}
		t.Switches = append(t.Switches, r.b...)
	}
	top := 0
	for _, lid := range dests {
		top = max(top, int(lid))
	}
	t.LIDs = make([]byte, top/8+1)
	for _, lid := range dests {
		t.LIDs[lid/8] |= 1 << (lid % 8)
	}
	return t
}

// totalsDests lists the LIDs of hosts (routedHosts) but those shared:
// the destinations the totals count, with the LIDs routing.lost-lid
// finds lost.
func totalsDests(hosts []*fabric.Port, shared map[*fabric.Port]bool) []uint16 {
	var dests []uint16
	for _, h := range hosts {
		if !shared[h] {
			for lid := range lids(h) {
				dests = append(dests, lid)
			}
		}
	}
	return dests
}

// portTotalsOf counts the per-port totals of every switch of s, a whole
// fabric, whose table was read: what routing.ecmp-imbalance counts as it
// runs, for a sweep that skipped it (tables ibdoctor computed, which a
// gate's --faults may edit and have judged). lost is routing.lost-lid's
// judgement when the Run made it (Result.lost), nil when not.
func portTotalsOf(s *Snapshot, lost *lostLIDs) *PortTotals {
	hosts := routedHosts(s.Fabric)
	shared := map[*fabric.Port]bool{}
	for _, h := range hosts {
		if s.Fabric.LIDShared(h) != "" {
			shared[h] = true
		}
	}
	dests := totalsDests(hosts, shared)
	if !partlyRead(s.Fabric) {
		// As routing.ecmp-imbalance counts them (lostBehind).
		if lost == nil {
			lost = &lostLIDs{findLostLIDs(s.Fabric)}
		}
		for _, ls := range lostBehind(lost.ports) {
			dests = append(dests, ls...)
		}
	}
	masks := destMasks(dests)
	var sws []*fabric.Node
	for _, sw := range s.Fabric.Nodes {
		if sw.Type == mad.NodeSwitch && sw.Switch != nil && sw.Switch.LFT != nil {
			sws = append(sws, sw)
		}
	}
	recs := make([]totalsRec, len(sws))
	var next atomic.Int32
	var wg sync.WaitGroup
	for range min(len(sws), max(1, runtime.GOMAXPROCS(0))) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(sws); i = int(next.Add(1) - 1) {
				recs[i] = encodeTotals(sws[i], countTotals(sws[i], masks))
			}
		})
	}
	wg.Wait()
	return newPortTotals(recs, dests)
}

// destMasks is the set of dests by table block: bit lid%64 of mask
// lid/64.
func destMasks(dests []uint16) []uint64 {
	top := 0
	for _, lid := range dests {
		top = max(top, int(lid))
	}
	masks := make([]uint64, top/64+1)
	for _, lid := range dests {
		masks[lid/64] |= 1 << (lid % 64)
	}
	return masks
}

// countTotals counts how many of the LIDs in masks (destMasks) switch
// sw's table forwards out of each port (by entry: a port not read counts
// too). It runs for every switch and destination of a sweep: a block is
// looked up once for its 64 LIDs.
func countTotals(sw *fabric.Node, masks []uint64) *[256]int32 {
	var tot [256]int32
	lft := sw.Switch.LFT.View()
	n := lft.Len()
	for i := range min(lft.NumBlocks(), len(masks)) {
		m := masks[i]
		if end := n - i*mad.LFTBlockSize; end <= 0 {
			break
		} else if end < mad.LFTBlockSize {
			m &= 1<<end - 1
		}
		if m == 0 {
			continue
		}
		blk := lft.Block(i)
		if m == ^uint64(0) {
			for _, e := range blk {
				tot[e]++
			}
			continue
		}
		for ; m != 0; m &= m - 1 {
			tot[blk[bits.TrailingZeros64(m)]]++
		}
	}
	for num := range tot {
		if tot[num] > 0 && portOf(sw, uint8(num)) == nil {
			tot[num] = 0
		}
	}
	return &tot
}

// TableChange is what a gate found of a switch's forwarding table since
// the sweep, for routing.ecmp-imbalance to judge it again.
type TableChange struct {
	// Was holds, by block number, the snapshot's entries of the blocks
	// the gate re-read and found different (the switch's LFT holds the
	// live ones).
	Was map[int]fabric.LFTBlock
}

// changedTotals are the per-port totals of switch sw's table now: the
// sweep's (t), corrected by every entry for a destination the sweep
// counted that the gate re-read and found changed.
func changedTotals(sw *fabric.Node, t *PortTotals, ch TableChange) (*[256]int32, bool, error) {
	tot, ok, err := t.of(sw.GUID)
	if !ok || err != nil {
		return nil, ok, err
	}
	lft := sw.Switch.LFT
	for blk, was := range ch.Was {
		for i, old := range was {
			lid := blk*len(was) + i
			if lid > 0xbfff || !t.counted(uint16(lid)) {
				continue
			}
			now := lft.At(uint16(lid))
			if now == old {
				continue
			}
			if portOf(sw, old) != nil && tot[old] > 0 {
				tot[old]--
			}
			if portOf(sw, now) != nil {
				tot[now]++
			}
		}
	}
	return &tot, true, nil
}

// changedTables returns, for a gate's switches whose table changed since
// the sweep (TablesChanged; on judged), their ports' totals over every
// destination they route when the fabric is a part (FabricPart: the
// sweep's, corrected), and why one's cannot be known. Nil totals on a
// whole fabric: its hosts are every destination, counted as check does.
func (s *Snapshot) changedTables(judged bool) (map[*fabric.Node]*[256]int32, map[*fabric.Node]string) {
	if !judged || !s.FabricPart {
		return nil, nil
	}
	tots := map[*fabric.Node]*[256]int32{}
	why := map[*fabric.Node]string{}
	for sw, ch := range s.TablesChanged {
		if ch == nil || sw.Switch == nil || sw.Switch.LFT == nil {
			continue
		}
		t := s.PortTotals
		const changed = "its forwarding table changed since the sweep (a block re-read on the job's routes differs from the snapshot's), and "
		if t == nil && s.PortTotalsNotRead != "" {
			why[sw] = changed + "the snapshot's per-port destination totals could not be read (" + s.PortTotalsNotRead + "): run 'ibdoctor sweep'"
			continue
		}
		if t == nil {
			why[sw] = changed + "the snapshot has no per-port destination totals to weigh its groups against (swept by an older ibdoctor): run 'ibdoctor sweep'"
			continue
		}
		tot, ok, err := changedTotals(sw, t, *ch)
		switch {
		case err != nil:
			why[sw] = changed + "the snapshot's " + err.Error() + ": run 'ibdoctor sweep'"
		case !ok:
			why[sw] = changed + "the snapshot has no per-port destination totals of it (its table was not read by the sweep): run 'ibdoctor sweep'"
		default:
			tots[sw] = tot
		}
	}
	return tots, why
}
