package perf_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/cli"
	"github.com/ibdoctor/ibdoctor/internal/ibsimtest"
	"github.com/ibdoctor/ibdoctor/internal/perf"
)

// sideNet: two switches joined by two cables, four hosts.
const sideNet = `Switch 8 "sw1" # "switch one"
[1] "h1"[1]
[2] "h2"[1]
[3] "sw2"[1]
[4] "sw2"[2]

Switch 8 "sw2" # "switch two"
[1] "sw1"[3]
[2] "sw1"[4]
[3] "h3"[1]
[4] "h4"[1]

Hca 1 "h1" # "host one HCA"
[1] "sw1"[1]

Hca 1 "h2" # "host two HCA"
[1] "sw1"[2]

Hca 1 "h3" # "host three HCA"
[1] "sw2"[3]

Hca 1 "h4" # "host four HCA"
[1] "sw2"[4]
`

// sideThresholds is one file for both tools: every counter ibqueryerrors
// compares (its default for an unlisted one is 0, ibdoctor's is
// docs/checks.md's), plus QP1Dropped, which ibqueryerrors ignores.
const sideThresholds = `# ibqueryerrors --threshold-file and ibdoctor counters --thresholds
SymbolErrorCounter=10
LinkErrorRecoveryCounter=10
LinkDownedCounter=10
PortRcvErrors=10
PortRcvRemotePhysicalErrors=100
PortRcvSwitchRelayErrors=100
PortXmitDiscards=100
PortXmitConstraintErrors=100
PortRcvConstraintErrors=100
LocalLinkIntegrityErrors=10
ExcessiveBufferOverrunErrors=10
VL15Dropped=100
PortXmitWait=1000
QP1Dropped=100
`

// sideSets are ibsim console PerformanceSet commands: values over, at
// (not over: both tools compare value > threshold) and under thresholds,
// and values past their field's width, which ibsim clamps to all-ones.
// PortXmitDiscards stays within 8 bits: ibsim 0.10's PortSelect=0xFF sum
// clamps it to 255 (internal/sim's side-by-side test), and ibqueryerrors
// reads a switch's ports only when that sum is over threshold.
var sideSets = []string{
	`"sw1"[1] PortCounters.SymbolErrorCounter=70000`,    // 16 bits: 65535, over
	`"sw1"[2] PortCounters.LinkDownedCounter=300`,       // 8 bits: 255, over
	`"sw1"[3] PortCounters.PortXmitDiscards=100`,        // at threshold: not over
	`"sw1"[4] PortCounters.LocalLinkIntegrityErrors=20`, // 4 bits: 15, over
	`"sw2"[1] PortCounters.PortXmitWait=1001`,           // over
	`"sw2"[2] PortCounters.PortXmitWait=1000`,           // at threshold
	`"sw2"[3] PortCounters.LinkErrorRecoveryCounter=10`,
	`"sw2"[3] PortCounters.ExcessiveBufferOverrunErrors=11`, // over
	`"h2"[1] PortCounters.PortRcvSwitchRelayErrors=100`,
	`"h3"[1] PortCounters.PortRcvErrors=42`, // over
	`"h3"[1] PortCounters.PortRcvRemotePhysicalErrors=5`,
	`"h4"[1] PortCounters.VL15Dropped=101`,              // over
	`"h4"[1] PortCounters.PortXmitConstraintErrors=7`,   //
	`"h4"[1] PortCounters.PortRcvConstraintErrors=4000`, // 8 bits: 255, over
	// distinct data counters, to tell the extended fields apart
	`"h4"[1] PortCountersExtended.PortXmitData=123456789`,
	`"h4"[1] PortCountersExtended.PortRcvData=987654321`,
	`"h4"[1] PortCountersExtended.PortXmitPkts=1111111`,
	`"h4"[1] PortCountersExtended.PortRcvPkts=2222222`,
	`"h4"[1] PortCountersExtended.PortUnicastXmitPkts=3333333`,
	`"h4"[1] PortCountersExtended.PortMulticastRcvPkts=44444`,
}

var sideOver = []string{
	"host four HCA/1", "host three HCA/1", "switch one/1", "switch one/2", "switch one/4", "switch two/1", "switch two/3",
}

type sideDoc struct {
	Status string `json:"status"`
	Ports  []struct {
		Node          string `json:"node"`
		NodeType      string `json:"node_type"`
		Port          int    `json:"port"`
		LID           int    `json:"lid"`
		OverThreshold bool   `json:"over_threshold"`
		Counters      []struct {
			Name      string `json:"name"`
			Kind      string `json:"kind"`
			Value     uint64 `json:"value"`
			Raw       uint64 `json:"raw"`
			Bits      int    `json:"bits"`
			Saturated bool   `json:"saturated"`
			Source    string `json:"source"`
		} `json:"counters"`
	} `json:"ports"`
	NotRead []any `json:"not_read"`
}

type sideRig struct {
	t    *testing.T
	sim  *ibsimtest.Sim
	thr  string
	host string
}

// counters runs `ibdoctor counters --all --json` against ibsim in-process.
func (r *sideRig) counters(extra ...string) (int, *sideDoc) {
	r.t.Helper()
	args := append([]string{"counters", "--ibsim=" + r.sim.SockName, "--ibsim-host", r.host, "--all", "--json", "--thresholds", r.thr}, extra...)
	var out, errb bytes.Buffer
	code := cli.Main(args, strings.NewReader(""), &out, &errb)
	var d sideDoc
	if err := json.Unmarshal(out.Bytes(), &d); err != nil {
		r.t.Fatalf("ibdoctor %v: exit %d: %v\n%s\n%s", args, code, err, out.String(), errb.String())
	}
	if len(d.NotRead) != 0 {
		r.t.Fatalf("ibdoctor could not read %v", d.NotRead)
	}
	return code, &d
}

// ibqueryerrors runs it with the same thresholds (--skip-sl: OpenSM ran
// once and its SA is gone; ibdoctor's SL 0 is what --skip-sl uses) and
// returns "description/port" of every port it reports, and its exit code.
func (r *sideRig) ibqueryerrors() ([]string, int) {
	r.t.Helper()
	out, err := r.sim.Run(r.host, "ibqueryerrors", "--skip-sl", "--threshold-file", r.thr)
	code := 0
	var te *ibsimtest.ToolError
	if errors.As(err, &te) {
		var ee interface{ ExitCode() int }
		if errors.As(te.Err, &ee) {
			code = ee.ExitCode()
		}
		out = te.Stdout
		if code != 1 {
			r.t.Fatalf("ibqueryerrors: %v", err)
		}
	} else if err != nil {
		r.t.Fatal(err)
	}
	return parseIBQueryErrors(r.t, out), code
}

var (
	iqeHeader = regexp.MustCompile(`^Errors for (?:0x[0-9a-f]+ )?"(.*)"$`)
	iqePort   = regexp.MustCompile(`^\s+GUID 0x[0-9a-f]+ port (\d+|ALL):`)
)

// parseIBQueryErrors reads ibqueryerrors' "Errors for ... / GUID ... port
// N: [Name == value]" blocks ("port ALL" lines are a switch's sum, not a
// port).
func parseIBQueryErrors(t *testing.T, out string) []string {
	t.Helper()
	var ports []string
	node := ""
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if m := iqeHeader.FindStringSubmatch(line); m != nil {
			node = m[1]
			continue
		}
		if m := iqePort.FindStringSubmatch(line); m != nil && m[1] != "ALL" {
			if node == "" {
				t.Fatalf("ibqueryerrors: port line before a node: %q", line)
			}
			ports = append(ports, node+"/"+m[1])
		}
	}
	if !strings.Contains(out, "## Summary:") {
		t.Fatalf("ibqueryerrors printed no summary:\n%s", out)
	}
	slices.Sort(ports)
	return ports
}

func overSet(d *sideDoc) []string {
	var s []string
	for _, p := range d.Ports {
		if p.OverThreshold {
			s = append(s, fmt.Sprintf("%s/%d", p.Node, p.Port))
		}
	}
	slices.Sort(s)
	return s
}

// perfquery runs perfquery [-x] for one port of the document.
func (r *sideRig) perfquery(lid, port int, ext bool) map[string]uint64 {
	args := []string{strconv.Itoa(lid), strconv.Itoa(port)}
	if ext {
		args = append([]string{"-x"}, args...)
	}
	return perf.PerfqueryValues(r.t, r.sim.MustRun(r.host, "perfquery", args...))
}

var dataNames = []string{"PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts",
	"PortUnicastXmitPkts", "PortUnicastRcvPkts", "PortMulticastXmitPkts", "PortMulticastRcvPkts"}

// TestIbsimCountersSideBySide extends TestIbsimAgainstPerfquery to the
// counters command on ibsim + OpenSM: error counters set with ibsim's
// PerformanceSet, some past their field's width, equal perfquery's for
// every port, with saturation marked; the 64-bit data counters lie between
// perfquery -x readings taken before and after (ibsim's traffic counters
// grow with every LID-routed MAD); the ports over threshold are exactly
// ibqueryerrors' with the same thresholds file; --reset clears what
// perfquery then shows, and a plain run clears nothing.
func TestIbsimCountersSideBySide(t *testing.T) {
	ibsimtest.Require(t, "perfquery", "ibqueryerrors", "opensm")
	s := ibsimtest.Start(t, sideNet)
	s.StartOpenSM(ibsimtest.OpenSMOptions{Host: "h1", Once: true})
	for _, c := range sideSets {
		if out := s.MustConsole("PerformanceSet " + c); !strings.Contains(out, "has been set") {
			t.Fatalf("PerformanceSet %s: %q", c, out)
		}
	}
	thr := filepath.Join(t.TempDir(), "thresholds")
	if err := os.WriteFile(thr, []byte(sideThresholds), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &sideRig{t: t, sim: s, thr: thr, host: "h1"}

	// A first run only finds the ports and LIDs; data counters are read
	// with perfquery -x around the second.
	_, first := r.counters()
	if len(first.Ports) != 12 {
		t.Fatalf("ibdoctor read %d ports, want 12 (8 switch ports, 4 HCA ports)", len(first.Ports))
	}
	before := map[string]map[string]uint64{}
	for _, p := range first.Ports {
		before[fmt.Sprintf("%s/%d", p.Node, p.Port)] = r.perfquery(p.LID, p.Port, true)
	}
	code, doc := r.counters()
	if code != cli.ExitFindings || doc.Status != "over_threshold" {
		t.Errorf("ibdoctor exit %d status %q, want 1 over_threshold", code, doc.Status)
	}

	compared, saturated := 0, 0
	for _, p := range doc.Ports {
		key := fmt.Sprintf("%s/%d", p.Node, p.Port)
		pq := r.perfquery(p.LID, p.Port, false)
		pqx := r.perfquery(p.LID, p.Port, true)
		got := map[string]uint64{}
		for _, c := range p.Counters {
			got[c.Name] = c.Raw
			switch c.Kind {
			case "error", "wait_ticks":
				w, ok := pq[c.Name]
				if !ok {
					t.Errorf("%s: perfquery printed no %s", key, c.Name)
					continue
				}
				if c.Value != w {
					t.Errorf("%s %s: ibdoctor %d, perfquery %d", key, c.Name, c.Value, w)
				}
				if c.Source != "PortCounters" {
					t.Errorf("%s %s from %s: ibsim has no 64-bit error counters (CapabilityMask2 0)", key, c.Name, c.Source)
				}
				if max := uint64(1)<<c.Bits - 1; c.Saturated != (c.Value == max) {
					t.Errorf("%s %s = %d (%d bits): saturated %v", key, c.Name, c.Value, c.Bits, c.Saturated)
				}
				if c.Saturated {
					saturated++
				}
				compared++
			case "data_octets", "packets":
				lo, hi := before[key][c.Name], pqx[c.Name]
				if c.Source != "PortCountersExtended" || c.Bits != 64 {
					t.Errorf("%s %s from %s (%d bits), want the 64-bit extended counter", key, c.Name, c.Source, c.Bits)
				}
				if c.Raw < lo || c.Raw > hi {
					t.Errorf("%s %s: ibdoctor %d, perfquery -x %d before and %d after", key, c.Name, c.Raw, lo, hi)
				}
				if c.Kind == "data_octets" && c.Value != 4*c.Raw {
					t.Errorf("%s %s: %d octets from %d words", key, c.Name, c.Value, c.Raw)
				}
				compared++
			}
		}
		for _, n := range dataNames {
			if _, ok := got[n]; !ok {
				t.Errorf("%s: ibdoctor has no %s (perfquery -x %d)", key, n, pqx[n])
			}
		}
		if key == "host four HCA/1" {
			if v := got["PortXmitData"]; v < 123456789 || v > 123456789+100000 {
				t.Errorf("h4 PortXmitData %d, set to 123456789", v)
			}
			if v := got["PortRcvData"]; v < 987654321 || v > 987654321+100000 {
				t.Errorf("h4 PortRcvData %d, set to 987654321", v)
			}
		}
	}
	if saturated != 4 {
		t.Errorf("%d saturated counters, want 4 (SymbolErrorCounter, LinkDownedCounter, LocalLinkIntegrityErrors, PortRcvConstraintErrors)", saturated)
	}
	if compared < 12*13 {
		t.Errorf("only %d counters compared", compared)
	}

	theirs, iqeCode := r.ibqueryerrors()
	ours := overSet(doc)
	if !slices.Equal(ours, theirs) {
		t.Errorf("over threshold:\n  ibdoctor      %v\n  ibqueryerrors %v", ours, theirs)
	}
	if !slices.Equal(ours, sideOver) {
		t.Errorf("over threshold: ibdoctor %v, want %v", ours, sideOver)
	}
	if iqeCode != 1 {
		t.Errorf("ibqueryerrors exit %d", iqeCode)
	}
	t.Logf("%d counters of %d ports equal perfquery (%d saturated) or lie within perfquery -x; over threshold for both tools: %v", compared, len(doc.Ports), saturated, theirs)

	// Without --all, clean switches are read with one PortSelect=0xFF
	// query each (ibqueryerrors' plan): the same ports are over threshold.
	if code, d := r.counters("--all=false"); code != cli.ExitFindings || !slices.Equal(overSet(d), sideOver) || len(d.Ports) != len(sideOver) {
		t.Errorf("default plan: exit %d, over %v, %d ports listed", code, overSet(d), len(d.Ports))
	}

	// --reset errors reads (and so still reports), then clears the error
	// counters: perfquery shows zeros, the data counters stay.
	if code, d := r.counters("--reset", "errors"); code != cli.ExitFindings || !slices.Equal(overSet(d), sideOver) {
		t.Errorf("--reset errors: exit %d, over %v", code, overSet(d))
	}
	for _, p := range doc.Ports {
		pq := r.perfquery(p.LID, p.Port, false)
		for _, c := range p.Counters {
			if c.Kind == "error" && pq[c.Name] != 0 {
				t.Errorf("after --reset errors %s/%d %s = %d", p.Node, p.Port, c.Name, pq[c.Name])
			}
		}
		if p.Node == "host four HCA" {
			if v := r.perfquery(p.LID, p.Port, true)["PortXmitData"]; v < 123456789 {
				t.Errorf("--reset errors cleared PortXmitData (now %d)", v)
			}
		}
	}
	// PortXmitWait too (CounterSelect2, which ibsim honours): nothing is
	// over threshold for either tool any more.
	code, d := r.counters()
	theirs, iqeCode = r.ibqueryerrors()
	if !slices.Equal(overSet(d), theirs) || len(theirs) != 0 || code != 0 || iqeCode != 0 {
		t.Errorf("after --reset errors: ibdoctor %v (exit %d), ibqueryerrors %v (exit %d), want none over", overSet(d), code, theirs, iqeCode)
	}

	// --reset all clears the data counters too.
	r.counters("--reset", "all")
	for _, p := range doc.Ports {
		if p.Node == "host four HCA" {
			if v := r.perfquery(p.LID, p.Port, true)["PortXmitData"]; v >= 123456789 {
				t.Errorf("--reset all left PortXmitData at %d", v)
			}
		}
	}
}
