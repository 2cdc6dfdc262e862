package checks_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/ibsimtest"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/internal/transport/ibsim"
	"github.com/ibdoctor/ibdoctor/mad"
)

// smIBSim starts ibsim on a small fat tree (2 leaves x 2 hosts, 2
// spines); no OpenSM runs yet.
func smIBSim(t *testing.T) *ibsimtest.Sim {
	t.Helper()
	f, err := topology.FatTree2{Leaves: 2, Spines: 2, HostsPerLeaf: 2, Common: topology.Common{SwitchPorts: 8}}.Build()
	if err != nil {
		t.Fatal(err)
	}
	return smIBSimFabric(t, f)
}

// smIBSimFabric starts ibsim on f, nodes named by host or switch name.
func smIBSimFabric(t *testing.T, f *fabric.Fabric) *ibsimtest.Sim {
	t.Helper()
	ibsimtest.Require(t, "opensm", "sminfo")
	return ibsimtest.StartFabric(t, f, fabric.NetFileOptions{NodeID: func(n *fabric.Node) string {
		if n.Type == mad.NodeCA && strings.HasSuffix(n.Description, " mlx5_0") {
			return e2eNodeID(n) // a host's first HCA by the host name
		}
		return strings.ReplaceAll(n.Description, " ", "_")
	}})
}

func ibsimtestOpts(host string) ibsimtest.OpenSMOptions {
	return ibsimtest.OpenSMOptions{Host: host}
}

func ibsimCheck(t *testing.T, s *ibsimtest.Sim, host string, interval time.Duration) (*diagnose.Sweep, *checks.Result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := ibsim.Dial(ctx, ibsim.Options{SockName: s.SockName, Host: host})
	if err != nil {
		t.Fatal(err)
	}
	eng := transport.NewEngine(c, transport.Options{Timeout: time.Second, Retries: 1})
	defer eng.Close()
	sw, err := diagnose.Run(ctx, eng, diagnose.Options{Routes: true, Counters: true, Interval: interval})
	if err != nil {
		t.Fatal(err)
	}
	res, err := checks.Run(sw.Snapshot(checks.Expectations{}, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	return sw, res
}

// TestIBSimNoSM: ibsim with no OpenSM started. ibdoctor must say "no
// subnet manager" once, with the per-link symptoms folded in, where it
// used to give one link.down per link.
func TestIBSimNoSM(t *testing.T) {
	s := smIBSim(t)
	_, res := ibsimCheck(t, s, "gpu001", 0)
	fs := onlySM(t, res, "sm.no-master")
	if len(fs) != 1 {
		return
	}
	f := fs[0]
	var ev []string
	for _, e := range f.Evidence {
		ev = append(ev, e.String())
	}
	all := strings.Join(ev, "\n")
	t.Logf("%s %s: %s\n%s", f.Severity, f.Check, f.Title, all)
	// 4 host links and 4 leaf-spine links: 16 ports.
	for _, want := range []string{"16 of 16 physically up ports are in Init", "16 of 16 have no LID", "no port advertises an SM", "8 links physically up but not Active"} {
		if !strings.Contains(all, want) {
			t.Errorf("evidence lacks %q:\n%s", want, all)
		}
	}
	if n := len(byCheck(res.Findings, "link.down")); n != 0 {
		t.Errorf("%d link.down findings besides sm.no-master", n)
	}
}

var sminfoLine = regexp.MustCompile(`sm lid (\d+) sm guid (0x[0-9a-f]+), activity count (\d+) priority (\d+) state (\d+)`)

// TestIBSimStandbySM: OpenSM master on gpu001 and a second OpenSM on
// gpu004 that settles in Standby. No SM finding; ibdoctor's SMInfo of
// both agrees with infiniband-diags' sminfo; the master's ActCount moves
// between two reads an interval apart (sm.stalled runs and is quiet).
func TestIBSimStandbySM(t *testing.T) {
	s := smIBSim(t)
	s.StartOpenSM(ibsimtest.OpenSMOptions{Host: "gpu001", Extra: []string{"-p", "5"}})
	s.StartOpenSM(ibsimtest.OpenSMOptions{Host: "gpu004", Extra: []string{"-p", "1"}, Standby: true})
	sw, res := ibsimCheck(t, s, "gpu002", 200*time.Millisecond)
	for _, f := range res.Findings {
		if strings.HasPrefix(f.Check, "sm.") {
			t.Errorf("%s %s: %s", f.Severity, f.Check, f.Title)
		}
	}
	if !contains(res.Ran, "sm.stalled") {
		t.Errorf("sm.stalled did not run: %+v", res.Skipped)
	}
	if len(sw.SM.Readings) != 2 {
		t.Fatalf("SM readings %+v, want two", sw.SM.Readings)
	}
	for _, r := range sw.SM.Readings {
		host := strings.Fields(r.Port.Node.Description)[0]
		if r.Reason != "" {
			t.Errorf("%s: SMInfo unanswered: %s", host, r.Reason)
			continue
		}
		out := s.MustRun("gpu002", "sminfo", strconv.Itoa(int(r.Port.LID)))
		m := sminfoLine.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("sminfo output %q", out)
		}
		want := fmt.Sprintf("lid %d guid 0x%016x priority %d state %d", r.Port.LID, r.Info.GUID, r.Info.Priority, r.Info.State)
		got := fmt.Sprintf("lid %s guid 0x%016s priority %s state %s", m[1], strings.TrimPrefix(m[2], "0x"), m[4], m[5])
		if got != want {
			t.Errorf("%s: sminfo says %q, ibdoctor read %q", host, got, want)
		}
		act, _ := strconv.ParseUint(m[3], 10, 32)
		if uint32(act) < r.Info.ActCount {
			t.Errorf("%s: sminfo ActCount %d, below ibdoctor's earlier %d", host, act, r.Info.ActCount)
		}
		wantState, wantPrio := mad.SMMaster, uint8(5)
		if host == "gpu004" {
			wantState, wantPrio = mad.SMStandby, 1
		}
		if r.Info.State != wantState || r.Info.Priority != wantPrio {
			t.Errorf("%s: %s priority %d, want %s priority %d", host, r.Info.State, r.Info.Priority, wantState, wantPrio)
		}
		if host == "gpu001" && (r.Again == nil || r.Again.ActCount <= r.Info.ActCount) {
			t.Errorf("master's ActCount did not advance: %+v then %+v", r.Info, r.Again)
		}
	}
}
