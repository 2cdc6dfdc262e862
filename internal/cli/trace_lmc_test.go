package cli

import (
	"strings"
	"testing"
)

// lmcFabric is one switch and two HCAs whose ports have LMC 2: h1 LIDs
// 4-7, h2 LIDs 8-11.
const lmcFabric = `vendid=0x2c9
devid=0xc738
sysimgguid=0x2c90200400000
switchguid=0x2c90200400000(2c90200400000)
Switch	8 "S-0002c90200400000"		# "sw1" base port 0 lid 2 lmc 0
[1]	"H-0002c90300500000"[1](2c90300500001) 		# "h1 mlx5_0" lid 4 4xQDR
[2]	"H-0002c90300510000"[1](2c90300510001) 		# "h2 mlx5_0" lid 8 4xQDR

vendid=0x2c9
devid=0x1017
sysimgguid=0x2c90300500000
caguid=0x2c90300500000
Ca	1 "H-0002c90300500000"		# "h1 mlx5_0"
[1](2c90300500001) 	"S-0002c90200400000"[1]		# lid 4 lmc 2 "sw1" lid 2 4xQDR

vendid=0x2c9
devid=0x1017
sysimgguid=0x2c90300510000
caguid=0x2c90300510000
Ca	1 "H-0002c90300510000"		# "h2 mlx5_0"
[1](2c90300510001) 	"S-0002c90200400000"[2]		# lid 8 lmc 2 "sw1" lid 2 4xQDR
`

// TestTraceLMCNamesDLID: trial A10. With LMC 2, 'trace 4 109' ended "To
// h024 HCA-1 port 1 (GUID ..., LID 108)" for each of DLIDs 108-111,
// whose hops differ: four traces read as four to LID 108. The ending
// names the LID traced and the port's range, as ibtracert's "lid
// 108-111"; the source likewise. (And one hop is "1 switch hop".)
func TestTraceLMCNamesDLID(t *testing.T) {
	topo := writeFile(t, "lmc.txt", lmcFabric)
	code, out, stderr := run("trace", "--sim="+topo, "--no-color", "5", "9")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	for _, want := range []string{
		"From h1 mlx5_0 port 1 (GUID 0x0002c90300500001, LID 5 of its 4-7, LMC 2)",
		"To h2 mlx5_0 port 1 (GUID 0x0002c90300510001, LID 9 of its 8-11, LMC 2): delivered after 1 switch hop\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = run("trace", "--sim="+topo, "--no-color", "h1", "h2")
	if code != 0 || !strings.Contains(out, "LID 8 of its 8-11, LMC 2): delivered") || !strings.Contains(out, "LID 4 of its 4-7, LMC 2)") {
		t.Errorf("by name (the base LIDs): exit %d\n%s", code, out)
	}
}
