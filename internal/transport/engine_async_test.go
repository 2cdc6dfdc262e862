package transport_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/internal/transport/transporttest"
	"github.com/ibdoctor/ibdoctor/mad"
)

// TestGoChainsFromDone starts requests from inside completions, as an
// event-driven discovery does, and checks that each completes exactly once
// with its own answer while the windows hold.
func TestGoChainsFromDone(t *testing.T) {
	e, c := newEngine(t, echo(func(*transport.Packet) time.Duration { return time.Millisecond }),
		transport.Options{Window: 8, PerDest: 2})
	const total = 300
	var (
		mu      sync.Mutex
		seen    = make(map[uint32]int)
		started atomic.Int32
		wg      sync.WaitGroup
	)
	var start func()
	start = func() {
		i := started.Add(1) - 1
		if i >= total {
			return
		}
		wg.Add(1)
		err := e.Go(context.Background(), transport.SMPAt(uint16(i%5+1)), lidGet(uint32(i)), func(r *transport.Response, err error) {
			defer wg.Done()
			if err != nil {
				t.Errorf("request %d: %v", i, err)
				return
			}
			mu.Lock()
			seen[modOf(t, r)]++
			mu.Unlock()
			if modOf(t, r) != uint32(i) {
				t.Errorf("request %d got the answer to %d", i, modOf(t, r))
			}
			start() // one more for each answer
		})
		if err != nil {
			wg.Done()
			t.Errorf("Go %d: %v", i, err)
		}
	}
	for range 20 {
		start()
	}
	wg.Wait()
	if len(seen) != total {
		t.Fatalf("%d distinct answers, want %d", len(seen), total)
	}
	for m, n := range seen {
		if n != 1 {
			t.Errorf("request %d completed %d times", m, n)
		}
	}
	all, per := c.MaxInFlight()
	if all > 8 || per > 2 || all < 8 {
		t.Errorf("in flight at the conn: %d overall (window 8), %d per destination (window 2)", all, per)
	}
	if s := e.Stats(); s.InFlight != 0 || s.Answered != total || s.Requests != total {
		t.Errorf("stats: %+v", s)
	}
}

// TestGoContextCancel ends the context of requests in flight and queued
// behind both windows: every one completes once, with the context's error,
// at once rather than at its timeout, and no window slot stays taken.
func TestGoContextCancel(t *testing.T) {
	before := runtime.NumGoroutine()
	silent := func(*transport.Packet) []transporttest.Reply { return nil }
	c := transporttest.New(transport.LocalPort{Name: "fake/1"}, silent)
	e := transport.NewEngine(c, transport.Options{Timeout: time.Minute, Window: 4, PerDest: 1})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var calls atomic.Int32
	errs := make(chan error, 40)
	for i := range 40 {
		wg.Add(1)
		if err := e.Go(ctx, transport.SMPAt(uint16(i%8+1)), lidGet(uint32(i)), func(_ *transport.Response, err error) {
			calls.Add(1)
			errs <- err
			wg.Done()
		}); err != nil {
			t.Fatal(err)
		}
	}
	if s := e.Stats(); s.InFlight != 4 {
		t.Errorf("in flight before cancel: %d, want 4", s.InFlight)
	}
	// A request of another context is not touched.
	other := make(chan error, 1)
	if err := e.Go(context.Background(), transport.SMPAt(99), lidGet(99), func(_ *transport.Response, err error) { other <- err }); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	cancel()
	wg.Wait()
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("cancel took %v", d)
	}
	close(errs)
	for err := range errs {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	}
	if n := calls.Load(); n != 40 {
		t.Errorf("done called %d times, want 40", n)
	}
	select {
	case err := <-other:
		t.Errorf("the other context's request completed: %v", err)
	default:
	}
	if s := e.Stats(); s.Canceled != 40 || s.InFlight != 1 {
		t.Errorf("canceled %d (want 40), in flight %d (want 1)", s.Canceled, s.InFlight)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-other; !errors.Is(err, transport.ErrClosed) {
		t.Errorf("after Close: %v, want ErrClosed", err)
	}
	if err := e.Go(context.Background(), transport.SMPAt(1), lidGet(0), func(*transport.Response, error) { t.Error("done called after a refused Go") }); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Go after Close: %v, want ErrClosed", err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after, %d before", n, before)
	}
}

// TestGoRetriesThenTimesOut checks the timer path of asynchronous
// requests: each is retried and then fails with a TimeoutError naming its
// attempts, in about (1+retries) timeouts.
func TestGoRetriesThenTimesOut(t *testing.T) {
	silent := func(*transport.Packet) []transporttest.Reply { return nil }
	e, c := newEngine(t, silent, transport.Options{Timeout: 20 * time.Millisecond, Retries: 2})
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := range 10 {
		wg.Add(1)
		if err := e.Go(context.Background(), transport.SMPAt(uint16(i+1)), lidGet(uint32(i)), func(_ *transport.Response, err error) {
			defer wg.Done()
			var te *transport.TimeoutError
			if !errors.As(err, &te) || te.Attempts != 3 {
				t.Errorf("request %d: %v, want a TimeoutError after 3 attempts", i, err)
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if d := time.Since(t0); d < 60*time.Millisecond {
		t.Errorf("timed out after %v, before 3 attempts of 20ms", d)
	}
	if c.Sent() != 30 {
		t.Errorf("%d sends, want 30", c.Sent())
	}
	if s := e.Stats(); s.TimedOut != 10 || s.Retried != 20 || s.InFlight != 0 {
		t.Errorf("stats: %+v", s)
	}
}

// TestGoPerfAndByLID checks the asynchronous PerfMgt and LID-routed SMP
// reads: the attribute is decoded before done runs, and a response that
// answers another attribute is refused as GetPerf refuses it.
func TestGoPerfAndByLID(t *testing.T) {
	pcData := make([]byte, 40)
	pcData[1] = 3                              // PortSelect
	binary.BigEndian.PutUint16(pcData[4:6], 7) // SymbolErrorCounter
	h := func(p *transport.Packet) []transporttest.Reply {
		var data []byte
		if mad.AttrID(binary.BigEndian.Uint16(p.MAD[16:18])) == mad.AttrPortCounters {
			data = pcData
		} else {
			data = []byte{1, 1, 1, 2} // NodeInfo: base version, class version, node type CA, 2 ports
		}
		return []transporttest.Reply{{Packet: &transport.Packet{Addr: p.Addr, MAD: transporttest.Respond(p.MAD, data, 0)}}}
	}
	e, _ := newEngine(t, h, transport.Options{})
	done := make(chan error, 2)
	pc := &mad.PortCounters{PortSelect: 3}
	if err := e.GoPerf(context.Background(), transport.PerfAt(5, 0, 0), pc, 0, func(_ *mad.GMP, err error) { done <- err }); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if pc.SymbolErrorCounter != 7 {
		t.Errorf("SymbolErrorCounter %d, want 7", pc.SymbolErrorCounter)
	}
	var ni mad.NodeInfo
	if err := e.GoSMPByLID(context.Background(), 5, &ni, 0, func(_ *mad.SMP, err error) { done <- err }); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if ni.NodeType != mad.NodeCA {
		t.Errorf("node type %v, want CA", ni.NodeType)
	}
}

// TestGoSMPChecksEachRead: GoSMP's reads (request, answer and decoded
// attribute kept together) each get their own answer decoded after
// retries, and an answer with another hop count or modifier is refused
// naming the path, while the other reads are unaffected.
func TestGoSMPChecksEachRead(t *testing.T) {
	var mu sync.Mutex
	seen := map[uint32]int{}
	h := func(p *transport.Packet) []transporttest.Reply {
		mod := binary.BigEndian.Uint32(p.MAD[20:24])
		mu.Lock()
		seen[mod]++
		first := seen[mod] == 1
		mu.Unlock()
		if first && mod%3 == 0 {
			return nil // the first attempt is lost: the retry must be answered and checked
		}
		// NodeInfo: base version, class version, node type (the modifier
		// tells the reads apart), 2 ports.
		resp := transporttest.Respond(p.MAD, []byte{1, 1, byte(mod), 2}, 0)
		switch mod {
		case 10:
			resp[7]++ // hop count
		case 11:
			binary.BigEndian.PutUint32(resp[20:24], 12)
		}
		return []transporttest.Reply{{Packet: &transport.Packet{Addr: p.Addr, MAD: resp}}}
	}
	e, _ := newEngine(t, h, transport.Options{Timeout: 20 * time.Millisecond})
	const n = 12
	nis := make([]mad.NodeInfo, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		err := e.GoSMP(context.Background(), mad.Path{1, uint8(i + 2)}, &nis[i], uint32(i), func(resp *mad.SMP, err error) {
			defer wg.Done()
			if err == nil && (resp == nil || resp.AttrMod != uint32(i) || resp.HopCount != 2) {
				err = fmt.Errorf("response %+v", resp)
			}
			errs[i] = err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	for i := range n {
		switch i {
		case 10, 11:
			if errs[i] == nil || !strings.Contains(errs[i].Error(), fmt.Sprintf("path 0,1,%d", i+2)) {
				t.Errorf("read %d: %v, want a bad response naming path 0,1,%d", i, errs[i], i+2)
			}
		default:
			if errs[i] != nil {
				t.Errorf("read %d: %v", i, errs[i])
			} else if nis[i].NodeType != mad.NodeType(i) {
				t.Errorf("read %d decoded node type %v, want %d", i, nis[i].NodeType, i)
			}
		}
	}
	if s := e.Stats(); s.Retried != 4 {
		t.Errorf("stats %+v, want 4 retries", s)
	}
}
