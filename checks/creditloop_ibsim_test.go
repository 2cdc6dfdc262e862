package checks_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/ibsimtest"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// TestIBSimRingCreditLoop: a ring of five switches on ibsim, routed by a
// real OpenSM. Its default min-hop engine leaves a credit loop each way
// round the ring; its up/down engine (-R updn) none. ibdoctor reads the
// tables OpenSM programmed and must tell the two apart.
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
			for _, f := range res.Findings {
				if f.Check != "routing.credit-loop" && f.Severity >= 2 && !strings.HasPrefix(f.Check, "routing.") {
					t.Errorf("unexpected %s %s: %s", f.Severity, f.Check, f.Title)
				}
			}
		})
	}
}
