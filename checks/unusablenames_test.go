package checks_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
)

// TestCorpusUnusableNames (trial H7): names nobody can act on, one info
// per fabric-wide pattern. The Quantum-2 capture's 8 switches all answer
// "Quantum-2 Mellanox Technologies" (ibdiagnet: 8 NODE_DUPLICATED_NODE_DESC);
// 21 of plafrim2's 23 IS5030 hosts carry the ConnectX default; the DGX
// file's hosts "localhost" (3 HCAs) and "ubuntu" (2) join its 69 firmware
// defaults. Voltaire 2007's 4 unnamed adapters are a lab's: nothing.
func TestCorpusUnusableNames(t *testing.T) {
	for _, c := range []struct {
		file, title string
		ents        int
	}{
		{"quantum2-ndr-ibdiagnet2.ibnetdiscover", `8 of the 9 switches carry the firmware's default description "Quantum-2 Mellanox Technologies": they can be told apart by GUID only`, 8},
		{"quantum2-ndr-ibdiagnet2.lst", `8 of the 9 switches carry the firmware's default description "Quantum-2 Mellanox Technologies"`, 8},
		{"quantum2-ndr-ibdiagnet2.db_csv", `8 of the 9 switches carry the firmware's default description "Quantum-2 Mellanox Technologies"`, 8},
		{"plafrim2-is5030.ibnetdiscover-p", "21 of the 23 host adapters carry the firmware's default description: the hosts cannot be told apart", 21},
		{"dgx-ndr-2025.ibnetdiscover", "74 host adapters still carry the firmware's default description (69) or a host name never set (5: localhost, ubuntu) while 468 are named after their hosts", 74},
		{"voltaire-sdr-2007.ibnetdiscover", "", 0},
	} {
		t.Run(c.file, func(t *testing.T) {
			fs := byCheck(corpusCheck(t, c.file, false).Findings, "names.default-description")
			if c.title == "" {
				if len(fs) > 0 {
					t.Errorf("want none:%s", titles(fs))
				}
				return
			}
			if len(fs) != 1 || !strings.HasPrefix(fs[0].Title, c.title) || len(fs[0].Entities) != c.ents || fs[0].Severity != checks.Info {
				t.Fatalf("want one info %q on %d nodes:%s", c.title, c.ents, titles(fs))
			}
			if !strings.Contains(fs[0].Action, "name") {
				t.Errorf("action %q: want the fix", fs[0].Action)
			}
		})
	}
}

// TestNamesPlaceholderHosts: adapters answering "localhost" or "ubuntu"
// are unnamed hosts in all but name (trial H7); with most hosts named
// they join the firmware defaults in the one finding.
func TestNamesPlaceholderHosts(t *testing.T) {
	_, res := smSweep(t, `desc "gpu002 mlx5_0" text="localhost mlx5_0"`+"\n"+`desc "gpu005 mlx5_0" text="MT4129 ConnectX7   Mellanox Technologies"`+"\n", 0)
	def := byCheck(res.Findings, "names.default-description")
	if len(def) != 1 || !strings.HasPrefix(def[0].Title, "2 host adapters still carry the firmware's default description (1) or a host name never set (1: localhost) while 6 are named") {
		t.Fatalf("names.default-description:%s", titles(def))
	}
	// 7 of 8 unnamed: fewer than eight, a lab's adapters, nothing (the
	// 21 of 23 of TestCorpusUnusableNames are one finding).
	var lines strings.Builder
	for i := 2; i <= 8; i++ {
		fmt.Fprintf(&lines, "desc \"gpu%03d mlx5_0\" text=\"ubuntu mlx5_0\"\n", i)
	}
	_, res = smSweep(t, lines.String(), 0)
	if def = byCheck(res.Findings, "names.default-description"); len(def) > 0 {
		t.Errorf("7 of 8 hosts 'ubuntu':%s", titles(def))
	}
}
