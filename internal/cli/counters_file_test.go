package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCountersNotInFile: an ibnetdiscover dump carries no counters. The
// simulator built from it answers PortCounters with zeros; those zeros
// were shown as read ("2228 ports read ...: no port over threshold").
// counters must say the file has none and decide nothing; check must
// leave the counter checks not run, saying why, and read no port.
func TestCountersNotInFile(t *testing.T) {
	dgx := corpusPath(t, "dgx-ndr-2025.ibnetdiscover")
	code, out, stderr := run("counters", "--sim="+dgx)
	if code != ExitUndecided || strings.Contains(out, "no port over threshold") || !strings.Contains(stderr, "carries no counters") {
		t.Errorf("counters --sim dgx: exit %d (want %d), stdout %q, stderr %q: want the file's lack of counters said, no verdict", code, ExitUndecided, out, stderr)
	}
	if n := strings.Count(strings.TrimSpace(stderr), "\n"); n > 0 {
		t.Errorf("want one line on stderr, got:\n%s", stderr)
	}
	code, out, stderr = run("check", "--sim="+dgx, "--json")
	if code == ExitUndecided {
		t.Fatalf("check: exit %d: %s", code, stderr)
	}
	var doc struct {
		Fabric struct {
			PortsRead int `json:"ports_counters_read"`
		} `json:"fabric"`
		Skipped []struct {
			Check  string `json:"check"`
			Reason string `json:"reason"`
		} `json:"checks_skipped"`
		CountersNotRead string `json:"counters_not_read"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Fabric.PortsRead != 0 {
		t.Errorf("check read the counters of %d ports from a file that has none", doc.Fabric.PortsRead)
	}
	if !strings.Contains(doc.CountersNotRead, "carries no counters") {
		t.Errorf("counters_not_read = %q, want why", doc.CountersNotRead)
	}
	skipped := map[string]string{}
	for _, s := range doc.Skipped {
		skipped[s.Check] = s.Reason
	}
	if r := skipped["counters.errors"]; !strings.Contains(r, "carries no counters") {
		t.Errorf("counters.errors skipped for %q, want the file's lack of counters", r)
	}
	_, out, _ = run("check", "--sim="+dgx, "--no-color")
	if !strings.Contains(out, "Counters:") || !strings.Contains(out, "carries no counters") {
		t.Errorf("check's header does not say the counters were not in the file:\n%s", out)
	}
}

// TestCountersFromDBCSV: an ibdiagnet2.db_csv carries PM_INFO, the
// counters ibdiagnet read: counters and check judge those (they were not
// read, and the simulator's zeros stood in). One reading has no
// increase: --interval is refused rather than showing zero deltas.
func TestCountersFromDBCSV(t *testing.T) {
	db := corpusPath(t, "quantum2-ndr-ibdiagnet2.db_csv")
	code, out, stderr := run("counters", "--sim="+db, "--json", "--all")
	// Its warnings (counters saturated since the last clear) fail
	// counters' default --fail-on warning.
	if code != ExitFindings {
		t.Fatalf("counters: exit %d (its worst verdicts are warnings, as check's): %s", code, stderr)
	}
	var doc struct {
		Summary struct {
			PortsRead int `json:"ports_read"`
		} `json:"summary"`
		Ports []struct {
			GUID     string `json:"node_guid"`
			Port     int    `json:"port"`
			Counters []struct {
				Name  string `json:"name"`
				Value uint64 `json:"value"`
			} `json:"counters"`
		} `json:"ports"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Summary.PortsRead < 500 {
		t.Errorf("%d ports read, want PM_INFO's", doc.Summary.PortsRead)
	}
	found := false
	for _, p := range doc.Ports {
		if p.GUID == "0xb0cf0e0300d33fc0" && p.Port == 2 {
			for _, c := range p.Counters {
				if c.Name == "PortRcvSwitchRelayErrors" {
					found = c.Value == 158
				}
			}
		}
	}
	if !found {
		t.Error("0xb0cf0e0300d33fc0 port 2: PortRcvSwitchRelayErrors is not the file's 158")
	}
	code, out, stderr = run("check", "--sim="+db, "--json")
	if code == ExitUndecided {
		t.Fatalf("check: exit %d: %s", code, stderr)
	}
	var rep struct {
		Fabric struct {
			PortsRead int `json:"ports_counters_read"`
		} `json:"fabric"`
		CountersNotRead string   `json:"counters_not_read"`
		Ran             []string `json:"checks_run"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Fabric.PortsRead < 500 || rep.CountersNotRead != "" || !strings.Contains(strings.Join(rep.Ran, " "), "counters.errors") {
		t.Errorf("check: %d ports' counters read, counters_not_read %q, ran %v", rep.Fabric.PortsRead, rep.CountersNotRead, rep.Ran)
	}
	for _, cmd := range []string{"counters", "check"} {
		code, _, stderr = run(cmd, "--sim="+db, "--interval", "1s")
		if code != ExitUndecided || !strings.Contains(stderr, "one reading") {
			t.Errorf("%s --interval on a file's one reading: exit %d, %q", cmd, code, stderr)
		}
	}
}

// TestCountersNamesUnique: in the counters table a node whose
// description another node shares is named with its GUID (fabric.NameOf,
// as findings are): the Quantum-2 db_csv's eight switches all read
// "Quantum-2 Mellanox Technologies[8]" as the peer.
func TestCountersNamesUnique(t *testing.T) {
	db := corpusPath(t, "quantum2-ndr-ibdiagnet2.db_csv")
	_, out, stderr := run("counters", "--sim="+db, "--no-color")
	if !strings.Contains(out, "Quantum-2 Mellanox Technologies (0x") || strings.Contains(out, "Quantum-2 Mellanox Technologies[") {
		t.Errorf("peers named by a shared description:\n%.2000s%s", out, stderr)
	}
}

// TestCountersExitIsChecks: one judgement, one exit rule. counters exits
// 1 when a port has a verdict (checks' counters.errors or
// counters.congestion finding) at or above --fail-on, as check does with
// the same --fail-on over the same checks. The Quantum-2 db_csv's
// PortXmitWait increases without their span are info (check folds them
// into one info finding and exits 0); counters exited 1 on them ("192
// ports over threshold"), with no way to say otherwise.
func TestCountersExitIsChecks(t *testing.T) {
	topo, _ := simTopology(t)
	faults := writeFile(t, "faults", "counter leaf02/5 SymbolErrorCounter=500\ncounter leaf01/3 VL15Dropped=500\n")
	sources := map[string][]string{
		"db_csv":        {"--sim=" + corpusPath(t, "quantum2-ndr-ibdiagnet2.db_csv")},
		"sample":        {"--sim"},
		"sim faults":    {"--sim=" + topo, "--faults", faults},
		"sample faults": {"--sim", "--faults", faults},
	}
	for name, src := range sources {
		// Each source's eight runs are its own: GOMAXPROCS sources at a
		// time.
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, sev := range []string{"info", "warning", "error", "critical"} {
				ck, _, cerr := run(append([]string{"check", "--checks", "counters.errors,counters.congestion", "--fail-on", sev}, src...)...)
				cn, _, nerr := run(append([]string{"counters", "--fail-on", sev}, src...)...)
				if ck != cn {
					t.Errorf("%s --fail-on %s: check exits %d, counters %d\ncheck: %.300s\ncounters: %.300s", name, sev, ck, cn, cerr, nerr)
				}
			}
		})
	}
	// Without --fail-on counters fails on a warning: a counter over its
	// threshold, as ibqueryerrors; info (congestion, VL15 drops) is
	// listed and does not fail. The db_csv: the 192 ports waiting
	// without a span (info) and 4 more with a counter full since the
	// last clear or far above the host ports' (trial H1); 9 ports have
	// such a warning.
	db := sources["db_csv"]
	if code, out, stderr := run(append([]string{"counters", "--no-color"}, db...)...); code != ExitFindings || !strings.Contains(out, "196 ports over threshold") || !strings.Contains(out, "9 at or above --fail-on warning") {
		t.Errorf("counters db_csv: exit %d, want 1 listing 196 ports, 9 failing\n%.300s\n%s", code, out[max(0, len(out)-400):], stderr)
	}
	if code, _, stderr := run(append([]string{"counters"}, sources["sim faults"]...)...); code != ExitFindings {
		t.Errorf("counters with a symbol-error warning: exit %d, want 1: %s", code, stderr)
	}
}

// TestTopCountersNotInFile: top on an ibnetdiscover dump showed every port
// at 0 err/s, 0% wait, 0% utilisation with a clean verdict, and its JSON
// said those zeros were read from PortCountersExtended, while counters and
// check said the file has no counters (trial T10). top must say the same
// thing from the same source of truth and show no rates at all.
func TestTopCountersNotInFile(t *testing.T) {
	f := corpusPath(t, "sx6036-fdr10-2014.ibnetdiscover")
	for _, asJSON := range []bool{false, true} {
		args := []string{"top", "--sim=" + f, "--once", "-n", "300ms"}
		if asJSON {
			args = append(args, "--json")
		}
		code, out, stderr := run(args...)
		if code != ExitUndecided || strings.Contains(out, "PortCountersExtended") || strings.Contains(out, "ERR/s") ||
			!strings.Contains(stderr, "top: sx6036-fdr10-2014.ibnetdiscover (ibnetdiscover) carries no counters, so none were read") {
			t.Errorf("%v: exit %d (want %d), stdout %.300q, stderr %q: want the file's lack of counters said as counters says it, no rates shown", args, code, ExitUndecided, out, stderr)
		}
		if n := strings.Count(strings.TrimSpace(stderr), "\n"); n > 0 {
			t.Errorf("want one line on stderr, got:\n%s", stderr)
		}
	}
	// A db_csv's counters are one reading: they never move between top's
	// two reads, so its rates of zero would be invented too.
	db := corpusPath(t, "quantum2-ndr-ibdiagnet2.db_csv")
	code, out, stderr := run("top", "--sim="+db, "--once", "-n", "300ms", "--json")
	if code != ExitUndecided || strings.Contains(out, "PortCountersExtended") || !strings.Contains(stderr, "top: quantum2-ndr-ibdiagnet2.db_csv's counters are one reading (ibdiagnet2.db_csv): no rates to show") {
		t.Errorf("top --sim db_csv: exit %d (want %d), stdout %.300q, stderr %q: want the one reading said, no rates shown", code, ExitUndecided, out, stderr)
	}
}
