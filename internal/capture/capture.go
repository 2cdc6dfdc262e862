// Package capture records the MADs ibdoctor exchanges as a pcap file that
// Wireshark and tshark decode.
//
// Each MAD becomes one pcap record of link type ERF (197) holding an ERF
// record of type InfiniBand (21): a synthesized local InfiniBand packet
// (LRH, BTH for UD SEND Only, DETH), the 256-byte MAD, and computed ICRC
// and VCRC. SMPs travel on VL15 to QP0 with Q_Key 0; PerfMgt and other
// GMPs on VL0 to QP1 with Q_Key 0x80010000. The LIDs follow the direction
// of travel: a sent MAD goes from the local port's LID to the destination
// LID (0xFFFF for directed route), a received one the other way round.
//
// The package writes and reads the classic pcap format itself (pcap.go);
// it never uses libpcap.
package capture

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
	"golang.org/x/sys/unix"
)

// Direction says which way a MAD crossed the local port.
type Direction uint8

// Directions.
const (
	Sent     Direction = iota // ibdoctor sent it (normally a request)
	Received                  // ibdoctor received it (normally a response)
)

func (d Direction) String() string {
	switch d {
	case Sent:
		return "sent"
	case Received:
		return "received"
	}
	return fmt.Sprintf("Direction(%d)", uint8(d))
}

// Tap receives every MAD an engine sends or receives. addr is the
// destination of a sent MAD and the source of a received one (as in
// transport.Packet); local is the port the engine talks through. mad is
// the MAD as it crossed the Conn (at most 256 bytes). Implementations are
// safe for concurrent use and must not keep mad after returning.
type Tap interface {
	Record(dir Direction, addr transport.Addr, local transport.LocalPort, mad []byte, ts time.Time) error
}

// Writer is a Tap that writes a pcap file. It is safe for concurrent use.
// Close flushes buffered records; records written after Close fail with
// transport.ErrClosed.
type Writer struct {
	mu      sync.Mutex
	bw      *bufio.Writer
	pw      pcapWriter
	closer  io.Closer // the file Create opened; nil for NewWriter
	buf     [RecordSize]byte
	psn     uint32
	n       int
	skipped int
	err     error // first write error; every later call returns it
	closed  bool
}

var _ Tap = (*Writer)(nil)

// snaplen is the pcap file's snapshot length; records are RecordSize.
const snaplen = 65535

// NewWriter writes the pcap file header to w and returns a Writer that
// appends records to w. Close flushes but does not close w.
func NewWriter(w io.Writer) (*Writer, error) {
	bw := bufio.NewWriter(w)
	cw := &Writer{bw: bw, pw: pcapWriter{w: bw}}
	if err := cw.pw.writeFileHeader(snaplen, LinkTypeERF); err != nil {
		return nil, fmt.Errorf("capture: writing pcap header: %w", err)
	}
	return cw, nil
}

// Create creates (or truncates) the file at path and returns a Writer
// for it. Close flushes and closes the file.
func Create(path string) (*Writer, error) {
	f, err := create(path)
	if err != nil {
		return nil, err
	}
	w, err := NewWriter(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	w.closer = f
	return w, nil
}

// create opens path for the capture. A named pipe is opened for writing
// only and without blocking, so a pipe nobody reads is refused at once:
// os.Create opened it for reading too, and the capture then filled the
// pipe and blocked every MAD behind it, for good.
func create(path string) (*os.File, error) {
	if st, err := os.Stat(path); err == nil && st.Mode()&fs.ModeNamedPipe != 0 {
		f, err := os.OpenFile(path, os.O_WRONLY|unix.O_NONBLOCK, 0)
		if errors.Is(err, unix.ENXIO) {
			return nil, fmt.Errorf("capture: %s is a named pipe with no reader: start its reader first (e.g. wireshark -k -i %s), or give a file path", path, path)
		}
		if err != nil {
			return nil, fmt.Errorf("capture: %w (choose a writable path for the capture file)", err)
		}
		return f, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("capture: %w (choose a writable path for the capture file)", err)
	}
	return f, nil
}

// Record writes one MAD. It fails for a MAD shorter than the 24-byte
// common header or longer than 256 bytes; a shorter MAD is zero-padded to
// 256 bytes, as the kernel pads it on the wire.
func (w *Writer) Record(dir Direction, addr transport.Addr, local transport.LocalPort, m []byte, ts time.Time) error {
	if len(m) < mad.HeaderSize || len(m) > mad.Size {
		return fmt.Errorf("capture: a MAD is %d to %d bytes, got %d", mad.HeaderSize, mad.Size, len(m))
	}
	if dir != Sent && dir != Received {
		return fmt.Errorf("capture: invalid direction %d", dir)
	}
	p := params(dir, addr, local, m, ts)

	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return transport.ErrClosed
	}
	if w.err != nil {
		return w.err
	}
	p.psn = w.psn
	w.psn = (w.psn + 1) & 0xffffff
	encodeRecord(w.buf[:], &p)
	if err := w.pw.writeRecord(ts, w.buf[:]); err != nil {
		w.err = fmt.Errorf("capture: writing record %d: %w", w.n+1, err)
		return w.err
	}
	w.n++
	return nil
}

// params derives the synthesized header fields of one MAD.
func params(dir Direction, addr transport.Addr, local transport.LocalPort, m []byte, ts time.Time) frameParams {
	p := frameParams{pkey: defaultPKey, madBytes: m, ts: ts, sl: addr.SL & 0x0f}

	localLID := local.LID
	peerLID := addr.DLID
	if mad.Class(m[1]) == mad.ClassSubnDR {
		// A directed-route SMP is addressed by its path; the LRH carries
		// the permissive LID towards the path's far end.
		peerLID = permissiveLID
	}
	if localLID == 0 {
		// No SM has assigned a LID yet (typical during DR discovery).
		localLID = permissiveLID
	}

	if mad.Class(m[1]).IsSMP() {
		p.vl = vlSMP
		p.destQP, p.srcQP, p.qkey = transport.QP0, transport.QP0, 0
	} else {
		p.vl = 0
		p.qkey = transport.GSIQKey
		peerQP := addr.QP
		if peerQP == 0 {
			peerQP = transport.QP1
		}
		if dir == Sent {
			p.destQP, p.srcQP = peerQP, transport.QP1
		} else {
			p.destQP, p.srcQP = transport.QP1, peerQP
		}
	}

	if dir == Sent {
		p.dlid, p.slid = peerLID, localLID
	} else {
		p.dlid, p.slid = localLID, peerLID
	}
	return p
}

// ForEngine adapts w to the transport Engine's tap (transport.Options.Tap)
// for an Engine talking through local. The Engine's tap cannot return
// errors: a MAD the Writer refuses is counted in Skipped, and a write
// error sticks and is returned by Close.
func (w *Writer) ForEngine(local transport.LocalPort) transport.Tap {
	return engineTap{w: w, local: local}
}

type engineTap struct {
	w     *Writer
	local transport.LocalPort
}

func (t engineTap) Record(sent bool, addr transport.Addr, m []byte, ts time.Time) {
	dir := Received
	if sent {
		dir = Sent
	}
	if err := t.w.Record(dir, addr, t.local, m, ts); err != nil {
		t.w.mu.Lock()
		t.w.skipped++
		t.w.mu.Unlock()
	}
}

// Skipped returns how many MADs the Engine tap could not record (refused
// MADs, or MADs after a write error or Close).
func (w *Writer) Skipped() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.skipped
}

// Packets returns the number of records written so far.
func (w *Writer) Packets() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// Close flushes buffered records and, for a Writer from Create, closes
// the file. Closing twice returns nil.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	err := w.err
	if ferr := w.bw.Flush(); ferr != nil && err == nil {
		err = fmt.Errorf("capture: flushing: %w", ferr)
	}
	if w.closer != nil {
		if cerr := w.closer.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("capture: closing: %w", cerr)
		}
	}
	return err
}

// Reader reads back a capture written by Writer.
type Reader struct {
	r *pcapReader
	n int
}

// NewReader reads the pcap file header from r and checks the link type.
func NewReader(r io.Reader) (*Reader, error) {
	pr, err := newPCAPReader(r)
	if err != nil {
		return nil, fmt.Errorf("capture: not a pcap file: %w", err)
	}
	if lt := pr.linkType; lt != LinkTypeERF {
		return nil, fmt.Errorf("capture: pcap link type %d, want ERF (%d)", lt, LinkTypeERF)
	}
	return &Reader{r: pr}, nil
}

// Next returns the next frame, or io.EOF after the last one. The frame's
// bytes are its own.
func (r *Reader) Next() (*Frame, error) {
	data, origLen, _, err := r.r.next()
	if err == io.EOF {
		return nil, io.EOF
	}
	r.n++
	if err != nil {
		return nil, fmt.Errorf("capture: record %d: %w", r.n, err)
	}
	if len(data) != origLen {
		return nil, fmt.Errorf("capture: record %d truncated to %d of %d bytes", r.n, len(data), origLen)
	}
	f, err := ParseRecord(data)
	if err != nil {
		return nil, fmt.Errorf("record %d: %w", r.n, err)
	}
	return f, nil
}
