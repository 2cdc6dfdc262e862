// Package fabric is ibdoctor's model of a subnet: nodes, their ports, the
// links between them, switches' forwarding tables, and what could not be
// reached. Discovery fills it from MADs; the ibnetdiscover and JSON codecs
// read and write it; the simulator builds live fabrics from it; checks read
// it.
package fabric

import (
	"cmp"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/ibdoctor/ibdoctor/mad"
)

// Fabric is one subnet as seen from one port.
type Fabric struct {
	// Nodes in discovery order (the local node first when discovered).
	Nodes []*Node
	// Unreachable lists what discovery tried and could not read.
	Unreachable []Unreachable
	// DuplicateGUIDs lists node GUIDs claimed by more than one node.
	DuplicateGUIDs []DuplicateGUID

	// PortLabels are the names ibdiagnet gives ports in its
	// ibdiagnet2.ibnetdiscover ("1/1/1" on a Quantum-2 switch's cage 1
	// port 1); nil when the source had none. Written back by
	// WriteIBNetDiscover.
	PortLabels map[*Port]string

	// Counters are ports' PerfMgt counters as a file recorded them
	// (ibdiagnet2.db_csv's PM_INFO), by their PortCounters names
	// ("SymbolErrorCounter", "PortXmitData" in 4-octet words, ...), 64-bit
	// from the extended counters where the file has them; a counter the
	// file gives as N/A is absent. Nil when the source had none. The
	// simulator answers PortCounters with them.
	Counters map[*Port]map[string]uint64
	// CounterIncreases are what those counters grew by while the file's
	// tool sampled them, over a span the file does not give
	// (ibdiagnet2.db_csv's PM_DELTA: ibdiagnet reads the counters at the
	// start and the end of its run), by the same names. Nil when the
	// source had none.
	CounterIncreases map[*Port]map[string]uint64
	// Firmware is the nodes' firmware versions as a file recorded them
	// from NVIDIA's vendor GeneralInfo MAD (ibdiagnet2.db_csv's
	// NODES_INFO); a node the tool got no answer from is absent. Nil
	// when the source had none. The simulator answers GeneralInfo with
	// them, and only for those nodes.
	Firmware map[*Node]Firmware
	// SMs are the subnet managers a file recorded answering SMInfo
	// (ibdiagnet2.db_csv's SM_INFO), in the file's order, and PKeys the
	// P_Key tables it recorded for ports (PKEY), each entry at its index
	// (0: an empty entry). Recorded says which of them, and of the
	// PortInfo fields a live discovery sets (MasterSMLID, VLCap and
	// OperVLs, the M_Key policy, partition enforcement), the source
	// recorded at all. The simulator answers them as recorded.
	SMs      []RecordedSM
	PKeys    map[*Port][]mad.PKey
	Recorded Recorded

	idx atomic.Pointer[index] // built lazily by the lookup methods; Reindex resets it
}

// RecordedSM is one subnet manager's SMInfo answer as a file recorded
// it: behind Port (a CA's port, or a switch's port 0), one reading.
type RecordedSM struct {
	Port     *Port
	GUID     uint64
	State    mad.SMState
	Priority uint8
	ActCount uint32
}

// Recorded says which inputs beyond the topology a fabric's source
// recorded. A field of a recorded input that is 0 was not read by the
// source's tool (ibdiagnet writes 0 where a port did not answer), not
// a value to stand in for.
type Recorded struct {
	// SMInfo: Fabric.SMs (every SM that answered; none is a fabric
	// without one) and every port's MasterSMLID.
	SMInfo bool
	// VLs: every port's VLCap and OperVLs.
	VLs bool
	// MKey: every port's MKeyProtect and MKeyLease.
	MKey bool
	// PKeys: Fabric.PKeys and the switch ports' PKeyEnforce.
	PKeys bool
}

// Node is a CA, switch or router.
type Node struct {
	Type            mad.NodeType
	GUID            uint64
	SystemImageGUID uint64
	Description     string
	// DescriptionUnread: NodeDescription went unanswered, so Description
	// is empty because it is unknown (not a node without a name).
	DescriptionUnread bool
	VendorID          uint32
	DeviceID          uint16
	Revision          uint32
	// Ports is indexed by port number and has NumPorts+1 entries. Entry 0
	// is a switch's management port (nil on CAs and routers); a port that
	// was never read is nil.
	Ports []*Port
	// Switch is set for switches.
	Switch *Switch
	// Path is the directed route by which the node was first reached
	// (empty for the local node); nil for nodes not from a discovery.
	Path mad.Path
}

// NumPorts is the number of physical ports (a switch's port 0 not counted).
func (n *Node) NumPorts() int {
	if len(n.Ports) == 0 {
		return 0
	}
	return len(n.Ports) - 1
}

// Port is one port of a node.
type Port struct {
	// Fields are ordered so the struct packs into 56 bytes (a fabric has
	// a port per cable end: tens of thousands).
	Node *Node
	GUID uint64
	LID  uint16
	Num  uint8
	LMC  uint8

	State     mad.PortState
	PhysState mad.PhysState

	WidthActive    mad.Width
	WidthEnabled   mad.Width
	WidthSupported mad.Width
	// Unreached says what a MAD that went unanswered left unknown about
	// the port: zero when everything was read. An unread field is
	// unknown, never Down or a zero rate: checks could not decide there.
	// (Here it fills the byte of padding before the speeds.)
	Unreached      Unreached
	SpeedActive    mad.Speed
	SpeedEnabled   mad.Speed
	SpeedSupported mad.Speed

	NeighborMTU mad.MTU
	MTUCap      mad.MTU
	CapMask2    uint16
	CapMask     uint32

	// MasterSMLID is the LID of the subnet manager the port answers to
	// (0: none yet); set by live discovery only.
	MasterSMLID uint16
	// VLCap and OperVLs are PortInfo's VLCap and OperationalVLs codes
	// (1: VL0, 2: VL0-1, 3: VL0-3, 4: VL0-7, 5: VL0-14; 0: not read).
	VLCap   uint8
	OperVLs uint8
	// PKeyEnforce is PortInfo's partition enforcement on a switch port
	// (PKeyEnforceIn, PKeyEnforceOut): the port drops packets whose
	// P_Key its table lacks. Set by live discovery only.
	PKeyEnforce uint8
	// MKeyProtect and MKeyLease are PortInfo's M_Key protection bits and
	// lease period (seconds): the M_Key policy the SM set (a CA port's,
	// a switch's port 0's). Set by live discovery only.
	MKeyProtect uint8
	MKeyLease   uint16

	// Remote is the port at the other end of the cable; nil if none is
	// known (down, not followed, or leading to a node that did not answer:
	// see UnreachedPeer).
	Remote *Port
}

// PortInfo partition enforcement bits (Port.PKeyEnforce).
const (
	PKeyEnforceIn  uint8 = 1
	PKeyEnforceOut uint8 = 2
)

// Unreached flags what could not be read about a port because a MAD
// went unanswered (timed out after the engine's retries). It is a state
// of its own so that "could not look" is never confused with "broken".
type Unreached uint8

const (
	// UnreachedInfo: the port's PortInfo was not answered. State,
	// PhysState, LID, widths and speeds are unknown (their fields are
	// zero), not Down.
	UnreachedInfo Unreached = 1 << iota
	// UnreachedSpeed: the lane speeds are unknown while state and width
	// are known: the switch's port 0 PortInfo (whose CapabilityMask says
	// how to read the extended speed fields) or the Mellanox
	// ExtendedPortInfo (FDR10) was not answered.
	UnreachedSpeed
	// UnreachedPeer: the port's link is up but the node at the far end
	// never answered: Remote is nil because the far end is unknown, not
	// because there is no cable. Traffic may well cross it.
	UnreachedPeer
)

// Reached reports whether everything about p was read.
func (p *Port) Reached() bool { return p.Unreached == 0 }

// StateKnown reports whether p's PortInfo (state, rate) was read.
func (p *Port) StateKnown() bool { return p.Unreached&UnreachedInfo == 0 }

// SpeedKnown reports whether p's active, enabled and supported lane
// speeds were read.
func (p *Port) SpeedKnown() bool { return p.Unreached&(UnreachedInfo|UnreachedSpeed) == 0 }

// PeerUnknown reports whether p has a live link whose far end did not
// answer (or whose own state was not read, so a link may be there).
func (p *Port) PeerUnknown() bool {
	return p.Remote == nil && p.Unreached&(UnreachedPeer|UnreachedInfo) != 0
}

// String names the unread parts, for reports: "PortInfo", "speed",
// "far end", joined with "+".
func (u Unreached) String() string {
	var parts []string
	if u&UnreachedInfo != 0 {
		parts = append(parts, "PortInfo")
	}
	if u&UnreachedSpeed != 0 {
		parts = append(parts, "speed")
	}
	if u&UnreachedPeer != 0 {
		parts = append(parts, "far end")
	}
	if len(parts) == 0 {
		return "reached"
	}
	return strings.Join(parts, "+")
}

// Rate returns the port's active width and speed.
func (p *Port) Rate() mad.Rate { return mad.Rate{Width: p.WidthActive, Speed: p.SpeedActive} }

// Switch holds what a switch adds to a node.
type Switch struct {
	LinearFDBCap  uint16
	LinearFDBTop  uint16
	MulticastCap  uint16
	LIDsPerPort   uint16
	EnhancedPort0 bool
	LifeTimeValue uint8
	DefaultPort   uint8
	PartitionCap  uint16
	MulticastTop  uint16
	// LFT maps a destination LID to an egress port; NoRoute means no
	// route. Nil until the routes sweep reads it. Its blocks may be
	// shared with other switches' tables (see LFT).
	LFT *LFT
}

// NoRoute is the LFT entry for an unrouted LID.
const NoRoute = 0xff

// WhatNoLID is what an Unreachable (or a counter read's error) names when
// nothing could be sent for want of a LID: no subnet manager assigned one.
// A report folds these under sm.no-master when that is the cause.
const WhatNoLID = "address"

// Unreachable records a node or port discovery could not read.
type Unreachable struct {
	// Path is the directed route that was tried.
	Path mad.Path
	// From is the node and port whose link leads to it (zero GUID for
	// the local port).
	FromGUID uint64
	FromPort uint8
	// What was being read ("NodeInfo", "PortInfo 5", ...).
	What string
	// Reason is the error, e.g. "no response after 3 attempts".
	Reason string
	// Where, when set, says where instead of Path: what no directed
	// route leads to (a part of a saved file not cabled to the rest).
	Where string
	// Err is the read's error, for a caller that must tell a node that
	// did not answer from one that answered no (a gate's retry); set by
	// discover.Refresh, not saved (a loaded fabric has Reason only).
	Err error
}

// DuplicateGUID records two or more nodes answering with one NodeGUID.
type DuplicateGUID struct {
	GUID  uint64
	Paths []mad.Path // paths at which distinct nodes claimed the GUID
	Descs []string   // their descriptions, where read
}

// Link is one cable: two ports that point at each other. A is the end
// with the smaller (GUID, port) so every link has one canonical form.
type Link struct {
	A, B *Port
}

// Firmware is a node's firmware version as flint prints it
// (Major.Minor.SubMinor, 28.39.1002) and the PSID, the ID of the board's
// firmware image.
type Firmware struct {
	Major, Minor, SubMinor uint32
	PSID                   string
}

func (f Firmware) String() string { return fmt.Sprintf("%d.%d.%04d", f.Major, f.Minor, f.SubMinor) }

// Compare orders versions by Major, Minor, then SubMinor (not PSID).
func (f Firmware) Compare(g Firmware) int {
	return cmp.Or(cmp.Compare(f.Major, g.Major), cmp.Compare(f.Minor, g.Minor), cmp.Compare(f.SubMinor, g.SubMinor))
}
