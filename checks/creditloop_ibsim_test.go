package checks_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/ibsimtest"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// TestIBSimRingCreditLoop: a ring of five switches on ibsim, routed by a
// real OpenSM. Its default min-hop engine leaves a credit loop each way
// round the ring; its up/down engine (-R updn) none. ibdoctor reads the
// tables OpenSM programmed and must tell the two apart. With QoS off
// OpenSM leaves the SLtoVLMappingTables as ibsim starts them (SL i to VL
// i), so min-hop's loops are warnings, undecided: the tables alone
// cannot show every path is on SL0 (TestIBSimRingSL2VL has QoS on).
func TestIBSimRingCreditLoop(t *testing.T) {
	ibsimtest.Require(t, "opensm")
	for _, c := range []struct {
		engine string
		loops  int
	}{{"minhop", 2}, {"updn", 0}} {
		t.Run(c.engine, func(t *testing.T) {
			f, err := topology.Ring{Switches: 5, HostsPerSwitch: 1, Common: topology.Common{SwitchPorts: 8}}.Build()
			if err != nil {
				t.Fatal(err)
			}
			s := ibsimtest.StartFabric(t, f, fabric.NetFileOptions{NodeID: e2eNodeID})
			args := []string{"-R", c.engine}
			if c.engine == "updn" {
				// Up/down needs its root: on a ring OpenSM finds none
				// by itself (and falls back to min-hop).
				root := filepath.Join(s.Dir, "roots")
				if err := os.WriteFile(root, []byte(fmt.Sprintf("0x%016x\n", f.NodesByName("sw1")[0].GUID)), 0o644); err != nil {
					t.Fatal(err)
				}
				args = append(args, "-a", root)
			}
			o := s.StartOpenSM(ibsimtest.OpenSMOptions{Host: "gpu001", Extra: args})
			if b, err := os.ReadFile(o.LogFile); err != nil || bytes.Contains(b, []byte("cannot build lid matrices")) {
				t.Fatalf("OpenSM did not route with %s (%v)", c.engine, err)
			}
			_, res := ibsimCheck(t, s, "gpu001", 0)
			fs := byCheck(res.Findings, "routing.credit-loop")
			for _, f := range fs {
				t.Logf("%s %s\n    %s", f.Severity, f.Title, f.Evidence[0])
			}
			if len(fs) != c.loops {
				t.Errorf("OpenSM %s: %d credit loops, want %d", c.engine, len(fs), c.loops)
			}
			for _, f := range fs {
				if f.Severity != checks.Warning || !strings.Contains(f.Evidence[2].String(), "SLs spread over VLs 0..7") {
					t.Errorf("OpenSM %s, ibsim's SL2VL: %s with %s, want a warning, SLs spread", c.engine, f.Severity, f.Evidence[2])
				}
			}
			for _, f := range res.Findings {
				if f.Check != "routing.credit-loop" && f.Severity >= 2 && !strings.HasPrefix(f.Check, "routing.") {
					t.Errorf("unexpected %s %s: %s", f.Severity, f.Check, f.Title)
				}
			}
		})
	}
}

// TestIBSimRingSL2VL: the ring on ibsim with OpenSM's QoS on (-Q), so it
// programs every switch's SLtoVLMappingTables (with QoS off it never
// writes them and ibsim's own SL i -> VL i stays, whatever the engine).
// ibdoctor reads the tables of the cycles' ports; each must equal what
// 'smpquery sl2vl' prints for the same switch and ports. Then:
//   - min-hop with qos_sl2vl mapping every SL to VL0: the loops are
//     confirmed, critical, "trivial";
//   - DFSSSP with OpenSM's default qos_sl2vl (SL i -> VL i mod 8): its
//     paths are on several SLs, the tables spread them over VLs 0-7: no
//     critical, two warnings labelled undecided;
//   - DFSSSP with every SL on VL0: the VLs it chose collapse onto one,
//     so its routes' cycles are real: critical;
//   - min-hop with the default qos_sl2vl: undecided too, the limit of
//     the tables alone (every path is on SL0, which only the SA's path
//     SLs would show);
//   - LASH with the default qos_sl2vl ("Lanes needed: 2"): undecided.
func TestIBSimRingSL2VL(t *testing.T) {
	ibsimtest.Require(t, "opensm", "smpquery")
	vl0 := []string{"qos_sl2vl 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0"}
	for _, c := range []struct {
		name, engine string
		config       []string
		sev          checks.Severity
		want         string
	}{
		{"minhop-vl0", "minhop", vl0, checks.Critical, "SL2VL read on the cycle's 10 port pairs and trivial: every SL maps to VL0"},
		{"dfsssp", "dfsssp", nil, checks.Warning, "SLs spread over VLs 0..7 on this cycle (a VL-aware engine such as DFSSSP/LASH); per-path SLs not read"},
		{"dfsssp-vl0", "dfsssp", vl0, checks.Critical, "trivial: every SL maps to VL0"},
		{"minhop-qos", "minhop", nil, checks.Warning, "SLs spread over VLs 0..7"},
		{"lash", "lash", nil, checks.Warning, "SLs spread over VLs 0..7 on this cycle (a VL-aware engine such as DFSSSP/LASH)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := topology.Ring{Switches: 5, HostsPerSwitch: 1, Common: topology.Common{SwitchPorts: 8}}.Build()
			if err != nil {
				t.Fatal(err)
			}
			s := ibsimtest.StartFabric(t, f, fabric.NetFileOptions{NodeID: e2eNodeID})
			s.StartOpenSM(ibsimtest.OpenSMOptions{Host: "gpu001", Extra: []string{"-R", c.engine, "-Q"}, Config: c.config})
			sw, res := ibsimCheck(t, s, "gpu001", 0)
			if sw.SL2VL == nil || len(sw.SL2VL.Tables) == 0 || len(sw.SL2VL.Unread) != 0 {
				t.Fatalf("SL2VL not read: %+v", sw.SL2VL)
			}
			// Side by side with smpquery, one run per switch and
			// output port (it prints every input port).
			rows := map[string]string{}
			for pr, tb := range sw.SL2VL.Tables {
				key := fmt.Sprintf("%s %d", pr.Switch.Path, pr.Out)
				if _, ok := rows[key]; !ok {
					rows[key] = s.MustRun("gpu001", "smpquery", "-D", "sl2vl", pr.Switch.Path.String(), fmt.Sprint(pr.Out))
				}
				want := fmt.Sprintf("ports: in %2d, out %2d: %s", pr.In, pr.Out, tb.String())
				if !strings.Contains(rows[key], want) {
					t.Errorf("%s in %d out %d: ibdoctor read %s, smpquery printed:\n%s", pr.Switch.Description, pr.In, pr.Out, tb.String(), rows[key])
				}
			}
			fs := byCheck(res.Findings, "routing.credit-loop")
			if len(fs) != 2 {
				t.Fatalf("%d credit loops, want 2", len(fs))
			}
			for _, f := range fs {
				ev := f.Evidence[2].String()
				t.Logf("%s %s\n    %s", f.Severity, f.Title, ev)
				if f.Severity != c.sev || !strings.Contains(ev, c.want) {
					t.Errorf("%s with evidence %q, want %s with %q", f.Severity, ev, c.sev, c.want)
				}
			}
		})
	}
}
