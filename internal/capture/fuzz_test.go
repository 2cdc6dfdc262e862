package capture

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// FuzzParseRecord feeds arbitrary ERF records to the decoder: it must not
// panic, and whatever it accepts must be a whole MAD frame.
func FuzzParseRecord(f *testing.F) {
	raw := writeTestCapture(f)
	for off := 24 + 16; off+RecordSize <= len(raw); off += 16 + RecordSize {
		f.Add(bytes.Clone(raw[off : off+RecordSize]))
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := ParseRecord(b)
		if err != nil {
			return
		}
		if len(fr.MAD) != mad.Size || len(b) != RecordSize {
			t.Fatalf("accepted a %d-byte record with a %d-byte MAD", len(b), len(fr.MAD))
		}
		_ = fr.CheckCRCs()
	})
}

// FuzzRecordRoundTrip writes one MAD with arbitrary addressing and reads
// it back: the MAD bytes, LIDs, time and CRCs must survive.
func FuzzRecordRoundTrip(f *testing.F) {
	f.Add(drNodeInfoRequest(f), uint16(0xffff), uint16(3), uint8(0), false, int64(1700000000), int64(5))
	f.Add(portCountersResponse(f), uint16(0x1a), uint16(0), uint8(5), true, int64(0), int64(999999999))
	f.Fuzz(func(t *testing.T, m []byte, dlid, localLID uint16, sl uint8, received bool, sec, nsec int64) {
		if len(m) < mad.HeaderSize || len(m) > mad.Size {
			return
		}
		if sec < 0 || sec > 1<<32-1 {
			return
		}
		ts := time.Unix(sec, ((nsec%1e9)+1e9)%1e9)
		dir := Sent
		if received {
			dir = Received
		}
		var buf bytes.Buffer
		w, err := NewWriter(&buf)
		if err != nil {
			t.Fatal(err)
		}
		addr := transport.Addr{DLID: dlid, SL: sl}
		local := transport.LocalPort{LID: localLID}
		if err := w.Record(dir, addr, local, m, ts); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := NewReader(&buf)
		if err != nil {
			t.Fatal(err)
		}
		fr, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Next(); err != io.EOF {
			t.Fatalf("second Next: %v, want io.EOF", err)
		}
		if err := fr.CheckCRCs(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fr.MAD[:len(m)], m) {
			t.Fatal("MAD bytes changed")
		}
		if !fr.Time.Equal(ts) {
			t.Fatalf("time %v, want %v", fr.Time, ts)
		}
		p := params(dir, addr, local, m, ts)
		if fr.DLID != p.dlid || fr.SLID != p.slid || fr.VL != p.vl || fr.SL != sl&0xf {
			t.Fatalf("LRH %d->%d VL%d SL%d, want %d->%d VL%d SL%d", fr.SLID, fr.DLID, fr.VL, fr.SL, p.slid, p.dlid, p.vl, sl&0xf)
		}
	})
}

func BenchmarkRecord(b *testing.B) {
	w, err := NewWriter(io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	m := portCountersResponse(b)
	addr := transport.PerfAt(piLID, 0, 0)
	ts := time.Now()
	b.SetBytes(RecordSize)
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Record(Received, addr, testLocal, m, ts); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseRecord(b *testing.B) {
	raw := writeTestCapture(b)
	rec := raw[40 : 40+RecordSize]
	b.SetBytes(RecordSize)
	b.ReportAllocs()
	for b.Loop() {
		f, err := ParseRecord(rec)
		if err != nil {
			b.Fatal(err)
		}
		if err := f.CheckCRCs(); err != nil {
			b.Fatal(err)
		}
	}
}
