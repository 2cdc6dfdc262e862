package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// pcapFile builds a classic pcap file by hand: magic in order, link type
// and snaplen, then records of (sec, sub, caplen, origlen, data).
func pcapFile(order binary.ByteOrder, magic uint32, snaplen, linkType uint32, recs ...[]uint32) []byte {
	var b bytes.Buffer
	w := func(v any) { binary.Write(&b, order, v) }
	w(magic)
	w(uint16(2))
	w(uint16(4))
	w(uint32(0))
	w(uint32(0))
	w(snaplen)
	w(linkType)
	for _, r := range recs {
		w(r[0])
		w(r[1])
		w(r[2])
		w(r[3])
		b.Write(bytes.Repeat([]byte{0xab}, int(r[2])))
	}
	return b.Bytes()
}

func TestPCAPReaderOrdersAndResolutions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		order binary.ByteOrder
		magic uint32
		sub   uint32
		want  time.Time
	}{
		{"little nanos", binary.LittleEndian, pcapMagicNanos, 123456789, time.Unix(1700000000, 123456789)},
		{"big nanos", binary.BigEndian, pcapMagicNanos, 123456789, time.Unix(1700000000, 123456789)},
		{"little micros", binary.LittleEndian, pcapMagicMicros, 123456, time.Unix(1700000000, 123456000)},
		{"big micros", binary.BigEndian, pcapMagicMicros, 123456, time.Unix(1700000000, 123456000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := pcapFile(tc.order, tc.magic, 65535, 197, []uint32{1700000000, tc.sub, 5, 7})
			p, err := newPCAPReader(bytes.NewReader(file))
			if err != nil {
				t.Fatal(err)
			}
			if p.linkType != 197 || p.snaplen != 65535 {
				t.Errorf("link type %d snaplen %d, want 197 65535", p.linkType, p.snaplen)
			}
			data, orig, ts, err := p.next()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(data, bytes.Repeat([]byte{0xab}, 5)) || orig != 7 || !ts.Equal(tc.want) {
				t.Errorf("got %x orig %d ts %v, want 5 x ab, 7, %v", data, orig, ts, tc.want)
			}
			if _, _, _, err := p.next(); err != io.EOF {
				t.Errorf("after the last record: %v, want io.EOF", err)
			}
		})
	}
}

func TestPCAPReaderRejects(t *testing.T) {
	le := binary.LittleEndian
	good := pcapFile(le, pcapMagicNanos, 64, 197, []uint32{1, 2, 8, 8})
	for _, tc := range []struct {
		name    string
		file    []byte
		records int // records read before the error
		want    string
	}{
		{"empty", nil, 0, "file header"},
		{"short header", good[:20], 0, "file header"},
		{"pcapng", append([]byte{0x0a, 0x0d, 0x0d, 0x0a}, good[4:]...), 0, "unknown magic"},
		{"version", func() []byte { b := bytes.Clone(good); b[4] = 3; return b }(), 0, "version 3.4"},
		{"caplen over snaplen", pcapFile(le, pcapMagicNanos, 4, 197, []uint32{1, 2, 8, 8}), 0, "snapshot length"},
		{"caplen over origlen", pcapFile(le, pcapMagicNanos, 64, 197, []uint32{1, 2, 8, 6}), 0, "original length"},
		{"cut in a record header", good[:24+10], 0, io.ErrUnexpectedEOF.Error()},
		{"cut in record data", good[:len(good)-1], 0, io.ErrUnexpectedEOF.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := newPCAPReader(bytes.NewReader(tc.file))
			if err == nil {
				for range tc.records {
					if _, _, _, err = p.next(); err != nil {
						break
					}
				}
				if err == nil {
					_, _, _, err = p.next()
				}
			}
			if err == nil || err == io.EOF || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestPCAPWriterBytes pins the bytes written: the nanosecond little-endian
// header and a record header with equal captured and original lengths.
func TestPCAPWriterBytes(t *testing.T) {
	var b bytes.Buffer
	p := pcapWriter{w: &b}
	if err := p.writeFileHeader(65535, 197); err != nil {
		t.Fatal(err)
	}
	if err := p.writeRecord(time.Unix(0x01020304, 0x05060708), []byte{9, 8, 7}); err != nil {
		t.Fatal(err)
	}
	want := []byte{
		0x4d, 0x3c, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 197, 0, 0, 0,
		0x04, 0x03, 0x02, 0x01, 0x08, 0x07, 0x06, 0x05, 3, 0, 0, 0, 3, 0, 0, 0, 9, 8, 7,
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Fatalf("wrote\n% x\nwant\n% x", b.Bytes(), want)
	}
}

type fullDisk struct{}

func (fullDisk) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestPCAPWriterError(t *testing.T) {
	p := pcapWriter{w: fullDisk{}}
	if err := p.writeRecord(time.Unix(1, 0), []byte{1}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err %v, want the write error", err)
	}
}

// FuzzPCAPReader: any input either fails cleanly or yields records whose
// lengths respect the header's limits.
func FuzzPCAPReader(f *testing.F) {
	f.Add(pcapFile(binary.LittleEndian, pcapMagicNanos, 64, 197, []uint32{1, 2, 8, 8}))
	f.Add(pcapFile(binary.BigEndian, pcapMagicMicros, 16, 1, []uint32{1, 2, 4, 9}, []uint32{3, 4, 0, 0}))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := newPCAPReader(bytes.NewReader(b))
		if err != nil {
			return
		}
		for range 1000 {
			data, orig, _, err := p.next()
			if err != nil {
				return
			}
			if uint32(len(data)) > p.snaplen || len(data) > orig {
				t.Fatalf("record of %d bytes (orig %d) past snaplen %d", len(data), orig, p.snaplen)
			}
		}
	})
}
