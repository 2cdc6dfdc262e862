package perf

import (
	"testing"
	"time"
	"unsafe"

	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/transport"
)

// TestStampKeepsTimes: a reading's Time and Sent, kept as offsets from the
// sample's start, are the times they were set from (monotonic reading
// included, so a delta's Elapsed is what the clock measured), and a zero
// Sent stays zero (unknown).
func TestStampKeepsTimes(t *testing.T) {
	start := time.Now()
	sent := start.Add(3 * time.Millisecond)
	at := time.Now().Add(1500 * time.Microsecond)
	var pc PortCounters
	pc.stamp(&start, at, sent)
	if !pc.Time().Equal(at) || pc.Time().Sub(start) != at.Sub(start) || pc.Time().Sub(at) != 0 {
		t.Errorf("Time %v, want %v (offset %v)", pc.Time(), at, at.Sub(start))
	}
	if !pc.Sent().Equal(sent) || pc.Time().Sub(pc.Sent()) != at.Sub(sent) {
		t.Errorf("Sent %v, want %v", pc.Sent(), sent)
	}
	pc.stamp(&start, at, time.Time{})
	if !pc.Sent().IsZero() {
		t.Errorf("Sent %v, want zero (unknown)", pc.Sent())
	}
	// Wall-clock times (no monotonic reading, as a test clock gives).
	w0 := time.Unix(1_800_000_000, 0)
	pc.stamp(&w0, w0.Add(-time.Second), w0.Add(-2*time.Second))
	if !pc.Time().Equal(w0.Add(-time.Second)) || !pc.Sent().Equal(w0.Add(-2*time.Second)) {
		t.Errorf("before the clock: Time %v Sent %v", pc.Time(), pc.Sent())
	}
	var zero PortCounters
	if !zero.Time().IsZero() || !zero.Sent().IsZero() {
		t.Errorf("unstamped: Time %v Sent %v, want zero", zero.Time(), zero.Sent())
	}
}

// TestPortCountersPacked: a sweep keeps one record per port (about 200k at
// the LID limit); two time.Time made it 112 bytes (the 112-byte size
// class), offsets 80.
func TestPortCountersPacked(t *testing.T) {
	if n := unsafe.Sizeof(PortCounters{}); n > 80 {
		t.Errorf("PortCounters is %d bytes, want at most 80", n)
	}
}

// TestSamplePortsInOrder: the ports read, in fabric order (node order,
// then port number), each found by Port under its key as the same
// reading, stamped between the sample's start and end; a port whose read
// failed is absent from both.
func TestSamplePortsInOrder(t *testing.T) {
	r := newRig(t, sim.Options{}, transport.Options{})
	leaf := r.f.NodesByHost("leaf01")[0]
	r.must(t, r.sim.Drop("leaf01", "PortCounters"))
	r.must(t, r.sim.Drop("leaf01", "PortCountersExtended"))
	res, err := Sweep(r.ctx, r.g, r.f, r.opts(Options{}))
	if err != nil {
		t.Fatal(err)
	}
	s := res.Last
	var want []Key
	for _, n := range r.f.Nodes {
		if n == leaf {
			continue
		}
		for _, p := range n.Ports {
			if p != nil && linkUp(n, p) {
				want = append(want, Key{n.GUID, p.Num})
			}
		}
	}
	if len(s.Ports) != len(want) {
		t.Fatalf("%d ports read, want %d", len(s.Ports), len(want))
	}
	for i, pc := range s.Ports {
		if pc.Key != want[i] {
			t.Errorf("port %d is %v, want %v", i, pc.Key, want[i])
		}
		if got, ok := s.Port(pc.Key); !ok || got != pc {
			t.Errorf("Port(%v) = %p %v, want %p", pc.Key, got, ok, pc)
		}
		if pc.Time().Before(s.Started) || pc.Time().After(s.Finished) {
			t.Errorf("%v read at %v, outside the sample %v..%v", pc.Key, pc.Time(), s.Started, s.Finished)
		}
		if sent := pc.Sent(); !pc.FromAllPorts && (sent.IsZero() || sent.After(pc.Time())) {
			t.Errorf("%v sent %v, read %v", pc.Key, sent, pc.Time())
		}
	}
	for _, p := range leaf.Ports {
		if p == nil {
			continue
		}
		if _, ok := s.Port(Key{leaf.GUID, p.Num}); ok {
			t.Errorf("leaf01 port %d found, but its PMA did not answer", p.Num)
		}
	}
	if len(res.Errors) == 0 {
		t.Error("no error for leaf01's ports")
	}
}
