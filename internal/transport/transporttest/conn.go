// Package transporttest provides an in-memory transport.Conn for tests of
// the Engine and of the layers above it. A Handler decides what each sent
// MAD provokes: replies, possibly delayed, duplicated or out of order,
// timeout notices, or nothing. The Conn instruments what is in flight so
// tests can check windows.
package transporttest

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Reply is one packet a Handler wants delivered, Delay after the Send.
type Reply struct {
	Packet *transport.Packet
	Delay  time.Duration
}

// Handler answers one sent packet. It is called synchronously from Send,
// possibly from several goroutines at once.
type Handler func(p *transport.Packet) []Reply

// Conn is an in-memory transport.Conn.
type Conn struct {
	handler Handler
	local   transport.LocalPort

	mu      sync.Mutex
	queue   []*transport.Packet
	notify  chan struct{}
	closed  chan struct{}
	isDone  bool
	timers  map[*time.Timer]struct{}
	sent    int
	out     map[uint32]string // outstanding request TIDs → destination key
	perDest map[string]int
	maxAll  int
	maxDest int
}

// New returns a Conn whose sent packets go to h.
func New(local transport.LocalPort, h Handler) *Conn {
	return &Conn{
		handler: h,
		local:   local,
		notify:  make(chan struct{}, 1),
		closed:  make(chan struct{}),
		timers:  make(map[*time.Timer]struct{}),
		out:     make(map[uint32]string),
		perDest: make(map[string]int),
	}
}

// Local implements transport.Conn.
func (c *Conn) Local() transport.LocalPort { return c.local }

// Send implements transport.Conn: it records the request as in flight and
// calls the Handler.
func (c *Conn) Send(ctx context.Context, p *transport.Packet) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	if c.isDone {
		c.mu.Unlock()
		return transport.ErrClosed
	}
	c.sent++
	if len(p.MAD) >= mad.HeaderSize {
		tid := mad.TIDLow(binary.BigEndian.Uint64(p.MAD[8:16]))
		key := DestKey(p)
		if _, dup := c.out[tid]; !dup {
			c.out[tid] = key
			c.perDest[key]++
			c.maxAll = max(c.maxAll, len(c.out))
			c.maxDest = max(c.maxDest, c.perDest[key])
		}
	}
	c.mu.Unlock()
	for _, r := range c.handler(p) {
		c.deliver(r.Packet, r.Delay)
	}
	return nil
}

// Inject delivers p to Recv after delay, as if the fabric had sent it.
func (c *Conn) Inject(p *transport.Packet, delay time.Duration) { c.deliver(p, delay) }

func (c *Conn) deliver(p *transport.Packet, delay time.Duration) {
	if delay <= 0 {
		c.push(p)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.isDone {
		return
	}
	var t *time.Timer
	t = time.AfterFunc(delay, func() {
		c.mu.Lock()
		delete(c.timers, t)
		c.mu.Unlock()
		c.push(p)
	})
	c.timers[t] = struct{}{}
}

func (c *Conn) push(p *transport.Packet) {
	c.mu.Lock()
	if c.isDone {
		c.mu.Unlock()
		return
	}
	c.queue = append(c.queue, p)
	c.mu.Unlock()
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

// Recv implements transport.Conn.
func (c *Conn) Recv(ctx context.Context) (*transport.Packet, error) {
	for {
		c.mu.Lock()
		if c.isDone {
			c.mu.Unlock()
			return nil, transport.ErrClosed
		}
		if len(c.queue) > 0 {
			p := c.queue[0]
			c.queue[0] = nil
			c.queue = c.queue[1:]
			if len(p.MAD) >= mad.HeaderSize {
				tid := mad.TIDLow(binary.BigEndian.Uint64(p.MAD[8:16]))
				if key, ok := c.out[tid]; ok {
					delete(c.out, tid)
					c.perDest[key]--
				}
			}
			c.mu.Unlock()
			return p, nil
		}
		c.mu.Unlock()
		select {
		case <-c.notify:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
		}
	}
}

// Close implements transport.Conn. Pending delayed replies are dropped.
func (c *Conn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.isDone {
		return nil
	}
	c.isDone = true
	for t := range c.timers {
		t.Stop()
	}
	clear(c.timers)
	close(c.closed)
	return nil
}

// Sent returns how many packets were sent.
func (c *Conn) Sent() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sent
}

// MaxInFlight returns the most requests that were outstanding at once
// overall and to a single destination. A request is outstanding from its
// Send until a packet with its TID is returned by Recv, so requests the
// Handler never answers stay outstanding.
func (c *Conn) MaxInFlight() (all, perDest int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.maxAll, c.maxDest
}

// DestKey names the destination of a packet: "dr:0,1,3" for a directed
// route SMP, "lid:5" otherwise.
func DestKey(p *transport.Packet) string {
	if len(p.MAD) >= 192 && mad.Class(p.MAD[1]) == mad.ClassSubnDR {
		n := min(int(p.MAD[7]), mad.MaxHops)
		return "dr:" + mad.Path(p.MAD[129:129+n]).String()
	}
	if p.Addr.GRH != nil {
		return "gid:" + p.Addr.GRH.DGID.String()
	}
	return fmt.Sprintf("lid:%d", p.Addr.DLID)
}

// Respond builds the response to request req carrying data in its data
// area (nil: none) and status st: the method gets its response bit, a
// directed-route SMP its D bit and a hop pointer past the path.
func Respond(req []byte, data []byte, st mad.Status) []byte {
	b := make([]byte, mad.Size)
	copy(b, req)
	b[3] = byte(mad.ResponseMethod(mad.Method(b[3]))) // GetResp answers Get and Set alike
	s := uint16(st)
	if mad.Class(b[1]) == mad.ClassSubnDR {
		s = s&0x7fff | 0x8000
		b[6] = b[7] + 1
	}
	binary.BigEndian.PutUint16(b[4:6], s)
	if data != nil {
		area := b[64:]
		if mad.Class(b[1]).IsSMP() {
			area = b[64:128]
		}
		clear(area)
		copy(area, data)
	}
	return b
}

// TimedOut builds the notice a kernel or ibsim delivers for an unanswered
// request: the request's 24-byte header with Status StatusTimedOut.
func TimedOut(req []byte) *transport.Packet {
	return &transport.Packet{MAD: append([]byte(nil), req[:mad.HeaderSize]...), Status: transport.StatusTimedOut}
}
