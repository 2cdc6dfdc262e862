package ibsim

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"
)

// fakeCtl binds BASE:ctl as a server that never answers, standing in for
// an ibsim that is stuck (e.g. spinning on a full client queue, or in the
// console's Wait).
func fakeCtl(t *testing.T) (string, *net.UnixConn) {
	t.Helper()
	base := fmt.Sprintf("ibdtest%08x", rand.Uint32())
	srv, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sockAddr(serverCtlName(base)), Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return base, srv
}

func TestControlTimeout(t *testing.T) {
	base, srv := fakeCtl(t)
	got := make(chan []byte, 1)
	bound := make(chan error, 1)
	go func() {
		buf := make([]byte, 200)
		n, from, err := srv.ReadFromUnix(buf)
		if err != nil {
			return
		}
		got <- buf[:n]
		// ibsim connects to BASE:inID while handling CONNECT and exits
		// if it cannot: the data socket must already be bound.
		id := binary.LittleEndian.Uint32(buf[16:20])
		c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: sockAddr(clientDataName(base, id)), Net: "unixgram"})
		if err == nil {
			c.Close()
		}
		bound <- err
		_ = from
	}()
	start := time.Now()
	_, err := Dial(context.Background(), Options{SockName: base, Host: "leaf001", ControlTimeout: 200 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "no answer to CONNECT") || !strings.Contains(err.Error(), base) {
		t.Fatalf("Dial to a silent ibsim: %v", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("Dial took %v with a 200ms control timeout", el)
	}
	req := <-got
	var m ctlMsg
	if err := m.unmarshal(req); err != nil {
		t.Fatal(err)
	}
	var ci clientInfo
	ci.unmarshal(&m)
	if m.Type != ctlConnect || m.ClientID != 0 || m.Len != clientInfoSize || ci.NodeID != "leaf001" || ci.ID == 0 {
		t.Errorf("CONNECT = %+v %+v", m, ci)
	}
	if err := <-bound; err != nil {
		t.Errorf("data socket not bound when CONNECT was sent: %v", err)
	}

	// The dial context cuts the wait short too.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, err = Dial(ctx, Options{SockName: base, ControlTimeout: time.Minute})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 10*time.Second {
		t.Errorf("Dial with a 100ms context: %v after %v", err, time.Since(start))
	}
}

func TestClientIDs(t *testing.T) {
	base, _ := fakeCtl(t)
	// Two Conns of one process must get distinct IDs that keep the pid.
	c1 := &Conn{base: base}
	if err := c1.bind(0); err != nil {
		t.Fatal(err)
	}
	defer c1.ctl.Close()
	defer c1.data.Close()
	c2 := &Conn{base: base}
	if err := c2.bind(0); err != nil {
		t.Fatal(err)
	}
	defer c2.ctl.Close()
	defer c2.data.Close()
	if c1.id == c2.id || c1.id&(1<<22-1) != c2.id&(1<<22-1) {
		t.Errorf("IDs %d and %d", c1.id, c2.id)
	}
	if err := (&Conn{base: base}).bind(1 << 31); err == nil {
		t.Error("client ID 1<<31 accepted; ibsim would format it as a negative number")
	}
	// A fixed ID already in use is an error naming the socket.
	c3 := &Conn{base: base}
	err := c3.bind(c1.id)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%s:ctl%d", base, c1.id)) {
		t.Errorf("binding a used ID: %v", err)
	}
}
