package mad

import "fmt"

// NodeType is NodeInfo.NodeType.
type NodeType uint8

// Node types.
const (
	NodeCA     NodeType = 1
	NodeSwitch NodeType = 2
	NodeRouter NodeType = 3
)

func (t NodeType) String() string {
	switch t {
	case NodeCA:
		return "CA"
	case NodeSwitch:
		return "Switch"
	case NodeRouter:
		return "Router"
	}
	return fmt.Sprintf("NodeType(%d)", uint8(t))
}

// PortState is PortInfo.PortState (logical state).
type PortState uint8

// Port states.
const (
	PortStateNoChange    PortState = 0
	PortStateDown        PortState = 1
	PortStateInit        PortState = 2
	PortStateArmed       PortState = 3
	PortStateActive      PortState = 4
	PortStateActiveDefer PortState = 5
)

func (s PortState) String() string {
	switch s {
	case PortStateNoChange:
		return "NoChange"
	case PortStateDown:
		return "Down"
	case PortStateInit:
		return "Init"
	case PortStateArmed:
		return "Armed"
	case PortStateActive:
		return "Active"
	case PortStateActiveDefer:
		return "ActiveDefer"
	}
	return fmt.Sprintf("PortState(%d)", uint8(s))
}

// PhysState is PortInfo.PortPhysicalState.
type PhysState uint8

// Physical port states.
const (
	PhysNoChange          PhysState = 0
	PhysSleep             PhysState = 1
	PhysPolling           PhysState = 2
	PhysDisabled          PhysState = 3
	PhysConfigTraining    PhysState = 4
	PhysLinkUp            PhysState = 5
	PhysLinkErrorRecovery PhysState = 6
	PhysPhyTest           PhysState = 7
)

// LinkUp reports whether a port in physical state s has a link to a far
// end. It is the one rule for "this link is up": discovery probes through
// such ports only, and a re-read port keeps its far end only while it
// holds. PortState is not asked: it follows PhysState late (ibsim's
// `ibportstate disable` leaves it Active; trial F3).
func (s PhysState) LinkUp() bool { return s == PhysLinkUp }

func (s PhysState) String() string {
	switch s {
	case PhysNoChange:
		return "NoChange"
	case PhysSleep:
		return "Sleep"
	case PhysPolling:
		return "Polling"
	case PhysDisabled:
		return "Disabled"
	case PhysConfigTraining:
		return "PortConfigurationTraining"
	case PhysLinkUp:
		return "LinkUp"
	case PhysLinkErrorRecovery:
		return "LinkErrorRecovery"
	case PhysPhyTest:
		return "PhyTest"
	}
	return fmt.Sprintf("PhysState(%d)", uint8(s))
}

// MTU is an IB MTU code (NeighborMTU, MTUCap).
type MTU uint8

// MTU codes.
const (
	MTU256  MTU = 1
	MTU512  MTU = 2
	MTU1024 MTU = 3
	MTU2048 MTU = 4
	MTU4096 MTU = 5
)

// Bytes returns the MTU in bytes, 0 for an unknown code.
func (m MTU) Bytes() int {
	if m >= MTU256 && m <= MTU4096 {
		return 128 << m
	}
	return 0
}

func (m MTU) String() string {
	if n := m.Bytes(); n != 0 {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("MTU(%d)", uint8(m))
}
