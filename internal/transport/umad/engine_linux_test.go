//go:build linux

package umad

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// fakeKernel serves the requests the Conn writes on the far end of the
// socket pair as the umad module does with retries 0: an answer at once
// (answer), or, once the request's timeout_ms has passed, the status-110
// notice with the request's 24-byte header. It stops when the pair is
// closed.
func fakeKernel(f *os.File, answer bool) {
	b := make([]byte, 4096)
	for {
		f.SetReadDeadline(time.Time{})
		n, err := f.Read(b)
		if err != nil {
			return
		}
		req := append([]byte(nil), b[:n]...)
		h := unmarshalHdr(req, hdrLen)
		m := req[hdrLen:]
		if answer {
			out := make([]byte, hdrLen+mad.Size)
			(&madHdr{ID: h.ID, Length: uint32(hdrLen + mad.Size), QPN: h.QPN, LID: h.LID}).marshal(out, hdrLen)
			copy(out[hdrLen:], m)
			out[hdrLen+3] = byte(mad.MethodGetResp)
			f.Write(out)
			continue
		}
		go func() {
			time.Sleep(time.Duration(h.TimeoutMS) * time.Millisecond)
			out := make([]byte, hdrLen+mad.HeaderSize)
			(&madHdr{ID: h.ID, Status: transport.StatusTimedOut, Length: uint32(hdrLen + mad.HeaderSize), LID: h.LID}).marshal(out, hdrLen)
			copy(out[hdrLen:], m[:mad.HeaderSize])
			f.Write(out)
		}()
	}
}

// TestEngineAnswerReadLate: the kernel tracks each request with the
// timeout Send gives it and answers it exactly once, with its response or
// with a status-110 notice. On a loaded host the Engine's reader can get
// a response the kernel queued in time only after the timeout has passed
// on the wall clock (it waited for a core): the node answered, and the
// Engine must not call it unanswered. Before, the Engine's own timer
// fired at the timeout ('no response ... in 20ms', the answer then
// counted late): the umad Conn did not say it reports its timeouts
// (transport.TimeoutNotifier), as the simulator does since a71763e.
// What the kernel leaves unanswered still ends on its notice, after the
// timeout, not after the Engine's backstop.
func TestEngineAnswerReadLate(t *testing.T) {
	const timeout = 20 * time.Millisecond
	c, k := pairConn(t, testPort("InfiniBand"), hdrLen, func(f *os.File) devFile {
		// Every read waits ten timeouts before it looks: the answer is
		// queued by then.
		return &faultDev{File: f, readErr: func([]byte) error { time.Sleep(10 * timeout); return nil }}
	})
	go fakeKernel(k.f, true)
	e := transport.NewEngine(c, transport.Options{Timeout: timeout, Retries: -1})
	t.Cleanup(func() { e.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := e.Do(ctx, transport.PerfAt(5, 0, 0), perfGetMAD(t, 0))
	if err != nil {
		t.Fatalf("an answer the kernel queued in time, read after the timeout: %v", err)
	}
	if mad.Method(r.MAD[3]) != mad.MethodGetResp || r.Attempts != 1 {
		t.Errorf("method %#x after %d attempts, want GetResp after 1", r.MAD[3], r.Attempts)
	}

	c2, k2 := pairConn(t, testPort("InfiniBand"), hdrLen, nil)
	go fakeKernel(k2.f, false)
	e2 := transport.NewEngine(c2, transport.Options{Timeout: timeout, Retries: 1})
	t.Cleanup(func() { e2.Close() })
	_, err = e2.Do(ctx, transport.PerfAt(5, 0, 0), perfGetMAD(t, 0))
	var te *transport.TimeoutError
	if !errors.As(err, &te) || te.Attempts != 2 {
		t.Fatalf("err = %v, want a timeout after 2 attempts", err)
	}
	if te.Waited >= transport.NoticeGrace {
		t.Errorf("waited %v: the Engine's backstop, not the kernel's notices, ended it", te.Waited)
	}
}
