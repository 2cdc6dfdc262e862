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
	Schema   string          `json:"schema"`
	TakenAt  time.Time       `json:"taken_at"`
	Source   string          `json:"source"`
	Version  string          `json:"ibdoctor_version"`
	Complete bool            `json:"complete"`
	Fabric   json.RawMessage `json:"fabric"`
	// Counters are the last sample of every port read, keyed
	// "0x<node guid>/<port>".
	Counters map[string]PortCounters `json:"counters,omitempty"`

	fab *fabric.Fabric
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
	s := &Snapshot{Schema: Schema, TakenAt: taken.UTC(), Source: source, Version: version, Complete: complete, Fabric: raw, fab: f}
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
	f, err := fabric.Unmarshal(s.Fabric)
	if err != nil {
		return nil, fmt.Errorf("snapshot: decoding the fabric: %w", err)
	}
	s.fab = f
	return f, nil
}

// Age is how old the snapshot is at now.
func (s *Snapshot) Age(now time.Time) time.Duration { return now.Sub(s.TakenAt) }

// Save writes the snapshot into dir atomically (dir is created).
func (s *Snapshot) Save(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("snapshot: %w", err)
	}
	data, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("snapshot: %w", err)
	}
	path := filepath.Join(dir, FileName)
	return path, report.WriteFileAtomic(path, data)
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
	if len(s.Fabric) == 0 {
		return nil, fmt.Errorf("snapshot %s holds no fabric", path)
	}
	return &s, nil
}
