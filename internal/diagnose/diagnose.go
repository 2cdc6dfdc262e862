// Package diagnose runs a whole sweep — discovery, forwarding tables,
// counters, route loads — over one engine and turns it into a checks
// Snapshot and a report Document. It is the policy layer the check,
// sweep and gate commands share; it knows nothing about terminals.
package diagnose

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/arread"
	"github.com/ibdoctor/ibdoctor/internal/buildinfo"
	"github.com/ibdoctor/ibdoctor/internal/discover"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/firmread"
	"github.com/ibdoctor/ibdoctor/internal/pkeyread"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/ibdoctor/ibdoctor/internal/route"
	"github.com/ibdoctor/ibdoctor/internal/sl2vlread"
	"github.com/ibdoctor/ibdoctor/internal/smread"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Options say what a sweep reads.
type Options struct {
	Discover discover.Options
	// Routes reads every switch's LFT and computes route loads.
	Routes bool
	// Counters reads PerfMgt counters; Interval > 0 reads them twice.
	Counters bool
	Interval time.Duration
	// Counter sweep tuning: SL and P_Key index for PerfMgt MADs.
	SL        uint8
	PKeyIndex uint16
	// NoSL2VL, when not empty, says why the SLtoVLMappingTables are not
	// read (a fabric file carries none): routing.credit-loop then judges
	// on VL0 and says so.
	NoSL2VL string
	// NoFirmware, when not empty, says why the fabric has no firmware
	// versions to read (a saved file that carries none, ibsim): the
	// GeneralInfo stage is left out and the check says why.
	NoFirmware string
	// TablesNotRead, by switch GUID, says why a switch's forwarding
	// table is not answered (a saved file that gives other switches'
	// tables and not its own): its unreached entry says that instead of
	// the MAD status.
	TablesNotRead map[uint64]string
	// NoAR, when not empty, says why the switches' AdaptiveRoutingInfo
	// is not read (a gate): routing.adaptive says why.
	NoAR string
	// Stage, if set, is told when a stage starts ("discovery", ...).
	Stage func(name string)
	// Sleep waits out the interval (tests pass a fake clock's).
	Sleep func(ctx context.Context, d time.Duration) error
}

// Sweep is what one sweep read.
type Sweep struct {
	Fabric   *fabric.Fabric
	Counters checks.Counters // nil when not read
	Loads    checks.Loads    // nil when LFTs were not read
	SM       *checks.SMView  // SMInfo of the SM ports; nil when not read
	// Partitions holds the P_Key tables of the host ports and enforcing
	// switch ports; nil when not read.
	Partitions *checks.PartitionView
	// Firmware holds the GeneralInfo firmware versions; nil when not
	// read, and FirmwareNotRead then says why.
	Firmware        *checks.FirmwareView
	FirmwareNotRead string
	// CreditCycles are the dependency cycles of the routes read, and
	// SL2VL the SLtoVLMappingTables of their port pairs (nil when no
	// cycle, or no routes, was read).
	CreditCycles *checks.CreditCycles
	SL2VL        *checks.SL2VLView
	// AR holds the NVIDIA switches' AdaptiveRoutingInfo; nil when not
	// read, and ARNotRead then says why.
	AR        *checks.ARView
	ARNotRead string
	// SL2VLNotRead says why SL2VL was not read when a cycle wanted it.
	SL2VLNotRead string
	// RoutesComputed is set by the caller when the fabric swept is a
	// simulator whose tables ibdoctor computed (a topology file without
	// them): see checks.Snapshot.RoutesComputed.
	RoutesComputed bool
	// CountersNotRead is set by the caller when the fabric has no
	// counters to read (a saved file that carries none): why.
	CountersNotRead string
	// RatesNotRead is set by the caller when the link rates are not the
	// fabric's (a saved file that gives none): why.
	RatesNotRead string
	// SourceWarnings are what the reader of a --sim file said about how
	// it read it (fabric.FileInfo.Warnings: values replaced, a GUID read
	// as two nodes, ...), set by the caller: the report carries them, so
	// an artifact says its data was not all taken as written.
	SourceWarnings []string
	// SupportedNotRead is set by the caller when the supported speeds are
	// not the fabric's (a saved file that records none): why.
	SupportedNotRead string
	// NotRecorded is set by the caller when a saved file does not record
	// some checks' inputs (checks.Snapshot.NotRecorded): why, by input.
	NotRecorded map[string]string
	// CountersBasis is set by the caller when the counters are a file's
	// increases over a span it does not give (WithIncreases): what they
	// are, for the report and the checks that need a span.
	CountersBasis string
	// Unreached lists what could not be read, for the report.
	Unreached []report.Unreached
	// Complete is false when anything the sweep tried could not be read.
	Complete bool
	Timings  map[string]time.Duration
	Taken    time.Time
	Stats    transport.Stats
}

// Run sweeps the fabric behind e. It returns what it read even when parts
// failed; the error is non-nil only when nothing useful could be read
// (discovery could not start) or ctx ended.
func Run(ctx context.Context, e *transport.Engine, o Options) (*Sweep, error) {
	s := &Sweep{Timings: map[string]time.Duration{}, Complete: true, Taken: time.Now()}
	stage := func(name string) func() {
		if o.Stage != nil {
			o.Stage(name)
		}
		start := time.Now()
		return func() { s.Timings[name] = time.Since(start) }
	}
	done := stage("discovery")
	f, err := discover.Run(ctx, e, o.Discover)
	done()
	if f == nil {
		return nil, err
	}
	s.Fabric = f
	if err != nil {
		s.Complete = false
		s.Unreached = append(s.Unreached, report.Unreached{What: "discovery", Where: "fabric", Reason: err.Error()})
		if ctx.Err() != nil {
			s.Stats = e.Stats()
			return s, err
		}
	}
	wheres := f.UnreachableWheres()
	for i, u := range f.Unreachable {
		s.Complete = false
		s.Unreached = append(s.Unreached, report.Unreached{What: u.What, Where: wheres[i], Reason: u.Reason}.ReadFailed(u.Err))
	}
	done = stage("sm")
	s.SM = &checks.SMView{Readings: smread.Read(ctx, e, f, e.Local().PortNum)}
	done()
	for _, r := range s.SM.Readings {
		if r.Reason != "" {
			s.Complete = false
			s.Unreached = append(s.Unreached, report.Unreached{What: "SMInfo", Where: smWhere(r.Port), Reason: r.Reason})
		}
	}
	done = stage("partitions")
	s.Partitions = pkeyread.Read(ctx, e, f, pkeyread.Ports(f, nil), e.Local().PortNum, false)
	done()
	s.NotePartitionsUnread()
	firmwareAt := -1
	if why := cmp.Or(o.NoFirmware, e.Local().NoVendorMADs); why != "" {
		s.FirmwareNotRead = why
	} else {
		done = stage("firmware")
		s.Firmware = firmread.Read(ctx, e, f)
		done()
		firmwareAt = s.noteFirmwareUnread()
	}
	if why := cmp.Or(o.NoAR, e.Local().NoARInfo); why != "" {
		s.ARNotRead = why
	} else {
		done = stage("ar")
		s.AR = arread.Read(ctx, e, f)
		done()
		s.noteNodesUnread(s.AR.Unread, func(string) string { return "AdaptiveRoutingInfo" })
	}
	if o.Routes {
		done := stage("routes")
		if err := route.ReadLFTs(ctx, e, f, route.ReadOptions{}); err != nil {
			s.Complete = false
			s.Unreached = append(s.Unreached, lftFailures(f, err, o.TablesNotRead)...)
		}
		if hasLFT(f) {
			s.Loads = NewLoads(f)
		}
		done()
		if hasLFT(f) {
			// Only the port pairs of a cycle's channels are read: a
			// fabric whose routes make none costs no MAD here.
			s.CreditCycles = checks.FindCreditCycles(f)
			if pairs := s.CreditCycles.SL2VLPairs(); len(pairs) > 0 && o.NoSL2VL != "" {
				s.SL2VLNotRead = o.NoSL2VL
			} else if len(pairs) > 0 {
				done := stage("sl2vl")
				s.SL2VL = sl2vlread.Read(ctx, e, pairs)
				done()
				s.noteSL2VLUnread(pairs)
			}
		}
	}
	if firmwareAt >= 0 {
		s.sayWhyFirmwareSilent(firmwareAt, Silence{Fabric: f, From: ReadFrom(f, e.Local())})
	}
	if o.Counters {
		done := stage("counters")
		c, unreached, err := sweepCounters(ctx, e, f, o)
		done()
		if len(unreached) > 0 {
			s.Complete = false
			s.Unreached = append(s.Unreached, unreached...)
		}
		if err != nil {
			s.Complete = false
			s.Unreached = append(s.Unreached, report.Unreached{What: "counters", Where: "fabric", Reason: err.Error()})
		}
		s.Counters = c
		if o.Interval > 0 && ctx.Err() == nil {
			// The counter sweep waited out the interval: a second SMInfo
			// read now shows whether the master's ActCount moved.
			smread.ReadAgain(ctx, e, f, e.Local().PortNum, s.SM.Readings)
		}
	}
	s.Stats = e.Stats()
	return s, ctx.Err()
}

func smWhere(p *fabric.Port) string {
	return fmt.Sprintf("%s port %d (0x%016x)", p.Node.Description, p.Num, p.Node.GUID)
}

func hasLFT(f *fabric.Fabric) bool {
	for _, n := range f.Nodes {
		if n.Switch != nil && n.Switch.LFT != nil {
			return true
		}
	}
	return false
}

func lftFailures(f *fabric.Fabric, err error, why map[uint64]string) []report.Unreached {
	// A SwitchInfo discovery could not read either is listed there
	// already: the same attribute of the same switch not read is one
	// thing, not two differently named (trial A14).
	discovered := map[string]bool{}
	for _, u := range f.Unreachable {
		if u.What == "SwitchInfo" {
			discovered[u.Path.String()] = true
		}
	}
	var out []report.Unreached
	var walk func(error)
	walk = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		var se *route.SwitchError
		if errors.As(err, &se) {
			if se.What == "SwitchInfo" && se.Switch.Path != nil && discovered[se.Switch.Path.String()] {
				return
			}
			reason := se.Err.Error()
			if w, ok := why[se.Switch.GUID]; ok {
				reason = w
			}
			out = append(out, report.Unreached{What: se.What, Where: fmt.Sprintf("switch %s (0x%016x)", se.Switch.Description, se.Switch.GUID), Reason: reason})
			return
		}
		out = append(out, report.Unreached{What: "forwarding tables", Where: "fabric", Reason: err.Error()})
	}
	walk(err)
	return out
}

// Snapshot builds the checks' input from a sweep.
func (s *Sweep) Snapshot(expect checks.Expectations, baseline *checks.Baseline, scope *checks.Scope) *checks.Snapshot {
	snap := &checks.Snapshot{
		Fabric:   s.Fabric,
		Baseline: baseline,
		Expect:   expect,
		Scope:    scope,
		Taken:    s.Taken,
	}
	if s.Counters != nil {
		snap.Counters = s.Counters
	}
	if s.Loads != nil {
		snap.Loads = s.Loads
	}
	snap.SM = s.SM
	snap.Firmware = s.Firmware
	snap.FirmwareNotRead = s.FirmwareNotRead
	snap.AR = s.AR
	snap.ARNotRead = s.ARNotRead
	snap.Partitions = s.Partitions
	snap.SL2VL = s.SL2VL
	snap.SL2VLNotRead = s.SL2VLNotRead
	snap.CreditCycles = s.CreditCycles
	snap.RoutesComputed = s.RoutesComputed
	snap.CountersNotRead = s.CountersNotRead
	snap.CountersBasis = s.CountersBasis
	snap.RatesNotRead = s.RatesNotRead
	snap.SupportedNotRead = s.SupportedNotRead
	snap.NotRecorded = s.NotRecorded
	return snap
}

// Document assembles the report for a sweep and its check result.
func (s *Sweep) Document(command, source string, res *checks.Result, failOn checks.Severity) *report.Document {
	d := &report.Document{
		Schema:      report.Schema,
		Version:     buildinfo.Get().Version,
		GeneratedAt: s.Taken.UTC(),
		Command:     command,
		Source:      source,
		FailOn:      failOn.String(),
		Complete:    s.Complete,
		Fabric:      Summarize(s.Fabric),
		Findings:    res.Findings,
		ChecksRun:   res.Ran,
		Skipped:     res.Skipped,
		Unreached:   s.Unreached,
		Undecided:   res.Undecided,
		Timings:     map[string]string{},

		RoutesComputed:  s.RoutesComputed,
		CountersNotRead: s.CountersNotRead,
		CountersBasis:   s.CountersBasis,
		CountersCleared: res.CountersCleared,
		RatesNotRead:    s.RatesNotRead,
		SourceWarnings:  s.SourceWarnings,
	}
	d.Unreached = foldNoLID(d.Unreached, res.Findings)
	if d.Unreached == nil {
		d.Unreached = []report.Unreached{}
	}
	if d.Skipped == nil {
		d.Skipped = []checks.Skipped{}
	}
	var total time.Duration
	for k, v := range s.Timings {
		d.Timings[k] = v.Round(time.Millisecond).String()
		total += v
	}
	d.Timings["total"] = total.Round(time.Millisecond).String()
	st := s.Stats
	d.MADs = &report.MADStats{Sent: st.Sent, Answered: st.Answered, Retried: st.Retried, TimedOut: st.TimedOut, Errors: st.Errors,
		P50ms: float64(st.Latency.P50) / 1e6, P99ms: float64(st.Latency.P99) / 1e6}
	if s.Counters != nil {
		if iv := s.Counters.Interval(); iv > 0 {
			d.Interval = iv.String()
		}
		n := 0
		s.Counters.Ports(func(checks.PortReading) { n++ })
		d.Fabric.PortsRead = n
	}
	for _, n := range s.Fabric.Nodes {
		switch {
		case n.Switch == nil || n.Switch.LFT == nil:
		case s.RoutesComputed:
			// The simulator answers its own min-hop tables: computed,
			// not read (trial H8).
			d.Fabric.SwitchesComputed++
		default:
			d.Fabric.SwitchesRouted++
		}
	}
	d.CountBySeverity()
	// A check that could not decide a subject leaves the run undecided
	// even where the sweep's own list is empty.
	d.Status = Status(res.Findings, failOn, s.Complete && len(res.Undecided) == 0)
	return d
}

// Status is "unhealthy" when a finding is at or above failOn, else
// "undecided" when the sweep was incomplete, else "healthy".
func Status(fs []checks.Finding, failOn checks.Severity, complete bool) string {
	if w, ok := checks.Worst(fs); ok && w >= failOn {
		return "unhealthy"
	}
	if !complete {
		return "undecided"
	}
	return "healthy"
}

// Summarize counts a fabric's nodes and links.
func Summarize(f *fabric.Fabric) report.FabricSummary {
	var s report.FabricSummary
	if f == nil {
		return s
	}
	for _, n := range f.Nodes {
		s.Nodes++
		switch n.Type {
		case mad.NodeSwitch:
			s.Switches++
		case mad.NodeCA:
			s.CAs++
		case mad.NodeRouter:
			s.Routers++
		}
	}
	s.Links = len(f.Links())
	return s
}

// foldNoLID: without a master SM no port has a LID, so no PerfMgt MAD
// could be addressed. Those ports stay unread, but under sm.no-master's
// root cause they are one entry, not one per port.
func foldNoLID(un []report.Unreached, findings []checks.Finding) []report.Unreached {
	if !slices.ContainsFunc(findings, func(f checks.Finding) bool { return f.Check == "sm.no-master" }) {
		return un
	}
	n := 0
	out := make([]report.Unreached, 0, len(un))
	for _, u := range un {
		if u.What == fabric.WhatNoLID {
			n++
			continue
		}
		out = append(out, u)
	}
	if n == 0 {
		return un
	}
	noun := "ports"
	if n == 1 {
		noun = "port"
	}
	return append(out, report.Unreached{What: "LID-routed reads", Where: fmt.Sprintf("%d %s", n, noun),
		Reason: "no LIDs, no master SM (see sm.no-master)"})
}

// NotePartitionsUnread lists the ports whose P_Key table did not answer
// as unreached: their partitions are unknown, and the sweep is
// incomplete.
func (s *Sweep) NotePartitionsUnread() {
	if s.Partitions == nil {
		return
	}
	ports := make([]*fabric.Port, 0, len(s.Partitions.Unread))
	for p := range s.Partitions.Unread {
		ports = append(ports, p)
	}
	slices.SortFunc(ports, func(a, b *fabric.Port) int {
		return cmp.Or(cmp.Compare(a.Node.GUID, b.Node.GUID), cmp.Compare(a.Num, b.Num))
	})
	for _, p := range ports {
		s.Complete = false
		what := "P_KeyTable"
		if s.Partitions.Unread[p] == pkeyread.NoLID {
			what = fabric.WhatNoLID // folded under sm.no-master (foldNoLID)
		}
		s.Unreached = append(s.Unreached, report.Unreached{What: what, Where: smWhere(p), Reason: s.Partitions.Unread[p]}.ReadFailed(s.Partitions.Errs[p]))
	}
}

// noteFirmwareUnread lists the nodes asked for GeneralInfo that did not
// answer as unreached: their firmware is unknown, and the sweep is
// incomplete. One without a LID is folded under sm.no-master. It returns
// where its entries start in s.Unreached (sayWhyFirmwareSilent).
func (s *Sweep) noteFirmwareUnread() int {
	at := len(s.Unreached)
	s.noteNodesUnread(s.Firmware.Unread, func(why string) string {
		if why == firmread.NoLID {
			return fabric.WhatNoLID
		}
		return "GeneralInfo"
	})
	return at
}

// sayWhyFirmwareSilent adds to the reason of each node whose GeneralInfo
// went unanswered why, when what was read shows it: GeneralInfo goes by
// LID as the PMA's reads do, so a down port on the LID route, an agent
// silent to PortInfo too or a shared reading LID keep it from answering
// alike, and a silent PMA's line says so (Silence.Why, the one
// judgement). Both renderings of the reason change, the unread entry
// (from at on, in noteFirmwareUnread's order) and the view's Unread
// that firmware.mixed-version's could-not-decide quotes. Called once the
// forwarding tables are read: the routes are part of the cause.
func (s *Sweep) sayWhyFirmwareSilent(at int, silence Silence) {
	for i, n := range sortedByGUID(s.Firmware.Unread) {
		lid, ok := s.Firmware.NoAnswer[n]
		if !ok {
			continue
		}
		why := silence.Why(n, lid)
		if why == "" {
			continue
		}
		s.Firmware.Unread[n] += why
		if u := &s.Unreached[at+i]; u.What == "GeneralInfo" {
			u.Reason = s.Firmware.Unread[n]
		}
	}
}

// noteNodesUnread lists the nodes a read stage asked and could not read
// (unread: node -> reason), by GUID, under what(reason): the sweep is
// then incomplete.
func (s *Sweep) noteNodesUnread(unread map[*fabric.Node]string, what func(why string) string) {
	for _, n := range sortedByGUID(unread) {
		s.Complete = false
		s.Unreached = append(s.Unreached, report.Unreached{What: what(unread[n]), Where: fmt.Sprintf("%s (0x%016x)", n.Description, n.GUID), Reason: unread[n]})
	}
}

// sortedByGUID is the nodes of m in NodeGUID order.
func sortedByGUID[V any](m map[*fabric.Node]V) []*fabric.Node {
	return slices.SortedFunc(maps.Keys(m), func(a, b *fabric.Node) int { return cmp.Compare(a.GUID, b.GUID) })
}

// noteSL2VLUnread lists the port pairs whose SLtoVLMappingTable did not
// answer as unreached: routing.credit-loop judges their cycles on VL0.
func (s *Sweep) noteSL2VLUnread(pairs []checks.SL2VLPair) {
	for _, pr := range pairs {
		why, ok := s.SL2VL.Unread[pr]
		if !ok {
			continue
		}
		s.Complete = false
		s.Unreached = append(s.Unreached, report.Unreached{What: "SLtoVLMappingTable",
			Where: fmt.Sprintf("%s in port %d out port %d (0x%016x)", pr.Switch.Description, pr.In, pr.Out, pr.Switch.GUID), Reason: why})
	}
}
