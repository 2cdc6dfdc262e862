package checks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/cli"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/ibsimtest"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/internal/transport/ibsim"
	"github.com/ibdoctor/ibdoctor/mad"
)

// The end-to-end incident on ibsim + OpenSM: a 2-level fat tree (4 leaves
// × 4 hosts, 4 spines, 4X HDR) with
//
//   - leaf02/6 <-> spine02/2 cabled with both ends enabled for 1X only
//     (ibsim trains it at 1X; only its 4X siblings or the expected rate
//     show it is wrong), and gpu011's host link the same way;
//   - PerformanceSet counters: gpu006's SymbolErrorCounter stuck at 65535
//     (saturated) and LinkErrorRecoveryCounter 50 on leaf03/7;
//   - OpenSM's own tables (dump_fts), edited so leaf01 sends all its
//     uplink traffic through spine01 (port 5) and leaf02 has no route to
//     gpu014, loaded with opensm -R file -U.
//
// ibdoctor attaches at gpu001 through the ibsim transport.
const (
	e2eAttach  = "gpu001"
	e2eHoleDst = "gpu014 mlx5_0"
)

type e2eFabric struct {
	sim    *ibsimtest.Sim
	expect checks.Expectations
}

// e2eNodeID names ibsim nodes by host name ("gpu001") and switch name.
func e2eNodeID(n *fabric.Node) string { return strings.Fields(n.Description)[0] }

func startE2E(t *testing.T) *e2eFabric {
	t.Helper()
	ibsimtest.Require(t, "opensm", "dump_fts")
	hdr, err := mad.ParseRate("4xHDR")
	if err != nil {
		t.Fatal(err)
	}
	f, err := topology.FatTree2{Leaves: 4, Spines: 4, HostsPerLeaf: 4, Common: topology.Common{Rate: hdr, SwitchPorts: 16}}.Build()
	if err != nil {
		t.Fatal(err)
	}
	to1X := func(n string, port uint8) {
		nodes := f.NodesByName(n)
		if len(nodes) != 1 || int(port) >= len(nodes[0].Ports) || nodes[0].Ports[port].Remote == nil {
			t.Fatalf("no link at %s/%d", n, port)
		}
		p := nodes[0].Ports[port]
		for _, q := range []*fabric.Port{p, p.Remote} {
			q.WidthEnabled, q.WidthActive = mad.Width1X, mad.Width1X
		}
	}
	to1X("leaf02", 6)        // leaf02's second uplink: spine02
	to1X("gpu011 mlx5_0", 1) // on leaf03
	s := ibsimtest.StartFabric(t, f, fabric.NetFileOptions{NodeID: e2eNodeID})
	s.StartOpenSM(ibsimtest.OpenSMOptions{Host: e2eAttach, Once: true})

	// Edit OpenSM's tables and have a new OpenSM load them.
	dump := s.MustRun(e2eAttach, "dump_fts")
	tables, err := fabric.ParseDumpFTS(strings.NewReader(dump))
	if err != nil {
		t.Fatal(err)
	}
	holeLID := uint16(0)
	for _, tb := range tables {
		for _, e := range tb.Entries {
			if strings.Contains(e.Dest, e2eHoleDst) {
				holeLID = e.LID
			}
		}
	}
	if holeLID == 0 {
		t.Fatalf("no entry for %s in dump_fts:\n%s", e2eHoleDst, dump)
	}
	edited, n := editDump(t, dump, holeLID)
	if n < 12 {
		t.Fatalf("edited %d of leaf01's entries, want at least its 12 remote hosts", n)
	}
	file := filepath.Join(s.Dir, "edited.dump")
	if err := os.WriteFile(file, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	s.StartOpenSM(ibsimtest.OpenSMOptions{Host: e2eAttach, LFTFile: file, Once: true})
	after, err := fabric.ParseDumpFTS(strings.NewReader(s.MustRun(e2eAttach, "dump_fts")))
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range after {
		if tb.Description != "leaf02" {
			continue
		}
		if lft := tb.LFT(); int(holeLID) < len(lft) && lft[holeLID] != fabric.NoRoute {
			t.Fatalf("OpenSM did not load the black hole: leaf02 LID %d -> %d", holeLID, lft[holeLID])
		}
	}

	for _, c := range []string{
		`PerformanceSet "gpu006"[1] PortCounters.SymbolErrorCounter=65535`,
		`PerformanceSet "leaf03"[7] PortCounters.LinkErrorRecoveryCounter=50`,
	} {
		s.MustConsole(c)
	}
	return &e2eFabric{sim: s, expect: checks.Expectations{HostRates: []mad.Rate{hdr}, SwitchRates: []mad.Rate{hdr}}}
}

var dumpEntry = regexp.MustCompile(`^0x([0-9a-fA-F]{4}) (\d{3})( .*)?$`)

// editDump points every uplink entry (ports 5..8) of leaf01 at port 5 and
// removes leaf02's entry for hole; it returns how many entries of leaf01
// it rewrote.
func editDump(t *testing.T, dump string, hole uint16) (string, int) {
	t.Helper()
	var b strings.Builder
	section, n, removed := "", 0, false
	for _, line := range strings.SplitAfter(dump, "\n") {
		if strings.HasPrefix(line, "Unicast lids") {
			section = ""
			for _, sw := range []string{"leaf01", "leaf02"} {
				if strings.Contains(line, "("+sw+"):") {
					section = sw
				}
			}
		}
		m := dumpEntry.FindStringSubmatch(strings.TrimRight(line, "\n"))
		if m != nil {
			lid, _ := strconv.ParseUint(m[1], 16, 16)
			port, _ := strconv.Atoi(m[2])
			switch {
			case section == "leaf01" && port >= 5 && port <= 8:
				line = fmt.Sprintf("0x%s 005%s\n", m[1], m[3])
				n++
			case section == "leaf02" && uint16(lid) == hole:
				removed = true
				continue
			}
		}
		b.WriteString(line)
	}
	if !removed {
		t.Fatalf("leaf02 has no entry for LID %d in\n%s", hole, dump)
	}
	return b.String(), n
}

// wantOrder is the ranking the incident must come out in: each entry is a
// check and a title prefix; findings not listed may sit anywhere below
// the ones before them but never above a listed one of higher rank.
type wanted struct {
	check, title string
	sev          checks.Severity
}

var e2eWant = []wanted{
	// The black hole: collectives over leaf02's 4 hosts and gpu014 hang.
	{"routing.unreachable", "4 hosts cannot reach gpu014 mlx5_0", checks.Critical},
	// leaf01 pushes 12 remote hosts' paths onto one of 4 uplinks (a
	// quarter of all host pairs cross it): up to 4x slower.
	{"routing.ecmp-imbalance", "leaf01 spreads 12 destinations over 4 equal-cost ports unevenly: busiest port 5", checks.Critical},
	// A 1X spine uplink: 75% of a link that carries 1/15 of the paths.
	{"link.degraded-width", "Link leaf02/6 <-> spine02/2 trained at 1X instead of 4X", checks.Critical},
	// The same edit sends the other spines' own LIDs up to spine01,
	// which sends them back down to leaf01: their management MADs loop.
	{"routing.loop", "Routes to 3 switch LIDs: spine02, spine03, spine04 loop between leaf01 and spine01", checks.Critical},
	{"link.degraded-width", "Link gpu011 mlx5_0/1 <-> leaf03/3 trained at 1X instead of 4X", checks.Error},
	// OpenSM swept once (-o) and exited: the ports still name its LID.
	{"sm.stale-master-lid", "24 active ports name master SM LID 1, gpu001 mlx5_0/1, which runs no SM", checks.Error},
	{"counters.errors", "SymbolErrorCounter = 65535 on gpu006 mlx5_0/1", checks.Warning},
	{"counters.errors", "LinkErrorRecoveryCounter = 50 on leaf03/7", checks.Warning},
}

// checkRanking asserts every wanted finding is there, at its severity, in
// the wanted order, and that nothing unexpected ranks at warning or above.
func checkRanking(t *testing.T, fs []checks.Finding) {
	t.Helper()
	pos := make([]int, len(e2eWant))
	for i, w := range e2eWant {
		pos[i] = -1
		for j, f := range fs {
			if f.Check == w.check && strings.HasPrefix(f.Title, w.title) {
				pos[i] = j
				if f.Severity != w.sev {
					t.Errorf("%s %q: severity %s, want %s", f.Check, f.Title, f.Severity, w.sev)
				}
				break
			}
		}
		if pos[i] < 0 {
			t.Errorf("not found: %s %q", w.check, w.title)
		}
	}
	for i := 1; i < len(pos); i++ {
		if pos[i] >= 0 && pos[i-1] >= 0 && pos[i] < pos[i-1] {
			t.Errorf("%q ranks above %q", e2eWant[i].title, e2eWant[i-1].title)
		}
	}
	for j, f := range fs {
		listed := false
		for _, p := range pos {
			listed = listed || p == j
		}
		if !listed && f.Severity >= checks.Warning {
			t.Errorf("unexpected finding #%d: %s %s: %s", j+1, f.Severity, f.Check, f.Title)
		}
	}
	if t.Failed() {
		for j, f := range fs {
			t.Logf("#%d %s %s %q score %.4f", j+1, f.Severity, f.Check, f.Title, f.Impact.Score)
		}
	}
}

func TestE2EIBSimIncident(t *testing.T) {
	e2e := startE2E(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	t.Run("pipeline", func(t *testing.T) {
		c, err := ibsim.Dial(ctx, ibsim.Options{SockName: e2e.sim.SockName, Host: e2eAttach})
		if err != nil {
			t.Fatal(err)
		}
		eng := transport.NewEngine(c, transport.Options{Timeout: 2 * time.Second})
		defer eng.Close()
		sw, err := diagnose.Run(ctx, eng, diagnose.Options{Routes: true, Counters: true})
		if err != nil {
			t.Fatal(err)
		}
		if !sw.Complete {
			t.Fatalf("sweep incomplete: %+v", sw.Unreached)
		}
		if sum := diagnose.Summarize(sw.Fabric); sum.Switches != 8 || sum.CAs != 16 || sum.Links != 32 {
			t.Fatalf("discovered %+v, want 8 switches, 16 CAs, 32 links", sum)
		}
		res, err := checks.Run(sw.Snapshot(e2e.expect, nil, nil))
		if err != nil {
			t.Fatal(err)
		}
		checkRanking(t, res.Findings)
		d := sw.Document("check", "ibsim:test", res, checks.Error)
		if d.Status != "unhealthy" || d.Fabric.SwitchesRouted != 8 || d.Fabric.PortsRead < 48 {
			t.Errorf("document: status %q, %d switches routed, %d ports' counters", d.Status, d.Fabric.SwitchesRouted, d.Fabric.PortsRead)
		}
	})

	t.Run("cli", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		code := cli.Main([]string{"check", "--ibsim=" + e2e.sim.SockName, "--ibsim-host", e2eAttach, "--json", "--expect-rate", "4xHDR"}, strings.NewReader(""), &stdout, &stderr)
		if code != 1 {
			t.Fatalf("exit %d, want 1 (findings at or above error)\nstderr: %s\nstdout: %s", code, stderr.String(), stdout.String())
		}
		var doc struct {
			report.Document
			Findings []checks.Finding `json:"findings"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
			t.Fatalf("--json output does not parse: %v\n%s", err, stdout.String())
		}
		if doc.Schema != report.Schema || doc.Command != "check" || doc.Status != "unhealthy" || doc.FailOn != "error" || !doc.Complete {
			t.Errorf("header: schema %q command %q status %q fail_on %q complete %v", doc.Schema, doc.Command, doc.Status, doc.FailOn, doc.Complete)
		}
		if want := "ibsim:" + e2e.sim.SockName + "/" + e2eAttach; doc.Source != want {
			t.Errorf("source %q, want %q", doc.Source, want)
		}
		if doc.Counts["critical"] != 4 || doc.Counts["error"] != 2 || doc.Counts["warning"] != 2 {
			t.Errorf("findings_by_severity %v, want 4 critical, 2 error, 2 warning", doc.Counts)
		}
		checkRanking(t, doc.Findings)
		// Entities carry GUIDs as strings and LIDs.
		for _, f := range doc.Findings {
			for _, e := range f.Entities {
				if !strings.HasPrefix(e.GUID, "0x") || len(e.GUID) != 18 || e.Node == "" {
					t.Errorf("%s: entity %+v", f.Check, e)
				}
			}
		}
	})
}
