package checks

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/words"
	"github.com/ibdoctor/ibdoctor/mad"
)

func init() {
	register(Check{
		ID:      "routing.adaptive",
		Summary: "switches run adaptive routing (NVIDIA AdaptiveRoutingInfo): their forwarding tables are not the whole story",
		Needs:   []string{"ar"},
		run:     (*Snapshot).adaptive,
	})
}

// ARView is the AdaptiveRoutingInfo (NVIDIA vendor SMP 0xFF20) of the
// NVIDIA switches. A switch missing from Info was not read: Unread says
// why when it was asked (could not decide); a switch that answered the
// attribute as unsupported has no adaptive routing and is in Info with
// GroupCap 0.
type ARView struct {
	Info   map[*fabric.Node]mad.ARInfo
	Unread map[*fabric.Node]string
}

// arOn returns n's AdaptiveRoutingInfo when adaptive routing is on.
func (s *Snapshot) arOn(n *fabric.Node) (mad.ARInfo, bool) {
	if s.AR == nil || n == nil {
		return mad.ARInfo{}, false
	}
	a, ok := s.AR.Info[n]
	return a, ok && a.Enabled && a.GroupCap > 0
}

// slText names the SLs of a mask ("all SLs", "SLs 0-3", "SLs 0,2").
func slText(mask uint16) string {
	if mask == 0xffff {
		return "all SLs"
	}
	var sls []string
	for sl := 0; sl < 16; sl++ {
		if mask&(1<<sl) == 0 {
			continue
		}
		end := sl
		for end+1 < 16 && mask&(1<<(end+1)) != 0 {
			end++
		}
		if end > sl {
			sls = append(sls, fmt.Sprintf("%d-%d", sl, end))
		} else {
			sls = append(sls, fmt.Sprint(sl))
		}
		sl = end
	}
	noun := "SLs"
	if bits.OnesCount16(mask) == 1 {
		noun = "SL"
	}
	return noun + " " + strings.Join(sls, ",")
}

// adaptive reports the switches whose AdaptiveRoutingInfo says adaptive
// routing is on: they pick among a destination's AR group by port load
// (on the SLs AR covers), so the forwarding tables ibdoctor judges are
// only the fallback. An info, once for the fabric; nothing when no
// switch runs it.
func (s *Snapshot) adaptive() []Finding {
	unread := make([]*fabric.Node, 0, len(s.AR.Unread))
	for n := range s.AR.Unread {
		unread = append(unread, n)
	}
	slices.SortFunc(unread, func(a, b *fabric.Node) int { return cmp.Compare(a.GUID, b.GUID) })
	for _, n := range unread {
		if s.nodeInScope(n) {
			s.couldNotDecide("routing.adaptive", "AdaptiveRoutingInfo not answered: "+s.AR.Unread[n], s.nodeEntity(n, "switch"))
		}
	}
	var on []*fabric.Node
	read := 0
	sls := map[uint16]int{}
	for n, a := range s.AR.Info {
		read++
		if a.Enabled && a.GroupCap > 0 {
			on = append(on, n)
			sls[a.SLs()]++
		}
	}
	if len(on) == 0 {
		return nil
	}
	slices.SortFunc(on, func(a, b *fabric.Node) int { return cmp.Compare(a.GUID, b.GUID) })
	var ents []Entity
	var names []string
	for i, n := range on {
		if s.nodeInScope(n) {
			ents = append(ents, s.nodeEntity(n, "switch"))
		}
		if i < 5 {
			names = append(names, s.nodeName(n))
		}
	}
	if len(ents) == 0 {
		return nil
	}
	var slParts []string
	for m, k := range sls {
		slParts = append(slParts, fmt.Sprintf("%s on %d", slText(m), k))
	}
	slices.Sort(slParts)
	return []Finding{{
		Check:    "routing.adaptive",
		Severity: Info,
		Title:    fmt.Sprintf("adaptive routing is on at %d of the %s read: their forwarding tables are only the fallback", len(on), words.Count(read, "switch")),
		Entities: ents,
		Evidence: []Evidence{
			{Name: "switches", Value: float64(len(on)), Text: "adaptive routing on: " + words.FirstOf(names, len(on))},
			{Name: "service levels", Value: float64(len(sls)), Text: "covering " + strings.Join(slParts, "; ")},
		},
		Impact: Impact{Summary: "on the SLs adaptive routing covers, these switches choose among a destination's equal-cost ports by load: table imbalance overstates, and measured traffic (--interval) is what shows the real spread"},
		Action: "Judge balance on the wire: run 'ibdoctor check --interval 30s' while the job runs (routing.traffic-imbalance). If adaptive routing should be off (or on everywhere), the subnet manager's AR settings decide: OpenSM's ar_mgr / UFM's 'ar' configuration.",
		Basis:  "ar",
	}}
}

// noteAdaptive adds to each routing.ecmp-imbalance or
// routing.traffic-imbalance finding whose switch runs adaptive routing
// that the tables are not the whole story there.
func (s *Snapshot) noteAdaptive(fs []Finding) {
	if s.AR == nil {
		return
	}
	for i := range fs {
		f := &fs[i]
		if f.Check != "routing.ecmp-imbalance" && f.Check != "routing.traffic-imbalance" || len(f.Entities) == 0 {
			continue
		}
		n := s.Fabric.NodeByGUID(f.Entities[0].NodeGUID)
		a, on := s.arOn(n)
		if !on {
			continue
		}
		text := fmt.Sprintf("adaptive routing is on at %s (%s): on those SLs it spreads traffic by port load, so the tables alone are not the whole story", s.nodeName(n), slText(a.SLs()))
		// On every SL, the tables are only what AR falls back to: their
		// imbalance says little of the traffic, so it does not fail a job
		// on its own; the measured imbalance (--interval) does.
		if f.Check == "routing.ecmp-imbalance" && a.SLs() == 0xffff && f.Severity > Warning {
			text += fmt.Sprintf("; on all SLs the tables are only its fallback, so this is a warning, not %s: 'ibdoctor check --interval 30s' measures what the uplinks carry (routing.traffic-imbalance)", f.Severity)
			f.Severity = Warning
		}
		if f.Check == "routing.traffic-imbalance" {
			text = fmt.Sprintf("adaptive routing is on at %s (%s) and the traffic is still skewed: the flows are on SLs it does not cover, or it cannot spread them (one flow per port, a firmware hash)", s.nodeName(n), slText(a.SLs()))
		}
		f.Evidence = append(f.Evidence, Evidence{Name: "adaptive routing", Value: 1, Text: text})
	}
}
