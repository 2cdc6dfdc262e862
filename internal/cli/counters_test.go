package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/capture"
	"github.com/ibdoctor/ibdoctor/mad"
)

// countersNet is a small fabric as an ibsim net file (which --sim reads):
// two switches, three hosts.
const countersNet = `Switch 4 "sw1" # "switch one"
[1] "h1"[1]
[2] "h2"[1]
[3] "sw2"[1]

Switch 4 "sw2" # "switch two"
[1] "sw1"[3]
[2] "h3"[1]

Hca 1 "h1" # "host one HCA"
[1] "sw1"[1]

Hca 1 "h2" # "host two HCA"
[1] "sw1"[2]

Hca 1 "h3" # "host three HCA"
[1] "sw2"[2]
`

// countersFaults sets error counters against the default thresholds
// (docs/checks.md): over, exactly at (not over: the comparison is >), and
// below.
const countersFaults = `counter "switch one"/1 SymbolErrorCounter=70000 VL15Dropped=3
counter "switch one"/3 PortXmitDiscards=100
counter "switch two"/1 PortXmitDiscards=101 LinkDownedCounter=2
counter "host three HCA" PortRcvErrors=11
counter "host two HCA" PortXmitWait=1000
counter "host one HCA" PortXmitWait=1001
`

type jsonDoc struct {
	Schema     string         `json:"schema"`
	Basis      string         `json:"basis"`
	Reset      string         `json:"reset"`
	Status     string         `json:"status"`
	RawSummary map[string]int `json:"summary"`
	Ports      []struct {
		Node          string `json:"node"`
		Port          int    `json:"port"`
		LID           int    `json:"lid"`
		OverThreshold bool   `json:"over_threshold"`
		Peer          *struct {
			Node string `json:"node"`
			Port int    `json:"port"`
		} `json:"peer"`
		Exceeded []struct {
			Name      string  `json:"name"`
			Value     uint64  `json:"value"`
			Threshold float64 `json:"threshold"`
			Figure    float64 `json:"figure"`
			PerSecond float64 `json:"per_second"`
		} `json:"exceeded"`
		Counters []struct {
			Name  string `json:"name"`
			Value uint64 `json:"value"`
			Bits  int    `json:"bits"`
		} `json:"counters"`
		Delta *struct {
			ElapsedSeconds  float64  `json:"elapsed_seconds"`
			XmitUtilization *float64 `json:"xmit_utilization"`
			BER             float64  `json:"ber"`
		} `json:"delta"`
	} `json:"ports"`
	NotRead []struct{ What, Where, Reason string } `json:"not_read"`
}

func parseDoc(t *testing.T, out string) *jsonDoc {
	t.Helper()
	var d jsonDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if d.Schema != CountersSchema {
		t.Fatalf("schema %q", d.Schema)
	}
	return &d
}

func portSet(d *jsonDoc, over bool) []string {
	var s []string
	for _, p := range d.Ports {
		if !over || p.OverThreshold {
			s = append(s, p.Node+"/"+strconv.Itoa(p.Port))
		}
	}
	slices.Sort(s)
	return s
}

// TestCountersOverThreshold reads the simulated fabric's counters through
// the command and checks the ports over the default thresholds: strictly
// greater, PortXmitWait against its own threshold, values as set.
func TestCountersOverThreshold(t *testing.T) {
	topo := writeFile(t, "fabric.net", countersNet)
	faults := writeFile(t, "faults.txt", countersFaults)
	code, out, stderr := run("counters", "--sim="+topo, "--faults", faults, "--json")
	if code != ExitFindings {
		t.Fatalf("exit %d, want 1: %s", code, stderr)
	}
	d := parseDoc(t, out)
	want := []string{"host one HCA/1", "host three HCA/1", "switch one/1", "switch two/1"}
	if got := portSet(d, true); !slices.Equal(got, want) {
		t.Errorf("over threshold: %v, want %v", got, want)
	}
	if len(d.Ports) != len(want) {
		t.Errorf("without --all, %d ports listed, want only the %d over threshold", len(d.Ports), len(want))
	}
	if d.Status != "over_threshold" || d.Basis != "absolute" || d.Reset != "none" || d.RawSummary["ports_read"] != 8 || d.RawSummary["ports_over_threshold"] != 4 {
		t.Errorf("status %q basis %q reset %q summary %v", d.Status, d.Basis, d.Reset, d.RawSummary)
	}
	for _, p := range d.Ports {
		var names []string
		for _, e := range p.Exceeded {
			names = append(names, e.Name+"="+strconv.FormatUint(e.Value, 10))
		}
		got := strings.Join(names, " ")
		var exp string
		switch p.Node + "/" + strconv.Itoa(p.Port) {
		case "switch one/1":
			exp = "SymbolErrorCounter=70000" // VL15Dropped=3 is below 100
			if p.Peer == nil || p.Peer.Node != "host one HCA" || p.Peer.Port != 1 || p.LID == 0 {
				t.Errorf("switch one/1: peer %+v LID %d", p.Peer, p.LID)
			}
		case "switch two/1":
			exp = "PortXmitDiscards=101" // LinkDownedCounter=2 below 10
		case "host three HCA/1":
			exp = "PortRcvErrors=11"
		case "host one HCA/1":
			exp = "PortXmitWait=1001" // host two's 1000 is not over 1000
		}
		if got != exp {
			t.Errorf("%s/%d exceeded %q, want %q", p.Node, p.Port, got, exp)
		}
	}

	// By default a clean switch is read with one all-ports query; reading
	// every port finds the same ports over threshold.
	code, out2, _ := run("counters", "--sim="+topo, "--faults", faults, "--json", "--skip-clean-switches=false")
	if d2 := parseDoc(t, out2); code != ExitFindings || !slices.Equal(portSet(d2, true), want) {
		t.Errorf("every port read: exit %d, over %v", code, portSet(d2, true))
	}

	// The table says the same, ibqueryerrors-style.
	code, out, _ = run("counters", "--sim="+topo, "--faults", faults)
	if code != ExitFindings {
		t.Fatalf("table: exit %d", code)
	}
	for _, s := range []string{"[SymbolErrorCounter == 70000]", "VL15Dropped=3", "[PortXmitDiscards == 101]", "LinkDownedCounter=2",
		"[PortRcvErrors == 11]", "[PortXmitWait == 1001]", "8 ports read on 5 nodes", "4 ports over threshold on 4 nodes"} {
		if !strings.Contains(out, s) {
			t.Errorf("table lacks %q:\n%s", s, out)
		}
	}
	if strings.Contains(out, "switch one  3") || strings.Contains(out, "host two HCA") {
		t.Errorf("a port at its threshold is listed:\n%s", out)
	}

	// --all lists every port read, with data columns.
	code, out, _ = run("counters", "--sim="+topo, "--faults", faults, "--all")
	if code != ExitFindings || strings.Count(out, "\n") < 8+3 || !strings.Contains(out, "XMIT PKTS") || !strings.Contains(out, "host two HCA") {
		t.Errorf("--all: exit %d\n%s", code, out)
	}

	// Thresholds from a file (ibqueryerrors' format): raised so that
	// nothing is over, the exit status is 0.
	thr := writeFile(t, "thresholds", "# as ibqueryerrors --threshold-file\nSymbolErrorCounter=70000\nPortXmitDiscards=101\nPortRcvErrors=11\nPortXmitWait=1001\n")
	code, out, stderr = run("counters", "--sim="+topo, "--faults", faults, "--thresholds", thr, "--json")
	if code != ExitHealthy {
		t.Fatalf("raised thresholds: exit %d: %s", code, stderr)
	}
	if d := parseDoc(t, out); len(d.Ports) != 0 || d.Status != "ok" {
		t.Errorf("raised thresholds: %v status %q", portSet(d, false), d.Status)
	}
}

// TestCountersInterval samples twice: a counter growing at 50/s is over
// its delta threshold, with its rate and a BER; one set once is not.
func TestCountersInterval(t *testing.T) {
	topo := writeFile(t, "fabric.net", countersNet)
	faults := writeFile(t, "faults.txt", `counter "switch one"/2 SymbolErrorCounter=+50/s
counter "switch two"/2 LinkDownedCounter=40
`)
	code, out, stderr := run("counters", "--sim="+topo, "--faults", faults, "--interval", "1s", "--json", "--all")
	if code != ExitFindings {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	d := parseDoc(t, out)
	if d.Basis != "delta" || len(d.Ports) != 8 {
		t.Fatalf("basis %q, %d ports", d.Basis, len(d.Ports))
	}
	if got := portSet(d, true); !slices.Equal(got, []string{"switch one/2"}) {
		t.Fatalf("over threshold: %v", got)
	}
	for _, p := range d.Ports {
		if p.Delta == nil || p.Delta.ElapsedSeconds < 0.9 {
			t.Fatalf("%s/%d: delta %+v", p.Node, p.Port, p.Delta)
		}
		if !p.OverThreshold {
			continue
		}
		var sym, ber bool
		for _, e := range p.Exceeded {
			switch e.Name {
			case "SymbolErrorCounter":
				sym = true
				if rate := float64(e.Value) / p.Delta.ElapsedSeconds; rate < 40 || rate > 60 || e.PerSecond < 40 || e.PerSecond > 60 {
					t.Errorf("SymbolErrorCounter +%d in %.2fs (%.1f/s), want about 50/s", e.Value, p.Delta.ElapsedSeconds, e.PerSecond)
				}
			case "BER":
				ber = true
				if e.Figure <= 1e-12 {
					t.Errorf("BER %g", e.Figure)
				}
			}
		}
		if !sym || !ber || p.Delta.BER <= 0 {
			t.Errorf("exceeded %+v", p.Exceeded)
		}
	}
}

// TestCountersSample is the documented demo: the built-in sample fabric's
// symbol errors climb on spine02/49 (+40/s) and leaf02/35 (+6/s).
func TestCountersSample(t *testing.T) {
	code, out, stderr := run("counters", "--sim", "--interval", "1s")
	if code != ExitFindings {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	for _, want := range []string{"spine02", "leaf02"} {
		found := false
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), want) && strings.Contains(line, "[SymbolErrorCounter +") {
				found = true
			}
		}
		if !found {
			t.Errorf("no climbing SymbolErrorCounter on %s:\n%s", want, out)
		}
	}
}

// madsIn reads a capture and returns its PerfMgt MADs' methods and the SL
// of each packet.
func madsIn(t *testing.T, path string) (methods []mad.Method, sls []uint8) {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	r, err := capture.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	for {
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if mad.Class(f.MAD[1]) == mad.ClassPerfMgt {
			methods = append(methods, mad.Method(f.MAD[3]))
			sls = append(sls, f.SL)
		}
	}
}

// TestCountersResetWrites checks on the wire (--pcap) that counters sends
// no Set without --reset, and PortCounters Sets for every port with it;
// and that --sl reaches the PerfMgt packets.
func TestCountersResetWrites(t *testing.T) {
	topo := writeFile(t, "fabric.net", countersNet)
	// A net file carries no counters: a --faults scenario plants some
	// (below threshold), so there are counters to read and clear.
	scenario := writeFile(t, "faults.txt", "counter \"host one HCA\" PortXmitWait=1\n")
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.pcap")
	if code, _, stderr := run("counters", "--sim="+topo, "--faults", scenario, "--pcap", plain, "--sl", "3"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	methods, sls := madsIn(t, plain)
	if len(methods) == 0 {
		t.Fatal("no PerfMgt MAD captured")
	}
	reqs := 0
	for i, m := range methods {
		if m.Request() == m {
			reqs++
		}
		if m == mad.MethodSet {
			t.Errorf("a PerfMgt Set was sent without --reset")
		}
		if m.Request() == m && sls[i] != 3 {
			t.Errorf("PerfMgt packet on SL %d, want --sl 3", sls[i])
			break
		}
	}

	if reqs < 8 {
		t.Errorf("%d PerfMgt requests captured, want at least one per port", reqs)
	}

	reset := filepath.Join(dir, "reset.pcap")
	code, out, stderr := run("counters", "--sim="+topo, "--faults", scenario, "--pcap", reset, "--reset", "errors")
	if code != 0 {
		t.Fatalf("--reset errors: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "Cleared the error counters of 8 ports") {
		t.Errorf("--reset errors:\n%s", out)
	}
	methods, _ = madsIn(t, reset)
	sets := 0
	for _, m := range methods {
		if m == mad.MethodSet {
			sets++
		}
	}
	if sets != 8 {
		t.Errorf("--reset errors sent %d Sets, want one per port read (8)", sets)
	}
}

// TestCountersBadInput: what cannot be decided exits 2.
func TestCountersBadInput(t *testing.T) {
	topo := writeFile(t, "fabric.net", countersNet)
	bad := writeFile(t, "thr", "NoSuchCounter=3\n")
	for _, args := range [][]string{
		{"counters", "--sim=" + topo, "--reset", "everything"},
		{"counters", "--sim=" + topo, "--thresholds", filepath.Join(t.TempDir(), "missing")},
		{"counters", "--sim=" + topo, "--thresholds", bad},
		{"counters", "--sim=" + topo, "--interval", "-1s"},
	} {
		if code, _, stderr := run(args...); code != ExitUndecided || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// TestCountersPartial: a host whose agents never answer cannot be read;
// the command still prints what it read and exits 3.
func TestCountersPartial(t *testing.T) {
	topo := writeFile(t, "fabric.net", countersNet)
	faults := writeFile(t, "faults.txt", "dead \"host three HCA\"\n")
	code, out, stderr := run("counters", "--sim="+topo, "--faults", faults, "--timeout", deadTimeout, "--retries", "0", "--json")
	if code != ExitPartial {
		t.Fatalf("exit %d, want 3: %s", code, stderr)
	}
	d := parseDoc(t, out)
	if d.Status != "partial" || len(d.NotRead) == 0 || !strings.Contains(stderr, "Could not read") || strings.Contains(stderr, " of path ") {
		t.Errorf("status %q not_read %v stderr %q", d.Status, d.NotRead, stderr)
	}
	// the switch port facing the dead host is read through the switch's PMA
	if d.RawSummary["ports_read"] != 7 {
		t.Errorf("%d ports read, want all 7 but the dead host's", d.RawSummary["ports_read"])
	}
}

// TestCountersJSONIndented checks that the streamed `counters --json`
// output is byte for byte what encoding/json's Encoder with a two-space
// indent makes of the same document (Indent of its compact form, then a
// newline), with many ports (--all), with one, and with none.
func TestCountersJSONIndented(t *testing.T) {
	topo := writeFile(t, "fabric.net", countersNet)
	faults := writeFile(t, "faults.txt", `counter "switch one"/2 SymbolErrorCounter=500
`)
	for _, tc := range []struct {
		args  []string
		ports int
	}{
		{[]string{"--all"}, 8},
		{nil, 1},
		{[]string{"--thresholds", writeFile(t, "thr.txt", "SymbolErrorCounter=1000\n")}, 0},
	} {
		args := append([]string{"counters", "--sim=" + topo, "--faults", faults, "--json"}, tc.args...)
		_, out, stderr := run(args...)
		var compact, want bytes.Buffer
		if err := json.Compact(&compact, []byte(out)); err != nil {
			t.Fatalf("%v: not JSON: %v\n%s%s", tc.args, err, out, stderr)
		}
		if err := json.Indent(&want, compact.Bytes(), "", "  "); err != nil {
			t.Fatal(err)
		}
		want.WriteByte('\n')
		if out != want.String() {
			t.Errorf("%v: output is not the Encoder's indentation:\n%s\nwant:\n%s", tc.args, out, want.String())
		}
		if d := parseDoc(t, out); len(d.Ports) != tc.ports {
			t.Errorf("%v: %d ports, want %d", tc.args, len(d.Ports), tc.ports)
		}
	}
}
