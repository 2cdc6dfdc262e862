// Package snapshot saves what a sweep read — the fabric with its
// forwarding tables and every port's counters — so the next sweep can
// compare against it and a gate can answer from it, re-reading live only
// the ports a job uses. The file is JSON (docs/schema-snapshot.md).
package snapshot

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/outfile"
	"github.com/ibdoctor/ibdoctor/internal/words"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Schema identifies the snapshot file format. v2 keeps the fabric file
// gzip-compressed and the saved counters in gate.idx (counters_file);
// v1 state dirs (a plain fabric file, counters in snapshot.json) are
// still read.
const (
	Schema   = "ibdoctor.snapshot/v2"
	SchemaV1 = "ibdoctor.snapshot/v1"
)

// FileName is the snapshot's name inside the state directory.
const FileName = "snapshot.json"

// IsStateFile says whether name (a base name) is one of the files sweeps
// write in a state directory and read back (the snapshot, its fabric
// files, gate.idx, the verdicts, the baseline, the lock, the partial
// sweep's folder): an output given
// that name in the state directory would replace the state.
func IsStateFile(name string) bool {
	switch name {
	case FileName, IndexName, VerdictsName, BaselineName, BaselineV1Name, BaselineIndexName, BaselineTopologyName, LockName, LastSweepName, PartialName:
		return true
	}
	for _, pat := range []string{"fabric-*.json*", "gate-*.idx", "verdicts-*.json", "census-*.json", "totals-*.bin"} {
		if ok, _ := filepath.Match(pat, name); ok {
			return true
		}
	}
	return false
}

// PartialName is the folder inside the state directory where a partial
// sweep that kept the complete snapshot saves itself (the next sweep
// pairs its counters with it); a sweep replacing snapshot.json removes it.
const PartialName = "partial"

// Snapshot is one saved sweep.
type Snapshot struct {
	Schema   string    `json:"schema"`
	TakenAt  time.Time `json:"taken_at"`
	Source   string    `json:"source"`
	Version  string    `json:"ibdoctor_version"`
	Complete bool      `json:"complete"`
	// CountersAt is when the sweep's counter pass started, after
	// discovery and the tables (minutes after TakenAt at 49k nodes): a
	// later sweep or a gate times a counter's growth from it. Zero in a
	// snapshot an ibdoctor before it was kept wrote: TakenAt stands for
	// it (CountersRead).
	CountersAt time.Time `json:"counters_at,omitzero"`
	// FabricFile names the file beside snapshot.json that holds the
	// fabric (ibdoctor.fabric/v1 with LFTs). It is kept apart so that a
	// big fabric is parsed once, and only when needed.
	FabricFile string `json:"fabric_file"`
	// IndexFile names the file beside snapshot.json holding the saved
	// counters and the forwarding tables (gate.idx); empty when they are
	// in Counters and the fabric file (v1, or a fabric gate.idx cannot
	// lay out).
	IndexFile string `json:"index_file,omitempty"`
	// VerdictsFile names the file beside snapshot.json holding the
	// sweep's fabric-wide verdicts; empty when the sweep made none, or in
	// a snapshot whose verdicts are in the fixed-name VerdictsName (an
	// ibdoctor before the files were named by sweep). Each sweep's
	// gate.idx and verdicts have names of their own, like its fabric
	// file, so that only the rename of snapshot.json publishes a sweep:
	// a sweep killed or failing between renames leaves the old
	// snapshot.json naming its own, untouched files.
	VerdictsFile string `json:"verdicts_file,omitempty"`
	// CensusFile names the file beside snapshot.json holding the sweep's
	// summary of the whole fabric's host adapters (census.go), written
	// with gate.idx; empty in a snapshot of an ibdoctor before it was
	// kept, or of a fabric whose adapters gate.idx cannot look up by
	// host: a gate then builds the census from gate.idx.
	CensusFile string `json:"census_file,omitempty"`
	// TotalsFile names the file beside snapshot.json holding the
	// sweep's per-port destination totals (checks.PortTotals,
	// totals-<ns>.bin); empty when the sweep made none, and in the state
	// dir of an ibdoctor before they were kept. Apart from the verdicts:
	// a gate reads it only for a switch whose table changed since the
	// sweep, where decoding it in the verdicts' JSON would cost every
	// gate (docs/architecture.md).
	TotalsFile string `json:"totals_file,omitempty"`
	// Counters are the last sample of every port read, keyed
	// "0x<node guid>/<port>", when no gate.idx holds them (v1, or a
	// fabric gate.idx cannot lay out).
	Counters map[string]PortCounters `json:"counters,omitempty"`
	// Unanswered are the switch ports whose far end did not answer the
	// sweep's NodeInfo (its fabric's Unreachable entries that have a
	// port): a gate built from gate.idx, which keeps no Unreachable
	// list, tells such a port from one the sweep saw without a cable
	// (trial B8: "run 'ibdoctor sweep'" for a dead HCA). Absent in a
	// snapshot from before it was kept.
	Unanswered []FarEnd `json:"unanswered,omitempty"`

	fab  *fabric.Fabric
	ctrs *Index // IndexFile, opened by Load
	// readings are the counters New was given, until saved or asked for.
	readings checks.Counters
	// saved are the readings as Save encoded them into gate.idx, which
	// SavedCounters answers from once the readings are let go of.
	saved *ctrEnc
	file  *os.File       // the fabric file, opened by Load, until decoded
	idx   *Index         // gate.idx, when opened by LoadForGate
	sub   *fabric.Fabric // the part of it FabricFor built
	// whole: sub is the whole fabric (Widen)
	whole bool
	// verdicts are the sweep's fabric-wide verdicts (VerdictsName), nil
	// when not known.
	verdicts *checks.FabricVerdicts
	// hcas is the census file's summary, read by LoadForGate.
	hcas *checks.HCASummary
	// totals is the TotalsFile LoadForGate opened, until PortTotals
	// reads it or Close.
	totals *os.File
	dir    string // where it was loaded from
	// baselineSrc is the fabric file Save wrote when it is
	// baseline.json.gz's bytes (BaselineSource).
	baselineSrc string
	// ahead is the fabric file written before Save (WriteAhead).
	ahead *FabricAhead
	// beforeRename, when set (by a test), is called before each of
	// Save's renames with its count from 1; an error stops Save there as
	// a kill would, leaving what was staged and renamed so far.
	beforeRename func(n int) error
}

// FarEnd is a port whose far end did not answer the sweep's NodeInfo.
type FarEnd struct {
	Path     string `json:"path"`
	FromGUID string `json:"from_guid"`
	FromPort uint8  `json:"from_port"`
	Reason   string `json:"reason"`
}

// farEnds lists f's unanswered NodeInfo reads behind a known port.
func farEnds(f *fabric.Fabric) []FarEnd {
	var out []FarEnd
	for _, u := range f.Unreachable {
		if u.What == "NodeInfo" && u.FromGUID != 0 {
			out = append(out, FarEnd{Path: u.Path.String(), FromGUID: fmt.Sprintf("0x%016x", u.FromGUID), FromPort: u.FromPort, Reason: u.Reason})
		}
	}
	return out
}

// unansweredIn gives the Unanswered entries behind a port of sub, as
// the Unreachable entries the sweep's fabric had (a malformed entry, of
// a hand-edited file, is left out: it only words a reason).
func (s *Snapshot) unansweredIn(sub *fabric.Fabric) []fabric.Unreachable {
	var out []fabric.Unreachable
	for _, u := range s.Unanswered {
		g, err := strconv.ParseUint(strings.TrimPrefix(u.FromGUID, "0x"), 16, 64)
		if err != nil || sub.NodeByGUID(g) == nil {
			continue
		}
		p, err := mad.ParsePath(u.Path)
		if err != nil {
			continue
		}
		out = append(out, fabric.Unreachable{Path: p, FromGUID: g, FromPort: u.FromPort, What: "NodeInfo", Reason: u.Reason})
	}
	return out
}

// PortCounters is one port's saved counters.
type PortCounters struct {
	Errors    map[string]uint64 `json:"errors"`
	Saturated []string          `json:"saturated,omitempty"`
	XmitWait  *uint64           `json:"xmit_wait,omitempty"`
	// From is the attribute the error counters were read from
	// ("PortCounters": 16/8/4-bit fields, or "PortCountersExtended": 64
	// bits); "" in snapshots of an ibdoctor before it was kept. A gate
	// computes no growth between readings of different attributes.
	From string `json:"from,omitempty"`
	// ReadAt is when the sweep read the port: the request of its reading
	// (the device read its counters after it), else its answer. A later
	// sweep or a gate times the port's growth from it to its own reading
	// of the port, not from the counter passes' starts (a port read late
	// in a long pass has its own span). Zero in snapshots from before it
	// was kept: the passes' starts stand for it.
	ReadAt time.Time `json:"read_at,omitzero"`
}

// Attribute names of PortCounters.From.
const (
	FromPortCounters         = "PortCounters"
	FromPortCountersExtended = "PortCountersExtended"
)

// Key names a port in Counters.
func Key(p *fabric.Port) string { return fmt.Sprintf("0x%016x/%d", p.Node.GUID, p.Num) }

// New builds a snapshot of a fabric and (optionally) its counters.
func New(f *fabric.Fabric, c checks.Counters, taken time.Time, source, version string, complete bool) (*Snapshot, error) {
	// The fabric is encoded when saved, streamed into its file: a gate
	// that sweeps without a state dir never writes it, and a 49k-node
	// fabric's document (hundreds of MB with its tables) is never whole
	// in memory.
	// The counters too are encoded when saved, from the readings (into
	// gate.idx): a map of every port's counters is built only if asked
	// for (SavedCounters on an unsaved snapshot, or a fabric gate.idx
	// cannot hold).
	s := &Snapshot{Schema: Schema, TakenAt: taken.UTC(), Source: source, Version: version, Complete: complete, fab: f, readings: c, Unanswered: farEnds(f)}
	if cs, ok := c.(interface{ CountersStarted() time.Time }); ok {
		if at := cs.CountersStarted(); !at.IsZero() {
			s.CountersAt = at.UTC()
		}
	}
	return s, nil
}

// CountersRead is when the saved counters were read: the counter pass's
// start, or the sweep's for a snapshot that did not record it.
func (s *Snapshot) CountersRead() time.Time {
	if !s.CountersAt.IsZero() {
		return s.CountersAt
	}
	return s.TakenAt
}

// portCountersOf is what a snapshot keeps of one port's reading.
func portCountersOf(r checks.PortReading) PortCounters {
	pc := PortCounters{Errors: make(map[string]uint64, len(r.Errors)), ReadAt: r.ReadSent}
	if pc.ReadAt.IsZero() {
		pc.ReadAt = r.ReadAt
	}
	for _, e := range r.Errors {
		// Every error counter of a reading comes from one attribute
		// (perf: the widest the PMA fills in); 64 bits only from the
		// extended one.
		pc.From = FromPortCounters
		if e.Bits == 64 {
			pc.From = FromPortCountersExtended
		}
		pc.Errors[e.Name] = e.Value
		if e.Saturated {
			pc.Saturated = append(pc.Saturated, e.Name)
		}
	}
	if r.XmitWait != nil {
		v := r.XmitWait.Value
		pc.XmitWait = &v
		if r.XmitWait.Saturated {
			pc.Saturated = append(pc.Saturated, xmitWaitName)
		}
		if pc.From == "" {
			// Read from the same attribute as the error counters.
			pc.From = FromPortCounters
			if r.XmitWait.Bits == 64 {
				pc.From = FromPortCountersExtended
			}
		}
	}
	return pc
}

// countersMap fills Counters from the readings New was given, once.
func (s *Snapshot) countersMap() map[string]PortCounters {
	if s.Counters == nil && s.readings != nil {
		s.Counters = make(map[string]PortCounters)
		s.readings.Ports(func(r checks.PortReading) { s.Counters[Key(r.Port)] = portCountersOf(r) })
	}
	return s.Counters
}

// FabricModel decodes (once) and returns the saved fabric.
func (s *Snapshot) FabricModel() (*fabric.Fabric, error) {
	if s.fab != nil {
		return s.fab, nil
	}
	if s.idx != nil {
		return nil, fmt.Errorf("snapshot: opened from %s, which holds only what a gate asks for (FabricFor)", IndexName)
	}
	if s.file == nil {
		return nil, fmt.Errorf("snapshot: the fabric file %s was not opened (run 'ibdoctor sweep' again)", s.FabricFile)
	}
	var r io.Reader = s.file
	if filepath.Ext(s.FabricFile) == ".gz" {
		z, err := gzip.NewReader(s.file)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("snapshot: reading the fabric in %s: %w (run 'ibdoctor sweep' again)", s.FabricFile, err)
		}
		r = z
	}
	// Decoded as it is read, never whole in memory (see LoadBaseline).
	rr := &readErr{r: r}
	f, err := fabric.ReadJSON(rr)
	s.closeFabric()
	if rr.err != nil {
		return nil, fmt.Errorf("snapshot: reading the fabric in %s: %w (run 'ibdoctor sweep' again)", filepath.Join(s.dir, s.FabricFile), rr.err)
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot: decoding the fabric in %s: %w", s.FabricFile, err)
	}
	if s.ctrs != nil {
		if err := s.ctrs.FillLFTs(f); err != nil {
			return nil, fmt.Errorf("snapshot: the forwarding tables in %s: %w (run 'ibdoctor sweep' again)", s.IndexFile, err)
		}
	}
	s.fab = f
	return f, nil
}

// Close lets go of the fabric file Load opened, if it was not decoded,
// and of the gate index LoadForGate mapped.
func (s *Snapshot) Close() error {
	err := s.closeFabric()
	if s.idx != nil {
		err = errors.Join(err, s.idx.Close())
		s.idx = nil
	}
	if s.ctrs != nil {
		err = errors.Join(err, s.ctrs.Close())
		s.ctrs = nil
	}
	if s.totals != nil {
		err = errors.Join(err, s.totals.Close())
		s.totals = nil
	}
	return err
}

func (s *Snapshot) closeFabric() error {
	if s.file == nil {
		return nil
	}
	err := s.file.Close()
	s.file = nil
	return err
}

// LoadForGate opens the state a gate reads: gate.idx when the state dir
// has one (only the records a job needs are read), else snapshot.json;
// with the fabric-wide verdicts of the same sweep.
func LoadForGate(dir string) (*Snapshot, error) {
	path := filepath.Join(dir, FileName)
	var last error
	var first, data []byte
	for try := range loadTries {
		// snapshot.json is the snapshot's entry point: it names its
		// gate.idx and verdicts, which a newer sweep removes only after
		// renaming its own snapshot.json (then this reads again).
		var doc *Snapshot
		var err error
		doc, data, err = readDoc(path)
		if errors.Is(err, ErrNone) {
			return Load(dir)
		}
		if err == nil && doc.IndexFile == "" {
			return Load(dir)
		}
		if try == 0 {
			first = data
		}
		var x *Index
		if err == nil {
			x, err = openIndexFile(filepath.Join(dir, doc.IndexFile))
			if errors.Is(err, ErrNone) {
				err = missingFile(doc.IndexFile)
			} else if err == nil && !doc.TakenAt.Equal(x.TakenAt) {
				x.Close()
				err = otherSweep(doc.IndexFile, x.TakenAt, doc.TakenAt)
			}
		}
		if err == nil {
			var v *checks.FabricVerdicts
			var vf *os.File
			if vf, err = doc.openVerdicts(dir); err == nil && vf != nil {
				v, err = decodeVerdicts(vf, x.TakenAt)
			}
			var hcas *checks.HCASummary
			if err == nil && doc.CensusFile != "" {
				hcas, err = readCensus(dir, doc.CensusFile, x.TakenAt)
			}
			var tf *os.File
			if err == nil {
				tf, err = doc.openTotals(dir)
			}
			if err == nil {
				return &Snapshot{Schema: Schema, TakenAt: x.TakenAt, CountersAt: doc.CountersAt, Source: x.Source, Complete: x.Complete, IndexFile: doc.IndexFile, VerdictsFile: doc.VerdictsFile, CensusFile: doc.CensusFile, Unanswered: doc.Unanswered, TotalsFile: doc.TotalsFile, idx: x, dir: dir, verdicts: v, hcas: hcas, totals: tf}, nil
			}
			x.Close()
		}
		if !errors.Is(err, errFabricGone) {
			return nil, err
		}
		if unlock, ok := quiet(dir); ok {
			// No sweep is renaming: Load says what the state is now.
			unlock()
			return Load(dir)
		}
		// A sweep replaced snapshot.json and removed the files of the
		// one read.
		last = err
		time.Sleep(time.Duration(min(try+1, 8)) * 25 * time.Millisecond)
	}
	return nil, gaveUp(path, last, first, data)
}

// otherSweep says gate.idx and snapshot.json are of two sweeps.
func otherSweep(name string, idx, doc time.Time) error {
	return goneError{fmt.Sprintf("%s is of the sweep taken at %s, %s of the one at %s", name, idx.UTC().Format(time.RFC3339Nano), FileName, doc.UTC().Format(time.RFC3339Nano))}
}

// gaveUp is Load's error once snapshot.json kept naming a file that is
// gone or of another sweep: when snapshot.json stayed the same through
// every try no sweep was replacing it, and the state is broken, not busy.
func gaveUp(path string, last error, first, final []byte) error {
	if bytes.Equal(first, final) {
		return fmt.Errorf("snapshot %s: %v (no sweep replaced the snapshot while it was read): run 'ibdoctor sweep' again", path, last)
	}
	return fmt.Errorf("snapshot %s: %w (sweeps replaced it %d times while it was read)", path, last, loadTries)
}

// VerdictsName is the file beside snapshot.json holding the sweep's
// fabric-wide verdicts (checks.FabricVerdicts, JSON), which a gate's part
// of the fabric cannot judge.
const VerdictsName = "verdicts.json"

// maxVerdicts bounds the verdicts file a gate reads (a few findings per
// switch at most).
const maxVerdicts = 64 << 20

// openVerdicts opens the verdicts file of the snapshot s (read from
// snapshot.json in dir); nil, nil when it has none. A snapshot of an
// ibdoctor before the files were named by sweep has them in the
// fixed-name VerdictsName, of its sweep or an older one (decodeVerdicts
// tells).
func (s *Snapshot) openVerdicts(dir string) (*os.File, error) {
	name := s.VerdictsFile
	if name == "" {
		if s.IndexFile != "" && s.IndexFile != IndexName {
			return nil, nil
		}
		name = VerdictsName
	}
	fh, err := os.Open(filepath.Join(dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		if s.VerdictsFile != "" {
			return nil, missingFile(s.VerdictsFile)
		}
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	return fh, nil
}

// decodeVerdicts reads the verdicts file fh of the sweep taken at taken,
// which it closes: nil when they are an older sweep's (the fixed-name
// file of an older ibdoctor's state dir), errFabricGone when a newer's.
func decodeVerdicts(fh *os.File, taken time.Time) (*checks.FabricVerdicts, error) {
	defer fh.Close()
	path := fh.Name()
	data, err := io.ReadAll(io.LimitReader(fh, maxVerdicts+1))
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	if len(data) > maxVerdicts {
		return nil, fmt.Errorf("snapshot: %s is over %d MB: run 'ibdoctor sweep' again", path, maxVerdicts>>20)
	}
	if err := checkJSON(data); err != nil {
		return nil, fmt.Errorf("snapshot: %s %v: run 'ibdoctor sweep' again", path, err)
	}
	var v checks.FabricVerdicts
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("snapshot: %s is not valid JSON (%v): run 'ibdoctor sweep' again", path, err)
	}
	if v.Taken.After(taken) {
		return nil, goneError{fmt.Sprintf("%s is of a sweep after %s", filepath.Base(path), taken.UTC().Format(time.RFC3339))}
	}
	if !v.Taken.Equal(taken) {
		return nil, nil
	}
	return &v, nil
}

// SetFabricVerdicts gives the snapshot the whole fabric's verdicts of
// the checks a gate cannot judge on its part (checks.FabricWide); Save
// keeps them. Nil: they did not run.
func (s *Snapshot) SetFabricVerdicts(v *checks.FabricVerdicts) { s.verdicts = v }

// WriteAhead gives Save the fabric file a WriteFabricAhead wrote for
// this snapshot's sweep, to publish instead of writing it; Save aborts it
// when it was written for another layout and writes the file itself.
func (s *Snapshot) WriteAhead(a *FabricAhead) { s.ahead = a }

// FabricVerdicts are the sweep's fabric-wide verdicts, nil when the
// sweep did not make them.
func (s *Snapshot) FabricVerdicts() *checks.FabricVerdicts { return s.verdicts }

// FabricFor returns the fabric a gate for hosts looks at: from gate.idx
// the hosts, the switches on the routes among them and the neighbours of
// those (Index.SubFabric), and the nodes also names by GUID with their
// neighbours; from snapshot.json the whole fabric.
func (s *Snapshot) FabricFor(hosts []string, names fabric.NodeNameMap, also ...uint64) (*fabric.Fabric, error) {
	if s.idx == nil {
		return s.FabricModel()
	}
	if s.sub != nil {
		return s.sub, nil
	}
	var extra []uint32
	for _, g := range also {
		if i, ok := s.idx.nodeByGUID(g); ok {
			extra = append(extra, i)
		}
	}
	f, err := s.idx.SubFabric(s.idx.Resolve(hosts, names), extra...)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w (run 'ibdoctor sweep' again)", err)
	}
	f.Unreachable = s.unansweredIn(f)
	s.sub = f
	return f, nil
}

// WalkStopped reports whether the snapshot's sweep stopped its walk at a
// node that did not answer NodeInfo, as gate.idx records it (FabricFor's
// part of the fabric carries only the Unanswered entries behind its
// ports); without gate.idx the fabric file's Unreachable says so.
func (s *Snapshot) WalkStopped() bool { return s != nil && s.idx != nil && s.idx.WalkStopped }

// Partial reports whether FabricFor's fabric is a part of the sweep's
// (the job's hosts, the switches on their routes and their neighbours),
// not the whole fabric.
func (s *Snapshot) Partial() bool { return s.idx != nil && s.sub != nil && !s.whole }

// Widen is for a gate whose live routes left the part of the fabric
// FabricFor built from gate.idx (the SM moved a route further than one
// switch away from the snapshot's routes): when a port among ports has
// no peer there but had one in the sweep, FabricFor's fabric becomes the
// whole one and Widen reports true, so the gate starts again on it.
func (s *Snapshot) Widen(ports map[*fabric.Port]bool) bool {
	if s.idx == nil || s.sub == nil || s.whole {
		return false
	}
	for p := range ports {
		if p.Remote == nil && p.Num != 0 && s.idx.hasPeer(p.Node.GUID, p.Num) {
			f, err := s.idx.Whole()
			if err != nil {
				return false // the part stays; what it lacks is reported unread
			}
			f.Unreachable = s.unansweredIn(f)
			s.sub, s.whole = f, true
			return true
		}
	}
	return false
}

// SavedCounters returns the counters the sweep saved for p.
func (s *Snapshot) SavedCounters(p *fabric.Port) (PortCounters, bool) {
	if s.idx != nil {
		return s.idx.SavedCounters(p.Node.GUID, p.Num)
	}
	if s.ctrs != nil {
		return s.ctrs.SavedCounters(p.Node.GUID, p.Num)
	}
	if s.saved != nil {
		return s.saved.counters(s.fab, p)
	}
	c, ok := s.countersMap()[Key(p)]
	return c, ok
}

// SavedInto is SavedCounters decoded into v, whose storage is reused
// from call to call: a walk of every port allocates nothing per port.
// False when the sweep saved no error counters for p.
func (s *Snapshot) SavedInto(p *fabric.Port, v *Saved) bool {
	switch {
	case s.idx != nil:
		return s.idx.savedInto(p.Node.GUID, p.Num, v)
	case s.ctrs != nil:
		return s.ctrs.savedInto(p.Node.GUID, p.Num, v)
	case s.saved != nil:
		off, ok := s.saved.offset(s.fab, p)
		return ok && v.decode(s.saved, s.saved.sets, s.saved.vals, off, s.saved.base)
	}
	c, ok := s.countersMap()[Key(p)]
	if !ok || c.Errors == nil {
		return false
	}
	v.fill(c)
	return true
}

// ReleasePages gives back the resident pages of the snapshot's gate.idx
// that SavedInto (or any read) mapped in: a later sweep pairs every
// port's reading with them, and each page read counted in its peak RSS
// while the index stayed mapped (issue 13). Reads after it map the pages
// again.
func (s *Snapshot) ReleasePages() {
	s.idx.releasePages()
	s.ctrs.releasePages()
}

// Age is how old the snapshot is at now.
func (s *Snapshot) Age(now time.Time) time.Duration { return now.Sub(s.TakenAt) }

// Save writes the snapshot into dir (created if needed): first the fabric
// under a new name, gzip-compressed, then gate.idx (the fabric laid out
// for a gate, with its tables and the saved counters), then snapshot.json
// pointing at both, each atomically; then older fabric files are removed. The caller
// holds dir's Lock, so no other sweep is writing a fabric file that this
// one would remove; a reader that loaded the old snapshot.json holds its
// fabric file open (see Load), so removing it does not pull it away from
// under the reader.
func (s *Snapshot) Save(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("snapshot: %w", err)
	}
	f, err := s.FabricModel()
	if err != nil {
		return "", err
	}
	s.Schema = Schema
	// The gate's index of the same sweep, which also keeps the counters
	// and the forwarding tables (each distinct 64-entry block once). A
	// fabric it cannot hold (a port with over 32 counters) leaves no
	// index: the counters then stay in snapshot.json, the tables in the
	// fabric file, and the gate reads those, slower but the same answer,
	// never an older index.
	// The counters are encoded first, and the readings let go of (the
	// snapshot answers SavedCounters from their encoding), so neither
	// they nor the index are held while the fabric file is written; the
	// rest of the index is laid out after it.
	var ctrs *ctrEnc
	if s.readings != nil && s.Counters == nil {
		ctrs, err = readingsEnc(s.readings, s.TakenAt)
	} else {
		ctrs, err = countersEnc(f, s.Counters, s.TakenAt)
	}
	if err == nil {
		err = indexable(f)
	}
	s.IndexFile = ""
	if err == nil {
		s.IndexFile = IndexName
		if s.readings != nil {
			s.saved, s.readings = ctrs, nil
		}
	}
	// The fabric JSON with its tables is 5.5 KB per node on FatTree8k,
	// 3 KB without; gzip makes that about 2% (names, GUIDs and masks
	// repeat), which with gate.idx keeps the state under 1 KB per node.
	// It is written first, under a name of its own, so readers of the
	// current snapshot.json are not disturbed.
	s.FabricFile = fabricFileName(s.TakenAt)
	// Every file is staged (written and synced under a temporary name)
	// before any is renamed, so a full disk fails the sweep with the
	// state as it was; and every file but snapshot.json has a name of
	// this sweep's own, so until snapshot.json is renamed over the old
	// one, the old snapshot.json still names its own files, whole. Only
	// that last rename publishes the sweep (B3: a sweep killed between
	// renames left a new verdicts.json beside the old gate.idx, and the
	// previous snapshot was unusable).
	var staged []*outfile.Staged
	abort := func() {
		for _, st := range staged {
			st.Abort()
		}
	}
	if a := s.ahead; a != nil && a.dir == dir && a.name == s.FabricFile && a.omitLFT == (s.IndexFile != "") {
		// Written while the checks ran (WriteFabricAhead): renamed
		// with the rest, in the place the file is written in otherwise.
		s.ahead = nil
		if err := a.Wait(); err != nil {
			a.Abort()
			return "", err
		}
		staged = append(staged, a.staged)
	} else {
		// Not written ahead, or written for another layout (counters
		// gate.idx cannot hold want the tables in the file).
		s.ahead.Abort()
		s.ahead = nil
		st, err := outfile.StageHere(filepath.Join(dir, s.FabricFile), func(w io.Writer) error {
			return writeFabricGz(w, f, fabric.MarshalOptions{OmitLFT: s.IndexFile != ""})
		})
		if err != nil {
			return "", fmt.Errorf("snapshot: %w", err)
		}
		staged = append(staged, st)
	}
	if s.IndexFile != "" {
		// indexable said it can be laid out: an error now is a defect,
		// and the old snapshot.json stays.
		idx, err := encodeIndex(f, ctrs, s.TakenAt, s.Source, s.Complete, true)
		if err != nil {
			abort()
			return "", fmt.Errorf("snapshot: %w", err)
		}
		s.IndexFile = indexFileName(s.TakenAt)
		st, err := outfile.StageHere(filepath.Join(dir, s.IndexFile), idx.writeTo)
		if err != nil {
			abort()
			return "", fmt.Errorf("snapshot: %w", err)
		}
		staged = append(staged, st)
	}
	ctrs = nil
	s.CensusFile = ""
	if s.IndexFile != "" {
		// The census's summary, for the gates that read gate.idx.
		data, err := encodeCensus(f, s.TakenAt)
		if err != nil {
			abort()
			return "", fmt.Errorf("snapshot: %w", err)
		}
		if data != nil {
			s.CensusFile = censusFileName(s.TakenAt)
			st, err := stageBytes(filepath.Join(dir, s.CensusFile), data)
			if err != nil {
				abort()
				return "", fmt.Errorf("snapshot: %w", err)
			}
			staged = append(staged, st)
		}
	}
	s.VerdictsFile = ""
	if s.verdicts != nil {
		v := *s.verdicts
		v.Taken = s.TakenAt
		data, err := json.Marshal(&v)
		if err != nil {
			abort()
			return "", fmt.Errorf("snapshot: %w", err)
		}
		data = sealJSON(data)
		s.VerdictsFile = verdictsFileName(s.TakenAt)
		st, err := stageBytes(filepath.Join(dir, s.VerdictsFile), data)
		if err != nil {
			abort()
			return "", fmt.Errorf("snapshot: %w", err)
		}
		staged = append(staged, st)
	}
	s.TotalsFile = ""
	if s.verdicts != nil && s.verdicts.PortTotals != nil {
		s.TotalsFile = totalsFileName(s.TakenAt)
		st, err := outfile.StageHere(filepath.Join(dir, s.TotalsFile), func(w io.Writer) error {
			return writeTotals(w, s.verdicts.PortTotals, s.TakenAt)
		})
		if err != nil {
			abort()
			return "", fmt.Errorf("snapshot: %w", err)
		}
		staged = append(staged, st)
	}
	doc := *s
	if doc.IndexFile != "" {
		doc.Counters = nil
	} else {
		doc.Counters = s.countersMap()
	}
	data, err := json.Marshal(&doc)
	if err != nil {
		abort()
		return "", fmt.Errorf("snapshot: %w", err)
	}
	data = sealJSON(data)
	path := filepath.Join(dir, FileName)
	st, err := stageBytes(path, data)
	if err != nil {
		abort()
		return "", err
	}
	staged = append(staged, st)
	for n, st := range staged {
		if s.beforeRename != nil {
			if err := s.beforeRename(n + 1); err != nil {
				return "", err
			}
		}
		if err := st.Commit(); err != nil {
			// Before snapshot.json nothing the old one names was
			// touched: the files renamed so far are this sweep's own,
			// removed by the next sweep's clean-up.
			for _, rest := range staged[n+1:] {
				rest.Abort()
			}
			if n == len(staged)-1 {
				return "", err
			}
			return "", fmt.Errorf("snapshot: %w", err)
		}
	}
	// The files of older sweeps, and the fixed-name gate.idx and
	// verdicts.json of an ibdoctor before the names were per sweep;
	// fabric-*.json are v1's fabric files.
	keep := map[string]bool{s.FabricFile: true, s.IndexFile: true, s.VerdictsFile: true, s.CensusFile: true, s.TotalsFile: true}
	for _, pat := range []string{"fabric-*.json*", "gate-*.idx", "verdicts-*.json", "census-*.json", "totals-*.bin", IndexName, VerdictsName} {
		old, _ := filepath.Glob(filepath.Join(dir, pat))
		for _, o := range old {
			if !keep[filepath.Base(o)] {
				os.Remove(o)
			}
		}
	}
	removeStaleTemps(dir)
	s.dir = dir
	s.baselineSrc = ""
	if s.IndexFile != "" {
		s.baselineSrc = s.FabricFile
	}
	return path, nil
}

// indexFileName and verdictsFileName name the gate.idx and the verdicts
// of the sweep taken at taken, as fabricFileName its fabric file.
func indexFileName(taken time.Time) string {
	return fmt.Sprintf("gate-%d.idx", taken.UnixNano())
}

func verdictsFileName(taken time.Time) string {
	return fmt.Sprintf("verdicts-%d.json", taken.UnixNano())
}

func totalsFileName(taken time.Time) string {
	return fmt.Sprintf("totals-%d.bin", taken.UnixNano())
}

// isIndexFile says whether name (a base name) is a gate.idx of a sweep:
// the fixed name of older state dirs, or one named by its sweep.
func isIndexFile(name string) bool {
	if name == IndexName {
		return true
	}
	ok, _ := filepath.Match("gate-*.idx", name)
	return ok
}

// removeStaleTemps removes the temporaries of state files (outfile's
// ".NAME.tmp-*") that a killed sweep left in dir: a SIGKILL skips the
// clean-up, and the staged fabric file alone is megabytes. Save runs it
// holding dir's lock, after its own files are renamed, so any such
// temporary is a dead writer's. Only regular files: a symlink or folder
// of that name is not one of ours.
func removeStaleTemps(dir string) {
	tmps, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*"))
	for _, t := range tmps {
		name := filepath.Base(t)[1:]
		i := strings.LastIndex(name, ".tmp-")
		if i <= 0 || !IsStateFile(name[:i]) {
			continue
		}
		if st, err := os.Lstat(t); err == nil && st.Mode().IsRegular() {
			os.Remove(t)
		}
	}
}

// ErrNone is returned by Load when there is no snapshot yet.
var ErrNone = errors.New("no snapshot")

// loadTries bounds how often Load re-reads snapshot.json when the fabric
// file it names was removed by a newer sweep in between, or gate.idx is
// already a newer sweep's (each try waits a little longer: about 3 s in
// all, for a sweep to rename its snapshot.json). Only while a sweep holds
// the state dir's lock: with it free, one more read decides (quiet).
const loadTries = 20

// Load reads the snapshot in dir (or the file dir names) and opens the
// fabric file it names, keeping it open until FabricModel or Close: a
// sweep that replaces the snapshot meanwhile removes the file's name, not
// the file this reader holds. When the file is already gone, a newer
// snapshot.json names its successor, so Load reads that instead.
func Load(dir string) (*Snapshot, error) {
	path := dir
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		path = filepath.Join(dir, FileName)
	}
	var last error
	var first, data []byte
	for try := range loadTries {
		var s *Snapshot
		var err error
		s, data, err = loadOnce(path)
		if err == nil || !errors.Is(err, errFabricGone) {
			return s, err
		}
		if try == 0 {
			first = data
		}
		last = err
		if unlock, ok := quiet(filepath.Dir(path)); ok {
			// No sweep is between its renames, and none starts one
			// while this read holds the lock: what it finds is the
			// state, not a moment of a save; no waiting for a file that
			// is simply missing. The lock is held only while the files
			// are opened: a sweep replaces them by rename, so what is
			// read from them after is this set, and a sweep starting
			// meanwhile is not kept waiting (reviewer R9).
			var vf *os.File
			s, vf, data, err = openOnce(path)
			unlock()
			if err == nil {
				if err = s.readVerdictsFrom(vf); err != nil {
					s = nil
				}
			}
			if err == nil || !errors.Is(err, errFabricGone) {
				return s, err
			}
			return nil, fmt.Errorf("snapshot %s: %v (no sweep replaced the snapshot while it was read, and none holds %s): run 'ibdoctor sweep' again", path, err, LockName)
		}
		// A sweep is between its gate.idx and its snapshot.json.
		time.Sleep(time.Duration(min(try+1, 8)) * 25 * time.Millisecond)
	}
	return nil, gaveUp(path, last, first, data)
}

// errFabricGone marks a file snapshot.json names that is missing or of
// another sweep: while a sweep replaces the state, the next try succeeds.
var errFabricGone = errors.New("a file of the snapshot is missing or of another sweep")

// goneError is an errFabricGone saying which file and how.
type goneError struct{ msg string }

func (e goneError) Error() string        { return e.msg }
func (e goneError) Is(target error) bool { return target == errFabricGone }

// missingFile says snapshot.json names a file that is not there.
func missingFile(name string) error {
	return goneError{fmt.Sprintf("%s names %s, which is missing", FileName, name)}
}

// readDoc reads and checks snapshot.json at path, the counters and
// fabric it names left unopened; data is what was read.
func readDoc(path string) (*Snapshot, []byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%w at %s: run 'ibdoctor sweep' first (e.g. from cron)", ErrNone, path)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("snapshot: %w", err)
	}
	if err := checkJSON(data); err != nil {
		return nil, data, fmt.Errorf("snapshot %s %v: run 'ibdoctor sweep' again", path, err)
	}
	var s Snapshot
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, data, fmt.Errorf("snapshot %s is not valid JSON (truncated?): %w: run 'ibdoctor sweep' again", path, err)
	}
	if s.Schema != Schema && s.Schema != SchemaV1 {
		return nil, data, fmt.Errorf("snapshot %s has schema %q, this ibdoctor reads %q and %q: run 'ibdoctor sweep' again", path, s.Schema, Schema, SchemaV1)
	}
	if s.IndexFile != "" && !isIndexFile(s.IndexFile) {
		return nil, data, fmt.Errorf("snapshot %s keeps its counters in %q, not %s or gate-<time>.idx beside it: run 'ibdoctor sweep' again", path, s.IndexFile, IndexName)
	}
	if ok, _ := filepath.Match("verdicts-*.json", s.VerdictsFile); s.VerdictsFile != "" && !ok {
		return nil, data, fmt.Errorf("snapshot %s keeps its verdicts in %q, not verdicts-<time>.json beside it: run 'ibdoctor sweep' again", path, s.VerdictsFile)
	}
	if ok, _ := filepath.Match("census-*.json", s.CensusFile); s.CensusFile != "" && !ok {
		return nil, data, fmt.Errorf("snapshot %s keeps its census in %q, not census-<time>.json beside it: run 'ibdoctor sweep' again", path, s.CensusFile)
	}
	if ok, _ := filepath.Match("totals-*.bin", s.TotalsFile); s.TotalsFile != "" && !ok {
		return nil, data, fmt.Errorf("snapshot %s keeps its per-port totals in %q, not totals-<time>.bin beside it: run 'ibdoctor sweep' again", path, s.TotalsFile)
	}
	if s.FabricFile == "" || filepath.Base(s.FabricFile) != s.FabricFile {
		return nil, data, fmt.Errorf("snapshot %s names no fabric file (or a path outside its folder): run 'ibdoctor sweep' again", path)
	}
	if s.TakenAt.IsZero() {
		return nil, data, fmt.Errorf("snapshot %s has no taken_at: run 'ibdoctor sweep' again", path)
	}
	return &s, data, nil
}

func loadOnce(path string) (*Snapshot, []byte, error) {
	s, vf, data, err := openOnce(path)
	if err == nil {
		err = s.readVerdictsFrom(vf)
	}
	if err != nil {
		return nil, data, err
	}
	return s, data, nil
}

// readVerdictsFrom reads the verdicts file openOnce opened (nil: none)
// as the snapshot's, closing it; on an error it closes the snapshot.
func (s *Snapshot) readVerdictsFrom(vf *os.File) error {
	if vf == nil {
		return nil
	}
	v, err := decodeVerdicts(vf, s.TakenAt)
	if err != nil {
		s.Close()
		return err
	}
	s.verdicts = v
	return nil
}

// openOnce reads snapshot.json at path (it names the other files) and
// opens the files of its sweep: the fabric file and gate.idx (mapped,
// its header checked), and the verdicts file (vf, nil when there is
// none), left unread. Nothing else is decoded, so a caller holding the
// state dir's lock for the set to be consistent holds it briefly.
func openOnce(path string) (_ *Snapshot, vf *os.File, _ []byte, _ error) {
	sp, data, err := readDoc(path)
	if err != nil {
		return nil, nil, data, err
	}
	s := *sp
	s.dir = filepath.Dir(path)
	s.file, err = os.Open(filepath.Join(s.dir, s.FabricFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, data, missingFile(s.FabricFile)
	}
	if err != nil {
		return nil, nil, data, fmt.Errorf("snapshot: %w", err)
	}
	if s.IndexFile != "" {
		// A sweep may have replaced gate.idx since snapshot.json was
		// read: its counters are then of a newer sweep, so read again.
		x, err := openIndexFile(filepath.Join(s.dir, s.IndexFile))
		if err == nil && !x.TakenAt.Equal(s.TakenAt) {
			x.Close()
			err = otherSweep(s.IndexFile, x.TakenAt, s.TakenAt)
		} else if err == nil {
			// What loads the whole snapshot reads most of the file
			// (every port's counters, the tables): checked whole now,
			// not found damaged half-way through a sweep's pairing.
			if err = x.CheckAll(); err != nil {
				x.Close()
			} else {
				x.releasePages() // read again as needed
			}
		} else if errors.Is(err, ErrNone) {
			err = missingFile(s.IndexFile)
		}
		if err != nil {
			s.Close()
			return nil, nil, data, err
		}
		s.ctrs = x
	}
	if vf, err = s.openVerdicts(s.dir); err != nil {
		s.Close()
		return nil, nil, data, err
	}
	return &s, vf, data, nil
}

// futureSkew is how far ahead of this host's clock a snapshot may be
// dated (clocks of the sweep host and the gate host differ a little).
const futureSkew = time.Minute

// Fresh says why the snapshot may not be used at now, or nil: older than
// maxAge, or dated in the future — a clock that was wrong, or a snapshot
// copied from elsewhere, would otherwise never expire.
func (s *Snapshot) Fresh(now time.Time, maxAge time.Duration) error {
	age := s.Age(now)
	if age < -futureSkew {
		return fmt.Errorf("is dated %s, %v in the future (a clock was wrong when it was taken?)", s.TakenAt.Format(time.RFC3339), words.Span(-age))
	}
	if age > maxAge {
		return fmt.Errorf("is %v old (over --max-age %v)", words.Span(age), maxAge)
	}
	return nil
}

// HCACensus lists the host adapters of the whole snapshot (not only the
// part FabricFor built): what topology.missing-hca compares a gate's
// hosts with.
func (s *Snapshot) HCACensus() ([]checks.HostHCA, error) {
	if s.idx != nil {
		return s.idx.HCACensus(), nil
	}
	f, err := s.FabricModel()
	if err != nil {
		return nil, err
	}
	return checks.HCACensus(f), nil
}

// Node returns the description and directed route (from the sweep's
// port; nil when unknown) the snapshot has for the node with guid.
func (s *Snapshot) Node(guid uint64) (desc string, path mad.Path, ok bool) {
	switch {
	case s.idx != nil:
		return s.idx.nodeNamed(guid)
	case s.fab != nil:
		if n := s.fab.NodeByGUID(guid); n != nil {
			return n.Description, n.Path, true
		}
	}
	return "", nil, false
}

// Links returns the snapshot's whole fabric, from gate.idx without the
// forwarding tables (a new copy each call), else the fabric model.
func (s *Snapshot) Links() (*fabric.Fabric, error) {
	if s.idx != nil {
		return s.idx.Links()
	}
	return s.FabricModel()
}

// HasNode reports whether the snapshot's fabric holds a node with the
// GUID. known is false when only its fabric file could say (a snapshot
// without gate.idx, whose fabric is not decoded for that).
func (s *Snapshot) HasNode(guid uint64) (has, known bool) {
	switch {
	case s.idx != nil:
		_, ok := s.idx.nodeByGUID(guid)
		return ok, true
	case s.ctrs != nil:
		// Load's gate.idx (a sweep's previous snapshot)
		_, ok := s.ctrs.nodeByGUID(guid)
		return ok, true
	case s.fab != nil:
		return s.fab.NodeByGUID(guid) != nil, true
	}
	return false, false
}

// stageBytes stages a state file whose bytes are already encoded, beside path.
func stageBytes(path string, data []byte) (*outfile.Staged, error) {
	return outfile.StageHere(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
