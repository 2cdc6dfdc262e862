package sim

import (
	"context"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// The Quantum-2 ibdiagnet2.db_csv records its subnet manager (SM_INFO:
// the MQM9700 "ib-switch-sequoia", LID 180, master, priority 12,
// ActCount 4202301), every port's MSMLID, VLCap and OpVLs, M_Key bits
// and partition enforcement (PORTS) and P_Key tables (PKEY). The
// simulator answers them as the file recorded them, not its defaults
// (a master of priority 0 whose ActCount counts up, VL0-7 everywhere,
// no enforcement).
func TestLoadDBCSVRecordedSMVLsPKeys(t *testing.T) {
	s, info, err := Load(context.Background(), corpusFile(t, "quantum2-ndr-ibdiagnet2.db_csv"), "", Options{Clock: NewManualClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	if r := info.Recorded; !r.SMInfo || !r.VLs || !r.MKey || !r.PKeys {
		t.Errorf("FileInfo.Recorded %+v: the file has SM_INFO, PKEY and PORTS' VLCap/OpVLs/MKeyProtBits", r)
	}
	node := func(guid uint64) int32 {
		t.Helper()
		ids := s.byGUID[guid]
		if len(ids) != 1 {
			t.Fatalf("node %#x: %d in the simulator", guid, len(ids))
		}
		return ids[0]
	}
	const smSwitch = 0xb0cf0e0300d33fc0
	if len(s.sms) != 1 {
		t.Fatalf("%d SMs, want the file's one", len(s.sms))
	}
	sw := node(smSwitch)
	for range 2 {
		got := s.smInfo(sw, 0)
		want := mad.SMInfo{GUID: smSwitch, ActCount: 4202301, Priority: 12, State: mad.SMMaster}
		if got == nil || *got != want {
			t.Fatalf("SMInfo at the MQM9700: %+v, want the file's %+v (read twice: one reading, it does not count up)", got, want)
		}
	}
	if s.smLID != 180 {
		t.Errorf("SM LID %d, want 180", s.smLID)
	}
	// A host port (line 314 on: every CA's row VLCap 3, OpVLs 3, MSMLID
	// 180) and the switch port cabled to it (VLCap 4, OpVLs 3,
	// PartEnfInb/Outb 1); the SHARP Aggregation Node port 65 runs VL0-1.
	f := s.Fabric()
	var host, leaf, an *fabric.Port
	for _, n := range f.Nodes {
		p := n.Ports[len(n.Ports)-1]
		if n.Type != mad.NodeCA || p == nil || p.Remote == nil {
			continue
		}
		if n.Description == "Mellanox Technologies Aggregation Node" {
			an = p.Remote
		} else if host == nil {
			host, leaf = p, p.Remote
		}
	}
	if host == nil || an == nil {
		t.Fatal("no host or Aggregation Node in the file")
	}
	hp := s.portInfo(node(host.Node.GUID), host.Num, host.Num)
	if hp.MasterSMLID != 180 || hp.VLCap != 3 || hp.OperationalVLs != 3 || hp.MKeyProtectBits != 0 {
		t.Errorf("host %s port %d: MasterSMLID %d VLCap %d OperVLs %d MKeyProtect %d; want the file's 180, 3, 3, 0", host.Node.Description, host.Num, hp.MasterSMLID, hp.VLCap, hp.OperationalVLs, hp.MKeyProtectBits)
	}
	lp := s.portInfo(node(leaf.Node.GUID), leaf.Num, leaf.Num)
	if lp.VLCap != 4 || lp.OperationalVLs != 3 || !lp.PartitionEnforcementInbound || !lp.PartitionEnforcementOutbound {
		t.Errorf("switch port to the host: VLCap %d OperVLs %d enforcement %v/%v; want the file's 4, 3, on/on", lp.VLCap, lp.OperationalVLs, lp.PartitionEnforcementInbound, lp.PartitionEnforcementOutbound)
	}
	ap := s.portInfo(node(an.Node.GUID), an.Num, an.Num)
	if ap.VLCap != 2 || ap.OperationalVLs != 2 {
		t.Errorf("switch port %d to the Aggregation Node: VLCap %d OperVLs %d; want the file's 2, 2", an.Num, ap.VLCap, ap.OperationalVLs)
	}
	// PKEY: every port's table is 0x7fff, full member.
	if k := s.nodes[node(host.Node.GUID)].ports[host.Num].pkeyBlock(0).Keys; k[0] != 0xffff || k[1] != 0 {
		t.Errorf("host P_Key table %v, want the file's 0xffff alone", k[:2])
	}
}
