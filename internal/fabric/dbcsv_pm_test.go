package fabric

import (
	"strings"
	"testing"
)

// The Quantum-2 db_csv gives is-north-7-compute-8 mlx5_0 (line 4400)
// PortRcvErrorsExt = 18446744073709551576, 2^64-40: a negative number
// printed unsigned, not a count. It was read as the port's PortRcvErrors
// (and judged "= 18446744073709551615 (saturated)"). The 16-bit
// PortRcvErrors beside it, 65535, is what the port counted (saturated),
// and one note names the line and the column. The sentinels in columns
// that are not counters (retransmission_per_sec 0xfffffffffffffffe,
// PortLoopingErrors -1) are read as nothing.
func TestDBCSVImplausibleExtendedCounter(t *testing.T) {
	f, info := readCorpus(t, "quantum2-ndr-ibdiagnet2.db_csv")
	h := f.NodeByGUID(0x5c25730300e68e76)
	if h == nil {
		t.Fatal("is-north-7-compute-8 mlx5_0 not read")
	}
	if got := f.Counters[h.Ports[1]]["PortRcvErrors"]; got != 65535 {
		t.Errorf("PortRcvErrors = %d, want the 16-bit column's 65535", got)
	}
	for p, m := range f.Counters {
		for name, v := range m {
			if v >= 1<<63 {
				t.Errorf("%s port %d: %s = %d read as a count", p.Node.Description, p.Num, name, v)
			}
		}
	}
	var notes []string
	for _, n := range info.Notes {
		if strings.Contains(n, "PortRcvErrorsExt") {
			notes = append(notes, n)
		}
	}
	if len(notes) != 1 {
		t.Fatalf("want one note on PortRcvErrorsExt, got %q", info.Notes)
	}
	for _, want := range []string{"line 4400", "PortRcvErrorsExt", "18446744073709551576", "PortRcvErrors 65535", "saturated"} {
		if !strings.Contains(notes[0], want) {
			t.Errorf("note %q does not say %q", notes[0], want)
		}
	}
}
