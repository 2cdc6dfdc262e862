package transport_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/internal/transport/transporttest"
	"github.com/ibdoctor/ibdoctor/mad"
)

// TestOnce: reads through Engine.Once are sent once each, synchronous
// and asynchronous, by directed route and by LID, with Retries 3; the
// Engine's own reads still retry. A status answer is not Unanswered; a
// timeout and a skipped silent destination are.
func TestOnce(t *testing.T) {
	silent := func(*transport.Packet) []transporttest.Reply { return nil }
	e, c := newEngine(t, silent, transport.Options{Timeout: 5 * time.Millisecond, Retries: 3})
	o := e.Once()
	if o.Options().Retries >= 0 || o.Options().Timeout != 5*time.Millisecond {
		t.Errorf("Once options %+v", o.Options())
	}
	ctx := context.Background()
	var ni mad.NodeInfo
	_, err := o.GetSMP(ctx, mad.Path{1, 2}, &ni, 0)
	var te *transport.TimeoutError
	if !errors.As(err, &te) || te.Attempts != 1 || c.Sent() != 1 || !transport.Unanswered(err) {
		t.Fatalf("GetSMP: %v after %d sends; want a timeout after 1", err, c.Sent())
	}
	if _, err := o.GetSMPByLID(ctx, 7, &ni, 0); !transport.Unanswered(err) || c.Sent() != 2 {
		t.Errorf("GetSMPByLID: %v, %d sends in all; want a timeout after 1 more", err, c.Sent())
	}
	var wg sync.WaitGroup
	wg.Add(2)
	check := func(what string) func(*mad.SMP, error) {
		return func(_ *mad.SMP, err error) {
			defer wg.Done()
			if !errors.As(err, &te) || te.Attempts != 1 {
				t.Errorf("%s: %v, want a timeout after 1 attempt", what, err)
			}
		}
	}
	if err := o.GoSMP(ctx, mad.Path{1, 3}, &ni, 0, check("GoSMP")); err != nil {
		t.Fatal(err)
	}
	if err := o.GoSMPByLID(ctx, 8, &ni, 0, check("GoSMPByLID")); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if c.Sent() != 4 {
		t.Errorf("%d sends for 4 reads sent once", c.Sent())
	}
	if _, err := e.GetSMPByLID(ctx, 9, &ni, 0); !errors.As(err, &te) || te.Attempts != 4 {
		t.Errorf("the Engine's own read: %v, want 4 attempts", err)
	}
	e.SkipSilent()
	_, _ = e.GetSMPByLID(ctx, 10, &ni, 0)
	if _, err := o.GetSMPByLID(ctx, 11, &ni, 0); err == nil {
		t.Fatal("answered")
	}
	if _, err := e.GetSMPByLID(ctx, 10, &ni, 0); !transport.Unanswered(err) {
		t.Errorf("skipped silent destination: %v, want Unanswered", err)
	}
	// A destination silent after one attempt says so in the singular.
	if _, err := e.GetSMPByLID(ctx, 11, &ni, 0); err == nil || !strings.HasSuffix(err.Error(), "went unanswered there after 1 attempt") {
		t.Errorf("skipped after a read sent once: %v", err)
	}
	for _, err := range []error{nil, errors.New("no LID"), &transport.StatusError{Class: mad.ClassSubnLID, Attr: mad.AttrPortInfo, Status: 0x1c}, fmt.Errorf("x: %w", context.Canceled)} {
		if transport.Unanswered(err) {
			t.Errorf("Unanswered(%v) = true", err)
		}
	}
}

// TestTwoWaysError: a read unanswered by LID and by the directed route
// around it says both ways with their attempts (review V10), says "not
// sent" for a way the read itself was not sent (another read of the node
// went unanswered there first), and is still an unanswered read.
func TestTwoWaysError(t *testing.T) {
	lft, pi := mad.AttrLinearForwardingTable, mad.AttrPortInfo
	path := mad.Path{1, 50}
	byLID := &transport.TimeoutError{Addr: transport.SMPAt(3), Class: mad.ClassSubnLID, Attr: lft, Attempts: 4, Waited: 4 * time.Second}
	byDR := &transport.TimeoutError{Addr: transport.DirectedRoute(), Class: mad.ClassSubnDR, Attr: lft, Path: path, Attempts: 1, Waited: time.Second}
	err := error(&transport.TwoWaysError{First: byLID, Second: byDR})
	if got, want := err.Error(), "no response by LID 3 after 4 attempts in 4s, nor by directed route (path 0,1,50) after 1 attempt in 1s"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if !transport.Unanswered(err) || !errors.Is(err, transport.ErrTimeout) {
		t.Errorf("%v: not an unanswered read", err)
	}
	silent := &transport.SilentError{Addr: transport.DirectedRoute(), Class: mad.ClassSubnDR, Attr: pi, AttrMod: 2, Path: path, Earlier: byDR}
	err = &transport.TwoWaysError{First: byLID, Second: silent}
	if got, want := err.Error(), "no response by LID 3 (not sent: LinearForwardingTable went unanswered there after 4 attempts), nor by directed route (path 0,1,50) (not sent: LinearForwardingTable went unanswered there after 1 attempt)"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if !transport.Unanswered(err) {
		t.Errorf("%v: not an unanswered read", err)
	}
}

// TestSkipSilentLIDAllClasses (trial F8): with SkipSilent, a LID that a
// LID-routed SMP went unanswered to is not sent a PerfMgt read either (a
// MAD to a LID follows the same tables whatever its class: a gate's
// counters of a switch behind a black hole waited one more timeout);
// another LID is, and a directed-route SMP that went unanswered makes no
// LID silent.
func TestSkipSilentLIDAllClasses(t *testing.T) {
	silent := func(*transport.Packet) []transporttest.Reply { return nil }
	e, c := newEngine(t, silent, transport.Options{Timeout: 5 * time.Millisecond, Retries: -1})
	e.SkipSilent()
	ctx := context.Background()
	var ni mad.NodeInfo
	if _, err := e.GetSMPByLID(ctx, 5, &ni, 0); !transport.Unanswered(err) {
		t.Fatalf("GetSMPByLID: %v", err)
	}
	if _, err := e.GetSMP(ctx, mad.Path{1, 2}, &ni, 0); !transport.Unanswered(err) {
		t.Fatalf("GetSMP: %v", err)
	}
	sent := c.Sent()
	var cpi mad.ClassPortInfo
	_, err := e.GetPerf(ctx, transport.PerfAt(5, 0, 0), &cpi, 0)
	var se *transport.SilentError
	if !errors.As(err, &se) || c.Sent() != sent {
		t.Errorf("PerfMgt to LID 5 after its SMP went unanswered: %v, %d sent; want not sent", err, c.Sent()-sent)
	} else if want := "not sent: NodeInfo went unanswered there after 1 attempt"; !strings.HasSuffix(err.Error(), want) {
		t.Errorf("%v: want it to end %q", err, want)
	}
	if _, err := e.GetPerf(ctx, transport.PerfAt(6, 0, 0), &cpi, 0); errors.As(err, &se) || c.Sent() != sent+1 {
		t.Errorf("PerfMgt to LID 6: %v, %d sent; want sent once", err, c.Sent()-sent)
	}
}
