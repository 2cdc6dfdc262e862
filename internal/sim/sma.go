package sim

import (
	"strings"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// MAD status values the agents answer with (ibsim uses the same ones).
const (
	statusMethodUnsupported mad.Status = mad.StatusMethodUnsupported << 2     // 0x0008
	statusAttrUnsupported   mad.Status = mad.StatusMethodAttrUnsupported << 2 // 0x000C
	statusInvalidField      mad.Status = mad.StatusInvalidField << 2          // 0x001C
)

// smaAnswer runs node ni's subnet management agent on req, which arrived
// on port in (0: a switch's own management port). It returns the status
// and fills data. Callers hold s.mu: for reading, or for writing when
// req is a Set.
func (s *Sim) smaAnswer(ni int32, in uint8, req *mad.SMP, data *[mad.SMPDataSize]byte) mad.Status {
	n := &s.nodes[ni]
	if n.refused(&req.Header) {
		return statusInvalidField
	}
	m := req.Method
	if m != mad.MethodGet && m != mad.MethodSet {
		return statusMethodUnsupported
	}
	set := m == mad.MethodSet
	var a mad.Attribute
	switch req.AttrID {
	case mad.AttrNodeDescription:
		if set {
			return statusAttrUnsupported
		}
		a = &mad.NodeDescription{Text: validText(n.desc)}
	case mad.AttrNodeInfo:
		if set {
			return statusAttrUnsupported
		}
		a = s.nodeInfo(ni, in)
	case mad.AttrPortInfo:
		pn := int(req.AttrMod)
		if n.typ != mad.NodeSwitch && pn == 0 {
			pn = int(in) // a CA answers for the port the SMP came in by
		}
		if req.AttrMod > 0xff || pn > n.numPorts() {
			return statusInvalidField
		}
		if set {
			var want mad.PortInfo
			if err := want.UnmarshalAttr(req.Data[:]); err != nil {
				return statusInvalidField
			}
			if st := s.setPortInfo(ni, uint8(pn), &want); st != mad.StatusOK {
				return st
			}
		}
		a = s.portInfo(ni, uint8(pn), in)
	case mad.AttrSwitchInfo:
		if n.sw == nil {
			return statusAttrUnsupported
		}
		if set {
			return statusAttrUnsupported
		}
		a = s.switchInfo(n)
	case mad.AttrLinearForwardingTable:
		if n.sw == nil || (n.sw.lftUnknown && !set) {
			return statusAttrUnsupported
		}
		blk := req.AttrMod
		if blk > mad.MaxLFTBlock || int(blk)*mad.LFTBlockSize >= int(n.sw.fdbCap) {
			return statusInvalidField
		}
		if set {
			var b mad.LFTBlock
			if err := b.UnmarshalAttr(req.Data[:]); err != nil {
				return statusInvalidField
			}
			s.writeLFTBlock(ni, blk, &b)
		}
		// Straight into the answer, not through an Attribute: a block
		// on the heap for each of a 49k sweep's 2.9 million reads.
		s.lftBlock(n, blk, (*[mad.LFTBlockSize]uint8)(data[:mad.LFTBlockSize]))
		return mad.StatusOK
	case mad.AttrSMInfo:
		if set {
			return statusAttrUnsupported
		}
		pn := in
		if n.typ == mad.NodeSwitch {
			pn = 0
		}
		si := s.smInfo(ni, pn)
		if si == nil {
			// No SM runs behind this port: the MAD finds no agent (the
			// kernel answers so for a port without an SM).
			return statusAttrUnsupported
		}
		a = si
	case mad.AttrPKeyTable:
		if set {
			return statusAttrUnsupported
		}
		pn, block := in, req.AttrMod&0xffff
		capacity := n.partCap
		if n.typ == mad.NodeSwitch {
			pn = uint8(req.AttrMod >> 16)
			if pn != 0 {
				capacity = n.sw.partCap
			}
		}
		if req.AttrMod>>16 > 0xff || int(pn) > n.numPorts() || int(block) >= mad.PKeyBlocks(capacity) {
			return statusInvalidField
		}
		if n.ports[pn].pkeyUnknown {
			return statusAttrUnsupported
		}
		a = n.ports[pn].pkeyBlock(int(block))
	case mad.AttrSLtoVLMappingTable:
		if set {
			return statusAttrUnsupported
		}
		in, out := in, uint8(0)
		if n.typ == mad.NodeSwitch {
			in, out = uint8(req.AttrMod>>8), uint8(req.AttrMod)
		}
		if int(in) > n.numPorts() || int(out) > n.numPorts() || (n.typ == mad.NodeSwitch && req.AttrMod>>16 != 0) {
			return statusInvalidField
		}
		a = s.slToVL(n)
	case mad.AttrPortInfoExtended:
		// Advertised by CapabilityMask2 IsPortInfoExtendedSupported (on
		// port 0 of a switch). The simulator models no FEC, so it answers
		// with IsFECModeSupported clear and every mode field zero.
		capPort := &n.ports[0]
		if n.typ != mad.NodeSwitch {
			capPort = &n.ports[in]
		}
		if capPort.capMask&mad.CapIsCapabilityMask2Supported == 0 || capPort.capMask2&mad.Cap2IsPortInfoExtendedSupported == 0 {
			return statusAttrUnsupported
		}
		if req.AttrMod > uint32(n.numPorts()) {
			return statusInvalidField
		}
		if set {
			return statusAttrUnsupported
		}
		*data = [mad.SMPDataSize]byte{}
		return mad.StatusOK
	case mad.AttrMlnxExtPortInfo:
		if !mad.MlnxExtPortInfoSupported(n.devID) {
			return statusAttrUnsupported
		}
		if req.AttrMod > uint32(n.numPorts()) || set {
			if set {
				return statusAttrUnsupported
			}
			return statusInvalidField
		}
		p := &n.ports[req.AttrMod]
		e := &mad.MlnxExtPortInfo{}
		if p.sSup.Has(mad.SpeedFDR10) {
			e.LinkSpeedSupported = 1
		}
		if _, sEn := p.enabled(); sEn.Has(mad.SpeedFDR10) {
			e.LinkSpeedEnabled = 1
		}
		if p.sAct == mad.SpeedFDR10 && p.linkUp() {
			e.LinkSpeedActive = 1
		}
		a = e
	case mad.AttrARInfo:
		// NVIDIA switches only; the model is read-only.
		if n.typ != mad.NodeSwitch || n.vendor != 0x0002c9 || set || s.noAR != "" {
			return statusAttrUnsupported
		}
		ar := n.arInfo()
		a = &ar
	default:
		return statusAttrUnsupported
	}
	if err := a.MarshalAttr(data[:]); err != nil {
		// A value the model holds does not fit the wire format: report
		// it as a bad attribute rather than send garbage.
		return statusInvalidField
	}
	return mad.StatusOK
}

// slToVL is the table node n answers for every pair of its ports. The
// simulator's default maps every SL to VL0: the fabric an SM leaves with
// QoS off on hardware whose tables start so, and the one its own
// min-hop routes (VL-unaware) assume. ibsim's default differs (SL i to
// VL i, SL15 to VL7); OpenSM programs the tables only with QoS on (-Q).
func (s *Sim) slToVL(n *node) *mad.SLtoVLTable {
	if n.sw != nil && n.sw.sl2vl != nil {
		return n.sw.sl2vl
	}
	return &mad.SLtoVLTable{}
}

// validText makes a description encodable (valid UTF-8, no NULs).
func validText(s string) string {
	out := []rune(s)
	for i, r := range out {
		if r == 0 || r == '\uFFFD' {
			out[i] = '?'
		}
	}
	return string(out)
}

func (s *Sim) nodeInfo(ni int32, in uint8) *mad.NodeInfo {
	n := &s.nodes[ni]
	pg := n.ports[in].guid
	if n.typ == mad.NodeSwitch {
		pg = n.ports[0].guid
	}
	return &mad.NodeInfo{
		BaseVersion:     1,
		ClassVersion:    1,
		NodeType:        n.typ,
		NumPorts:        uint8(n.numPorts()),
		SystemImageGUID: n.sysGUID,
		NodeGUID:        n.guid,
		PortGUID:        pg,
		PartitionCap:    n.partCap,
		DeviceID:        n.devID,
		Revision:        n.rev,
		LocalPortNum:    in,
		VendorID:        n.vendor,
	}
}

// Speed masks split into PortInfo's three speed fields.
func baseSpeeds(s mad.Speed) uint8 {
	v := uint8(s & 0x7)
	if s.Has(mad.SpeedFDR10) {
		v |= uint8(mad.SpeedQDR) // FDR10 runs QDR signalling in the base field
	}
	return v
}
func extSpeeds(s mad.Speed) uint8  { return uint8(s>>4) & 0xf }
func ext2Speeds(s mad.Speed) uint8 { return uint8(s>>8) & 0x1 }

func (s *Sim) portInfo(ni int32, pn, in uint8) *mad.PortInfo {
	n := &s.nodes[ni]
	p := &n.ports[pn]
	lid, lmc := p.lid, p.lmc
	capMask, capMask2 := p.capMask, p.capMask2
	wEn, sEn := p.enabled()
	if n.typ == mad.NodeSwitch {
		lid, lmc = n.ports[0].lid, n.ports[0].lmc // mirrored on every port
		if pn != 0 {
			capMask, capMask2 = 0, 0 // only port 0 carries the masks
		}
	}
	if (n.typ != mad.NodeSwitch || pn == 0) && s.smAt(ni, pn) != nil {
		capMask |= mad.CapIsSM
	}
	pi := &mad.PortInfo{
		GIDPrefix:              0xfe80000000000000,
		LID:                    lid,
		MasterSMLID:            s.smLID,
		CapabilityMask:         capMask,
		LocalPortNum:           in,
		LinkWidthEnabled:       wEn,
		LinkWidthSupported:     p.wSup,
		LinkWidthActive:        p.wAct,
		LinkSpeedSupported:     baseSpeeds(p.sSup),
		PortState:              p.state,
		PhysState:              p.phys,
		LinkDownDefaultState:   uint8(mad.PhysPolling),
		LMC:                    lmc,
		LinkSpeedEnabled:       baseSpeeds(sEn),
		NeighborMTU:            p.nbrMTU,
		VLCap:                  4, // VL0-7
		VLHighLimit:            4,
		VLArbHighCap:           8,
		VLArbLowCap:            8,
		MTUCap:                 p.mtuCap,
		VLStallCount:           7,
		HOQLife:                18,
		GUIDCap:                1,
		SubnetTimeout:          18,
		RespTimeValue:          16,
		LocalPhyErrors:         8,
		OverrunErrors:          8,
		CapabilityMask2:        capMask2,
		LinkSpeedExtSupported:  extSpeeds(p.sSup),
		LinkSpeedExtEnabled:    extSpeeds(sEn),
		LinkSpeedExtSupported2: ext2Speeds(p.sSup),
		LinkSpeedExtEnabled2:   ext2Speeds(sEn),
	}
	if n.typ != mad.NodeSwitch {
		pi.GUIDCap = 8
	}
	if p.vls != 0 || p.vlsRecorded {
		pi.VLCap = p.vls
	}
	switch {
	case p.vlsRecorded:
		pi.OperationalVLs = p.operVLs
	case p.state == mad.PortStateActive:
		pi.OperationalVLs = pi.VLCap
	}
	if s.msmRecorded {
		// A switch's ports share port 0's SM fields.
		pi.MasterSMLID = p.msmLID
		if n.typ == mad.NodeSwitch {
			pi.MasterSMLID = n.ports[0].msmLID
		}
	}
	if n.typ == mad.NodeSwitch && pn != 0 {
		pi.PartitionEnforcementInbound = p.pkeyEnforce&fabric.PKeyEnforceIn != 0
		pi.PartitionEnforcementOutbound = p.pkeyEnforce&fabric.PKeyEnforceOut != 0
	}
	// A switch's ports share port 0's M_Key fields.
	mk := p
	if n.typ == mad.NodeSwitch {
		mk = &n.ports[0]
	}
	pi.MKeyProtectBits, pi.MKeyLeasePeriod = mk.mkeyProtect, mk.mkeyLease
	if p.linkUp() || pn == 0 || p.sActRecorded {
		switch {
		case p.sAct >= mad.SpeedXDR:
			pi.LinkSpeedExtActive2 = ext2Speeds(p.sAct)
			pi.LinkSpeedActive = uint8(mad.SpeedQDR)
		case p.sAct >= mad.SpeedFDR:
			pi.LinkSpeedExtActive = extSpeeds(p.sAct)
			pi.LinkSpeedActive = uint8(mad.SpeedQDR)
		default:
			pi.LinkSpeedActive = baseSpeeds(p.sAct)
		}
	}
	if pi.LinkSpeedActive == 0 && pi.LinkSpeedExtActive == 0 && pi.LinkSpeedExtActive2 == 0 {
		// Link down: the fields are undefined; devices typically report
		// their slowest setting.
		pi.LinkSpeedActive = uint8(mad.SpeedSDR)
	}
	if p.rateUnread {
		pi.LinkWidthActive, pi.LinkWidthEnabled, pi.LinkWidthSupported = 0, 0, 0
		pi.LinkSpeedActive, pi.LinkSpeedEnabled, pi.LinkSpeedSupported = 0, 0, 0
		pi.LinkSpeedExtActive, pi.LinkSpeedExtEnabled, pi.LinkSpeedExtSupported = 0, 0, 0
		pi.LinkSpeedExtActive2, pi.LinkSpeedExtEnabled2, pi.LinkSpeedExtSupported2 = 0, 0, 0
	}
	return pi
}

func (s *Sim) switchInfo(n *node) *mad.SwitchInfo {
	sw := n.sw
	return &mad.SwitchInfo{
		LinearFDBCap:                   sw.fdbCap,
		MulticastFDBCap:                sw.mcCap,
		LinearFDBTop:                   sw.fdbTop,
		DefaultPort:                    sw.defPort,
		DefaultMulticastPrimaryPort:    0xff,
		DefaultMulticastNotPrimaryPort: 0xff,
		LifeTimeValue:                  sw.lifeTime,
		LIDsPerPort:                    sw.lidsPP,
		PartitionEnforcementCap:        sw.partCap,
		InboundEnforcementCap:          true,
		OutboundEnforcementCap:         true,
		FilterRawInboundCap:            true,
		FilterRawOutboundCap:           true,
		EnhancedPort0:                  sw.enhanced0,
		MulticastFDBTop:                sw.mcTop,
	}
}

// lftBlock writes block blk of n's table into ports (0xFF past its end).
func (s *Sim) lftBlock(n *node, blk uint32, ports *[mad.LFTBlockSize]uint8) {
	if int(blk) < n.sw.lft.NumBlocks() {
		*ports = *n.sw.lft.Block(int(blk)) // NoRoute past the end
		return
	}
	for i := range ports {
		ports[i] = fabric.NoRoute
	}
}

// ownLFT makes switch ni's table its own (copy on first write), at
// least size entries long, and returns it. Callers hold s.mu for writing.
func (s *Sim) ownLFT(ni int32, size int) *fabric.LFT {
	sw := s.nodes[ni].sw
	if !sw.lftOwned {
		// The blocks stay shared (an LFT never writes one); the copy keeps
		// this table's edits out of the input fabric's.
		sw.lft, sw.lftOwned = sw.lft.Clone(), true
		if sw.lft == nil {
			sw.lft = fabric.NewLFT(0)
		}
	}
	sw.lft.Grow(size)
	sw.lftUnknown = false
	return sw.lft
}

func (s *Sim) writeLFTBlock(ni int32, blk uint32, b *mad.LFTBlock) {
	first := int(blk) * mad.LFTBlockSize
	s.ownLFT(ni, first+mad.LFTBlockSize).SetBlock(int(blk), &b.Ports, &s.blocks)
	s.rerouteLocked()
}

// setPortInfo applies the writable PortInfo fields an SM (or ibportstate)
// sets: LinkWidthEnabled, LinkSpeed(Ext)Enabled, PortPhysicalState
// (Polling enables, Disabled disables), and PortState (Down bounces the
// link; Armed and Active are accepted on a link that is up). A change of
// the enabled masks retrains the link. The simulated SM brings a link
// that comes up straight to Active. Callers hold s.mu for writing.
func (s *Sim) setPortInfo(ni int32, pn uint8, w *mad.PortInfo) mad.Status {
	n := &s.nodes[ni]
	if pn == 0 {
		return mad.StatusOK // a switch's management port has no link to set
	}
	p := &n.ports[pn]
	wEn, sEn := p.wEn, p.sEn
	switch w.LinkWidthEnabled {
	case 0:
	case mad.LinkWidthEnabledSupported:
		wEn = p.wSup
	default:
		if w.LinkWidthEnabled&^p.wSup != 0 {
			return statusInvalidField
		}
		wEn = w.LinkWidthEnabled
	}
	switch v := w.LinkSpeedEnabled; v {
	case 0:
	case mad.LinkSpeedEnabledSupported:
		sEn = sEn&^0x7 | p.sSup&0x7
	default:
		sEn = sEn&^0x7 | mad.BaseSpeeds(v)
	}
	switch v := w.LinkSpeedExtEnabled; v {
	case 0:
	case mad.LinkSpeedExtEnabledSupported:
		sEn = sEn&^mad.ExtSpeeds(0xf) | p.sSup&mad.ExtSpeeds(0xf)
	case mad.LinkSpeedExtEnabledDisable:
		sEn &^= mad.ExtSpeeds(0xf)
	default:
		sEn = sEn&^mad.ExtSpeeds(0xf) | mad.ExtSpeeds(v)
	}
	if wEn == 0 || sEn == 0 || sEn&^(p.sSup|mad.SpeedFDR10) != 0 {
		return statusInvalidField
	}
	if w.PhysState != 0 && w.PhysState != mad.PhysPolling && w.PhysState != mad.PhysDisabled {
		return statusInvalidField
	}
	if w.PortState > mad.PortStateActive {
		return statusInvalidField
	}
	now := s.ticks(s.now())
	retrain := wEn != p.wEn || sEn != p.sEn
	p.wEn, p.sEn = wEn, sEn
	// What was set is known from now on, as on a real port.
	p.wEnUnread = p.wEnUnread && w.LinkWidthEnabled == 0
	p.sEnUnread = p.sEnUnread && w.LinkSpeedEnabled == 0 && w.LinkSpeedExtEnabled == 0
	up := p.linkUp()
	switch {
	case w.PhysState == mad.PhysDisabled:
		if up {
			s.bounceCount(ni, pn, now)
		}
		p.state, p.phys = mad.PortStateDown, mad.PhysDisabled
		if p.remote >= 0 {
			r := &s.nodes[p.remote].ports[p.remotePort]
			r.state, r.phys = mad.PortStateDown, mad.PhysPolling
		}
	case w.PhysState == mad.PhysPolling && !up:
		p.phys = mad.PhysPolling
		if p.remote >= 0 {
			r := &s.nodes[p.remote].ports[p.remotePort]
			if r.phys == mad.PhysPolling {
				p.state, p.phys = mad.PortStateActive, mad.PhysLinkUp
				r.state, r.phys = mad.PortStateActive, mad.PhysLinkUp
				s.train(ni, pn)
			}
		}
	case up && (w.PortState == mad.PortStateDown || retrain):
		s.bounceCount(ni, pn, now)
		s.train(ni, pn)
	case up && (w.PortState == mad.PortStateArmed || w.PortState == mad.PortStateActive):
		p.state = w.PortState
	}
	s.rerouteLocked()
	return mad.StatusOK
}

// bounceCount counts a link going down once on both ends.
func (s *Sim) bounceCount(ni int32, pn uint8, now int64) {
	p := &s.nodes[ni].ports[pn]
	s.ctrs(ni, pn, now).val[ctrLinkDowned]++
	if p.remote >= 0 {
		s.ctrs(p.remote, p.remotePort, now).val[ctrLinkDowned]++
	}
}

// pkeyBlock is block b of the port's P_Key table.
func (p *port) pkeyBlock(b int) *mad.PKeyTable {
	keys := p.pkeys
	if keys == nil {
		keys = []mad.PKey{0xffff}
	}
	t := &mad.PKeyTable{}
	if lo := b * mad.PKeyBlockSize; lo < len(keys) {
		copy(t.Keys[:], keys[lo:])
	}
	return t
}

// arInfo is the AdaptiveRoutingInfo an NVIDIA switch answers: the 'ar'
// fault's, else capable (2048 groups, as a Quantum-2) but off, as a
// switch is until the subnet manager's AR manager turns it on.
func (n *node) arInfo() mad.ARInfo {
	if n.ar != nil {
		return *n.ar
	}
	return mad.ARInfo{GroupCap: 2048, ARNSupported: true, FRNSupported: true, FRSupported: true, BySLCap: true, ARVersionCap: 2, RNVersionCap: 1}
}

// refused reports whether the node's agent answers req with a status
// error (the refuse fault).
func (n *node) refused(req *mad.Header) bool {
	for _, d := range n.refuses {
		if strings.EqualFold(mad.AttrName(req.Class, req.AttrID), d.name) && (d.mod < 0 || int64(req.AttrMod) == d.mod) {
			return true
		}
	}
	return false
}
