package checks

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/ibdoctor/ibdoctor/internal/devices"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/words"
	"github.com/ibdoctor/ibdoctor/mad"
)

func init() {
	register(Check{
		ID:      "firmware.mixed-revision",
		Summary: "a minority of the nodes of one device model (vendor and device ID) report a different NodeInfo revision",
		Needs:   []string{"topology"},
		run:     (*Snapshot).mixedRevision,
	})
}

// NodeInfo's Revision is the device's revision as its firmware reports
// it: on NVIDIA switches it moves with the hardware stepping, on HCAs it
// is often 0. A minority on another revision is worth knowing (a board
// from another batch, a part replaced), not a fault by itself: info. The
// firmware version proper is firmware.mixed-version's.
func (s *Snapshot) mixedRevision() []Finding {
	type model struct {
		vendor uint32
		device uint16
		typ    uint8
	}
	by := map[model]map[uint32][]*fabric.Node{}
	for _, n := range s.Fabric.Nodes {
		if n.VendorID == 0 && n.DeviceID == 0 {
			continue // not read (a file without them)
		}
		m := model{n.VendorID, n.DeviceID, uint8(n.Type)}
		if by[m] == nil {
			by[m] = map[uint32][]*fabric.Node{}
		}
		by[m][n.Revision] = append(by[m][n.Revision], n)
	}
	models := make([]model, 0, len(by))
	for m := range by {
		models = append(models, m)
	}
	slices.SortFunc(models, func(a, b model) int {
		return cmp.Or(cmp.Compare(a.vendor, b.vendor), cmp.Compare(a.device, b.device), cmp.Compare(a.typ, b.typ))
	})
	var out []Finding
	for _, m := range models {
		revs := by[m]
		if len(revs) < 2 {
			continue
		}
		total, major, majorRev := 0, 0, uint32(0)
		for r, ns := range revs {
			total += len(ns)
			if len(ns) > major || (len(ns) == major && r > majorRev) {
				major, majorRev = len(ns), r
			}
		}
		// A clear majority is the norm; a split fabric has none.
		if 2*major <= total {
			continue
		}
		var parts []string
		var ents []Entity
		minority := 0
		rs := make([]uint32, 0, len(revs))
		for r := range revs {
			rs = append(rs, r)
		}
		slices.Sort(rs)
		for _, r := range rs {
			if r == majorRev {
				continue
			}
			ns := revs[r]
			minority += len(ns)
			var names []string
			for i, n := range ns {
				if s.nodeInScope(n) {
					ents = append(ents, s.nodeEntity(n, "node"))
				}
				if i < 5 {
					names = append(names, s.nodeName(n))
				}
			}
			parts = append(parts, fmt.Sprintf("revision 0x%x: %s", r, words.FirstOf(names, len(ns))))
		}
		if len(ents) == 0 {
			continue
		}
		out = append(out, Finding{
			Check:    "firmware.mixed-revision",
			Severity: Info,
			Title:    fmt.Sprintf("%d of %d nodes of device 0x%04x (vendor 0x%06x) report another revision than the other %d (0x%x)", minority, total, m.device, m.vendor, major, majorRev),
			Entities: ents,
			Evidence: []Evidence{{Name: "revisions", Value: float64(len(revs)), Text: strings.Join(parts, "; ")}},
			Impact:   Impact{Summary: "nodes of one model that differ: look here first when only some of them misbehave"},
			Action:   "Compare the firmware of these nodes with the others (flint -d <dev> query on hosts; the switch's 'show version'); bring them to the fabric's version in a maintenance window if they differ.",
			Basis:    "topology",
		})
	}
	return out
}

func init() {
	register(Check{
		ID:      "firmware.mixed-version",
		Summary: "a minority of the nodes of one device model (vendor and device ID) run another firmware version (vendor GeneralInfo MAD)",
		Needs:   []string{"firmware"},
		run:     (*Snapshot).mixedVersion,
	})
}

// FirmwareView is the firmware versions read with the vendor-specific
// GeneralInfo MAD (class 0x0A), which only NVIDIA/Mellanox devices
// answer. A node missing from Versions was not read: Unread says why
// when it was asked (could not decide, never "no firmware"); nodes of
// other vendors are not asked and only counted in NotAsked.
type FirmwareView struct {
	Versions map[*fabric.Node]fabric.Firmware
	Unread   map[*fabric.Node]string
	// NoAnswer holds the nodes of Unread whose GeneralInfo went
	// unanswered, with the LID it was sent to: once the routes are read,
	// their reason says why when what was read shows it, as a silent
	// PMA's does (diagnose.Silence).
	NoAnswer map[*fabric.Node]uint16
	// NotAsked counts the nodes not sent the MAD: other vendors'
	// devices and NVIDIA's SHARP aggregation nodes, which do not answer it.
	NotAsked int
}

// FirmwareOf returns the version a GeneralInfo answer reports: the
// extended 32-bit fields when set, else the 8-bit ones (old firmware).
func FirmwareOf(g *mad.GeneralInfo) fabric.Firmware {
	if g.ExtMajor != 0 || g.ExtMinor != 0 || g.ExtSubMinor != 0 {
		return fabric.Firmware{Major: g.ExtMajor, Minor: g.ExtMinor, SubMinor: g.ExtSubMinor, PSID: g.PSID}
	}
	return fabric.Firmware{Major: uint32(g.Major), Minor: uint32(g.Minor), SubMinor: uint32(g.SubMinor), PSID: g.PSID}
}

// mixedVersion: nodes of one model (vendor, device ID, node type) should
// run one firmware release. One left behind (or upgraded alone) is the
// usual cause of "only these nodes misbehave": adaptive routing,
// congestion control and link tuning are firmware features, and release
// notes fix bugs on one version that the others still have. A warning
// naming the minority when one version is a clear majority; an info
// when the nodes are split with no majority (an upgrade half done).
func (s *Snapshot) mixedVersion() []Finding {
	// A model is a device id and its PSID, as ibdiagnet's own FW check
	// compares: a managed and an unmanaged Quantum-2 (PSIDs 577, 579) do
	// not take the same image, so their versions are not compared.
	type model struct {
		vendor uint32
		device uint16
		typ    uint8
		psid   string
	}
	type version struct {
		fw    fabric.Firmware // PSID: the most common among nodes (ties: the first in order)
		nodes []*fabric.Node
		psids map[string]int
	}
	// A node asked that did not answer may run anything: could not
	// decide, never counted with the majority.
	unread := make([]*fabric.Node, 0, len(s.Firmware.Unread))
	for n := range s.Firmware.Unread {
		unread = append(unread, n)
	}
	slices.SortFunc(unread, func(a, b *fabric.Node) int { return cmp.Compare(a.GUID, b.GUID) })
	for _, n := range unread {
		if s.nodeInScope(n) {
			s.couldNotDecide("firmware.mixed-version", "GeneralInfo not answered: "+s.Firmware.Unread[n], s.nodeEntity(n, "node"))
		}
	}
	by := map[model]map[[3]uint32]*version{}
	for n, fw := range s.Firmware.Versions {
		m := model{n.VendorID, n.DeviceID, uint8(n.Type), fw.PSID}
		if by[m] == nil {
			by[m] = map[[3]uint32]*version{}
		}
		k := [3]uint32{fw.Major, fw.Minor, fw.SubMinor}
		v := by[m][k]
		if v == nil {
			v = &version{fw: fw, psids: map[string]int{}}
			by[m][k] = v
		}
		v.nodes = append(v.nodes, n)
		v.psids[fw.PSID]++
	}
	// The map gave the versions' nodes in no order: name each version's
	// PSID by its most common one, so the finding is the same every run.
	for _, vs := range by {
		for _, v := range vs {
			best := ""
			for p, c := range v.psids {
				if c > v.psids[best] || c == v.psids[best] && (best == "" || p < best) {
					best = p
				}
			}
			v.fw.PSID = best
		}
	}
	models := make([]model, 0, len(by))
	for m, vs := range by {
		if len(vs) > 1 {
			models = append(models, m)
		}
	}
	slices.SortFunc(models, func(a, b model) int {
		return cmp.Or(cmp.Compare(a.vendor, b.vendor), cmp.Compare(a.device, b.device), cmp.Compare(a.typ, b.typ), strings.Compare(a.psid, b.psid))
	})
	var out []Finding
	for _, m := range models {
		vs := make([]*version, 0, len(by[m]))
		total := 0
		for _, v := range by[m] {
			slices.SortFunc(v.nodes, func(a, b *fabric.Node) int { return cmp.Compare(a.GUID, b.GUID) })
			vs = append(vs, v)
			total += len(v.nodes)
		}
		// Most nodes first; on a tie the newer version is the reference.
		slices.SortFunc(vs, func(a, b *version) int {
			return cmp.Or(cmp.Compare(len(b.nodes), len(a.nodes)), b.fw.Compare(a.fw))
		})
		major := vs[0]
		clear := 2*len(major.nodes) > total
		var ents []Entity
		var parts []string
		minority := 0
		for _, v := range vs[1:] {
			minority += len(v.nodes)
			var names []string
			for i, n := range v.nodes {
				if s.nodeInScope(n) {
					ents = append(ents, s.nodeEntity(n, "node"))
				}
				if i < 5 {
					names = append(names, s.nodeName(n))
				}
			}
			var notes []string
			if v.fw.Compare(major.fw) > 0 {
				notes = append(notes, "newer")
			}
			if v.fw.PSID != "" && v.fw.PSID != major.fw.PSID {
				notes = append(notes, "PSID "+v.fw.PSID)
			}
			note := ""
			if len(notes) > 0 {
				note = " (" + strings.Join(notes, ", ") + ")"
			}
			parts = append(parts, fmt.Sprintf("%s%s: %s", v.fw, note, words.FirstOf(names, len(v.nodes))))
		}
		if len(ents) == 0 {
			continue
		}
		name := devices.Model(major.nodes[0])
		if m.psid != "" {
			name += " (PSID " + m.psid + ")"
		}
		ref := major.fw.String()
		if major.fw.PSID != "" {
			ref += " (PSID " + major.fw.PSID + ")"
		}
		sev, title := Warning, fmt.Sprintf("%d of %d %s nodes run another firmware version than the other %d (%s)", minority, total, name, len(major.nodes), major.fw)
		if !clear {
			sev, title = Info, fmt.Sprintf("the %d %s nodes are split between %d firmware versions, none a clear majority (most: %d on %s)", total, name, len(vs), len(major.nodes), major.fw)
		}
		out = append(out, Finding{
			Check:    "firmware.mixed-version",
			Severity: sev,
			Title:    title,
			Entities: ents,
			Evidence: []Evidence{
				{Name: "majority", Value: float64(len(major.nodes)), Text: fmt.Sprintf("%d nodes on %s", len(major.nodes), ref)},
				{Name: "others", Value: float64(minority), Text: strings.Join(parts, "; ")},
			},
			Impact: Impact{Summary: "nodes of one model on different firmware behave differently (adaptive routing, congestion control, link tuning, fixed bugs): look here first when only some of them misbehave"},
			Action: "Query these nodes' firmware (on a host: flint -d <device> q, or mlxfwmanager --query; on a managed switch: show version; on an unmanaged switch: flint -d lid-<LID> q) and bring them to the fabric's release with mlxfwmanager (mlxfwmanager -u, or -d lid-<LID> for a switch in band) in a maintenance window; a node that runs a newer release alone was upgraded on purpose or by a replacement part: decide which release the fabric should run.",
			Basis:  "firmware",
		})
	}
	return out
}
