// Package sim is an in-process InfiniBand subnet: it takes a fabric model
// (nodes, ports, cables, LIDs and switches' linear forwarding tables) and
// answers MADs the way the hardware would.
//
// Every node runs a subnet management agent (NodeInfo, NodeDescription,
// PortInfo, SwitchInfo, LinearForwardingTable) and a performance
// management agent (ClassPortInfo, PortCounters, PortCountersExtended).
// Directed-route SMPs walk their InitialPath hop by hop with the hop
// pointer and return path handled as IBA 14.2.2 (and the Linux kernel's
// smi.c) prescribe; LID-routed MADs follow the switches' forwarding tables
// from the attach port, so a broken route really loses the MAD. Traffic
// flows routed over the same tables make the data counters move with
// simulated time, and faults (degraded or down links, misrouted or black
// holed tables, dead or flaky agents, duplicated GUIDs, miswired cables,
// error counters) are declared in a small text format (docs/faults.md) or
// set from Go.
//
// A Conn from Attach implements transport.Conn, so everything above the
// transport runs unchanged against a simulated fabric.
package sim

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/devices"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Options tune a simulated subnet. The zero value is a fast, loss-free
// fabric on the wall clock: no latency, no queueing.
type Options struct {
	// Clock drives counters and delayed answers; nil means the wall clock.
	Clock Clock
	// HopLatency is added per cable crossed, in each direction.
	HopLatency time.Duration
	// ServiceTime is how long a node's management agent takes per MAD.
	// Each node serves one MAD at a time, so concurrent MADs to one node
	// queue behind each other.
	ServiceTime time.Duration
	// QueueLimit is how many MADs may wait at one node's agent; a MAD
	// arriving at a fuller queue is dropped (as a hardware receive queue
	// overflows). 0 means no limit. Only meaningful with ServiceTime.
	QueueLimit int
	// Seed makes the flaky and loss faults' choices reproducible: each
	// is drawn from the seed and the request it is made for, not from
	// the order MADs arrive in.
	Seed uint64
	// SMLID is reported as MasterSMLID in every PortInfo; 0 picks the LID
	// of the first CA port that has one.
	SMLID uint16
	// PMA sets the performance management agents' capabilities; nil
	// means DefaultPMACaps.
	PMA *PMACaps
	// XmitWaitTick is the duration of one PortXmitWait tick; 0 means 64ns.
	XmitWaitTick time.Duration
	// LIDHopLimit is how many switches a LID-routed MAD may cross before
	// it is dropped (a routing loop); 0 means 64.
	LIDHopLimit int
	// Concurrent answers each Conn's requests on a goroutine of its own
	// (on the wall clock), in the order they were sent, instead of in
	// Send: the simulated fabric then runs on one core while the caller
	// runs on another, as a real fabric answers beside its host. Without
	// it an answer is queued by the time Send returns, and nothing runs
	// for a Conn between calls (tests that send, then look, want that).
	Concurrent bool
	// fromFile is set by Load: the fabric is a user's dump, whose empty
	// enabled masks are unknown rather than the simulator's to choose
	// (the sample and built topologies keep the simulator's).
	fromFile bool
}

// PMACaps are the ClassPortInfo capabilities of the performance
// management agents.
type PMACaps struct {
	Switch   uint16 // CapabilityMask of switches' PMAs
	CA       uint16 // CapabilityMask of CAs' PMAs
	CapMask2 uint32 // CapabilityMask2 (27 bits) of both
}

// PerfMgt ClassPortInfo capability bits.
const (
	PMAAllPortSelect       = mad.PMCapAllPortSelect
	PMAExtendedWidth       = mad.PMCapExtendedWidth
	PMAExtendedWidthNoIETF = mad.PMCapExtendedWidthNoIETF
	PMASamplesOnly         = mad.PMCapSamplesOnly
	PMAXmitWait            = mad.PMCapXmitWait
	PMA2AdditionalExtended = mad.PMCap2AdditionalCountersExtended
)

// DefaultPMACaps is what a current NVIDIA switch and HCA advertise:
// AllPortSelect on switches, 64-bit counters, PortXmitWait, and the
// additional 64-bit error counters.
var DefaultPMACaps = PMACaps{
	Switch:   PMAAllPortSelect | PMAExtendedWidth | PMAXmitWait,
	CA:       PMAExtendedWidth | PMAXmitWait,
	CapMask2: PMA2AdditionalExtended,
}

// Sim is a simulated subnet. Its methods are safe for concurrent use.
type Sim struct {
	opts  Options
	clock Clock
	wall  bool // the clock is the wall clock: Recv times delayed answers (deliver.go)
	pma   PMACaps
	epoch time.Time // node busy times are kept relative to it

	mu    sync.RWMutex
	nodes []node
	// answers holds directed-route answers for reuse (newAnswer,
	// Conn.Recycle).
	answers sync.Pool
	// blocks pools the LFT blocks an SM writes into a table that has no
	// pool yet (a loaded table keeps its decoder's).
	blocks fabric.BlockInterner
	byGUID map[uint64][]int32
	byDesc map[string][]int32
	byHost map[string][]int32
	lidMap []lidOwner // indexed by LID
	smLID  uint16
	sms    []*smAgent // subnet managers (sm.go)
	// initiator is the node the file was written from (its empty,
	// non-nil Path), where Attach("") attaches; -1 when none is known.
	initiator int32

	traffic   []*trafficRun
	trafficID int
	flowState *flowState // current routed traffic, nil without traffic

	// draws counts, per request (drawKey), the choices the flaky and
	// loss faults have made for it: the nth attempt of one MAD gets the
	// same choice for a seed whatever order concurrent MADs arrive in,
	// so a lossy sweep is reproducible.
	drawMu sync.Mutex
	draws  map[drawKey]uint32
	// loss is the share of MAD exchanges lost anywhere in the fabric
	// (the loss fault); 0 normally.
	loss float64

	traceDR func(drHop) // tests: every receive step of a directed-route SMP

	// noFirmware, when not empty, says why no node answers GeneralInfo:
	// the fabric came from a file that recorded no firmware versions, so
	// the simulator has none to give (Attach's NoVendorMADs says so).
	noFirmware string
	// fwListed: the fabric's file recorded the firmware versions
	// (Fabric.Firmware); a node it has none for does not answer.
	fwListed bool
	// noAR, when not empty, says why no switch answers
	// AdaptiveRoutingInfo: the fabric came from a file, which records
	// none (Attach's NoARInfo says so).
	noAR string
	// planted holds the kinds of the faults applied (Planted).
	planted map[string]bool
	// recorded is what the fabric's file recorded beyond the topology
	// (fabric.Recorded): those PortInfo fields are answered as recorded,
	// 0 (not read by the file's tool) included. msmRecorded: each
	// port answers its own recorded MasterSMLID instead of smLID.
	recorded    fabric.Recorded
	msmRecorded bool
}

type lidOwner struct {
	node int32 // -1: nobody
	port uint8
}

type node struct {
	typ      mad.NodeType
	guid     uint64
	sysGUID  uint64
	desc     string
	vendor   uint32
	devID    uint16
	rev      uint32
	fw       [3]uint32   // firmware version GeneralInfo reports; zero: the default for the node type
	psid     string      // PSID GeneralInfo reports; empty: a placeholder
	ar       *mad.ARInfo // AdaptiveRoutingInfo; nil: arInfo's default
	partCap  uint16
	ports    []port // NumPorts+1 entries; [0] is a switch's management port
	sw       *switchState
	dead     bool
	answer   float64    // share of MADs the agent answers (flaky), 1 normally
	drops    []attrDrop // attributes the agent never answers (the drop fault)
	refuses  []attrDrop // attributes the agent answers with a MAD status error (the refuse fault)
	busyTill atomic.Int64
}

// attrDrop is one attribute an agent never answers (or refuses): by name (as
// mad.AttrName gives it, case-insensitive) and, unless mod is -1, only
// for that attribute modifier (PortInfo's port number).
type attrDrop struct {
	name string
	mod  int64
}

func (n *node) numPorts() int { return len(n.ports) - 1 }

type switchState struct {
	lft      *fabric.LFT // shared with the input fabric until first written
	lftOwned bool
	// lftUnknown: the file the fabric came from gave other switches'
	// tables but not this one's, so its LinearForwardingTable is not
	// answered (attribute unsupported) rather than read as routing
	// nothing; writing a table makes it known.
	lftUnknown bool
	fdbCap     uint16
	fdbTop     uint16
	mcCap      uint16
	mcTop      uint16
	lidsPP     uint16
	partCap    uint16
	lifeTime   uint8
	defPort    uint8
	enhanced0  bool
	// sl2vl, when set (the sl2vl fault), is the SLtoVLMappingTable every
	// pair of the switch's ports answers; nil: every SL on VL0 (see
	// SLtoVL).
	sl2vl *mad.SLtoVLTable
	// skewUp, when set, lists the uplinks whose data flows leave by
	// skewTo instead (the skew fault: a hash or adaptive-routing bug the
	// tables do not show). Management MADs follow the tables.
	skewUp []bool
	skewTo uint8
}

type port struct {
	guid  uint64
	lid   uint16
	lmc   uint8
	state mad.PortState
	phys  mad.PhysState
	wAct  mad.Width
	wEn   mad.Width
	wSup  mad.Width
	sAct  mad.Speed
	sEn   mad.Speed
	sSup  mad.Speed
	// wEnUnread and sEnUnread: the fabric's file records no enabled
	// width (speed) for the port (ibnetdiscover text gives only the
	// active rate). wEn and sEn then stand in so that links train, but
	// PortInfo answers the mask 0, unknown, not a value nobody read
	// (trial C1); a Set of the mask makes it known.
	wEnUnread, sEnUnread bool
	// sActRecorded: the file lists the port without a link but with an
	// active speed (ibnetdiscover -p's "4x QDR" with no neighbour, where
	// free ports read "1x SDR"): PortInfo answers that speed rather than
	// the slowest one a port without a link reports (trial H5).
	sActRecorded bool
	// rateUnread: a switch's port 0 that the fabric's file gives no
	// rate for (ibnetdiscover text has no port 0 line): PortInfo
	// answers its widths and speeds 0, unknown, not the defaults that
	// stand in for them (trial H10: a 2007 SDR switch's port 0 at NDR).
	rateUnread bool
	mtuCap     mad.MTU
	nbrMTU     mad.MTU
	vls        uint8 // VLCap and OperationalVLs code; 0: VL0-7
	// operVLs is the OperationalVLs a file recorded apart from VLCap
	// (vlsRecorded: both answered as recorded, 0 included).
	operVLs     uint8
	vlsRecorded bool
	// msmLID is the MasterSMLID a file recorded (Sim.msmRecorded).
	msmLID     uint16
	capMask    uint32
	capMask2   uint16
	remote     int32 // node index, -1 when uncabled
	remotePort uint8
	ctr        *counters // nil until a counter moves
	// pkeys is the port's P_Key table (nil: the default partition, full
	// member, as an SM leaves it without partitions.conf); pkeyEnforce
	// sets a switch port's PortInfo partition enforcement bits (the pkey
	// fault: both; a file's: as recorded, fabric.PKeyEnforceIn/Out).
	// pkeyUnknown: the file recorded P_Key tables but none for this
	// port, so its table is not answered rather than the default.
	pkeys       []mad.PKey
	pkeyEnforce uint8
	pkeyUnknown bool
	// mkeyProtect and mkeyLease are the M_Key policy PortInfo reports
	// (the mkey fault; zero: no protection, as OpenSM's default).
	mkeyProtect uint8
	mkeyLease   uint16
}

// linkUp reports whether the port's physical link is up: what a
// directed-route SMP needs to cross it.
func (p *port) linkUp() bool { return p.remote >= 0 && p.phys == mad.PhysLinkUp }

// enabled returns the enabled masks PortInfo answers: 0 (unknown) for
// what the fabric's file did not record.
func (p *port) enabled() (mad.Width, mad.Speed) {
	w, sp := p.wEn, p.sEn
	if p.wEnUnread {
		w = 0
	}
	if p.sEnUnread {
		sp = 0
	}
	return w, sp
}

// active reports whether the port passes data and LID-routed MADs.
func (p *port) active() bool { return p.linkUp() && p.state == mad.PortStateActive }

// Default capability masks (PortInfo.CapabilityMask / CapabilityMask2).
const (
	capTrap          = 1 << 3
	capAutoMig       = 1 << 5
	capSLMap         = 1 << 6
	capLED           = 1 << 9
	capSysImageGUID  = 1 << 11
	capExtSpeeds     = 1 << 14
	capCapMask2      = 1 << 15
	capCM            = 1 << 16
	capDevMgt        = 1 << 19
	capVendorClass   = 1 << 20
	capClientRereg   = 1 << 25
	capLinkSpeedPair = 1 << 27

	cap2PortInfoExt = 0x0002
	cap2Width2x     = 0x0010
	cap2HDR         = 0x0020
	cap2NDR         = 0x0400
	cap2ExtSpeeds2  = 0x0800
	cap2XDR         = 0x1000

	defaultCACap     = capTrap | capAutoMig | capSLMap | capLED | capSysImageGUID | capExtSpeeds | capCapMask2 | capCM | capDevMgt | capVendorClass | capClientRereg
	defaultSwitchCap = capTrap | capSLMap | capLED | capSysImageGUID | capExtSpeeds | capCapMask2 | capVendorClass | capLinkSpeedPair
	defaultCap2      = cap2PortInfoExt | cap2Width2x | cap2HDR | cap2NDR
)

// New builds a simulated subnet from f. f is not modified and must not be
// changed while the Sim is in use: switches' forwarding tables are shared
// with f until a fault or a Set rewrites them (then the Sim copies).
//
// Missing port details get sensible defaults: a cabled port with no state
// is Active/LinkUp, an uncabled one Down/Polling; empty Enabled and
// Supported masks equal the active width and speed (a fabric Load read
// from a file answers its empty Enabled masks as 0, unknown); empty
// capability masks are those of a current NVIDIA HCA or switch.
func New(f *fabric.Fabric, opts Options) (*Sim, error) {
	if f == nil || len(f.Nodes) == 0 {
		return nil, fmt.Errorf("sim: empty fabric: give New a fabric with at least one node (e.g. from topology or a topology file)")
	}
	if len(f.Nodes) > math.MaxInt32 {
		return nil, fmt.Errorf("sim: %d nodes is more than the simulator indexes", len(f.Nodes))
	}
	s := &Sim{opts: opts, clock: opts.Clock, pma: DefaultPMACaps}
	if s.clock == nil {
		s.clock = RealClock{}
	}
	if opts.PMA != nil {
		s.pma = *opts.PMA
	}
	if s.opts.XmitWaitTick <= 0 {
		s.opts.XmitWaitTick = 64 * time.Nanosecond
	}
	if s.opts.LIDHopLimit <= 0 {
		s.opts.LIDHopLimit = 64
	}
	s.epoch = s.clock.Now()
	s.wall = isRealClock(s.clock)

	s.recorded = f.Recorded
	idx := make(map[*fabric.Node]int32, len(f.Nodes))
	s.initiator = -1
	for i, fn := range f.Nodes {
		if fn == nil {
			return nil, fmt.Errorf("sim: fabric node %d is nil", i)
		}
		idx[fn] = int32(i)
		if s.initiator < 0 && fn.Path != nil && len(fn.Path) == 0 && fn.Type != mad.NodeSwitch {
			s.initiator = int32(i)
		}
	}
	s.nodes = make([]node, len(f.Nodes))
	var maxLID uint16
	for i, fn := range f.Nodes {
		n := &s.nodes[i]
		if err := s.buildNode(n, fn, idx); err != nil {
			return nil, err
		}
		for pi := range n.ports {
			p := &n.ports[pi]
			if p.lid == 0 {
				continue
			}
			top := uint32(p.lid) + uint32(1)<<p.lmc - 1
			if top > 0xbfff {
				return nil, fmt.Errorf("sim: node %q port %d: LID %d with LMC %d leaves the unicast range (1..49151)", n.desc, pi, p.lid, p.lmc)
			}
			maxLID = max(maxLID, uint16(top))
		}
	}
	// Cables must point at each other.
	for i := range s.nodes {
		n := &s.nodes[i]
		for pi := range n.ports {
			p := &n.ports[pi]
			if p.remote < 0 {
				continue
			}
			r := &s.nodes[p.remote]
			if int(p.remotePort) > r.numPorts() || p.remotePort == 0 {
				return nil, fmt.Errorf("sim: node %q port %d is cabled to port %d of %q, which has %d ports", n.desc, pi, p.remotePort, r.desc, r.numPorts())
			}
			back := &r.ports[p.remotePort]
			if back.remote != int32(i) || back.remotePort != uint8(pi) {
				return nil, fmt.Errorf("sim: cable %q/%d -> %q/%d is one-sided: the far port does not point back", n.desc, pi, r.desc, p.remotePort)
			}
		}
	}
	s.index(maxLID)
	if f.Firmware != nil {
		s.fwListed = true
		for fn, fw := range f.Firmware {
			ni, ok := idx[fn]
			if !ok {
				return nil, fmt.Errorf("sim: firmware of a node that is not in the fabric (%q)", fn.Description)
			}
			s.nodes[ni].fw = [3]uint32{fw.Major, fw.Minor, fw.SubMinor}
			s.nodes[ni].psid = fw.PSID
		}
	}
	// Counters a file recorded (ibdiagnet's PM_INFO) are where the
	// ports' counters start; they do not grow without traffic.
	for fp, ctrs := range f.Counters {
		ni, ok := idx[fp.Node]
		if !ok || int(fp.Num) >= len(s.nodes[ni].ports) {
			return nil, fmt.Errorf("sim: counters of a port that is not in the fabric (%q port %d)", fp.Node.Description, fp.Num)
		}
		c := s.ctrs(ni, fp.Num, 0)
		for name, v := range ctrs {
			id, err := counterByName(name)
			if err != nil {
				return nil, fmt.Errorf("sim: counters of %q port %d: %w", fp.Node.Description, fp.Num, err)
			}
			c.val[id] = float64(v)
		}
	}
	s.smLID = opts.SMLID
	// A fabric read from a capture (ibdiagnet's db_csv, a discovery's
	// JSON) says where its SM ran: IsSM in a port's CapabilityMask. The
	// default SM goes there, and the bit is left to the SM model, which
	// sets it where an SM answers SMInfo.
	for i := range s.nodes {
		for pi := range s.nodes[i].ports {
			p := &s.nodes[i].ports[pi]
			if p.capMask&mad.CapIsSM == 0 {
				continue
			}
			p.capMask &^= mad.CapIsSM
			lid := p.lid
			if s.nodes[i].typ == mad.NodeSwitch {
				lid = s.nodes[i].ports[0].lid
			}
			if s.smLID == 0 && lid != 0 {
				s.smLID = lid
			}
		}
	}
	if f.Recorded.SMInfo {
		if err := s.recordedSMs(f, idx); err != nil {
			return nil, err
		}
	}
	if f.Recorded.PKeys {
		if err := s.recordedPKeys(f, idx); err != nil {
			return nil, err
		}
	}
	if s.smLID == 0 && !f.Recorded.SMInfo {
	findSM:
		for i := range s.nodes {
			if s.nodes[i].typ != mad.NodeCA {
				continue
			}
			for pi := 1; pi < len(s.nodes[i].ports); pi++ {
				if l := s.nodes[i].ports[pi].lid; l != 0 {
					s.smLID = l
					break findSM
				}
			}
		}
	}
	for i := range s.nodes {
		n := &s.nodes[i]
		if n.sw != nil && n.sw.fdbTop == 0 {
			n.sw.fdbTop = uint16(min(int(maxLID), max(n.sw.lft.Len()-1, 0)))
		}
	}
	if !f.Recorded.SMInfo {
		s.startSM()
	}
	return s, nil
}

func (s *Sim) buildNode(n *node, fn *fabric.Node, idx map[*fabric.Node]int32) error {
	n.typ = fn.Type
	n.guid = fn.GUID
	n.sysGUID = fn.SystemImageGUID
	if n.sysGUID == 0 {
		n.sysGUID = fn.GUID
	}
	n.desc = fn.Description
	n.vendor = fn.VendorID & 0xffffff
	if n.vendor == 0 {
		n.vendor = 0x0002c9
	}
	n.devID = fn.DeviceID
	n.rev = fn.Revision
	n.partCap = 16
	n.answer = 1
	if fn.Type != mad.NodeCA && fn.Type != mad.NodeSwitch && fn.Type != mad.NodeRouter {
		return fmt.Errorf("sim: node %q (0x%016x) has unknown type %d", fn.Description, fn.GUID, fn.Type)
	}
	np := fn.NumPorts()
	if np < 1 || np > 254 {
		return fmt.Errorf("sim: node %q (0x%016x) has %d ports; want 1..254", fn.Description, fn.GUID, np)
	}
	n.ports = make([]port, np+1)
	isSw := fn.Type == mad.NodeSwitch
	var swGUID uint64
	if isSw {
		if p0 := fn.Ports[0]; p0 != nil && p0.GUID != 0 {
			swGUID = p0.GUID
		} else {
			swGUID = fn.GUID
		}
	}
	for pi := range n.ports {
		p := &n.ports[pi]
		p.remote = -1
		var fp *fabric.Port
		if pi < len(fn.Ports) {
			fp = fn.Ports[pi]
		}
		if pi == 0 && !isSw {
			continue
		}
		if fp != nil && fp.Remote != nil {
			ri, ok := idx[fp.Remote.Node]
			if !ok {
				return fmt.Errorf("sim: node %q port %d is cabled to a node that is not in the fabric", fn.Description, pi)
			}
			if pi == 0 {
				return fmt.Errorf("sim: switch %q management port 0 cannot be cabled", fn.Description)
			}
			p.remote, p.remotePort = ri, fp.Remote.Num
		}
		p.wEnUnread = s.opts.fromFile && (fp == nil || fp.WidthEnabled == 0)
		p.sEnUnread = s.opts.fromFile && (fp == nil || fp.SpeedEnabled == 0)
		p.rateUnread = s.opts.fromFile && isSw && pi == 0 && (fp == nil || fp.WidthActive == 0 && fp.SpeedActive == 0 && fp.SpeedSupported == 0)
		if fp != nil {
			p.guid = fp.GUID
			p.lid, p.lmc = fp.LID, fp.LMC
			p.state, p.phys = fp.State, fp.PhysState
			p.wAct, p.wEn, p.wSup = fp.WidthActive, fp.WidthEnabled, fp.WidthSupported
			p.sAct, p.sEn, p.sSup = fp.SpeedActive, fp.SpeedEnabled, fp.SpeedSupported
			p.sActRecorded = s.opts.fromFile && pi != 0 && fp.Remote == nil && fp.SpeedActive != 0
			p.mtuCap, p.nbrMTU = fp.MTUCap, fp.NeighborMTU
			p.capMask, p.capMask2 = fp.CapMask, fp.CapMask2
			p.mkeyProtect, p.mkeyLease = fp.MKeyProtect, fp.MKeyLease
			p.msmLID = fp.MasterSMLID
			if s.recorded.VLs {
				p.vls, p.operVLs, p.vlsRecorded = fp.VLCap, fp.OperVLs, true
			}
			if s.recorded.PKeys {
				p.pkeyEnforce = fp.PKeyEnforce
			}
		}
		if isSw {
			p.guid = swGUID
			if pi != 0 {
				p.lid, p.lmc = 0, 0 // a switch's LID lives on port 0
			}
		} else if p.guid == 0 {
			p.guid = fn.GUID + uint64(pi)
		}
		switch {
		case p.state == 0 && (p.remote >= 0 || pi == 0):
			p.state, p.phys = mad.PortStateActive, mad.PhysLinkUp
		case p.state == 0:
			// Not in the file (ibnetdiscover lists only ports with a
			// link): no link, but whether it polls or is disabled the
			// file does not say. PhysState 0 answers "unknown" rather
			// than invent Polling.
			p.state = mad.PortStateDown
		case p.phys == 0 && p.state != mad.PortStateDown:
			p.phys = mad.PhysLinkUp
		}
		if p.phys == mad.PhysLinkUp && p.remote < 0 && pi != 0 {
			// Nothing at the other end: the port cannot be up.
			p.state, p.phys = mad.PortStateDown, mad.PhysPolling
		}
		wSupKnown, sSupKnown := p.wSup != 0, p.sSup != 0
		if p.wSup == 0 {
			// Unknown (e.g. from ibnetdiscover text): every width up to
			// the widest known one.
			p.wSup = widthsUpTo((p.wEn | p.wAct).Max())
			if p.wSup == 0 {
				p.wSup = mad.Width1X | mad.Width2X | mad.Width4X
			}
		}
		if p.wEn == 0 {
			p.wEn = p.wSup
		}
		if p.sSup == 0 {
			// Unknown: every standard speed up to the fastest known one.
			top := (p.sEn | p.sAct).Max()
			if top == 0 {
				top = mad.SpeedNDR
			}
			p.sSup = (top | (top - 1)) &^ mad.SpeedFDR10
			p.sSup |= (p.sEn | p.sAct) & mad.SpeedFDR10
		}
		if p.sEn == 0 {
			p.sEn = p.sSup
		}
		// Unknown Supported masks of a chip the capability table knows
		// are what its data sheet says (as its real PortInfo would),
		// not what the port happens to run at; Enabled stays as above.
		if dev, known := devices.Of(fn); known && pi != 0 {
			if !wSupKnown && p.wSup.Max().Lanes() <= dev.Width.Lanes() {
				p.wSup = widthsUpTo(dev.Width)
			}
			if !sSupKnown && p.sSup.Max().DataGbps() <= dev.Speed.DataGbps() {
				p.sSup |= (dev.Speed | (dev.Speed - 1)) &^ mad.SpeedFDR10
			}
		}
		if p.wAct == 0 && p.phys == mad.PhysLinkUp {
			p.wAct = p.wEn.Max()
		}
		if p.sAct == 0 && p.phys == mad.PhysLinkUp {
			p.sAct = p.sEn.Max()
		}
		if p.mtuCap == 0 {
			p.mtuCap = mad.MTU4096
		}
		if p.nbrMTU == 0 && p.phys == mad.PhysLinkUp {
			p.nbrMTU = p.mtuCap
		}
		if p.capMask == 0 && (!isSw || pi == 0) {
			if isSw {
				p.capMask = defaultSwitchCap
			} else {
				p.capMask = defaultCACap
			}
		}
		if p.capMask2 == 0 && (!isSw || pi == 0) {
			p.capMask2 = defaultCap2
		}
	}
	if isSw {
		sw := &switchState{fdbCap: 49152, mcCap: 4096, lidsPP: 0, partCap: 8, lifeTime: 18, defPort: 0, enhanced0: true}
		if fs := fn.Switch; fs != nil {
			sw.lft = fs.LFT
			if fs.LinearFDBCap != 0 {
				sw.fdbCap = fs.LinearFDBCap
			}
			sw.fdbTop = fs.LinearFDBTop
			if fs.MulticastCap != 0 {
				sw.mcCap = fs.MulticastCap
			}
			sw.mcTop = fs.MulticastTop
			sw.lidsPP = fs.LIDsPerPort
			if fs.PartitionCap != 0 {
				sw.partCap = fs.PartitionCap
			}
			if fs.LifeTimeValue != 0 {
				sw.lifeTime = fs.LifeTimeValue
			}
			sw.defPort = fs.DefaultPort
			sw.enhanced0 = fs.EnhancedPort0
		}
		n.sw = sw
		n.partCap = sw.partCap
	}
	return nil
}

// index rebuilds the name, GUID and LID lookups. Callers hold s.mu for
// writing (or own s exclusively).
func (s *Sim) index(maxLID uint16) {
	s.byGUID = make(map[uint64][]int32, len(s.nodes))
	s.byDesc = make(map[string][]int32, len(s.nodes))
	s.byHost = make(map[string][]int32)
	for i := range s.nodes {
		n := &s.nodes[i]
		s.byGUID[n.guid] = append(s.byGUID[n.guid], int32(i))
		s.byDesc[n.desc] = append(s.byDesc[n.desc], int32(i))
		if h, _, ok := strings.Cut(n.desc, " "); ok && h != "" {
			s.byHost[h] = append(s.byHost[h], int32(i))
		}
		for pi := range n.ports {
			if l := n.ports[pi].lid; l != 0 {
				top := l + uint16(1)<<n.ports[pi].lmc - 1
				maxLID = max(maxLID, top)
			}
		}
	}
	s.lidMap = make([]lidOwner, int(maxLID)+1)
	for i := range s.lidMap {
		s.lidMap[i].node = -1
	}
	for i := range s.nodes {
		n := &s.nodes[i]
		for pi := range n.ports {
			p := &n.ports[pi]
			if p.lid == 0 || (n.typ == mad.NodeSwitch && pi != 0) {
				continue
			}
			for l := uint32(p.lid); l < uint32(p.lid)+uint32(1)<<p.lmc; l++ {
				if s.lidMap[l].node < 0 {
					s.lidMap[l] = lidOwner{node: int32(i), port: uint8(pi)}
				}
			}
		}
	}
}

// lidOwnerOf returns who owns lid, or node -1.
func (s *Sim) lidOwnerOf(lid uint16) lidOwner {
	if int(lid) < len(s.lidMap) && lid != 0 {
		return s.lidMap[lid]
	}
	return lidOwner{node: -1}
}

// nodeName is how errors and trace name a node.
func (s *Sim) nodeName(i int32) string {
	n := &s.nodes[i]
	if n.desc != "" {
		return n.desc
	}
	return fmt.Sprintf("0x%016x", n.guid)
}

// resolveNode finds a node by NodeDescription, GUID ("0x..."), the name
// the findings give it ("DESC (0xGUID)"), or host name (the
// description's first word) when that is unique.
func (s *Sim) resolveNode(ref string) (int32, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return -1, fmt.Errorf("sim: empty node name")
	}
	if ids := s.byDesc[ref]; len(ids) == 1 {
		return ids[0], nil
	} else if len(ids) > 1 {
		return -1, fmt.Errorf("sim: %d nodes are described %q: name one by GUID (0x...) or as the findings do, %q", len(ids), ref, fmt.Sprintf("%s (0x%016x)", ref, s.nodes[ids[0]].guid))
	}
	// A node as the findings name one whose description others share
	// (fabric.NameOf): "DESC (0xGUID)" (trial C8).
	if desc, g, ok := fabric.SplitNamed(ref); ok {
		for _, id := range s.byGUID[g] {
			if s.nodes[id].desc == desc {
				return id, nil
			}
		}
	}
	if strings.HasPrefix(ref, "0x") || strings.HasPrefix(ref, "0X") {
		g, err := strconv.ParseUint(ref[2:], 16, 64)
		if err == nil {
			if ids := s.byGUID[g]; len(ids) >= 1 {
				return ids[0], nil
			}
			return -1, fmt.Errorf("sim: no node has GUID %s", ref)
		}
	}
	if ids := s.byHost[ref]; len(ids) == 1 {
		return ids[0], nil
	} else if len(ids) > 1 {
		names := make([]string, 0, 3)
		for _, id := range ids[:min(3, len(ids))] {
			names = append(names, strconv.Quote(s.nodes[id].desc))
		}
		return -1, fmt.Errorf("sim: %q names %d nodes (%s...): give the full description", ref, len(ids), strings.Join(names, ", "))
	}
	return -1, fmt.Errorf("sim: no node is described %q (nor has that GUID or host name)", ref)
}

// resolvePort parses "NODE/PORT". Without a port, a CA's port 1 is meant.
func (s *Sim) resolvePort(ref string) (int32, uint8, error) {
	ref = strings.TrimSpace(ref)
	nodeRef, portNum := ref, -1
	if i := strings.LastIndexByte(ref, '/'); i >= 0 {
		if v, err := strconv.Atoi(ref[i+1:]); err == nil {
			nodeRef, portNum = ref[:i], v
		}
	}
	nodeRef = strings.Trim(nodeRef, `"`)
	ni, err := s.resolveNode(nodeRef)
	if err != nil {
		return -1, 0, err
	}
	n := &s.nodes[ni]
	if portNum < 0 {
		if n.typ == mad.NodeSwitch {
			return -1, 0, fmt.Errorf("sim: %q is a switch: name a port, e.g. %q", nodeRef, nodeRef+"/1")
		}
		portNum = 1
	}
	if portNum < 0 || portNum > n.numPorts() || (portNum == 0 && n.typ != mad.NodeSwitch) {
		return -1, 0, fmt.Errorf("sim: %q has no port %d (ports 1..%d)", nodeRef, portNum, n.numPorts())
	}
	return ni, uint8(portNum), nil
}

// now returns the clock's time.
func (s *Sim) now() time.Time { return s.clock.Now() }

// Now returns the simulator clock's time.
func (s *Sim) Now() time.Time { return s.clock.Now() }

// NumNodes returns the number of nodes.
func (s *Sim) NumNodes() int { return len(s.nodes) }

// drawKey names one request for the flaky and loss faults: the agent, the
// MAD's class, method, attribute and modifier, and its route (a hash of a
// directed route's hops, or the DLID), and which fault draws.
type drawKey struct {
	node   int32
	class  mad.Class
	method mad.Method
	attr   mad.AttrID
	mod    uint32
	route  uint64
	fault  uint8
}

// draw returns a pseudo-random number in [0,1) for the nth draw of k,
// from the seed and k alone.
func (s *Sim) draw(k drawKey) float64 {
	s.drawMu.Lock()
	if s.draws == nil {
		s.draws = map[drawKey]uint32{}
	}
	n := s.draws[k]
	s.draws[k] = n + 1
	s.drawMu.Unlock()
	x := s.opts.Seed
	for _, v := range []uint64{uint64(uint32(k.node)), uint64(k.class), uint64(k.method), uint64(k.attr), uint64(k.mod), k.route, uint64(k.fault), uint64(n)} {
		x = mix64(x ^ v)
	}
	return float64(x>>11) / (1 << 53)
}

// mix64 is splitmix64's finaliser: every input bit moves every output bit.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
