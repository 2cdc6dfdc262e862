package checks_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/ibsimtest"
	"github.com/ibdoctor/ibdoctor/mad"
)

var (
	enfField    = regexp.MustCompile(`PartEnforceInb:\.*(\d)`)
	enfOutField = regexp.MustCompile(`PartEnforceOutb:\.*(\d)`)
)

// pkeyWord is one entry of 'smpquery pkeys' output ("   0: 0xffff").
var pkeyWord = regexp.MustCompile(`0x[0-9a-f]{4}`)

// TestIBSimPartitions: OpenSM with a partitions.conf on ibsim: the
// default partition limited for every port but OpenSM's own (SELF full),
// gpu001 and gpu002 full members of 0x0001, gpu003 and gpu004 of 0x0002.
// ibdoctor's P_Key tables of the hosts agree with infiniband-diags'
// 'smpquery pkeys'; fabric-wide nothing is reported (every host can talk
// to its tenant, and OpenSM gave each enforcing leaf port its host's
// partitions); a job over gpu002 and gpu003 cannot start
// (partition.isolated, critical), one over gpu001 and gpu002 can.
func TestIBSimPartitions(t *testing.T) {
	s := smIBSim(t)
	ibsimtest.Require(t, "smpquery")
	// GUIDs first: a sweep with no SM still walks the fabric by
	// directed route.
	pre, _ := ibsimCheck(t, s, "gpu001", 0)
	guid := map[string]uint64{}
	for _, n := range pre.Fabric.Nodes {
		if n.Type == mad.NodeCA {
			for _, p := range n.Ports {
				if p != nil && p.Num != 0 && p.Remote != nil {
					guid[strings.Fields(n.Description)[0]] = p.GUID
				}
			}
		}
	}
	conf := fmt.Sprintf(`Default=0x7fff : ALL=limited, SELF=full;
TenantA=0x0001 : 0x%016x=full, 0x%016x=full;
TenantB=0x0002 : 0x%016x=full, 0x%016x=full;
`, guid["gpu001"], guid["gpu002"], guid["gpu003"], guid["gpu004"])
	path := filepath.Join(t.TempDir(), "partitions.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	s.StartOpenSM(ibsimtest.OpenSMOptions{Host: "gpu001", Extra: []string{"-P", path}})
	sw, res := ibsimCheck(t, s, "gpu001", 0)
	if sw.Partitions == nil || len(sw.Partitions.Unread) != 0 {
		t.Fatalf("P_Key tables not read: %+v", sw.Partitions)
	}
	enforcing := 0
	for p, keys := range sw.Partitions.Tables {
		if p.Node.Type == mad.NodeSwitch {
			enforcing++
			continue
		}
		host := strings.Fields(p.Node.Description)[0]
		out := s.MustRun("gpu001", "smpquery", "pkeys", strconv.Itoa(int(p.LID)))
		var theirs []string
		for _, w := range pkeyWord.FindAllString(out, -1) {
			if mad.PKey(mustHex(t, w)).Valid() {
				theirs = append(theirs, w)
			}
		}
		var ours []string
		for _, k := range keys {
			ours = append(ours, k.String())
		}
		slices.Sort(theirs)
		slices.Sort(ours)
		if strings.Join(ours, " ") != strings.Join(theirs, " ") {
			t.Errorf("%s: ibdoctor read %v, smpquery pkeys says %v\n%s", host, ours, theirs, out)
		} else {
			t.Logf("%s: %v (smpquery pkeys agrees)", host, ours)
		}
	}
	// The leaf ports to the hosts: ibdoctor's enforcement bits are
	// PortInfo's, as smpquery prints them.
	for _, n := range sw.Fabric.Nodes {
		for _, p := range n.Ports {
			if n.Type != mad.NodeSwitch || p == nil || p.Num == 0 || p.Remote == nil || p.Remote.Node.Type != mad.NodeCA {
				continue
			}
			out := s.MustRun("gpu001", "smpquery", "portinfo", strconv.Itoa(int(n.Ports[0].LID)), strconv.Itoa(int(p.Num)))
			in, outb := enfField.FindStringSubmatch(out), enfOutField.FindStringSubmatch(out)
			if in == nil || outb == nil {
				t.Fatalf("smpquery portinfo: no PartEnforceInb/PartEnforceOutb in %q", out)
			}
			want := 0
			if in[1] == "1" {
				want |= 1
			}
			if outb[1] == "1" {
				want |= 2
			}
			if int(p.PKeyEnforce) != want {
				t.Errorf("%s/%d: enforcement %d, smpquery says inbound %s outbound %s", n.Description, p.Num, p.PKeyEnforce, in[1], outb[1])
			}
		}
	}
	t.Logf("%d switch ports enforce partitions on ibsim (smpquery portinfo agrees port by port)", enforcing)
	for _, f := range res.Findings {
		if strings.HasPrefix(f.Check, "partition.") {
			t.Errorf("fabric-wide: %s %s: %s", f.Severity, f.Check, f.Title)
		}
	}
	job := func(hosts ...string) []checks.Finding {
		var nodes []*fabric.Node
		for _, n := range sw.Fabric.Nodes {
			if n.Type == mad.NodeCA && slices.Contains(hosts, strings.Fields(n.Description)[0]) {
				nodes = append(nodes, n)
			}
		}
		r, err := checks.Run(sw.Snapshot(checks.Expectations{}, nil, checks.ScopeFor(sw.Fabric, nodes)), "partition.isolated", "partition.switch-drops", "partition.job-mismatch")
		if err != nil {
			t.Fatal(err)
		}
		return r.Findings
	}
	split := job("gpu002", "gpu003")
	if len(split) != 1 || split[0].Check != "partition.isolated" || split[0].Severity != checks.Critical {
		t.Errorf("job gpu002+gpu003: %d findings, want one critical partition.isolated", len(split))
	} else {
		t.Logf("job gpu002+gpu003: %s\n    %s", split[0].Title, split[0].Evidence[0])
	}
	if same := job("gpu001", "gpu002"); len(same) != 0 {
		t.Errorf("job gpu001+gpu002: %s", same[0].Title)
	}
}

func mustHex(t *testing.T, w string) uint16 {
	t.Helper()
	x, err := strconv.ParseUint(strings.TrimPrefix(w, "0x"), 16, 16)
	if err != nil {
		t.Fatal(err)
	}
	return uint16(x)
}
