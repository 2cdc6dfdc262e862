package checks_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
)

func lidOf(t *testing.T, f *fabric.Fabric, name string) uint16 {
	t.Helper()
	ns := f.NodesByName(name)
	if len(ns) != 1 {
		t.Fatalf("no node %q", name)
	}
	for _, p := range ns[0].Ports {
		if p != nil && p.LID != 0 {
			return p.LID
		}
	}
	t.Fatalf("%q has no LID", name)
	return 0
}

func TestAddrDuplicateLID(t *testing.T) {
	_, res := faultSweep(t, func(f *fabric.Fabric) string {
		return fmt.Sprintf("lid \"gpu008 mlx5_0\" lid=%d\n", lidOf(t, f, "gpu007 mlx5_0"))
	}, 0)
	fs := byCheck(res.Findings, "addr.duplicate-lid")
	if len(fs) != 1 || fs[0].Severity != checks.Critical || !strings.Contains(fs[0].Title, "gpu007 mlx5_0/1") || !strings.Contains(fs[0].Title, "gpu008 mlx5_0/1") {
		logFindings(t, res.Findings)
		t.Fatalf("%d addr.duplicate-lid findings", len(fs))
	}
}

func TestAddrActiveNoLIDAndLMC(t *testing.T) {
	_, res := smSweep(t, "lid \"gpu003 mlx5_0\" lid=0\n", 0)
	fs := byCheck(res.Findings, "addr.active-no-lid")
	if len(fs) != 1 || fs[0].Severity != checks.Error || fs[0].Title != "gpu003 mlx5_0/1 is Active without a LID" {
		logFindings(t, res.Findings)
		t.Fatalf("addr.active-no-lid: %d findings", len(fs))
	}
	// No SM at all is sm.no-master's, not one finding per port.
	_, res = smSweep(t, "nosm\n", 0)
	if fs := byCheck(res.Findings, "addr.active-no-lid"); len(fs) != 0 {
		t.Errorf("no SM: %d addr.active-no-lid findings", len(fs))
	}
}

func TestNamesDescriptions(t *testing.T) {
	_, res := smSweep(t, `desc "gpu002 mlx5_0" text="gpu003 mlx5_0"`+"\n"+`desc "gpu005 mlx5_0" text="MT4129 ConnectX7   Mellanox Technologies"`+"\n", 0)
	dup := byCheck(res.Findings, "names.duplicate-description")
	if len(dup) != 1 || dup[0].Severity != checks.Warning || dup[0].Title != `2 nodes are described "gpu003 mlx5_0"` {
		logFindings(t, res.Findings)
		t.Errorf("names.duplicate-description: %d findings", len(dup))
	}
	def := byCheck(res.Findings, "names.default-description")
	if len(def) != 1 || !strings.HasPrefix(def[0].Title, "1 host adapters still carry the firmware's default description while 7 are named") {
		logFindings(t, res.Findings)
		t.Errorf("names.default-description: %d findings", len(def))
	}
	// Most hosts unnamed: a convention, not a finding.
	var lines strings.Builder
	for i := 2; i <= 7; i++ {
		fmt.Fprintf(&lines, "desc \"gpu%03d mlx5_0\" text=\"MT4129 ConnectX7   Mellanox Technologies\"\n", i)
	}
	_, res = smSweep(t, lines.String(), 0)
	if fs := byCheck(res.Findings, "names.default-description"); len(fs) != 0 {
		t.Errorf("6 of 8 hosts unnamed: %s", fs[0].Title)
	}
	if fs := byCheck(res.Findings, "names.duplicate-description"); len(fs) != 0 {
		t.Errorf("firmware defaults reported as duplicates: %s", fs[0].Title)
	}
}
