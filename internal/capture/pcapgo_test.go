package capture

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
)

// TestPCAPGoReadsOurCaptures reads a capture written by Writer with
// gopacket's pcapgo, an independent pcap reader: the file header (link type
// ERF, snaplen) and every record (timestamp, length, bytes) must be what
// our own Reader returns. pcapgo is only linked into this test: in the
// binary its gopacket/layers dependency costs ~7 MB of init-time tables.
func TestPCAPGoReadsOurCaptures(t *testing.T) {
	file := writeTestCapture(t)
	r, err := pcapgo.NewReader(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if r.LinkType() != layers.LinkType(LinkTypeERF) {
		t.Errorf("pcapgo link type %v, want %d (ERF)", r.LinkType(), LinkTypeERF)
	}
	if r.Snaplen() != snaplen {
		t.Errorf("pcapgo snaplen %d, want %d", r.Snaplen(), snaplen)
	}
	ours, err := NewReader(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		data, ci, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("pcapgo record %d: %v", n+1, err)
		}
		f, err := ours.Next()
		if err != nil {
			t.Fatalf("our record %d: %v", n+1, err)
		}
		if !ci.Timestamp.Equal(f.Time) {
			t.Errorf("record %d: pcapgo time %v, ours %v", n+1, ci.Timestamp, f.Time)
		}
		if want := testEpoch.Add(time.Duration(n) * time.Millisecond); !ci.Timestamp.Equal(want) {
			t.Errorf("record %d: time %v, written %v", n+1, ci.Timestamp, want)
		}
		if ci.CaptureLength != len(data) || ci.Length != len(data) {
			t.Errorf("record %d: caplen %d len %d for %d bytes", n+1, ci.CaptureLength, ci.Length, len(data))
		}
		if !bytes.Equal(data[len(data)-len(f.MAD)-6:len(data)-6], f.MAD) {
			t.Errorf("record %d: the MAD bytes pcapgo read are not the MAD our Reader decoded", n+1)
		}
		n++
	}
	if _, err := ours.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("our Reader has records pcapgo did not see: %v", err)
	}
	if want := len(testMADs(t)); n != want {
		t.Errorf("pcapgo read %d records, want %d", n, want)
	}
}
