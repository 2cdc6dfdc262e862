package fabric

import (
	"bytes"
	"os"
	"path/filepath"
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

// testdata/pmdelta.db_csv (written for it) has PM_DELTA, what each
// counter grew during ibdiagnet's run: it is read as the increases
// (Fabric.CounterIncreases, and FileInfo.Increases by GUID and port for
// the counter sweep over the simulator), with the same columns and the
// same care as PM_INFO: PM_DELTA's implausible PortRcvErrorsExt is not
// read (the narrow column's 0 is), the retransmission_per_sec sentinel
// is no counter. It was not read at all (a note said so).
func TestParseDBCSVIncreases(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "pmdelta.db_csv"))
	if err != nil {
		t.Fatal(err)
	}
	f, info, err := Decode(data, "pmdelta.db_csv")
	if err != nil {
		t.Fatal(err)
	}
	sw, h := f.NodeByGUID(0x1).Ports[1], f.NodeByGUID(0x2).Ports[1]
	for _, c := range []struct {
		p     *Port
		name  string
		value uint64
	}{
		{h, "SymbolErrorCounter", 5},
		{h, "PortRcvErrors", 0},
		{sw, "LinkDownedCounter", 0},
		{sw, "PortXmitWait", 3000},
		{sw, "PortRcvErrors", 0},
		{sw, "PortXmitData", 21000},
	} {
		got, ok := f.CounterIncreases[c.p][c.name]
		if !ok || got != c.value {
			t.Errorf("%s port %d: %s increase %d (present %v), want %d", c.p.Node.Description, c.p.Num, c.name, got, ok, c.value)
		}
	}
	if f.Counters[sw]["LinkDownedCounter"] != 40 {
		t.Errorf("PM_INFO's LinkDownedCounter = %d, want 40", f.Counters[sw]["LinkDownedCounter"])
	}
	if got := info.Increases[PortID{GUID: 0x2, Port: 1}]["SymbolErrorCounter"]; got != 5 {
		t.Errorf("FileInfo.Increases: host SymbolErrorCounter %d, want 5", got)
	}
	for _, m := range f.CounterIncreases {
		if len(m) > 0 {
			for name := range m {
				if strings.Contains(name, "retransmission") {
					t.Errorf("%s read as a counter", name)
				}
			}
		}
	}
	joined := strings.Join(info.Notes, "\n")
	if !strings.Contains(joined, "START_PM_DELTA PortRcvErrorsExt 18446744073709551576") {
		t.Errorf("notes %q: want PM_DELTA's implausible value named", info.Notes)
	}
	if strings.Contains(joined, "not read") {
		t.Errorf("notes %q still say PM_DELTA is not read", info.Notes)
	}
}

// On the Quantum-2 file every port PM_INFO lists has its PM_DELTA row,
// and no error counter grew during ibdiagnet's run.
func TestReadFileDBCSVIncreases(t *testing.T) {
	f, info := readCorpus(t, "quantum2-ndr-ibdiagnet2.db_csv")
	if len(f.CounterIncreases) != 542 || len(info.Increases) != 542 {
		t.Fatalf("increases of %d ports (FileInfo %d), want PM_DELTA's 542", len(f.CounterIncreases), len(info.Increases))
	}
	grew := 0
	for p, m := range f.CounterIncreases {
		if m["PortXmitWait"] > 0 {
			grew++
		}
		for _, name := range []string{"LinkDownedCounter", "PortRcvErrors", "SymbolErrorCounter", "PortXmitDiscards", "PortRcvSwitchRelayErrors"} {
			if v, ok := m[name]; !ok || v != 0 {
				t.Errorf("%s port %d: %s increase %d (present %v), want 0", p.Node.Description, p.Num, name, v, ok)
			}
		}
	}
	if grew != 200 {
		t.Errorf("%d ports' PortXmitWait grew, want 200", grew)
	}
}

// The Quantum-2 file gives 14 ports a SymbolErrorCounter (16-bit) above
// their SymbolErrorCounterExt: is-north-7-compute-8 mlx5_0 (line 4400)
// counted 11160 symbol errors in the one and 0 in the other. The 64-bit
// column was read, so the port's symbol errors vanished. An extended
// counter counts what its narrow twin counts: the larger is read, and
// one note names the first such pair.
func TestDBCSVExtendedBelowNarrow(t *testing.T) {
	f, info := readCorpus(t, "quantum2-ndr-ibdiagnet2.db_csv")
	h := f.NodeByGUID(0x5c25730300e68e76)
	if got := f.Counters[h.Ports[1]]["SymbolErrorCounter"]; got != 11160 {
		t.Errorf("SymbolErrorCounter = %d, want the 16-bit column's 11160 (the Ext column says 0)", got)
	}
	var notes []string
	for _, n := range info.Notes {
		if strings.Contains(n, "SymbolErrorCounterExt") {
			notes = append(notes, n)
		}
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "line ") || !strings.Contains(notes[0], "more") {
		t.Errorf("want one note naming the first Ext column below its narrow twin and counting the others, got %q", info.Notes)
	}
	// Synthetic: testdata/pmdelta.db_csv with the host's
	// SymbolErrorCounterExt set to 0 beside SymbolErrorCounter 500.
	data, err := os.ReadFile(filepath.Join("testdata", "pmdelta.db_csv"))
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Replace(data, []byte(",500,0,20,0,50,0x0"), []byte(",0,0,20,0,50,0x0"), 1)
	f, info, err = Decode(data, "pmdelta.db_csv")
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Counters[f.NodeByGUID(0x2).Ports[1]]["SymbolErrorCounter"]; got != 500 {
		t.Errorf("synthetic: SymbolErrorCounter = %d, want 500; notes %q", got, info.Notes)
	}
}

// TestParseDBCSVFirmware: NODES_INFO gives each node's firmware version
// as flint prints it: the extended 32-bit fields (31.2012.1024), else the
// 8-bit ones on old firmware (a ConnectX-3's 2.40.0100), and the PSID; a
// row whose version is all zero is no version. The Quantum-2 capture
// records 265 nodes (its 7 aggregation nodes did not answer ibdiagnet).
func TestParseDBCSVFirmware(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "nodesinfo.db_csv"))
	if err != nil {
		t.Fatal(err)
	}
	f, _, err := ParseDBCSV(data)
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint64]string{1: "31.2012.1024 MT_0000000577", 2: "28.41.1000 MT_0000000970", 3: "2.40.0100 MT_1090110018"}
	if len(f.Firmware) != len(want) {
		t.Errorf("%d versions, want %d: %v", len(f.Firmware), len(want), f.Firmware)
	}
	for g, w := range want {
		fw, ok := f.Firmware[f.NodeByGUID(g)]
		if got := fw.String() + " " + fw.PSID; !ok || got != w {
			t.Errorf("node %#x: %q, want %q", g, got, w)
		}
	}
	bad := strings.Replace(string(data), "\n0x4,0xcf09", "\n0x9,0xcf09", 1)
	if _, _, err := ParseDBCSV([]byte(bad)); err == nil || !strings.Contains(err.Error(), "START_NODES does not list") || !strings.Contains(err.Error(), "line 29") {
		t.Errorf("row of an unknown node: %v, want an error naming the line", err)
	}
	q2, _ := readCorpus(t, "quantum2-ndr-ibdiagnet2.db_csv")
	if len(q2.Firmware) != 265 {
		t.Errorf("Quantum-2 capture: %d firmware versions, want 265", len(q2.Firmware))
	}
}

// TestDBCSVNarrowCounterGarbage (trial C11): a PM_INFO line whose 16-bit
// (or 8-bit, 32-bit) counter column holds a non-number was read without
// a word when its Ext twin parsed (the narrow column was only looked at
// when the Ext one was unusable), while the same garbage in the Ext
// column is a one-line error naming the line and the column. Both are
// now the same error.
func TestDBCSVNarrowCounterGarbage(t *testing.T) {
	path := corpusFile(t, "quantum2-ndr-ibdiagnet2.db_csv")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		field int // 1-based, as awk counts
		col   string
	}{{4, "LinkDownedCounter"}, {10, "PortRcvSwitchRelayErrors"}} {
		lines := strings.Split(string(data), "\n")
		fields := strings.Split(lines[4000-1], ",")
		fields[c.field-1] = "xyz"
		lines[4000-1] = strings.Join(fields, ",")
		_, _, err := Decode([]byte(strings.Join(lines, "\n")), "ibdiagnet2.db_csv")
		if err == nil {
			t.Errorf("%s \"xyz\" on line 4000: read without an error", c.col)
			continue
		}
		for _, want := range []string{"line 4000", c.col + ` "xyz" is not a counter value`} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q does not say %q", c.col, err, want)
			}
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("error is not one line: %q", err)
		}
	}
}
