package capture

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// The MADs below are built with the mad package's framing and raw data
// areas at the byte offsets of the IBA attribute layouts (see
// /work/shared/reference/umad-and-mad.md §2), so they do not depend on the
// attribute encoders.

// local is the port the capture is taken on.
var testLocal = transport.LocalPort{Name: "test/1", NodeGUID: 0x0002c90300001111, PortGUID: 0x0002c90300001112, PortNum: 1, LID: 0x0003}

// Known field values the tshark test checks.
const (
	swNodeGUID  = 0x0002c90300a1b2c3
	swPortGUID  = 0x0002c90300a1b2c4
	swNumPorts  = 36
	swLocalPort = 7
	swDeviceID  = 0xc738

	piLID             = 0x001a
	piSMLID           = 0x0001
	piCapMask         = 0x0251484a
	piLinkWidthActive = 1 // 1x: the degraded link
	piLinkWidthSupp   = 3 // 1x|4x
	piLinkSpeedActive = 4 // QDR
	piPortState       = 4 // Active
	piPhysState       = 5 // LinkUp
	piLocalPortNum    = 7

	pcPortSelect = 7
	pcSymbolErr  = 1234
	pcLinkErrRec = 5
	pcLinkDowned = 2
	pcRcvErrors  = 77
	pcXmitDisc   = 9
	pcXmitData   = 0xdeadbeef
	pcRcvData    = 0x01020304
	pcXmitPkts   = 4000000
	pcRcvPkts    = 3999999
	pcXmitWait   = 0x00abcdef

	cpiCapMask = 0x1700 // AllPortSelect, ExtWidth, ExtWidthNoIETF, XmitWait
)

// testMAD is one MAD of the test capture, with the addressing it was sent
// or received with.
type testMAD struct {
	name string
	dir  Direction
	addr transport.Addr
	mad  []byte
}

func drNodeInfoRequest(t testing.TB) []byte {
	s, err := mad.NewDRGet(mad.Path{1}, mad.AttrNodeInfo, 0)
	if err != nil {
		t.Fatal(err)
	}
	s.TID = 0x0000abcd00000011
	return s.Marshal()
}

func drNodeInfoResponse(t testing.TB) []byte {
	s, err := mad.NewDRGet(mad.Path{1}, mad.AttrNodeInfo, 0)
	if err != nil {
		t.Fatal(err)
	}
	s.Method = mad.MethodGetResp
	s.TID = 0x0000abcd00000011
	s.Direction = true
	s.HopPointer = s.HopCount + 1
	s.ReturnPath[1] = swLocalPort
	d := s.Data[:]
	d[0], d[1], d[2], d[3] = 1, 1, 2, swNumPorts // base, class version, switch, ports
	binary.BigEndian.PutUint64(d[4:12], swNodeGUID)
	binary.BigEndian.PutUint64(d[12:20], swNodeGUID)
	binary.BigEndian.PutUint64(d[20:28], swPortGUID)
	binary.BigEndian.PutUint16(d[28:30], 8)
	binary.BigEndian.PutUint16(d[30:32], swDeviceID)
	binary.BigEndian.PutUint32(d[32:36], 0xa0)
	d[36] = swLocalPort
	d[37], d[38], d[39] = 0x00, 0x02, 0xc9
	return s.Marshal()
}

func portInfoData(d []byte) {
	binary.BigEndian.PutUint64(d[8:16], 0xfe80000000000000)
	binary.BigEndian.PutUint16(d[16:18], piLID)
	binary.BigEndian.PutUint16(d[18:20], piSMLID)
	binary.BigEndian.PutUint32(d[20:24], piCapMask)
	d[28] = piLocalPortNum
	d[29] = 3 // LinkWidthEnabled
	d[30] = piLinkWidthSupp
	d[31] = piLinkWidthActive
	d[32] = 7<<4 | piPortState       // LinkSpeedSupported | PortState
	d[33] = piPhysState<<4 | 2       // PortPhysicalState | LinkDownDefaultState
	d[35] = piLinkSpeedActive<<4 | 7 // LinkSpeedActive | LinkSpeedEnabled
	d[36] = 5 << 4                   // NeighborMTU 4096
	d[37] = 4 << 4                   // VLCap VL0-7
	d[41] = 5                        // MTUCap 4096
	d[43] = 4 << 4                   // OperationalVLs VL0-7
}

func drPortInfoResponse(t testing.TB) []byte {
	s, err := mad.NewDRGet(mad.Path{1, 7}, mad.AttrPortInfo, 3)
	if err != nil {
		t.Fatal(err)
	}
	s.Method = mad.MethodGetResp
	s.TID = 0x0000abcd00000012
	s.Direction = true
	s.HopPointer = s.HopCount + 1
	portInfoData(s.Data[:])
	return s.Marshal()
}

func lidPortInfoRequest() []byte {
	s := mad.NewLIDGet(mad.AttrPortInfo, 3)
	s.TID = 0x0000abcd00000013
	return s.Marshal()
}

func lidPortInfoResponse() []byte {
	s := mad.NewLIDGet(mad.AttrPortInfo, 3)
	s.Method = mad.MethodGetResp
	s.TID = 0x0000abcd00000013
	portInfoData(s.Data[:])
	return s.Marshal()
}

func perf(t testing.TB, m mad.Method, attr mad.AttrID, tid uint64, fill func(d []byte)) []byte {
	g, err := mad.NewPerfGet(attr, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	g.Method = m
	g.TID = tid
	if fill != nil {
		fill(g.Data[:])
	}
	return g.Marshal()
}

func classPortInfoResponse(t testing.TB) []byte {
	return perf(t, mad.MethodGetResp, mad.AttrClassPortInfo, 0x0000abcd00000021, func(d []byte) {
		d[0], d[1] = 1, 1
		binary.BigEndian.PutUint16(d[2:4], cpiCapMask)
		binary.BigEndian.PutUint32(d[4:8], 0x2<<5|18) // CapabilityMask2 0x2, RespTimeValue 18
	})
}

func portCountersRequest(t testing.TB) []byte {
	return perf(t, mad.MethodGet, mad.AttrPortCounters, 0x0000abcd00000022, func(d []byte) {
		d[1] = pcPortSelect
	})
}

func portCountersResponse(t testing.TB) []byte {
	return perf(t, mad.MethodGetResp, mad.AttrPortCounters, 0x0000abcd00000022, func(d []byte) {
		d[1] = pcPortSelect
		binary.BigEndian.PutUint16(d[4:6], pcSymbolErr)
		d[6] = pcLinkErrRec
		d[7] = pcLinkDowned
		binary.BigEndian.PutUint16(d[8:10], pcRcvErrors)
		binary.BigEndian.PutUint16(d[14:16], pcXmitDisc)
		binary.BigEndian.PutUint32(d[24:28], pcXmitData)
		binary.BigEndian.PutUint32(d[28:32], pcRcvData)
		binary.BigEndian.PutUint32(d[32:36], pcXmitPkts)
		binary.BigEndian.PutUint32(d[36:40], pcRcvPkts)
		binary.BigEndian.PutUint32(d[40:44], pcXmitWait)
	})
}

// testMADs is the capture the tshark test decodes.
func testMADs(t testing.TB) []testMAD {
	dr := transport.DirectedRoute()
	perfAddr := transport.PerfAt(piLID, 0, 0)
	return []testMAD{
		{"DR NodeInfo request", Sent, dr, drNodeInfoRequest(t)},
		{"DR NodeInfo response", Received, dr, drNodeInfoResponse(t)},
		{"DR PortInfo response", Received, dr, drPortInfoResponse(t)},
		{"LID PortInfo request", Sent, transport.SMPAt(piLID), lidPortInfoRequest()},
		{"LID PortInfo response", Received, transport.SMPAt(piLID), lidPortInfoResponse()},
		{"ClassPortInfo request", Sent, perfAddr, perf(t, mad.MethodGet, mad.AttrClassPortInfo, 0x0000abcd00000021, nil)},
		{"ClassPortInfo response", Received, perfAddr, classPortInfoResponse(t)},
		{"PortCounters request", Sent, perfAddr, portCountersRequest(t)},
		{"PortCounters response", Received, perfAddr, portCountersResponse(t)},
	}
}

var testEpoch = time.Unix(1700000000, 500000000)
