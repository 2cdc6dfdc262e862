package checks

import (
	"strings"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// The exported forms of the role inference the checks use, so renderings
// (the HTML drawing) place nodes exactly where the checks think they are
// instead of inferring roles a second way.

// IsHost reports whether n is a compute host's adapter: a CA not built into
// a switch (SHARP Aggregation Nodes and management HCAs are not hosts).
func IsHost(n *fabric.Node) bool { return isHostNode(n) }

// HostOf names the host a host adapter belongs to: the first word of a
// "HOST DEVICE" description (gpu042 for "gpu042 mlx5_3"), as
// topology.missing-hca groups adapters, an FQDN's first label naming the
// host (fabric.HostName); "" when the description names no
// host (a firmware default, a single word) or n is no host adapter.
func HostOf(n *fabric.Node) string {
	if !isHostNode(n) {
		return ""
	}
	host, _, _ := hostOfDesc(n.Description)
	return host
}

// hostOfDesc is HostOf's reading of a host adapter's description: its
// host and device; ok false when it names no host.
func hostOfDesc(desc string) (host, dev string, ok bool) {
	if isFirmwareDefault(desc) {
		return "", "", false
	}
	if host, dev, ok := twoWords(desc); ok {
		return fabric.HostName(host), dev, true
	}
	return "", "", false
}

// twoWords returns the two words of s when it has exactly two (as
// strings.Fields splits it): a host adapter's "host device". It makes no
// slice: it runs for every CA in several checks.
func twoWords(s string) (first, second string, ok bool) {
	n := 0
	for w := range strings.FieldsSeq(s) {
		switch n {
		case 0:
			first = w
		case 1:
			second = w
		default:
			return "", "", false
		}
		n++
	}
	if n != 2 {
		return "", "", false
	}
	return first, second, true
}

// IsAggregationNode reports whether n is a SHARP Aggregation Node or
// another CA built into a switch.
func IsAggregationNode(n *fabric.Node) bool { return isAggregationNode(n) }

// LinkUp reports whether p carries a trained link (the checks' definition).
func LinkUp(p *fabric.Port) bool { return linkUp(p) }

// InterSwitch reports whether p is cabled to another switch (a loopback
// cable is not).
func InterSwitch(p *fabric.Port) bool { return interSwitch(p) }

// SwitchTiers returns every switch's tier as the checks see it: 0 for a
// leaf (a switch with a host cabled to it), otherwise the fewest
// inter-switch hops to a leaf (1 spine, 2 core, ...), over links the
// checks count as inter-switch whatever their state. A switch no leaf can
// be reached from is -1.
func SwitchTiers(f *fabric.Fabric) map[*fabric.Node]int {
	tier := make(map[*fabric.Node]int)
	var q []*fabric.Node
	for _, n := range f.Nodes {
		if n.Type != mad.NodeSwitch {
			continue
		}
		if hostPorts(n) > 0 {
			tier[n] = 0
			q = append(q, n)
		} else {
			tier[n] = -1
		}
	}
	for len(q) > 0 {
		n := q[0]
		q = q[1:]
		for _, p := range n.Ports {
			if p == nil || p.Num == 0 || !interSwitch(p) {
				continue
			}
			r := p.Remote.Node
			if t, ok := tier[r]; ok && t < 0 {
				tier[r] = tier[n] + 1
				q = append(q, r)
			}
		}
	}
	return tier
}

// Utilization is the share of the port's active rate it sent over the
// interval (counters.utilization's measure); false without an interval or
// a rate.
func (r PortReading) Utilization(interval float64) (float64, bool) {
	interval = r.span(interval)
	if r.Port == nil || interval <= 0 || r.DataUnknown != "" {
		return 0, false
	}
	rate := portRate(r.Port).BytesPerSecond()
	if rate <= 0 {
		return 0, false
	}
	return float64(r.XmitBytes) / (rate * interval), true
}

// portRate is the rate p's link runs at: p's own, or when p's PortInfo
// went unanswered, the far end's (one link, one rate).
func portRate(p *fabric.Port) mad.Rate {
	if rateFromFarEnd(p) {
		return p.Remote.Rate()
	}
	return p.Rate()
}

// rateFromFarEnd: p's PortInfo was not read, so its link's rate is the
// far end's (portRate), which the evidence must say.
func rateFromFarEnd(p *fabric.Port) bool {
	return !p.StateKnown() && p.Remote != nil && p.Remote.StateKnown()
}

// Stalled is the share of the interval the port waited to send
// (counters.congestion's measure: PortXmitWait's increase over what it
// would count stalled all the time); false without an interval or
// PortXmitWait.
func (r PortReading) Stalled(interval float64) (float64, bool) {
	if r.XmitWait == nil || r.XmitWait.DeltaUnknown != "" {
		return 0, false
	}
	return stalledShare(r.XmitWait.Delta, r.XmitWaitTicksPerSecond, r.span(interval))
}

// stalledShare is the share of seconds a port waited to send, from the
// ticks PortXmitWait counted over them at perSecond ticks a second when
// stalled all the time: over an interval (Stalled) or since the previous
// sweep (counters.congestion's stalledFinding).
func stalledShare(ticks uint64, perSecond, seconds float64) (float64, bool) {
	if seconds <= 0 || perSecond <= 0 {
		return 0, false
	}
	return float64(ticks) / (perSecond * seconds), true
}

// span is the seconds the port's deltas cover: its own Elapsed when
// known, else the sweep's interval.
func (r PortReading) span(interval float64) float64 {
	if r.Elapsed > 0 && interval > 0 {
		return r.Elapsed.Seconds()
	}
	return interval
}

// SpanOf is the time the port's deltas cover, given the sweep's
// interval: its own Elapsed when known.
func (r PortReading) SpanOf(interval time.Duration) time.Duration {
	if r.Elapsed > 0 && interval > 0 {
		return r.Elapsed
	}
	return interval
}
