package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// A dump whose own tool recorded a timeout (switchib-sx6012-mixed-2016's
// line 1: DR path 0,1,1,31 timed out) is not a complete fabric: the report
// lists that path as unreached, says complete false, and with nothing at
// or above --fail-on check cannot vouch for it (exit 2); discover lists
// it and exits partial.
func TestFileToolErrorIsUnreached(t *testing.T) {
	f := corpusPath(t, "switchib-sx6012-mixed-2016.ibnetdiscover")
	code, out, stderr := run("check", "--json", "--fail-on", "critical", "--sim="+f)
	if code != ExitUndecided {
		t.Errorf("check --fail-on critical: exit %d, want %d (could not decide): %s", code, ExitUndecided, stderr)
	}
	var doc struct {
		Complete  bool `json:"complete"`
		Unreached []struct {
			What, Where, Reason string
		} `json:"unreached"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Complete {
		t.Errorf("complete: true for a file whose tool timed out at 0,1,1,31")
	}
	found := false
	for _, u := range doc.Unreached {
		if strings.Contains(u.Where, "path 0,1,1,31") && strings.Contains(u.Reason, "per the file's own error line") && u.What == "NodeInfo" {
			found = true
		}
	}
	if !found {
		t.Errorf("no unreached entry for path 0,1,1,31 per the file's error line: %+v", doc.Unreached)
	}
	// r-ufm96 at SDR is an error (a ConnectX-4: no board of it runs
	// below FDR, trial H13): at or above --fail-on error, so exit 1, the
	// Reached line still naming what could not be read; with
	// --fail-on critical (above) nothing reaches it, so exit 2.
	code, out, _ = run("check", "--sim="+f)
	if code != ExitFindings || !strings.Contains(out, "Reached:   1 thing could not be read") {
		t.Errorf("check: exit %d, want %d and a Reached line naming 1 thing:\n%s", code, ExitFindings, out)
	}
	code, out, _ = run("discover", "--sim="+f)
	if code != ExitPartial || strings.Contains(out, "Everything answered") || !strings.Contains(out, "NodeInfo at path 0,1,1,31 (behind SwitchIB Mellanox Technologies port 31)") {
		t.Errorf("discover: exit %d, want %d and the path listed as not reached:\n%s", code, ExitPartial, out)
	}
}

// A file whose nodes are in parts no cable joins (treydock's -p: the leaf
// part the sweep starts from, spine-IB03 with its Aggregation Node, three
// lone switches) is not reported as everything: each other part is listed
// as not reached with its nodes, discover exits partial and check cannot
// vouch for it; the warning says how many parts and which one was used.
func TestFilePartsNotCabledAreListed(t *testing.T) {
	f := corpusPath(t, "treydock-hdr.ibnetdiscover-p")
	code, out, stderr := run("discover", "--sim="+f)
	if code != ExitPartial || strings.Contains(out, "Everything answered") {
		t.Errorf("discover: exit %d, want %d, and not 'Everything answered':\n%s", code, ExitPartial, out)
	}
	for _, want := range []string{"(1 switch, 2 CAs, 0 routers)", `"5FB0406-spine-IB03", "Mellanox Technologies Aggregation Node"`, "not cabled to the part the sweep starts from"} {
		if !strings.Contains(out, want) {
			t.Errorf("discover: no %q in:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr, "the file holds 5 parts not cabled to each other") || !strings.Contains(stderr, "3 of the file's 8 nodes") {
		t.Errorf("warning does not say how many parts and which was used:\n%s", stderr)
	}
	code, out, _ = run("check", "--json", "--fail-on", "critical", "--sim="+f)
	var doc struct {
		Complete  bool `json:"complete"`
		Unreached []struct{ What, Where, Reason string }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if code != ExitUndecided || doc.Complete || len(doc.Unreached) != 4 {
		t.Errorf("check: exit %d (want %d), complete %v, unreached %+v (want the 4 other parts)", code, ExitUndecided, doc.Complete, doc.Unreached)
	}
}

// An ibsim net file that gives no rate (qnib's clos5) runs every link at
// the simulator's default 4X SDR: the report says the rates are not the
// file's, the rate checks do not run on them (check said "Leaf switch11
// is oversubscribed 4.0:1 ... (active rates)"), and links marks nothing
// even against --expect-rate.
func TestNetFileWithoutRates(t *testing.T) {
	f := corpusPath(t, "qnib-netlist.clos5")
	code, out, stderr := run("check", "--json", "--sim="+f)
	var doc struct {
		RatesNotRead string `json:"rates_not_read"`
		Findings     []struct{ Check string }
		Skipped      []struct{ Check, Reason string } `json:"checks_skipped"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("exit %d: %v: %s", code, err, stderr)
	}
	if !strings.Contains(doc.RatesNotRead, "ibsim's default 4X SDR") {
		t.Errorf("rates_not_read %q", doc.RatesNotRead)
	}
	for _, fd := range doc.Findings {
		if fd.Check == "topology.oversubscribed" || strings.HasPrefix(fd.Check, "link.") {
			t.Errorf("%s judged on the simulator's default rates", fd.Check)
		}
	}
	skipped := map[string]bool{}
	for _, s := range doc.Skipped {
		if strings.Contains(s.Reason, "link rates were not read") {
			skipped[s.Check] = true
		}
	}
	for _, id := range []string{"topology.oversubscribed", "link.degraded-width", "link.degraded-speed", "link.slower-hardware"} {
		if !skipped[id] {
			t.Errorf("%s not skipped for want of rates: %+v", id, doc.Skipped)
		}
	}
	_, out, _ = run("check", "--sim="+f)
	if !strings.Contains(out, "Rates:     qnib-netlist.clos5 (ibsim net file) gives no link rates") {
		t.Errorf("no Rates line:\n%s", out)
	}
	code, out, _ = run("links", "--sim="+f, "--expect-rate", "4xEDR")
	if code != ExitHealthy || !strings.Contains(out, "Rates: qnib-netlist.clos5") {
		t.Errorf("links --expect-rate on default rates: exit %d:\n%s", code, out)
	}
}
