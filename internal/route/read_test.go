package route

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/internal/transport/transporttest"
	"github.com/ibdoctor/ibdoctor/mad"
)

// fakeSMA answers SwitchInfo and LinearForwardingTable reads from a
// routed model through the synchronous SMPGetter methods only (so
// ReadLFTs takes its goroutine fallback), logging every read and the
// most reads it saw going at once.
type fakeSMA struct {
	byPath map[string]*fabric.Node
	byLID  map[uint16]*fabric.Node
	fail   func(n *fabric.Node, attr mad.AttrID, mod uint32) error
	delay  time.Duration

	mu        sync.Mutex
	log       []string // "desc attr mod" or "lid:desc attr mod"
	cur, most int
}

func newFakeSMA(f *fabric.Fabric) *fakeSMA {
	s := &fakeSMA{byPath: map[string]*fabric.Node{}, byLID: map[uint16]*fabric.Node{}}
	for _, n := range f.Nodes {
		if n.Type != mad.NodeSwitch {
			continue
		}
		if n.Path != nil {
			s.byPath[n.Path.String()] = n
		}
		s.byLID[n.Ports[0].LID] = n
	}
	return s
}

func (s *fakeSMA) GetSMP(ctx context.Context, path mad.Path, a mad.Attribute, mod uint32) (*mad.SMP, error) {
	return s.answer(ctx, "", s.byPath[path.String()], a, mod)
}

func (s *fakeSMA) GetSMPByLID(ctx context.Context, lid uint16, a mad.Attribute, mod uint32) (*mad.SMP, error) {
	return s.answer(ctx, "lid:", s.byLID[lid], a, mod)
}

func (s *fakeSMA) answer(ctx context.Context, how string, n *fabric.Node, a mad.Attribute, mod uint32) (*mad.SMP, error) {
	s.mu.Lock()
	s.cur++
	s.most = max(s.most, s.cur)
	desc := "?"
	if n != nil {
		desc = n.Description
	}
	s.log = append(s.log, fmt.Sprintf("%s%s %s %d", how, desc, mad.AttrName(mad.ClassSubnLID, a.AttributeID()), mod))
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.cur--
		s.mu.Unlock()
	}()
	time.Sleep(s.delay)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if n == nil {
		return nil, errors.New("no such node")
	}
	if s.fail != nil {
		if err := s.fail(n, a.AttributeID(), mod); err != nil {
			return nil, err
		}
	}
	data := make([]byte, 64)
	switch a.AttributeID() {
	case mad.AttrSwitchInfo:
		si := mad.SwitchInfo{LinearFDBCap: n.Switch.LinearFDBCap, LinearFDBTop: n.Switch.LinearFDBTop, LifeTimeValue: 18}
		si.MarshalAttr(data)
	case mad.AttrLinearForwardingTable:
		var blk mad.LFTBlock
		for i := range blk.Ports {
			blk.Ports[i] = fabric.NoRoute
		}
		copy(blk.Ports[:], n.Switch.LFT.Bytes()[min(n.Switch.LFT.Len(), int(mod)*64):])
		blk.MarshalAttr(data)
	default:
		return nil, fmt.Errorf("unexpected %s", mad.AttrName(mad.ClassSubnLID, a.AttributeID()))
	}
	return &mad.SMP{}, a.UnmarshalAttr(data)
}

// lftRig is a routed 2-level fat tree (6 switches, tables of 3 blocks:
// top 134) with directed routes, and a copy of it without tables.
func lftRig(t *testing.T) (want, got *fabric.Fabric) {
	t.Helper()
	ft := topology.FatTree2{Common: topology.Common{SwitchPorts: 40}, Leaves: 4, Spines: 2, HostsPerLeaf: 32}
	want = fatTree(t, ft)
	setPaths(want, node(want, "gpu001 mlx5_0").Ports[1])
	got = fatTree(t, ft)
	for i, n := range got.Nodes {
		if n.Switch != nil {
			n.Switch.LFT, n.Switch.LinearFDBTop = nil, 0
			n.Path = want.Nodes[i].Path
		}
	}
	return want, got
}

func switchesOf(f *fabric.Fabric) []*fabric.Node {
	var out []*fabric.Node
	for _, n := range f.Nodes {
		if n.Type == mad.NodeSwitch {
			out = append(out, n)
		}
	}
	return out
}

// sameLFTs checks got's tables against want's, except for the switches
// in skip, which must have none.
func sameLFTs(t *testing.T, want, got *fabric.Fabric, skip ...string) {
	t.Helper()
	for i, n := range got.Nodes {
		if n.Switch == nil {
			continue
		}
		w := want.Nodes[i].Switch
		switch {
		case strings.Contains(" "+strings.Join(skip, " ")+" ", " "+n.Description+" "):
			if n.Switch.LFT != nil {
				t.Errorf("%s got a table", n.Description)
			}
		case n.Switch.LinearFDBTop != w.LinearFDBTop || !n.Switch.LFT.Equal(w.LFT) || n.Switch.LifeTimeValue != 18:
			t.Errorf("%s: top %d, LFT %v, want top %d, %v", n.Description, n.Switch.LinearFDBTop, n.Switch.LFT, w.LinearFDBTop, w.LFT)
		}
	}
}

// With one read at a time the order is exact: every SwitchInfo first,
// then the blocks block-major across the switches.
func TestReadLFTsOrder(t *testing.T) {
	want, got := lftRig(t)
	sma := newFakeSMA(want)
	if err := ReadLFTs(context.Background(), sma, got, ReadOptions{Parallel: 1}); err != nil {
		t.Fatal(err)
	}
	sameLFTs(t, want, got)
	sws := switchesOf(got)
	var order []string
	for _, n := range sws {
		order = append(order, n.Description+" SwitchInfo 0")
	}
	for b := range 3 {
		for _, n := range sws {
			order = append(order, fmt.Sprintf("%s LinearForwardingTable %d", n.Description, b))
		}
	}
	if strings.Join(sma.log, "\n") != strings.Join(order, "\n") {
		t.Fatalf("reads in order\n%s\nwant\n%s", strings.Join(sma.log, "\n"), strings.Join(order, "\n"))
	}
	if sma.most != 1 {
		t.Fatalf("%d reads at once, want 1", sma.most)
	}
}

// Parallel bounds the reads going at once.
func TestReadLFTsParallel(t *testing.T) {
	for _, par := range []int{3, 0} {
		want, got := lftRig(t)
		sma := newFakeSMA(want)
		sma.delay = time.Millisecond
		if err := ReadLFTs(context.Background(), sma, got, ReadOptions{Parallel: par}); err != nil {
			t.Fatal(err)
		}
		sameLFTs(t, want, got)
		if len(sma.log) != 6*4 {
			t.Fatalf("Parallel %d: %d reads, want 24", par, len(sma.log))
		}
		if lim := cmpOr(par, 64); sma.most > lim || sma.most < 2 {
			t.Fatalf("Parallel %d: %d reads at once, want 2..%d", par, sma.most, lim)
		}
	}
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// A failed block fails its switch with the block's number; the blocks of
// that switch not yet sent are not read.
func TestReadLFTsBlockFailure(t *testing.T) {
	want, got := lftRig(t)
	sma := newFakeSMA(want)
	boom := errors.New("boom")
	sma.fail = func(n *fabric.Node, attr mad.AttrID, mod uint32) error {
		if n.Description == "spine02" && attr == mad.AttrLinearForwardingTable && mod == 0 {
			return boom
		}
		return nil
	}
	err := ReadLFTs(context.Background(), sma, got, ReadOptions{Parallel: 1})
	var se *SwitchError
	if !errors.As(err, &se) || se.Switch.Description != "spine02" || se.What != "LinearForwardingTable block 0" || !errors.Is(err, boom) {
		t.Fatalf("error %v, want spine02's block 0 to fail", err)
	}
	if want := `route: reading LinearForwardingTable block 0 of switch "spine02"`; !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("error text %q, want it to start %q", err, want)
	}
	sameLFTs(t, want, got, "spine02")
	n := 0
	for _, l := range sma.log {
		if strings.HasPrefix(l, "spine02 ") {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("spine02 read %d times, want 2 (SwitchInfo, block 0):\n%s", n, strings.Join(sma.log, "\n"))
	}
}

// Switches without a directed route are read by LID; one with neither
// fails without a read.
func TestReadLFTsByLID(t *testing.T) {
	want, got := lftRig(t)
	sma := newFakeSMA(want)
	for _, n := range got.Nodes {
		if n.Description == "leaf01" || n.Description == "spine01" {
			n.Path = nil
		}
		if n.Description == "spine01" {
			n.Ports[0].LID = 0
		}
	}
	err := ReadLFTs(context.Background(), sma, got, ReadOptions{})
	var se *SwitchError
	if !errors.As(err, &se) || se.Switch.Description != "spine01" || se.What != "SwitchInfo" ||
		se.Err.Error() != "switch has neither a directed route nor a LID to address it by" {
		t.Fatalf("error %v, want spine01 unaddressable", err)
	}
	sameLFTs(t, want, got, "spine01")
	byLID := 0
	for _, l := range sma.log {
		switch {
		case strings.HasPrefix(l, "lid:leaf01 "):
			byLID++
		case strings.HasPrefix(l, "lid:"), strings.HasPrefix(l, "spine01 "):
			t.Errorf("unexpected read %q", l)
		}
	}
	if byLID != 4 {
		t.Fatalf("%d reads of leaf01 by LID, want 4", byLID)
	}
}

// The engine (asynchronous reads) and a getter with only the synchronous
// methods read the same tables, and a cancelled context fails every
// switch with it.
func TestReadLFTsEngine(t *testing.T) {
	want, _ := lftRig(t)
	// leaf02 answers SwitchInfo but not its block 1.
	h := smaHandler(want, nil)
	lost := "dr:" + node(want, "leaf02").Path.String()
	conn := transporttest.New(transport.LocalPort{Name: "test", PortNum: 1}, func(p *transport.Packet) []transporttest.Reply {
		if transporttest.DestKey(p) == lost && mad.AttrID(uint16(p.MAD[16])<<8|uint16(p.MAD[17])) == mad.AttrLinearForwardingTable &&
			p.MAD[23] == 1 {
			return nil
		}
		return h(p)
	})
	eng := transport.NewEngine(conn, transport.Options{Timeout: 20 * time.Millisecond, Retries: -1})
	defer eng.Close()
	for _, g := range []SMPGetter{eng, syncOnly{eng}} {
		name := fmt.Sprintf("%T", g)
		_, got := lftRig(t)
		err := ReadLFTs(context.Background(), g, got, ReadOptions{})
		var se *SwitchError
		var te *transport.TimeoutError
		if !errors.As(err, &se) || se.Switch.Description != "leaf02" || se.What != "LinearForwardingTable block 1" || !errors.As(err, &te) {
			t.Fatalf("%s: error %v, want leaf02's block 1 to time out", name, err)
		}
		sameLFTs(t, want, got, "leaf02")

		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, got = lftRig(t)
		err = ReadLFTs(ctx, g, got, ReadOptions{})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: cancelled: error %v", name, err)
		}
		n := 0
		for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
			if errors.As(e, &se) && se.What == "SwitchInfo" && errors.Is(e, context.Canceled) {
				n++
			}
		}
		if n != 6 {
			t.Fatalf("%s: cancelled: %d switches failed with it, want 6: %v", name, n, err)
		}
		sameLFTs(t, want, got, "leaf01", "leaf02", "leaf03", "leaf04", "spine01", "spine02")
	}
}

// syncOnly hides all but the synchronous methods of an SMPGetter.
type syncOnly struct{ SMPGetter }

// BenchmarkReadLFTs8k reads the 1,280 switch tables (SwitchInfo and
// 168 blocks each) of topology.FatTree8k from an in-process responder, so it
// measures ReadLFTs' and the engine's own cost per read, which ibsim's
// throughput hides in BenchmarkLFTDump8k.
func BenchmarkReadLFTs8k(b *testing.B) {
	want, err := topology.FatTree8k().Build()
	if err != nil {
		b.Fatal(err)
	}
	if _, err := topology.AssignLIDs(want); err != nil {
		b.Fatal(err)
	}
	if err := topology.Route(want); err != nil {
		b.Fatal(err)
	}
	var local *fabric.Port
	for _, n := range want.Nodes {
		if n.Type != mad.NodeSwitch {
			local = n.Ports[1]
			break
		}
	}
	setPaths(want, local)
	conn := transporttest.New(transport.LocalPort{Name: "test", PortNum: 1}, smaHandler(want, nil))
	eng := transport.NewEngine(conn, transport.Options{Timeout: time.Second})
	defer eng.Close()
	smps := 0
	for _, n := range switchesOf(want) {
		smps += 1 + mad.LFTBlockCount(n.Switch.LinearFDBTop)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := ReadLFTs(context.Background(), eng, want, ReadOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(smps), "ns/SMP")
}

// BenchmarkReadLFTsHeld8k reads topology.FatTree8k's 1,280 tables as
// BenchmarkReadLFTs8k does, made as varied as OpenSM's on ibsim (about 19k
// distinct blocks; topology.Route's min-hop repeats a few hundred), and
// reports tables-MB: the heap the tables hold once read, which a check
// keeps to its end.
func BenchmarkReadLFTsHeld8k(b *testing.B) {
	want, err := topology.FatTree8k().Build()
	if err != nil {
		b.Fatal(err)
	}
	if _, err := topology.AssignLIDs(want); err != nil {
		b.Fatal(err)
	}
	if err := topology.Route(want); err != nil {
		b.Fatal(err)
	}
	sws := switchesOf(want)
	for i, n := range sws {
		// Block k of switch i is one of 128 variants of block k: the
		// ports differ, the sizes are the routed tables'.
		e := n.Switch.LFT.Bytes()
		for l := range e {
			if e[l] != fabric.NoRoute {
				x := uint32(l/64)*1315423911 ^ uint32(i%128)*2654435761 ^ uint32(l%64)*40503
				x ^= x >> 13
				x *= 0x5bd1e995
				x ^= x >> 15
				e[l] = uint8(1 + x%36)
			}
		}
		n.Switch.LFT = fabric.LFTFromBytes(e, nil)
	}
	var local *fabric.Port
	for _, n := range want.Nodes {
		if n.Type != mad.NodeSwitch {
			local = n.Ports[1]
			break
		}
	}
	setPaths(want, local)
	conn := transporttest.New(transport.LocalPort{Name: "test", PortNum: 1}, smaHandler(want, nil))
	eng := transport.NewEngine(conn, transport.Options{Timeout: time.Second})
	defer eng.Close()
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := ReadLFTs(context.Background(), eng, want, ReadOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	held := heap()
	distinct := 0
	seen := map[fabric.LFTBlock]bool{}
	for _, n := range sws {
		for k := range n.Switch.LFT.NumBlocks() {
			if blk := n.Switch.LFT.Block(k); !seen[*blk] {
				seen[*blk] = true
				distinct++
			}
		}
	}
	seen = nil
	for _, n := range sws {
		n.Switch.LFT = nil
	}
	held -= heap()
	b.ReportMetric(float64(held)/(1<<20), "tables-MB")
	b.ReportMetric(float64(distinct), "distinct-blocks")
}

// BenchmarkReadLFTsSim8k reads topology.FatTree8k's 1,280 tables through
// the engine from the in-process simulator on the wall clock, as `check
// --sim=FILE` does: the engine's and the simulator's cost per SMP
// together, answered in Send or on the Conn's goroutine
// (sim.Options.Concurrent), and whether they overlap on the host's cores
// (wall ns/SMP against cpu-ns/SMP).
func BenchmarkReadLFTsSim8k(b *testing.B) {
	want, err := topology.Routed(topology.FatTree8k())
	if err != nil {
		b.Fatal(err)
	}
	for _, concurrent := range []bool{false, true} {
		b.Run(map[bool]string{false: "send", true: "concurrent"}[concurrent], func(b *testing.B) {
			benchReadLFTsSim(b, want, sim.Options{Concurrent: concurrent})
		})
	}
}

func benchReadLFTsSim(b *testing.B, want *fabric.Fabric, opts sim.Options) {
	s, err := sim.New(want, opts)
	if err != nil {
		b.Fatal(err)
	}
	c, err := s.Attach("", 0)
	if err != nil {
		b.Fatal(err)
	}
	var local *fabric.Port
	for _, n := range want.Nodes {
		n.Path = nil
		if n.GUID == c.Local().NodeGUID {
			local = n.Ports[c.Local().PortNum]
		}
	}
	setPaths(want, local)
	eng := transport.NewEngine(c, transport.Options{Timeout: time.Second})
	defer eng.Close()
	smps := 0
	for _, n := range switchesOf(want) {
		smps += 1 + mad.LFTBlockCount(n.Switch.LinearFDBTop)
	}
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := ReadLFTs(context.Background(), eng, want, ReadOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := time.Duration(ru1.Utime.Nano() - ru0.Utime.Nano() + ru1.Stime.Nano() - ru0.Stime.Nano())
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(smps), "ns/SMP")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(smps), "cpu-ns/SMP")
}
