package snapshot

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/ibdoctor/ibdoctor/checks"
)

// totalsMagic starts a totals file (TotalsFile): then the length of the
// LID set (uvarint), the set, and the switches' records to the end
// (checks.PortTotals, docs/schema-snapshot.md).
const totalsMagic = "IBDTOT1\n"

// maxTotals bounds the totals file a gate reads (about 17 bytes per node).
const maxTotals = 64 << 20

func writeTotals(w io.Writer, t *checks.PortTotals) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(totalsMagic)
	bw.Write(binary.AppendUvarint(nil, uint64(len(t.LIDs))))
	bw.Write(t.LIDs)
	bw.Write(t.Switches)
	return bw.Flush()
}

func decodeTotals(data []byte) (*checks.PortTotals, error) {
	if len(data) < len(totalsMagic) || string(data[:len(totalsMagic)]) != totalsMagic {
		return nil, errors.New("not an ibdoctor totals file")
	}
	data = data[len(totalsMagic):]
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
		t, err = decodeTotals(data)
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
