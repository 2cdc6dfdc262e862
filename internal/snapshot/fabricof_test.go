package snapshot

import (
	"strings"
	"testing"
	"time"
)

// TestAnotherFabric: one answer for gate's snapshot and baseline and
// sweep's previous sweep. Before, a sweep called a previous snapshot
// that could not say (no gate.idx) another fabric's while a gate used it,
// and a port of unknown GUID the reverse.
func TestAnotherFabric(t *testing.T) {
	holds := func(g uint64) (bool, error) { return g == 0x10, nil }
	for _, c := range []struct {
		saved, cur string
		local      uint64
		want       bool
		why        string
	}{
		{"sim:a", "sim:a", 0, false, ""},
		{"sim:a", "sim:a", 0x99, false, ""},
		{"sim:a", "sim:b", 0x10, false, ""},
		{"sim:a", "sim:b", 0x99, true, "this port, mlx5_0/1, is not in it"},
		{"sim:a", "sim:b", 0, true, "is not known"},
		{unknownSource, "sim:b", 0x10, false, ""},
		{unknownSource, "sim:b", 0x99, true, "another fabric"},
	} {
		got, why, err := anotherFabric(c.saved, c.cur, "mlx5_0/1", c.local, holds)
		if err != nil || got != c.want || !strings.Contains(why, c.why) {
			t.Errorf("%s read from %s on 0x%x: %v %q %v, want %v %q", c.saved, c.cur, c.local, got, why, err, c.want, c.why)
		}
	}
	// A snapshot without gate.idx tells from its fabric, decoded.
	dir := t.TempDir()
	s := testSnap(t, time.Date(2026, 11, 27, 5, 0, 0, 0, time.UTC))
	f, _ := s.FabricModel()
	host := f.Nodes[len(f.Nodes)-1].GUID
	if _, err := s.Save(dir); err != nil {
		t.Fatal(err)
	}
	l, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.ctrs.Close()
	l.ctrs = nil // as a snapshot whose counters are in snapshot.json
	for _, c := range []struct {
		local uint64
		want  bool
	}{{host, false}, {0xdead, true}} {
		if got, _, err := l.OfAnotherFabric("sim:other", "p", c.local); err != nil || got != c.want {
			t.Errorf("no gate.idx, port 0x%x: %v %v, want %v", c.local, got, err, c.want)
		}
	}
}
