// Package snapshot saves what a sweep read — the fabric with its
// forwarding tables and every port's counters — so the next sweep can
// compare against it and a gate can answer from it, re-reading live only
// the ports a job uses. The file is JSON (docs/schema-snapshot.md).
package snapshot

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/report"
)

// Schema identifies the snapshot file format.
const Schema = "ibdoctor.snapshot/v1"

// FileName is the snapshot's name inside the state directory.
const FileName = "snapshot.json"

// Snapshot is one saved sweep.
type Snapshot struct {
	Schema   string    `json:"schema"`
	TakenAt  time.Time `json:"taken_at"`
	Source   string    `json:"source"`
	Version  string    `json:"ibdoctor_version"`
	Complete bool      `json:"complete"`
	// FabricFile names the file beside snapshot.json that holds the
	// fabric (ibdoctor.fabric/v1 with LFTs). It is kept apart so that a
	// big fabric is parsed once, and only when needed.
	FabricFile string `json:"fabric_file"`
	// Counters are the last sample of every port read, keyed
	// "0x<node guid>/<port>".
	Counters map[string]PortCounters `json:"counters,omitempty"`

	fab *fabric.Fabric
	raw []byte // encoded fabric, until saved or decoded
	dir string // where it was loaded from
}

// PortCounters is one port's saved counters.
type PortCounters struct {
	Errors    map[string]uint64 `json:"errors"`
	Saturated []string          `json:"saturated,omitempty"`
	XmitWait  *uint64           `json:"xmit_wait,omitempty"`
}

// Key names a port in Counters.
func Key(p *fabric.Port) string { return fmt.Sprintf("0x%016x/%d", p.Node.GUID, p.Num) }

// New builds a snapshot of a fabric and (optionally) its counters.
func New(f *fabric.Fabric, c checks.Counters, taken time.Time, source, version string, complete bool) (*Snapshot, error) {
	raw, err := fabric.MarshalWith(f, fabric.MarshalOptions{})
	if err != nil {
		return nil, fmt.Errorf("snapshot: encoding the fabric: %w", err)
	}
	s := &Snapshot{Schema: Schema, TakenAt: taken.UTC(), Source: source, Version: version, Complete: complete, raw: raw, fab: f}
	if c != nil {
		s.Counters = make(map[string]PortCounters)
		c.Ports(func(r checks.PortReading) {
			pc := PortCounters{Errors: make(map[string]uint64, len(r.Errors))}
			for _, e := range r.Errors {
				pc.Errors[e.Name] = e.Value
				if e.Saturated {
					pc.Saturated = append(pc.Saturated, e.Name)
				}
			}
			if r.XmitWait != nil {
				v := r.XmitWait.Value
				pc.XmitWait = &v
			}
			s.Counters[Key(r.Port)] = pc
		})
	}
	return s, nil
}

// Fabric decodes (once) and returns the saved fabric.
func (s *Snapshot) FabricModel() (*fabric.Fabric, error) {
	if s.fab != nil {
		return s.fab, nil
	}
	data := s.raw
	if data == nil {
		path := filepath.Join(s.dir, s.FabricFile)
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return nil, fmt.Errorf("snapshot: reading the fabric: %w (run 'ibdoctor sweep' again)", err)
		}
	}
	f, err := fabric.Unmarshal(data)
	if err != nil {
		return nil, fmt.Errorf("snapshot: decoding the fabric in %s: %w", s.FabricFile, err)
	}
	s.fab, s.raw = f, nil
	return f, nil
}

// Age is how old the snapshot is at now.
func (s *Snapshot) Age(now time.Time) time.Duration { return now.Sub(s.TakenAt) }

// Save writes the snapshot into dir (created if needed): first the fabric
// under a new name, then snapshot.json pointing at it, both atomically,
// then older fabric files are removed. A reader sees the old snapshot or
// the new one, never a mix.
func (s *Snapshot) Save(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("snapshot: %w", err)
	}
	raw := s.raw
	if raw == nil {
		f, err := s.FabricModel()
		if err != nil {
			return "", err
		}
		if raw, err = fabric.MarshalWith(f, fabric.MarshalOptions{}); err != nil {
			return "", fmt.Errorf("snapshot: encoding the fabric: %w", err)
		}
	}
	s.FabricFile = fmt.Sprintf("fabric-%d.json", s.TakenAt.UnixNano())
	if err := report.WriteFileAtomic(filepath.Join(dir, s.FabricFile), raw); err != nil {
		return "", fmt.Errorf("snapshot: %w", err)
	}
	data, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("snapshot: %w", err)
	}
	path := filepath.Join(dir, FileName)
	if err := report.WriteFileAtomic(path, data); err != nil {
		return "", err
	}
	old, _ := filepath.Glob(filepath.Join(dir, "fabric-*.json"))
	for _, o := range old {
		if filepath.Base(o) != s.FabricFile {
			os.Remove(o)
		}
	}
	s.dir = dir
	return path, nil
}

// ErrNone is returned by Load when there is no snapshot yet.
var ErrNone = errors.New("no snapshot")

// Load reads the snapshot in dir (or the file dir names).
func Load(dir string) (*Snapshot, error) {
	path := dir
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		path = filepath.Join(dir, FileName)
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w at %s: run 'ibdoctor sweep' first (e.g. from cron)", ErrNone, path)
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	var s Snapshot
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("snapshot %s is not valid JSON (truncated?): %w", path, err)
	}
	if s.Schema != Schema {
		return nil, fmt.Errorf("snapshot %s has schema %q, this ibdoctor reads %q: run 'ibdoctor sweep' again", path, s.Schema, Schema)
	}
	if s.FabricFile == "" || filepath.Base(s.FabricFile) != s.FabricFile {
		return nil, fmt.Errorf("snapshot %s names no fabric file (or a path outside its folder): run 'ibdoctor sweep' again", path)
	}
	s.dir = filepath.Dir(path)
	return &s, nil
}
