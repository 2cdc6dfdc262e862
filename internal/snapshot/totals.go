package snapshot

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
)

// totalsMagic starts a totals file (TotalsFile): then the taken_at of
// the sweep that wrote it (Unix nanoseconds, 8 bytes little endian), the
// length of the LID set (uvarint), the set, the switches' records
// (checks.PortTotals, docs/schema-snapshot.md), and the CRC-32C of all
// the bytes before it (4 bytes, little endian): a flipped bit in a total
// would weigh a switch's groups on another count. The stamp ties the
// file to snapshot.json's sweep: its name alone does not, once a state
// dir is put together by hand (review R2). "4", not "3": '3' is one bit
// from '2', and a flipped bit must not make a checked file an unchecked
// one.
const totalsMagic = "IBDTOT4\n"

// totalsMagicV2 starts the file of an ibdoctor before the checksum
// (2026-11-27): read as before, unchecked.
const totalsMagicV2 = "IBDTOT2\n"

// totalsMagicV1 starts the unstamped file of an ibdoctor before the
// stamp: it cannot say which sweep it is of, so it is not used.
const totalsMagicV1 = "IBDTOT1\n"

// maxTotals bounds the totals file a gate reads (about 17 bytes per node).
const maxTotals = 64 << 20

func writeTotals(w io.Writer, t *checks.PortTotals, taken time.Time) error {
	bw := bufio.NewWriter(w)
	h := crc32.New(castagnoli)
	mw := io.MultiWriter(bw, h)
	io.WriteString(mw, totalsMagic)
	mw.Write(binary.LittleEndian.AppendUint64(nil, uint64(taken.UnixNano())))
	mw.Write(binary.AppendUvarint(nil, uint64(len(t.LIDs))))
	mw.Write(t.LIDs)
	mw.Write(t.Switches)
	bw.Write(binary.LittleEndian.AppendUint32(nil, h.Sum32()))
	return bw.Flush()
}

// decodeTotals decodes a totals file of the sweep taken at taken: one
// of another sweep, or without a stamp, is an error (a gate then leaves
// the switches that need it undecided), never another sweep's totals.
func decodeTotals(data []byte, taken time.Time) (*checks.PortTotals, error) {
	if len(data) >= len(totalsMagicV1) && string(data[:len(totalsMagicV1)]) == totalsMagicV1 {
		return nil, errors.New("written by an older ibdoctor, whose totals file does not say which sweep it is of")
	}
	switch {
	case len(data) >= len(totalsMagic)+8+4 && string(data[:len(totalsMagic)]) == totalsMagic:
		end := len(data) - 4
		if crc32.Checksum(data[:end], castagnoli) != binary.LittleEndian.Uint32(data[end:]) {
			return nil, errSum
		}
		data = data[:end]
	case len(data) >= len(totalsMagicV2)+8 && string(data[:len(totalsMagicV2)]) == totalsMagicV2:
		// An ibdoctor's before the checksum: read unchecked, as then.
	default:
		return nil, errors.New("not an ibdoctor totals file")
	}
	data = data[len(totalsMagic):]
	if at := int64(binary.LittleEndian.Uint64(data)); at != taken.UnixNano() {
		return nil, fmt.Errorf("is of the sweep taken at %s, %s of the one at %s", time.Unix(0, at).UTC().Format(time.RFC3339Nano), FileName, taken.UTC().Format(time.RFC3339Nano))
	}
	data = data[8:]
	n, k := binary.Uvarint(data)
	if k <= 0 || n > uint64(len(data)-k) {
		return nil, errors.New("its LID set is cut short")
	}
	return &checks.PortTotals{LIDs: data[k : k+int(n)], Switches: data[k+int(n):]}, nil
}

// PortTotals returns the sweep's per-port destination totals (a gate
// reads them for a switch whose table changed since the sweep), nil when
// the sweep kept none (an ibdoctor before them, or a sweep whose
// routing.ecmp-imbalance did not run); an error says why they cannot be
// read.
func (s *Snapshot) PortTotals() (*checks.PortTotals, error) {
	if s.verdicts != nil && s.verdicts.PortTotals != nil {
		return s.verdicts.PortTotals, nil
	}
	if s.totals == nil {
		return nil, nil
	}
	fh := s.totals
	s.totals = nil
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, maxTotals+1))
	if err == nil && len(data) > maxTotals {
		err = fmt.Errorf("over %d MB", maxTotals>>20)
	}
	var t *checks.PortTotals
	if err == nil {
		t, err = decodeTotals(data, s.TakenAt)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v", s.TotalsFile, err)
	}
	if s.verdicts != nil {
		s.verdicts.PortTotals = t
	}
	return t, nil
}

// openTotals opens the totals file snapshot.json names (nil when none),
// read only if a gate asks (PortTotals): held open, so a sweep replacing
// the state meanwhile removes its name, not what this gate reads.
func (s *Snapshot) openTotals(dir string) (*os.File, error) {
	if s.TotalsFile == "" {
		return nil, nil
	}
	fh, err := os.Open(dir + string(os.PathSeparator) + s.TotalsFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, missingFile(s.TotalsFile)
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	return fh, nil
}
