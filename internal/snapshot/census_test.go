package snapshot

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/mad"
)

// TestIndexHCACensus: the census a gate reads from gate.idx's records is
// the one checks takes from the whole fabric, HCA by HCA (host, device,
// leaf and leaf port), with a host port down among them.
func TestIndexHCACensus(t *testing.T) {
	f, _, err := sim.SampleFabric()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range f.Nodes {
		if n.Description == "gpu002 mlx5_0" {
			p := n.Ports[1]
			p.Remote.Remote = nil
			p.Remote, p.State, p.PhysState = nil, mad.PortStateDown, mad.PhysDisabled
		}
	}
	want := checks.HCACensus(f)
	data, err := EncodeIndex(f, nil, time.Now(), "sim:test", true)
	if err != nil {
		t.Fatal(err)
	}
	x, err := ParseIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	got := x.HCACensus()
	if len(want) != 256 || !slices.Equal(got, want) || slices.ContainsFunc(got, func(h checks.HostHCA) bool { return h.Leaf == 0 && h.Host != "gpu002" }) {
		t.Errorf("census from gate.idx differs (%d HCAs, want %d)", len(got), len(want))
	}
	if i := slices.IndexFunc(got, func(h checks.HostHCA) bool { return h.Host == "gpu002" && h.Dev == "mlx5_0" }); i < 0 || got[i].Leaf != 0 {
		t.Errorf("gpu002 mlx5_0 with its link down: %+v", got[max(i, 0)])
	}
}

// BenchmarkIndexHCACensus8k is what a gate spends on the fabric-wide HCA
// census from gate.idx on FatTree8k (8,192 HCAs): -benchmem's B/op is
// its share of the gate's peak memory.
func BenchmarkIndexHCACensus8k(b *testing.B) {
	f, err := topology.FatTree8k().Build()
	if err != nil {
		b.Fatal(err)
	}
	data, err := EncodeIndex(f, nil, time.Now(), "sim:bench", true)
	if err != nil {
		b.Fatal(err)
	}
	x, err := ParseIndex(data)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if len(x.HCACensus()) == 0 {
			b.Fatal("empty census")
		}
	}
}

// TestSaveHCASummary (issue 13): a sweep keeps the summary of the whole
// fabric's census beside gate.idx, and a gate's snapshot answers it with
// each host's entries looked up in gate.idx, equal to the census's (an
// HCA down, a host named by its FQDN on one HCA); an older state dir
// without the file, or a fabric whose adapters gate.idx cannot look up
// by host (a tab in a description), has none and the whole census
// still answers.
func TestSaveHCASummary(t *testing.T) {
	f, _, err := sim.SampleFabric()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range f.Nodes {
		switch n.Description {
		case "gpu002 mlx5_0":
			p := n.Ports[1]
			p.Remote.Remote = nil
			p.Remote, p.State, p.PhysState = nil, mad.PortStateDown, mad.PhysDisabled
		case "gpu001 mlx5_3":
			n.Description = "gpu001.cluster.local mlx5_3"
		}
	}
	census := checks.HCACensus(f)
	taken := time.Date(2026, 11, 27, 14, 0, 0, 0, time.UTC)
	save := func(f *fabric.Fabric) string {
		s, err := New(f, nil, taken, "sim:test", "test", true)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if _, err := s.Save(dir); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	dir := save(f)
	g, err := LoadForGate(dir)
	if err != nil {
		t.Fatal(err)
	}
	sum, look := g.HCASummary()
	if sum == nil || look == nil {
		t.Fatalf("no census summary in the state (census_file %q)", g.CensusFile)
	}
	if want := checks.SummarizeHCAs(census); !reflect.DeepEqual(sum, want) {
		t.Errorf("summary read back differs from the census's:\n%+v\nwant\n%+v", sum, want)
	}
	hosts := map[string]bool{}
	for _, h := range census {
		hosts[h.Host] = true
	}
	for h := range hosts {
		want := slices.DeleteFunc(slices.Clone(census), func(x checks.HostHCA) bool { return x.Host != h })
		if got := look.HostHCAs(h); !slices.Equal(got, want) {
			t.Errorf("HostHCAs(%q) = %+v, want %+v", h, got, want)
		}
	}
	if got := look.HostHCAs("gpu001"); len(got) != 8 {
		t.Errorf("gpu001 (one HCA named by its FQDN): %d HCAs, want 8", len(got))
	}
	g.Close()

	// An older ibdoctor's state dir: no census file named.
	data, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	replaced := false
	old := string(resealed(data, func(b []byte) []byte {
		o := strings.Replace(string(b), fmt.Sprintf(`,"census_file":%q`, censusFileName(taken)), "", 1)
		replaced = o != string(b)
		return []byte(o)
	}))
	if !replaced {
		t.Fatalf("snapshot.json names no census file: %s", data)
	}
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, censusFileName(taken)))
	g, err = LoadForGate(dir)
	if err != nil {
		t.Fatal(err)
	}
	if sum, _ := g.HCASummary(); sum != nil {
		t.Error("an older state dir gave a census summary")
	}
	if got, err := g.HCACensus(); err != nil || !slices.Equal(got, census) {
		t.Errorf("an older state dir's census: %v, %d entries, want %d", err, len(got), len(census))
	}
	g.Close()

	// A description gate.idx files under another host key: no summary.
	for _, n := range f.Nodes {
		if n.Description == "gpu003 mlx5_1" {
			n.Description = "gpu003\tmlx5_1"
		}
	}
	g, err = LoadForGate(save(f))
	if err != nil {
		t.Fatal(err)
	}
	if sum, _ := g.HCASummary(); sum != nil || g.CensusFile != "" {
		t.Errorf("a host adapter gate.idx cannot find by its host: census file %q kept", g.CensusFile)
	}
	if got, err := g.HCACensus(); err != nil || !slices.Equal(got, checks.HCACensus(f)) {
		t.Errorf("its census from gate.idx: %v, %d entries", err, len(got))
	}
	g.Close()
}

// FuzzDecodeCensus: any bytes in a census file give a summary with its
// kinds, or an error; never a panic.
func FuzzDecodeCensus(f *testing.F) {
	taken := time.Date(2026, 11, 27, 14, 0, 0, 0, time.UTC)
	f.Add([]byte(`{"taken_at":"2026-11-27T14:00:00Z","hcas":{"kinds":{"gpu|mlx5_":{"name":"gpu*","hosts":4,"have":{"mlx5_0":4}}},"rails":{"mlx5_0":[1,2]},"host_ports":{"1":"AQI="}}}`))
	f.Add([]byte(`{"taken_at":"2026-11-27T14:00:00Z","hcas":null}`))
	f.Add([]byte(`{"taken_at":"2026-11-27T15:00:00Z","hcas":{"kinds":{}}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sum, err := decodeCensus(data, "census.json", taken)
		if err == nil && (sum == nil || sum.Kinds == nil) {
			t.Fatalf("no error and no census: %+v", sum)
		}
	})
}
