package snapshot

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
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
	delete(doc, "crc32c") // an older ibdoctor's, without the checksum
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
	taken := time.Unix(1e9, 0)
	stamp := string(binary.LittleEndian.AppendUint64(nil, uint64(taken.UnixNano())))
	f.Add([]byte(totalsMagic + stamp + "\x01\x02abc"))
	f.Add([]byte(totalsMagic + stamp + "\xff\xff\xff\xff\x0f"))
	f.Add([]byte(totalsMagic + "\x00\x01"))
	f.Add([]byte(totalsMagicV1 + "\x01\x02abc"))
	f.Add([]byte(totalsMagicV2 + stamp + "\x01\x02abc"))
	var sealed bytes.Buffer
	writeTotals(&sealed, &checks.PortTotals{LIDs: []byte{2}, Switches: []byte("abc")}, taken)
	f.Add(sealed.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		if pt, err := decodeTotals(b, taken); err == nil && len(pt.LIDs)+len(pt.Switches) > len(b) {
			t.Errorf("decoded more than given")
		}
	})
}

// TestPortTotalsOfAnotherSweep (review R2): the totals file carries the
// sweep's taken_at, which must be snapshot.json's. A state dir put
// together by hand (another sweep's totals copied in under this one's
// name) gives no totals and an error naming the file, the two sweeps and
// the fix, never the other sweep's totals; so does a file in the format
// of an ibdoctor before the stamp (IBDTOT1), which cannot say whose it is.
func TestPortTotalsOfAnotherSweep(t *testing.T) {
	f, err := topology.Routed(topology.FatTree2{Leaves: 4, Spines: 2, HostsPerLeaf: 4})
	if err != nil {
		t.Fatal(err)
	}
	v, err := checks.RunFabricWide(&checks.Snapshot{Fabric: f})
	if err != nil {
		t.Fatal(err)
	}
	save := func(dir string, taken time.Time) string {
		s, err := New(f, nil, taken, "test", "test", true)
		if err != nil {
			t.Fatal(err)
		}
		s.SetFabricVerdicts(v)
		if _, err := s.Save(dir); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(dir, s.TotalsFile)
	}
	mine, other := t.TempDir(), t.TempDir()
	name := save(mine, time.Unix(1e9, 0))
	data, err := os.ReadFile(save(other, time.Unix(1e9+60, 0)))
	if err != nil {
		t.Fatal(err)
	}
	read := func() (*checks.PortTotals, error) {
		s, err := LoadForGate(mine)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		return s.PortTotals()
	}
	if got, err := read(); got == nil || err != nil {
		t.Fatalf("its own totals: %v, %v", got, err)
	}
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := read()
	if got != nil || err == nil || !strings.Contains(err.Error(), filepath.Base(name)) || !strings.Contains(err.Error(), "2001-09-09T01:47:40Z") || !strings.Contains(err.Error(), "2001-09-09T01:46:40Z") {
		t.Errorf("another sweep's totals: %v, %v; want an error naming %s and both sweeps", got, err, filepath.Base(name))
	}
	// The format before the stamp: the magic, then the LID set.
	old := append([]byte("IBDTOT1\n"), data[len(totalsMagic)+8:]...)
	if err := os.WriteFile(name, old, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err = read()
	if got != nil || err == nil || !strings.Contains(err.Error(), filepath.Base(name)) || !strings.Contains(err.Error(), "older ibdoctor") {
		t.Errorf("older format: %v, %v; want an error naming %s as an older ibdoctor's", got, err, filepath.Base(name))
	}
}
