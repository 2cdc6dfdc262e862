package checks

import (
	"fmt"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

func init() {
	register(Check{
		ID:      "config.mtu-mismatch",
		Summary: "an active link runs a smaller MTU (NeighborMTU) than most of the fabric's links, or an end's MTUCap is below it",
		Needs:   []string{"topology", "mtu"},
		reads:   memoLinks,
		run:     (*Snapshot).mtuMismatch,
	})
	register(Check{
		ID:      "config.vl-mismatch",
		Summary: "the two ends of an active link run different numbers of data VLs (OperationalVLs), or fewer than most of the fabric's ports",
		Needs:   []string{"topology", "vls"},
		reads:   memoLinks,
		run:     (*Snapshot).vlMismatch,
	})
}

// activeLinksInScope is activeLinks over the links in s's scope, asked
// before orienting (which counts both switches' host ports: on a gate's
// part of a 49k-node fabric most links are out of scope).
func (s *Snapshot) activeLinksInScope(fn func(a, b *fabric.Port)) {
	for _, l := range s.links() {
		if !s.inScope(l.A) || l.A.State != mad.PortStateActive || l.B.State != mad.PortStateActive || isLoopback(l.A) {
			continue
		}
		a, b := orient(l.A, l.B)
		fn(a, b)
	}
}

// mode returns the most common nonzero value of count and its share of
// the total, or 0 when nothing was counted.
func mode[K ~uint8](count map[K]int) (K, int, int) {
	var best K
	bc, total := 0, 0
	for k, c := range count {
		total += c
		if c > bc || (c == bc && k > best) {
			best, bc = k, c
		}
	}
	return best, bc, total
}

func (s *Snapshot) mtuMismatch() []Finding {
	count := map[mad.MTU]int{}
	for _, l := range s.links() {
		a, b := l.A, l.B // the fabric's norm: every link, either way round
		if a.State == mad.PortStateActive && b.State == mad.PortStateActive && !isLoopback(a) && a.NeighborMTU != 0 && b.NeighborMTU != 0 {
			count[min(a.NeighborMTU, b.NeighborMTU)]++
		}
	}
	fab, n, total := mode(count)
	// A fabric MTU needs a clear majority: a fabric split half and half
	// has no norm to fall below.
	if fab == 0 || 2*n < total {
		return nil
	}
	var out []Finding
	s.activeLinksInScope(func(a, b *fabric.Port) {
		if a.NeighborMTU == 0 || b.NeighborMTU == 0 {
			return
		}
		mtu := min(a.NeighborMTU, b.NeighborMTU)
		capped := ""
		for _, p := range []*fabric.Port{a, b} {
			if p.MTUCap != 0 && p.MTUCap < fab {
				capped = fmt.Sprintf("; %s can do no more than MTU %s (MTUCap)", s.entityOf(p, "").String(), p.MTUCap)
			}
		}
		if mtu >= fab && capped == "" {
			return
		}
		sev := Warning
		if isSwitchLink(a) {
			sev = Error // every path across it is held to the smaller MTU
		}
		out = append(out, Finding{
			Check:    "config.mtu-mismatch",
			Severity: sev,
			Title:    fmt.Sprintf("Link %s runs MTU %s, below the fabric's %s", s.linkName(a), mtu, fab),
			Entities: []Entity{s.entityOf(a, "end"), s.entityOf(b, "peer")},
			Evidence: []Evidence{{Name: "NeighborMTU", Value: float64(mtu.Bytes()), Unit: "bytes", Threshold: float64(fab.Bytes()),
				Text: fmt.Sprintf("NeighborMTU %s / %s, MTUCap %s / %s; %d of %d active links run %s%s", a.NeighborMTU, b.NeighborMTU, a.MTUCap, b.MTUCap, n, total, fab, capped)}},
			Impact: Impact{Score: 0.1 / float64(max(1, s.hostCount())), Summary: "RDMA connections over this link are held to the smaller path MTU: more packets and headers per message, lower bandwidth for large transfers"},
			Action: "Check the MTU the SM was told for this port (opensm partitions.conf mtu=, the HCA's firmware max MTU, a switch port profile); set the fabric's MTU on both ends and have the SM re-sweep. A host limited by MTUCap needs its firmware setting changed (mlxconfig) or accepts the lower MTU.",
			Basis:  "topology",
		})
	})
	return out
}

// vlNames are OperationalVLs/VLCap codes.
func vlText(v uint8) string {
	switch v {
	case 1:
		return "VL0"
	case 2:
		return "VL0-1"
	case 3:
		return "VL0-3"
	case 4:
		return "VL0-7"
	case 5:
		return "VL0-14"
	}
	return fmt.Sprintf("code %d", v)
}

func (s *Snapshot) vlMismatch() []Finding {
	count := map[uint8]int{}
	for _, n := range s.Fabric.Nodes {
		for i, p := range n.Ports {
			if p != nil && i != 0 && p.State == mad.PortStateActive && p.OperVLs != 0 {
				count[p.OperVLs]++
			}
		}
	}
	fab, n, total := mode(count)
	if fab == 0 || 2*n < total {
		return nil
	}
	var out []Finding
	s.activeLinksInScope(func(a, b *fabric.Port) {
		if a.OperVLs == 0 || b.OperVLs == 0 {
			return
		}
		if a.OperVLs == b.OperVLs && a.OperVLs >= fab {
			return
		}
		if a.OperVLs == b.OperVLs && a.OperVLs == min(a.VLCap, b.VLCap) && (isAggregationNode(a.Node) || isAggregationNode(b.Node)) {
			// A SHARP Aggregation Node sits on its switch's internal port
			// (Quantum's 65), whose VLs are the ASIC's (VL0-1 on
			// Quantum-2): no cable or SM setting to change.
			return
		}
		why := fmt.Sprintf("%s runs %s, %s runs %s", s.entityOf(a, "").String(), vlText(a.OperVLs), s.entityOf(b, "").String(), vlText(b.OperVLs))
		title := fmt.Sprintf("Link %s: the ends run different data VLs (%s and %s)", s.linkName(a), vlText(a.OperVLs), vlText(b.OperVLs))
		if a.OperVLs == b.OperVLs {
			title = fmt.Sprintf("Link %s runs %s, fewer data VLs than the fabric's %s", s.linkName(a), vlText(a.OperVLs), vlText(fab))
		}
		out = append(out, Finding{
			Check:    "config.vl-mismatch",
			Severity: Warning,
			Title:    title,
			Entities: []Entity{s.entityOf(a, "end"), s.entityOf(b, "peer")},
			Evidence: []Evidence{{Name: "OperationalVLs", Value: float64(min(a.OperVLs, b.OperVLs)), Threshold: float64(fab),
				Text: fmt.Sprintf("%s (VLCap %s / %s); %d of %d active ports run %s", why, vlText(a.VLCap), vlText(b.VLCap), n, total, vlText(fab))}},
			Impact: Impact{Score: 0.05 / float64(max(1, s.hostCount())), Summary: "traffic on the VLs the link lacks (QoS classes, a routing engine's deadlock-free VLs) is dropped or squeezed onto fewer VLs here: a deadlock-freedom or QoS assumption breaks on this hop"},
			Action: "Check the VL settings the SM pushes (opensm.conf max_op_vl, the port's VLCap) and the firmware of the lower end; both ends of a link must run the same number of VLs. Re-sweep after the change.",
			Basis:  "topology",
		})
	})
	return out
}
