package capture

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/internal/transport/transporttest"
	"github.com/ibdoctor/ibdoctor/mad"
)

// TestEngineCapture runs real requests through a transport Engine (over
// the in-memory transporttest Conn, which answers DR NodeInfo) with the
// Writer as its tap, then reads the capture back.
func TestEngineCapture(t *testing.T) {
	answer := drNodeInfoResponse(t)
	h := func(p *transport.Packet) []transporttest.Reply {
		resp := bytes.Clone(answer)
		copy(resp[8:16], p.MAD[8:16]) // TID
		return []transporttest.Reply{{Packet: &transport.Packet{Addr: p.Addr, MAD: resp}}}
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	conn := transporttest.New(testLocal, h)
	e := transport.NewEngine(conn, transport.Options{Tap: w.ForEngine(conn.Local())})
	const n = 5
	for range n {
		if _, err := e.Do(context.Background(), transport.DirectedRoute(), drNodeInfoRequest(t)); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var sent, recv int
	for {
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		hd, err := mad.PeekHeader(f.MAD)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case !hd.Method.IsResponse() && f.DLID == 0xffff && f.SLID == testLocal.LID:
			sent++
		case hd.Method.IsResponse() && f.DLID == testLocal.LID && f.SLID == 0xffff:
			recv++
		default:
			t.Errorf("record %v %d->%d in the wrong direction", hd.Method, f.SLID, f.DLID)
		}
	}
	if sent != n || recv != n {
		t.Errorf("capture holds %d requests and %d responses, want %d each", sent, recv, n)
	}
}
