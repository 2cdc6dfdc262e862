package sim

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// ctrID names one performance counter of a port. The underlying value is
// 64 bits wide; PortCounters shows it through its narrower field, sticky
// at all-ones once it no longer fits (IBA 16.1.3.5).
type ctrID uint8

const (
	ctrSymbolError ctrID = iota
	ctrLinkErrorRecovery
	ctrLinkDowned
	ctrRcvErrors
	ctrRcvRemotePhysErrors
	ctrRcvSwitchRelayErrors
	ctrXmitDiscards
	ctrXmitConstraintErrors
	ctrRcvConstraintErrors
	ctrLocalLinkIntegrityErrors
	ctrExcessiveBufferOverrunErrors
	ctrVL15Dropped
	ctrXmitData // 4-octet units
	ctrRcvData
	ctrXmitPkts
	ctrRcvPkts
	ctrXmitWait
	ctrQP1Dropped
	ctrUnicastXmitPkts
	ctrUnicastRcvPkts
	ctrMulticastXmitPkts
	ctrMulticastRcvPkts
	numCtrs
)

// ctrInfo is a counter's name and its width in PortCounters (0: not
// there, only in PortCountersExtended).
var ctrInfo = [numCtrs]struct {
	name  string
	width uint8
}{
	ctrSymbolError:                  {"SymbolErrorCounter", 16},
	ctrLinkErrorRecovery:            {"LinkErrorRecoveryCounter", 8},
	ctrLinkDowned:                   {"LinkDownedCounter", 8},
	ctrRcvErrors:                    {"PortRcvErrors", 16},
	ctrRcvRemotePhysErrors:          {"PortRcvRemotePhysicalErrors", 16},
	ctrRcvSwitchRelayErrors:         {"PortRcvSwitchRelayErrors", 16},
	ctrXmitDiscards:                 {"PortXmitDiscards", 16},
	ctrXmitConstraintErrors:         {"PortXmitConstraintErrors", 8},
	ctrRcvConstraintErrors:          {"PortRcvConstraintErrors", 8},
	ctrLocalLinkIntegrityErrors:     {"LocalLinkIntegrityErrors", 4},
	ctrExcessiveBufferOverrunErrors: {"ExcessiveBufferOverrunErrors", 4},
	ctrVL15Dropped:                  {"VL15Dropped", 16},
	ctrXmitData:                     {"PortXmitData", 32},
	ctrRcvData:                      {"PortRcvData", 32},
	ctrXmitPkts:                     {"PortXmitPkts", 32},
	ctrRcvPkts:                      {"PortRcvPkts", 32},
	ctrXmitWait:                     {"PortXmitWait", 32},
	ctrQP1Dropped:                   {"QP1Dropped", 16},
	ctrUnicastXmitPkts:              {"PortUnicastXmitPkts", 0},
	ctrUnicastRcvPkts:               {"PortUnicastRcvPkts", 0},
	ctrMulticastXmitPkts:            {"PortMulticastXmitPkts", 0},
	ctrMulticastRcvPkts:             {"PortMulticastRcvPkts", 0},
}

// counterByName finds a counter by its IBA name (case-insensitive; the
// "Port" prefix and "Counter" suffix may be left out).
func counterByName(name string) (ctrID, error) {
	norm := func(s string) string {
		s = strings.ToLower(s)
		s = strings.TrimPrefix(s, "port")
		return strings.TrimSuffix(s, "counter")
	}
	want := norm(name)
	for i, c := range ctrInfo {
		if norm(c.name) == want {
			return ctrID(i), nil
		}
	}
	names := make([]string, 0, numCtrs)
	for _, c := range ctrInfo {
		names = append(names, c.name)
	}
	return 0, fmt.Errorf("sim: unknown counter %q (one of %s)", name, strings.Join(names, ", "))
}

// counters are a port's counters as linear functions of time: at t0 each
// counter held val, and since then grows by rate per second (a fault's
// own rate plus the traffic model's). Reads compute the value at the
// current time; nothing ticks.
type counters struct {
	t0        int64 // clock, ns since the Sim's epoch
	val       [numCtrs]float64
	faultRate [numCtrs]float64
	trafRate  [numCtrs]float64
}

func (c *counters) rate(id ctrID) float64 {
	return c.faultRate[id] + c.trafRate[id]
}

// value returns counter id at time t (ns since epoch), as a 64-bit
// counter (sticky at all-ones).
func (c *counters) value(id ctrID, t int64) uint64 {
	if c == nil {
		return 0
	}
	v := c.val[id]
	if r := c.rate(id); r != 0 && t > c.t0 {
		v += r * float64(t-c.t0) / 1e9
	}
	if v <= 0 {
		return 0
	}
	if v >= math.MaxUint64 {
		return math.MaxUint64
	}
	return uint64(v)
}

// fold makes t the new t0, so that rates can change from t on.
func (c *counters) fold(t int64) {
	if t <= c.t0 {
		return
	}
	dt := float64(t-c.t0) / 1e9
	for i := range c.val {
		if r := c.rate(ctrID(i)); r != 0 {
			c.val[i] += r * dt
		}
	}
	c.t0 = t
}

// narrow shows a 64-bit counter through a field of width bits, sticky at
// all-ones.
func narrow(v uint64, width uint8) uint64 {
	if width >= 64 {
		return v
	}
	if m := uint64(1)<<width - 1; v > m {
		return m
	}
	return v
}

// ticks converts a time to the Sim's counter time base.
func (s *Sim) ticks(t time.Time) int64 { return t.Sub(s.epoch).Nanoseconds() }

// ctrs returns port pi's counters, creating them (folded to now). Callers
// hold s.mu for writing.
func (s *Sim) ctrs(ni int32, pi uint8, now int64) *counters {
	p := &s.nodes[ni].ports[pi]
	if p.ctr == nil {
		p.ctr = &counters{t0: now}
	}
	p.ctr.fold(now)
	return p.ctr
}
