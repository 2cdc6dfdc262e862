package snapshot

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/mad"
)

// baseline.idx holds what a gate asks of the accepted topology: every
// host's HCAs and the switches they are cabled to. Spines and cores are
// left out (at 49k nodes they were two thirds of the file's port
// records), and each job's part of it is what the whole baseline gives.
func TestBaselineIndexHostEdge(t *testing.T) {
	f, err := topology.FatTree3{Common: topology.Common{SwitchPorts: 8}, Pods: 2, LeavesPerPod: 2, SpinesPerPod: 2, HostsPerLeaf: 2, Cores: 2}.Build()
	if err != nil {
		t.Fatal(err)
	}
	// A host whose HCA's link is down in the accepted topology still
	// names its leaf: the cable is where the baseline says.
	var downHost string
	for _, n := range f.Nodes {
		if n.Type != mad.NodeSwitch && downHost == "" {
			downHost = n.Description
			n.Ports[1].State = mad.PortStateDown
		}
	}
	dir := t.TempDir()
	if err := SaveBaseline(dir, f, "sim:test", false); err != nil {
		t.Fatal(err)
	}
	x, err := OpenBaseline(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	whole, err := IndexOf(f)
	if err != nil {
		t.Fatal(err)
	}

	edge := map[uint64]bool{}
	var hosts []string
	seen := map[string]bool{}
	for _, n := range f.Nodes {
		if n.Type == mad.NodeSwitch {
			continue
		}
		edge[n.GUID] = true
		for _, p := range n.Ports {
			if p != nil && p.Remote != nil {
				edge[p.Remote.Node.GUID] = true
			}
		}
		if h := checks.HostOf(n); h != "" && !seen[h] {
			seen[h] = true
			hosts = append(hosts, h)
		}
	}
	if got, want := int(x.nodes), len(edge); got != want {
		t.Errorf("baseline.idx holds %d nodes, want the %d hosts' HCAs and their switches (of %d)", got, want, len(f.Nodes))
	}
	if len(hosts) < 2 {
		t.Fatalf("fixture has %d hosts", len(hosts))
	}
	for _, h := range hosts {
		a, err := x.JobPart([]string{h}, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := whole.JobPart([]string{h}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ja, _ := fabric.Marshal(a)
		jb, _ := fabric.Marshal(b)
		if !bytes.Equal(ja, jb) {
			t.Errorf("job part of %s from baseline.idx differs from the whole baseline's:\n%s\n---\n%s", h, ja, jb)
		}
	}
}

// TestLoadBaselineStreamed: the baseline decoded as it is read is the
// fabric saved, and a damaged file (checksum, cut short) is refused with
// the error reading it whole gave, naming the file and the fix.
func TestLoadBaselineStreamed(t *testing.T) {
	f := routedSmall(t)
	dir := t.TempDir()
	if err := SaveBaseline(dir, f, "sim:test", false); err != nil {
		t.Fatal(err)
	}
	got, err := LoadBaseline(dir)
	if err != nil {
		t.Fatal(err)
	}
	var want, have bytes.Buffer
	fabric.WriteJSON(&want, f, fabric.MarshalOptions{OmitLFT: true})
	fabric.WriteJSON(&have, got, fabric.MarshalOptions{OmitLFT: true})
	if !bytes.Equal(have.Bytes(), want.Bytes()) {
		t.Fatal("the baseline read back differs from the one saved")
	}
	path := filepath.Join(dir, BaselineName)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// wholeErr is what reading the file whole said.
	wholeErr := func(data []byte) string {
		z, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadAll(z); err != nil {
			return fmt.Sprintf("baseline %s: %v (accept the current fabric again: ibdoctor baseline accept)", path, err)
		}
		t.Fatal("the damaged file reads whole")
		return ""
	}
	crc := slices.Clone(good)
	crc[len(crc)-8] ^= 0xff
	for name, data := range map[string][]byte{"checksum": crc, "cut short": good[:len(good)-100]} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadBaseline(dir)
		if want := wholeErr(data); err == nil || err.Error() != want {
			t.Errorf("%s: %v\nwant %s", name, err, want)
		}
	}
}

// TestSaveBaselineFromIsSaveBaseline: a first sweep's baseline copied
// from the fabric file its Save wrote is byte for byte the one encoded
// from its fabric (baseline.json.gz and baseline.idx); with the tables in
// the fabric file (no gate.idx) there is nothing to copy and it is
// encoded.
func TestSaveBaselineFromIsSaveBaseline(t *testing.T) {
	taken := time.Date(2026, 11, 26, 23, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		counters func(*fabric.Fabric) checks.Counters
		copied   bool
	}{
		{"indexed", func(f *fabric.Fabric) checks.Counters { return everyPort{f} }, true},
		{"tables in the fabric file", func(f *fabric.Fabric) checks.Counters { return manyCounters{f} }, false},
	} {
		f := routedSmall(t)
		s, err := New(f, tc.counters(f), taken, "sim:test", "test", true)
		if err != nil {
			t.Fatal(err)
		}
		if s.BaselineSource() != "" {
			t.Fatalf("%s: a baseline source before Save: %q", tc.name, s.BaselineSource())
		}
		dir := t.TempDir()
		if _, err := s.Save(dir); err != nil {
			t.Fatal(err)
		}
		src := s.BaselineSource()
		if (src != "") != tc.copied || (src != "" && src != s.FabricFile) {
			t.Fatalf("%s: baseline source %q (fabric file %q, index %q)", tc.name, src, s.FabricFile, s.IndexFile)
		}
		if err := SaveBaselineFrom(dir, src, f, "sim:test"); err != nil {
			t.Fatal(err)
		}
		want := t.TempDir()
		if err := SaveBaseline(want, f, "sim:test", false); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{BaselineName, BaselineIndexName} {
			got, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			w, err := os.ReadFile(filepath.Join(want, name))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, w) {
				t.Errorf("%s: %s is %d bytes, SaveBaseline's %d, not the same bytes", tc.name, name, len(got), len(w))
			}
		}
		if tc.copied {
			if b, _ := os.ReadFile(filepath.Join(dir, src)); len(b) == 0 {
				t.Errorf("%s: the fabric file %s was moved, not copied", tc.name, src)
			}
		}
		got, err := LoadBaseline(dir)
		if err != nil || len(got.Nodes) != len(f.Nodes) {
			t.Fatalf("%s: LoadBaseline: %v", tc.name, err)
		}
	}
}

// TestBaselineAccepted: baseline.idx records whether the operator
// accepted the baseline (`baseline accept`) or a sweep took it by itself
// (the first sweep's copy, or an older state dir's snapshot made the
// baseline); a state dir from before the mark, with a baseline.json and
// no baseline.idx, or a baseline.idx without the mark, is the sweep's.
func TestBaselineAccepted(t *testing.T) {
	f := routedSmall(t)
	accepted := func(dir string) bool {
		t.Helper()
		got, err := BaselineAccepted(dir)
		if err != nil {
			t.Fatal(err)
		}
		x, err := OpenBaseline(dir)
		if err != nil {
			t.Fatal(err)
		}
		if x != nil {
			defer x.Close()
			if x.Accepted != got {
				t.Errorf("OpenBaseline's Accepted %v, BaselineAccepted %v", x.Accepted, got)
			}
		}
		return got
	}
	dir := t.TempDir()
	if accepted(dir) {
		t.Error("no baseline: accepted")
	}
	if err := SaveBaselineFrom(dir, "", f, "sim:test"); err != nil {
		t.Fatal(err)
	}
	if accepted(dir) {
		t.Error("the first sweep's baseline: accepted")
	}
	if err := SaveBaseline(dir, f, "sim:test", true); err != nil {
		t.Fatal(err)
	}
	if !accepted(dir) {
		t.Error("after baseline accept: not accepted")
	}
	if err := SaveBaseline(dir, f, "sim:test", false); err != nil {
		t.Fatal(err)
	}
	if accepted(dir) {
		t.Error("a sweep's baseline after an accepted one: accepted")
	}

	// An older state dir: baseline.json, no baseline.idx; the next sweep
	// indexes it as the sweep's.
	old := t.TempDir()
	data, err := fabric.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(old, BaselineV1Name), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if accepted(old) {
		t.Error("a baseline.json without baseline.idx: accepted")
	}
	if err := EnsureBaselineIndex(old, f); err != nil {
		t.Fatal(err)
	}
	if accepted(old) {
		t.Error("a baseline.json indexed by a later sweep: accepted")
	}
}

// TestHasBaseline: either baseline file, read or not, says one exists.
func TestHasBaseline(t *testing.T) {
	dir := t.TempDir()
	if ok, err := HasBaseline(dir); ok || err != nil {
		t.Fatalf("empty dir: %v, %v", ok, err)
	}
	for _, name := range []string{BaselineV1Name, BaselineName} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if ok, err := HasBaseline(dir); !ok || err != nil {
			t.Fatalf("with %s: %v, %v", name, ok, err)
		}
		os.Remove(filepath.Join(dir, name))
	}
}
