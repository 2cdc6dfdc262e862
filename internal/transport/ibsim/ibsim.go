// Package ibsim is a transport.Conn that talks to the OFED fabric
// simulator ibsim over its own socket protocol (what libumad2sim does
// underneath libibumad), with no cgo and no libibumad.
//
// A Conn holds one of ibsim's ten client slots: it binds two abstract unix
// datagram sockets (BASE:ctlID and BASE:inID), sends CONNECT on BASE:ctl,
// connects its data socket to BASE:outN for the slot N it was given, and
// exchanges 288-byte data messages, each one MAD. A goroutine drains the
// data socket for the whole life of the Conn (ibsim busy-loops, serving
// nobody, while a client's receive queue is full), and Close sends
// DISCONNECT so the slot is free again.
//
// Slots and process death: Close frees the slot. Pass a context that is
// cancelled on SIGINT/SIGTERM (signal.NotifyContext) as Options.Lifetime and
// the Conn closes itself, DISCONNECT included, when it is cancelled. A
// process killed with SIGKILL cannot say goodbye: its sockets vanish with
// it but ibsim keeps the slot until it next fails to write to it (which a
// diagnostics client that sent nothing more never triggers) or until
// someone types "X N" on the ibsim console; "Attached" lists the slots with
// the client ID, whose low 22 bits are the owner's pid (see ClientID).
//
// Transaction IDs: ibsim overwrites bits 63..48 of every request's TID with
// the slot number to route the answer back, so responses carry the slot in
// those bits; callers match on the low 32 bits (mad.TIDLow).
package ibsim

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Environment variables read when the matching Options field is empty
// (the same ones ibsim and libumad2sim use).
const (
	EnvSockName = "IBSIM_SOCKNAME"
	EnvHost     = "SIM_HOST"
	// DefaultSockName is ibsim's socket base name when IBSIM_SOCKNAME is
	// unset.
	DefaultSockName = "sim"
)

// DefaultControlTimeout bounds each control-channel exchange.
const DefaultControlTimeout = 2 * time.Second

// Options configure Dial.
type Options struct {
	// SockName is ibsim's socket base name (--ibsim=NAME). Empty: the
	// IBSIM_SOCKNAME environment variable, else "sim".
	SockName string
	// Host is the node to attach to (--ibsim-host NODE): an ibsim node id
	// (the quoted name in the net file) or a NodeDescription. Empty: the
	// SIM_HOST environment variable, else ibsim's default port (the first
	// port of its net file).
	Host string
	// ClientID names our sockets (BASE:ctlID, BASE:inID) and is what the
	// console's "Attached" shows as pid; at most MaxInt32 (ibsim holds it
	// in a C int). Zero: pid + (n%512)<<22 for the n-th Conn of this
	// process, so the first one uses the plain pid as libumad2sim does,
	// later ones stay unique, and ID&0x3fffff is always the pid (Linux
	// pids are below 1<<22). An ID whose sockets are taken is skipped.
	ClientID uint32
	// ControlTimeout bounds each control exchange. Zero: 2s.
	ControlTimeout time.Duration
	// Lifetime, if not nil, closes the Conn (DISCONNECT included) when it
	// is done. Give it a context cancelled on SIGINT/SIGTERM so that an
	// interrupted process frees its slot.
	Lifetime context.Context
}

// maxQueued bounds the packets held for Recv. A diagnostics client only
// receives answers to its own requests, so the bound is only reached by a
// caller that sends far more than it reads; past it packets are dropped
// (counted in Stats) rather than letting ibsim spin on a full socket.
const maxQueued = 1 << 16

// Conn is a transport.Conn attached to one port of an ibsim fabric.
type Conn struct {
	base    string
	slot    uint32
	id      uint32
	timeout time.Duration

	ctlMu  sync.Mutex
	sendMu sync.Mutex
	ctl    *net.UnixConn
	data   *net.UnixConn
	raw    syscall.RawConn // of data
	// Under sendMu: the message being sent, the callback that sends it
	// (made once, so that a send allocates nothing) and its result.
	wbuf    [dataSize]byte
	writeFn func(fd uintptr) bool
	werr    error

	local atomic.Pointer[transport.LocalPort]

	mu    sync.Mutex
	queue []*transport.Packet // filled by the reader
	// Under recvMu: packets Recv took from queue in one go, rq[rpos:]
	// not yet returned.
	recvMu  sync.Mutex
	rq      []*transport.Packet
	rpos    int
	readErr error
	notify  chan struct{} // cap 1: something was queued or the reader ended
	done    chan struct{} // closed by Close
	closeMu sync.Mutex
	closed  bool
	stopLt  func() bool

	readerDone chan struct{}
	deliver    atomic.Pointer[func(*transport.Packet) bool] // see Deliver
	dropped    atomic.Uint64
	malformed  atomic.Uint64
}

var _ transport.Conn = (*Conn)(nil)

var connSeq atomic.Uint32 // per-process Conn counter for default client IDs

// ErrNotListening is wrapped by Dial's error when no ibsim is bound to the
// socket name.
var ErrNotListening = errors.New("ibsim: not listening")

// ErrRefused is wrapped by Dial's error when ibsim answers CONNECT with
// ERROR.
var ErrRefused = errors.New("ibsim: connection refused")

// Dial attaches a new client to ibsim. ctx bounds the dial only; see
// Options.Lifetime for tying the Conn's life to a context.
func Dial(ctx context.Context, opt Options) (*Conn, error) {
	base := opt.SockName
	if base == "" {
		base = os.Getenv(EnvSockName)
	}
	if base == "" {
		base = DefaultSockName
	}
	host := opt.Host
	if host == "" {
		host = os.Getenv(EnvHost)
	}
	timeout := opt.ControlTimeout
	if timeout <= 0 {
		timeout = DefaultControlTimeout
	}
	c := &Conn{
		base:       base,
		timeout:    timeout,
		notify:     make(chan struct{}, 1),
		done:       make(chan struct{}),
		readerDone: make(chan struct{}),
	}
	if err := c.bind(opt.ClientID); err != nil {
		return nil, err
	}
	if err := c.connect(ctx, host); err != nil {
		c.ctl.Close()
		c.data.Close()
		return nil, err
	}
	// From here on we hold a slot: every failure path must DISCONNECT.
	fail := func(err error) (*Conn, error) {
		c.disconnect()
		c.ctl.Close()
		c.data.Close()
		return nil, err
	}
	if err := c.connectData(); err != nil {
		return fail(err)
	}
	lp, err := c.queryLocal(ctx)
	if err != nil {
		return fail(err)
	}
	c.local.Store(lp)
	go c.reader()
	if opt.Lifetime != nil {
		c.closeMu.Lock() // orders this write before the Close the AfterFunc may run
		c.stopLt = context.AfterFunc(opt.Lifetime, func() { c.Close() })
		c.closeMu.Unlock()
	}
	return c, nil
}

// bind creates and binds both client sockets under one client ID.
func (c *Conn) bind(fixed uint32) error {
	if fixed > math.MaxInt32 {
		// ibsim keeps the ID in a C int and prints it with %d when it
		// connects to BASE:inID: a larger ID names another socket and
		// ibsim exits on the failed connect.
		return fmt.Errorf("ibsim: client ID %d is above %d, which ibsim cannot handle", fixed, math.MaxInt32)
	}
	srv := &net.UnixAddr{Name: sockAddr(serverCtlName(c.base)), Net: "unixgram"}
	pid := uint32(os.Getpid()) & (1<<22 - 1)
	for attempt := 0; ; attempt++ {
		id := fixed
		if id == 0 {
			id = pid + (connSeq.Add(1)-1)%512<<22 // stays <= MaxInt32
			if id == 0 {
				continue
			}
		}
		ctl, err := net.DialUnix("unixgram", &net.UnixAddr{Name: sockAddr(clientCtlName(c.base, id)), Net: "unixgram"}, srv)
		if err != nil {
			if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) {
				return fmt.Errorf("%w: no ibsim is listening on socket name %q (abstract socket @%s:ctl); start `ibsim -s NETFILE` or set %s / --ibsim to the name ibsim was started with",
					ErrNotListening, c.base, c.base, EnvSockName)
			}
			if errors.Is(err, syscall.EADDRINUSE) && fixed == 0 && attempt < 1024 {
				continue
			}
			return fmt.Errorf("ibsim: binding control socket %s:ctl%d: %w", c.base, id, err)
		}
		data, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sockAddr(clientDataName(c.base, id)), Net: "unixgram"})
		if err != nil {
			ctl.Close()
			if errors.Is(err, syscall.EADDRINUSE) && fixed == 0 && attempt < 1024 {
				continue
			}
			return fmt.Errorf("ibsim: binding data socket %s:in%d: %w", c.base, id, err)
		}
		c.id, c.ctl, c.data = id, ctl, data
		return nil
	}
}

func (c *Conn) connect(ctx context.Context, host string) error {
	var m ctlMsg
	m.Type = ctlConnect
	ci := clientInfo{ID: c.id, NodeID: host}
	if err := ci.marshal(&m); err != nil {
		return err
	}
	r, err := c.exchange(ctx, &m)
	if err != nil {
		return err
	}
	if r.Type == ctlError {
		node := "the default port (first port of the net file)"
		if host != "" {
			node = fmt.Sprintf("node %q", host)
		}
		return fmt.Errorf("%w: ibsim (socket name %q) refused to attach client %d to %s: either all %d client slots are taken (console `Attached` lists them, `X N` frees slot N) or no node id or NodeDescription is %q",
			ErrRefused, c.base, c.id, node, maxSlots, host)
	}
	var got clientInfo
	got.unmarshal(r)
	if got.ID >= maxSlots {
		return fmt.Errorf("ibsim: CONNECT reply gives slot %d, want 0..%d", got.ID, maxSlots-1)
	}
	c.slot = got.ID
	c.local.Store(&transport.LocalPort{Name: "ibsim:" + c.base + "/" + got.NodeID, NoVendorMADs: NoVendorMADs, NoARInfo: NoARInfo})
	return nil
}

func (c *Conn) connectData() error {
	rc, err := c.data.SyscallConn()
	if err != nil {
		return fmt.Errorf("ibsim: data socket: %w", err)
	}
	c.raw = rc
	c.writeFn = c.tryWrite
	name := serverDataName(c.base, c.slot)
	var cerr error
	if err := rc.Control(func(fd uintptr) {
		cerr = syscall.Connect(int(fd), &syscall.SockaddrUnix{Name: sockAddr(name)})
	}); err != nil {
		return fmt.Errorf("ibsim: data socket: %w", err)
	}
	if cerr != nil {
		return fmt.Errorf("ibsim: connecting data socket to %s (slot %d): %w", name, c.slot, cerr)
	}
	return nil
}

// exchange sends one control request and waits for its reply: a message of
// the same type, or ERROR. Late replies to earlier requests are skipped.
func (c *Conn) exchange(ctx context.Context, m *ctlMsg) (*ctlMsg, error) {
	c.ctlMu.Lock()
	defer c.ctlMu.Unlock()
	deadline := time.Now().Add(c.timeout)
	byCtx := false
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline, byCtx = d, true
	}
	if err := c.ctl.SetDeadline(deadline); err != nil {
		return nil, fmt.Errorf("ibsim: control socket: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { c.ctl.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := c.ctl.Write(m.marshal()); err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("%w: ibsim on socket name %q went away (%s)", ErrNotListening, c.base, m.Type)
		}
		return nil, c.ctlErr(ctx, byCtx, m.Type, err)
	}
	buf := make([]byte, ctlSize+1)
	for {
		n, err := c.ctl.Read(buf)
		if err != nil {
			return nil, c.ctlErr(ctx, byCtx, m.Type, err)
		}
		var r ctlMsg
		if err := r.unmarshal(buf[:n]); err != nil {
			continue
		}
		if r.Type == m.Type || r.Type == ctlError {
			return &r, nil
		}
	}
}

func (c *Conn) ctlErr(ctx context.Context, byCtx bool, t ctlType, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("ibsim: %s on socket name %q: %w", t, c.base, ctx.Err())
	}
	var ne net.Error
	timeout := errors.As(err, &ne) && ne.Timeout()
	if timeout && byCtx {
		return fmt.Errorf("ibsim: no answer to %s from ibsim on socket name %q: %w", t, c.base, context.DeadlineExceeded)
	}
	if timeout {
		return fmt.Errorf("ibsim: no answer to %s from ibsim on socket name %q within %v (ibsim busy, stopped with the console in `Wait`, or spinning on a client that stopped reading)", t, c.base, c.timeout)
	}
	return fmt.Errorf("ibsim: %s on socket name %q: %w", t, c.base, err)
}

func (c *Conn) request(ctx context.Context, t ctlType, data []byte) (*ctlMsg, error) {
	m := ctlMsg{ClientID: c.slot, Type: t, Len: uint32(len(data))}
	copy(m.Data[:], data)
	r, err := c.exchange(ctx, &m)
	if err != nil {
		return nil, err
	}
	if r.Type == ctlError {
		return nil, fmt.Errorf("ibsim: %s for slot %d on socket name %q answered ERROR", t, c.slot, c.base)
	}
	return r, nil
}

func (c *Conn) disconnect() error {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	_, err := c.request(ctx, ctlDisconnect, nil)
	return err
}

// queryLocal fills LocalPort from GET_NODEINFO and GET_PORTINFO(0). It is
// called before the reader starts, so it may also use the data socket: a
// directed-route NodeInfo with no hops gives the real PortGUID and port
// number (the control channel's NodeInfo carries the NodeGUID there).
func (c *Conn) queryLocal(ctx context.Context) (*transport.LocalPort, error) {
	lp := *c.local.Load()
	ni, err := c.request(ctx, ctlGetNodeInfo, nil)
	if err != nil {
		return nil, err
	}
	lp.NodeGUID = binary.BigEndian.Uint64(ni.Data[12:20])
	lp.PortGUID = binary.BigEndian.Uint64(ni.Data[20:28])
	lp.PortNum = ni.Data[36]
	lp.LinkLayer = "InfiniBand"
	if err := c.fillPortInfo(ctx, &lp); err != nil {
		return nil, err
	}
	if guid, port, err := c.localNodeInfoSMP(); err == nil {
		lp.PortGUID, lp.PortNum = guid, port
	}
	return &lp, nil
}

func (c *Conn) fillPortInfo(ctx context.Context, lp *transport.LocalPort) error {
	pi, err := c.request(ctx, ctlGetPortInfo, []byte{0})
	if err != nil {
		return err
	}
	lp.LID = binary.BigEndian.Uint16(pi.Data[16:18])
	lp.SMLID = binary.BigEndian.Uint16(pi.Data[18:20])
	return nil
}

// localNodeInfoSMP sends a DR NodeInfo Get with no hops on the data socket
// and reads the answer synchronously (no reader is running yet).
func (c *Conn) localNodeInfoSMP() (uint64, uint8, error) {
	req, err := mad.NewDRGet(nil, mad.AttrNodeInfo, 0)
	if err != nil {
		return 0, 0, err
	}
	req.TID = 0x1b51b51b
	buf := make([]byte, dataSize+1)
	marshalData(buf, &dataMsg{DLID: mad.PermissiveLID, SLID: mad.PermissiveLID, Length: mad.Size}, req.Marshal())
	if _, err := c.data.Write(buf[:dataSize]); err != nil {
		return 0, 0, err
	}
	c.data.SetReadDeadline(time.Now().Add(c.timeout))
	defer c.data.SetReadDeadline(time.Time{})
	for {
		n, err := c.data.Read(buf)
		if err != nil {
			return 0, 0, err
		}
		h, m, err := unmarshalData(buf[:n])
		if err != nil || h.Status != 0 {
			continue
		}
		resp, err := mad.UnmarshalSMP(m)
		if err != nil || mad.ValidateResponse(req, resp) != nil || !resp.Status.OK() {
			continue
		}
		return binary.BigEndian.Uint64(resp.Data[20:28]), resp.Data[36], nil
	}
}

// NoVendorMADs is why ibsim's fabric has no firmware versions to read:
// ibsim answers only the SMP classes and PerfMgt (sim_mad.c's table) and
// forwards any other class to a client that registered it, so a
// GeneralInfo Get (class 0x0A) only comes back with status 110.
const NoVendorMADs = "ibsim implements no vendor-specific MAD class (GeneralInfo, 0x0A): its devices have no firmware to report"

// NoARInfo is why ibsim's switches have no adaptive-routing state to
// read: AdaptiveRoutingInfo (SMP 0xFF20) is not in its attribute table.
const NoARInfo = "ibsim implements no AdaptiveRoutingInfo (SMP 0xFF20)"

// Local describes the attached port as read at Dial (see RefreshLocal).
func (c *Conn) Local() transport.LocalPort { return *c.local.Load() }

// RefreshLocal re-reads the attached port's LID and SM LID (they change
// when an SM sweeps after Dial) and returns the updated description.
func (c *Conn) RefreshLocal(ctx context.Context) (transport.LocalPort, error) {
	if c.isClosed() {
		return transport.LocalPort{}, transport.ErrClosed
	}
	lp := *c.local.Load()
	if err := c.fillPortInfo(ctx, &lp); err != nil {
		return transport.LocalPort{}, err
	}
	c.local.Store(&lp)
	return lp, nil
}

// Slot is the ibsim client slot (0..9) this Conn holds.
func (c *Conn) Slot() int { return int(c.slot) }

// ClientID is the ID our sockets are named with and "Attached" shows.
func (c *Conn) ClientID() uint32 { return c.id }

// SockName is the ibsim socket base name.
func (c *Conn) SockName() string { return c.base }

// Stats counts data messages the reader discarded.
type Stats struct {
	Dropped   uint64 // queue full (maxQueued packets not yet read by Recv)
	Malformed uint64 // not 288 bytes
}

// Stats reports discarded data messages.
func (c *Conn) Stats() Stats {
	return Stats{Dropped: c.dropped.Load(), Malformed: c.malformed.Load()}
}

// Send writes one MAD. p.Addr.DLID mad.PermissiveLID with QP 0 sends a
// directed-route SMP; anything else is LID-routed from the attached port.
func (c *Conn) Send(ctx context.Context, p *transport.Packet) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if c.isClosed() {
		return transport.ErrClosed
	}
	if len(p.MAD) < mad.HeaderSize || len(p.MAD) > mad.Size {
		return fmt.Errorf("ibsim: MAD is %d bytes, want %d..%d", len(p.MAD), mad.HeaderSize, mad.Size)
	}
	h := dataMsg{DLID: p.Addr.DLID, DQP: p.Addr.QP, Length: mad.Size}
	if p.Addr.DLID == mad.PermissiveLID {
		h.SLID = mad.PermissiveLID
	}
	if p.Addr.QP != transport.QP0 {
		h.SQP = transport.QP1
	}
	if err := c.write(ctx, &h, p.MAD); err != nil {
		if c.isClosed() {
			return transport.ErrClosed
		}
		if cerr := ctx.Err(); cerr != nil || errors.Is(err, context.DeadlineExceeded) {
			if cerr == nil {
				cerr = context.DeadlineExceeded
			}
			return fmt.Errorf("ibsim: sending to %s (ibsim on socket name %q is not reading; is it stuck?): %w", p.Addr, c.base, cerr)
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			return fmt.Errorf("ibsim: sending to %s on socket name %q: ibsim is gone or dropped slot %d: %w", p.Addr, c.base, c.slot, err)
		}
		return fmt.Errorf("ibsim: sending to %s: %w", p.Addr, err)
	}
	return nil
}

// write sends one datagram. The common case, room in ibsim's receive
// queue, is one non-blocking write with no deadline or ctx bookkeeping.
// Only a write that would block (ibsim's queue is full: ibsim stuck or
// busy) takes writeSlow, which waits and gives up when ctx is done. Sends
// are serialized: they share the message buffer, and a slow one carries
// its own deadline.
func (c *Conn) write(ctx context.Context, h *dataMsg, m []byte) error {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	b := c.wbuf[:]
	marshalData(b, h, m)
	err := c.raw.Write(c.writeFn)
	werr := c.werr
	switch {
	case err != nil: // closed
		return err
	case werr == nil:
		return nil
	case werr != syscall.EAGAIN:
		// What c.data.Write would have returned.
		return &net.OpError{Op: "write", Net: "unixgram", Source: c.data.LocalAddr(), Err: os.NewSyscallError("write", werr)}
	}
	return c.writeSlow(ctx, b)
}

// tryWrite is c.writeFn, the RawConn.Write callback: one non-blocking
// write of wbuf, result in werr. It never asks to wait: writeSlow does.
func (c *Conn) tryWrite(fd uintptr) bool {
	for {
		_, c.werr = syscall.Write(int(fd), c.wbuf[:])
		if c.werr != syscall.EINTR {
			return true
		}
	}
}

// writeSlow writes b, waiting for room until ctx is done. The caller holds
// sendMu.
func (c *Conn) writeSlow(ctx context.Context, b []byte) error {
	dl, _ := ctx.Deadline()
	if err := c.data.SetWriteDeadline(dl); err != nil {
		return err
	}
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		c.data.SetWriteDeadline(time.Unix(1, 0))
		close(fired)
	})
	_, err := c.data.Write(b)
	if !stop() && ctx.Done() != nil {
		<-fired // let it finish before the deadline is cleared
	}
	// The socket's deadline is ctx's, but its timer may fire before ctx
	// is marked done.
	if errors.Is(err, os.ErrDeadlineExceeded) && !dl.IsZero() && !time.Now().Before(dl) {
		err = context.DeadlineExceeded
	}
	// The fast path must not find an expired deadline (it would fail
	// without trying).
	if derr := c.data.SetWriteDeadline(time.Time{}); err == nil {
		err = derr
	}
	return err
}

// rxSlot is one received message: the Packet handed to Recv and the
// bytes its MAD aliases, in one allocation. A slot handed to Recv is never
// reused.
type rxSlot struct {
	p   transport.Packet
	buf [dataSize + 1]byte // one spare byte to notice oversize messages
}

// reader drains the data socket until Close, queueing packets for Recv.
// Each turn takes every message waiting (up to rxBatchMax) in one system
// call where the platform allows, queues them under one lock and wakes
// Recv once.
func (c *Conn) reader() {
	defer close(c.readerDone)
	rx := newRxBatch()
	got := make([]*transport.Packet, 0, rxBatchMax)
	for {
		n, err := rx.recv(c.raw)
		if err != nil {
			if c.isClosed() {
				err = transport.ErrClosed
			} else {
				err = fmt.Errorf("ibsim: reading data socket of slot %d: %w", c.slot, err)
			}
			c.mu.Lock()
			c.readErr = err
			c.mu.Unlock()
			c.wake()
			return
		}
		got = got[:0]
		f := c.deliver.Load()
		for i := range n {
			s := rx.slots[i]
			if !decodeInto(&s.p, rx.msg(i)) {
				c.malformed.Add(1)
				continue // the slot is reused
			}
			if f != nil {
				if (*f)(&s.p) {
					continue // nothing kept: the slot is reused
				}
			} else {
				got = append(got, &s.p)
			}
			rx.slots[i] = nil
		}
		if len(got) == 0 {
			continue
		}
		c.mu.Lock()
		if room := maxQueued - len(c.queue); room < len(got) {
			c.dropped.Add(uint64(len(got) - room))
			got = got[:room]
		}
		c.queue = append(c.queue, got...)
		c.mu.Unlock()
		clear(got[:cap(got)])
		c.wake()
	}
}

// Deliver implements transport.Deliverer: the reader hands each packet
// to f instead of queueing it for Recv, and receives the next message
// into the same buffer when f kept nothing.
func (c *Conn) Deliver(f func(*transport.Packet) bool) { c.deliver.Store(&f) }

func (c *Conn) wake() {
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

// Recv returns the next packet: an answer (Status 0) or a request ibsim
// could not deliver (Status transport.StatusTimedOut). It takes everything
// the reader has queued at once and hands it out without touching the
// reader's lock again.
func (c *Conn) Recv(ctx context.Context) (*transport.Packet, error) {
	for {
		c.recvMu.Lock()
		if c.rpos < len(c.rq) {
			p := c.rq[c.rpos]
			c.rq[c.rpos] = nil
			c.rpos++
			c.recvMu.Unlock()
			return p, nil
		}
		c.mu.Lock()
		if len(c.queue) > 0 {
			// Swap buffers: the reader appends to the one Recv drained.
			spare := c.rq[:0]
			if cap(spare) > 4096 {
				spare = nil // let a burst's buffer go
			}
			c.rq, c.rpos, c.queue = c.queue, 0, spare
			c.mu.Unlock()
			c.recvMu.Unlock()
			continue
		}
		err := c.readErr
		c.mu.Unlock()
		c.recvMu.Unlock()
		if err != nil {
			return nil, err
		}
		select {
		case <-c.notify:
		case <-c.done:
			return nil, transport.ErrClosed
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (c *Conn) isClosed() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// Close sends DISCONNECT, freeing the slot, and closes the sockets. It is
// safe to call more than once and from any goroutine. An ibsim that has
// already exited is not an error (its slots are gone with it).
func (c *Conn) Close() error {
	c.closeMu.Lock()
	defer c.closeMu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	if c.stopLt != nil {
		c.stopLt()
	}
	derr := c.disconnect()
	close(c.done)
	c.data.Close()
	c.ctl.Close()
	<-c.readerDone
	if derr != nil && !errors.Is(derr, ErrNotListening) {
		return fmt.Errorf("ibsim: slot %d may still be held (free it with console `X %d`): %w", c.slot, c.slot, derr)
	}
	return nil
}
