package snapshot

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// TestSaveKeepsPortTotals: a sweep's per-port destination totals go into
// a file of their own (totals_file), staged and renamed with the rest,
// that LoadForGate opens and PortTotals reads only when asked; the next
// sweep removes the older one. A snapshot.json without totals_file (an
// ibdoctor before them) gives none, and no error.
func TestSaveKeepsPortTotals(t *testing.T) {
	f, err := topology.Routed(topology.FatTree2{Leaves: 4, Spines: 2, HostsPerLeaf: 4})
	if err != nil {
		t.Fatal(err)
	}
	v, err := checks.RunFabricWide(&checks.Snapshot{Fabric: f})
	if err != nil {
		t.Fatal(err)
	}
	if v.PortTotals == nil {
		t.Fatal("RunFabricWide made no totals")
	}
	dir := t.TempDir()
	save := func(taken time.Time) string {
		s, err := New(f, nil, taken, "test", "test", true)
		if err != nil {
			t.Fatal(err)
		}
		s.SetFabricVerdicts(v)
		if _, err := s.Save(dir); err != nil {
			t.Fatal(err)
		}
		if s.TotalsFile == "" {
			t.Fatal("no totals_file")
		}
		return s.TotalsFile
	}
	first := save(time.Unix(1e9, 0))
	second := save(time.Unix(1e9+60, 0))
	if _, err := os.Stat(filepath.Join(dir, first)); !os.IsNotExist(err) {
		t.Errorf("the older sweep's %s is still there (%v)", first, err)
	}
	s, err := LoadForGate(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.TotalsFile != second {
		t.Errorf("totals_file %q, want %q", s.TotalsFile, second)
	}
	got, err := s.PortTotals()
	if err != nil || got == nil {
		t.Fatalf("PortTotals: %v, %v", got, err)
	}
	if !bytes.Equal(got.LIDs, v.PortTotals.LIDs) || !bytes.Equal(got.Switches, v.PortTotals.Switches) {
		t.Errorf("read back %d+%d bytes, saved %d+%d", len(got.LIDs), len(got.Switches), len(v.PortTotals.LIDs), len(v.PortTotals.Switches))
	}
	s.Close()

	// An older ibdoctor's snapshot.json: no totals_file.
	path := filepath.Join(dir, FileName)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc, "totals_file")
	if data, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err = LoadForGate(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := s.PortTotals(); got != nil || err != nil {
		t.Errorf("older state: PortTotals %v, %v; want none", got, err)
	}
}

// FuzzDecodeTotals: any bytes decode or fail without a panic.
func FuzzDecodeTotals(f *testing.F) {
	f.Add([]byte(totalsMagic + "\x01\x02abc"))
	f.Add([]byte(totalsMagic + "\xff\xff\xff\xff\x0f"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if pt, err := decodeTotals(b); err == nil && len(pt.LIDs)+len(pt.Switches) > len(b) {
			t.Errorf("decoded more than given")
		}
	})
}
