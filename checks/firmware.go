package checks

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
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
// firmware version proper is in the vendor-specific GeneralInfo MAD,
// which ibdoctor does not read yet.
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
			more := ""
			if len(ns) > len(names) {
				more = fmt.Sprintf(" and %d more", len(ns)-len(names))
			}
			parts = append(parts, fmt.Sprintf("revision 0x%x: %s%s", r, strings.Join(names, ", "), more))
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
