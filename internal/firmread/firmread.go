// Package firmread reads the firmware version of every node that answers
// NVIDIA's vendor-specific GeneralInfo MAD (class 0x0A), for the
// firmware.mixed-version check. It only sends Gets, through the request
// engine and its read-only guard. docs/checks.md says which devices
// answer.
package firmread

import (
	"cmp"
	"context"
	"sync"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/fanout"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Getter is what Read needs from the request engine (*transport.Engine
// implements it).
type Getter interface {
	GetVendor(ctx context.Context, lid uint16, a mad.Attribute, mod uint32) (*mad.GMP, error)
}

// NodeInfo VendorIDs (IEEE OUIs): Mellanox's, which NVIDIA's InfiniBand
// devices still report, and Bull's, whose OEM switches and adapters are
// Mellanox silicon and firmware.
const (
	VendorMellanox = 0x0002c9
	VendorBull     = 0x00119f
)

// bullMellanox are the device IDs of Bull's Mellanox-based devices
// (SwitchX, Switch-IB/IB 2, ConnectX-3, Connect-IB, ConnectX-4), the list
// infiniband-diags and OpenSM use to send them Mellanox vendor SMPs
// (is_mlnx_ext_port_info_supported).
func bullMellanox(dev uint16) bool {
	switch dev {
	case 0x1b02, 0x1b50, 0x1ba0, 0x1b33, 0x1b73, 0x1b40, 0x1b41, 0x1b60, 0x1b61, 0x1b83, 0x1b93, 0x1b94, 0x1bb4, 0x1bb5, 0x1bc4:
		return true
	}
	return dev >= 0x1bd0 && dev <= 0x1bd5
}

// deviceSHARPAN is the device ID of Quantum-2's SHARP Aggregation Node, a
// CA inside the switch that does not answer GeneralInfo (ibdiagnet's
// NODE_NO_RESPONSE for every one on a Quantum-2 fabric).
const deviceSHARPAN = 0xcf09

// NoLID is the reason a node without a LID was not read: a GMP is
// LID-routed, and no master SM has assigned one.
const NoLID = "no LID to address the node by"

// workers bounds the nodes read at once; the engine's own window and
// per-destination limit still apply.
const workers = 32

// Asked reports whether n is sent GeneralInfo: NVIDIA/Mellanox switches
// and adapters, and Bull's Mellanox-based ones. Other vendors' devices
// have no agent for the class (a request would only time out), nor do
// SHARP aggregation nodes.
func Asked(n *fabric.Node) bool {
	switch n.VendorID {
	case VendorMellanox:
		return n.DeviceID != deviceSHARPAN
	case VendorBull:
		return bullMellanox(n.DeviceID)
	}
	return false
}

// lidOf is the LID GeneralInfo is sent to: a switch's port 0, else the
// node's first port with a LID of its own (the node answers for itself on
// any). A LID another port also owns is not used: the other owner may
// answer, and its firmware would be filed under n; shared says why when
// that leaves none.
func lidOf(f *fabric.Fabric, n *fabric.Node) (lid uint16, shared string) {
	if n.Type == mad.NodeSwitch {
		if len(n.Ports) > 0 && n.Ports[0] != nil && n.Ports[0].LID != 0 {
			if why := f.LIDShared(n.Ports[0]); why != "" {
				return 0, why
			}
			return n.Ports[0].LID, ""
		}
		return 0, ""
	}
	for _, p := range n.Ports {
		if p != nil && p.Num > 0 && p.LID != 0 && p.State == mad.PortStateActive {
			if why := f.LIDShared(p); why != "" {
				shared = cmp.Or(shared, why)
				continue
			}
			return p.LID, ""
		}
	}
	return 0, shared
}

// Read asks every node of f that Asked selects for its GeneralInfo. A
// node that does not answer is in Unread with the reason: its firmware
// is unknown, nothing more.
func Read(ctx context.Context, g Getter, f *fabric.Fabric) *checks.FirmwareView {
	v := &checks.FirmwareView{Versions: map[*fabric.Node]fabric.Firmware{}, Unread: map[*fabric.Node]string{}, NoAnswer: map[*fabric.Node]uint16{}}
	var nodes []*fabric.Node
	for _, n := range f.Nodes {
		if Asked(n) {
			nodes = append(nodes, n)
		} else {
			v.NotAsked++
		}
	}
	var mu sync.Mutex
	fanout.Each(ctx, workers, nodes, v.Versions, v.Unread, func(n *fabric.Node) (fabric.Firmware, string) {
		fw, why, silentAt := readNode(ctx, g, f, n)
		if silentAt != 0 {
			mu.Lock()
			v.NoAnswer[n] = silentAt
			mu.Unlock()
		}
		return fw, why
	})
	return v
}

// readNode reads n's firmware, or says why not; silentAt is the LID a
// GeneralInfo went unanswered at (0: it did not).
func readNode(ctx context.Context, g Getter, f *fabric.Fabric, n *fabric.Node) (fw fabric.Firmware, why string, silentAt uint16) {
	lid, shared := lidOf(f, n)
	if shared != "" {
		return fabric.Firmware{}, shared, 0
	}
	if lid == 0 {
		return fabric.Firmware{}, NoLID, 0
	}
	var gi mad.GeneralInfo
	if _, err := g.GetVendor(ctx, lid, &gi, 0); err != nil {
		if transport.Unanswered(err) {
			silentAt = lid
		}
		return fabric.Firmware{}, err.Error(), silentAt
	}
	fw = checks.FirmwareOf(&gi)
	if fw == (fabric.Firmware{PSID: fw.PSID}) {
		return fabric.Firmware{}, "GeneralInfo answered with firmware version 0.0.0", 0
	}
	return fw, "", 0
}
