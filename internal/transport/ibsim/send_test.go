package ibsim

import (
	"context"
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/transport"
)

// fakeData returns a Conn whose data socket is connected to a peer bound
// as BASE:out0 that only reads when the test says so, standing in for an
// ibsim whose receive queue is full.
func fakeData(t *testing.T) (*Conn, *net.UnixConn) {
	t.Helper()
	base, _ := fakeCtl(t)
	peer, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sockAddr(serverDataName(base, 0)), Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { peer.Close() })
	c := &Conn{base: base, done: make(chan struct{})}
	if err := c.bind(0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.ctl.Close(); c.data.Close() })
	if err := c.connectData(); err != nil {
		t.Fatal(err)
	}
	return c, peer
}

// fill sends until a send with a short deadline fails, and returns that
// error and the number of messages sent.
func fill(t *testing.T, c *Conn) (int, error) {
	t.Helper()
	p := &transport.Packet{Addr: transport.DirectedRoute(), MAD: make([]byte, 256)}
	for n := 0; n < 1<<20; n++ {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		err := c.Send(ctx, p)
		cancel()
		if err != nil {
			return n, err
		}
	}
	t.Fatal("a peer that never reads took 1M messages")
	return 0, nil
}

func TestSendStuck(t *testing.T) {
	c, peer := fakeData(t)
	n, err := fill(t, c)
	if n == 0 || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "is not reading") || !strings.Contains(err.Error(), c.base) {
		t.Fatalf("send %d to a full queue: %v", n, err)
	}

	// Cancelling (no deadline) also ends a blocked send.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	err = c.Send(ctx, &transport.Packet{Addr: transport.DirectedRoute(), MAD: make([]byte, 256)})
	if !errors.Is(err, context.Canceled) || time.Since(start) > 5*time.Second {
		t.Fatalf("cancelled send: %v after %v", err, time.Since(start))
	}

	// Once the peer reads again, sends go through at once: the deadline a
	// blocked send set is gone.
	buf := make([]byte, dataSize+1)
	for range n {
		m, err := peer.Read(buf)
		if err != nil || m != dataSize {
			t.Fatalf("peer read %d: %v", m, err)
		}
	}
	for i := range n {
		if err := c.Send(context.Background(), &transport.Packet{Addr: transport.PerfAt(7, 0, 0), MAD: make([]byte, 24)}); err != nil {
			t.Fatalf("send %d after draining: %v", i, err)
		}
	}
	m, err := peer.Read(buf)
	if err != nil || m != dataSize || buf[1] != 7 || buf[15] != transport.QP1 {
		t.Fatalf("peer read %d bytes %x: %v", m, buf[:16], err)
	}

	// A peer that is gone: the error says so and wraps ECONNREFUSED.
	peer.Close()
	err = c.Send(context.Background(), &transport.Packet{Addr: transport.DirectedRoute(), MAD: make([]byte, 256)})
	if !errors.Is(err, syscall.ECONNREFUSED) || !strings.Contains(err.Error(), "ibsim is gone") {
		t.Fatalf("send to a closed peer: %v", err)
	}
	close(c.done)
	c.data.Close()
	if err := c.Send(context.Background(), &transport.Packet{Addr: transport.DirectedRoute(), MAD: make([]byte, 256)}); !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("send after close: %v", err)
	}
}

// TestReader feeds the data socket a stream of answers, undeliverable
// requests and malformed messages and checks that Recv returns every
// well-formed one, in order, with its own bytes (packets received later
// must not overwrite earlier ones), and counts the malformed ones.
func TestReader(t *testing.T) {
	c, peer := fakeData(t)
	c.notify = make(chan struct{}, 1)
	c.readerDone = make(chan struct{})
	to := &net.UnixAddr{Name: sockAddr(clientDataName(c.base, c.id)), Net: "unixgram"}
	const n = 500
	sent := make(chan error, 1)
	go func() {
		for i := range n {
			b := make([]byte, dataSize)
			m := make([]byte, 256)
			for j := range m {
				m[j] = byte(i + j)
			}
			h := dataMsg{DLID: 1, SLID: uint16(i), DQP: 0, SQP: uint32(i % 2), Length: 256}
			if i%7 == 3 {
				h.Status = statusTimedOut
			}
			marshalData(b, &h, m)
			switch i % 50 {
			case 10:
				b = append(b, 0) // one byte too long
			case 20:
				b = b[:dataSize-1]
			}
			if _, err := peer.WriteToUnix(b, to); err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	go c.reader()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got []*transport.Packet
	for i := range n {
		if i%50 == 10 || i%50 == 20 {
			continue
		}
		p, err := c.Recv(ctx)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		got = append(got, p)
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	i := 0
	for _, p := range got {
		for i%50 == 10 || i%50 == 20 {
			i++
		}
		want := transport.Addr{DLID: uint16(i), QP: uint32(i % 2)}
		wantStatus := 0
		if i%7 == 3 {
			want, wantStatus = transport.Addr{DLID: 1, QP: 0}, transport.StatusTimedOut
		}
		if want.QP == transport.QP1 {
			want.QKey = transport.GSIQKey
		}
		if p.Addr != want || p.Status != wantStatus || len(p.MAD) != 256 {
			t.Fatalf("message %d: %+v status %d, want %+v status %d", i, p.Addr, p.Status, want, wantStatus)
		}
		for j, v := range p.MAD {
			if v != byte(i+j) {
				t.Fatalf("message %d byte %d = %d, want %d", i, j, v, byte(i+j))
			}
		}
		i++
	}
	if st := c.Stats(); st != (Stats{Malformed: 2 * n / 50}) {
		t.Errorf("stats %+v", st)
	}
	close(c.done)
	c.data.Close()
	<-c.readerDone
	if _, err := c.Recv(ctx); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Recv after close: %v", err)
	}
}
