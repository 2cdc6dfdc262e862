package checks

import (
	"fmt"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

func init() {
	register(Check{
		ID:      "link.hca-to-hca",
		Summary: "an adapter port cabled straight to another adapter, no switch between: neither host reaches the fabric through it",
		Needs:   []string{"topology"},
		reads:   memoLinks,
		run:     (*Snapshot).hcaToHCA,
	})
}

// hcaToHCA reports each cable whose two ends are ports of two adapters
// (not one: that is link.loopback). In a switched fabric an adapter is
// cabled to a leaf; one cabled to another adapter is a cable on the wrong
// port, and from the host that reads through it the "fabric" is those two
// adapters (trial T3: 2 nodes, 0 switches, and nothing said why).
func (s *Snapshot) hcaToHCA() []Finding {
	switches := 0
	for _, n := range s.Fabric.Nodes {
		if n.Type == mad.NodeSwitch {
			switches++
		}
	}
	var out []Finding
	for _, l := range s.links() {
		a, b := l.A, l.B
		if a.Node.Type == mad.NodeSwitch || b.Node.Type == mad.NodeSwitch || a.Node == b.Node || !s.inScope(a) {
			continue
		}
		if b.Node.GUID < a.Node.GUID {
			a, b = b, a
		}
		out = append(out, s.hcaToHCAFinding(a, b, switches))
	}
	return out
}

func (s *Snapshot) hcaToHCAFinding(a, b *fabric.Port, switches int) Finding {
	ea, eb := s.entityOf(a, "end"), s.entityOf(b, "peer")
	state := "no state read"
	if a.StateKnown() {
		state = fmt.Sprintf("%s/%s", a.State, a.PhysState)
	}
	seen := fmt.Sprintf("the fabric seen has %d switches", switches)
	impact := "neither host reaches the fabric through these ports; jobs using them fail"
	if switches == 0 {
		seen = "no switch was seen: read from one of these adapters, the fabric is the two of them"
		impact = "neither host reaches the fabric through these ports, and from them nothing past the other adapter can be seen or checked"
	}
	return Finding{
		Check:    "link.hca-to-hca",
		Severity: Error,
		Title:    fmt.Sprintf("Adapter port %s is cabled straight to adapter port %s, not to a switch", ea, eb),
		Entities: []Entity{ea, eb},
		Evidence: []Evidence{{Name: "hca-to-hca", Value: float64(a.Num),
			Text: fmt.Sprintf("%s (GUID 0x%016x) <-> %s (GUID 0x%016x): both ends adapters, %s; %s", ea, a.Node.GUID, eb, b.Node.GUID, state, seen)}},
		Impact: Impact{Score: 0.5, Summary: impact},
		Action: "Find where each end belongs in the cabling plan (each adapter port goes to its leaf switch) and recable; confirm with 'ibdoctor links'. A deliberate back-to-back pair of hosts without a switch is the one case it is expected: there, --checks runs only the checks named.",
		Basis:  "topology",
	}
}
