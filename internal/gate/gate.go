// Package gate answers a scheduler prolog's question — is the fabric fit
// for a job on these hosts? — from the last sweep's snapshot, re-reading
// live only the ports the job's traffic uses: the hosts' own ports and
// every port on the routes among them.
package gate

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/pkeyread"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/ibdoctor/ibdoctor/internal/snapshot"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/internal/words"
	"github.com/ibdoctor/ibdoctor/mad"
)

// NoFirmware is why a gate judges no firmware versions: GeneralInfo is
// one MAD per node of the whole fabric (the majority a node is compared
// with), more than a job's start should wait for; 'ibdoctor check' reads them.
const NoFirmware = "a gate does not read firmware versions (one MAD per node of the whole fabric); 'ibdoctor check' does"

// NoAR is why a gate does not say whether switches run adaptive
// routing: 'ibdoctor check' reads it.
const NoAR = "a gate does not read adaptive-routing state; 'ibdoctor check' does"

// Options describe one gate.
type Options struct {
	// Hosts are the job's host names (expanded from a hostlist).
	Hosts []string
	// NameMap, if set, names nodes by GUID (ibnetdiscover's
	// --node-name-map); hosts match mapped names first.
	NameMap fabric.NodeNameMap
	Expect  checks.Expectations
	FailOn  checks.Severity
	Only    []string
	// ByLID re-reads ports with LID-routed SMPs (the gate runs on another
	// port than the sweep did); otherwise the snapshot's directed routes.
	ByLID bool
	// Counters re-reads the PerfMgt counters of the ports on the job's
	// routes (judged on their value and their increase since the
	// snapshot); Interval > 0 reads them twice that far apart. SL and
	// PKeyIndex address the PerfMgt MADs; Sleep waits out the interval
	// and Clock times the readings (tests pass a fake clock's: the rates
	// are over the measured time between a port's readings).
	Counters  bool
	Interval  time.Duration
	SL        uint8
	PKeyIndex uint16
	Sleep     func(ctx context.Context, d time.Duration) error
	Clock     func() time.Time
	// CountersNotRead, with Counters false, says why there are no
	// counters to read (a --sim file that carries none: the simulator
	// would answer zeros); the counter checks give it as their reason
	// for not running, as check's do.
	CountersNotRead string
	// RatesNotRead says the link rates are not the fabric's (a --sim
	// file that gives none): rate checks do not run.
	RatesNotRead string
	// SupportedNotRead says the supported speeds are not the fabric's
	// (diagnose.Sweep.SupportedNotRead).
	SupportedNotRead string
	// SourceWarnings are the --sim file reader's warnings
	// (diagnose.Sweep.SourceWarnings): the report carries them.
	SourceWarnings []string
	// NotRecorded says, by input, what a --sim file does not record
	// (diagnose.Sweep.NotRecorded): those checks do not run.
	NotRecorded map[string]string
	// Increases, when set, are what a --sim file recorded its counters
	// grew by over a span it does not give (source.Session.Increases:
	// ibdiagnet's PM_DELTA). The counters read are then judged on them,
	// as check judges them (diagnose.WithIncreases), not on their
	// increase since the snapshot: a file's values do not move.
	// CountersBasis says what they are, for the report.
	Increases     map[fabric.PortID]map[string]uint64
	CountersBasis string
	// Swept is the gate's own sweep of the whole fabric when it had no
	// fresh snapshot: its timings count in the gate's, and what it could
	// not read is reported. That does not by itself make the gate
	// undecided: a part of the job's routes behind it shows as a route
	// out of a port with no known peer, or a port that cannot be
	// re-read, and that does.
	Swept *diagnose.Sweep
	// Baseline is the accepted topology (the state dir's baseline.idx, or
	// a designed one): it knows a job host's HCA that the snapshot lacks
	// because its link was already down at the sweep. Without it the
	// snapshot's own links are the reference. Its Accepted (the operator
	// ran `baseline accept`) goes to the checks with it.
	Baseline *snapshot.Index
	// BaselineDesigned says Baseline is the operator's plan
	// (--expect-topology), not the state dir's accepted one
	// (checks.Snapshot.BaselineDesigned).
	BaselineDesigned bool
	// RoutesComputed says the live tables are ibdoctor's own min-hop
	// routes (a --sim file without them): the routing engine's choices
	// are then not judged, as in check (checks.Snapshot.RoutesComputed).
	RoutesComputed bool
	// TablesNotInFile names, by GUID, the switches whose forwarding
	// table the --sim/--lfts file does not give, and why
	// (source.Session.TablesNotInFile): the simulator forwards no
	// LID-routed MAD through them, so a read by LID across one is
	// worded so, not as a node that did not answer (trial B14).
	TablesNotInFile map[uint64]string
	// Source names the live connection for the report.
	Source string
	// Now is the time of the gate (default time.Now()).
	Now time.Time
}

// Resolve maps host names to the fabric's nodes: by node-name map when
// given, else by description ("gpu042" matches "gpu042 mlx5_0" and
// "gpu042.cluster.local mlx5_1": fabric.HostName).
// Hosts that match nothing are returned in unmatched.
func Resolve(f *fabric.Fabric, hosts []string, names fabric.NodeNameMap) (nodes []*fabric.Node, unmatched []string) {
	byMapped := map[string][]*fabric.Node{}
	if len(names) > 0 {
		for _, n := range f.Nodes {
			if name, ok := names[n.GUID]; ok {
				host := fabric.HostKey(strings.Fields(name + " ")[0])
				byMapped[host] = append(byMapped[host], n)
			}
		}
	}
	seen := map[*fabric.Node]bool{}
	for _, h := range hosts {
		ns := byMapped[fabric.HostKey(h)]
		if len(ns) == 0 {
			ns = f.NodesByHost(h)
		}
		ns = slices.DeleteFunc(slices.Clone(ns), func(n *fabric.Node) bool { return n.Type == mad.NodeSwitch })
		if len(ns) == 0 {
			unmatched = append(unmatched, h)
			continue
		}
		for _, n := range ns {
			if !seen[n] {
				seen[n] = true
				nodes = append(nodes, n)
			}
		}
	}
	return nodes, unmatched
}

// Run gates a job on snap's fabric, re-reading the scope's ports through
// e. It returns the report; its Status is "healthy" only when every host
// was found, every port on the job's routes was re-read, and no finding
// is at or above FailOn.
func Run(ctx context.Context, snap *snapshot.Snapshot, e *transport.Engine, o Options) (*report.Document, error) {
	start := time.Now()
	// A prolog has seconds: a node that left a MAD unanswered is not
	// sent more in this gate (each would wait out the timeouts); what
	// would have been read from it is listed unread.
	e.SkipSilent()
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	// The job's part of the accepted topology: its hosts' HCAs and the
	// switch ports they are cabled to, which the snapshot's part must
	// hold too (an HCA whose link was down at the sweep is not in it).
	var base *fabric.Fabric
	if o.Baseline != nil {
		b, err := o.Baseline.JobPart(o.Hosts, o.NameMap)
		if err != nil {
			return nil, fmt.Errorf("baseline: %w", err)
		}
		base = b
	}
	var peers []uint64
	if base != nil {
		for _, n := range base.Nodes {
			if n.Type == mad.NodeSwitch {
				peers = append(peers, n.GUID)
			}
		}
	}
	if o.ByLID {
		// The gate's own port and its switch: the directed routes it
		// checks the job's cables by (and retries a silent node by)
		// start there, made over the part of the snapshot it holds
		// rather than over the whole fabric's links.
		peers = append(peers, e.Local().NodeGUID)
	}
	f, err := snap.FabricFor(o.Hosts, o.NameMap, peers...)
	if err != nil {
		return nil, err
	}
	loaded := time.Since(start)
	nodes, unmatched := Resolve(f, o.Hosts, o.NameMap)
	if base == nil {
		// Without an accepted topology the snapshot's links are the
		// reference (a copy: the live re-read changes f).
		base = jobLinks(f, nodes)
	} else {
		// A host the baseline has is known even when none of its HCAs
		// is in the snapshot: its links are judged, not "no such host".
		_, unknown := Resolve(base, unmatched, o.NameMap)
		unmatched = unknown
	}
	sw := &diagnose.Sweep{Fabric: f, Complete: true, Taken: o.Now, Timings: map[string]time.Duration{"snapshot": loaded}, RoutesComputed: o.RoutesComputed, RatesNotRead: o.RatesNotRead, SupportedNotRead: o.SupportedNotRead, NotRecorded: o.NotRecorded, SourceWarnings: o.SourceWarnings}
	// A host not found where the walk stopped at a node that did not
	// answer may be behind it: not looked for, not "no such name".
	notWalked := walkStopped(f, o.Swept) || snap.WalkStopped()
	for _, h := range unmatched {
		sw.Complete = false
		reason := "no node in the fabric has this name (check the node descriptions or --node-name-map)"
		if o.Swept == nil {
			// Looked for in the snapshot only (trial B9).
			reason = report.NotInSnapshot(snap.TakenAt, o.Now) + ": " + report.HostNotInSnapshotHint + " or --node-name-map"
		}
		if notWalked {
			reason = "not looked for: the fabric could not be walked past nodes that did not answer (listed)"
		}
		sw.Unreached = append(sw.Unreached, report.Unreached{What: "host", Where: h, Reason: reason})
	}
	// The routes as they are now, not as the sweep saw them: the scope
	// (and so what is re-read and judged) follows the live tables.
	t := time.Now()
	r := newReach(f, e, o.ByLID)
	blocks, unreached, err := liveRoutes(ctx, e, f, nodes, r)
	sw.Timings["routes"] = time.Since(t)
	if err != nil {
		return nil, err // only when ctx ended
	}
	if len(unreached) > 0 {
		sw.Complete = false
		sw.Unreached = append(sw.Unreached, unreached...)
	}
	sc := checks.ScopeFor(f, nodes)
	baselinePorts(sc, base, f)
	if snap.Widen(sc.Ports) {
		// A live route left the part of the snapshot read for the job:
		// start again on the whole of it.
		return Run(ctx, snap, e, o)
	}
	// Once the part is settled: a table changed since the sweep is read
	// for every destination behind the job's leaves.
	t = time.Now()
	tablesChanged, more, unreached, err := r.wholeTables(ctx, e, f, nodes)
	sw.Timings["routes"] += time.Since(t)
	if err != nil {
		return nil, err // only when ctx ended
	}
	blocks += more
	if len(unreached) > 0 {
		sw.Complete = false
		sw.Unreached = append(sw.Unreached, unreached...)
	}
	ports := sortedPorts(sc)
	// The cables between switches on the job's routes as the snapshot
	// has them (before the re-read drops those now down): the expected
	// topology they are judged against once re-read (link.down names one
	// that went down since the sweep, trial T14), as the hosts' own
	// cables are; added once the scope is settled (moved LIDs narrow it).
	var isls [][2]*fabric.Port
	for _, p := range ports {
		if p.Remote != nil && p.Node.Type == mad.NodeSwitch && p.Remote.Node.Type == mad.NodeSwitch {
			isls = append(isls, [2]*fabric.Port{p, p.Remote}) // a cable seen from both ends is added once
		}
	}
	noLink := map[*fabric.Port]bool{} // no peer in the snapshot
	for _, p := range ports {
		if p.Remote == nil {
			noLink[p] = true
		}
	}
	// The cables as the snapshot has them: a port read down drops its
	// cable, which a second read (by directed route, of a node whose LID
	// moved) may find up after all.
	cabled := map[*fabric.Port]*fabric.Port{}
	for _, p := range ports {
		if p.Remote != nil {
			cabled[p] = p.Remote
		}
	}
	// The job HCAs' LIDs as the snapshot has them: one moved to a LID no
	// other port has is found by them (lidsGone).
	was := map[*fabric.Node]snapLID{}
	for _, n := range nodes {
		if p := lidPort(n); p.LID != 0 {
			was[n] = snapLID{port: p, lid: p.LID}
		}
	}
	// The ports of the job's switches that the snapshot has without a
	// link, off the routes: an HCA reseated or an uplink fixed since the
	// sweep is up on one now, and the verdicts resting on it (an HCA
	// missing there, a leaf short of uplinks) are the sweep's, not the
	// fabric's (trial B1). They are read with the rest, not judged as
	// the job's.
	idle := idlePorts(f, nodes, base, sc, snap.FabricVerdicts())
	for _, p := range idle {
		noLink[p] = true
	}
	// The ports of a switch whose table changed since the sweep that
	// lead to other switches, off the routes: which of them are up now
	// decides its groups of equal-cost ports. An SM re-routes around a
	// link that went down: on the snapshot's state the dead port was
	// one of the group, idle (trial B2's re-route case). Read with the
	// rest, not judged as the job's.
	var grpPorts []*fabric.Port
	for n := range tablesChanged {
		for _, p := range n.Ports {
			if p != nil && p.Num != 0 && !sc.Ports[p] && !noLink[p] && p.Remote != nil && p.Remote.Node.Type == mad.NodeSwitch {
				grpPorts = append(grpPorts, p)
			}
		}
	}
	slices.SortFunc(grpPorts, func(a, b *fabric.Port) int {
		if c := cmp.Compare(a.Node.GUID, b.Node.GUID); c != 0 {
			return c
		}
		return cmp.Compare(a.Num, b.Num)
	})
	t = time.Now()
	bad, linkDown := r.refreshSwitchesFirst(ctx, e, append(append(slices.Clone(ports), idle...), grpPorts...), cabled)
	sw.Timings["refresh"] = time.Since(t)
	unread := map[*fabric.Port]bool{}
	for _, p := range linkDown {
		// Not asked: its switch end reads no link, which the checks
		// judge (link.down). Its own state is not known, and nothing
		// is sent to it later (a NodeInfo, its counters): the gate
		// does not wait on a port that cannot answer, and does not
		// list it unread, as check does not read an HCA behind a
		// port without a link.
		p.Unreached |= fabric.UnreachedInfo
		unread[p] = true
	}
	notRead := func(bad []fabric.Unreachable) {
		for _, u := range bad {
			sw.Complete = false
			where := fmt.Sprintf("0x%016x port %d", u.FromGUID, u.FromPort)
			if n := f.NodeByGUID(u.FromGUID); n != nil {
				where = fmt.Sprintf("%s port %d", n.Description, u.FromPort)
				// Its state now is unknown: the snapshot's is not judged
				// as if it were read (could not look).
				if p := portOf(n, u.FromPort); p != nil && (u.What == fmt.Sprintf("PortInfo %d", u.FromPort) || u.What == fabric.WhatNoLID) {
					p.Unreached |= fabric.UnreachedInfo
					unread[p] = true
				}
			}
			un := report.Unreached{What: u.What, Where: where, Reason: u.Reason}.ReadFailed(u.Err)
			if sw := r.noTableOnRoute(f.NodeByGUID(u.FromGUID), o.TablesNotInFile); sw != nil && un.Failure == report.NoAnswer {
				un.Failure = ""
				un.Reason = fmt.Sprintf("%s %s, whose %s", NoTableOnRoute, sw.Description, strings.TrimPrefix(o.TablesNotInFile[sw.GUID], "its "))
			}
			sw.Unreached = append(sw.Unreached, un)
		}
	}
	notRead(bad)
	// The LIDs and LMCs are the ones read now: the lookups by LID (and
	// which LIDs are shared, addr.duplicate-lid) are made again from
	// them, not kept from the snapshot's (an LMC taken since the sweep
	// whose range covers another port's LID passed the gate).
	f.Reindex()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	// The ports whose far end did not answer NodeInfo in the sweep f
	// holds: no link in f, but not for want of a cable (trial T4).
	type portKey struct {
		guid uint64
		num  uint8
	}
	farEnd := map[portKey]string{}
	wheres := f.UnreachableWheres()
	for i, u := range f.Unreachable {
		if u.What == "NodeInfo" && u.FromGUID != 0 {
			farEnd[portKey{u.FromGUID, u.FromPort}] = wheres[i]
		}
	}
	onRoutes := map[string]bool{} // own sweep's NodeInfo entries a route leads to
	onRoute := map[*fabric.Port]bool{}
	for _, p := range ports {
		onRoute[p] = true
	}
	for _, p := range append(slices.Clone(ports), idle...) {
		if noLink[p] && !unread[p] && p.Remote == nil && p.PhysState == mad.PhysLinkUp {
			if where, ok := farEnd[portKey{p.Node.GUID, p.Num}]; ok {
				p.Unreached |= fabric.UnreachedPeer
				sw.Complete = false
				if o.Swept != nil {
					// The gate's own sweep lists that NodeInfo: said
					// once, there, as on the job's routes.
					onRoutes[where] = true
					continue
				}
				sw.Unreached = append(sw.Unreached, report.Unreached{What: "link", Where: fmt.Sprintf("%s port %d", p.Node.Description, p.Num),
					Reason: "the port is up now but its far end (" + where + ") " + FarEndSilent + ", so what is behind it is unknown"})
				continue
			}
			// A live route goes out of a port the sweep saw without a
			// cable: what is behind it was never read (the model's
			// UnreachedPeer, so no check calls it a dead end).
			p.Unreached |= fabric.UnreachedPeer
			sw.Complete = false
			reason := "the port is up now but had no link in the snapshot, so what is behind it is unknown: run 'ibdoctor sweep'"
			if !onRoute[p] {
				reason = "the port is up now but had no link in the snapshot: " + BackSinceSweep + ", so what is behind it is unknown and the sweep's verdicts on its switch are not the fabric's; run 'ibdoctor sweep'"
			}
			sw.Unreached = append(sw.Unreached, report.Unreached{What: "link", Where: fmt.Sprintf("%s port %d", p.Node.Description, p.Num), Reason: reason})
		}
	}
	// The cables the live routes are followed over, as they are now: a
	// route over a cable that moved since the sweep is not judged.
	t = time.Now()
	cablesBad, cablesStale, cablesMoved := r.cables(ctx, e, &placer{r: r, e: e, snap: snap, avoid: avoidOf(ports, unread)}, unread)
	sw.Timings["cables"] = time.Since(t)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if len(cablesBad) > 0 {
		sw.Complete = false
		sw.Unreached = append(sw.Unreached, cablesBad...)
	}
	// The job's HCAs' NodeGUIDs as they are now: one that answers with
	// another node's GUID since the sweep is a duplicate GUID
	// (topology.duplicate-guid), which PortInfo does not show (trial T4).
	t = time.Now()
	dups, badGUID, moved := r.guids(ctx, e, snap, nodes, silentNodes(unread))
	sw.Timings["nodeinfo"] = time.Since(t)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	f.DuplicateGUIDs = append(f.DuplicateGUIDs, dups...)
	if len(badGUID) > 0 {
		sw.Complete = false
		sw.Unreached = append(sw.Unreached, badGUID...)
	}
	// The switches read by LID, likewise: an SM that reassigned LIDs
	// may have moved theirs, and then their tables and ports as read
	// were another switch's (a false routing.loop and link.down).
	t = time.Now()
	swMoved, badSwitch := r.switchIDs(ctx, e, snap, sc.Switches, silentNodes(unread))
	sw.Timings["nodeinfo"] += time.Since(t)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if len(badSwitch) > 0 {
		sw.Complete = false
		sw.Unreached = append(sw.Unreached, badSwitch...)
	}
	var lidsMoved string
	t = time.Now()
	gone, badLID := r.lidsGone(ctx, e, snap, nodes, was, unread, cabled, moved)
	sw.Timings["nodeinfo"] += time.Since(t)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if len(badLID) > 0 {
		sw.Complete = false
		sw.Unreached = append(sw.Unreached, badLID...)
	}
	if moved = append(append(moved, swMoved...), gone...); len(moved) > 0 {
		// The SM reassigned LIDs since the sweep: what was read by a
		// moved LID is another node's, and the routes followed to the
		// snapshot's LIDs lead to other nodes. The moved HCAs are read
		// again where they answered, by directed route; the scope keeps
		// the routes to the LIDs that still answer as their HCAs; the
		// routes and LIDs are not judged (could not decide).
		t = time.Now()
		var again []*fabric.Port
		notTo := map[*fabric.Port]bool{}
		switchMoved := false
		for _, m := range moved {
			for _, p := range m.node.Ports {
				if p == nil {
					continue
				}
				if m.node.Type != mad.NodeSwitch && p.Num != 0 {
					notTo[p] = true
				}
				switch {
				case !sc.Ports[p] || unread[p]:
				case m.path == nil:
					// Its place holds another node: not read at all.
					p.Unreached |= fabric.UnreachedInfo
					unread[p] = true
				default:
					// Port 0 too: a switch's counters are read at the
					// LID it has now.
					again = append(again, p)
				}
			}
			if m.node.Type == mad.NodeSwitch {
				switchMoved = true
			}
			if m.path != nil {
				m.node.Path, r.dr[m.node] = m.path, true
			}
		}
		if switchMoved {
			// The routes were followed on another switch's table: none
			// is known, and the scope keeps the job's own cables.
			for _, n := range nodes {
				for _, p := range n.Ports {
					if p != nil && p.Num != 0 {
						notTo[p] = true
					}
				}
			}
		}
		notRead(r.refresh(ctx, e, again))
		for _, p := range again {
			// Read down by a moved LID (another node's port), up now.
			if q := cabled[p]; q != nil && p.Remote == nil && q.Remote == nil && p.PhysState.LinkUp() && q.PhysState.LinkUp() {
				p.Remote, q.Remote = q, p
			}
		}
		f.Reindex()
		sw.Timings["refresh"] += time.Since(t)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		sc = checks.ScopeExcept(f, nodes, notTo)
		baselinePorts(sc, base, f)
		ports = sortedPorts(sc)
		lidsMoved = movedReason(moved)
		isls = slices.DeleteFunc(isls, func(l [2]*fabric.Port) bool { return !sc.Ports[l[0]] && !sc.Ports[l[1]] })
	}
	addLinks(base, isls)
	// The job's P_Key tables as they are now: hosts that share no
	// partition cannot talk, and the job must not start.
	t = time.Now()
	inScope := maps.Clone(sc.Ports)
	maps.DeleteFunc(inScope, func(p *fabric.Port, _ bool) bool { return unread[p] })
	sw.Partitions = r.partitions(ctx, e, pkeyread.Ports(f, inScope))
	sw.Timings["partitions"] = time.Since(t)
	sw.NotePartitionsUnread()
	sw.FirmwareNotRead = NoFirmware
	sw.ARNotRead = NoAR
	if o.Counters {
		t := time.Now()
		// A port whose PortInfo did not answer does not answer PerfMgt
		// either (it is listed unread already): no timeouts for it.
		read := slices.DeleteFunc(slices.Clone(ports), func(p *fabric.Port) bool { return unread[p] })
		// Nor a CA read by directed route because the LID-routed SMPs
		// to its switch went unanswered: PerfMgt goes by LID only, its
		// request would end through that switch and wait out the same
		// loss. Listed unread, saying why. (Unless the switch's LID
		// moved: that is why its LID did not answer.)
		movedNode := map[*fabric.Node]bool{}
		for _, m := range moved {
			movedNode[m.node] = true
		}
		read = slices.DeleteFunc(read, func(p *fabric.Port) bool {
			leaf := r.behindLost[p.Node]
			if movedNode[leaf] {
				leaf = nil
			}
			if leaf != nil {
				sw.Complete = false
				sw.Unreached = append(sw.Unreached, report.Unreached{What: "PortCounters", Where: fmt.Sprintf("%s port %d", p.Node.Description, p.Num),
					Reason: fmt.Sprintf("%s %s, the switch it is cabled to, went unanswered (read by directed route); PerfMgt goes by LID only", LIDWayLost, leaf.Description)})
			}
			return leaf != nil
		})
		for _, p := range ports {
			r.ports[p] = true // re-read now, answered or not
		}
		silence := diagnose.Silence{Fabric: f, From: diagnose.ReadFrom(f, e.Local()), Read: r}
		c, unreached, err := readCounters(ctx, e, f, read, snap, o, silence)
		sw.Timings["counters"] = time.Since(t)
		if err != nil {
			return nil, err // only when ctx ended
		}
		if len(unreached) > 0 {
			sw.Complete = false
			sw.Unreached = append(sw.Unreached, unreached...)
		}
		sw.Counters = c
		if o.Increases != nil {
			sw.CountersBasis = o.CountersBasis
		}
	} else {
		sw.CountersNotRead = o.CountersNotRead
	}
	var swept time.Duration
	if o.Swept != nil {
		// What the job's own reads already list is said once, as the
		// job's (trial G2: a job host's PMA behind a down link was
		// listed twice, the second time as found by the sweep).
		listed := map[[2]string]bool{}
		for _, u := range sw.Unreached {
			listed[[2]string{u.What, u.Where}] = true
		}
		for _, u := range o.Swept.Unreached {
			if listed[[2]string{u.What, u.Where}] {
				continue
			}
			switch {
			case u.OwnLeaf():
				u.Reason += " (this host's leaf: the gate's sweep could not walk the fabric past it)"
			case u.What == "NodeInfo" && onRoutes[u.Where]:
				u.Reason += " (found by the gate's sweep of the whole fabric, on the job's routes: a route leaves toward it)"
			case notWalked && len(unmatched) > 0:
				u.Reason += " (found by the gate's sweep of the whole fabric; the hosts not found may be behind it)"
			default:
				u.Reason += " (found by the gate's sweep of the whole fabric, not on the job's routes as read)"
			}
			sw.Unreached = append(sw.Unreached, u)
		}
		for k, v := range o.Swept.Timings {
			if k != "discovery" {
				k = "sweep " + k
			}
			sw.Timings[k] = v
			swept += v
		}
	}
	// What the snapshot's map no longer says right: the verdicts that
	// rest on it do not run (checks.Snapshot.Stale).
	stale := map[string]string{}
	if lidsMoved != "" {
		stale["lfts"], stale["lids"] = lidsMoved, lidsMoved
	}
	if cablesStale != "" {
		stale["lfts"] = strings.TrimPrefix(stale["lfts"]+"; "+cablesStale, "; ")
	}
	t = time.Now()
	if hasLFT(f) && stale["lfts"] == "" {
		sw.Loads = diagnose.NewLoadsFor(f, nodes)
	}
	cb := checks.BaselineOf(base)
	if cb != nil && o.Baseline != nil {
		// The operator's, as the state dir recorded it (not the
		// snapshot's own links, which stand in without a baseline).
		cb.Accepted = o.Baseline.Accepted
	}
	snapCheck := sw.Snapshot(o.Expect, cb, sc)
	snapCheck.FabricRouting = snap.FabricVerdicts()
	snapCheck.BaselineDesigned = o.BaselineDesigned
	snapCheck.Stale = stale
	snapCheck.MovedCables = cablesMoved
	snapCheck.TablesChanged = tablesChanged
	snapCheck.FabricPart = snap.Partial()
	if len(tablesChanged) > 0 && snapCheck.FabricPart {
		// Read only now: most gates find no table changed.
		pt, err := snap.PortTotals()
		snapCheck.PortTotals = pt
		if err != nil {
			snapCheck.PortTotalsNotRead = err.Error()
		}
	}
	// The job's hosts are compared with all their peers, not only the
	// part of the fabric read for the job (topology.missing-hca). A
	// sweep that did not read everything may lack an HCA it could not
	// look at: the check is told, and reports a missing HCA only where
	// its leaf port was read without a link (trial T0: before, such a
	// census was dropped and gpu012's missing HCA passed the gate).
	// The sweep's summary of the census, when its state has one, spares
	// reading and grouping every host of the fabric (~46k at 49k nodes)
	// to judge the job's: its hosts are looked up in gate.idx. A state
	// dir of an older ibdoctor has none: the census is then built from
	// gate.idx (or the fabric file), the slower way to the same verdict.
	if sum, look := snap.HCASummary(); sum != nil {
		snapCheck.HCASummary, snapCheck.HCALookup = sum, look
	} else if snapCheck.HCAs, err = snap.HCACensus(); err != nil {
		return nil, fmt.Errorf("snapshot: %w (run 'ibdoctor sweep' again)", err)
	}
	snapCheck.HCAsPartial = !snap.Complete
	res, err := checks.Run(snapCheck, o.Only...)
	if err != nil {
		return nil, err
	}
	sw.Timings["checks"] = time.Since(t)
	// A job HCA the baseline has and the fabric lacks, that no finding
	// accounts for (its switch port could not be read, or the switch is
	// gone): the gate could not look at it, so it cannot pass.
	named := map[uint64]bool{}
	for _, fd := range res.Findings {
		for _, en := range fd.Entities {
			named[en.NodeGUID] = true
		}
	}
	for _, n := range base.Nodes {
		if n.Type == mad.NodeSwitch || f.NodeByGUID(n.GUID) != nil || named[n.GUID] {
			continue
		}
		sw.Complete = false
		reason := "in the accepted topology but not in the snapshot, and the switch port it is cabled to could not be judged"
		// Where the sweep got no answer from its place, it is the HCA
		// that did not answer (trial B8): a new sweep does not help. (A
		// gate's own sweep lists that NodeInfo itself.)
		for _, p := range n.Ports {
			if p == nil || p.Remote == nil || o.Swept != nil {
				continue
			}
			if _, ok := farEnd[portKey{p.Remote.Node.GUID, p.Remote.Num}]; ok {
				reason = fmt.Sprintf("not in the snapshot: it %s (behind %s port %d, where the accepted topology has it cabled)", FarEndSilent, p.Remote.Node.Description, p.Remote.Num)
				break
			}
		}
		sw.Unreached = append(sw.Unreached, report.Unreached{What: "HCA", Where: n.Description, Reason: reason})
	}
	sw.Stats = e.Stats()
	total := swept + time.Since(start)
	doc := sw.Document("gate", o.Source, res, o.FailOn)
	doc.Timings["total"] = total.Round(time.Millisecond).String()
	hosts := make([]string, 0, len(nodes))
	for _, n := range nodes {
		hosts = append(hosts, n.Description)
	}
	if o.Baseline != nil {
		// A job HCA only the accepted topology has (its link was down
		// at the sweep) is the job's all the same: link.down names it,
		// and a prolog drains the hosts of scope.hosts that findings
		// name (trial G5: a host whose only HCA was gone was not).
		inBase, _ := Resolve(base, o.Hosts, o.NameMap)
		for _, n := range inBase {
			if n.Type != mad.NodeSwitch && f.NodeByGUID(n.GUID) == nil && !slices.Contains(hosts, n.Description) {
				hosts = append(hosts, n.Description)
			}
		}
	}
	jobHosts := map[string]bool{}
	for _, h := range o.Hosts {
		jobHosts[h] = true
	}
	doc.Scope = &report.ScopeSummary{
		Hosts: hosts, JobHosts: len(jobHosts) - len(unmatched), Unmatched: unmatched, NotWalked: notWalked && len(unmatched) > 0, Ports: len(sc.Ports), Switches: len(sc.Switches),
		Snapshot: snap.Source, SnapshotAt: snap.TakenAt.Format(time.RFC3339), SnapshotComplete: snap.Complete,
		OwnSweep: o.Swept != nil, FabricPart: snap.Partial(), LiveReads: len(ports), LFTBlocks: blocks,
	}
	if len(o.Hosts) == 0 {
		doc.Status = "undecided"
	}
	return doc, nil
}

// silentNodes are the nodes of the ports in unread.
func silentNodes(unread map[*fabric.Port]bool) map[*fabric.Node]bool {
	out := map[*fabric.Node]bool{}
	for p := range unread {
		out[p.Node] = true
	}
	return out
}

// LIDWayLost begins the reason a gate did not read the counters of a
// CA whose switch did not answer SMPs by LID.
const LIDWayLost = "not read: the LID-routed SMPs to"

// BackSinceSweep says a port of the job's switches, off its routes, that
// the snapshot has without a link is up now (the prolog's summary
// groups those ports by it).
const BackSinceSweep = "a cable back (or added) since the sweep"

// NoTableOnRoute begins the reason of a read by LID that crossed a
// switch whose forwarding table the --sim/--lfts file does not give.
const NoTableOnRoute = "not read by LID: the route to it crosses"

// FarEndSilent says, in an unread entry, that the snapshot's sweep got
// no NodeInfo answer from behind a port: a node that did not answer, not
// a cable the sweep missed (trial B8).
const FarEndSilent = "did not answer the snapshot's sweep"

// SilentBehind gives the port ("leaf01/9") an HCA entry's reason says the
// HCA did not answer the snapshot's sweep behind, if it says so.
func SilentBehind(reason string) (string, bool) {
	_, rest, ok := strings.Cut(reason, FarEndSilent+" (behind ")
	if !ok {
		return "", false
	}
	at, _, ok := strings.Cut(rest, ", where ")
	if !ok {
		return "", false
	}
	return strings.Replace(at, " port ", "/", 1), true
}

// idlePorts are the ports without a link in the snapshot and not up in
// it, off the scope, of the job's switches: those its hosts' HCAs are cabled to (in the
// snapshot or the baseline), and those the sweep's topology.oversubscribed
// verdicts name that the scope holds.
func idlePorts(f *fabric.Fabric, hosts []*fabric.Node, base *fabric.Fabric, sc *checks.Scope, v *checks.FabricVerdicts) []*fabric.Port {
	sws := map[*fabric.Node]bool{}
	for _, h := range hosts {
		for _, p := range h.Ports {
			if p != nil && p.Remote != nil && p.Remote.Node.Type == mad.NodeSwitch {
				sws[p.Remote.Node] = true
			}
		}
	}
	for _, n := range base.Nodes {
		if n.Type == mad.NodeSwitch {
			if m := f.NodeByGUID(n.GUID); m != nil {
				sws[m] = true
			}
		}
	}
	if v != nil {
		for _, fd := range v.Findings {
			if fd.Check != "topology.oversubscribed" {
				continue
			}
			for _, en := range fd.Entities {
				if n := f.NodeByGUID(checks.EntityGUID(en)); n != nil && en.Role == "switch" && sc.Switches[n] {
					sws[n] = true
				}
			}
		}
	}
	var out []*fabric.Port
	for n := range sws {
		for _, p := range n.Ports {
			// Not up at the sweep: one up then without a peer had a far
			// end that did not answer (the sweep's incompleteness).
			if p != nil && p.Num != 0 && p.Remote == nil && !sc.Ports[p] && p.PhysState != mad.PhysLinkUp {
				out = append(out, p)
			}
		}
	}
	slices.SortFunc(out, func(a, b *fabric.Port) int {
		if a.Node.GUID != b.Node.GUID {
			if a.Node.GUID < b.Node.GUID {
				return -1
			}
			return 1
		}
		return int(a.Num) - int(b.Num)
	})
	return out
}

// baselinePorts adds to sc the switch ports the baseline has the job's
// HCAs cabled to: the job's too, cable or not, they are re-read and
// judged.
func baselinePorts(sc *checks.Scope, base, f *fabric.Fabric) {
	for _, l := range base.Links() {
		if l.A.Node.Type != mad.NodeSwitch {
			l.A, l.B = l.B, l.A
		}
		if l.A.Node.Type != mad.NodeSwitch || l.B.Node.Type == mad.NodeSwitch {
			continue
		}
		if n := f.NodeByGUID(l.A.Node.GUID); n != nil {
			if p := portOf(n, l.A.Num); p != nil {
				sc.Ports[p] = true
				sc.Switches[n] = true
				if n.Ports[0] != nil {
					sc.Ports[n.Ports[0]] = true
				}
			}
		}
	}
}

// sortedPorts are sc's ports but switches' port 0, by node GUID and number.
func sortedPorts(sc *checks.Scope) []*fabric.Port {
	var ports []*fabric.Port
	for p := range sc.Ports {
		if p.Num != 0 {
			ports = append(ports, p)
		}
	}
	slices.SortFunc(ports, func(a, b *fabric.Port) int {
		if a.Node.GUID != b.Node.GUID {
			if a.Node.GUID < b.Node.GUID {
				return -1
			}
			return 1
		}
		return int(a.Num) - int(b.Num)
	})
	return ports
}

// movedReason is why the checks of routes and LIDs do not run once the
// gate found LIDs moved: each moved LID named once, the first few.
func movedReason(moved []movedLID) string {
	ms := slices.Clone(moved)
	slices.SortFunc(ms, func(a, b movedLID) int { return int(a.lid) - int(b.lid) })
	var said []string
	for _, m := range ms[:min(3, len(ms))] {
		said = append(said, m.says())
	}
	return "the LIDs changed since the sweep (" + words.FirstOf(said, len(ms)) + "): routes followed to the snapshot's LIDs lead to other nodes and its LIDs are not the fabric's; run 'ibdoctor sweep'"
}

// jobLinks copies the hosts' nodes and the nodes they are cabled to, with
// just those links: the reference a gate judges the hosts' links against
// when there is no accepted topology.
func jobLinks(f *fabric.Fabric, hosts []*fabric.Node) *fabric.Fabric {
	out := &fabric.Fabric{}
	copies := map[*fabric.Node]*fabric.Node{}
	cp := func(n *fabric.Node) *fabric.Node {
		if c := copies[n]; c != nil {
			return c
		}
		c := &fabric.Node{Type: n.Type, GUID: n.GUID, SystemImageGUID: n.SystemImageGUID, Description: n.Description, Ports: make([]*fabric.Port, len(n.Ports))}
		copies[n] = c
		out.Nodes = append(out.Nodes, c)
		return c
	}
	for _, h := range hosts {
		hc := cp(h)
		for _, p := range h.Ports {
			if p == nil || int(p.Num) >= len(h.Ports) {
				continue
			}
			a := copyPort(hc, p)
			if p.Remote != nil && int(p.Remote.Num) < len(p.Remote.Node.Ports) {
				b := copyPort(cp(p.Remote.Node), p.Remote)
				a.Remote, b.Remote = b, a
			}
		}
	}
	out.Reindex()
	return out
}

// addLinks adds to base the links between copies of their ends' nodes
// (made when base has none of that GUID), unless base has the port linked.
func addLinks(base *fabric.Fabric, links [][2]*fabric.Port) {
	if len(links) == 0 {
		return
	}
	node := func(n *fabric.Node) *fabric.Node {
		if c := base.NodeByGUID(n.GUID); c != nil {
			return c
		}
		c := &fabric.Node{Type: n.Type, GUID: n.GUID, SystemImageGUID: n.SystemImageGUID, Description: n.Description, Ports: make([]*fabric.Port, len(n.Ports))}
		base.Nodes = append(base.Nodes, c)
		base.Reindex()
		return c
	}
	for _, l := range links {
		a, b := copyPort(node(l[0].Node), l[0]), copyPort(node(l[1].Node), l[1])
		if a == nil || b == nil || a.Remote != nil || b.Remote != nil {
			continue
		}
		a.Remote, b.Remote = b, a
	}
	base.Reindex()
}

func portOf(n *fabric.Node, num uint8) *fabric.Port {
	if int(num) < len(n.Ports) {
		return n.Ports[num]
	}
	return nil
}

// copyPort returns c's port numbered as p, made as a copy of p without
// its cable when c has none yet; nil when c has no such port number.
func copyPort(c *fabric.Node, p *fabric.Port) *fabric.Port {
	if int(p.Num) >= len(c.Ports) {
		return nil
	}
	if c.Ports[p.Num] == nil {
		q := *p
		q.Node, q.Remote = c, nil
		c.Ports[p.Num] = &q
	}
	return c.Ports[p.Num]
}

// walkStopped: the fabric the gate judges from was not walked whole, a
// node (or the discovery itself) having failed NodeInfo: in the gate's own
// sweep, or as the snapshot's fabric recorded it (a fabric built from
// gate.idx has none: Snapshot.WalkStopped says it for the index).
func walkStopped(f *fabric.Fabric, swept *diagnose.Sweep) bool {
	if swept != nil {
		for _, u := range swept.Unreached {
			if u.What == "NodeInfo" || u.What == "discovery" {
				return true
			}
		}
	}
	for _, u := range f.Unreachable {
		if u.What == "NodeInfo" {
			return true
		}
	}
	return false
}
