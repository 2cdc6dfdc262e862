// Package gate answers a scheduler prolog's question — is the fabric fit
// for a job on these hosts? — from the last sweep's snapshot, re-reading
// live only the ports the job's traffic uses: the hosts' own ports and
// every port on the routes among them.
package gate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/discover"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/ibdoctor/ibdoctor/internal/snapshot"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

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
	// (tests pass a fake clock's).
	Counters  bool
	Interval  time.Duration
	SL        uint8
	PKeyIndex uint16
	Sleep     func(ctx context.Context, d time.Duration) error
	// Swept is the gate's own sweep of the whole fabric when it had no
	// fresh snapshot: its timings count in the gate's, and what it could
	// not read is reported. That does not by itself make the gate
	// undecided: a part of the job's routes behind it shows as a route
	// out of a port with no known peer, or a port that cannot be
	// re-read, and that does.
	Swept *diagnose.Sweep
	// Source names the live connection for the report.
	Source string
	// Now is the time of the gate (default time.Now()).
	Now time.Time
}

// Resolve maps host names to the fabric's nodes: by node-name map when
// given, else by description ("gpu042" matches "gpu042 mlx5_0" ...).
// Hosts that match nothing are returned in unmatched.
func Resolve(f *fabric.Fabric, hosts []string, names fabric.NodeNameMap) (nodes []*fabric.Node, unmatched []string) {
	byMapped := map[string][]*fabric.Node{}
	if len(names) > 0 {
		for _, n := range f.Nodes {
			if name, ok := names[n.GUID]; ok {
				host := strings.Fields(name + " ")[0]
				byMapped[host] = append(byMapped[host], n)
			}
		}
	}
	seen := map[*fabric.Node]bool{}
	for _, h := range hosts {
		ns := byMapped[h]
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
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	f, err := snap.FabricFor(o.Hosts, o.NameMap)
	if err != nil {
		return nil, err
	}
	loaded := time.Since(start)
	nodes, unmatched := Resolve(f, o.Hosts, o.NameMap)
	sw := &diagnose.Sweep{Fabric: f, Complete: true, Taken: o.Now, Timings: map[string]time.Duration{"snapshot": loaded}}
	for _, h := range unmatched {
		sw.Complete = false
		sw.Unreached = append(sw.Unreached, report.Unreached{What: "host", Where: h, Reason: "no node in the fabric has this name (check the node descriptions or --node-name-map)"})
	}
	// The routes as they are now, not as the sweep saw them: the scope
	// (and so what is re-read and judged) follows the live tables.
	t := time.Now()
	blocks, unreached, err := liveRoutes(ctx, e, f, nodes, o.ByLID)
	sw.Timings["routes"] = time.Since(t)
	if err != nil {
		return nil, err // only when ctx ended
	}
	if len(unreached) > 0 {
		sw.Complete = false
		sw.Unreached = append(sw.Unreached, unreached...)
	}
	sc := checks.ScopeFor(f, nodes)
	if snap.Widen(sc.Ports) {
		// A live route left the part of the snapshot read for the job:
		// start again on the whole of it.
		return Run(ctx, snap, e, o)
	}
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
	t = time.Now()
	bad := discover.Refresh(ctx, e, ports, o.ByLID, 0)
	sw.Timings["refresh"] = time.Since(t)
	for _, u := range bad {
		sw.Complete = false
		where := fmt.Sprintf("0x%016x port %d", u.FromGUID, u.FromPort)
		if n := f.NodeByGUID(u.FromGUID); n != nil {
			where = fmt.Sprintf("%s port %d", n.Description, u.FromPort)
		}
		sw.Unreached = append(sw.Unreached, report.Unreached{What: u.What, Where: where, Reason: u.Reason})
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	for _, p := range ports {
		if p.Remote == nil && p.PhysState == mad.PhysLinkUp {
			// A live route goes out of a port the sweep saw without a
			// cable: what is behind it was never read (the model's
			// UnreachedPeer, so no check calls it a dead end).
			p.Unreached |= fabric.UnreachedPeer
			sw.Complete = false
			sw.Unreached = append(sw.Unreached, report.Unreached{What: "link", Where: fmt.Sprintf("%s port %d", p.Node.Description, p.Num),
				Reason: "the port is up now but had no link in the snapshot, so what is behind it is unknown: run 'ibdoctor sweep'"})
		}
	}
	if o.Counters {
		t := time.Now()
		c, unreached, err := readCounters(ctx, e, f, ports, snap, o)
		sw.Timings["counters"] = time.Since(t)
		if err != nil {
			return nil, err // only when ctx ended
		}
		if len(unreached) > 0 {
			sw.Complete = false
			sw.Unreached = append(sw.Unreached, unreached...)
		}
		sw.Counters = c
	}
	var swept time.Duration
	if o.Swept != nil {
		for _, u := range o.Swept.Unreached {
			u.Reason += " (found by the gate's sweep of the whole fabric, not on the job's routes as read)"
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
	t = time.Now()
	if hasLFT(f) {
		sw.Loads = diagnose.NewLoadsFor(f, nodes)
	}
	snapCheck := sw.Snapshot(o.Expect, nil, sc)
	res, err := checks.Run(snapCheck, o.Only...)
	if err != nil {
		return nil, err
	}
	sw.Timings["checks"] = time.Since(t)
	sw.Stats = e.Stats()
	total := swept + time.Since(start)
	doc := sw.Document("gate", o.Source, res, o.FailOn)
	doc.Timings["total"] = total.Round(time.Millisecond).String()
	hosts := make([]string, 0, len(nodes))
	for _, n := range nodes {
		hosts = append(hosts, n.Description)
	}
	doc.Scope = &report.ScopeSummary{
		Hosts: hosts, Unmatched: unmatched, Ports: len(sc.Ports), Switches: len(sc.Switches),
		Snapshot: snap.Source, SnapshotAt: snap.TakenAt.Format(time.RFC3339), LiveReads: len(ports), LFTBlocks: blocks,
	}
	if len(o.Hosts) == 0 {
		doc.Status = "undecided"
	}
	return doc, nil
}
