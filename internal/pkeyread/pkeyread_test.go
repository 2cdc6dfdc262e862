package pkeyread

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// fakeTables answers P_KeyTable blocks from a per-LID key list: a block
// past the list's capacity is refused with a status (as an SMA past its
// PartitionCap), a LID in dead does not answer.
type fakeTables struct {
	mu    sync.Mutex // Read asks from several goroutines
	keys  map[uint16][]mad.PKey
	cap   map[uint16]int
	dead  map[uint16]bool
	asked map[uint16][]uint32
}

func (f *fakeTables) GetSMP(context.Context, mad.Path, mad.Attribute, uint32) (*mad.SMP, error) {
	return nil, errors.New("directed route not expected")
}

func (f *fakeTables) GetSMPByLID(_ context.Context, lid uint16, a mad.Attribute, mod uint32) (*mad.SMP, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked[lid] = append(f.asked[lid], mod)
	if f.dead[lid] {
		return nil, transport.ErrTimeout
	}
	b := int(mod & 0xffff)
	if b*mad.PKeyBlockSize >= f.cap[lid] {
		return nil, &transport.StatusError{Class: mad.ClassSubnLID, Attr: mad.AttrPKeyTable, Status: 0x1c}
	}
	t := a.(*mad.PKeyTable)
	*t = mad.PKeyTable{}
	if lo := b * mad.PKeyBlockSize; lo < len(f.keys[lid]) {
		copy(t.Keys[:], f.keys[lid][lo:])
	}
	return &mad.SMP{}, nil
}

// TestReadBlocks: a port whose first block is full is read on into the
// next (40 keys over two blocks); one whose table is exactly one full
// block stops at the refused second block and keeps the first; a port
// that does not answer is unread (could not decide), not empty.
func TestReadBlocks(t *testing.T) {
	var forty, thirtyTwo []mad.PKey
	for i := range 40 {
		k := mad.PKey(0x8001 + i)
		forty = append(forty, k)
		if i < 32 {
			thirtyTwo = append(thirtyTwo, k)
		}
	}
	g := &fakeTables{
		keys:  map[uint16][]mad.PKey{1: forty, 2: thirtyTwo, 3: {0xffff}},
		cap:   map[uint16]int{1: 128, 2: 32, 3: 128},
		dead:  map[uint16]bool{3: true},
		asked: map[uint16][]uint32{},
	}
	f := &fabric.Fabric{}
	var ports []*fabric.Port
	for lid := uint16(1); lid <= 3; lid++ {
		n := &fabric.Node{Type: mad.NodeCA, GUID: uint64(lid), Description: "host"}
		p := &fabric.Port{Node: n, Num: 1, LID: lid}
		n.Ports = []*fabric.Port{nil, p}
		f.Nodes = append(f.Nodes, n)
		ports = append(ports, p)
	}
	v := Read(context.Background(), g, f, ports, 1, true)
	if got := len(v.Tables[ports[0]]); got != 40 || len(g.asked[1]) != 2 {
		t.Errorf("LID 1: %d keys in %d reads, want 40 in 2", got, len(g.asked[1]))
	}
	if got := len(v.Tables[ports[1]]); got != 32 || len(g.asked[2]) != 2 {
		t.Errorf("LID 2: %d keys in %d reads, want 32 (block 1 refused)", got, len(g.asked[2]))
	}
	if _, ok := v.Tables[ports[2]]; ok || v.Unread[ports[2]] == "" {
		t.Errorf("LID 3 (no answer): table %v, unread %q", v.Tables[ports[2]], v.Unread[ports[2]])
	}
}
