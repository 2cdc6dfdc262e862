package gate

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/snapshot"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// TestGateCensusSummarySameVerdict (issue 13): a gate judges
// topology.missing-hca on the sweep's summary of the census and its
// hosts looked up in gate.idx, not on every CA record of the fabric;
// its verdict is the one an older state dir (no census file: the census
// built from gate.idx) gives, finding for finding: a host short of an
// HCA beside its leaf port without a link, and a group of hosts without
// a rail the other groups have.
func TestGateCensusSummarySameVerdict(t *testing.T) {
	cases := []struct {
		name  string
		f     *fabric.Fabric
		down  []string
		from  string
		hosts []string
		want  string // in a missing-hca finding's title
	}{
		{"host short of an HCA", build(t, twoHCAs), []string{"gpu002 mlx5_0/1"}, "gpu016 mlx5_0", []string{"gpu002", "gpu005"}, "gpu002 has 1 HCA where its peers have 2: mlx5_0 missing"},
		{"group without a rail", railGroups(t), nil, "gpua001 mlx5_0", []string{"gpud025", "gpua002"}, "8 gpud* hosts have no mlx5_3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := sim.New(c.f, sim.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range c.down {
				if err := s.Down(p); err != nil {
					t.Fatal(err)
				}
			}
			sw, err := diagnose.Run(context.Background(), engineAt(t, s, c.from), diagnose.Options{Routes: true, Counters: true})
			if err != nil {
				t.Fatal(err)
			}
			snap, err := snapshot.New(sw.Fabric, sw.Counters, sw.Taken, "sim:test", "test", sw.Complete)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if _, err := snap.Save(dir); err != nil {
				t.Fatal(err)
			}
			gate := func(wantSummary bool) string {
				g, err := snapshot.LoadForGate(dir)
				if err != nil {
					t.Fatal(err)
				}
				defer g.Close()
				if sum, _ := g.HCASummary(); (sum != nil) != wantSummary {
					t.Fatalf("census summary %v, want %v", sum != nil, wantSummary)
				}
				doc, err := Run(context.Background(), g, engineAt(t, s, c.from), Options{Hosts: c.hosts, FailOn: checks.Error, ByLID: true, Source: "sim:test", Counters: true})
				if err != nil {
					t.Fatal(err)
				}
				found := false
				for _, f := range doc.Findings {
					found = found || (f.Check == "topology.missing-hca" && strings.Contains(f.Title, c.want))
				}
				if !found {
					t.Errorf("summary %v: no missing-hca finding %q: %+v", wantSummary, c.want, doc.Findings)
				}
				out, err := json.MarshalIndent(struct {
					Status    string
					Findings  any
					Undecided any
					Unreached any
				}{doc.Status, doc.Findings, doc.Undecided, doc.Unreached}, "", " ")
				if err != nil {
					t.Fatal(err)
				}
				return string(out)
			}
			with := gate(true)
			olderState(t, dir)
			if without := gate(false); with != without {
				t.Errorf("the gate on the census summary:\n%s\non the census from gate.idx (an older state dir):\n%s", with, without)
			}
		})
	}
}

// olderState makes dir's state one of an ibdoctor before the census
// file: snapshot.json names none, and there is none.
func olderState(t *testing.T, dir string) {
	t.Helper()
	path := filepath.Join(dir, snapshot.FileName)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	name, _ := doc["census_file"].(string)
	if name == "" {
		t.Fatal("snapshot.json names no census file")
	}
	if err := os.Remove(filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
	delete(doc, "census_file")
	delete(doc, "crc32c") // an older ibdoctor's, without the checksum
	if data, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// railGroups is 32 hosts of 4 HCAs in 4 groups named alike (gpua001..
// gpud032), the 8 gpud hosts without their mlx5_3 (not a host's adapter
// by its description).
func railGroups(t *testing.T) *fabric.Fabric {
	f := build(t, topology.FatTree2{Leaves: 4, Spines: 4, HostsPerLeaf: 32, Hosts: topology.Hosts{HCAsPerServer: 4}})
	for _, n := range f.Nodes {
		var i, dev int
		if _, err := fmt.Sscanf(n.Description, "gpu%03d mlx5_%d", &i, &dev); err != nil {
			continue
		}
		group := []string{"gpua", "gpub", "gpuc", "gpud"}[(i-1)/8]
		n.Description = fmt.Sprintf("%s%03d mlx5_%d", group, i, dev)
		if group == "gpud" && dev == 3 {
			n.Description = "unused"
		}
	}
	return f
}
