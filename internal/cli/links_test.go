package cli

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/ibsimtest"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/mad"
)

type linksDoc struct {
	Complete bool
	Links    []struct {
		A, B               *linkEndJSON
		Width, Speed, Rate string
		Enabled            string
		Gbps               float64
		Degraded           bool
		Reasons            []string
		Loopback           bool
	}
}

func linksJSON(t *testing.T, args ...string) (int, linksDoc, string) {
	t.Helper()
	code, out, stderr := run(append([]string{"links", "--json"}, args...)...)
	var doc linksDoc
	if code != ExitUndecided {
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	return code, doc, stderr
}

// TestLinksHealthy: every cable of the simulated fabric once, both ends
// named with their LIDs, at 4X NDR, none marked.
func TestLinksHealthy(t *testing.T) {
	topo, model := simTopology(t)
	code, doc, stderr := linksJSON(t, "--sim="+topo)
	if code != ExitHealthy || !doc.Complete {
		t.Fatalf("exit %d complete %v: %s", code, doc.Complete, stderr)
	}
	want := map[string]bool{}
	for _, l := range model.Links() {
		want[fmt.Sprintf("%#016x[%d]-%#016x[%d]", l.A.Node.GUID, l.A.Num, l.B.Node.GUID, l.B.Num)] = true
	}
	for _, l := range doc.Links {
		if l.B == nil {
			t.Fatalf("link without a far end: %+v", l)
		}
		a, b := *l.A, *l.B
		if b.GUID < a.GUID {
			a, b = b, a
		}
		key := fmt.Sprintf("%s[%d]-%s[%d]", a.GUID, a.Port, b.GUID, b.Port)
		if !want[key] {
			t.Errorf("link %s listed twice or not in the fabric", key)
		}
		delete(want, key)
		// The ibnetdiscover file records no enabled masks: "enabled"
		// is left out, not made up from the active rate (trial C1).
		if l.Rate != "4X NDR" || l.Enabled != "" || l.Gbps != 400 || l.Degraded || len(l.Reasons) != 0 ||
			l.A.State != "Active" || l.A.PhysState != "LinkUp" {
			t.Errorf("link %s: %+v", key, l)
		}
		for _, e := range []linkEndJSON{a, b} {
			var g uint64
			fmt.Sscanf(e.GUID, "0x%x", &g)
			n := model.NodeByGUID(g)
			if n == nil || n.Description != e.Node || nodeLIDs(n) != fmt.Sprint(e.LID) {
				t.Errorf("end %+v: node %v", e, n)
			}
		}
	}
	if len(want) != 0 {
		t.Errorf("links not listed: %v", want)
	}
	code, out, _ := run("links", "--sim="+topo, "--no-color")
	if code != ExitHealthy || !strings.Contains(out, "24 links, none below its rate") || strings.Contains(out, "DEGRADED") {
		t.Errorf("table: exit %d\n%s", code, out)
	}
}

// TestLinksDegraded: a cable retrained at 1X and one at HDR are marked
// against their peers (the ibnetdiscover file records no enabled masks,
// so "the best both ends have enabled" is not said: trial C1);
// --degraded shows only them; exit 1.
func TestLinksDegraded(t *testing.T) {
	topo, model := simTopology(t)
	faults := writeFile(t, "faults", "degrade leaf01/2 width=1x\ndegrade leaf03/7 speed=HDR\n")
	code, out, stderr := run("links", "--sim="+topo, "--faults", faults, "--degraded", "--no-color")
	if code != ExitFindings {
		t.Fatalf("exit %d, want 1: %s", code, stderr)
	}
	gpu2 := model.NodesByName("leaf01")[0].Ports[2].Remote.Node.Description
	spine := model.NodesByName("leaf03")[0].Ports[7].Remote
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// header, rule, two rows, blank, summary
	if len(lines) != 6 || !strings.Contains(lines[5], "24 links, 2 below their rate") {
		t.Fatalf("--degraded:\n%s", out)
	}
	r1, r2 := strings.Fields(lines[2]), strings.TrimSpace(lines[3])
	if r1[0] != "leaf01" || r1[1] != "2" || !strings.Contains(lines[2], gpu2+"  1") ||
		!strings.Contains(lines[2], "1X     NDR") || !strings.HasSuffix(strings.TrimSpace(lines[2]), "DEGRADED: width 1X, expected 4X: most ConnectX-7 host links run 4X NDR") {
		t.Errorf("1X row: %q", lines[2])
	}
	// leaf03[7]-spine: listed from the end with the smaller GUID.
	if !strings.Contains(r2, "4X     HDR") || !strings.HasSuffix(r2, "DEGRADED: speed HDR, expected NDR: most of leaf03's other switch links run 4X NDR") ||
		!strings.Contains(r2, spine.Node.Description) || !strings.Contains(r2, "leaf03") {
		t.Errorf("HDR row: %q", r2)
	}
	// With an expected rate the HDR link is below it too.
	code, doc, _ := linksJSON(t, "--sim="+topo, "--faults", faults, "--degraded", "--expect-rate", "4xNDR")
	if code != ExitFindings || len(doc.Links) != 2 {
		t.Fatalf("exit %d: %+v", code, doc)
	}
	if got := doc.Links[1].Reasons; !slices.Equal(got, []string{"speed HDR, expected NDR: the expected rate 4X NDR"}) {
		t.Errorf("reasons %q", got)
	}
}

// TestLinksExpectRate marks links against --expect-rate only: on a fabric
// whose links all run at what both ends enable (4X HDR).
func TestLinksExpectRate(t *testing.T) {
	topo, _ := simTopology(t)
	for _, tc := range []struct {
		expect string
		marked int
		code   int
	}{
		{"4xNDR", 0, ExitHealthy},
		{"4xHDR,4xNDR", 0, ExitHealthy},
		{"8xNDR", 24, ExitFindings},
		{"12xHDR, 8xNDR", 24, ExitFindings},
		{"2xXDR", 0, ExitHealthy}, // 400 Gb/s too: not below
	} {
		code, doc, stderr := linksJSON(t, "--sim="+topo, "--expect-rate", tc.expect)
		n := 0
		for _, l := range doc.Links {
			if l.Degraded {
				n++
			}
		}
		if code != tc.code || n != tc.marked || len(doc.Links) != 24 {
			t.Errorf("--expect-rate %s: exit %d, %d of %d marked: %s", tc.expect, code, n, len(doc.Links), stderr)
		}
	}
	code, _, stderr := run("links", "--sim="+topo, "--expect-rate", "4xFOO")
	if code != ExitUndecided || !strings.Contains(stderr, "--expect-rate") {
		t.Errorf("bad rate: exit %d %s", code, stderr)
	}
}

// TestLinksPartial: links to a dead spine are listed "(not reached)" and
// the spine on stderr; exit 3.
func TestLinksPartial(t *testing.T) {
	topo, _ := simTopology(t)
	faults := writeFile(t, "faults", "dead spine02\n")
	code, out, stderr := run("links", "--sim="+topo, "--faults", faults, "--timeout", deadTimeout, "--retries", "0", "--no-color")
	if code != ExitPartial {
		t.Fatalf("exit %d, want 3: %s", code, stderr)
	}
	if !strings.Contains(out, "18 links and 6 ports whose far end did not answer, none below its rate") {
		t.Errorf("summary:\n%s", out)
	}
	if n := strings.Count(out, "(not reached)"); n != 6 {
		t.Errorf("%d ports listed as not reached, want 6:\n%s", n, out)
	}
	if !strings.Contains(stderr, "Could not read (6):") || !strings.Contains(stderr, "NodeInfo at 6 paths behind ports ") {
		t.Errorf("stderr: %s", stderr)
	}
	// One dead spine met from 6 ports is not "6 switches or nodes".
	if !strings.Contains(stderr, "ibdoctor: 6 ports lead to nodes that did not answer; what was read is printed") {
		t.Errorf("stderr's last line: %s", stderr)
	}
}

// TestLinksIBSim: on ibsim after OpenSM, a net file written with two
// cables' enabled widths lowered on both ends (fabric.WriteNetFile) comes
// up at 1X. links over the ibsim transport lists every link as iblinkinfo
// -l (under libumad2sim) does — same ends, LIDs, width, speed and states
// — and marks exactly the 1X cables, with and without --expect-rate:
// they run at what both ends enable, but the other hosts of the same
// adapter model run 4X (iblinkinfo says "Could be 12X" on every link
// because ibsim claims every width in LinkWidthSupported).
func TestLinksIBSim(t *testing.T) {
	ibsimtest.Require(t, "opensm", "iblinkinfo")
	f, err := topology.FatTree2{Common: topology.Common{SwitchPorts: 8, Rate: mad.Rate{Width: mad.Width4X, Speed: mad.SpeedHDR}},
		Leaves: 2, Spines: 2, HostsPerLeaf: 3}.Build()
	if err != nil {
		t.Fatal(err)
	}
	var lowered []*fabric.Port
	for _, name := range []string{"leaf01", "leaf02"} {
		p := f.NodesByName(name)[0].Ports[2]
		for _, q := range []*fabric.Port{p, p.Remote} {
			q.WidthEnabled, q.WidthActive = mad.Width1X, mad.Width1X
		}
		lowered = append(lowered, p)
	}
	s := ibsimtest.StartFabric(t, f, fabric.NetFileOptions{})
	host := fabric.DefaultNodeID(f.NodesByName(f.Nodes[len(f.Nodes)-1].Description)[0])
	s.StartOpenSM(ibsimtest.OpenSMOptions{Host: host, Once: true})
	src := []string{"--ibsim=" + s.SockName, "--ibsim-host", host}
	code, doc, stderr := linksJSON(t, src...)
	if code != ExitFindings || len(doc.Links) != 6+4 {
		t.Fatalf("exit %d, %d links: %s", code, len(doc.Links), stderr)
	}

	// iblinkinfo -l lists each link from both ends (switches and CAs).
	theirs := map[string]string{}
	couldBe := 0
	for line := range strings.Lines(s.MustRun(host, "iblinkinfo", "-l")) {
		m := iblinkinfoLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		a := fmt.Sprintf("%s[%s] lid %s", m[1], m[3], m[2])
		b := fmt.Sprintf("%s[%s] lid %s", m[8], m[10], m[9])
		if b < a {
			a, b = b, a
		}
		theirs[a+" - "+b] = fmt.Sprintf("%s %s Gbps %s/%s", m[4], m[5], m[6], m[7])
		if strings.Contains(m[11], "Could be") {
			couldBe++
		}
	}
	ours := map[string]string{}
	for _, l := range doc.Links {
		// iblinkinfo names a CA port by its port GUID (a switch's
		// ports share the switch's GUID).
		a := fmt.Sprintf("%s[%d] lid %d", l.A.PortGUID, l.A.Port, l.A.LID)
		b := fmt.Sprintf("%s[%d] lid %d", l.B.PortGUID, l.B.Port, l.B.LID)
		if b < a {
			a, b = b, a
		}
		sp, err := mad.ParseSpeed(l.Speed)
		if err != nil {
			t.Fatal(err)
		}
		ours[a+" - "+b] = fmt.Sprintf("%s %s Gbps %s/%s", l.Width, strconv.FormatFloat(sp.SignalGbps(), 'f', -1, 64), l.A.State, l.A.PhysState)
		// The 1X cables run at what both ends enable, but the other
		// hosts of the same adapter model run 4X: marked (ibsim's w=1).
		lowLink := slices.ContainsFunc(lowered, func(p *fabric.Port) bool { return l.A.GUID == fmt.Sprintf("%#016x", p.Node.GUID) && l.A.Port == p.Num })
		if l.Degraded != lowLink || (lowLink && !slices.Equal(l.Reasons, []string{"width 1X, expected 4X: most ConnectX-6 host links run 4X HDR"})) {
			t.Errorf("marked %v (want %v): %+v", l.Degraded, lowLink, l)
		}
	}
	for k, v := range ours {
		// iblinkinfo prints 10 Gb/s as "10.0"
		if tv := strings.Replace(theirs[k], ".0 Gbps", " Gbps", 1); tv != v {
			t.Errorf("link %s: iblinkinfo %q, ibdoctor %q", k, theirs[k], v)
		}
	}
	if len(theirs) != len(ours) || couldBe != 2*len(ours) {
		t.Errorf("iblinkinfo: %d links (ibdoctor %d), %d \"Could be\" notes", len(theirs), len(ours), couldBe)
	}

	code, doc, stderr = linksJSON(t, append(src, "--expect-rate", "4xHDR", "--degraded")...)
	if code != ExitFindings || len(doc.Links) != 2 {
		t.Fatalf("exit %d, %+v: %s", code, doc.Links, stderr)
	}
	for _, l := range doc.Links {
		i := slices.IndexFunc(lowered, func(p *fabric.Port) bool { return l.A.GUID == fmt.Sprintf("%#016x", p.Node.GUID) })
		if i < 0 || l.A.Port != lowered[i].Num || l.B.Port != lowered[i].Remote.Num || l.Rate != "1X HDR" ||
			!slices.Equal(l.Reasons, []string{"width 1X, expected 4X: the expected rate 4X HDR"}) {
			t.Errorf("link %+v %+v", l, l.A)
		}
	}
}

// iblinkinfoLine matches one line of `iblinkinfo -l`: GUID, description,
// LID, port, width, lane speed, state/physical state, then the peer's
// GUID, LID, port and description, and the note in parentheses.
var iblinkinfoLine = regexp.MustCompile(`^(0x[0-9a-f]+)\s+"[^"]*"\s+(\d+)\s+(\d+)\[\s*\]\s+==\(\s*(\d+X)\s+([\d.]+) Gbps\s+(\w+)/\s*(\w+)\)==>\s+(0x[0-9a-f]+)\s+(\d+)\s+(\d+)\[\s*\]\s+"[^"]*"\s+\((.*)\)\s*$`)

// TestLinksUnreadEnd: spine02/49's and gpu027 mlx5_6's PortInfo went
// unanswered. links shows their state as not read (not NoChange, not a
// width "none"), takes the width from the end that was read, marks the
// 1X link with check's verdict, shows gpu027's link as undecided (its
// HCA's masks would decide), and never sums up "none below its rate".
// Before: spine02/49 read "none none NoChange/NoChange" and the summary
// said "511 links, none below its rate".
func TestLinksUnreadEnd(t *testing.T) {
	faults := writeFile(t, "faults", "drop spine02/49 attr=PortInfo\ndrop gpu027 mlx5_6/1 attr=PortInfo\n")
	code, out, stderr := run("links", "--sim", "--faults", faults, "--timeout", deadTimeout, "--retries", "0", "--no-color")
	if code != ExitFindings {
		t.Fatalf("exit %d, want %d: %s", code, ExitFindings, stderr)
	}
	if strings.Contains(out, "NoChange") {
		t.Errorf("an unread state shown as NoChange:\n%s", out)
	}
	var spine, gpu string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) > 4 && f[0] == "spine02" && f[1] == "49" {
			spine = l
		}
		if strings.Contains(l, "gpu027 mlx5_6") {
			gpu = l
		}
	}
	if !strings.Contains(spine, "1X") || !strings.Contains(spine, "not read") || !strings.Contains(spine, "DEGRADED") {
		t.Errorf("spine02/49's row: %q", spine)
	}
	if !strings.Contains(gpu, "HDR") || !strings.Contains(gpu, "not read") || !strings.Contains(gpu, "UNDECIDED") {
		t.Errorf("gpu027 mlx5_6's row: %q", gpu)
	}
	if !strings.Contains(out, "511 links, 1 port without a link, 1 below their rate, 1 undecided (an end not read)") {
		t.Errorf("summary:\n%s", out)
	}
}

// TestLinksNamesTellNodesApart: the voltaire dump's InfiniHost HCAs all
// carry the firmware's description; links names them as findings do
// (fabric.NameOf: the description and the GUID), so five rows do not name
// one node. Before: five identical "MT23108 InfiniHost Mellanox
// Technologies".
func TestLinksNamesTellNodesApart(t *testing.T) {
	_, out, stderr := run("links", "--sim="+corpusPath(t, "voltaire-sdr-2007.ibnetdiscover"), "--no-color")
	names := regexp.MustCompile(`MT23108 InfiniHost Mellanox Technologies(?: \(0x[0-9a-f]{16}\))?`).FindAllString(out, -1)
	if len(names) != 5 {
		t.Fatalf("%d InfiniHost ends, want 5:\n%s%s", len(names), out, stderr)
	}
	seen := map[string]bool{}
	for _, n := range names {
		seen[n] = true
	}
	if len(seen) != 4 { // 4 HCAs, one with two ports cabled
		t.Errorf("%d distinct InfiniHost names, want 4 (one per HCA): %q", len(seen), names)
	}
}

// TestLinksListsPortsWithoutLink: the sample's leaf03/28 is Polling,
// where check's topology.missing-hca says gpu012 mlx5_3's cable belongs;
// links lists it as iblinkinfo does (before: absent, 511 rows), and
// --json under ports_without_link (its links stay cables only).
func TestLinksListsPortsWithoutLink(t *testing.T) {
	_, out, stderr := run("links", "--sim", "--no-color")
	if !regexp.MustCompile(`\n\s*leaf03\s+28\s+\d+\s+\(no link\)\s+-\s+-\s+Down/Polling\s*\n`).MatchString(out) {
		t.Errorf("no row for leaf03/28 (Polling):\n%s", stderr)
	}
	if !strings.Contains(out, "511 links, 1 port without a link, 1 below their rate") {
		t.Errorf("summary: %s", out[max(0, len(out)-200):])
	}
	_, js, _ := run("links", "--sim", "--json")
	var d struct {
		Bare []struct {
			Node      string `json:"node"`
			Port      int    `json:"port"`
			PhysState string `json:"phys_state"`
		} `json:"ports_without_link"`
		Links []json.RawMessage `json:"links"`
	}
	if err := json.Unmarshal([]byte(js), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Bare) != 1 || d.Bare[0].Node != "leaf03" || d.Bare[0].Port != 28 || d.Bare[0].PhysState != "Polling" || len(d.Links) != 511 {
		t.Errorf("--json: ports_without_link %+v, %d links; want leaf03/28 Polling and 511 links", d.Bare, len(d.Links))
	}
}

// TestLinksFarNodeDead: spine02 is dead; leaf07/41 was read, runs 1X with
// 4X enabled. Its row says the width is undecided because the far end was
// not read, as check lists it. Before: "(not reached) 1X NDR" and no mark.
func TestLinksFarNodeDead(t *testing.T) {
	faults := writeFile(t, "faults", "dead spine02\n")
	_, out, stderr := run("links", "--sim", "--faults", faults, "--timeout", deadTimeout, "--retries", "0", "--no-color")
	var row string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[0] == "leaf07" && f[1] == "41" {
			row = l
		}
	}
	if !strings.Contains(row, "(not reached)") || !strings.Contains(row, "UNDECIDED: width 1X with 4X enabled here: far end not read") {
		t.Errorf("leaf07/41's row: %q (stderr %s)", row, stderr)
	}
}

// TestLinksSorted: links lists its rows by node name (naturally: leaf2
// before leaf10), then port, in the table and in JSON alike. Before, the
// sample's rows came in discovery order: leaf01, spine01..04, leaf02..08.
func TestLinksSorted(t *testing.T) {
	code, out, stderr := run("links", "--sim", "--no-color")
	if code != ExitFindings {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var nodes []string
	var ports []int
	for _, l := range strings.Split(out, "\n") {
		fs := strings.Fields(l)
		if len(fs) < 2 || (!strings.HasPrefix(fs[0], "leaf") && !strings.HasPrefix(fs[0], "spine")) {
			continue
		}
		p, err := strconv.Atoi(fs[1])
		if err != nil {
			continue
		}
		nodes, ports = append(nodes, fs[0]), append(ports, p)
	}
	check := func(what string, nodes []string, ports []int) {
		t.Helper()
		if len(nodes) < 500 {
			t.Fatalf("%s: %d rows", what, len(nodes))
		}
		for i := 1; i < len(nodes); i++ {
			if nodes[i] < nodes[i-1] || nodes[i] == nodes[i-1] && ports[i] <= ports[i-1] {
				t.Fatalf("%s: row %d %s/%d after %s/%d", what, i, nodes[i], ports[i], nodes[i-1], ports[i-1])
			}
		}
	}
	check("table", nodes, ports)
	_, doc, _ := linksJSON(t, "--sim")
	nodes, ports = nil, nil
	for _, l := range doc.Links {
		nodes, ports = append(nodes, l.A.Node), append(ports, int(l.A.Port))
	}
	check("JSON", nodes, ports)
}
