// Package devices knows what InfiniBand chips can do at best (vendor and
// device ID from NodeInfo -> widest width and fastest lane speed), so that
// checks never expect a link to run faster than its slower device can and
// the simulator reports the Supported masks real hardware would.
package devices

import (
	"fmt"
	"strings"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Device is what a chip can do at best: its widest link width and
// fastest lane speed, from its vendor's data sheets.
type Device struct {
	Name  string
	Width mad.Width
	Speed mad.Speed
}

// Rate is the device's best rate.
func (d Device) Rate() mad.Rate { return mad.Rate{Width: d.Width, Speed: d.Speed} }

type deviceKey struct {
	vendor uint32
	device uint16
}

// IB vendor IDs (IEEE OUIs) as NodeInfo reports them.
const (
	vendorMellanox = 0x0002c9
	vendorVoltaire = 0x0008f1
	vendorQLogic   = 0x001175
)

// devices maps NodeInfo's VendorID and DeviceID to the chip's best rate.
// A device ID names a chip family: some boards of a family are sold
// slower (ConnectX-3 QDR boards, ConnectX-6 HDR100, split NDR200 ports),
// which is why a fleet of identical devices running alike overrides this
// table (see expectedRate). Widths are 4X: wider ports (12X) are rare and
// configured on purpose.
var devices = map[deviceKey]Device{
	// Mellanox / NVIDIA adapters.
	{vendorMellanox, 0x5a44}: {"InfiniHost (MT23108)", mad.Width4X, mad.SpeedSDR},
	{vendorMellanox, 0x6278}: {"InfiniHost III Ex (MT25208, Tavor mode)", mad.Width4X, mad.SpeedSDR},
	{vendorMellanox, 0x6282}: {"InfiniHost III Ex (MT25218)", mad.Width4X, mad.SpeedDDR},
	{vendorMellanox, 0x6274}: {"InfiniHost III Lx (MT25204)", mad.Width4X, mad.SpeedDDR},
	{vendorMellanox, 0x6340}: {"ConnectX IB SDR (MT25408)", mad.Width4X, mad.SpeedSDR},
	{vendorMellanox, 0x634a}: {"ConnectX IB DDR (MT25418)", mad.Width4X, mad.SpeedDDR},
	{vendorMellanox, 0x6354}: {"ConnectX IB QDR (MT25428)", mad.Width4X, mad.SpeedQDR},
	{vendorMellanox, 0x6732}: {"ConnectX IB DDR (MT26418)", mad.Width4X, mad.SpeedDDR},
	{vendorMellanox, 0x673c}: {"ConnectX-2 QDR (MT26428)", mad.Width4X, mad.SpeedQDR},
	{vendorMellanox, 0x6746}: {"ConnectX-2 QDR (MT26438)", mad.Width4X, mad.SpeedQDR},
	{vendorMellanox, 0x1003}: {"ConnectX-3", mad.Width4X, mad.SpeedFDR},
	{vendorMellanox, 0x1007}: {"ConnectX-3 Pro", mad.Width4X, mad.SpeedFDR},
	{vendorMellanox, 0x1011}: {"Connect-IB", mad.Width4X, mad.SpeedFDR},
	{vendorMellanox, 0x1013}: {"ConnectX-4", mad.Width4X, mad.SpeedEDR},
	{vendorMellanox, 0x1017}: {"ConnectX-5", mad.Width4X, mad.SpeedEDR},
	{vendorMellanox, 0x1019}: {"ConnectX-5 Ex", mad.Width4X, mad.SpeedEDR},
	{vendorMellanox, 0x101b}: {"ConnectX-6", mad.Width4X, mad.SpeedHDR},
	{vendorMellanox, 0x1021}: {"ConnectX-7", mad.Width4X, mad.SpeedNDR},
	{vendorMellanox, 0x1023}: {"ConnectX-8", mad.Width4X, mad.SpeedXDR},
	{vendorMellanox, 0xa2d2}: {"BlueField", mad.Width4X, mad.SpeedEDR},
	{vendorMellanox, 0xa2d6}: {"BlueField-2", mad.Width4X, mad.SpeedHDR},
	{vendorMellanox, 0xa2dc}: {"BlueField-3", mad.Width4X, mad.SpeedNDR},
	{vendorMellanox, 0xcf09}: {"Quantum-2 SHARP Aggregation Node", mad.Width4X, mad.SpeedNDR},
	// Mellanox / NVIDIA switch ASICs.
	{vendorMellanox, 0xa87c}: {"InfiniScale (MT43132)", mad.Width4X, mad.SpeedSDR},
	{vendorMellanox, 0xb924}: {"InfiniScale III (MT47396)", mad.Width4X, mad.SpeedDDR},
	{vendorMellanox, 0xbd34}: {"InfiniScale IV (MT48436)", mad.Width4X, mad.SpeedQDR},
	{vendorMellanox, 0xbd35}: {"InfiniScale IV (MT48437)", mad.Width4X, mad.SpeedQDR},
	{vendorMellanox, 0xbd36}: {"InfiniScale IV (MT48438)", mad.Width4X, mad.SpeedQDR},
	{vendorMellanox, 0xc738}: {"SwitchX / SwitchX-2", mad.Width4X, mad.SpeedFDR},
	{vendorMellanox, 0xcb20}: {"Switch-IB", mad.Width4X, mad.SpeedEDR},
	{vendorMellanox, 0xcb84}: {"Switch-IB 2", mad.Width4X, mad.SpeedEDR},
	{vendorMellanox, 0xcf08}: {"Quantum", mad.Width4X, mad.SpeedHDR},
	{vendorMellanox, 0xd2f0}: {"Quantum-2", mad.Width4X, mad.SpeedNDR},
	{vendorMellanox, 0xd2f2}: {"Quantum-2", mad.Width4X, mad.SpeedNDR},
	{vendorMellanox, 0xd2f4}: {"Quantum-3 (Quantum-X800)", mad.Width4X, mad.SpeedXDR},
	// Voltaire switches (InfiniScale-based, SDR generation).
	{vendorVoltaire, 0x5a05}: {"Voltaire SW-6IB4", mad.Width4X, mad.SpeedSDR},
	{vendorVoltaire, 0x5a06}: {"Voltaire ISR9024", mad.Width4X, mad.SpeedSDR},
	// QLogic / Intel TrueScale adapters (qib).
	{vendorQLogic, 0x0010}: {"QLogic InfiniPath QHT7140", mad.Width4X, mad.SpeedSDR},
	{vendorQLogic, 0x7220}: {"QLogic QLE7240/7280", mad.Width4X, mad.SpeedDDR},
	{vendorQLogic, 0x7322}: {"QLogic / Intel TrueScale QLE7340", mad.Width4X, mad.SpeedQDR},
}

// Lookup returns what the chip with this NodeInfo VendorID and DeviceID
// can do at best, when the table knows it.
func Lookup(vendor uint32, device uint16) (Device, bool) {
	d, ok := devices[deviceKey{vendor, device}]
	return d, ok
}

// slowestBoard is the slowest lane speed any board of an adapter family
// is sold at, where the vendor's board list is known: a link of such an
// adapter running slower is degraded, not a board sold slower. ConnectX-3
// and its Pro are not here (QDR and FDR10 boards share the device ID).
var slowestBoard = map[deviceKey]mad.Speed{
	{vendorMellanox, 0x1011}: mad.SpeedFDR, // Connect-IB: FDR boards only
	{vendorMellanox, 0x1013}: mad.SpeedFDR, // ConnectX-4: FDR and EDR boards
	{vendorMellanox, 0x1017}: mad.SpeedEDR, // ConnectX-5: EDR boards
	{vendorMellanox, 0x1019}: mad.SpeedEDR, // ConnectX-5 Ex: EDR boards
	{vendorMellanox, 0x101b}: mad.SpeedEDR, // ConnectX-6: EDR, HDR100 and HDR boards
	{vendorMellanox, 0x1021}: mad.SpeedHDR, // ConnectX-7: HDR, NDR200 (2X) and NDR boards
}

// SlowestBoard is the slowest lane speed any board of n's adapter family
// is sold at, by vendor and device ID, when the table knows it.
func SlowestBoard(n *fabric.Node) (mad.Speed, bool) {
	sp, ok := slowestBoard[deviceKey{n.VendorID, n.DeviceID}]
	return sp, ok
}

// byDescription recognises a chip from the NodeDescription its firmware
// sets by default, for dumps that carry no device ID (ibnetdiscover -p):
// only vendors' default strings, which name the chip, never host names.
var byDescription = []struct {
	contains string
	dev      Device
}{
	{"Infiniscale-III", Device{"InfiniScale III (MT47396)", mad.Width4X, mad.SpeedDDR}},
	{"MT47396", Device{"InfiniScale III (MT47396)", mad.Width4X, mad.SpeedDDR}},
	{"Infiniscale-IV", Device{"InfiniScale IV (MT48436)", mad.Width4X, mad.SpeedQDR}},
	{"MT48436", Device{"InfiniScale IV (MT48436)", mad.Width4X, mad.SpeedQDR}},
	{"MT43132", Device{"InfiniScale (MT43132)", mad.Width4X, mad.SpeedSDR}},
	{"MT23108 InfiniHost", Device{"InfiniHost (MT23108)", mad.Width4X, mad.SpeedSDR}},
	{"Voltaire 4036", Device{"Voltaire 4036 (InfiniScale IV)", mad.Width4X, mad.SpeedQDR}},
	{"ISR9024 Voltaire", Device{"Voltaire ISR9024", mad.Width4X, mad.SpeedSDR}},
	{"SwitchX", Device{"SwitchX / SwitchX-2", mad.Width4X, mad.SpeedFDR}},
	{"SwitchIB", Device{"Switch-IB", mad.Width4X, mad.SpeedEDR}},
	{"Quantum-2 Mellanox", Device{"Quantum-2", mad.Width4X, mad.SpeedNDR}},
	{"Quantum Mellanox", Device{"Quantum", mad.Width4X, mad.SpeedHDR}},
}

// Of returns what n's chip can do at best, when the table knows it: by
// vendor and device ID, or, when the device ID is unknown (0, a dump
// without it), by the vendor's default NodeDescription.
func Of(n *fabric.Node) (Device, bool) {
	if d, ok := Lookup(n.VendorID, n.DeviceID); ok {
		return d, true
	}
	if n.DeviceID != 0 {
		return Device{}, false
	}
	for _, b := range byDescription {
		if strings.Contains(n.Description, b.contains) {
			return b.dev, true
		}
	}
	return Device{}, false
}

// UnknownModel is Model's name for a device whose dump carries no device
// ID.
const UnknownModel = "unknown device"

// Model names n's device model, for grouping identical devices: the
// table's name, or the vendor and device IDs ("unknown device" when the
// dump carries no device ID).
func Model(n *fabric.Node) string {
	if d, ok := Of(n); ok {
		return d.Name
	}
	if n.DeviceID == 0 {
		return UnknownModel
	}
	return fmt.Sprintf("device 0x%06x:0x%04x", n.VendorID, n.DeviceID)
}
