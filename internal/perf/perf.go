// Package perf sweeps PerfMgt counters across a discovered fabric: one
// ClassPortInfo per node's performance management agent (PMA), then
// PortCounters and, where the PMA has them, PortCountersExtended for every
// port with a link, many in flight through the transport engine. It reports
// values by IBA name in real units (octets for data), marks saturated
// counters, and with two samples computes deltas and rates: errors per
// second, bytes per second, utilization of the link rate, the share of
// time PortXmitWait says the port was stalled, and a bit error rate
// estimate. It can clear counters after reading, like ibqueryerrors -k/-K,
// when asked to explicitly.
//
// Addressing (IBA 16.1): a switch has one PMA, reached at the LID of its
// port 0, with PortSelect = the external port; a CA's PMA is reached at
// each port's own LID with PortSelect = that port.
package perf

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Getter is what the sweep needs of a transport; *transport.Engine
// implements it (and AsyncGetter).
type Getter interface {
	GetPerf(ctx context.Context, addr transport.Addr, a mad.Attribute, mod uint32) (*mad.GMP, error)
	SetPerf(ctx context.Context, addr transport.Addr, a mad.Attribute, mod uint32) (*mad.GMP, error)
}

// AsyncGetter is a Getter that can start a read without waiting for it;
// *transport.Engine implements it. The sweep hands its reads to GoPerf
// when the Getter has it, and otherwise calls GetPerf on a goroutine per
// read in flight.
type AsyncGetter interface {
	Getter
	// GoPerf starts what GetPerf does and returns. done is called once,
	// from any goroutine (possibly the caller's, before GoPerf returns),
	// with what GetPerf would have returned, a decoded first; when GoPerf
	// returns an error, done is never called.
	GoPerf(ctx context.Context, addr transport.Addr, a mad.Attribute, mod uint32, done func(*mad.GMP, error)) error
}

var _ AsyncGetter = (*transport.Engine)(nil)

// ResetMode says which counters to clear after reading.
type ResetMode int

// Reset modes.
const (
	// ResetNone clears nothing (the default).
	ResetNone ResetMode = iota
	// ResetErrors clears the error counters (CounterSelect bits 0..11)
	// and PortXmitWait where supported, like ibqueryerrors -k.
	ResetErrors
	// ResetAll also clears the data and packet counters (bits 12..15,
	// and PortCountersExtended's data/packet counters), like
	// ibqueryerrors -k -K.
	ResetAll
)

func (m ResetMode) String() string {
	switch m {
	case ResetNone:
		return "none"
	case ResetErrors:
		return "errors"
	case ResetAll:
		return "all"
	}
	return fmt.Sprintf("ResetMode(%d)", int(m))
}

// DefaultXmitWaitTick is the assumed duration of one PortXmitWait tick.
// The IBA leaves the tick to the implementation; 64 ns is the value the
// team's simulator uses and a common reading of NVIDIA devices. It only
// scales the "share of time stalled" figure.
const DefaultXmitWaitTick = 64 * time.Nanosecond

// DefaultWorkers is how many reads the sweep hands to the transport at
// once; the engine's own window (64 in flight, 2 per destination) is the
// real limit.
const DefaultWorkers = 64

// Options tune a counter sweep. The zero value reads one sample with
// ibqueryerrors' defaults (SL 0, P_Key index 0) and clears nothing.
type Options struct {
	// SL is the service level of PerfMgt MADs.
	SL uint8
	// PKeyIndex is the local P_Key table index PerfMgt MADs use.
	PKeyIndex uint16
	// Interval > 0 reads two samples this far apart and computes deltas
	// and rates.
	Interval time.Duration
	// Reset clears counters after the (last) read. It sends Sets, which
	// the engine refuses unless it was opened with AllowWrites: both are
	// needed, on purpose.
	Reset ResetMode
	// SkipCleanSwitches reads a switch's counters with one
	// PortSelect=0xFF query when its PMA advertises AllPortSelect, and
	// reads its ports one by one only when that sum shows an error. It is
	// exact for error counters (a sum of non-negative counters is zero
	// only when every one is zero, and a saturated sum is not zero), but
	// the skipped ports have no traffic counters. It applies only to a
	// single-sample sweep without Reset; otherwise it is ignored.
	SkipCleanSwitches bool
	// NoExtended does not read PortCountersExtended.
	NoExtended bool
	// Ports, if set, limits the read to these ports (of f's nodes): a
	// gate reads only what its job's routes cross. Ports without a link
	// are skipped as in a whole sweep; a switch port 0 is ignored (its
	// PMA is addressed at that LID anyway).
	Ports []*fabric.Port
	// ErrorsOnly reads what the error and wait counters need and no
	// more: PortCountersExtended only from PMAs whose extended attribute
	// carries the 64-bit error counters (IsAdditionalPortCounters-
	// ExtendedSupported), PortCounters elsewhere. Data and packet counters
	// then come from PortCounters (32 bits) where they are read at all.
	// One MAD per port instead of two on PMAs without the 64-bit error
	// counters (ibsim's, older HCAs).
	ErrorsOnly bool
	// Workers bounds the reads (and resets) in flight at once (default
	// DefaultWorkers). No more than the engine's per-destination window
	// (transport.Options.PerDest; 2 for a Getter that does not say) go to
	// one PMA at a time, so that the others fill the window.
	Workers int
	// XmitWaitTick is the PortXmitWait tick (default DefaultXmitWaitTick).
	XmitWaitTick time.Duration
	// Caps are PMAs' ClassPortInfo already read (a previous Sample's
	// Caps), by node GUID: Read does not ask those PMAs again, so a live
	// view that re-reads every few seconds spends its MADs on counters.
	Caps map[uint64]*mad.ClassPortInfo
	// Now and Sleep are the clock (tests pass a manual one). Sleep must
	// return ctx.Err() when ctx ends first.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

func (o Options) withDefaults() Options {
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.XmitWaitTick <= 0 {
		o.XmitWaitTick = DefaultXmitWaitTick
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = func(ctx context.Context, d time.Duration) error {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return o
}

// Key names a port: node GUID and port number.
type Key struct {
	GUID uint64
	Port uint8
}

func (k Key) String() string { return fmt.Sprintf("0x%016x/%d", k.GUID, k.Port) }

// Value is one counter of a port, by IBA name.
type Value struct {
	Name string
	// Value is in real units: octets for PortXmitData/PortRcvData, else
	// the count.
	Value uint64
	// Raw is the value as on the wire (4-octet words for data).
	Raw uint64
	// Bits is the width of the field it was read from (16 for
	// PortCounters' SymbolErrorCounter, 64 from PortCountersExtended).
	Bits int
	Kind mad.CounterKind
	// Saturated: the field stuck at all-ones; the true count is larger.
	Saturated bool
	// Source is the attribute it came from.
	Source mad.AttrID
}

// PortCounters is one port's counters from one sample.
type PortCounters struct {
	Key
	Port *fabric.Port
	// LID is the LID the PMA was addressed at.
	LID uint16
	// FromAllPorts is set when the port was not read itself: its
	// switch's PortSelect=0xFF sum had no errors (SkipCleanSwitches), so
	// every error counter is exactly 0. It has no traffic counters.
	FromAllPorts bool
	// ExtUnanswered: the port's PortCountersExtended went unanswered and
	// its counters were read from the 16/32-bit PortCounters instead
	// (the sample's Errors says so per PMA, PortError.ReadNarrow): the
	// port was read, narrower.
	ExtUnanswered bool
	// hasSent: sent is known (Sent is not zero).
	hasSent bool
	// at and sent are Time and Sent as offsets from *clock, the
	// sample's start: a sweep holds a record for every port (about
	// 200k at the LID limit), and two time.Time are 48 bytes of it.
	clock    *time.Time
	at, sent time.Duration
	// Caps is the PMA's ClassPortInfo.
	Caps *mad.ClassPortInfo
	// Basic is PortCounters as read (nil when not read); ext what is
	// kept of PortCountersExtended (nil when not read; Extended returns
	// it). They are the reading: Counters names their values.
	Basic *mad.PortCounters
	ext   *extFields
}

// extFields is PortCountersExtended as a reading keeps it: its data and
// packet counters, and its error counters and PortXmitWait (errs) only
// from a PMA that fills them in (IsAdditionalPortCountersExtended-
// Supported). A sweep holds every port's reading (49,152 on FatTree8k),
// and from the other PMAs (ibsim's, older HCAs) the whole attribute was
// 192 bytes where 72 hold what they give.
type extFields struct {
	data [8]uint64
	errs *[14]uint64
}

// keepExt is what a reading keeps of x; whole: the PMA fills in the
// error counters.
func keepExt(x *mad.PortCountersExtended, whole bool) *extFields {
	e := &extFields{data: [8]uint64{x.XmitDataWords, x.RcvDataWords, x.PortXmitPkts, x.PortRcvPkts,
		x.PortUnicastXmitPkts, x.PortUnicastRcvPkts, x.PortMulticastXmitPkts, x.PortMulticastRcvPkts}}
	if whole {
		e.errs = &[14]uint64{x.SymbolErrorCounter, x.LinkErrorRecoveryCounter, x.LinkDownedCounter, x.PortRcvErrors,
			x.PortRcvRemotePhysicalErrors, x.PortRcvSwitchRelayErrors, x.PortXmitDiscards, x.PortXmitConstraintErrors,
			x.PortRcvConstraintErrors, x.LocalLinkIntegrityErrors, x.ExcessiveBufferOverrunErrors, x.VL15Dropped,
			x.PortXmitWait, x.QP1Dropped}
	}
	return e
}

// into sets x to the attribute e keeps (the error counters a PMA does not
// fill in at zero).
func (e *extFields) into(x *mad.PortCountersExtended, port uint8) {
	d := &e.data
	*x = mad.PortCountersExtended{PortSelect: port, XmitDataWords: d[0], RcvDataWords: d[1], PortXmitPkts: d[2], PortRcvPkts: d[3],
		PortUnicastXmitPkts: d[4], PortUnicastRcvPkts: d[5], PortMulticastXmitPkts: d[6], PortMulticastRcvPkts: d[7]}
	if r := e.errs; r != nil {
		x.SymbolErrorCounter, x.LinkErrorRecoveryCounter, x.LinkDownedCounter, x.PortRcvErrors = r[0], r[1], r[2], r[3]
		x.PortRcvRemotePhysicalErrors, x.PortRcvSwitchRelayErrors, x.PortXmitDiscards, x.PortXmitConstraintErrors = r[4], r[5], r[6], r[7]
		x.PortRcvConstraintErrors, x.LocalLinkIntegrityErrors, x.ExcessiveBufferOverrunErrors, x.VL15Dropped = r[8], r[9], r[10], r[11]
		x.PortXmitWait, x.QP1Dropped = r[12], r[13]
	}
}

// Extended returns PortCountersExtended as read, nil when it was not.
func (p *PortCounters) Extended() *mad.PortCountersExtended {
	if p.ext == nil {
		return nil
	}
	x := new(mad.PortCountersExtended)
	p.ext.into(x, p.Key.Port)
	return x
}

// Time is when the reading arrived.
func (p *PortCounters) Time() time.Time {
	if p.clock == nil {
		return time.Time{}
	}
	return p.clock.Add(p.at)
}

// Sent is when the reading's first request was handed to the transport:
// the device read its counters between Sent and Time. It is zero when
// unknown, as for FromAllPorts.
func (p *PortCounters) Sent() time.Time {
	if !p.hasSent || p.clock == nil {
		return time.Time{}
	}
	return p.clock.Add(p.sent)
}

// stamp sets Time (at) and Sent (sent; zero when unknown) as offsets from
// clock, which must outlive p. A time.Time's monotonic reading survives
// the offset (Add keeps it), so Sub between two stamps is what it was
// between the times themselves.
func (p *PortCounters) stamp(clock *time.Time, at, sent time.Time) {
	p.clock = clock
	p.at = at.Sub(*clock)
	p.hasSent = !sent.IsZero()
	if p.hasSent {
		p.sent = sent.Sub(*clock)
	}
}

// Prior is what a live view keeps of a port's reading to compare the
// next with (Compare): when it started, and the error, wait and data
// counters as read, not the packet counters nor the reading's record
// and attributes. top keeps one per watched port (49,152 on FatTree8k).
type Prior struct {
	// from is the reading's start (PortCounters.start) as an offset
	// from the base Keep was given.
	from time.Duration
	caps *mad.ClassPortInfo
	// errs are PortCountersExtended's error counters and PortXmitWait
	// (extFields.errs), data its XmitDataWords and RcvDataWords.
	errs                       *[14]uint64
	data                       [2]uint64
	basic                      mad.PortCounters
	hasBasic, hasExt, allPorts bool
}

// Keep is what Compare needs of p to compare a later reading of its port
// with; base is a time before p and every reading kept with it (a view's
// start), which Compare is given again.
func (p *PortCounters) Keep(base time.Time) Prior {
	k := Prior{from: p.start().Sub(base), caps: p.Caps, allPorts: p.FromAllPorts}
	if p.Basic != nil {
		k.basic, k.hasBasic = *p.Basic, true
	}
	if p.ext != nil {
		k.errs, k.data, k.hasExt = p.ext.errs, [2]uint64{p.ext.data[0], p.ext.data[1]}, true
	}
	return k
}

// values is what PortCounters.values gives of the kept reading, in buf,
// without the packet counters.
func (k *Prior) values(buf *[maxValues]Value) []Value {
	if k.allPorts {
		return cleanValues(buf, k.caps)
	}
	var basic *mad.PortCounters
	if k.hasBasic {
		basic = &k.basic
	}
	var vs []Value
	if k.hasExt {
		e := extFields{data: [8]uint64{k.data[0], k.data[1]}, errs: k.errs}
		var x mad.PortCountersExtended
		e.into(&x, 0)
		vs = merge(buf, k.caps, basic, &x)
	} else {
		vs = merge(buf, k.caps, basic, nil)
	}
	return slices.DeleteFunc(vs, func(v Value) bool { return v.Kind == mad.KindPackets })
}

// maxValues bounds the counters of one port (22 from
// PortCountersExtended with every capability).
const maxValues = 32

// Counters returns the counters by IBA name: the error counters first
// (wire order), then QP1Dropped and PortXmitWait where valid, then data
// and packets. They are named from Basic and Ext on each call, not kept
// beside them: a sweep holds every port's reading, and the attributes
// as read are a fifth of the size of their values by name.
func (p *PortCounters) Counters() []Value {
	var buf [maxValues]Value
	if vs := p.values(&buf); len(vs) > 0 {
		return slices.Clone(vs)
	}
	return nil
}

// values is Counters in buf (no allocation).
func (p *PortCounters) values(buf *[maxValues]Value) []Value {
	if p.FromAllPorts {
		return cleanValues(buf, p.Caps)
	}
	if p.ext == nil {
		return merge(buf, p.Caps, p.Basic, nil)
	}
	var x mad.PortCountersExtended
	p.ext.into(&x, p.Key.Port)
	return merge(buf, p.Caps, p.Basic, &x)
}

// Get returns the counter called name.
func (p *PortCounters) Get(name string) (Value, bool) {
	var buf [maxValues]Value
	for _, v := range p.values(&buf) {
		if v.Name == name {
			return v, true
		}
	}
	return Value{}, false
}

// Errors returns the error counters (mad.KindError).
func (p *PortCounters) Errors() []Value {
	var buf [maxValues]Value
	var out []Value
	for _, v := range p.values(&buf) {
		if v.Kind == mad.KindError {
			out = append(out, v)
		}
	}
	return out
}

// Saturated returns the names of the saturated counters.
func (p *PortCounters) Saturated() []string {
	var buf [maxValues]Value
	var out []string
	for _, v := range p.values(&buf) {
		if v.Saturated {
			out = append(out, v.Name)
		}
	}
	return out
}

// PortError is a port (or a whole PMA, Port 0 on a CA meaning all its
// ports) that could not be read or reset.
type PortError struct {
	Key
	Port *fabric.Port // nil when the error concerns a node's PMA
	Node *fabric.Node
	LID  uint16
	// What was being done: "ClassPortInfo", "PortCounters",
	// "PortCountersExtended", "reset", "address".
	What string
	Err  error
	// ReadNarrow is, for What "PortCountersExtended", how many ports were
	// read from PortCounters instead: they were read (narrower), not lost.
	ReadNarrow int
	// Silent, when above zero, is how many ports of the node were not
	// read because its PMA stopped answering (the first few asked, the
	// rest not asked).
	Silent int
	// Agent: the failure is the node's PMA's, the same for each of its
	// ports failed with it (its ClassPortInfo, or the LID it is addressed
	// by): one thing not read, said once with the ports it covers
	// (diagnose.UnreachedCounters), while each port stays failed here
	// for the checks.
	Agent bool
	// BothSamples: the read failed alike in both samples of an
	// interval, and is this one entry (Err says so).
	BothSamples bool
}

func (e *PortError) Error() string {
	where := fmt.Sprintf("node 0x%016x", e.GUID)
	if e.Node != nil && e.Node.Description != "" {
		where = fmt.Sprintf("%q (0x%016x)", e.Node.Description, e.GUID)
	}
	if e.Port != nil {
		where += fmt.Sprintf(" port %d", e.Key.Port)
	}
	if e.LID != 0 {
		where += fmt.Sprintf(" at LID %d", e.LID)
	}
	return fmt.Sprintf("perf: %s %s: %v", e.What, where, e.Err)
}

func (e *PortError) Unwrap() error { return e.Err }

// Ports is how many ports e left unread: the ports of a silent PMA, else
// one.
func (e *PortError) Ports() int { return max(e.Silent, 1) }

// PortsNotRead is how many ports errs left unread.
func PortsNotRead(errs []*PortError) int {
	n := 0
	for _, e := range errs {
		n += e.Ports()
	}
	return n
}

// Sample is one read of the fabric's counters.
type Sample struct {
	// Started and Finished bracket the sweep.
	Started, Finished time.Time
	// Ports in fabric order (node order, then port number).
	Ports []*PortCounters
	// Errors lists what could not be read.
	Errors []*PortError
	// Caps holds each PMA's ClassPortInfo by node GUID.
	Caps map[uint64]*mad.ClassPortInfo

	// byKey indexes Ports, built on the first call to Port: check reads
	// Ports in order and never asks, and a map of every port is about
	// 40 bytes a port more at the LID limit.
	byKeyOnce sync.Once
	byKey     map[Key]*PortCounters
}

// Port returns the reading of one port (two nodes with the same GUID:
// the last in fabric order).
func (s *Sample) Port(k Key) (*PortCounters, bool) {
	s.byKeyOnce.Do(func() {
		s.byKey = make(map[Key]*PortCounters, len(s.Ports))
		for _, p := range s.Ports {
			s.byKey[p.Key] = p
		}
	})
	p, ok := s.byKey[k]
	return p, ok
}

// target is one PMA and the ports read through it.
type target struct {
	node  *fabric.Node
	lid   uint16
	ports []*fabric.Port
	// first is the sampler's slot of ports[0]; ports[i] is first+i.
	first int
	caps  *mad.ClassPortInfo
	clean bool // SkipCleanSwitches: the 0xFF sum showed no errors
	// answered: a PerfMgt Get of a port of t was answered (data or an
	// error status) in this sample.
	answered bool
	// unanswered lists, until t answers, its ports none of whose MADs
	// was answered; their errors are said per port, or as one line
	// when t went silent.
	unanswered []unansweredPort
	// silent: silentPorts ports went unanswered and none answered: the
	// PMA is taken as not answering, and its ports not yet asked are not
	// (each would cost the engine's every retry).
	silent  bool
	skipped []uint8
}

// unansweredPort is a port none of whose counter MADs was answered.
type unansweredPort struct {
	p   *fabric.Port
	err error
}

// silentPorts is how many of a PMA's ports must go wholly unanswered,
// with none answered, before its other ports are not asked in this
// sample: a hung PMA on a 64-port switch otherwise costs 64 ports x 2
// attributes x the retries.
const silentPorts = 2

// errSkipped completes the read of a port of a silent PMA without a MAD.
var errSkipped = errors.New("not asked: the PMA did not answer for its first ports")

// linkUp reports whether a port has a link worth reading: a CA port must
// be Active (its PMA is reached at its LID); a switch port only needs to be
// past Down (Init/Armed/Active), since its PMA answers at the switch LID.
// A switch port whose PortInfo went unanswered is read too when the far
// end of its cable is known: the PMA does not need the port's PortInfo,
// and its counters are the link's evidence.
func linkUp(n *fabric.Node, p *fabric.Port) bool {
	return LinkUp(n, p)
}

// LinkUp is linkUp for a caller choosing ports to read (top's scope): the
// ports a counter sweep reads, so the two never disagree on what is there.
func LinkUp(n *fabric.Node, p *fabric.Port) bool {
	if p == nil || p.Num == 0 {
		return false
	}
	if n.Type == mad.NodeSwitch {
		if !p.StateKnown() {
			return p.Remote != nil && p.Remote.StateKnown() && p.Remote.State >= mad.PortStateInit && p.Remote.State <= mad.PortStateActiveDefer
		}
		return p.State >= mad.PortStateInit && p.State <= mad.PortStateActiveDefer
	}
	return p.State == mad.PortStateActive
}

// notActive reports whether a CA port has a link and a LID that PerfMgt
// cannot use: physically up, logically Init or Armed (a link that came
// back with no SM sweeping). Without a LID no SM has run at all, which
// sm.no-master says; those ports are not listed one by one.
func notActive(n *fabric.Node, p *fabric.Port) bool {
	return n.Type != mad.NodeSwitch && p != nil && p.Num != 0 && p.LID != 0 && p.PhysState == mad.PhysLinkUp &&
		(p.State == mad.PortStateInit || p.State == mad.PortStateArmed)
}

// scopeNodes returns the nodes to read, in fabric order when only is nil,
// else in the order only first names them, and which of their ports to
// read (nil: all).
func scopeNodes(f *fabric.Fabric, only []*fabric.Port) ([]*fabric.Node, map[*fabric.Port]bool) {
	if only == nil {
		return f.Nodes, nil
	}
	var nodes []*fabric.Node
	want := make(map[*fabric.Port]bool, len(only))
	seen := map[*fabric.Node]bool{}
	for _, p := range only {
		if p == nil || p.Node == nil {
			continue
		}
		want[p] = true
		if !seen[p.Node] {
			seen[p.Node] = true
			nodes = append(nodes, p.Node)
		}
	}
	return nodes, want
}

// targets lists the PMAs to read, and the ports that cannot be addressed:
// without a LID, or with one another port also owns (f.LIDShared), whose
// answer could be the other owner's counters filed under this port.
func targets(f *fabric.Fabric, nodes []*fabric.Node, want map[*fabric.Port]bool) ([]*target, []*PortError) {
	var ts []*target
	var errs []*PortError
	for _, n := range nodes {
		if n == nil {
			continue
		}
		if n.Type == mad.NodeSwitch {
			t := &target{node: n}
			for _, p := range n.Ports {
				if linkUp(n, p) && (want == nil || want[p]) {
					t.ports = append(t.ports, p)
				}
			}
			if len(t.ports) == 0 {
				continue
			}
			if len(n.Ports) > 0 && n.Ports[0] != nil {
				t.lid = n.Ports[0].LID
			}
			if t.lid == 0 || t.lid >= 0xc000 {
				for _, p := range t.ports {
					errs = append(errs, &PortError{Key: Key{n.GUID, p.Num}, Port: p, Node: n, What: fabric.WhatNoLID,
						Err: errors.New("the switch has no unicast LID for its PMA (port 0 not read or no SM has assigned LIDs)")})
				}
				continue
			}
			if why := f.LIDShared(n.Ports[0]); why != "" {
				for _, p := range t.ports {
					errs = append(errs, &PortError{Key: Key{n.GUID, p.Num}, Port: p, Node: n, LID: t.lid, What: "PortCounters", Err: errors.New(why), Agent: true})
				}
				continue
			}
			ts = append(ts, t)
			continue
		}
		for _, p := range n.Ports {
			if want != nil && !want[p] {
				continue
			}
			if notActive(n, p) {
				// Its link is up and it has a LID, but LID-routed MADs
				// do not cross a port that is not Active: not read,
				// said (trial A13: skipped in silence, the counters
				// claimed complete while its errors went unread).
				errs = append(errs, &PortError{Key: Key{n.GUID, p.Num}, Port: p, Node: n, LID: p.LID, What: "PortCounters",
					Err: fmt.Errorf("port is %s: PerfMgt cannot reach it (its link is up but not Active: no subnet manager has activated it since it came up)", p.State)})
				continue
			}
			if !linkUp(n, p) {
				continue
			}
			if p.LID == 0 || p.LID >= 0xc000 {
				errs = append(errs, &PortError{Key: Key{n.GUID, p.Num}, Port: p, Node: n, What: fabric.WhatNoLID,
					Err: errors.New("the port has no unicast LID (no SM has assigned one)")})
				continue
			}
			if why := f.LIDShared(p); why != "" {
				errs = append(errs, &PortError{Key: Key{n.GUID, p.Num}, Port: p, Node: n, LID: p.LID, What: "PortCounters", Err: errors.New(why)})
				continue
			}
			ts = append(ts, &target{node: n, lid: p.LID, ports: []*fabric.Port{p}})
		}
	}
	return ts, errs
}

// Read takes one sample of every port with a link in f. Ports and PMAs
// that cannot be read are listed in Sample.Errors; the error is non-nil
// only when ctx ended.
func Read(ctx context.Context, g Getter, f *fabric.Fabric, o Options) (*Sample, error) {
	o = o.withDefaults()
	return read(ctx, g, f, o, o.SkipCleanSwitches && o.Interval <= 0 && o.Reset == ResetNone)
}

// capsCache lets a second sample reuse the ClassPortInfo of the first.
type capsCache map[uint64]*mad.ClassPortInfo

func read(ctx context.Context, g Getter, f *fabric.Fabric, o Options, skipClean bool) (*Sample, error) {
	return readWith(ctx, g, f, o, skipClean, o.Caps)
}

// sampler is one sample being read: its state is guarded by the
// scheduler's lock (completions run under it).
type sampler struct {
	sc        *sched
	g         Getter
	o         Options
	skipClean bool
	s         *Sample
	// recs holds a record per port of every target, in the targets'
	// order, which is fabric order: one allocation and no map for the
	// ~200k ports of a fabric at the LID limit. A slot is filled when
	// its clock is set.
	recs []PortCounters
	errs []*PortError
	// narrow lists, per PMA, the ports whose PortCountersExtended went
	// unanswered and whose PortCounters were read instead: a fallback
	// the sample must say (Errors), not take in silence.
	narrow map[*target][]narrowRead
	// cpis holds each distinct ClassPortInfo answered once: the PMAs of
	// one kind of device answer the same, and every PMA's own copy was
	// 96 bytes a node held with the sample (9,472 nodes on FatTree8k).
	cpis map[mad.ClassPortInfo]*mad.ClassPortInfo
}

// narrowRead is one port read from PortCounters because its
// PortCountersExtended failed.
type narrowRead struct {
	num uint8
	err error
}

func readWith(ctx context.Context, g Getter, f *fabric.Fabric, o Options, skipClean bool, known capsCache) (*Sample, error) {
	s := &Sample{Started: o.Now(), Caps: map[uint64]*mad.ClassPortInfo{}}
	nodes, want := scopeNodes(f, o.Ports)
	ts, addrErrs := targets(f, nodes, want)
	n := 0
	for _, t := range ts {
		t.first = n
		n += len(t.ports)
	}
	sp := &sampler{sc: newSched(ctx, g, o), g: g, o: o, skipClean: skipClean, s: s, recs: make([]PortCounters, n), errs: addrErrs}

	// ClassPortInfo: once per node (a CA's first readable port's LID);
	// each node's targets start as soon as it answers.
	byNode := map[*fabric.Node][]*target{}
	var order []*fabric.Node
	for _, t := range ts {
		if _, ok := byNode[t.node]; !ok {
			order = append(order, t.node)
		}
		byNode[t.node] = append(byNode[t.node], t)
	}
	sp.sc.mu.Lock()
	for _, n := range order {
		nts := byNode[n]
		if c, ok := known[n.GUID]; ok {
			s.Caps[n.GUID] = c
			for _, t := range nts {
				sp.startLocked(t, c)
			}
			continue
		}
		sp.sc.addLocked(sp.cpiJob(nts))
	}
	sp.sc.mu.Unlock()
	sp.sc.run()

	s.Finished = o.Now()
	s.Errors = append(sp.errs, sp.narrowErrors(ts)...)
	s.Errors = append(s.Errors, sp.silentErrors(ts)...)
	// The targets list each node's ports in order, nodes in fabric
	// order, so the slots are in fabric order already.
	read := 0
	for i := range sp.recs {
		if sp.recs[i].clock != nil {
			read++
		}
	}
	s.Ports = make([]*PortCounters, 0, read)
	for i := range sp.recs {
		if sp.recs[i].clock != nil {
			s.Ports = append(s.Ports, &sp.recs[i])
		}
	}
	sortErrors(s.Errors)
	return s, ctx.Err()
}

func (sp *sampler) addr(lid uint16) transport.Addr {
	return transport.PerfAt(lid, sp.o.SL, sp.o.PKeyIndex)
}

func (sp *sampler) fail(e *PortError) { sp.errs = append(sp.errs, e) }

// cpiJob reads the ClassPortInfo of the node of ts at the first target's
// LID, then starts every target (or fails all their ports).
func (sp *sampler) cpiJob(ts []*target) *job {
	t0 := ts[0]
	c := new(mad.ClassPortInfo)
	j := &job{}
	j.ops = []*op{{j: j, send: sp.sc.get(sp.addr(t0.lid), c), done: func(err error) {
		if err == nil && c.Redirected() {
			err = fmt.Errorf("the PMA redirects to LID %d QP %d; ibdoctor does not follow PerfMgt redirects", c.RedirectLID, c.RedirectQP)
		}
		if err == nil {
			if same, ok := sp.cpis[*c]; ok {
				c = same
			} else {
				if sp.cpis == nil {
					sp.cpis = map[mad.ClassPortInfo]*mad.ClassPortInfo{}
				}
				sp.cpis[*c] = c
			}
		}
		for _, t := range ts {
			if err != nil {
				for _, p := range t.ports {
					sp.fail(&PortError{Key: Key{t.node.GUID, p.Num}, Port: p, Node: t.node, LID: t.lid, What: "ClassPortInfo", Err: err, Agent: true})
				}
				continue
			}
			sp.s.Caps[t.node.GUID] = c
			sp.startLocked(t, c)
		}
	}}}
	return j
}

// startLocked reads target t whose PMA has caps c: with the AllPortSelect
// shortcut first when it applies, else port by port.
func (sp *sampler) startLocked(t *target, c *mad.ClassPortInfo) {
	t.caps = c
	if sp.skipClean && t.node.Type == mad.NodeSwitch && c.AllPortSelect() {
		sp.sc.addLocked(sp.allPortsJob(t))
		return
	}
	sp.sc.addLocked(sp.portsJob(t))
}

// allPortsJob reads the PortSelect=0xFF sum of switch t: a sum with no
// error or wait counts stands for every port; otherwise (or when it
// cannot be read) the ports are read one by one.
func (sp *sampler) allPortsJob(t *target) *job {
	pc := &mad.PortCounters{PortSelect: mad.PortSelectAll}
	j := &job{}
	j.ops = []*op{{j: j, send: sp.sc.get(sp.addr(t.lid), pc), done: func(err error) {
		if err == nil {
			var buf [maxValues]mad.Counter
			for _, c := range pc.AppendCounters(buf[:0], t.caps) {
				if (c.Kind == mad.KindError || c.Kind == mad.KindWait) && c.Value != 0 {
					err = errNotClean
					break
				}
			}
		}
		if err != nil {
			sp.sc.addLocked(sp.portsJob(t))
			return
		}
		t.clean = true
		now := sp.o.Now()
		for i, p := range t.ports {
			pc := &sp.recs[t.first+i]
			*pc = PortCounters{Key: Key{t.node.GUID, p.Num}, Port: p, LID: t.lid, Caps: t.caps, FromAllPorts: true}
			pc.stamp(&sp.s.Started, now, time.Time{})
		}
	}}}
	return j
}

var errNotClean = errors.New("the sum shows errors")

// portRead is one port being read: PortCountersExtended first where the
// PMA has it, PortCounters only for what the extended attribute does not
// cover (everything, when the PMA lacks the 64-bit error counters).
type portRead struct {
	t    *target
	p    *fabric.Port
	slot int // in sampler.recs
	sent int // MADs sent for it
	// firstSent is when the first of them was handed to the transport.
	firstSent time.Time
	left      int // MADs not yet completed
	ext       *mad.PortCountersExtended
	extErr    error
	basic     *mad.PortCounters
	bErr      error
}

// portsJob reads every port of t. When PortCounters is needed whatever
// PortCountersExtended answers, both go at once; when it is needed only
// if the extended read fails, it follows that failure. A port's MADs are
// made when the job comes to it.
func (sp *sampler) portsJob(t *target) *job {
	o := sp.o
	sup := t.caps.Extended()
	wantExt := !o.NoExtended && sup.Any() && (!o.ErrorsOnly || sup.Errors)
	basicAlways := !wantExt || !sup.Errors || (!sup.Data && !o.ErrorsOnly)
	a := sp.addr(t.lid)
	j := &job{left: len(t.ports)}
	i := 0
	j.gen = func() {
		p := t.ports[i]
		pr := &portRead{t: t, p: p, slot: t.first + i}
		i++
		if t.silent {
			pr.left++
			j.ops = append(j.ops, &op{j: j, port: pr, send: func(done func(error)) { done(errSkipped) }, done: func(err error) {
				pr.bErr = err
				sp.portDone(pr)
			}})
			return
		}
		if wantExt {
			x := &mad.PortCountersExtended{PortSelect: p.Num}
			pr.left++
			j.ops = append(j.ops, &op{j: j, port: pr, send: sp.sc.get(a, x), done: func(err error) {
				if err != nil {
					pr.extErr = err
					if !basicAlways {
						pr.left++
						j.pushFront(sp.basicOp(j, pr, a))
					}
				} else {
					pr.ext = x
				}
				sp.portDone(pr)
			}})
		}
		if basicAlways {
			pr.left++
			j.ops = append(j.ops, sp.basicOp(j, pr, a))
		}
	}
	return j
}

func (sp *sampler) basicOp(j *job, pr *portRead, a transport.Addr) *op {
	b := &mad.PortCounters{PortSelect: pr.p.Num}
	return &op{j: j, port: pr, send: sp.sc.get(a, b), done: func(err error) {
		if err != nil {
			pr.bErr = err
		} else {
			pr.basic = b
		}
		sp.portDone(pr)
	}}
}

// portDone records port pr once its last MAD has completed.
func (sp *sampler) portDone(pr *portRead) {
	pr.left--
	if pr.left > 0 {
		return
	}
	t, p := pr.t, pr.p
	k := Key{t.node.GUID, p.Num}
	if pr.bErr == errSkipped {
		t.skipped = append(t.skipped, p.Num)
		return
	}
	noAnswer := pr.bErr != nil && unanswered(pr.bErr) && (pr.extErr == nil || unanswered(pr.extErr))
	if !noAnswer {
		t.answered = true
	}
	if pr.bErr != nil {
		err := pr.bErr
		if noAnswer && pr.extErr != nil {
			// Both timeouts say the same: said once.
			err = fmt.Errorf("%w; PortCountersExtended unanswered too", err)
		} else if pr.extErr != nil {
			err = fmt.Errorf("%w (PortCountersExtended: %v)", err, pr.extErr)
		}
		if noAnswer && !t.answered {
			t.unanswered = append(t.unanswered, unansweredPort{p, err})
			if len(t.unanswered) >= silentPorts {
				t.silent = true
			}
			return
		}
		sp.fail(&PortError{Key: k, Port: p, Node: t.node, LID: t.lid, What: "PortCounters", Err: err})
		return
	}
	// A PMA that answers PortCountersExtended with an error status has
	// said it does not give them: PortCounters is then its reading. Only
	// an unanswered one leaves counters unread.
	var status *transport.StatusError
	if pr.extErr != nil && !errors.As(pr.extErr, &status) {
		if sp.narrow == nil {
			sp.narrow = map[*target][]narrowRead{}
		}
		sp.narrow[t] = append(sp.narrow[t], narrowRead{p.Num, pr.extErr})
	}
	pc := &sp.recs[pr.slot]
	*pc = PortCounters{Key: k, Port: p, LID: t.lid, Caps: t.caps, Basic: pr.basic,
		ExtUnanswered: pr.extErr != nil && !errors.As(pr.extErr, &status)}
	if pr.ext != nil {
		pc.ext = keepExt(pr.ext, t.caps.Extended().Errors)
	}
	pc.stamp(&sp.s.Started, sp.o.Now(), pr.firstSent)
}

// unanswered reports whether err is a MAD that got no answer: timed out,
// or not sent because its destination went silent (Engine.SkipSilent).
func unanswered(err error) bool {
	var silent *transport.SilentError
	return errors.Is(err, transport.ErrTimeout) || errors.As(err, &silent)
}

// silentErrors says the ports left unanswered before their PMA answered
// anything: per port while it might still have (a few lost MADs), as one
// entry naming every port not read when it went silent.
func (sp *sampler) silentErrors(ts []*target) []*PortError {
	var out []*PortError
	for _, t := range ts {
		if len(t.unanswered) == 0 {
			continue
		}
		if !t.silent {
			for _, u := range t.unanswered {
				out = append(out, &PortError{Key: Key{t.node.GUID, u.p.Num}, Port: u.p, Node: t.node, LID: t.lid, What: "PortCounters", Err: u.err})
			}
			continue
		}
		nums := make([]int, 0, len(t.unanswered)+len(t.skipped))
		for _, u := range t.unanswered {
			nums = append(nums, int(u.p.Num))
		}
		asked := numRanges(nums)
		for _, n := range t.skipped {
			nums = append(nums, int(n))
		}
		slices.Sort(nums)
		err := fmt.Errorf("the PMA did not answer (%d %s not read: %s): no answer for %d %s asked (%s; %v), the others were not asked",
			len(nums), plural(len(nums), "port"), numRanges(nums), len(t.unanswered), plural(len(t.unanswered), "port"), asked, t.unanswered[0].err)
		out = append(out, &PortError{Key: Key{t.node.GUID, 0}, Node: t.node, LID: t.lid, What: "PortCounters", Err: err, Silent: len(nums)})
	}
	return out
}

// narrowErrors makes one entry per PMA whose PortCountersExtended went
// unanswered for ports then read from PortCounters: their 16/32-bit
// fields saturate sooner, and the report must say which counters it
// judged.
func (sp *sampler) narrowErrors(ts []*target) []*PortError {
	var out []*PortError
	for _, t := range ts {
		rs := sp.narrow[t]
		if len(rs) == 0 {
			continue
		}
		nums := make([]int, len(rs))
		for i, r := range rs {
			nums[i] = int(r.num)
		}
		slices.Sort(nums)
		err := fmt.Errorf("%w; the 16/32-bit PortCounters of %s %s were read instead", rs[0].err, plural(len(nums), "port"), numRanges(nums))
		out = append(out, &PortError{Key: Key{t.node.GUID, 0}, Node: t.node, LID: t.lid, What: "PortCountersExtended", Err: err, ReadNarrow: len(nums)})
	}
	return out
}

func plural(n int, what string) string {
	if n == 1 {
		return what
	}
	return what + "s"
}

// numRanges writes sorted numbers as ranges: "1-4,7".
func numRanges(nums []int) string {
	var b []byte
	for i := 0; i < len(nums); {
		j := i
		for j+1 < len(nums) && nums[j+1] == nums[j]+1 {
			j++
		}
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, "%d", nums[i])
		if j > i {
			b = fmt.Appendf(b, "-%d", nums[j])
		}
		i = j + 1
	}
	return string(b)
}

func sortErrors(errs []*PortError) {
	sort.SliceStable(errs, func(i, j int) bool {
		if errs[i].GUID != errs[j].GUID {
			return errs[i].GUID < errs[j].GUID
		}
		return errs[i].Key.Port < errs[j].Key.Port
	})
}

// cleanValues is the error and wait counters of a port on a clean switch,
// in buf: all zero, as the PortSelect=0xFF sum showed.
func cleanValues(buf *[maxValues]Value, caps *mad.ClassPortInfo) []Value {
	var zero mad.PortCounters
	var cbuf [maxValues]mad.Counter
	vals := buf[:0]
	for _, c := range zero.AppendCounters(cbuf[:0], caps) {
		if c.Kind == mad.KindError || c.Kind == mad.KindWait {
			vals = append(vals, value(c, mad.AttrPortCounters))
		}
	}
	return vals
}

func value(c mad.Counter, src mad.AttrID) Value {
	return Value{Name: c.Name, Value: c.Octets(), Raw: c.Value, Bits: c.Bits, Kind: c.Kind, Saturated: c.Saturated(), Source: src}
}

// merge picks each counter from the widest valid source, in buf: the
// 64-bit PortCountersExtended fields where ClassPortInfo says they are
// filled in, else PortCounters.
func merge(buf *[maxValues]Value, caps *mad.ClassPortInfo, basic *mad.PortCounters, ext *mad.PortCountersExtended) []Value {
	sup := caps.Extended()
	extErrors := ext != nil && sup.Errors
	extData := ext != nil && sup.Data
	var bbuf, xbuf [maxValues]mad.Counter
	var bc []mad.Counter
	if basic != nil && (!extErrors || !extData) {
		bc = basic.AppendCounters(bbuf[:0], caps)
	}
	out := buf[:0]
	if extErrors {
		for _, c := range ext.AppendErrors(xbuf[:0]) {
			out = append(out, value(c, mad.AttrPortCountersExtended))
		}
		out = append(out, value(mad.Counter{Name: "PortXmitWait", Value: ext.PortXmitWait, Bits: 64, Kind: mad.KindWait}, mad.AttrPortCountersExtended))
	} else {
		for _, c := range bc {
			if c.Kind == mad.KindError || c.Kind == mad.KindWait {
				out = append(out, value(c, mad.AttrPortCounters))
			}
		}
	}
	if extData {
		for _, c := range ext.AppendCounters(xbuf[:0], caps) {
			if c.Kind == mad.KindDataWords || c.Kind == mad.KindPackets {
				out = append(out, value(c, mad.AttrPortCountersExtended))
			}
		}
	} else {
		for _, c := range bc {
			if c.Kind == mad.KindDataWords || c.Kind == mad.KindPackets {
				out = append(out, value(c, mad.AttrPortCounters))
			}
		}
	}
	return out
}
