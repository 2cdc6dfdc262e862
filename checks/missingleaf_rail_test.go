package checks_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
)

// TestCorpusMissingRailLeafIsNoHostsCutOff (trial C9): the Quantum-2
// capture's .lst without one of its 8 rail leaves, its original as the
// plan. The leaf held mlx5_0 of 32 hosts, each keeping 7 other rails, and
// its SHARP Aggregation Node; topology.changed said "the 33 hosts behind
// it ... 33 hosts are cut off", sending on-call to 32 machines that are
// reachable and counting the Aggregation Node as a host (which the role
// judgement excludes everywhere else).
func TestCorpusMissingRailLeafIsNoHostsCutOff(t *testing.T) {
	orig := corpusFile(t, "quantum2-ndr-ibdiagnet2.lst")
	in, err := os.Open(orig)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var b strings.Builder
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if !strings.Contains(strings.ToLower(sc.Text()), "fc6a1c030091f9c0") {
			b.WriteString(sc.Text() + "\n")
		}
	}
	cut := filepath.Join(t.TempDir(), "q2-noleaf.lst")
	if err := os.WriteFile(cut, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	sw := corpusSweep(t, cut)
	sw.RoutesComputed = true
	plan, _, err := fabric.ReadFile(context.Background(), orig)
	if err != nil {
		t.Fatal(err)
	}
	snap := sw.Snapshot(checks.Expectations{}, checks.BaselineOf(plan), nil)
	snap.BaselineDesigned = true
	res, err := checks.Run(snap, "topology.changed")
	if err != nil {
		t.Fatal(err)
	}
	var leaf []checks.Finding
	for _, f := range byCheck(res.Findings, "topology.changed") {
		if strings.Contains(f.Title, "0xfc6a1c030091f9c0") {
			leaf = append(leaf, f)
		}
	}
	if len(leaf) != 1 {
		t.Fatalf("%d findings on the missing leaf, want 1:%s", len(leaf), titles(res.Findings))
	}
	f := leaf[0]
	for _, w := range []string{"is missing, and the 32 HCAs behind it (mlx5_0 of 32 hosts: that rail is lost; the hosts stay reachable on their other rails)", "and its Aggregation Node"} {
		if !strings.Contains(f.Title, w) {
			t.Errorf("title %q does not say %q", f.Title, w)
		}
	}
	if strings.Contains(f.Title, "hosts behind") || strings.Contains(f.Impact.Summary, "cut off") {
		t.Errorf("hosts called cut off: %q / %q", f.Title, f.Impact.Summary)
	}
	if f.Severity != checks.Critical {
		t.Errorf("severity %s, want critical (a switch from the plan is missing)", f.Severity)
	}
}
