package route

import (
	"context"
	"errors"
	"fmt"
	"github.com/ibdoctor/ibdoctor/internal/fifo"
	"github.com/ibdoctor/ibdoctor/internal/pump"
	"sync"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// SMPGetter is what ReadLFTs needs from the request engine
// (*transport.Engine implements it).
type SMPGetter interface {
	GetSMP(ctx context.Context, path mad.Path, a mad.Attribute, mod uint32) (*mad.SMP, error)
	GetSMPByLID(ctx context.Context, lid uint16, a mad.Attribute, mod uint32) (*mad.SMP, error)
}

// ReadOptions tune ReadLFTs.
type ReadOptions struct {
	// Parallel bounds the requests ReadLFTs keeps going at once (the
	// engine's own windows still apply); zero means 64.
	Parallel int
	// Switches, if set, limits reading to these switches (nodes of the
	// fabric given to ReadLFTs); the others are left as they are.
	Switches []*fabric.Node
}

// SwitchError is a switch whose table could not be read.
type SwitchError struct {
	Switch *fabric.Node
	What   string // "SwitchInfo", "LinearForwardingTable block 3"
	Err    error
}

func (e *SwitchError) Error() string {
	return fmt.Sprintf("route: reading %s of switch %q (GUID %#016x): %v", e.What, e.Switch.Description, e.Switch.GUID, e.Err)
}

func (e *SwitchError) Unwrap() error { return e.Err }

// goGetter is the asynchronous form of SMPGetter (*transport.Engine
// implements it): each call starts a read and returns; done runs later,
// once, unless the call itself returns an error.
type goGetter interface {
	GoSMP(ctx context.Context, path mad.Path, a mad.Attribute, mod uint32, done func(*mad.SMP, error)) error
	GoSMPByLID(ctx context.Context, lid uint16, a mad.Attribute, mod uint32, done func(*mad.SMP, error)) error
}

// syncGo runs a getter that only has the synchronous methods as a
// goGetter, one goroutine per read (ReadLFTs bounds how many are going).
type syncGo struct{ g SMPGetter }

func (s syncGo) GoSMP(ctx context.Context, path mad.Path, a mad.Attribute, mod uint32, done func(*mad.SMP, error)) error {
	go func() { done(s.g.GetSMP(ctx, path, a, mod)) }()
	return nil
}

func (s syncGo) GoSMPByLID(ctx context.Context, lid uint16, a mad.Attribute, mod uint32, done func(*mad.SMP, error)) error {
	go func() { done(s.g.GetSMPByLID(ctx, lid, a, mod)) }()
	return nil
}

var errNoAddress = errors.New("switch has neither a directed route nor a LID to address it by")

// ReadLFTs reads every switch's SwitchInfo, then LinearForwardingTable
// blocks 0..LinearFDBTop/64, all switches in parallel, and fills
// Switch.LFT (LinearFDBTop+1 entries) and the SwitchInfo fields of
// fabric.Switch. Switches are addressed by their discovery Path, or by
// their LID when they have none. It returns every switch's failure
// joined (each a *SwitchError); those switches keep LFT nil.
//
// The reads are started without waiting when g has the engine's
// asynchronous methods (GoSMP, GoSMPByLID), else on goroutines calling
// GetSMP and GetSMPByLID.
func ReadLFTs(ctx context.Context, g SMPGetter, f *fabric.Fabric, o ReadOptions) error {
	par := o.Parallel
	if par <= 0 {
		par = 64
	}
	var sws []*fabric.Node
	nodes := f.Nodes
	if o.Switches != nil {
		nodes = o.Switches
	}
	for _, n := range nodes {
		if n.Type == mad.NodeSwitch && len(n.Ports) > 0 {
			if n.Switch == nil {
				n.Switch = &fabric.Switch{}
			}
			sws = append(sws, n)
		}
	}
	gg, ok := g.(goGetter)
	if !ok {
		gg = syncGo{g}
	}
	r := &lftReader{ctx: ctx, g: gg, par: par, sws: make([]lftSwitch, len(sws))}
	r.wg.Add(len(sws))
	r.mu.Lock()
	for i, n := range sws {
		s := &r.sws[i]
		s.n = n
		r.infos.Push(s)
	}
	r.mu.Unlock()
	r.pump()
	r.wg.Wait()
	// The tables are whole: their pool keeps only the blocks (a check
	// holds them to the end; the index of blocks was larger than they).
	r.intern.Compact()

	errs := make([]error, len(sws))
	for i := range r.sws {
		s := &r.sws[i]
		if s.err != nil {
			errs[i] = s.err
			continue
		}
		si := &s.info
		sw := s.n.Switch
		sw.LinearFDBCap, sw.LinearFDBTop = si.LinearFDBCap, si.LinearFDBTop
		sw.MulticastCap, sw.MulticastTop = si.MulticastFDBCap, si.MulticastFDBTop
		sw.LIDsPerPort, sw.EnhancedPort0 = si.LIDsPerPort, si.EnhancedPort0
		sw.LifeTimeValue, sw.DefaultPort = si.LifeTimeValue, si.DefaultPort
		sw.PartitionCap = si.PartitionEnforcementCap
		sw.LFT = s.lft
	}
	return errors.Join(errs...)
}

// lftReader hands ReadLFTs' reads to the getter, at most par at a time:
// SwitchInfo reads first, then LFT blocks taken round-robin over the
// switches whose SwitchInfo answered. A switch goes back to the end of the
// ring after each block it gives, so the blocks go block-major — block 0
// of every switch, then block 1, ... — and every switch's management CPU
// gets a share of the window at once (switch-major order piled the reads
// onto one or two switches, where the engine's per-destination window let
// only two proceed).
type lftReader struct {
	ctx context.Context
	g   goGetter
	par int
	sws []lftSwitch
	wg  sync.WaitGroup // one per switch not finished

	mu     sync.Mutex
	infos  fifo.Queue[*lftSwitch] // switches whose SwitchInfo is to be read
	blocks fifo.Queue[*lftSwitch] // switches with LFT blocks left to send
	free   []*lftRead
	// intern shares equal blocks among the tables (a fat tree's switches
	// hold a few hundred distinct blocks among millions).
	intern   fabric.BlockInterner
	inFlight int
	sender   pump.Pump[*lftRead]
}

// lftSwitch is one switch being read.
type lftSwitch struct {
	n      *fabric.Node
	info   mad.SwitchInfo
	lft    *fabric.LFT
	nblk   int   // LFT blocks to read
	next   int   // next block to send
	active int   // reads in flight
	err    error // the first failure (*SwitchError); no more reads then
}

// lftRead is one read in flight, reused: done is its completion, made
// once.
type lftRead struct {
	r     *lftReader
	s     *lftSwitch
	block int // -1: SwitchInfo
	blk   mad.LFTBlock
	done  func(*mad.SMP, error)
}

// pump starts reads while fewer than par are going. Completions call it
// again; one goroutine pumps at a time, the others leave it a note.
func (r *lftReader) pump() {
	r.sender.Run(&r.mu, func(batch []*lftRead) []*lftRead {
		for r.inFlight < r.par {
			var s *lftSwitch
			block := -1
			if r.infos.Len() > 0 {
				s = r.infos.Pop()
			} else if r.blocks.Len() > 0 {
				s = r.blocks.Pop()
				if s.err != nil {
					continue // failed meanwhile: its other blocks are not needed
				}
				block = s.next
				s.next++
				if s.next < s.nblk {
					r.blocks.Push(s)
				}
			} else {
				break
			}
			rd := r.newRead()
			rd.s, rd.block = s, block
			s.active++
			r.inFlight++
			batch = append(batch, rd)
		}
		return batch
	}, r.send)
}

func (r *lftReader) newRead() *lftRead {
	if n := len(r.free); n > 0 {
		rd := r.free[n-1]
		r.free = r.free[:n-1]
		return rd
	}
	rd := &lftRead{r: r}
	rd.done = rd.completed
	return rd
}

// send starts one read, addressed by the switch's Path, or else by its LID.
func (r *lftReader) send(rd *lftRead) {
	var a mad.Attribute = &rd.blk
	mod := uint32(rd.block)
	if rd.block < 0 {
		a, mod = &rd.s.info, 0
	}
	n := rd.s.n
	var err error
	switch {
	case n.Path != nil:
		err = r.g.GoSMP(r.ctx, n.Path, a, mod, rd.done)
	case n.Ports[0] != nil && n.Ports[0].LID != 0:
		err = r.g.GoSMPByLID(r.ctx, n.Ports[0].LID, a, mod, rd.done)
	default:
		err = errNoAddress
	}
	if err != nil { // refused up front: done will not be called
		rd.completed(nil, err)
	}
}

// completed records the end of one read: SwitchInfo lets the switch's
// blocks go; a block is copied into the table. The first failure of a
// switch is its error, and its blocks not yet sent are dropped.
func (rd *lftRead) completed(_ *mad.SMP, err error) {
	r, s := rd.r, rd.s
	r.mu.Lock()
	r.inFlight--
	s.active--
	switch {
	case err != nil:
		if s.err == nil {
			what := "SwitchInfo"
			if rd.block >= 0 {
				what = fmt.Sprintf("LinearForwardingTable block %d", rd.block)
			}
			s.err = &SwitchError{Switch: s.n, What: what, Err: err}
		}
	case rd.block < 0:
		s.lft = fabric.NewLFT(int(s.info.LinearFDBTop) + 1)
		s.nblk = s.info.LFTBlocks()
		if s.nblk > 0 {
			r.blocks.Push(s)
		}
	case s.err == nil:
		s.lft.PutBlock(rd.block, &rd.blk.Ports, &r.intern)
	}
	finished := s.active == 0 && (s.err != nil || s.next >= s.nblk)
	rd.s = nil
	r.free = append(r.free, rd)
	r.mu.Unlock()
	r.pump()
	if finished {
		r.wg.Done()
	}
}
