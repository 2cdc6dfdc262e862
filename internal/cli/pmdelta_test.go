package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

type pmFinding struct {
	Check    string         `json:"check"`
	Severity string         `json:"severity"`
	Title    string         `json:"title"`
	Basis    string         `json:"basis"`
	Entities []judgedEntity `json:"entities"`
}

type pmReport struct {
	Findings      []pmFinding `json:"findings"`
	CountersBasis string      `json:"counters_basis"`
}

func checkJSON(t *testing.T, file string) pmReport {
	t.Helper()
	code, out, stderr := run("check", "--sim="+file, "--json")
	if code == ExitUndecided {
		t.Fatalf("check --sim=%s: exit %d: %s", file, code, stderr)
	}
	var rep pmReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// An ibdiagnet2.db_csv's PM_DELTA is what each counter grew during
// ibdiagnet's run: the counter checks judge that increase (as they judge
// an --interval's), not PM_INFO's values since an unknown clear, and the
// report says so once. testdata/pmdelta.db_csv (written for it): the
// host's symbol errors grew by 5 (a finding on the increase), the switch
// port waited 3000 ticks (congestion, on the increase); PM_INFO's history
// (40 link-downs, 20 receive errors, 500 symbol errors, 5000000 ticks
// waited) did not move and is no finding. Before, the absolute values
// were judged (2 errors, 1 warning, 1 info, all "absolute").
func TestCheckJudgesPMDelta(t *testing.T) {
	rep := checkJSON(t, filepath.Join("..", "fabric", "testdata", "pmdelta.db_csv"))
	var got []string
	for _, f := range rep.Findings {
		if strings.HasPrefix(f.Check, "counters.") {
			got = append(got, f.Check+" "+f.Severity+" "+f.Basis+": "+f.Title)
		}
	}
	want := []string{"counters.errors warning delta", "counters.congestion info delta"}
	ok := len(got) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = strings.HasPrefix(got[i], want[i])
	}
	if !ok {
		t.Errorf("counter findings:\n  %s\nwant %q (symbol errors +5 on the host, 3000 ticks waited on the switch port)", strings.Join(got, "\n  "), want)
	}
	if len(got) == 2 && (!strings.Contains(got[0], "SymbolErrorCounter") || !strings.Contains(got[0], "+5") || !strings.Contains(got[1], "3000")) {
		t.Errorf("findings do not name the increases: %q", got)
	}
	if !strings.Contains(rep.CountersBasis, "PM_DELTA") || !strings.Contains(rep.CountersBasis, "not in the file") {
		t.Errorf("counters_basis %q: want the increase during the run (PM_DELTA) and its span not in the file", rep.CountersBasis)
	}
	_, out, _ := run("check", "--sim="+filepath.Join("..", "fabric", "testdata", "pmdelta.db_csv"), "--no-color")
	if !strings.Contains(out, "Counters:") || !strings.Contains(out, "PM_DELTA") {
		t.Errorf("check's header does not say what the counters are:\n%s", out)
	}
}

// The Quantum-2 ibdiagnet capture: PM_INFO holds years of history (host
// links downed 15-102 times, receive errors), PM_DELTA shows nothing
// failing during the run. check judged the history: 200 errors, 72
// warnings, 791 info. On the increases no error counter grew; congestion
// is judged on the PortXmitWait increases, never on the absolute values:
// 192 ports over the count threshold, without the run's length, are one
// info finding naming them all (it was 192 findings).
//
// The history was then never mentioned, saturated counters included
// (is-north-7-compute-7 mlx5_3 SymbolErrorCounter=65535 beside
// PortRcvErrors=35549, compute-8 mlx5_0 PortRcvErrors=65535): this test
// wanted no counters.errors finding. A value since the clear that reached
// the top of its PortCounters field is now judged (warning; info for an
// info counter), the smaller history still not: the 9 below, each "since
// the last clear", none an error, check still healthy.
func TestCheckQuantum2PMDelta(t *testing.T) {
	rep := checkJSON(t, corpusPath(t, "quantum2-ndr-ibdiagnet2.db_csv"))
	by := map[string]int{}
	congested := 0
	var history []string
	for _, f := range rep.Findings {
		if !strings.HasPrefix(f.Check, "counters.") {
			continue
		}
		by[f.Check]++
		if f.Check == "counters.congestion" {
			congested += len(f.Entities)
			if f.Severity != "info" || !strings.Contains(f.Title, "192 ports") || !strings.Contains(f.Title, "4026 ticks") {
				t.Errorf("congestion finding %s %q: want info, the 192 ports and the largest increase", f.Severity, f.Title)
			}
		}
		switch {
		case f.Basis == "absolute" && f.Check == "counters.errors":
			if !strings.Contains(f.Title, "since the last clear") || !strings.HasSuffix(f.Title, "; not growing while sampled") {
				t.Errorf("history finding does not say it is since the clear and not growing: %s", f.Title)
			}
			name, _, _ := strings.Cut(f.Title, " (to ")
			history = append(history, f.Severity+" "+name)
		case f.Basis != "delta":
			t.Errorf("a finding on the %s basis: %s", f.Basis, f.Title)
		}
	}
	slices.Sort(history)
	// One finding per port (trial H6): its counters since the clear,
	// the most telling first, with its link-downs; the physical-layer
	// counts far above the host ports' (242 of 256 read 0) are judged
	// too (trial H1).
	want := []string{
		"info PortRcvSwitchRelayErrors = 91778 on Quantum-2 Mellanox Technologies (0xfc6a1c03008a5c00)/12",
		"warning SymbolErrorCounter 11160 and PortRcvErrors saturated (at least 65535) on is-north-7-compute-8 mlx5_0/1",
		"warning SymbolErrorCounter = 23817 on is-north-7-compute-5 mlx5_3/1",
		"warning SymbolErrorCounter = 2497 on is-north-7-compute-20 mlx5_1/1",
		"warning SymbolErrorCounter = 44375 on is-north-7-compute-24 mlx5_10/1",
		"warning SymbolErrorCounter saturated (at least 65535) and PortRcvErrors 35549 on is-north-7-compute-7 mlx5_3/1",
		"warning SymbolErrorCounter saturated (at least 65535) and PortRcvErrors 6258 on is-north-7-compute-1 mlx5_3/1",
		"warning SymbolErrorCounter saturated (at least 65535), PortRcvErrors 1436771, PortXmitDiscards 111911 and 55 link-downs on is-north-7-compute-27 mlx5_11/1",
		"warning SymbolErrorCounter saturated on is-north-7-compute-10 mlx5_0/1",
		"warning SymbolErrorCounter saturated on is-north-7-compute-25 mlx5_9/1",
	}
	if !slices.Equal(history, want) {
		t.Errorf("findings on the values since the clear:\n  %s\nwant:\n  %s", strings.Join(history, "\n  "), strings.Join(want, "\n  "))
	}
	if by["counters.congestion"] != 1 || congested != 192 {
		t.Errorf("%d counters.congestion findings naming %d ports, want 1 naming 192 (PortXmitWait increases over 1000 ticks, no span)", by["counters.congestion"], congested)
	}
}

// 'ibdoctor counters' gives check's verdict (one judgement): on a db_csv
// with PM_DELTA a port is over threshold for what grew during the run
// (the host's symbol errors +5, not its 500 since the clear, nor its 20
// receive errors), while the values since the last clear are still what
// it lists (LinkDownedCounter 40 on the switch port).
func TestCountersJudgesPMDelta(t *testing.T) {
	code, out, stderr := run("counters", "--sim="+filepath.Join("..", "fabric", "testdata", "pmdelta.db_csv"), "--json", "--all")
	if code != ExitFindings {
		t.Fatalf("counters: exit %d: %s", code, stderr)
	}
	var doc struct {
		Basis   string `json:"basis"`
		Summary struct {
			Over int `json:"ports_over_threshold"`
		} `json:"summary"`
		Ports []struct {
			Node     string `json:"node"`
			Exceeded []struct {
				Name  string `json:"name"`
				Value uint64 `json:"value"`
			} `json:"exceeded"`
			Counters []struct {
				Name  string `json:"name"`
				Value uint64 `json:"value"`
			} `json:"counters"`
		} `json:"ports"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Basis != "delta" || doc.Summary.Over != 2 {
		t.Errorf("basis %q, %d ports over threshold; want delta, 2", doc.Basis, doc.Summary.Over)
	}
	for _, p := range doc.Ports {
		var over []string
		for _, e := range p.Exceeded {
			over = append(over, fmt.Sprintf("%s %d", e.Name, e.Value))
		}
		values := map[string]uint64{}
		for _, c := range p.Counters {
			values[c.Name] = c.Value
		}
		switch p.Node {
		case "h mlx5_0":
			if strings.Join(over, ",") != "SymbolErrorCounter 5" {
				t.Errorf("host over threshold for %q, want the increase SymbolErrorCounter 5", over)
			}
		case "sw":
			if strings.Join(over, ",") != "PortXmitWait 3000" {
				t.Errorf("switch port over threshold for %q, want the increase PortXmitWait 3000", over)
			}
			if values["LinkDownedCounter"] != 40 {
				t.Errorf("switch port's LinkDownedCounter listed as %d, want PM_INFO's 40", values["LinkDownedCounter"])
			}
		}
	}
}

// Without PM_DELTA there is no increase: a db_csv's PM_INFO alone is
// judged on its values, as before (testdata/pmdelta.db_csv with its
// PM_DELTA section cut: the history is all there is to go on).
func TestCheckPMInfoOnlyIsAbsolute(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "fabric", "testdata", "pmdelta.db_csv"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	i := strings.Index(s, "START_PM_DELTA")
	if i < 0 {
		t.Fatal("no START_PM_DELTA in pmdelta.db_csv")
	}
	path := filepath.Join(t.TempDir(), "ibdiagnet2.db_csv")
	if err := os.WriteFile(path, []byte(s[:i]), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := checkJSON(t, path)
	var got []string
	for _, f := range rep.Findings {
		if strings.HasPrefix(f.Check, "counters.") {
			got = append(got, f.Basis+": "+f.Title)
			if f.Basis != "absolute" {
				t.Errorf("finding on the %s basis without PM_DELTA: %s", f.Basis, f.Title)
			}
		}
	}
	if len(got) != 4 || rep.CountersBasis != "" {
		t.Errorf("counter findings %q, counters_basis %q: want 4 on the values (LinkDowned 40, PortRcvErrors 20, SymbolErrorCounter 500, PortXmitWait 5000000) and no basis note", got, rep.CountersBasis)
	}
}
