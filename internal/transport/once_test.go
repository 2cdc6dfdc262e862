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
