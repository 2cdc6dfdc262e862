package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// corpusPath returns a public fabric dump from ../shared/external-fabrics/
// (SOURCES.md there); skipped when absent, failing with CI=true.
func corpusPath(t *testing.T, name string) string {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	p := filepath.Join(filepath.Dir(here), "..", "..", "..", "shared", "external-fabrics", name)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("corpus file %s missing (CI=true): %v", name, err)
		}
		t.Skipf("corpus file %s not here (%v); it lives in ../shared/external-fabrics/", name, err)
	}
	return p
}

// corpusLoadable lists the corpus files 'ibdoctor --sim FILE' reads today.
var corpusLoadable = []string{
	"dgx-ndr-2025.ibnetdiscover",
	"quantum2-ndr-ibdiagnet2.ibnetdiscover",
	"sx6036-fdr10-2014.ibnetdiscover",
	"switchib-sx6012-mixed-2016.ibnetdiscover",
	"voltaire-sdr-2007.ibnetdiscover",
	"mt43132-sdr-2009.ibnetdiscover",
	"sun-dcs36-qdr.ibnetdiscover",
	"ibsim-net.2sw2path4hca2port",
	"qnib-netlist.clos5",
	"avakas-qlogic-qdr.ibnetdiscover-v-p",
	"plafrim-voltaire-qdr.ibnetdiscover-p",
	"plafrim2-is5030.ibnetdiscover-p",
	"plafrim2-qlogic-ts.ibnetdiscover-p",
	"treydock-hdr.ibnetdiscover-p",
}

type judgedEntity struct {
	GUID string `json:"node_guid"`
	Port int    `json:"port"`
}

func (e judgedEntity) key() string { return fmt.Sprintf("%s/%d", strings.ToLower(e.GUID), e.Port) }

func linkKey(a, b string) string {
	if b < a {
		a, b = b, a
	}
	return a + " - " + b
}

// judged runs check, links and counters over the same source and returns
// what each marks: links (by both ends) and ports.
func judged(t *testing.T, src ...string) (checkLinks, linksLinks, checkPorts, countersPorts []string) {
	t.Helper()
	code, out, stderr := run(append([]string{"check", "--json"}, src...)...)
	var doc struct {
		// Complete false with exit 2 is a report that could not
		// decide (a file with parts not cabled to the sweep's), not
		// a failure.
		Complete *bool `json:"complete"`
		Findings []struct {
			Check    string         `json:"check"`
			Entities []judgedEntity `json:"entities"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("check %v: exit %d: --json: %v: %s", src, code, err, stderr)
	}
	if code == ExitUndecided && (doc.Complete == nil || *doc.Complete) {
		t.Fatalf("check %v: exit %d: %s", src, code, stderr)
	}
	for _, f := range doc.Findings {
		switch {
		case strings.HasPrefix(f.Check, "link.degraded-"):
			k := linkKey(f.Entities[0].key(), f.Entities[1].key())
			if !slices.Contains(checkLinks, k) {
				checkLinks = append(checkLinks, k)
			}
		case f.Check == "counters.errors" || f.Check == "counters.congestion":
			k := f.Entities[0].key()
			if !slices.Contains(checkPorts, k) {
				checkPorts = append(checkPorts, k)
			}
		}
	}
	code, ldoc, stderr := linksJSON(t, without(src, "--interval")...)
	if code == ExitUndecided {
		t.Fatalf("links %v: exit %d: %s", src, code, stderr)
	}
	for _, l := range ldoc.Links {
		if l.Degraded {
			linksLinks = append(linksLinks, linkKey(fmt.Sprintf("%s/%d", l.A.GUID, l.A.Port), fmt.Sprintf("%s/%d", l.B.GUID, l.B.Port)))
		}
	}
	code, out, stderr = run(append([]string{"counters", "--json"}, without(src, "--expect-rate")...)...)
	if code == ExitUndecided && strings.Contains(stderr, "carries no counters") {
		// A file without counters: counters judges nothing, and check
		// must not have either.
		out = "{}"
	} else if code == ExitUndecided {
		t.Fatalf("counters %v: exit %d: %s", src, code, stderr)
	}
	var cdoc struct {
		Ports []struct {
			GUID string `json:"node_guid"`
			Port int    `json:"port"`
			Over bool   `json:"over_threshold"`
		} `json:"ports"`
	}
	if err := json.Unmarshal([]byte(out), &cdoc); err != nil {
		t.Fatalf("counters --json: %v", err)
	}
	for _, p := range cdoc.Ports {
		if p.Over {
			countersPorts = append(countersPorts, judgedEntity{p.GUID, p.Port}.key())
		}
	}
	for _, s := range [][]string{checkLinks, linksLinks, checkPorts, countersPorts} {
		slices.Sort(s)
	}
	return
}

// without drops a flag and its value from args.
func without(args []string, flag string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if args[i] == flag {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// TestOneJudgement: on every corpus file and on simulator fabrics with
// planted faults, 'links' marks exactly the links check reports as
// link.degraded-*, and 'counters' flags exactly the ports check reports
// in counters.errors and counters.congestion (counters.utilization is a
// hot link, not a fault: counters does not flag it).
func TestOneJudgement(t *testing.T) {
	topo, _ := simTopology(t)
	faults := writeFile(t, "faults", strings.Join([]string{
		"degrade leaf01/2 width=1x",
		"degrade leaf03/7 speed=HDR",
		"counter leaf02/5 SymbolErrorCounter=500 LinkDownedCounter=2",
		"counter leaf01/3 PortXmitDiscards=101",
		"counter leaf03/1 PortXmitDiscards=100",
	}, "\n")+"\n")
	cases := map[string][]string{
		"sim faults":        {"--sim=" + topo, "--faults", faults},
		"sim faults rate":   {"--sim=" + topo, "--faults", faults, "--expect-rate", "4xNDR"},
		"sample":            {"--sim"},
		"sample rate mixed": {"--sim", "--expect-rate", "4xHDR,4xNDR"},
		"sample interval":   {"--sim", "--interval", "1s"},
	}
	names := []string{"sim faults", "sim faults rate", "sample", "sample rate mixed", "sample interval"}
	for _, f := range corpusLoadable {
		names = append(names, f)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			// Each source's three runs are its own: GOMAXPROCS of them
			// at a time.
			t.Parallel()
			src, ok := cases[name]
			if !ok {
				src = []string{"--sim=" + corpusPath(t, name)}
			}
			cl, ll, cp, kp := judged(t, src...)
			if !slices.Equal(cl, ll) {
				t.Errorf("check reports slow links\n  %v\nlinks marks\n  %v", cl, ll)
			}
			if !slices.Equal(cp, kp) {
				t.Errorf("check reports counters on\n  %v\ncounters flags\n  %v", cp, kp)
			}
			if name == "sim faults" && (len(cl) != 2 || len(cp) != 2) {
				t.Errorf("planted 2 slow links and 2 ports over threshold, judged %v and %v", cl, cp)
			}
		})
	}
}
