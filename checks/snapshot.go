package checks

import (
	"slices"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Snapshot is everything the checks read. Only Fabric is required; a check
// whose inputs are missing (no counters read, no LFTs) stays silent and the
// report says what was not looked at.
type Snapshot struct {
	Fabric *fabric.Fabric
	// Baseline is the expected topology (a designed fabric or a saved
	// snapshot) for topology.changed / topology.miswired and link.down of
	// links that disappeared, made with BaselineOf. Optional.
	Baseline *Baseline
	// BaselineDesigned says Baseline is the operator's plan
	// (--expect-topology), not the state dir's or a gate's own part: a
	// plan says that what it lacks is built so (as a baseline the
	// operator accepted does, Baseline.Accepted); one a first sweep took
	// by itself may have taken a fault in.
	BaselineDesigned bool
	// Counters holds the PerfMgt readings. Optional.
	Counters Counters
	// CountersNotRead, when Counters is nil, says why (a saved fabric
	// file that carries none): the counter checks give it as their
	// reason for not running.
	CountersNotRead string
	// CountersBasis, when not empty, says what the counters are when
	// they are not a live reading: a file's increases over a span it
	// does not give (see PortReading.SpanUnknown). Checks that need a
	// span give it as their reason for not running.
	CountersBasis string
	// RatesNotRead, when not empty, says the link widths and speeds are
	// not the fabric's (a saved file that gives none: the simulator's
	// default): the checks that judge rates give it as their reason for
	// not running.
	RatesNotRead string
	// SupportedNotRead, when not empty, says the ports' supported speeds
	// are not the fabric's (a saved file that records only the active
	// speed): a host link below its peers may run the best its HCA
	// supports, so it is not judged "below what both ends can run".
	SupportedNotRead string
	// NotRecorded, by input ("sm-recorded", "mkey", "mtu", "vls",
	// "partitions"), says why that input is not the fabric's: a saved
	// fabric file that does not record it, whose simulator answers a
	// stand-in (a healthy default SM, default VLs and P_Keys). The checks
	// that need it give the reason for not running.
	NotRecorded map[string]string
	// RoutesComputed says the LFTs were computed by ibdoctor (min-hop,
	// for a saved topology without tables), not read from the fabric or
	// a file: checks that judge the routing engine's choices
	// (routing.credit-loop) then do not run.
	RoutesComputed bool
	// Stale, by input ("lfts", "lids"), says why the snapshot's view of
	// it is no longer the fabric's (a gate found job HCAs' LIDs moved, or
	// a cable on the job's routes leading elsewhere, since the sweep):
	// the checks that need it give the reason for not running, as for
	// NotRecorded. One mechanism for every "the snapshot's map is out of
	// date here": those verdicts are could-not-decide, never judged on it.
	Stale map[string]string
	// MovedCables are the ports whose cable a gate found leading
	// elsewhere now than the snapshot has it (each end as the snapshot
	// has them, and the far end found now), with why: a topology.*
	// verdict naming one was judged on the snapshot's cable map there,
	// and is could-not-decide (notOnMovedCables).
	MovedCables map[fabric.PortID]string
	// TablesChanged, with Scope, are the switches whose forwarding table
	// a gate found changed since the sweep (a block it re-read differs
	// from the snapshot's) and re-read for every destination behind the
	// job's leaves: routing.ecmp-imbalance judges their groups toward
	// those leaves on all of those destinations, not on the job's alone,
	// against their ports' totals over every destination they route
	// (FabricPart), and the sweep's verdict on them (of the old table) is
	// not used.
	TablesChanged map[*fabric.Node]*TableChange
	// FabricPart, with Scope, says Fabric is only a part of the swept
	// fabric (a gate's from gate.idx), without most destinations its
	// switches route: a changed switch's ports' totals are then the
	// sweep's (PortTotals) corrected by the entries the gate re-read;
	// without them it is undecided, PortTotalsNotRead saying why when
	// they could not be read.
	FabricPart        bool
	PortTotals        *PortTotals
	PortTotalsNotRead string
	// Loads holds route loads computed over the LFTs. Optional.
	Loads Loads
	// Expect holds what the operator expects (rates, thresholds).
	Expect Expectations
	// SM holds the SMInfo readings of the ports that advertise an SM.
	// Optional: nil when SMInfo was not read.
	SM *SMView
	// Partitions holds the P_Key tables read with SMPs. Optional: nil
	// when they were not read (a saved fabric carries none).
	Partitions *PartitionView
	// Firmware holds the firmware versions read with the vendor
	// GeneralInfo MAD. Optional: nil when they were not read;
	// FirmwareNotRead then says why (a saved fabric file carries none,
	// ibsim implements no vendor class).
	Firmware        *FirmwareView
	FirmwareNotRead string
	// SL2VL holds the SLtoVLMappingTables read for the port pairs of the
	// credit-loop candidates (CreditCycles.SL2VLPairs). Optional: nil
	// when not read; routing.credit-loop then judges on VL0.
	SL2VL *SL2VLView
	// SL2VLNotRead, when SL2VL is nil, says why (a fabric file carries
	// no SL2VL tables): the credit-loop evidence gives it.
	SL2VLNotRead string
	// CreditCycles, when set, are the dependency cycles the sweep found
	// (FindCreditCycles over Fabric) to read SL2VL for; nil: the check
	// finds them.
	CreditCycles *CreditCycles
	// AR holds the NVIDIA switches' AdaptiveRoutingInfo. Optional: nil
	// when not read; ARNotRead then says why.
	AR        *ARView
	ARNotRead string
	// HCAs is the census of the whole fabric's host adapters when Fabric
	// is only a part of it (a gate's): topology.missing-hca compares a
	// host with its peers. Nil: taken from Fabric.
	HCAs []HostHCA
	// HCASummary and HCALookup, both set, stand for HCAs: the sweep's
	// summary of the whole fabric's census (SummarizeHCAs) and the
	// census's entries of one host, so that a gate looks up its part's
	// hosts instead of grouping every host of the fabric. HCAs is then
	// not read.
	HCASummary *HCASummary
	HCALookup  HCALookup
	// HCAsPartial says HCAs is of a sweep that did not read everything:
	// a host's HCA may be absent only because it was not read, so a host
	// lacking one is reported only where the leaf port its cable belongs
	// in was read without a link; otherwise it is undecided.
	HCAsPartial bool
	// Scope limits the checks to what a job uses (gate). Nil: everything.
	Scope *Scope
	// FabricRouting, with Scope, are the whole fabric's verdicts of the
	// checks a job's part cannot judge (FabricWide of the sweep's Run):
	// the ones on the job's routes are the job's findings too. Nil: not
	// known, those checks judge the job's part alone.
	FabricRouting *FabricVerdicts
	// Taken is when the snapshot was read.
	Taken time.Time

	// memo holds what several checks of one Run compute alike (set by
	// Run for its duration; nil outside it, where each check computes
	// its own; the fabric does not change during a Run).
	memo *runMemo
	// undecided collects what the checks of one Run could not decide
	// (couldNotDecide); Run hands it over in Result.Undecided.
	undecided []Undecided
	// portTotals are routing.ecmp-imbalance's per-port destination
	// totals of a whole fabric's switches; Run hands them over in Result
	// for FabricWide.
	portTotals *PortTotals
	// cleared is what the last walk of the counters' errors
	// (eachCounterError) found cleared since the sweep; Run words it in
	// Result.CountersCleared.
	cleared clearedPorts
}

// memoPart is one part of a Run's memo, or a set of them.
type memoPart uint8

const (
	// memoLinks is runMemo.links (Snapshot.links).
	memoLinks memoPart = 1 << iota
	// memoVerdicts is runMemo.verdicts (Snapshot.reportedVerdicts).
	memoVerdicts
	// memoRoutes is runMemo.routeGraph and routeFails.
	memoRoutes
	// memoLost is runMemo.lost (Snapshot.lostPorts).
	memoLost
)

// runMemo is what checks share within one Run.
type runMemo struct {
	// used is what was asked of the memo (for the test that each check
	// declares what it reads, Check.reads).
	used memoPart
	// routeFails: routing.unreachable and routing.loop judge the same
	// walk to every host from every leaf, the costliest part of a
	// check at 49k nodes, so it is made once.
	routeFails *routeFails
	// links and the link verdicts: each a pass over every link (sorted)
	// that several checks made again, most of a gate's checks time on
	// a 49k-node fabric.
	links    []fabric.Link
	verdicts []LinkVerdict
	judged   bool
	// routeGraph: the route analyzer over the tables and the hosts.
	routeGraph *routeGraph
	// lost is routing.lost-lid's judgement (findLostLIDs), which
	// routing.ecmp-imbalance counts too (lostBehind): a walk of every
	// lost LID's route from every switch, made once.
	lost *lostLIDs
	// hosts is hostCount plus one once counted (0: not yet). Without
	// routes it is a pass over every node, and the counter checks ask it
	// for each port with a finding (a busy fabric: nearly every port).
	hosts int
}

// lostLIDs holds findLostLIDs' answer (nil ports: none lost).
type lostLIDs struct{ ports []*lostPort }

// release lets go of the parts no check in left reads. Held to the end of
// the Run, the link verdicts (~20 MB at 49k nodes) were live through the
// routing checks, where a sweep's heap peaks, and the route graph
// through the topology checks (issue 13, docs/architecture.md). A part
// asked for again is made again: correct, only slower.
func (m *runMemo) release(left []Check) {
	var still memoPart
	for _, c := range left {
		still |= c.reads
	}
	if still&memoVerdicts == 0 {
		m.verdicts, m.judged = nil, false
	}
	if still&memoLinks == 0 {
		m.links = nil
	}
	if still&memoRoutes == 0 {
		m.routeGraph, m.routeFails = nil, nil
	}
	if still&memoLost == 0 {
		m.lost = nil
	}
}

// lostPorts returns findLostLIDs(s.Fabric), once per Run.
func (s *Snapshot) lostPorts() []*lostPort {
	if s.memo == nil {
		return findLostLIDs(s.Fabric)
	}
	s.memo.used |= memoLost
	if s.memo.lost == nil {
		s.memo.lost = &lostLIDs{findLostLIDs(s.Fabric)}
	}
	return s.memo.lost.ports
}

// links returns s.Fabric.Links(), once per Run.
func (s *Snapshot) links() []fabric.Link {
	if s.memo == nil {
		return s.Fabric.Links()
	}
	s.memo.used |= memoLinks
	if s.memo.links == nil {
		s.memo.links = s.Fabric.Links()
	}
	return s.memo.links
}

// Expectations are the operator's statements about the fabric.
type Expectations struct {
	// SwitchRates are the acceptable rates of switch-to-switch links;
	// empty: judge by what both ends have enabled and by the link's
	// parallel siblings.
	SwitchRates []mad.Rate
	// HostRates are the acceptable rates of host (CA) links; empty: judge
	// by what both ends have enabled.
	HostRates []mad.Rate
	// Thresholds for counters.errors; zero value: DefaultThresholds.
	Thresholds *Thresholds
	// Oversubscription is the largest acceptable ratio of a leaf's host
	// bandwidth to its uplink bandwidth (default 2: "below half").
	Oversubscription float64
	// ImbalanceRatio is the largest acceptable max/mean ratio of route
	// load across equal-cost uplinks (default 1.2: 20%).
	ImbalanceRatio float64
}

// Loads is what the routing checks and impact estimates read from the
// route analysis over the forwarding tables.
type Loads interface {
	// Hosts is the number of host ports (CA ports with a LID) the loads
	// were computed over.
	Hosts() int
	// PortPaths returns how many host→host paths leave through port p
	// (toward p.Remote), and whether the port was analysed.
	PortPaths(p *fabric.Port) (int, bool)
	// Unfollowed returns how many ordered host pairs' routes could not be
	// followed to their end: they leave by a port whose state or far end
	// was not read, or reach a switch whose table was not read. Counts
	// from PortPaths are then lower bounds.
	Unfollowed() (unread, noTable int64)
	// PortDLIDs returns how many CA destination LIDs switch port p
	// forwards.
	PortDLIDs(p *fabric.Port) int
}

// Counters is what the counter checks read from a PerfMgt sweep.
type Counters interface {
	// Interval is the time between the two samples, 0 when only one
	// sample was read (checks then judge absolute values).
	Interval() time.Duration
	// Ports calls fn for every port that was read. A reading's Errors
	// and XmitWait may be the call's own buffers, reused for the next
	// port: they are valid while fn runs, and fn may change them then;
	// a caller that keeps a reading keeps its Clone.
	Ports(fn func(PortReading))
}

// Clone returns r with Errors and XmitWait of its own, for a caller that
// keeps the reading past Counters.Ports' call of fn.
func (r PortReading) Clone() PortReading {
	if r.Errors != nil {
		r.Errors = slices.Clone(r.Errors)
	}
	if r.XmitWait != nil {
		w := *r.XmitWait
		r.XmitWait = &w
	}
	return r
}

// PortReading is one port's counters, in real units.
type PortReading struct {
	Port *fabric.Port
	// Errors are the error counters by IBA name (SymbolErrorCounter,
	// LinkErrorRecoveryCounter, ...): the absolute value of the last
	// sample, and the increase over the interval when two were read.
	Errors []CounterValue
	// XmitWait is PortXmitWait (absolute and delta), if supported.
	XmitWait *CounterValue
	// XmitBytes, RcvBytes: data over the interval (0 without one).
	XmitBytes, RcvBytes uint64
	// DataUnknown says why XmitBytes/RcvBytes are unknown ("" when known;
	// as CounterValue.DeltaUnknown): no rate is computed from them.
	DataUnknown string
	// Elapsed is the time this port's deltas span (its own two readings
	// are not exactly Interval apart); 0 when unknown, and then Interval
	// stands for it.
	Elapsed time.Duration
	// XmitWaitTicksPerSecond is the rate at which PortXmitWait would
	// count if the port were stalled all the time (the port's tick).
	XmitWaitTicksPerSecond float64
	// Reset is true when a counter went backwards between samples.
	Reset bool
	// ReadSent and ReadAt bracket when the device read this port's
	// counters (its last sample's request and answer); zero when not
	// known. A reading paired with a saved one is timed from the saved
	// reading's request to ReadAt (SavedAgo).
	ReadSent, ReadAt time.Time
	// Saved is set when an earlier sweep saved this port's counters (the
	// snapshot a gate answers from): each error counter's Growth is then
	// its increase since, SavedAgo before this reading, and is judged
	// besides the value (or the interval's increase).
	Saved    bool
	SavedAgo time.Duration
	// SavedAt is when that sweep read them (zero when not known): the
	// findings name the sweep their growth is counted from.
	SavedAt time.Time
	// SpanUnknown is set when each counter's Delta (XmitWait's too) is an
	// increase over a span that is not known: a file's record of what
	// the counters grew while its tool sampled them (ibdiagnet2.db_csv's
	// PM_DELTA, over ibdiagnet's run). The increase is judged, not the
	// value; nothing per second (BER, utilisation, share of time
	// stalled) can be computed.
	SpanUnknown bool
}

// CounterValue is one counter.
type CounterValue struct {
	Name  string
	Value uint64 // last sample
	Delta uint64 // increase over the interval (when sampled)
	// Growth is the increase since the saved reading (PortReading.Saved).
	Growth uint64
	// ClearedFrom is the saved reading when the live value is below it:
	// the counter was cleared (or reset, or wrapped) since the sweep, so
	// the increase since is unknown and Value counts from the clear. 0
	// otherwise (a saved 0 cannot be gone below).
	ClearedFrom uint64
	Bits        int  // field width on the wire
	Saturated   bool // stuck at all-ones: the true value is larger
	// DeltaUnknown says why the increase over the interval is unknown
	// ("" when known): the two samples read it from fields that cannot be
	// subtracted (16/32-bit PortCounters in one, 64-bit
	// PortCountersExtended in the other). Delta is 0 then and is not
	// judged: the port is undecided for its check.
	DeltaUnknown string
	// GrowthUnknown says why the increase since the saved reading is
	// unknown ("" when known), by the same rule (perf.Increase): Growth is
	// 0 then and not judged.
	GrowthUnknown string
	// Unsaved is set on a Saved reading when the sweep did not save this
	// counter: no growth is known, the value is judged as without one.
	Unsaved bool
}

// Scope is the part of the fabric a job uses.
type Scope struct {
	// Hosts are the job's host nodes.
	Hosts map[*fabric.Node]bool
	// Ports are the ports on the routes among the hosts (both ends of
	// every link crossed), the hosts' own ports included.
	Ports map[*fabric.Port]bool
	// Switches are the switches on those routes.
	Switches map[*fabric.Node]bool
}

// inScope reports whether a port (or its peer) is in scope.
func (s *Snapshot) inScope(p *fabric.Port) bool {
	if s.Scope == nil {
		return true
	}
	if s.Scope.Ports[p] {
		return true
	}
	return p.Remote != nil && s.Scope.Ports[p.Remote]
}

func (s *Snapshot) nodeInScope(n *fabric.Node) bool {
	if s.Scope == nil {
		return true
	}
	return s.Scope.Hosts[n] || s.Scope.Switches[n]
}
