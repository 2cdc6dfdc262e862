package snapshot

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/outfile"
	"github.com/ibdoctor/ibdoctor/mad"
)

// BaselineName is the accepted topology in the state directory: what
// sweeps compare the fabric against (topology.changed, topology.miswired,
// link.down) until the operator accepts a new one with
// `ibdoctor baseline accept`. It is ibdoctor.fabric/v1 without forwarding
// tables, gzip-compressed (`zcat` shows it).
const BaselineName = "baseline.json.gz"

// BaselineV1Name is the accepted topology as earlier versions kept it
// (plain, indented JSON): still read; the next accept replaces it.
const BaselineV1Name = "baseline.json"

// BaselineIndexName is the accepted topology in gate.idx's layout, so a
// gate reads only its hosts' part of it (which HCAs each host had, and
// where they were cabled) instead of decoding baseline.json.gz.
const BaselineIndexName = "baseline.idx"

// LoadBaseline reads the accepted topology in dir; nil, nil when there is
// none yet.
func LoadBaseline(dir string) (*fabric.Fabric, error) {
	path := filepath.Join(dir, BaselineName)
	fh, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return loadBaselineV1(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	defer fh.Close()
	z, err := gzip.NewReader(fh)
	if err != nil {
		return nil, fmt.Errorf("baseline %s: %w (accept the current fabric again: ibdoctor baseline accept)", path, err)
	}
	// Decoded as it is read: at 49k nodes the document is 150 MB, which
	// io.ReadAll held whole (and twice while it grew) at a sweep's start.
	rr := &readErr{r: z}
	f, err := fabric.ReadJSON(rr)
	if rr.err != nil {
		err = rr.err // a damaged file, said as when it was read whole
	}
	if err != nil {
		return nil, fmt.Errorf("baseline %s: %w (accept the current fabric again: ibdoctor baseline accept)", path, err)
	}
	return f, nil
}

// readErr is r, keeping the first error other than io.EOF that reading it
// gave (a decoder reading through it wraps that error in its own).
type readErr struct {
	r   io.Reader
	err error
}

func (r *readErr) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF && r.err == nil {
		r.err = err
	}
	return n, err
}

// HasBaseline says whether dir holds a baseline (baseline.json.gz, or an
// older version's baseline.json) without reading it: what a sweep
// comparing against a designed topology needs to know of it.
func HasBaseline(dir string) (bool, error) {
	for _, name := range []string{BaselineName, BaselineV1Name} {
		_, err := os.Stat(filepath.Join(dir, name))
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("baseline: %w", err)
		}
	}
	return false, nil
}

func loadBaselineV1(dir string) (*fabric.Fabric, error) {
	path := filepath.Join(dir, BaselineV1Name)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	f, err := fabric.Unmarshal(data)
	if err != nil {
		return nil, fmt.Errorf("baseline %s: %w (accept the current fabric again: ibdoctor baseline accept)", path, err)
	}
	return f, nil
}

// SaveBaseline makes f, read from source (a sweep's Source), the
// accepted topology in dir; accepted says the operator accepted it
// (`baseline accept`), false for one a sweep takes by itself
// (BaselineAccepted). The caller holds dir's Lock.
func SaveBaseline(dir string, f *fabric.Fabric, source string, accepted bool) error {
	if err := outfile.WriteHere(filepath.Join(dir, BaselineName), func(w io.Writer) error {
		return writeFabricGz(w, f, fabric.MarshalOptions{OmitLFT: true})
	}); err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	// The v1 file would otherwise stay beside it, stale (the new one is
	// read first, so a failed removal is harmless).
	if err := os.Remove(filepath.Join(dir, BaselineV1Name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("baseline: %w", err)
	}
	if err := WriteBaselineTopology(dir, f); err != nil {
		return err
	}
	return writeBaselineIndex(dir, f, source, accepted)
}

// BaselineSource names the file in the state dir that holds the fabric
// this Save wrote as baseline.json.gz holds an accepted one (gzipped JSON
// without the tables, encoded alike): its fabric file when the tables
// went into gate.idx; "" when they are in the file, or for a snapshot
// that was loaded (an older version may have encoded it otherwise).
func (s *Snapshot) BaselineSource() string { return s.baselineSrc }

// SaveBaselineFrom is SaveBaseline for a fabric f whose baseline.json.gz
// bytes are already in dir: the file src (a snapshot's BaselineSource) is
// copied instead of f encoded again (at 49k nodes that was about 4 s of
// CPU and its garbage at a first sweep's end). src "" encodes f. It is
// the baseline a first sweep takes by itself, not accepted by the
// operator.
func SaveBaselineFrom(dir, src string, f *fabric.Fabric, source string) error {
	if src == "" {
		return SaveBaseline(dir, f, source, false)
	}
	in, err := os.Open(filepath.Join(dir, src))
	if err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	defer in.Close()
	if err := outfile.WriteHere(filepath.Join(dir, BaselineName), func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	}); err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	if err := os.Remove(filepath.Join(dir, BaselineV1Name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("baseline: %w", err)
	}
	if err := WriteBaselineTopology(dir, f); err != nil {
		return err
	}
	return writeBaselineIndex(dir, f, source, false)
}

// writeBaselineIndex writes baseline.idx, which also records the source
// the baseline was read from (Index.OfAnotherFabric) and whether the
// operator accepted it (BaselineAccepted).
func writeBaselineIndex(dir string, f *fabric.Fabric, source string, accepted bool) error {
	if source == "" {
		source = unknownSource
	}
	idx, err := encodeIndex(hostEdge(f), newCtrEnc(), time.Time{}, source, true, false)
	if err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	if accepted {
		idx.head[acceptedAt] = 1
	}
	if err := outfile.WriteHere(filepath.Join(dir, BaselineIndexName), idx.writeTo); err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	return nil
}

// hostEdge is the part of f a gate asks the baseline about (Index.JobPart):
// every node that is not a switch, and the switches cabled to one, in f's
// order. Switches further in are left out: at 49k nodes their port
// records were two thirds of baseline.idx. Their links become links to
// nodes left out, as a job's part has them anyway.
func hostEdge(f *fabric.Fabric) *fabric.Fabric {
	keep := make(map[*fabric.Node]bool, len(f.Nodes))
	for _, n := range f.Nodes {
		if n.Type == mad.NodeSwitch {
			continue
		}
		keep[n] = true
		for _, p := range n.Ports {
			if p != nil && p.Remote != nil && p.Remote.Node != nil {
				keep[p.Remote.Node] = true
			}
		}
	}
	e := &fabric.Fabric{Nodes: make([]*fabric.Node, 0, len(keep))}
	for _, n := range f.Nodes {
		if keep[n] {
			e.Nodes = append(e.Nodes, n)
		}
	}
	return e
}

// EnsureBaselineIndex writes baseline.idx beside a baseline.json from a
// version that had none (f is that baseline), as a baseline a sweep took
// by itself: that version did not record whether the operator accepted
// it. The caller holds dir's Lock.
func EnsureBaselineIndex(dir string, f *fabric.Fabric) error {
	if HasBaselineIndex(dir) {
		return nil
	}
	return writeBaselineIndex(dir, f, "", false)
}

// HasBaselineIndex says whether dir has a baseline.idx (false only when
// it is known to be absent: EnsureBaselineIndex would write one).
func HasBaselineIndex(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, BaselineIndexName))
	return err == nil || !errors.Is(err, fs.ErrNotExist)
}

// RewriteBaselineIndex replaces a damaged baseline.idx by one written
// from f, dir's baseline itself, marked not accepted and of no known
// source: both were recorded only in the damaged file. The caller holds
// dir's Lock.
func RewriteBaselineIndex(dir string, f *fabric.Fabric) error {
	return writeBaselineIndex(dir, f, "", false)
}

// IsCorrupt says whether err is about an index file that is not one
// (truncated, or not of this format), as against one that could not be
// opened or read at all.
func IsCorrupt(err error) bool { return errors.Is(err, errCorrupt) }

// unknownSource is the source baseline.idx gives a baseline whose sweep's
// source is not known (as every baseline.idx before it was kept).
const unknownSource = "baseline"

// BaselineAccepted says whether the operator accepted dir's baseline
// (`ibdoctor baseline accept`), as its baseline.idx records: false for
// one the first sweep took by itself, and for a state dir from before
// this was recorded (no baseline.idx, or one without the mark), which
// is taken as the sweep's own.
func BaselineAccepted(dir string) (bool, error) {
	x, err := openIndexFile(filepath.Join(dir, BaselineIndexName))
	if errors.Is(err, ErrNone) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("baseline: %w (accept the current fabric again: ibdoctor baseline accept)", err)
	}
	defer x.Close()
	return x.Accepted, nil
}

// OpenBaseline opens the accepted topology in dir for a gate: baseline.idx
// mapped, or (a state dir from before it existed) baseline.json decoded
// and indexed. nil, nil when there is no baseline.
func OpenBaseline(dir string) (*Index, error) {
	x, err := openIndexFile(filepath.Join(dir, BaselineIndexName))
	if err == nil || !errors.Is(err, ErrNone) {
		return x, err
	}
	f, err := LoadBaseline(dir)
	if f == nil || err != nil {
		return nil, err
	}
	return IndexOf(f)
}

// IndexOf lays out a fabric in memory as an Index (a designed topology
// given to a gate, or an old state dir's baseline.json).
func IndexOf(f *fabric.Fabric) (*Index, error) {
	data, err := EncodeIndex(f, nil, time.Time{}, "", true)
	if err != nil {
		return nil, err
	}
	return ParseIndex(data)
}
