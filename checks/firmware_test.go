package checks_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
)

func TestFirmwareMixedRevision(t *testing.T) {
	_, res := smSweep(t, "", 0)
	if fs := byCheck(res.Findings, "firmware.mixed-revision"); len(fs) != 0 {
		t.Errorf("uniform fabric: %s", fs[0].Title)
	}
	_, res = smSweep(t, "revision leaf02 rev=0xa1\n", 0)
	fs := byCheck(res.Findings, "firmware.mixed-revision")
	if len(fs) != 1 || fs[0].Severity != checks.Info || !strings.HasPrefix(fs[0].Title, "1 of 4 nodes of device") || !strings.Contains(fs[0].Evidence[0].Text, "revision 0xa1: leaf02") {
		logFindings(t, res.Findings)
		t.Fatalf("%d firmware.mixed-revision findings", len(fs))
	}
}

// TestFirmwareMixedVersion: the simulator's switches all run one
// release; the firmware fault leaves leaf02 on another, which is exactly
// one warning naming leaf02, its version and the majority's. A uniform
// fabric says nothing.
func TestFirmwareMixedVersion(t *testing.T) {
	sw, res := smSweep(t, "", 0)
	if sw.Firmware == nil || len(sw.Firmware.Versions) != 12 || len(sw.Firmware.Unread) != 0 {
		t.Fatalf("firmware view %+v, want 12 nodes read", sw.Firmware)
	}
	if fs := byCheck(res.Findings, "firmware.mixed-version"); len(fs) != 0 {
		t.Errorf("uniform fabric: %s", fs[0].Title)
	}
	_, res = smSweep(t, "firmware leaf02 version=31.2010.5000\n", 0)
	fs := byCheck(res.Findings, "firmware.mixed-version")
	if len(fs) != 1 {
		logFindings(t, res.Findings)
		t.Fatalf("%d firmware.mixed-version findings, want 1", len(fs))
	}
	f := fs[0]
	if f.Severity != checks.Warning || len(f.Entities) != 1 || f.Entities[0].Node != "leaf02" ||
		!strings.HasPrefix(f.Title, "1 of 4 ") || !strings.Contains(f.Title, "(31.2012.1068)") ||
		!strings.Contains(f.Evidence[1].Text, "31.2010.5000: leaf02") {
		t.Errorf("finding %s %q entities %v evidence %v", f.Severity, f.Title, f.Entities, f.Evidence)
	}
}

// TestCorpusFirmware: the Quantum-2 capture's db_csv recorded every
// node's GeneralInfo answer (NODES_INFO). One Quantum-2 switch runs
// 31.2012.1068 among 7 of its PSID on 31.2012.1024: one warning naming it;
// versions are compared per device and PSID, so neither the MQM9700 (PSID
// MT_0000000577) nor the one ConnectX-7 on 28.41.1000 (PSID
// MT_0000000970, the other 255 MT_0000001120) is compared with the rest.
// ibdiagnet's own firmware check in the same file (WARNINGS_FW_CHECK)
// sees the same split from the other side: it names the switches behind
// the newest version of their device and PSID, which are exactly the
// other PSID-MT_0000000579 switches. Every other dump carries no
// firmware: the check does not run and says so.
func TestCorpusFirmware(t *testing.T) {
	const name = "quantum2-ndr-ibdiagnet2.db_csv"
	p := corpusFile(t, name)
	sw := corpusSweep(t, p)
	if sw.Firmware == nil || len(sw.Firmware.Versions) != 265 || len(sw.Firmware.Unread) != 0 || sw.Firmware.NotAsked != 7 {
		t.Fatalf("firmware view: %d read, %d unread, %d not asked; want 265 (256 ConnectX-7, 9 Quantum-2) read and the 7 aggregation nodes not asked",
			len(sw.Firmware.Versions), len(sw.Firmware.Unread), sw.Firmware.NotAsked)
	}
	res, err := checks.Run(sw.Snapshot(checks.Expectations{}, nil, nil), "firmware")
	if err != nil {
		t.Fatal(err)
	}
	fs := byCheck(res.Findings, "firmware.mixed-version")
	if len(fs) != 1 {
		t.Fatalf("%d findings, want 1:%s", len(fs), titles(fs))
	}
	got := map[string]string{}
	for _, f := range fs {
		if f.Severity != checks.Warning || len(f.Entities) != 1 {
			t.Errorf("%s %q: %d entities", f.Severity, f.Title, len(f.Entities))
			continue
		}
		got[fmt.Sprintf("0x%016x", f.Entities[0].NodeGUID)] = f.Evidence[1].Text
	}
	const cx7, q2 = "0xa088c20300f7f59a", "0xb0cf0e0300e5b940"
	if !strings.HasPrefix(got[q2], "31.2012.1068 (newer): ") {
		t.Errorf("Quantum-2 minority: %q, want %s named on 31.2012.1068 (newer)", got[q2], q2)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	// ibdiagnet's verdicts, and the switches of that PSID from NODES_INFO.
	flagged, psid579 := map[string]bool{}, map[string]bool{}
	section := ""
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, "START_"):
			section = line
		case strings.HasPrefix(line, "END_"):
			section = ""
		case section == "START_WARNINGS_FW_CHECK" && strings.Contains(line, "NODE_WRONG_FW_VERSION"):
			flagged[strings.Split(line, ",")[1]] = true
		case section == "START_NODES_INFO" && strings.Contains(line, ",MT_0000000579,"):
			psid579[strings.Split(line, ",")[0]] = true
		}
	}
	if len(flagged) != 7 || len(psid579) != 8 || flagged[q2] || !psid579[q2] {
		t.Fatalf("ibdiagnet flagged %d, PSID 579 has %d switches", len(flagged), len(psid579))
	}
	for g := range psid579 {
		if g != q2 && !flagged[g] {
			t.Errorf("%s: on the majority's version but not flagged by ibdiagnet", g)
		}
	}
	// The ConnectX-7 on 28.41.1000 is the only one of PSID MT_0000000970
	// (the other 255: MT_0000001120): another image, compared with none,
	// and ibdiagnet flags no ConnectX-7 either (trial C5).
	if _, ok := got[cx7]; ok {
		t.Errorf("ConnectX-7 of its own PSID named: %q", got[cx7])
	}

	for _, name := range []string{"dgx-ndr-2025.ibnetdiscover", "quantum2-ndr-ibdiagnet2.ibnetdiscover", "avakas-qlogic-qdr.ibnetdiscover-v-p", "ibsim-net.2sw2path4hca2port"} {
		res := corpusCheck(t, name, false)
		skipped := ""
		for _, s := range res.Skipped {
			if s.Check == "firmware.mixed-version" {
				skipped = s.Reason
			}
		}
		if !strings.Contains(skipped, "carries no firmware versions") {
			t.Errorf("%s: firmware.mixed-version skipped for %q, want the file's reason", name, skipped)
		}
	}
}

// TestFirmwareUnreadUndecided: a node that does not answer GeneralInfo
// is no finding and not counted as agreeing: firmware.mixed-version
// lists it as undecided, naming the node; likewise a switch that does not
// answer AdaptiveRoutingInfo for routing.adaptive.
func TestFirmwareUnreadUndecided(t *testing.T) {
	sw, res := smSweep(t, "drop leaf02 attr=GeneralInfo\ndrop spine01 attr=AdaptiveRoutingInfo\n", 0)
	unread := map[string]bool{}
	for n := range sw.Firmware.Unread {
		unread[n.Description] = true
	}
	if !unread["leaf02"] || len(unread) != 1 {
		t.Fatalf("GeneralInfo unread on %v, want leaf02", unread)
	}
	if fs := byCheck(res.Findings, "firmware.mixed-version"); len(fs) != 0 {
		t.Errorf("unread node gave a finding: %s", fs[0].Title)
	}
	got := map[string]string{}
	for _, u := range res.Undecided {
		got[u.Check] += u.Subject.Node + ";"
	}
	if got["firmware.mixed-version"] != "leaf02;" || got["routing.adaptive"] != "spine01;" {
		t.Errorf("undecided %v, want leaf02 for firmware.mixed-version and spine01 for routing.adaptive", got)
	}
}
