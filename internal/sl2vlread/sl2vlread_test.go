package sl2vlread

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// fakeGetter answers SLtoVLMappingTable from tables by switch path and
// modifier, and fails the modifiers in fail; it records what was asked.
type fakeGetter struct {
	mu     sync.Mutex
	tables map[uint32]mad.SLtoVLTable
	fail   map[uint32]bool
	asked  []uint32
}

func (g *fakeGetter) GetSMP(_ context.Context, path mad.Path, a mad.Attribute, mod uint32) (*mad.SMP, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.asked = append(g.asked, mod)
	if a.AttributeID() != mad.AttrSLtoVLMappingTable || len(path) != 2 {
		return nil, errors.New("unexpected request")
	}
	if g.fail[mod] {
		return nil, errors.New("no response")
	}
	*a.(*mad.SLtoVLTable) = g.tables[mod]
	return &mad.SMP{}, nil
}

// TestRead: each pair is asked once by its switch's directed route with
// modifier in<<8|out; answers land in Tables, failures and switches
// without a route in Unread with the reason; nothing else is sent.
func TestRead(t *testing.T) {
	sw := &fabric.Node{Description: "sw1", Path: mad.Path{1, 7}}
	far := &fabric.Node{Description: "sw9"} // not from a discovery
	spread := mad.SLtoVLTable{VL: [16]uint8{0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7}}
	g := &fakeGetter{
		tables: map[uint32]mad.SLtoVLTable{mad.SLtoVLMod(1, 7): {}, mad.SLtoVLMod(8, 7): spread},
		fail:   map[uint32]bool{mad.SLtoVLMod(2, 7): true},
	}
	pairs := []checks.SL2VLPair{{Switch: sw, In: 1, Out: 7}, {Switch: sw, In: 8, Out: 7}, {Switch: sw, In: 2, Out: 7}, {Switch: far, In: 1, Out: 2}}
	v := Read(context.Background(), g, pairs)
	if len(v.Tables) != 2 || v.Tables[pairs[0]] != (mad.SLtoVLTable{}) || v.Tables[pairs[1]] != spread {
		t.Errorf("tables: %v", v.Tables)
	}
	if v.Unread[pairs[2]] != "no response" || v.Unread[pairs[3]] != "no directed route to the switch" || len(v.Unread) != 2 {
		t.Errorf("unread: %v", v.Unread)
	}
	if len(g.asked) != 3 {
		t.Errorf("%d requests, want 3 (one per pair with a route): %#x", len(g.asked), g.asked)
	}
	if v := Read(context.Background(), g, nil); len(v.Tables)+len(v.Unread) != 0 {
		t.Errorf("no pairs: %+v", v)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if v := Read(ctx, g, pairs[:1]); v.Unread[pairs[0]] == "" {
		t.Errorf("cancelled: %+v", v)
	}
}
