package capture

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
	"golang.org/x/sys/unix"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

// TestRecordGoldenHeaders checks every synthesized byte of one record
// against values written out by hand from the ERF and IBA layouts.
func TestRecordGoldenHeaders(t *testing.T) {
	m := drNodeInfoRequest(t)
	var buf bytes.Buffer
	w, err := NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Record(Sent, transport.DirectedRoute(), testLocal, m, testEpoch); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()

	// pcap file header (24 bytes, nanosecond magic, little-endian) and
	// record header (16 bytes).
	wantFile := unhex(t, `
		4d3cb2a1 0200 0400 00000000 00000000 ffff0000 c5000000
		00f15365 0065cd1d 32010000 32010000`) // 0x6553f100 s, 0x1dcd6500 ns, 306, 306
	if got := b[:40]; !bytes.Equal(got, wantFile) {
		t.Errorf("pcap headers:\n got %x\nwant %x", got, wantFile)
	}

	rec := b[40:]
	if len(rec) != RecordSize {
		t.Fatalf("record is %d bytes, want %d", len(rec), RecordSize)
	}
	want := unhex(t, `
		00000080 00f15365   # ERF timestamp LE: 0x6553f100.80000000 (x.5 s)
		15 04 0132 0000 0122 # type 21, varlen, rlen 306, lctr 0, wlen 290
		f0 02 ffff 0048 0003 # LRH: VL15 LVer0, SL0 LNH2, DLID permissive, 72 words, SLID 3
		64 00 ffff 00 000000 00 000000 # BTH: UD SEND Only, P_Key ffff, QP0, PSN 0
		00000000 00 000000   # DETH: Q_Key 0, SrcQP 0`)
	if got := rec[:len(want)]; !bytes.Equal(got, want) {
		t.Errorf("ERF/LRH/BTH/DETH:\n got %x\nwant %x", got, want)
	}
	if got := rec[offMAD:offICRC]; !bytes.Equal(got, m) {
		t.Errorf("MAD bytes changed in the record")
	}
	f, err := ParseRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.CheckCRCs(); err != nil {
		t.Error(err)
	}
	if f.ICRC == 0 || f.VCRC == 0 {
		t.Errorf("CRCs not filled in: ICRC 0x%x VCRC 0x%x", f.ICRC, f.VCRC)
	}
	// Residues: a reflected CRC run over data plus its little-endian CRC
	// gives a fixed remainder whatever the data.
	if r := vcrcUpdate(0xffff, rec[offLRH:]); r != vcrcResidue {
		t.Errorf("VCRC residue 0x%04x, want 0x%04x", r, vcrcResidue)
	}
}

// vcrcResidue is the VCRC register after a whole packet (LRH..VCRC);
// TestVCRCResidueConstant shows it does not depend on the data.
const vcrcResidue = 0x556f

// TestGoldenCapture compares a whole capture of the test MADs with
// testdata/madset.pcap (regenerate with -update after a deliberate
// change; tshark_test.go checks what the file decodes to).
func TestGoldenCapture(t *testing.T) {
	got := writeTestCapture(t)
	golden := filepath.Join("testdata", "madset.pcap")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestGoldenCapture -update ./internal/capture/)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("capture differs from %s", golden)
	}
}

func writeTestCapture(t testing.TB) []byte {
	var buf bytes.Buffer
	w, err := NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range testMADs(t) {
		if err := w.Record(m.dir, m.addr, testLocal, m.mad, testEpoch.Add(time.Duration(i)*time.Millisecond)); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestAddressing checks VL, QPs, Q_Key and the direction-aware LIDs of
// every MAD of the test set, read back through Reader.
func TestAddressing(t *testing.T) {
	r, err := NewReader(bytes.NewReader(writeTestCapture(t)))
	if err != nil {
		t.Fatal(err)
	}
	type hdr struct {
		vl            uint8
		dlid, slid    uint16
		destQP, srcQP uint32
		qkey          uint32
	}
	const L, P, T = 0x0003, 0xffff, piLID // local LID, permissive, target
	want := []hdr{
		{15, P, L, 0, 0, 0},                // DR request
		{15, L, P, 0, 0, 0},                // DR response
		{15, L, P, 0, 0, 0},                // DR response
		{15, T, L, 0, 0, 0},                // LID-routed SMP request
		{15, L, T, 0, 0, 0},                // LID-routed SMP response
		{0, T, L, 1, 1, transport.GSIQKey}, // PerfMgt request
		{0, L, T, 1, 1, transport.GSIQKey}, // PerfMgt response
		{0, T, L, 1, 1, transport.GSIQKey}, // PerfMgt request
		{0, L, T, 1, 1, transport.GSIQKey}, // PerfMgt response
	}
	mads := testMADs(t)
	for i := 0; ; i++ {
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			if i != len(want) {
				t.Fatalf("read %d records, want %d", i, len(want))
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got := hdr{f.VL, f.DLID, f.SLID, f.DestQP, f.SrcQP, f.QKey}
		if got != want[i] {
			t.Errorf("%s: header %+v, want %+v", mads[i].name, got, want[i])
		}
		if f.PSN != uint32(i) {
			t.Errorf("%s: PSN %d, want %d", mads[i].name, f.PSN, i)
		}
		if !bytes.Equal(f.MAD, mads[i].mad) {
			t.Errorf("%s: MAD differs after read-back", mads[i].name)
		}
		if wantTS := testEpoch.Add(time.Duration(i) * time.Millisecond); !f.Time.Equal(wantTS) {
			t.Errorf("%s: ERF time %v, want %v", mads[i].name, f.Time, wantTS)
		}
		if err := f.CheckCRCs(); err != nil {
			t.Errorf("%s: %v", mads[i].name, err)
		}
	}
}

func TestUnassignedLocalLID(t *testing.T) {
	local := testLocal
	local.LID = 0
	p := params(Sent, transport.DirectedRoute(), local, drNodeInfoRequest(t), testEpoch)
	if p.dlid != 0xffff || p.slid != 0xffff {
		t.Errorf("DR SMP from a port without LID: DLID 0x%x SLID 0x%x, want both 0xffff", p.dlid, p.slid)
	}
}

func TestShortMADIsPadded(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	m := drNodeInfoRequest(t)[:mad.HeaderSize]
	if err := w.Record(Sent, transport.DirectedRoute(), testLocal, m, testEpoch); err != nil {
		t.Fatal(err)
	}
	if err := w.Record(Sent, transport.DirectedRoute(), testLocal, m[:10], testEpoch); err == nil {
		t.Error("a 10-byte MAD was accepted")
	}
	if err := w.Record(Sent, transport.DirectedRoute(), testLocal, make([]byte, 257), testEpoch); err == nil {
		t.Error("a 257-byte MAD was accepted")
	}
	w.Close()
	r, err := NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	f, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(f.MAD[:mad.HeaderSize], m) || !bytes.Equal(f.MAD[mad.HeaderSize:], make([]byte, mad.Size-mad.HeaderSize)) {
		t.Error("short MAD not zero-padded")
	}
	if _, err := r.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("after the only record: %v, want io.EOF", err)
	}
}

func TestCloseFlushesAndRejectsLaterRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.pcap")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Record(Sent, transport.DirectedRoute(), testLocal, drNodeInfoRequest(t), testEpoch); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := w.Record(Sent, transport.DirectedRoute(), testLocal, drNodeInfoRequest(t), testEpoch); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Record after Close: %v, want ErrClosed", err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(24 + 16 + RecordSize); st.Size() != want {
		t.Errorf("file is %d bytes after Close, want %d", st.Size(), want)
	}
}

func TestCreateUnwritable(t *testing.T) {
	_, err := Create(filepath.Join(t.TempDir(), "no", "such", "dir", "c.pcap"))
	if err == nil || !strings.Contains(err.Error(), "writable path") {
		t.Errorf("Create in a missing directory: %v", err)
	}
}

// failWriter fails every write after the first n bytes.
type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k := f.n
		f.n = 0
		return k, errors.New("disk full")
	}
	f.n -= len(p)
	return len(p), nil
}

func TestWriteErrorIsSticky(t *testing.T) {
	w, err := NewWriter(&failWriter{n: 100})
	if err != nil {
		t.Fatal(err)
	}
	m := drNodeInfoRequest(t)
	var first error
	for i := 0; i < 100 && first == nil; i++ {
		first = w.Record(Sent, transport.DirectedRoute(), testLocal, m, testEpoch)
	}
	if first == nil || !strings.Contains(first.Error(), "disk full") {
		t.Fatalf("no write error surfaced: %v", first)
	}
	if err := w.Record(Sent, transport.DirectedRoute(), testLocal, m, testEpoch); err == nil {
		t.Error("Record after a write error succeeded")
	}
	if err := w.Close(); err == nil {
		t.Error("Close after a write error returned nil")
	}
}

// TestConcurrentRecord records from many goroutines (run with -race) and
// checks every record is whole and PSNs are distinct.
func TestConcurrentRecord(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	const goroutines, each = 8, 50
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := drNodeInfoRequest(t)
			binary.BigEndian.PutUint32(m[12:16], uint32(g))
			for range each {
				if err := w.Record(Sent, transport.DirectedRoute(), testLocal, m, time.Now()); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if w.Packets() != goroutines*each {
		t.Errorf("Packets() = %d, want %d", w.Packets(), goroutines*each)
	}
	r, err := NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	psns := map[uint32]bool{}
	perG := map[uint32]int{}
	for {
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if psns[f.PSN] {
			t.Fatalf("PSN %d twice", f.PSN)
		}
		psns[f.PSN] = true
		perG[binary.BigEndian.Uint32(f.MAD[12:16])]++
	}
	for g := range goroutines {
		if perG[uint32(g)] != each {
			t.Errorf("goroutine %d: %d records, want %d", g, perG[uint32(g)], each)
		}
	}
}

func TestReaderRejects(t *testing.T) {
	if _, err := NewReader(strings.NewReader("not a pcap file at all....")); err == nil {
		t.Error("garbage accepted as pcap")
	}
	good := writeTestCapture(t)
	bad := bytes.Clone(good)
	binary.LittleEndian.PutUint32(bad[20:24], 1) // link type Ethernet
	if _, err := NewReader(bytes.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "link type") {
		t.Errorf("Ethernet capture: %v", err)
	}
}

func TestParseRecordRejects(t *testing.T) {
	rec := writeTestCapture(t)[40 : 40+RecordSize]
	cases := []struct {
		name string
		mut  func(b []byte) []byte
		want string
	}{
		{"short", func(b []byte) []byte { return b[:10] }, "shorter"},
		{"type", func(b []byte) []byte { b[8] = 2; return b }, "not InfiniBand"},
		{"ext header", func(b []byte) []byte { b[8] |= 0x80; return b }, "extension"},
		{"rlen", func(b []byte) []byte { b[11]++; return b }, "rlen"},
		{"truncated", func(b []byte) []byte { return b[:RecordSize-2] }, "rlen"},
		{"lver", func(b []byte) []byte { b[offLRH] |= 1; return b }, "link version"},
		{"grh", func(b []byte) []byte { b[offLRH+1] |= 3; return b }, "next header"},
		{"pktlen", func(b []byte) []byte { b[offLRH+5]++; return b }, "packet length"},
		{"opcode", func(b []byte) []byte { b[offBTH] = 0x04; return b }, "opcode"},
		{"pad", func(b []byte) []byte { b[offBTH+1] = 0x10; return b }, "pad"},
	}
	for _, c := range cases {
		_, err := ParseRecord(c.mut(bytes.Clone(rec)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
	// A flipped MAD bit parses but fails the CRC check.
	b := bytes.Clone(rec)
	b[offMAD+100] ^= 0x01
	f, err := ParseRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.CheckCRCs(); err == nil || !strings.Contains(err.Error(), "ICRC") {
		t.Errorf("flipped MAD bit: %v, want an ICRC mismatch", err)
	}
	// A changed VL (a variant field) leaves the ICRC valid but not the VCRC.
	b = bytes.Clone(rec)
	b[offLRH] ^= 0x10
	if f, err = ParseRecord(b); err != nil {
		t.Fatal(err)
	}
	if err := f.CheckCRCs(); err == nil || !strings.Contains(err.Error(), "VCRC") {
		t.Errorf("changed VL: %v, want a VCRC mismatch only", err)
	}
}

func TestERFTimestamp(t *testing.T) {
	for _, ts := range []time.Time{
		time.Unix(0, 0), time.Unix(1700000000, 1), time.Unix(1700000000, 999999999), testEpoch,
	} {
		if got := erfTime(erfTimestamp(ts)); !got.Equal(ts) {
			t.Errorf("%v round-trips to %v", ts, got)
		}
	}
	if got := erfTimestamp(testEpoch); got != 0x6553f100_80000000 {
		t.Errorf("erfTimestamp(%v) = %#x", testEpoch, got)
	}
}

func TestDirectionString(t *testing.T) {
	if Sent.String() != "sent" || Received.String() != "received" || Direction(9).String() != "Direction(9)" {
		t.Error("Direction.String")
	}
}

// unhex decodes hex digits, ignoring spaces, newlines and # comments.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	var clean strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		clean.WriteString(strings.Join(strings.Fields(line), ""))
	}
	b, err := hex.DecodeString(clean.String())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestForEngineAdapter checks the adapter to the Engine's tap signature.
func TestForEngineAdapter(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var tap transport.Tap = w.ForEngine(testLocal)
	tap.Record(true, transport.DirectedRoute(), drNodeInfoRequest(t), testEpoch)
	tap.Record(false, transport.DirectedRoute(), drNodeInfoResponse(t), testEpoch)
	tap.Record(false, transport.DirectedRoute(), []byte{1, 2, 3}, testEpoch) // refused
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if w.Packets() != 2 || w.Skipped() != 1 {
		t.Errorf("Packets %d Skipped %d, want 2 and 1", w.Packets(), w.Skipped())
	}
	r, err := NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct{ dlid, slid uint16 }{{0xffff, 3}, {3, 0xffff}} {
		f, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if f.DLID != want.dlid || f.SLID != want.slid {
			t.Errorf("LRH %d->%d, want %d->%d", f.SLID, f.DLID, want.slid, want.dlid)
		}
	}
}

// A --pcap FIFO nobody reads blocked open(2) forever, deaf to SIGTERM
// (a prolog's timeout could not stop it). It is refused at once; with a
// reader (Wireshark reading a pipe live) the capture flows into it.
func TestCreateFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "live.pcap")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		w, err := Create(fifo)
		if err == nil {
			w.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "no reader") || !strings.Contains(err.Error(), fifo) {
			t.Errorf("Create(FIFO without reader) = %v, want an error naming it and saying it has no reader", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Create blocked on a FIFO without a reader")
	}

	r, err := os.OpenFile(fifo, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w, err := Create(fifo)
	if err != nil {
		t.Fatalf("Create(FIFO with a reader): %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	hdr := make([]byte, 24)
	if _, err := io.ReadFull(r, hdr); err != nil {
		t.Fatalf("reading the pcap header from the FIFO: %v", err)
	}
	if le := binary.LittleEndian.Uint32(hdr); le != 0xa1b2c3d4 && le != 0xa1b23c4d {
		t.Errorf("FIFO got %x, not a pcap header", hdr[:4])
	}
}
