package capture

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
)

// The classic libpcap file format: a 24-byte file header (magic, version
// 2.4, time zone, sigfigs, snapshot length, link type), then per record a
// 16-byte header (seconds, sub-second part, captured length, original
// length) and the captured bytes. Written here directly rather than with
// gopacket's pcapgo: importing pcapgo links gopacket/layers, whose
// package initialisation fills several MB of protocol tables that every
// ibdoctor command would then carry in resident memory.

const (
	pcapMagicMicros = 0xa1b2c3d4
	pcapMagicNanos  = 0xa1b23c4d
	pcapVersionMaj  = 2
	pcapVersionMin  = 4
	pcapFileHeader  = 24
	pcapRecHeader   = 16
	// pcapMaxRecord bounds one record's captured bytes (libpcap's
	// largest snapshot length), whatever the file header claims.
	pcapMaxRecord = 262144
)

// pcapWriter writes a nanosecond-resolution little-endian pcap file.
type pcapWriter struct {
	w   io.Writer
	hdr [pcapRecHeader]byte
}

func (p *pcapWriter) writeFileHeader(snaplen, linkType uint32) error {
	var b [pcapFileHeader]byte
	binary.LittleEndian.PutUint32(b[0:], pcapMagicNanos)
	binary.LittleEndian.PutUint16(b[4:], pcapVersionMaj)
	binary.LittleEndian.PutUint16(b[6:], pcapVersionMin)
	// 8:12 time zone (UTC) and 12:16 sigfigs stay zero.
	binary.LittleEndian.PutUint32(b[16:], snaplen)
	binary.LittleEndian.PutUint32(b[20:], linkType)
	_, err := p.w.Write(b[:])
	return err
}

// writeRecord writes one record of data, captured whole, stamped ts (now
// when zero).
func (p *pcapWriter) writeRecord(ts time.Time, data []byte) error {
	if ts.IsZero() {
		ts = time.Now()
	}
	binary.LittleEndian.PutUint32(p.hdr[0:], uint32(ts.Unix()))
	binary.LittleEndian.PutUint32(p.hdr[4:], uint32(ts.Nanosecond()))
	binary.LittleEndian.PutUint32(p.hdr[8:], uint32(len(data)))
	binary.LittleEndian.PutUint32(p.hdr[12:], uint32(len(data)))
	if _, err := p.w.Write(p.hdr[:]); err != nil {
		return fmt.Errorf("writing record header: %w", err)
	}
	_, err := p.w.Write(data)
	return err
}

// pcapReader reads a classic pcap file of either byte order and either
// timestamp resolution.
type pcapReader struct {
	r        io.Reader
	order    binary.ByteOrder
	nsFactor uint32 // 1 for nanosecond files, 1000 for microsecond ones
	snaplen  uint32
	linkType uint32
	hdr      [pcapRecHeader]byte
}

func newPCAPReader(r io.Reader) (*pcapReader, error) {
	p := &pcapReader{r: bufio.NewReader(r)}
	var b [pcapFileHeader]byte
	if _, err := io.ReadFull(p.r, b[:]); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("reading the 24-byte file header: %w", err)
	}
	switch {
	case binary.LittleEndian.Uint32(b[0:]) == pcapMagicNanos:
		p.order, p.nsFactor = binary.LittleEndian, 1
	case binary.BigEndian.Uint32(b[0:]) == pcapMagicNanos:
		p.order, p.nsFactor = binary.BigEndian, 1
	case binary.LittleEndian.Uint32(b[0:]) == pcapMagicMicros:
		p.order, p.nsFactor = binary.LittleEndian, 1000
	case binary.BigEndian.Uint32(b[0:]) == pcapMagicMicros:
		p.order, p.nsFactor = binary.BigEndian, 1000
	default:
		return nil, fmt.Errorf("unknown magic %#08x (want a classic pcap file, not pcapng)", binary.LittleEndian.Uint32(b[0:]))
	}
	if maj, min := p.order.Uint16(b[4:]), p.order.Uint16(b[6:]); maj != pcapVersionMaj || min != pcapVersionMin {
		return nil, fmt.Errorf("pcap version %d.%d, want %d.%d", maj, min, pcapVersionMaj, pcapVersionMin)
	}
	p.snaplen = p.order.Uint32(b[16:])
	p.linkType = p.order.Uint32(b[20:])
	return p, nil
}

// next reads one record: its bytes, its original length and timestamp.
// It returns io.EOF only at a clean end of file.
func (p *pcapReader) next() (data []byte, origLen int, ts time.Time, err error) {
	if _, err = io.ReadFull(p.r, p.hdr[:]); err != nil {
		return nil, 0, time.Time{}, err
	}
	sec, sub := p.order.Uint32(p.hdr[0:]), p.order.Uint32(p.hdr[4:])
	capLen, origLen := p.order.Uint32(p.hdr[8:]), int(p.order.Uint32(p.hdr[12:]))
	if capLen > p.snaplen {
		return nil, 0, time.Time{}, fmt.Errorf("capture length %d exceeds the snapshot length %d", capLen, p.snaplen)
	}
	if capLen > pcapMaxRecord {
		return nil, 0, time.Time{}, fmt.Errorf("capture length %d exceeds %d bytes", capLen, pcapMaxRecord)
	}
	if int(capLen) > origLen {
		return nil, 0, time.Time{}, fmt.Errorf("capture length %d exceeds the original length %d", capLen, origLen)
	}
	data = make([]byte, capLen)
	if _, err = io.ReadFull(p.r, data); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, 0, time.Time{}, err
	}
	ts = time.Unix(int64(sec), int64(sub)*int64(p.nsFactor)).UTC()
	return data, origLen, ts, nil
}
