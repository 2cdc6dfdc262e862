package cli

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
)

// gateOnFile gates hosts on a --sim file twice: with no snapshot (the
// gate sweeps the file itself) and after 'ibdoctor sweep' of the same
// file kept one; it returns both reports.
func gateOnFile(t *testing.T, file, nodes string, extra ...string) (own, fromSnap *chkDoc) {
	t.Helper()
	t.Setenv("SLURM_JOB_NODELIST", "")
	state := filepath.Join(t.TempDir(), "state")
	gate := append([]string{"gate", "--sim=" + file, "--state-dir", state, "--nodes", nodes, "--json"}, extra...)
	code, out, stderr := run(gate...)
	if code == ExitUndecided {
		t.Fatalf("gate (own sweep): exit %d: %s", code, stderr)
	}
	own = chkParse(t, out)
	if code, _, stderr := run("sweep", "--sim="+file, "--state-dir", state, "--out", filepath.Join(t.TempDir(), "r.json")); code == ExitUndecided {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	code, out, stderr = run(gate...)
	if code == ExitUndecided {
		t.Fatalf("gate (snapshot): exit %d: %s", code, stderr)
	}
	fromSnap = chkParse(t, out)
	return own, fromSnap
}

// TestGateCountersNotInFile: an ibnetdiscover file carries no counters.
// check, counters and sweep say so and run no counter check (a6f01cd);
// gate read the simulator's zeros as counters ("ports_counters_read": 82
// on the DGX dump) and judged them. It must leave the counter checks not
// run with the file's reason, read no port's counters, and say so in its
// header, whether it sweeps the file itself or answers from a snapshot.
func TestGateCountersNotInFile(t *testing.T) {
	files := []struct{ file, corpus, nodes string }{
		{file: filepath.Join("..", "..", "fixtures", "ibnetdiscover", "hdr.txt"), nodes: "gpu001,gpu002"},
		{corpus: "dgx-ndr-2025.ibnetdiscover", nodes: "a08-p1-dgx-04-c17,a08-p1-dgx-04-c16"},
	}
	for _, fc := range files {
		t.Run(filepath.Base(fc.file+fc.corpus), func(t *testing.T) {
			if fc.corpus != "" {
				fc.file = corpusPath(t, fc.corpus)
			}
			own, fromSnap := gateOnFile(t, fc.file, fc.nodes)
			for i, d := range []*chkDoc{own, fromSnap} {
				how := []string{"own sweep", "snapshot"}[i]
				if d.Fabric.PortsRead != 0 {
					t.Errorf("%s: gate read the counters of %d ports from a file that has none", how, d.Fabric.PortsRead)
				}
				if !strings.Contains(d.CountersNotRead, "carries no counters") {
					t.Errorf("%s: counters_not_read = %q, want why", how, d.CountersNotRead)
				}
				skipped := map[string]string{}
				for _, s := range d.Skipped {
					skipped[s.Check] = s.Reason
				}
				for _, c := range []string{"counters.errors", "counters.congestion"} {
					if !strings.Contains(skipped[c], "carries no counters") {
						t.Errorf("%s: %s skipped for %q, want the file's lack of counters", how, c, skipped[c])
					}
				}
				if d.Scope == nil || d.Scope.LiveReads == 0 {
					t.Errorf("%s: scope %+v: the ports are still re-read (PortInfo)", how, d.Scope)
				}
			}
			_, out, _ := run("gate", "--sim="+fc.file, "--state-dir", filepath.Join(t.TempDir(), "s"), "--nodes", fc.nodes, "--no-color")
			if !strings.Contains(out, "Counters:") || !strings.Contains(out, "carries no counters") {
				t.Errorf("gate's header does not say the counters were not in the file:\n%s", out)
			}
		})
	}
}

// counterTitles are the counters.* findings' check, basis and title.
func counterTitles(d *chkDoc) []string {
	var out []string
	for _, f := range d.Findings {
		if strings.HasPrefix(f.Check, "counters.") {
			out = append(out, f.Check+" "+f.Severity.String()+" "+f.Basis+": "+f.Title)
		}
	}
	slices.Sort(out)
	return out
}

// counterPorts are the ports the counters.* findings name, with the
// check, severity and basis that judged them.
func counterPorts(d *chkDoc) []string {
	var out []string
	for _, f := range d.Findings {
		if !strings.HasPrefix(f.Check, "counters.") {
			continue
		}
		for _, e := range f.Entities {
			if e.Role == "end" {
				out = append(out, fmt.Sprintf("%s %s %s: %s/%d", f.Check, f.Severity, f.Basis, e.GUID, e.Port))
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestGateJudgesPMDelta: on an ibdiagnet2.db_csv check judges PM_DELTA,
// the increase during ibdiagnet's run (f1b442d); gate judged PM_INFO's
// values since an unknown clear (pmdelta.db_csv: 2 errors, 1 warning,
// unhealthy, where check is healthy). The gate's counter findings must
// be check's (one judgement), the report must say what the counters are,
// and --interval over a file read once is refused as check refuses it.
func TestGateJudgesPMDelta(t *testing.T) {
	file := filepath.Join("..", "fabric", "testdata", "pmdelta.db_csv")
	code, out, stderr := run("check", "--sim="+file, "--json")
	if code == ExitUndecided {
		t.Fatalf("check: exit %d: %s", code, stderr)
	}
	want := counterTitles(chkParse(t, out))
	own, fromSnap := gateOnFile(t, file, "h")
	for i, d := range []*chkDoc{own, fromSnap} {
		how := []string{"own sweep", "snapshot"}[i]
		if got := counterTitles(d); !slices.Equal(got, want) {
			t.Errorf("%s: gate's counter findings\n  %s\nwant check's\n  %s", how, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
		if !strings.Contains(d.CountersBasis, "PM_DELTA") {
			t.Errorf("%s: counters_basis %q, want the increase during the run (PM_DELTA)", how, d.CountersBasis)
		}
		if d.Status != "healthy" {
			t.Errorf("%s: status %s, want healthy as check (a warning and an info on the increases)", how, d.Status)
		}
	}
	code, _, stderr = run("gate", "--sim="+file, "--state-dir", filepath.Join(t.TempDir(), "s"), "--nodes", "h", "--interval", "1s")
	if code != ExitUndecided || !strings.Contains(stderr, "--interval") {
		t.Errorf("gate --interval on a db_csv: exit %d, stderr %q; want refused as check refuses it", code, stderr)
	}

	q := corpusPath(t, "quantum2-ndr-ibdiagnet2.db_csv")
	code, out, stderr = run("check", "--sim="+q, "--json")
	if code == ExitUndecided {
		t.Fatalf("check: exit %d: %s", code, stderr)
	}
	// The ports check judges (a congestion finding over ports waiting
	// without a span names them all): the gate's are among them.
	all := map[string]bool{}
	for _, s := range counterPorts(chkParse(t, out)) {
		all[s] = true
	}
	own, fromSnap = gateOnFile(t, q, "is-north-7-compute-7,is-north-7-compute-14")
	for i, d := range []*chkDoc{own, fromSnap} {
		how := []string{"own sweep", "snapshot"}[i]
		got := counterPorts(d)
		if len(got) == 0 {
			t.Errorf("%s: no counter finding on the job's hosts (check has PortXmitWait increases on them)", how)
		}
		for _, s := range got {
			if !all[s] {
				t.Errorf("%s: gate judged a port check did not: %s", how, s)
			}
		}
		// compute-7 mlx5_3's SymbolErrorCounter saturated since the
		// last clear (check's warning on it); nothing grew. The hosts'
		// mlx5_8 rail lands on the leaf without a SHARP Aggregation
		// Node (the sweep's topology.missing-sharp-an, trial C4), and
		// their routes between leaves cross the spine without one
		// (trial H2).
		sharp := len(slices.DeleteFunc(slices.Clone(d.Findings), func(f checks.Finding) bool { return f.Check != "topology.missing-sharp-an" }))
		if d.Counts["error"] != 0 || d.Counts["warning"] != 3 || sharp != 2 {
			t.Errorf("%s: %d errors, %d warnings (%d missing-sharp-an); check has three warnings on these hosts (compute-7 mlx5_3's saturated symbol errors, their mlx5_8 leaf without a SHARP Aggregation Node, the spine without one)", how, d.Counts["error"], d.Counts["warning"], sharp)
		}
	}
}

// TestGateRoutesComputed: a file without forwarding tables gets min-hop
// routes computed by ibdoctor; check says so and does not judge the
// routing engine's choices on them (routing checks not run). gate judged
// them as the fabric's: a critical routing.credit-loop on the DGX dump's
// computed routes made a 2-host gate unhealthy. The gate must say the
// routes are computed and run no routing-engine check, as check.
func TestGateRoutesComputed(t *testing.T) {
	for _, fc := range []struct{ file, corpus, nodes string }{
		{file: filepath.Join("..", "..", "fixtures", "ibnetdiscover", "hdr.txt"), nodes: "gpu001,gpu002"},
		{corpus: "dgx-ndr-2025.ibnetdiscover", nodes: "a08-p1-dgx-04-c17,a08-p1-dgx-04-c16"},
	} {
		t.Run(filepath.Base(fc.file+fc.corpus), func(t *testing.T) {
			if fc.corpus != "" {
				fc.file = corpusPath(t, fc.corpus)
			}
			own, fromSnap := gateOnFile(t, fc.file, fc.nodes)
			for i, d := range []*chkDoc{own, fromSnap} {
				how := []string{"own sweep", "snapshot"}[i]
				if !d.RoutesComputed {
					t.Errorf("%s: routes_computed false on a file without tables", how)
				}
				for _, f := range d.Findings {
					if strings.HasPrefix(f.Check, "routing.") && !f.WhatIf {
						t.Errorf("%s: %s %s judged on computed routes: %s", how, f.Severity, f.Check, f.Title)
					}
				}
				skipped := map[string]string{}
				for _, s := range d.Skipped {
					skipped[s.Check] = s.Reason
				}
				if !strings.Contains(skipped["routing.credit-loop"], "computed by ibdoctor") {
					t.Errorf("%s: routing.credit-loop skipped for %q, want the computed routes", how, skipped["routing.credit-loop"])
				}
			}
			_, out, _ := run("gate", "--sim="+fc.file, "--state-dir", filepath.Join(t.TempDir(), "s"), "--nodes", fc.nodes, "--no-color")
			if !strings.Contains(out, "Routes:") || !strings.Contains(out, "computed by ibdoctor") {
				t.Errorf("gate's header does not say the routes are computed:\n%s", out)
			}
		})
	}
}

// TestGateSnapshotOfAnotherFabric: a state dir swept from another fabric
// (the SX6036 file) and a gate talking to the sample answered "hosts not
// found in the fabric: gpu001, gpu002 (check the node descriptions...)",
// exit 2: the operator was sent to the node descriptions (trial T7). The
// gate's own port is not in that snapshot: it must say the snapshot is of
// another fabric and sweep the one it talks to, as for a stale snapshot.
func TestGateSnapshotOfAnotherFabric(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	state := filepath.Join(t.TempDir(), "state")
	other := corpusPath(t, "sx6036-fdr10-2014.ibnetdiscover")
	if code, _, stderr := run("sweep", "--sim="+other, "--state-dir", state, "--out", filepath.Join(t.TempDir(), "r.json")); code == ExitUndecided {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	code, _, stderr := run("gate", "--sim", "--state-dir", state, "--nodes", "gpu[001-002]", "--json")
	if code == ExitUndecided || strings.Contains(stderr, "hosts not found") ||
		!strings.Contains(stderr, "is of sim:sx6036-fdr10-2014.ibnetdiscover, not sim:sample") || !strings.Contains(stderr, "sweeping the fabric") {
		t.Errorf("gate from another fabric's snapshot: exit %d, stderr:\n%s\nwant the snapshot named as another fabric's and the gate's own sweep", code, stderr)
	}
}

// TestGateBaselineOfAnotherFabric: the state dir's accepted baseline is
// judged by the rule its snapshot is (one function,
// snapshot.OfAnotherFabric): a gate talking to the sample from a state
// dir swept from the SX6036 file said its snapshot was another fabric's
// and swept, yet handed that fabric's baseline to the job's checks
// without a word. It must say so and not use it, also when the snapshot
// is not used for another reason (--max-age).
func TestGateBaselineOfAnotherFabric(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	state := filepath.Join(t.TempDir(), "state")
	other := corpusPath(t, "sx6036-fdr10-2014.ibnetdiscover")
	if code, _, stderr := run("sweep", "--sim="+other, "--state-dir", state, "--out", filepath.Join(t.TempDir(), "r.json")); code == ExitUndecided {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	for _, extra := range [][]string{nil, {"--max-age", "1ns"}} {
		args := append([]string{"gate", "--sim", "--state-dir", state, "--nodes", "gpu[001-002]", "--json"}, extra...)
		code, _, stderr := run(args...)
		if code == ExitUndecided || !strings.Contains(stderr, "baseline in "+state+" is of sim:sx6036-fdr10-2014.ibnetdiscover, not sim:sample") ||
			!strings.Contains(stderr, "another fabric): not used") {
			t.Errorf("gate %v from another fabric's state dir: exit %d, stderr:\n%s\nwant the baseline named as another fabric's and not used", extra, code, stderr)
		}
	}
	// This fabric's own state dir: its baseline is used, said nothing of.
	own := filepath.Join(t.TempDir(), "own")
	if code, _, stderr := run("sweep", "--sim", "--state-dir", own, "--out", filepath.Join(t.TempDir(), "r.json")); code == ExitUndecided {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	if _, _, stderr := run("gate", "--sim", "--state-dir", own, "--nodes", "gpu[001-002]", "--json"); strings.Contains(stderr, "baseline in") {
		t.Errorf("gate on its own fabric's state dir: %s", stderr)
	}
}
