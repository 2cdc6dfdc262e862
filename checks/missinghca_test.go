package checks_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
)

// TestMissingHCAFreshDeployment: gpu002's mlx5_0 cable was down from the
// first sweep, so no baseline knows the host had 8 HCAs. Its 31 peers
// have mlx5_0..7, it has 7, and leaf01/9 (rail mlx5_0's leaf, where
// gpu001's and gpu003's mlx5_0 land beside it) is Polling. Before: only
// an info link.polling on leaf01/9, and a gate for gpu002 said healthy.
func TestMissingHCAFreshDeployment(t *testing.T) {
	all := sampleWith(t, "down \"gpu002 mlx5_0\"/1\n", false)
	fs := byCheck(all, "topology.missing-hca")
	if len(fs) != 1 {
		t.Fatalf("want 1 topology.missing-hca, got:%s", titles(fs))
	}
	f := fs[0]
	t.Logf("%s\n    %v\n    %s", f.Title, f.Evidence, f.Action)
	if f.Severity != checks.Error || !strings.Contains(f.Title, "gpu002") || !strings.Contains(f.Title, "mlx5_0 missing") || !strings.Contains(f.Title, "leaf01/9") {
		t.Errorf("got %s %q, want an error naming gpu002, mlx5_0 and leaf01/9", f.Severity, f.Title)
	}
	// Every one of the 31 peers has the HCA: said so, not "at least 31
	// of the 31" (trial D10).
	var ev []string
	for _, e := range f.Evidence {
		ev = append(ev, e.Text)
	}
	if j := strings.Join(ev, "\n"); !strings.Contains(j, "all 31 other gpu* hosts have each of them") || strings.Contains(j, "at least 31 of the 31") {
		t.Errorf("evidence: %s", j)
	}
	// One cable, one finding: leaf01/9's Polling is this finding's evidence.
	if p := byCheck(all, "link.polling"); len(p) > 0 {
		t.Errorf("link.polling not folded:%s", titles(p))
	}
}

// TestMissingHCAQuietOnHealthy: every host of the healthy sample has its
// 8 HCAs.
func TestMissingHCAQuietOnHealthy(t *testing.T) {
	if fs := byCheck(sampleWith(t, "", false), "topology.missing-hca"); len(fs) > 0 {
		t.Errorf("healthy sample:%s", titles(fs))
	}
}

// TestMissingHCAMinority: with no clear majority (6 of 8 gpu hosts lack
// mlx5_7: the others are a minority, not the rule) nothing is said
// about the 6; a host lacking what 3/4-9/10 of its peers have is info.
func TestMissingHCANoClearMajority(t *testing.T) {
	var b bytes.Buffer
	// Four hosts of 32 lose mlx5_7: 28 of 31 peers (90.3%) have it for
	// each -> still clear. Eight hosts: 24 of 31 (77%) -> info.
	for _, h := range []string{"gpu001", "gpu005", "gpu009", "gpu013", "gpu017", "gpu021", "gpu025", "gpu029"} {
		b.WriteString("polling \"" + h + " mlx5_7\"/1\n")
	}
	fs := byCheck(sampleWith(t, b.String(), false), "topology.missing-hca")
	if len(fs) != 8 {
		t.Fatalf("want 8 findings, got:%s", titles(fs))
	}
	for _, f := range fs {
		if f.Severity != checks.Info {
			t.Errorf("%s %q: want info (24 of 31 peers is no clear majority)", f.Severity, f.Title)
		}
	}
}

// TestCorpusMissingHCAQuiet: the real dumps (mixed host kinds, hosts with
// one or two HCAs, SHARP Aggregation Nodes) give no missing-hca finding
// but the DGX unit that lacks a rail.
func TestCorpusMissingHCAQuiet(t *testing.T) {
	for _, name := range topologyCorpus {
		t.Run(name, func(t *testing.T) {
			res := corpusCheck(t, name, false)
			var fs []checks.Finding
			for _, f := range byCheck(res.Findings, "topology.missing-hca") {
				if name == "dgx-ndr-2025.ibnetdiscover" && strings.HasPrefix(f.Title, "10 a05-p1-dgx-01-c* hosts have no HCA-5") {
					continue // a whole unit without rail HCA-5 (TestCorpusMissingRailOfAGroup)
				}
				fs = append(fs, f)
			}
			if len(fs) > 0 {
				t.Errorf("%d findings:%s", len(fs), titles(fs))
			}
		})
	}
}

// TestMissingHCABlockEdge: the missing HCA's leaf port is the first or
// the last of the leaf's host block (leaf01/1 for gpu001 mlx5_0,
// leaf01/32 for gpu004 mlx5_7). Before, the block was the span of the
// linked host ports only, so an edge port fell outside: the finding
// named no port and link.polling was not folded into it.
func TestMissingHCABlockEdge(t *testing.T) {
	for _, c := range []struct{ fault, port string }{
		{"polling \"gpu001 mlx5_0\"/1", "leaf01/1 "},
		{"down \"gpu001 mlx5_0\"/1", "leaf01/1 "},
		{"polling \"gpu004 mlx5_7\"/1", "leaf01/32 "},
		{"polling \"gpu001 mlx5_1\"/1", "leaf01/2 "},
	} {
		t.Run(c.fault, func(t *testing.T) {
			all := sampleWith(t, c.fault+"\n", false)
			fs := byCheck(all, "topology.missing-hca")
			if len(fs) != 1 || !strings.Contains(fs[0].Title, "; "+c.port) {
				t.Errorf("want one missing-hca naming %s, got:%s", c.port, titles(fs))
			}
			if p := byCheck(all, "link.polling"); len(p) > 0 {
				t.Errorf("link.polling not folded:%s", titles(p))
			}
		})
	}
}
