package fabric

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ibdoctor/ibdoctor/mad"
)

// ibdiagnet's ibdiagnet2.db_csv: sections "START_<NAME>" ... "END_<NAME>",
// each a CSV table with a header row. The topology is in NODES (one row
// per node, NodeInfo's fields), PORTS (one row per port, PortInfo's raw
// fields) and LINKS (NodeGuid1,PortNum1,NodeGuid2,PortNum2). ibdiagnet
// writes a port's speeds as one number: the legacy speed bits, then the
// extended speed bits shifted by 8 (0x804: QDR legacy, NDR extended).
//
// Read: nodes, every port (unconnected ones too) with its state, widths,
// speeds, LID, LMC, MTUs, capability masks, MasterSMLID, VLs, M_Key
// policy and partition enforcement, the cables, SM_INFO's subnet
// managers (Fabric.SMs), PKEY's P_Key tables (Fabric.PKeys), PM_INFO's
// counters (Fabric.Counters), PM_DELTA's increases during ibdiagnet's
// run (Fabric.CounterIncreases; the file does not say how long the run
// was) and NODES_INFO's firmware versions (Fabric.Firmware). Not read (FileInfo.Notes says so when the file has them):
// forwarding tables.

type csvTable struct {
	name string // section, without START_
	line int    // line of the header row
	cols map[string]int
	rows [][]string
}

func (t *csvTable) get(row []string, col string) (string, bool) {
	i, ok := t.cols[col]
	if !ok || i >= len(row) {
		return "", false
	}
	return row[i], true
}

// dbSections splits data into its sections' tables (only the ones named).
func dbSections(data []byte, want map[string]bool) (map[string]*csvTable, []string, error) {
	out := make(map[string]*csvTable)
	var names []string
	lineNo := 0
	var cur string
	var body []byte
	start := 0
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += off
		}
		lineNo++
		line := strings.TrimSpace(string(data[off:end]))
		switch {
		case cur == "" && strings.HasPrefix(line, "START_"):
			cur, body, start = line[len("START_"):], body[:0], lineNo+1
			names = append(names, cur)
		case cur != "" && line == "END_"+cur:
			if want[cur] {
				r := csv.NewReader(bytes.NewReader(body))
				r.FieldsPerRecord = -1
				r.LazyQuotes = true
				recs, err := r.ReadAll()
				if err != nil {
					return nil, nil, &lineError{format: string(FormatDBCSV), line: start, text: "START_" + cur, err: fmt.Errorf("section %s: %w", cur, err)}
				}
				if len(recs) == 0 {
					return nil, nil, &lineError{format: string(FormatDBCSV), line: start, text: "START_" + cur, err: fmt.Errorf("section %s has no header row", cur)}
				}
				t := &csvTable{name: cur, line: start, cols: make(map[string]int), rows: recs[1:]}
				for i, c := range recs[0] {
					t.cols[c] = i
				}
				out[cur] = t
			}
			cur = ""
		case cur != "":
			if want[cur] {
				body = append(body, data[off:end]...)
				body = append(body, '\n')
			}
		case line == "" || line[0] == '#':
		default:
			return nil, nil, &lineError{format: string(FormatDBCSV), line: lineNo, text: line, err: errors.New("outside a START_/END_ section")}
		}
		off = end + 1
	}
	if cur != "" {
		return nil, nil, &lineError{format: string(FormatDBCSV), line: start - 1, text: "START_" + cur, err: fmt.Errorf("section %s has no END_%s (file cut short?)", cur, cur)}
	}
	return out, names, nil
}

func csvUint(t *csvTable, row []string, col string, bits int) (uint64, error) {
	v, ok := t.get(row, col)
	if !ok {
		return 0, fmt.Errorf("no %s column", col)
	}
	if v == "N/A" || v == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(v, 0, bits)
	if err != nil {
		return 0, fmt.Errorf("%s %q is not a %d-bit number", col, v, bits)
	}
	return n, nil
}

// dbSpeed decodes ibdiagnet's combined speed value.
func dbSpeed(v uint64) mad.Speed {
	var s mad.Speed
	for i, sp := range []mad.Speed{mad.SpeedSDR, mad.SpeedDDR, mad.SpeedQDR} {
		if v&(1<<i) != 0 {
			s |= sp
		}
	}
	for i, sp := range []mad.Speed{mad.SpeedFDR, mad.SpeedEDR, mad.SpeedHDR, mad.SpeedNDR, mad.SpeedXDR} {
		if v&(1<<(8+i)) != 0 {
			s |= sp
		}
	}
	if v&(1<<16) != 0 { // Mellanox FDR10
		s |= mad.SpeedFDR10
	}
	return s
}

// ParseDBCSV reads the topology of an ibdiagnet2.db_csv file; notes say
// what it holds that is not read.
func ParseDBCSV(data []byte) (*Fabric, []string, error) {
	tabs, names, err := dbSections(data, map[string]bool{"NODES": true, "PORTS": true, "LINKS": true, "PM_INFO": true, "PM_DELTA": true, "NODES_INFO": true, "SM_INFO": true, "PKEY": true})
	if err != nil {
		return nil, nil, err
	}
	for _, s := range []string{"NODES", "PORTS", "LINKS"} {
		if tabs[s] == nil {
			return nil, nil, fmt.Errorf("fabric: ibdiagnet2.db_csv: no START_%s section (a db_csv from an ibdiagnet run that stopped early?)", s)
		}
	}
	f := &Fabric{}
	nodes := make(map[uint64]*Node)
	fail := func(t *csvTable, i int, err error) error {
		return &lineError{format: string(FormatDBCSV), line: t.line + 1 + i, text: strings.Join(t.rows[i], ","), err: err}
	}
	nt := tabs["NODES"]
	for i, row := range nt.rows {
		var v [8]uint64
		for j, c := range []string{"NumPorts", "NodeType", "SystemImageGUID", "NodeGUID", "PortGUID", "DeviceID", "revision", "VendorID"} {
			bits := 64
			switch c {
			case "NumPorts", "NodeType":
				bits = 8
			case "DeviceID":
				bits = 16
			case "revision":
				bits = 32
			case "VendorID":
				bits = 24
			}
			if v[j], err = csvUint(nt, row, c, bits); err != nil {
				return nil, nil, fail(nt, i, err)
			}
		}
		typ := mad.NodeType(v[1])
		if typ < mad.NodeCA || typ > mad.NodeRouter || v[0] == 0 {
			return nil, nil, fail(nt, i, fmt.Errorf("NodeType %d with %d ports: want 1 (CA), 2 (switch) or 3 (router) and 1..255 ports", v[1], v[0]))
		}
		if nodes[v[3]] != nil {
			return nil, nil, fail(nt, i, fmt.Errorf("node 0x%016x listed twice", v[3]))
		}
		desc, _ := nt.get(row, "NodeDesc")
		n := &Node{Type: typ, GUID: v[3], SystemImageGUID: v[2], Description: desc, DeviceID: uint16(v[5]), Revision: uint32(v[6]), VendorID: uint32(v[7]), Ports: make([]*Port, v[0]+1)}
		if typ == mad.NodeSwitch {
			n.Switch = &Switch{}
		}
		nodes[n.GUID] = n
		f.Nodes = append(f.Nodes, n)
	}
	pt := tabs["PORTS"]
	has := func(cols ...string) bool {
		for _, c := range cols {
			if _, ok := pt.cols[c]; !ok {
				return false
			}
		}
		return true
	}
	f.Recorded = Recorded{
		SMInfo: tabs["SM_INFO"] != nil && has("MSMLID"),
		VLs:    has("VLCap", "OpVLs"),
		MKey:   has("MKeyProtBits", "M_KeyLeasePeriod"),
		PKeys:  tabs["PKEY"] != nil && has("PartEnfInb", "PartEnfOutb"),
	}
	for i, row := range pt.rows {
		cols := []string{"NodeGuid", "PortGuid", "PortNum", "LID", "LMC", "LinkWidthActv", "LinkWidthEn", "LinkWidthSup", "LinkSpeedActv", "LinkSpeedEn", "LinkSpeedSup", "PortState", "PortPhyState", "NMTU", "MTUCap", "CapMsk", "CapMsk2"}
		v := make(map[string]uint64, len(cols))
		for _, c := range cols {
			x, err := csvUint(pt, row, c, 64)
			if err != nil && c != "CapMsk2" {
				return nil, nil, fail(pt, i, err)
			}
			v[c] = x
		}
		n := nodes[v["NodeGuid"]]
		if n == nil {
			return nil, nil, fail(pt, i, fmt.Errorf("port of node 0x%016x, which START_NODES does not list", v["NodeGuid"]))
		}
		num := v["PortNum"]
		if num >= uint64(len(n.Ports)) || num == 0 && n.Type != mad.NodeSwitch {
			return nil, nil, fail(pt, i, fmt.Errorf("port %d out of range for node 0x%016x (%d ports)", num, n.GUID, n.NumPorts()))
		}
		if v["LID"] > 0xffff || v["LMC"] > 7 {
			return nil, nil, fail(pt, i, fmt.Errorf("LID %d LMC %d out of range", v["LID"], v["LMC"]))
		}
		p := &Port{Node: n, Num: uint8(num), GUID: v["PortGuid"], LID: uint16(v["LID"]), LMC: uint8(v["LMC"]),
			State: mad.PortState(v["PortState"]), PhysState: mad.PhysState(v["PortPhyState"]),
			WidthActive: mad.Width(v["LinkWidthActv"]), WidthEnabled: mad.Width(v["LinkWidthEn"]), WidthSupported: mad.Width(v["LinkWidthSup"]),
			SpeedActive: dbSpeed(v["LinkSpeedActv"]), SpeedEnabled: dbSpeed(v["LinkSpeedEn"]), SpeedSupported: dbSpeed(v["LinkSpeedSup"]),
			NeighborMTU: mad.MTU(v["NMTU"]), MTUCap: mad.MTU(v["MTUCap"]), CapMask: uint32(v["CapMsk"]), CapMask2: uint16(v["CapMsk2"])}
		if err := dbPortConfig(pt, row, p, f.Recorded); err != nil {
			return nil, nil, fail(pt, i, err)
		}
		if p.SpeedActive&^(mad.SpeedSDR|mad.SpeedDDR|mad.SpeedQDR) != 0 {
			// Legacy and extended active both set: the extended one runs.
			p.SpeedActive &^= mad.SpeedSDR | mad.SpeedDDR | mad.SpeedQDR
		}
		n.Ports[num] = p
	}
	lt := tabs["LINKS"]
	for i, row := range lt.rows {
		var v [4]uint64
		for j, c := range []string{"NodeGuid1", "PortNum1", "NodeGuid2", "PortNum2"} {
			if v[j], err = csvUint(lt, row, c, 64); err != nil {
				return nil, nil, fail(lt, i, err)
			}
		}
		var ends [2]*Port
		for k := 0; k < 2; k++ {
			n := nodes[v[2*k]]
			num := v[2*k+1]
			if n == nil || num == 0 || num >= uint64(len(n.Ports)) || n.Ports[num] == nil {
				return nil, nil, fail(lt, i, fmt.Errorf("link end 0x%016x port %d is not in START_NODES/START_PORTS", v[2*k], num))
			}
			ends[k] = n.Ports[num]
		}
		if ends[0].Remote != nil || ends[1].Remote != nil {
			return nil, nil, fail(lt, i, errors.New("a port of this link is already on another"))
		}
		ends[0].Remote, ends[1].Remote = ends[1], ends[0]
	}
	var notes []string
	if pm := tabs["PM_INFO"]; pm != nil {
		ctrs, pmNotes, err := dbCounters(nodes, pm, fail)
		if err != nil {
			return nil, nil, err
		}
		f.Counters = ctrs
		notes = append(notes, pmNotes...)
	}
	if pm := tabs["PM_DELTA"]; pm != nil {
		// ibdiagnet reads the counters at the start of its run and again
		// at the end; PM_DELTA is the difference, same columns.
		incs, pmNotes, err := dbCounters(nodes, pm, fail)
		if err != nil {
			return nil, nil, err
		}
		f.CounterIncreases = incs
		notes = append(notes, pmNotes...)
	}
	if f.Recorded.SMInfo {
		if f.SMs, err = dbSMs(nodes, tabs["SM_INFO"], fail); err != nil {
			return nil, nil, err
		}
		f.SMs = append([]RecordedSM{}, f.SMs...) // recorded: none is not nil
	}
	if f.Recorded.PKeys {
		if f.PKeys, err = dbPKeys(nodes, tabs["PKEY"], fail); err != nil {
			return nil, nil, err
		}
	}
	if t := tabs["NODES_INFO"]; t != nil {
		fw, err := dbFirmware(nodes, t, fail)
		if err != nil {
			return nil, nil, err
		}
		f.Firmware = fw
	}
	for _, s := range names {
		switch s {
		case "UNICAST_FWD_TBL", "LFTS":
			notes = append(notes, fmt.Sprintf("the START_%s forwarding tables are not read yet", s))
		}
	}
	return f, notes, nil
}

func decodeDBCSV(data []byte, info *FileInfo) (*Fabric, error) {
	f, notes, err := ParseDBCSV(data)
	if err != nil {
		return nil, err
	}
	info.Notes = append(info.Notes, notes...)
	if f.CounterIncreases != nil {
		info.Increases = make(map[PortID]map[string]uint64, len(f.CounterIncreases))
		for p, m := range f.CounterIncreases {
			info.Increases[PortID{GUID: p.Node.GUID, Port: p.Num}] = m
		}
	}
	return f, nil
}

// dbPortConfig reads the PortInfo fields of a PORTS row that the SM
// sets and the sm, config and partition checks judge, those rec says
// the table has: MSMLID, VLCap and OpVLs, the M_Key protection bits and
// lease period, the partition enforcement bits. ibdiagnet writes 0 (or
// N/A) where a port did not answer: 0 is kept, as not read.
func dbPortConfig(t *csvTable, row []string, p *Port, rec Recorded) error {
	var v [7]uint64
	for j, c := range []struct {
		col string
		on  bool
		max uint64
	}{
		{"MSMLID", rec.SMInfo, 0xffff},
		{"VLCap", rec.VLs, 15},
		{"OpVLs", rec.VLs, 15},
		{"MKeyProtBits", rec.MKey, 3},
		{"M_KeyLeasePeriod", rec.MKey, 0xffff},
		{"PartEnfInb", rec.PKeys, 1},
		{"PartEnfOutb", rec.PKeys, 1},
	} {
		if !c.on {
			continue
		}
		x, err := csvUint(t, row, c.col, 64)
		if err != nil {
			return err
		}
		if x > c.max {
			return fmt.Errorf("%s %d out of range (0..%d)", c.col, x, c.max)
		}
		v[j] = x
	}
	p.MasterSMLID = uint16(v[0])
	p.VLCap, p.OperVLs = uint8(v[1]), uint8(v[2])
	p.MKeyProtect, p.MKeyLease = uint8(v[3]), uint16(v[4])
	if v[5] != 0 {
		p.PKeyEnforce |= PKeyEnforceIn
	}
	if v[6] != 0 {
		p.PKeyEnforce |= PKeyEnforceOut
	}
	return nil
}

// dbSMs reads SM_INFO, ibdiagnet's record of the SMInfo every subnet
// manager answered: behind which port (a switch's port 0), its GUID,
// state, priority and ActCount.
func dbSMs(nodes map[uint64]*Node, t *csvTable, fail func(*csvTable, int, error) error) ([]RecordedSM, error) {
	var out []RecordedSM
	seen := map[*Port]bool{}
	for i, row := range t.rows {
		var v [6]uint64
		for j, c := range []struct {
			col  string
			bits int
		}{{"NodeGUID", 64}, {"PortNumber", 8}, {"GUID", 64}, {"ActCount", 32}, {"SmState", 8}, {"Priority", 8}} {
			var err error
			if v[j], err = csvUint(t, row, c.col, c.bits); err != nil {
				return nil, fail(t, i, err)
			}
		}
		n := nodes[v[0]]
		if n == nil || v[1] >= uint64(len(n.Ports)) || n.Ports[v[1]] == nil || (n.Type == mad.NodeSwitch) != (v[1] == 0) {
			return nil, fail(t, i, fmt.Errorf("SMInfo of node 0x%016x port %d, which START_NODES/START_PORTS do not list (a switch's SM is behind its port 0, a CA's behind a port of its own)", v[0], v[1]))
		}
		if v[4] > uint64(mad.SMMaster) || v[5] > 15 {
			return nil, fail(t, i, fmt.Errorf("SmState %d Priority %d: want a state 0..3 (3: master) and a 4-bit priority", v[4], v[5]))
		}
		p := n.Ports[v[1]]
		if seen[p] {
			return nil, fail(t, i, fmt.Errorf("SMInfo of node 0x%016x port %d listed twice", v[0], v[1]))
		}
		seen[p] = true
		out = append(out, RecordedSM{Port: p, GUID: v[2], ActCount: uint32(v[3]), State: mad.SMState(v[4]), Priority: uint8(v[5])})
	}
	return out, nil
}

// maxPKeyEntries bounds the P_Key entries a db_csv may record in all,
// counting the empty ones before an entry's index: a table is at most
// 65536 entries (a 16-bit PartitionCap), and a file with more than this
// is not an ibdiagnet run's.
const maxPKeyEntries = 1 << 20

// dbPKeys reads PKEY, ibdiagnet's record of the ports' P_Key tables: a
// row per entry it read that is not empty, by block and index, the
// partition (15 bits) and the membership apart (1: full).
func dbPKeys(nodes map[uint64]*Node, t *csvTable, fail func(*csvTable, int, error) error) (map[*Port][]mad.PKey, error) {
	out := map[*Port][]mad.PKey{}
	portCol := "PortNum"
	if _, ok := t.cols[portCol]; !ok {
		portCol = "LocalPortNum" // what ibdiagnet 2.10 calls it here
	}
	total := 0
	for i, row := range t.rows {
		var v [6]uint64
		for j, c := range []struct {
			col  string
			bits int
		}{{"NodeGUID", 64}, {portCol, 8}, {"BlockNum", 16}, {"Index", 8}, {"PKey", 16}, {"Membership", 8}} {
			var err error
			if v[j], err = csvUint(t, row, c.col, c.bits); err != nil {
				return nil, fail(t, i, err)
			}
		}
		n := nodes[v[0]]
		if n == nil || v[1] >= uint64(len(n.Ports)) || n.Ports[v[1]] == nil {
			return nil, fail(t, i, fmt.Errorf("P_Key of node 0x%016x port %d, which START_NODES/START_PORTS do not list", v[0], v[1]))
		}
		if v[3] >= mad.PKeyBlockSize || v[2] >= 65536/mad.PKeyBlockSize || v[4] > 0x7fff || v[5] > 1 {
			return nil, fail(t, i, fmt.Errorf("BlockNum %d Index %d PKey %#x Membership %d: want a block below 2048, an index below %d, a 15-bit partition and a membership 0 or 1", v[2], v[3], v[4], v[5], mad.PKeyBlockSize))
		}
		p := n.Ports[v[1]]
		at := int(v[2])*mad.PKeyBlockSize + int(v[3])
		keys := out[p]
		if at >= len(keys) {
			total += at + 1 - len(keys)
			if total > maxPKeyEntries {
				return nil, fail(t, i, fmt.Errorf("more than %d P_Key entries in all: not a fabric's tables", maxPKeyEntries))
			}
			keys = append(keys, make([]mad.PKey, at+1-len(keys))...)
		}
		if keys[at] != 0 {
			return nil, fail(t, i, fmt.Errorf("P_Key of node 0x%016x port %d block %d index %d listed twice", v[0], v[1], v[2], v[3]))
		}
		keys[at] = mad.PKey(v[4] | v[5]<<15)
		out[p] = keys
	}
	return out, nil
}

// dbFirmware reads NODES_INFO, ibdiagnet's record of each node's
// GeneralInfo answer: the extended 32-bit version (what flint prints)
// when set, else the 8-bit one, and the PSID. A node ibdiagnet got no
// answer from has no row; a row whose version is 0.0.0 is left out too.
func dbFirmware(nodes map[uint64]*Node, t *csvTable, fail func(*csvTable, int, error) error) (map[*Node]Firmware, error) {
	out := make(map[*Node]Firmware)
	cols := []string{"NodeGUID", "FWInfo_Major", "FWInfo_Minor", "FWInfo_SubMinor", "FWInfo_Extended_Major", "FWInfo_Extended_Minor", "FWInfo_Extended_SubMinor"}
	for i, row := range t.rows {
		var v [7]uint64
		for j, c := range cols {
			bits := 32
			switch {
			case j == 0:
				bits = 64
			case j < 4:
				bits = 8
			}
			var err error
			if v[j], err = csvUint(t, row, c, bits); err != nil {
				return nil, fail(t, i, err)
			}
		}
		n := nodes[v[0]]
		if n == nil {
			return nil, fail(t, i, fmt.Errorf("firmware of node 0x%016x, which START_NODES does not list", v[0]))
		}
		fw := Firmware{Major: uint32(v[4]), Minor: uint32(v[5]), SubMinor: uint32(v[6])}
		if fw == (Firmware{}) {
			fw = Firmware{Major: uint32(v[1]), Minor: uint32(v[2]), SubMinor: uint32(v[3])}
		}
		if fw == (Firmware{}) {
			continue
		}
		if psid, ok := t.get(row, "FWInfo_PSID"); ok && psid != "N/A" {
			fw.PSID = psid
		}
		out[n] = fw
	}
	return out, nil
}

// pmColumns maps PM_INFO's columns to PortCounters names: the first
// column present and not N/A wins, the extended (64-bit) one first. bits
// is the width of the last (narrow) column, for saying it saturated.
var pmColumns = []struct {
	name string
	cols []string
	bits int
}{
	{"SymbolErrorCounter", []string{"SymbolErrorCounterExt", "SymbolErrorCounter"}, 16},
	{"LinkErrorRecoveryCounter", []string{"LinkErrorRecoveryCounterExt", "LinkErrorRecoveryCounter"}, 8},
	{"LinkDownedCounter", []string{"LinkDownedCounterExt", "LinkDownedCounter"}, 8},
	{"PortRcvErrors", []string{"PortRcvErrorsExt", "PortRcvErrors"}, 16},
	{"PortRcvRemotePhysicalErrors", []string{"PortRcvRemotePhysicalErrorsExt", "PortRcvRemotePhysicalErrors"}, 16},
	{"PortRcvSwitchRelayErrors", []string{"PortRcvSwitchRelayErrorsExt", "PortRcvSwitchRelayErrors"}, 16},
	{"PortXmitDiscards", []string{"PortXmitDiscardsExt", "PortXmitDiscards"}, 16},
	{"PortXmitConstraintErrors", []string{"PortXmitConstraintErrorsExt", "PortXmitConstraintErrors"}, 8},
	{"PortRcvConstraintErrors", []string{"PortRcvConstraintErrorsExt", "PortRcvConstraintErrors"}, 8},
	{"LocalLinkIntegrityErrors", []string{"LocalLinkIntegrityErrorsExt", "LocalLinkIntegrityErrors"}, 4},
	{"ExcessiveBufferOverrunErrors", []string{"ExcessiveBufferOverrunErrorsExt", "ExcessiveBufferOverrunErrors"}, 4},
	{"VL15Dropped", []string{"VL15DroppedExt", "VL15Dropped"}, 16},
	{"PortXmitData", []string{"PortXmitDataExtended", "PortXmitData"}, 32},
	{"PortRcvData", []string{"PortRcvDataExtended", "PortRcvData"}, 32},
	{"PortXmitPkts", []string{"PortXmitPktsExtended", "PortXmitPkts"}, 32},
	{"PortRcvPkts", []string{"PortRcvPktsExtended", "PortRcvPkts"}, 32},
	{"PortXmitWait", []string{"PortXmitWaitExt", "PortXmitWait"}, 32},
	{"QP1Dropped", []string{"QP1DroppedExt"}, 64},
	{"PortUnicastXmitPkts", []string{"PortUniCastXmitPkts"}, 64},
	{"PortUnicastRcvPkts", []string{"PortUniCastRcvPkts"}, 64},
	{"PortMulticastXmitPkts", []string{"PortMultiCastXmitPkts"}, 64},
	{"PortMulticastRcvPkts", []string{"PortMultiCastRcvPkts"}, 64},
}

// implausible is where a counter column holds a value no port counts to:
// 2^63 or more is a negative number printed unsigned (ibdiagnet writes
// 2^64-40 for a PortRcvErrorsExt it computed wrongly), not a count.
const implausible = 1 << 63

// dbCounters reads a PM table (PM_INFO, PM_DELTA) into one map per port, keyed by
// NodeGUID and PortNumber, which START_PORTS must list. An implausible
// value is not read: the next (narrower) column is; an extended value
// below its narrow twin's gives way to it. The notes name the first of
// each, its line and columns.
func dbCounters(nodes map[uint64]*Node, t *csvTable, fail func(*csvTable, int, error) error) (map[*Port]map[string]uint64, []string, error) {
	out := make(map[*Port]map[string]uint64, len(t.rows))
	var (
		note, below     string
		more, belowMore int
	)
	for i, row := range t.rows {
		guid, err := csvUint(t, row, "NodeGUID", 64)
		if err != nil {
			return nil, nil, fail(t, i, err)
		}
		num, err := csvUint(t, row, "PortNumber", 8)
		if err != nil {
			return nil, nil, fail(t, i, err)
		}
		n := nodes[guid]
		if n == nil || num >= uint64(len(n.Ports)) || n.Ports[num] == nil {
			return nil, nil, fail(t, i, fmt.Errorf("counters of node 0x%016x port %d, which START_NODES/START_PORTS do not list", guid, num))
		}
		p := n.Ports[num]
		if out[p] != nil {
			return nil, nil, fail(t, i, fmt.Errorf("counters of node 0x%016x port %d listed twice", guid, num))
		}
		m := make(map[string]uint64, len(pmColumns))
		for _, c := range pmColumns {
			var skipped string // the implausible column passed over
			read := c.name + " left out"
			chosen := -1
			for k, col := range c.cols {
				v, ok := t.get(row, col)
				if !ok || v == "N/A" || v == "" {
					continue
				}
				x, err := strconv.ParseUint(v, 0, 64)
				if err != nil {
					return nil, nil, fail(t, i, fmt.Errorf("%s %q is not a counter value", col, v))
				}
				if chosen >= 0 {
					// Read already; a narrower twin that is no
					// number is as bad a line (trial C11).
					continue
				}
				if x >= implausible {
					if skipped == "" {
						skipped = col + " " + v
					}
					continue
				}
				m[c.name], chosen = x, k
				read = fmt.Sprintf("%s %d read instead", col, x)
				if k == len(c.cols)-1 && c.bits < 64 && x == 1<<c.bits-1 {
					read += fmt.Sprintf(" (the %d-bit counter's maximum: saturated, the true count is larger)", c.bits)
				}
			}
			switch {
			case skipped == "":
			case note == "":
				note = fmt.Sprintf("line %d: START_%s %s (node 0x%016x port %d) is not a count (2^63 or more: a negative number printed unsigned); %s", t.line+1+i, t.name, skipped, guid, num, read)
			default:
				more++
			}
			if chosen < 0 || chosen == len(c.cols)-1 || c.bits > 16 {
				continue
			}
			// An extended error counter counts every event its narrow
			// twin counts: below it, it was not counting (or was cleared
			// apart), and the narrow one's count is the port's. (Data,
			// packet and wait counters, 32-bit, move between the two
			// attributes' reads: they differ a little, and are left.)
			narrow := c.cols[len(c.cols)-1]
			v, _ := t.get(row, narrow)
			y, err := strconv.ParseUint(v, 0, 64)
			if err != nil || y >= implausible || y <= m[c.name] {
				continue
			}
			if below == "" {
				below = fmt.Sprintf("line %d: START_%s %s %d is below %s %d (node 0x%016x port %d): an extended counter counts what its narrow twin counts, so it was not counting or was cleared apart; the larger, %d, is read", t.line+1+i, t.name, c.cols[chosen], m[c.name], narrow, y, guid, num, y)
			} else {
				belowMore++
			}
			m[c.name] = y
		}
		out[p] = m
	}
	if more > 0 {
		note += fmt.Sprintf(" (and %d more such values, read the same way)", more)
	}
	if belowMore > 0 {
		below += fmt.Sprintf(" (and %d more such pairs, read the same way)", belowMore)
	}
	var notes []string
	for _, n := range []string{note, below} {
		if n != "" {
			notes = append(notes, n)
		}
	}
	return out, notes, nil
}
