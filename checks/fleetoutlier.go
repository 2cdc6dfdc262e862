package checks

import (
	"fmt"
	"slices"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// The physical-layer error counters: what a marginal cable, transceiver
// or port counts on the receive side of its link. Routine operation does
// not drive them (a host reboot counts a LinkDowned, not these; SM sweeps
// drop VL15, not symbols), so a count since an unknown clear far above
// its fleet's is a link to look at, whatever the span (trial H1).
// LinkDowned, discards, relay, constraint, remote-physical and VL15/QP1
// counts pile up in healthy operation and stay judged only when full.
var physicalCounters = map[string]bool{
	"SymbolErrorCounter":           true,
	"LinkErrorRecoveryCounter":     true,
	"LocalLinkIntegrityErrors":     true,
	"PortRcvErrors":                true,
	"ExcessiveBufferOverrunErrors": true,
}

// The outlier rule for a value since an unknown clear (docs/checks.md
// gives the figures their reasons): at least outlierMinPeers ports of
// the role read the counter, and the value is above both
// outlierThresholdFactor times the counter's absolute threshold and
// outlierFleetFactor times the role's 90th percentile.
const (
	outlierMinPeers        = 20
	outlierThresholdFactor = 100
	outlierFleetFactor     = 10
	outlierPercentile      = 90
)

// fleetKey is one counter on the ports of one role.
type fleetKey struct {
	role, counter string
}

// counterFleet holds, per role and physical counter, the values since the
// clear of every port read (sorted once the pass is over).
type counterFleet map[fleetKey][]uint64

func (fl counterFleet) add(r PortReading) {
	role := fleetRole(r.Port)
	if role == "" {
		return
	}
	for _, c := range r.Errors {
		if physicalCounters[c.Name] {
			k := fleetKey{role, c.Name}
			fl[k] = append(fl[k], c.Value)
		}
	}
}

func (fl counterFleet) sort() {
	for _, v := range fl {
		slices.Sort(v)
	}
}

// fleetRole is the role whose ports a port's counters are compared with:
// a host's port, a switch port cabled to a host, a switch port cabled to
// another switch; "" for the others (Aggregation Nodes, routers, switch
// ports without a link), which are not judged against a fleet.
func fleetRole(p *fabric.Port) string {
	switch {
	case p == nil || p.Node == nil || p.Num == 0 && p.Node.Type == mad.NodeSwitch:
		return ""
	case isHostNode(p.Node):
		return "host port"
	case p.Node.Type == mad.NodeSwitch && toHost(p):
		return "switch port to a host"
	case interSwitch(p):
		return "inter-switch port"
	}
	return ""
}

// outlierCandidate is a counter whose value since an unknown clear is
// judged against its fleet once every port was read.
type outlierCandidate struct {
	r *PortReading
	c CounterValue
}

// outlierCounter reports whether c can be an outlier at all: a physical
// counter below the top of its field (a full one is judged as such) and
// over its threshold's outlier floor.
func outlierCounter(t *Thresholds, c CounterValue) bool {
	thr, ok := t.Absolute[c.Name]
	return ok && physicalCounters[c.Name] && !fieldFull(c) && c.Value > outlierThresholdFactor*max(thr, 1)
}

// nearestRank is the q-th percentile of sorted vals (nearest rank).
func nearestRank(vals []uint64, q int) uint64 {
	i := (len(vals)*q + 99) / 100
	return vals[max(i, 1)-1]
}

// outlierFinding judges a physical counter's value since an unknown clear
// (reading r spanless, its increase within its threshold) against the
// same counter on the ports of its role in the same reading: far above
// its threshold and far above the fleet, a finding. Severity: a value
// that grew while sampled is a fault now, at its counter's own severity
// (error for receive errors); one that did not may be old, at the
// severity of a full field's history (warning).
func (s *Snapshot) outlierFinding(t *Thresholds, fleet counterFleet, r PortReading, c CounterValue) (Finding, bool) {
	p := r.Port
	role := fleetRole(p)
	vals := fleet[fleetKey{role, c.Name}]
	// A disabled port's receive errors and discards are packets dropped
	// toward it, not a cable's (dropsWithoutLink): no outlier.
	if role == "" || len(vals) < outlierMinPeers || dropsWithoutLink(p, c.Name) {
		return Finding{}, false
	}
	thr := max(t.Absolute[c.Name], 1)
	high := nearestRank(vals, outlierPercentile)
	floor := max(outlierThresholdFactor*thr, outlierFleetFactor*high)
	if c.Value <= floor {
		return Finding{}, false
	}
	f, ok := s.counterFinding(t, p, c, "absolute", c.Value, 0)
	if !ok {
		return Finding{}, false
	}
	f.Severity = fullFieldSeverity(c.Name)
	if c.DeltaUnknown == "" && c.Delta > 0 {
		f.Severity, _ = counterSeverity(c.Name)
	}
	f.Impact.Score = f.Impact.PathShare * counterWeight[f.Severity]
	zero := 0
	for _, v := range vals {
		if v == 0 {
			zero++
		}
	}
	f.Title = fmt.Sprintf("%s = %d on %s since the last clear, far above the other %ss (%dth percentile %d)", c.Name, c.Value, s.portName(p), role, outlierPercentile, high)
	f.Evidence = append(f.Evidence, Evidence{Name: "fleet", Value: float64(high),
		Text: fmt.Sprintf("%d of the %d %ss read 0, the %dth percentile is %d, the median %d: an outlier, judged when over %d (%d times the threshold and %d times the %dth percentile; with %d or more ports of the role)",
			zero, len(vals), role, outlierPercentile, high, nearestRank(vals, 50), floor, outlierThresholdFactor, outlierFleetFactor, outlierPercentile, outlierMinPeers)})
	s.sinceClearTail(&f, t, p, c, r.Errors)
	return f, true
}
