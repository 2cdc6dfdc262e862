//go:build linux

package umad

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// devFile is what Conn needs of the device: *os.File in production, a
// fault-injecting fake in tests.
type devFile interface {
	Read([]byte) (int, error)
	Write([]byte) (int, error)
	SetReadDeadline(time.Time) error
	Close() error
}

// maxReadBuf bounds how far Recv grows its buffer when the kernel says a
// MAD does not fit (EINVAL). ibdoctor registers no RMPP class, so 320
// bytes always fit; the bound keeps a confused kernel from looping forever.
const maxReadBuf = 64 << 10

// ErrDeviceGone is wrapped by errors from a device that disappeared
// (driver unloaded, HCA reset or hot-unplugged).
var ErrDeviceGone = errors.New("the RDMA device went away (driver reset or unloaded?)")

// ErrNoSMI is wrapped by the error of an SMP agent the kernel refuses on
// this port (RoCE, or an XDR GSI-only plane).
var ErrNoSMI = errors.New("no subnet management interface (QP0) on this port")

// Conn is a transport.Conn on one umad device.
type Conn struct {
	f      devFile
	raw    syscall.RawConn // nil for fakes: no ioctls
	path   string          // /dev/infiniband/umadN, for messages
	port   Port
	hdrLen int                  // 64, or 56 on kernels without P_Key index support
	agents map[mad.Class]uint32 // immutable after open
	local  transport.LocalPort

	closed atomic.Bool
	rmu    sync.Mutex // one Recv at a time
	rbuf   []byte
}

var _ transport.Conn = (*Conn)(nil)

func newConn(f devFile, path string, p Port, nodeGUID uint64, hl int, agents map[mad.Class]uint32) *Conn {
	return &Conn{
		f: f, path: path, port: p, hdrLen: hl, agents: agents,
		rbuf: make([]byte, hl+mad.Size),
		local: transport.LocalPort{
			Name:      p.Name(),
			NodeGUID:  nodeGUID,
			PortGUID:  p.PortGUID,
			PortNum:   p.Num,
			LID:       p.LID,
			SMLID:     p.SMLID,
			LinkLayer: p.LinkLayer,
		},
	}
}

var _ transport.TimeoutNotifier = (*Conn)(nil)

// NotifiesTimeouts implements transport.TimeoutNotifier. Send hands the
// kernel each request's timeout with retries 0, and the umad module ends
// every request it tracks exactly once: with its response, or, when the
// timeout passed without one, with a status-110 notice (a response later
// than that is dropped by the MAD layer). So the kernel, not the Engine's
// timer, decides what went unanswered: on a loaded host a response the
// kernel queued in time can reach the Engine's reader after the timeout,
// and the timer would call a node that answered unanswered. The Engine's
// timer stays a backstop (transport.NoticeGrace later) for a send the
// kernel fails without a notice (a flushed send on a port going down).
func (c *Conn) NotifiesTimeouts() bool { return true }

// Local describes the port from sysfs as it was at Open.
func (c *Conn) Local() transport.LocalPort { return c.local }

// Port returns the sysfs description of the port.
func (c *Conn) Port() Port { return c.port }

// Path is the umad device file.
func (c *Conn) Path() string { return c.path }

// HeaderLen is the ib_user_mad_hdr size in force on this fd (64 or 56).
func (c *Conn) HeaderLen() int { return c.hdrLen }

// Send writes one MAD. p.Timeout becomes the kernel's response timeout
// (retries 0: the Engine retries); responses are sent untracked.
func (c *Conn) Send(ctx context.Context, p *transport.Packet) error {
	if c.closed.Load() {
		return transport.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(p.MAD) < mad.HeaderSize || len(p.MAD) > mad.Size {
		return fmt.Errorf("umad: send on %s: MAD is %d bytes, want %d..%d", c.path, len(p.MAD), mad.HeaderSize, mad.Size)
	}
	class := mad.Class(p.MAD[1])
	id, ok := c.agents[class]
	if !ok {
		return fmt.Errorf("umad: send on %s: no %v agent registered (open the port with SMP or Perf enabled for this class)", c.path, class)
	}
	if p.Addr.GRH == nil && !c.port.IsInfiniBand() {
		return fmt.Errorf("umad: send on %s: port %s is %s (RoCE) and has no LIDs; address the peer by GID (a GRH)", c.path, c.port.Name(), c.port.LinkLayer)
	}
	h := madHdr{
		ID:        id,
		QPN:       p.Addr.QP,
		QKey:      p.Addr.QKey,
		LID:       p.Addr.DLID,
		SL:        p.Addr.SL,
		PKeyIndex: p.Addr.PKeyIndex,
	}
	if !mad.Method(p.MAD[3]).IsResponse() && p.Timeout > 0 {
		ms := p.Timeout.Milliseconds()
		if ms < 1 {
			ms = 1
		}
		if ms > 1<<31 {
			ms = 1 << 31
		}
		h.TimeoutMS = uint32(ms)
	}
	if g := p.Addr.GRH; g != nil {
		h.GRHPresent = true
		h.GID = g.DGID
		h.GIDIndex = g.SGIDIndex
		h.HopLimit = g.HopLimit
		h.TrafficClass = g.TrafficClass
		h.FlowLabel = g.FlowLabel
	}
	buf := make([]byte, c.hdrLen+mad.Size)
	h.marshal(buf, c.hdrLen)
	copy(buf[c.hdrLen:], p.MAD)
	if _, err := c.f.Write(buf); err != nil {
		return c.writeError(p, err)
	}
	return nil
}

func (c *Conn) writeError(p *transport.Packet, err error) error {
	if errors.Is(err, os.ErrClosed) {
		return transport.ErrClosed
	}
	errno := errnoOf(err)
	switch errno {
	case unix.ETIMEDOUT:
		// The kernel could not resolve the destination's address (no
		// neighbour answers for that GID) within its fixed 1 s.
		return fmt.Errorf("umad: send to %s on %s: address resolution timed out, nothing answers for that address: %w (%w)", p.Addr, c.path, transport.ErrTimeout, errno)
	case unix.EIO, unix.EPIPE, unix.ENODEV, unix.ENXIO:
		return fmt.Errorf("umad: send on %s: %w: %w", c.path, ErrDeviceGone, errno)
	case unix.EINVAL:
		return fmt.Errorf("umad: send to %s on %s: the kernel rejected the MAD (an invalid directed route, a TID already outstanding, or a destination it cannot build an address for): %w", p.Addr, c.path, errno)
	}
	return fmt.Errorf("umad: send on %s: %w", c.path, err)
}

// Recv reads one MAD or timeout notice. A timeout notice has Status 110
// and MAD holding only the 24-byte header of the unanswered request.
func (c *Conn) Recv(ctx context.Context) (*transport.Packet, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if c.closed.Load() {
		return nil, transport.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	deadline, hasDeadline := ctx.Deadline()
	if err := c.f.SetReadDeadline(deadline); err != nil && !errors.Is(err, os.ErrNoDeadline) {
		return nil, fmt.Errorf("umad: %s: %w", c.path, err)
	}
	// A cancelled context interrupts the blocked read by moving the
	// deadline into the past.
	stop := context.AfterFunc(ctx, func() { _ = c.f.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	for {
		n, err := c.f.Read(c.rbuf)
		if err != nil {
			switch {
			case errors.Is(err, os.ErrDeadlineExceeded):
				if cerr := ctx.Err(); cerr != nil {
					return nil, cerr
				}
				if hasDeadline && !time.Now().Before(deadline) {
					return nil, context.DeadlineExceeded
				}
				continue // ctx is finishing; its error shows on the next pass
			case errors.Is(err, os.ErrClosed) || c.closed.Load():
				return nil, transport.ErrClosed
			}
			switch errnoOf(err) {
			case unix.EINVAL:
				// The queued MAD does not fit; the kernel keeps it at
				// the head of the queue. Grow and read again.
				if len(c.rbuf) >= maxReadBuf {
					return nil, fmt.Errorf("umad: read %s: the kernel refuses even a %d-byte buffer: %w", c.path, len(c.rbuf), err)
				}
				c.rbuf = make([]byte, min(2*len(c.rbuf), maxReadBuf))
				continue
			case unix.EIO, unix.EPIPE, unix.ENODEV, unix.ENXIO:
				return nil, fmt.Errorf("umad: read %s: %w: %w", c.path, ErrDeviceGone, errnoOf(err))
			case unix.EINTR, unix.EAGAIN:
				continue
			}
			return nil, fmt.Errorf("umad: read %s: %w", c.path, err)
		}
		if n < c.hdrLen {
			return nil, fmt.Errorf("umad: read %s: %d bytes, shorter than the %d-byte header", c.path, n, c.hdrLen)
		}
		return c.decode(c.rbuf[:n]), nil
	}
}

// decode turns one read into a Packet.
func (c *Conn) decode(b []byte) *transport.Packet {
	h := unmarshalHdr(b, c.hdrLen)
	p := &transport.Packet{
		MAD:    append([]byte(nil), b[c.hdrLen:]...),
		Status: int(h.Status),
		Addr: transport.Addr{
			DLID:      h.LID,
			QP:        h.QPN,
			QKey:      h.QKey,
			SL:        h.SL,
			PKeyIndex: h.PKeyIndex,
		},
	}
	if h.GRHPresent {
		p.Addr.GRH = &transport.GRH{
			DGID:         h.GID,
			SGIDIndex:    h.GIDIndex,
			HopLimit:     h.HopLimit,
			TrafficClass: h.TrafficClass,
			FlowLabel:    h.FlowLabel,
		}
	}
	return p
}

// Close unregisters the agents and closes the device; a blocked Recv
// returns transport.ErrClosed.
func (c *Conn) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	var errs []error
	if c.raw != nil {
		errs = append(errs, c.unregisterAll())
	}
	if err := c.f.Close(); err != nil {
		errs = append(errs, fmt.Errorf("umad: close %s: %w", c.path, err))
	}
	return errors.Join(errs...)
}

func errnoOf(err error) unix.Errno {
	var e unix.Errno
	if errors.As(err, &e) {
		return e
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if errors.As(pe.Err, &e) {
			return e
		}
	}
	return 0
}
