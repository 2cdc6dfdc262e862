package checks_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// incidentFaults is one of everything the checks look for, on a 4×4 fat
// tree with 4 spines (leaf ports 5..8 to spines 1..4).
const incidentFaults = `# links
degrade leaf02/6 width=1x
degrade "gpu011 mlx5_0"/1 speed=HDR
polling "gpu016 mlx5_0"/1
# routes
lft leaf04 uplinks-to=5
blackhole leaf02 dlid="gpu014 mlx5_0"
loop leaf03 spine03 dlid="gpu002 mlx5_0"
# counters
counter "gpu006 mlx5_0"/1 SymbolErrorCounter=65535
counter leaf03/7 LinkErrorRecoveryCounter=50 PortRcvErrors=12
counter leaf04/6 PortXmitWait=5000 VL15Dropped=101
`

// TestIncidentGolden pins what the checks say about the incident above —
// IDs, severities, titles, entities, evidence, impact, actions, order —
// swept through the in-process simulator. Run with -update after an
// intended change and review the diff of testdata/incident.golden.json.
func TestIncidentGolden(t *testing.T) {
	f, err := topology.FatTree2{Leaves: 4, Spines: 4, HostsPerLeaf: 4}.Build()
	if err != nil {
		t.Fatal(err)
	}
	sw := sweepSim(t, f, 0, func(s *sim.Sim) {
		fs, err := sim.ParseFaults(strings.NewReader(incidentFaults))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.ApplyFaults(fs); err != nil {
			t.Fatal(err)
		}
	})
	res, err := checks.Run(sw.Snapshot(checks.Expectations{}, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(res); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "incident.golden.json")
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		gl, wl := strings.Split(b.String(), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < min(len(gl), len(wl)); i++ {
			if gl[i] != wl[i] {
				t.Fatalf("findings differ from %s at line %d (go test -update to accept):\nwant %s\ngot  %s", path, i+1, wl[i], gl[i])
			}
		}
		t.Fatalf("findings differ from %s in length: %d lines, want %d", path, len(gl), len(wl))
	}
}
