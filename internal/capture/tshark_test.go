package capture

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// tsharkFields are the fields the external check asks tshark for, one
// column each.
var tsharkFields = []string{
	"frame.len",
	"erf.types.type",
	"infiniband.lrh.vl",
	"infiniband.lrh.sl",
	"infiniband.lrh.lnh",
	"infiniband.lrh.dlid",
	"infiniband.lrh.slid",
	"infiniband.lrh.pktlen",
	"infiniband.bth.opcode",
	"infiniband.bth.p_key",
	"infiniband.bth.destqp",
	"infiniband.bth.psn",
	"infiniband.deth.q_key",
	"infiniband.deth.srcqp",
	"infiniband.mad.baseversion",
	"infiniband.mad.mgmtclass",
	"infiniband.mad.classversion",
	"infiniband.mad.method",
	"infiniband.mad.transactionid",
	"infiniband.mad.attributeid",
	"infiniband.mad.attributemodifier",
	"infiniband.smpdirected.hoppointer",
	"infiniband.smpdirected.hopcount",
	"infiniband.smpdirected.drslid",
	"infiniband.smpdirected.drdlid",
	"infiniband.nodeinfo.nodetype",
	"infiniband.nodeinfo.numports",
	"infiniband.nodeinfo.nodeguid",
	"infiniband.nodeinfo.portguid",
	"infiniband.nodeinfo.deviceid",
	"infiniband.nodeinfo.localportnum",
	"infiniband.nodeinfo.vendorid",
	"infiniband.portinfo.lid",
	"infiniband.portinfo.mastersmlid",
	"infiniband.portinfo.capabilitymask",
	"infiniband.portinfo.localportnum",
	"infiniband.portinfo.linkwidthsupported",
	"infiniband.portinfo.linkwidthactive",
	"infiniband.portinfo.portstate",
	"infiniband.portinfo.portphysicalstate",
	"infiniband.portinfo.linkspeedactive",
	"infiniband.portinfo.neighbormtu",
	"infiniband.portinfo.vlcap",
	"infiniband.portinfo.mtucap",
	"infiniband.portinfo.operationalvls",
	"infiniband.classportinfo.capabilitymask",
	"infiniband.classportinfo.resptimevalue",
	"infiniband.portcounters.portselect",
	"infiniband.portcounters.symbolerrorcounter",
	"infiniband.portcounters.linkerrorrecoverycounter",
	"infiniband.portcounters.linkdownedcounter",
	"infiniband.portcounters.portrcverrors",
	"infiniband.portcounters.portxmitdiscards",
	"infiniband.portcounters.portxmitdata",
	"infiniband.portcounters.portrcvdata",
	"infiniband.portcounters.portxmitpkts",
	"infiniband.portcounters.portrcvpkts",
	"infiniband.invariant.crc",
	"infiniband.variant.crc",
	"_ws.malformed",
	"_ws.expert",
}

// needTool returns the path of an external tool, skipping the test when it
// is absent, unless CI=true, where absence is a failure.
func needTool(t *testing.T, name, debPkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s not found and CI=true: install the Debian package %s", name, debPkg)
	}
	t.Skipf("%s not found: install the Debian package %s to run this test", name, debPkg)
	return ""
}

// TestTsharkDecodes writes a capture of SMPs and PerfMgt MADs, has tshark
// decode it, and checks that tshark's fields are the values encoded.
func TestTsharkDecodes(t *testing.T) {
	tshark := needTool(t, "tshark", "tshark")
	raw := writeTestCapture(t)
	path := filepath.Join(t.TempDir(), "madset.pcap")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-n", "-r", path, "-T", "fields", "-E", "separator=/t", "-E", "occurrence=f"}
	for _, f := range tsharkFields {
		args = append(args, "-e", f)
	}
	cmd := exec.Command(tshark, args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir()) // no user profile
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	mads := testMADs(t)
	if len(lines) != len(mads) {
		t.Fatalf("tshark printed %d packets, want %d:\n%s", len(lines), len(mads), out)
	}

	// Records in file order: ICRC/VCRC bytes as stored, for comparison.
	records := make([][]byte, 0, len(mads))
	for i := range mads {
		off := 24 + i*(16+RecordSize) + 16
		records = append(records, raw[off:off+RecordSize])
	}

	for i, line := range lines {
		cols := strings.Split(line, "\t")
		if len(cols) != len(tsharkFields) {
			t.Fatalf("packet %d: %d columns, want %d", i+1, len(cols), len(tsharkFields))
		}
		got := map[string]string{}
		for j, c := range cols {
			got[tsharkFields[j]] = c
		}
		m := mads[i]
		check := func(field string, want uint64) {
			t.Helper()
			s := got[field]
			if s == "" {
				t.Errorf("%s: tshark shows no %s (want %d)", m.name, field, want)
				return
			}
			v, err := strconv.ParseUint(s, 0, 64)
			if err != nil {
				t.Errorf("%s: %s = %q is not a number", m.name, field, s)
				return
			}
			if v != want {
				t.Errorf("%s: tshark %s = %#x, encoded %#x", m.name, field, v, want)
			}
		}
		absent := func(field string) {
			t.Helper()
			if s := got[field]; s != "" {
				t.Errorf("%s: tshark shows %s = %q, want none", m.name, field, s)
			}
		}

		absent("_ws.malformed")
		absent("_ws.expert")
		check("frame.len", FrameSize)
		check("erf.types.type", erfTypeIB)
		check("infiniband.lrh.lnh", lnhIBALocal)
		check("infiniband.lrh.pktlen", pktLenWords)
		check("infiniband.lrh.sl", 0)
		check("infiniband.bth.opcode", opUDSendOnly)
		check("infiniband.bth.p_key", 0xffff)
		check("infiniband.bth.psn", uint64(i))
		check("infiniband.mad.baseversion", 1)
		check("infiniband.mad.classversion", 1)
		check("infiniband.mad.mgmtclass", uint64(m.mad[1]))
		check("infiniband.mad.method", uint64(m.mad[3]))
		check("infiniband.mad.transactionid", binary.BigEndian.Uint64(m.mad[8:16]))
		check("infiniband.mad.attributeid", uint64(binary.BigEndian.Uint16(m.mad[16:18])))
		check("infiniband.mad.attributemodifier", uint64(binary.BigEndian.Uint32(m.mad[20:24])))

		const local, target = 0x0003, piLID
		isSMP := m.mad[1] == 0x01 || m.mad[1] == 0x81
		if isSMP {
			check("infiniband.lrh.vl", 15)
			check("infiniband.bth.destqp", 0)
			check("infiniband.deth.srcqp", 0)
			check("infiniband.deth.q_key", 0)
			// tshark reads the CRC fields big-endian; they must be the
			// bytes we stored, at the place tshark expects them.
			check("infiniband.invariant.crc", uint64(binary.BigEndian.Uint32(records[i][offICRC:offVCRC])))
			check("infiniband.variant.crc", uint64(binary.BigEndian.Uint16(records[i][offVCRC:])))
		} else {
			check("infiniband.lrh.vl", 0)
			check("infiniband.bth.destqp", 1)
			check("infiniband.deth.srcqp", 1)
			check("infiniband.deth.q_key", 0x80010000)
		}
		peer := uint64(target)
		if m.mad[1] == 0x81 {
			peer = 0xffff
		}
		if m.dir == Sent {
			check("infiniband.lrh.dlid", peer)
			check("infiniband.lrh.slid", local)
		} else {
			check("infiniband.lrh.dlid", local)
			check("infiniband.lrh.slid", peer)
		}
		if m.mad[1] == 0x81 {
			// Not the D bit: tshark 4.0 masks it at the wrong width.
			check("infiniband.smpdirected.hoppointer", uint64(m.mad[6]))
			check("infiniband.smpdirected.hopcount", uint64(m.mad[7]))
			check("infiniband.smpdirected.drslid", 0xffff)
			check("infiniband.smpdirected.drdlid", 0xffff)
		}

		switch m.name {
		case "DR NodeInfo request":
			check("infiniband.smpdirected.hoppointer", 0)
			check("infiniband.smpdirected.hopcount", 1)
		case "DR NodeInfo response":
			check("infiniband.smpdirected.hoppointer", 2)
			check("infiniband.smpdirected.hopcount", 1)
			check("infiniband.nodeinfo.nodetype", 2)
			check("infiniband.nodeinfo.numports", swNumPorts)
			check("infiniband.nodeinfo.nodeguid", swNodeGUID)
			check("infiniband.nodeinfo.portguid", swPortGUID)
			check("infiniband.nodeinfo.deviceid", swDeviceID)
			check("infiniband.nodeinfo.localportnum", swLocalPort)
			check("infiniband.nodeinfo.vendorid", 0x0002c9)
		case "DR PortInfo response", "LID PortInfo response":
			check("infiniband.portinfo.lid", piLID)
			check("infiniband.portinfo.mastersmlid", piSMLID)
			check("infiniband.portinfo.capabilitymask", piCapMask)
			check("infiniband.portinfo.localportnum", piLocalPortNum)
			check("infiniband.portinfo.linkwidthsupported", piLinkWidthSupp)
			check("infiniband.portinfo.linkwidthactive", piLinkWidthActive)
			check("infiniband.portinfo.portstate", piPortState)
			check("infiniband.portinfo.portphysicalstate", piPhysState)
			check("infiniband.portinfo.linkspeedactive", piLinkSpeedActive)
			check("infiniband.portinfo.neighbormtu", 5)
			check("infiniband.portinfo.vlcap", 4)
			check("infiniband.portinfo.mtucap", 5)
			check("infiniband.portinfo.operationalvls", 4)
		case "ClassPortInfo response":
			check("infiniband.classportinfo.capabilitymask", cpiCapMask)
			check("infiniband.classportinfo.resptimevalue", 18)
		case "PortCounters request":
			check("infiniband.portcounters.portselect", pcPortSelect)
			check("infiniband.portcounters.symbolerrorcounter", 0)
		case "PortCounters response":
			// tshark 4.0 stops at PortRcvPkts; PortXmitWait is not shown.
			check("infiniband.portcounters.portselect", pcPortSelect)
			check("infiniband.portcounters.symbolerrorcounter", pcSymbolErr)
			check("infiniband.portcounters.linkerrorrecoverycounter", pcLinkErrRec)
			check("infiniband.portcounters.linkdownedcounter", pcLinkDowned)
			check("infiniband.portcounters.portrcverrors", pcRcvErrors)
			check("infiniband.portcounters.portxmitdiscards", pcXmitDisc)
			check("infiniband.portcounters.portxmitdata", pcXmitData)
			check("infiniband.portcounters.portrcvdata", pcRcvData)
			check("infiniband.portcounters.portxmitpkts", pcXmitPkts)
			check("infiniband.portcounters.portrcvpkts", pcRcvPkts)
		}
	}
}

// TestTsharkTimestamps checks that tshark reads the record times we wrote
// (pcap nanosecond header; the ERF header carries the same instant).
func TestTsharkTimestamps(t *testing.T) {
	tshark := needTool(t, "tshark", "tshark")
	path := filepath.Join(t.TempDir(), "madset.pcap")
	if err := os.WriteFile(path, writeTestCapture(t), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(tshark, "-n", "-r", path, "-T", "fields", "-e", "frame.time_epoch")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	for i, s := range strings.Fields(string(out)) {
		want := testEpoch.Add(time.Duration(i) * time.Millisecond)
		if wantStr := fmt.Sprintf("%d.%09d", want.Unix(), want.Nanosecond()); s != wantStr {
			t.Errorf("packet %d: tshark time %s, want %s", i+1, s, wantStr)
		}
	}
}
