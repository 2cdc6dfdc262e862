package snapshot

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/fixtures"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

func sampleFabric(t testing.TB) *fabric.Fabric {
	t.Helper()
	f, _, err := fabric.Decode(fixtures.SampleTopology(), "sample")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// sameColumns fails unless two Baselines' columns are equal.
func sameColumns(t testing.TB, what string, x, y checks.BaselineColumns) {
	t.Helper()
	if x.In != y.In || x.Desc != y.Desc || x.KeptLinks != y.KeptLinks ||
		!slices.Equal(x.GUID, y.GUID) || !slices.Equal(x.Type, y.Type) || !slices.Equal(x.LID, y.LID) ||
		!slices.Equal(x.DescEnd, y.DescEnd) || !slices.Equal(x.First, y.First) || !slices.Equal(x.At, y.At) ||
		!slices.Equal(x.Peer, y.Peer) || !slices.Equal(x.PeerNum, y.PeerNum) ||
		!slices.Equal(x.LinkNode, y.LinkNode) || !slices.Equal(x.LinkNum, y.LinkNum) {
		t.Fatalf("%s: columns differ:\n%+v\n%+v", what, x, y)
	}
}

// encodeTopo is baseline.topo's content (uncompressed) for b.
func encodeTopo(t testing.TB, bf baselineFile, b *checks.Baseline) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	if err := encodeTopology(w, bf, b.Columns()); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestTopologyColumnsRoundTrip: the columns come back as they were
// written, for the shapes BaselineOf keeps links for and for a part of a
// fabric cabled to nodes outside it (no sweep saves those, but the
// format holds them).
func TestTopologyColumnsRoundTrip(t *testing.T) {
	part := sampleFabric(t)
	var kept []*fabric.Node
	for _, n := range part.Nodes {
		if !strings.HasPrefix(n.Description, "spine") {
			kept = append(kept, n)
		}
	}
	part.Nodes = kept
	part.Reindex()
	malformed := sampleFabric(t)
	var ends []*fabric.Port
	for _, n := range malformed.Nodes {
		for _, p := range n.Ports {
			if p != nil && p.Remote != nil {
				ends = append(ends, p)
			}
		}
	}
	ends[0].Remote.Remote = nil
	ends[len(ends)-1].Remote = ends[len(ends)-1]
	for name, f := range map[string]*fabric.Fabric{"sample": sampleFabric(t), "part": part, "malformed": malformed, "empty": {}} {
		b := checks.BaselineOf(f)
		bf := baselineFile{size: 12345, sum: 0xdeadbeef, v1: name == "part"}
		gotBF, got, err := decodeTopology(encodeTopo(t, bf, b))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if gotBF != bf {
			t.Fatalf("%s: baseline file %+v, wrote %+v", name, gotBF, bf)
		}
		sameColumns(t, name, b.Columns(), got.Columns())
		if name == "malformed" && !got.Columns().KeptLinks {
			t.Fatal("the malformed fabric's links are not kept")
		}
	}
}

// TestBaselineTopologyFallbacks: baseline.topo stands for the baseline
// only beside the very baseline file it was made from; absent, beside
// another or damaged, LoadBaselineTopology says so (the sweep then
// decodes the baseline and says that).
func TestBaselineTopologyFallbacks(t *testing.T) {
	dir := t.TempDir()
	if b, err := LoadBaselineTopology(dir); b != nil || err != nil {
		t.Fatalf("no baseline: %v, %v", b, err)
	}
	f := sampleFabric(t)
	if err := SaveBaseline(dir, f, "sim:test", false); err != nil {
		t.Fatal(err)
	}
	b, err := LoadBaselineTopology(dir)
	if err != nil {
		t.Fatal(err)
	}
	sameColumns(t, "saved", checks.BaselineOf(f).Columns(), b.Columns())
	topo := filepath.Join(dir, BaselineTopologyName)
	good, err := os.ReadFile(topo)
	if err != nil {
		t.Fatal(err)
	}
	want := func(what, msg string) {
		t.Helper()
		b, err := LoadBaselineTopology(dir)
		if b != nil || err == nil || !strings.Contains(err.Error(), msg) {
			t.Fatalf("%s: %v, %v; want an error saying %q", what, b, err, msg)
		}
	}
	// Another baseline file beside it (an older ibdoctor's accept).
	other := t.TempDir()
	g := sampleFabric(t)
	g.Nodes[0].Description = "renamed"
	if err := SaveBaseline(other, g, "sim:test", false); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(other, BaselineName))
	if err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(filepath.Join(dir, BaselineName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, BaselineName), data, 0o644); err != nil {
		t.Fatal(err)
	}
	want("another baseline", "is not of the baseline.json.gz beside it")
	if err := os.WriteFile(filepath.Join(dir, BaselineName), orig, 0o644); err != nil {
		t.Fatal(err)
	}
	// A v1 baseline.json alone: not the file it was made from.
	v1 := t.TempDir()
	if err := os.WriteFile(filepath.Join(v1, BaselineTopologyName), good, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(v1, BaselineV1Name), []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadBaselineTopology(v1); err == nil || !strings.Contains(err.Error(), "baseline.json beside it") {
		t.Fatalf("beside a v1 baseline: %v", err)
	}
	// Damaged: truncated, a byte flipped inside the compressed columns,
	// not gzip, gzip of other bytes.
	for name, d := range map[string][]byte{
		"truncated": good[:len(good)/2],
		"flipped":   append(append(append([]byte(nil), good[:len(good)/2]...), good[len(good)/2]^0x55), good[len(good)/2+1:]...),
		"not gzip":  []byte("not a baseline topology"),
		"other":     gz(t, []byte("IBDBTOP1 but nothing else")),
	} {
		if err := os.WriteFile(topo, d, 0o644); err != nil {
			t.Fatal(err)
		}
		want(name, "is corrupt")
	}
	if err := os.Remove(topo); err != nil {
		t.Fatal(err)
	}
	want("absent", "is absent")
	// Rewritten, it stands for the baseline again.
	if err := WriteBaselineTopology(dir, f); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadBaselineTopology(dir); err != nil {
		t.Fatal(err)
	}
}

func gz(t testing.TB, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	z.Write(data)
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestBaselineTopologyOfDecodedFabric: a fabric whose baseline file would
// not decode to what the checks read of it (a cable one-sided, a
// description JSON does not keep as it is) gets the baseline.topo of the
// decoded file, as the sweeps read it before.
func TestBaselineTopologyOfDecodedFabric(t *testing.T) {
	f := sampleFabric(t)
	f.Nodes[2].Description = "host\xff01"
	var ends []*fabric.Port
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil && p.Remote != nil {
				ends = append(ends, p)
			}
		}
	}
	ends[3].Remote.Remote = nil
	if roundTrips(f) {
		t.Fatal("roundTrips: true")
	}
	if !roundTrips(sampleFabric(t)) {
		t.Fatal("the sample does not round-trip")
	}
	dir := t.TempDir()
	if err := SaveBaseline(dir, f, "sim:test", false); err != nil {
		t.Fatal(err)
	}
	dec, err := LoadBaseline(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadBaselineTopology(dir)
	if err != nil {
		t.Fatal(err)
	}
	sameColumns(t, "decoded", checks.BaselineOf(dec).Columns(), b.Columns())
}

// FuzzDecodeTopology: any bytes decode to an error or to a Baseline
// whose columns hold together and encode back to the same bytes.
func FuzzDecodeTopology(f *testing.F) {
	sample, _, err := fabric.Decode(fixtures.SampleTopology(), "sample")
	if err != nil {
		f.Fatal(err)
	}
	small, err := topology.FatTree2{Leaves: 2, Spines: 2, HostsPerLeaf: 2}.Build()
	if err != nil {
		f.Fatal(err)
	}
	for _, fab := range []*fabric.Fabric{sample, small, {}} {
		f.Add(encodeTopo(f, baselineFile{size: 1, sum: 2}, checks.BaselineOf(fab)))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		bf, b, err := decodeTopology(data)
		if err != nil {
			return
		}
		again := encodeTopo(t, bf, b)
		_, b2, err := decodeTopology(again)
		if err != nil {
			t.Fatalf("re-encoded: %v", err)
		}
		sameColumns(t, "re-encoded", b.Columns(), b2.Columns())
		// The checks that read it stay in bounds (a panic fails).
		if _, err := checks.Run(&checks.Snapshot{Fabric: small, Baseline: b}, "topology.changed", "topology.miswired", "link.down", "link.polling", "link.loopback", "topology.missing-hca"); err != nil {
			t.Fatal(err)
		}
	})
}

// BenchmarkLaterSweepBaseline is what a later sweep spends on getting its
// baseline, both ways: read from baseline.topo ("topo"), and decoded from
// baseline.json.gz and reduced ("decoded", as before baseline.topo). The
// state dir is IBDOCTOR_BENCH_STATE's (one a sweep wrote, e.g. of
// --sim=ft50k.net), else FatTree8k's baseline saved for the run.
func BenchmarkLaterSweepBaseline(b *testing.B) {
	dir := os.Getenv("IBDOCTOR_BENCH_STATE")
	if dir == "" {
		f, err := topology.FatTree8k().Build()
		if err != nil {
			b.Fatal(err)
		}
		dir = b.TempDir()
		if err := SaveBaseline(dir, f, "sim:bench", false); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("topo", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if x, err := LoadBaselineTopology(dir); err != nil || x == nil {
				b.Fatal(x, err)
			}
		}
	})
	// What the first sweep (or an accept) adds to write it, into a copy
	// of the baseline file.
	b.Run("write", func(b *testing.B) {
		f, err := LoadBaseline(dir)
		if err != nil || f == nil {
			b.Fatal(f, err)
		}
		data, err := os.ReadFile(filepath.Join(dir, BaselineName))
		if err != nil {
			b.Fatal(err)
		}
		to := b.TempDir()
		if err := os.WriteFile(filepath.Join(to, BaselineName), data, 0o644); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if err := WriteBaselineTopology(to, f); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decoded", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			f, err := LoadBaseline(dir)
			if err != nil || f == nil {
				b.Fatal(f, err)
			}
			checks.BaselineOf(f)
		}
	})
}
