// Package topology generates designed InfiniBand fabrics (fat trees,
// rail-optimized clusters, dragonflies) as *fabric.Fabric models, assigns
// LIDs and computes min-hop linear forwarding tables the way OpenSM's
// minhop engine does, and reads and writes OpenSM dump_fts text.
//
// A generated fabric is what an operator designed: every cabled port is
// Active/LinkUp at the chosen rate, every uncabled port Down/Polling. It has
// no LIDs until AssignLIDs and no LFTs until Route.
package topology

import (
	"fmt"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Vendor OUIs used in generated GUIDs and VendorIDs.
const (
	OUIMellanox = 0x0002c9
	OUINVIDIA   = 0xb83fd2
)

// GUID layout: OUI in bits 63..40, a kind byte in bits 39..32, a 1-based
// index in bits 31..0. Real ConnectX GUIDs carry 0x03 where the kind byte
// sits; switches and system images get their own kinds so that no two
// generated GUIDs collide.
const (
	kindHCA    = 0x03
	kindSwitch = 0x04
	kindSystem = 0x05
)

// Default switch descriptions and device identities by generation.
type hwModel struct {
	switchDev   uint16
	switchModel string
	hcaDev      uint16
}

func modelFor(s mad.Speed) hwModel {
	switch {
	case s >= mad.SpeedXDR:
		return hwModel{0xd2f4, "Q3400", 0x1023} // Quantum-X800, ConnectX-8
	case s >= mad.SpeedNDR:
		return hwModel{0xd2f2, "MQM9700", 0x1021} // Quantum-2, ConnectX-7
	case s >= mad.SpeedHDR:
		return hwModel{0xcf08, "MQM8700", 0x101b} // Quantum, ConnectX-6
	default:
		return hwModel{0xcb84, "MSB7800", 0x1017} // Switch-IB 2, ConnectX-5
	}
}

// Common options shared by every generator.
type Common struct {
	// Rate every cabled port runs at; zero means 4X NDR.
	Rate mad.Rate
	// SwitchPorts is the port count of every switch; zero means 64.
	SwitchPorts int
	// OUI is the vendor prefix of every GUID; zero means OUINVIDIA.
	OUI uint32
	// LongSwitchNames gives switches Mellanox-style descriptions,
	// "MF0;leaf07:MQM9700/U1", instead of the bare "leaf07".
	LongSwitchNames bool
}

func (c Common) withDefaults() Common {
	if c.Rate == (mad.Rate{}) {
		c.Rate = mad.Rate{Width: mad.Width4X, Speed: mad.SpeedNDR}
	}
	if c.SwitchPorts == 0 {
		c.SwitchPorts = 64
	}
	if c.OUI == 0 {
		c.OUI = OUINVIDIA
	}
	return c
}

func (c Common) validate() error {
	if c.SwitchPorts < 2 || c.SwitchPorts > 254 {
		return fmt.Errorf("topology: %d switch ports: want 2..254", c.SwitchPorts)
	}
	if c.Rate.Width.Lanes() == 0 || c.Rate.Speed.DataGbps() == 0 {
		return fmt.Errorf("topology: rate %v is not one width and one speed", c.Rate)
	}
	return nil
}

// builder creates nodes and cables with realistic PortInfo-level fields.
type builder struct {
	c        Common
	hw       hwModel
	f        *fabric.Fabric
	nSwitch  uint32
	nHCA     uint32
	portSlab []fabric.Port // ports are carved from slabs to keep big fabrics cheap
}

func newBuilder(c Common, nodeHint int) *builder {
	return &builder{c: c, hw: modelFor(c.Rate.Speed), f: &fabric.Fabric{Nodes: make([]*fabric.Node, 0, nodeHint)}}
}

func (b *builder) guid(kind uint64, idx uint32) uint64 {
	return uint64(b.c.OUI)<<40 | kind<<32 | uint64(idx)
}

func (b *builder) allocPorts(n int) []fabric.Port {
	if len(b.portSlab) < n {
		size := 4096
		if n > size {
			size = n
		}
		b.portSlab = make([]fabric.Port, size)
	}
	p := b.portSlab[:n:n]
	b.portSlab = b.portSlab[n:]
	return p
}

// speedsUpTo returns every lane speed a port of generation s supports
// (FDR10 is a Mellanox-only speed and left out).
func speedsUpTo(s mad.Speed) mad.Speed {
	var m mad.Speed
	for x := mad.SpeedSDR; x <= s && x != 0; x <<= 1 {
		if x != mad.SpeedFDR10 {
			m |= x
		}
	}
	return m
}

func widthsUpTo(w mad.Width) mad.Width {
	switch w {
	case mad.Width1X:
		return mad.Width1X
	case mad.Width2X:
		return mad.Width1X | mad.Width2X
	case mad.Width4X:
		return mad.Width1X | mad.Width2X | mad.Width4X
	case mad.Width8X:
		return mad.Width1X | mad.Width2X | mad.Width4X | mad.Width8X
	}
	return mad.Width1X | mad.Width4X | mad.Width12X
}

// PortInfo CapabilityMask bits used below.
const (
	capNotice       = 1 << 2
	capTrap         = 1 << 3
	capSLMap        = 1 << 6
	capLEDInfo      = 1 << 9
	capSysImageGUID = 1 << 11
	capCableInfo    = 1 << 13
	capExtSpeeds    = 1 << 14
	capCapMask2     = 1 << 15
	capCM           = 1 << 16
	capDevMgmt      = 1 << 19
	capVendorClass  = 1 << 20
	capCapMaskTrap  = 1 << 22
	capClientRereg  = 1 << 25
	capOtherLocal   = 1 << 26
	capMcastPKeyTrp = 1 << 29
	capMcastFDBTop  = 1 << 30
	capHierInfo     = 1 << 31
)

// SwitchCapMask is the CapabilityMask of generated switch ports.
const SwitchCapMask = capNotice | capTrap | capSLMap | capLEDInfo | capSysImageGUID |
	capCableInfo | capExtSpeeds | capCapMask2 | capVendorClass | capMcastFDBTop

// HCACapMask is the CapabilityMask of generated HCA ports (the value mlx5
// ports commonly show in sysfs cap_mask, 0xa651e848).
const HCACapMask = capTrap | capSLMap | capSysImageGUID | capCableInfo | capExtSpeeds |
	capCapMask2 | capCM | capVendorClass | capCapMaskTrap | capClientRereg |
	capOtherLocal | capMcastPKeyTrp | capHierInfo

func (b *builder) capMask2() uint16 {
	m := uint16(0x0001 | 0x0002 | 0x0010) // SetNodeDescription, PortInfoExtended, 2x
	s := b.c.Rate.Speed
	if s >= mad.SpeedHDR {
		m |= 0x0020
	}
	if s >= mad.SpeedNDR {
		m |= 0x0400
	}
	if s >= mad.SpeedXDR {
		m |= 0x0800 | 0x1000
	}
	return m
}

func (b *builder) initPort(p *fabric.Port, n *fabric.Node, num int, capMask uint32) {
	w := b.c.Rate.Width
	*p = fabric.Port{
		Node:           n,
		Num:            uint8(num),
		GUID:           n.GUID,
		State:          mad.PortStateDown,
		PhysState:      mad.PhysPolling,
		WidthActive:    w,
		WidthEnabled:   widthsUpTo(w),
		WidthSupported: widthsUpTo(w),
		SpeedActive:    mad.SpeedSDR, // what a down port reports
		SpeedEnabled:   speedsUpTo(b.c.Rate.Speed),
		SpeedSupported: speedsUpTo(b.c.Rate.Speed),
		NeighborMTU:    mad.MTU4096,
		MTUCap:         mad.MTU4096,
		CapMask:        capMask,
		CapMask2:       b.capMask2(),
	}
}

// addSwitch adds a switch named name (e.g. "leaf07") with the configured
// port count.
func (b *builder) addSwitch(name string) *fabric.Node {
	b.nSwitch++
	g := b.guid(kindSwitch, b.nSwitch)
	desc := name
	if b.c.LongSwitchNames {
		desc = fmt.Sprintf("MF0;%s:%s/U1", name, b.hw.switchModel)
	}
	n := &fabric.Node{
		Type:            mad.NodeSwitch,
		GUID:            g,
		SystemImageGUID: g,
		Description:     desc,
		VendorID:        OUIMellanox,
		DeviceID:        b.hw.switchDev,
		Revision:        0xa0,
		Switch: &fabric.Switch{
			LinearFDBCap:  49152,
			MulticastCap:  4096,
			LIDsPerPort:   0,
			EnhancedPort0: true,
			LifeTimeValue: 18,
			PartitionCap:  32,
		},
	}
	np := b.c.SwitchPorts
	ports := b.allocPorts(np + 1)
	n.Ports = make([]*fabric.Port, np+1)
	for i := range ports {
		b.initPort(&ports[i], n, i, SwitchCapMask)
		n.Ports[i] = &ports[i]
	}
	// Port 0 is the switch's management port: always up.
	p0 := n.Ports[0]
	p0.State, p0.PhysState = mad.PortStateActive, mad.PhysLinkUp
	p0.SpeedActive = b.c.Rate.Speed
	b.f.Nodes = append(b.f.Nodes, n)
	return n
}

// addHCA adds a one-port HCA "host mlx5_<dev>" whose system image GUID is
// shared by every HCA of server (0-based).
func (b *builder) addHCA(host string, server, dev int) *fabric.Node {
	b.nHCA++
	g := b.guid(kindHCA, b.nHCA)
	n := &fabric.Node{
		Type:            mad.NodeCA,
		GUID:            g,
		SystemImageGUID: b.guid(kindSystem, uint32(server+1)),
		Description:     fmt.Sprintf("%s mlx5_%d", host, dev),
		VendorID:        OUIMellanox,
		DeviceID:        b.hw.hcaDev,
		Revision:        0,
	}
	ports := b.allocPorts(2)
	n.Ports = []*fabric.Port{nil, &ports[1]}
	b.initPort(&ports[1], n, 1, HCACapMask)
	b.f.Nodes = append(b.f.Nodes, n)
	return n
}

// connect cables port pa of a to port pb of b and brings both up.
func (b *builder) connect(a *fabric.Node, pa int, c *fabric.Node, pc int) error {
	if pa <= 0 || pa >= len(a.Ports) || pc <= 0 || pc >= len(c.Ports) {
		return fmt.Errorf("topology: cannot cable %q port %d to %q port %d: no such port", a.Description, pa, c.Description, pc)
	}
	x, y := a.Ports[pa], c.Ports[pc]
	if x.Remote != nil || y.Remote != nil {
		return fmt.Errorf("topology: cannot cable %q port %d to %q port %d: already cabled", a.Description, pa, c.Description, pc)
	}
	x.Remote, y.Remote = y, x
	for _, p := range []*fabric.Port{x, y} {
		p.State, p.PhysState = mad.PortStateActive, mad.PhysLinkUp
		p.WidthActive, p.SpeedActive = b.c.Rate.Width, b.c.Rate.Speed
	}
	return nil
}

// name formats prefix and a 1-based index with at least minDigits digits,
// more when count needs them ("leaf07", "gpu0042").
func name(prefix string, idx, count, minDigits int) string {
	d := len(fmt.Sprint(count))
	if d < minDigits {
		d = minDigits
	}
	return fmt.Sprintf("%s%0*d", prefix, d, idx)
}
