package discover

import (
	"cmp"
	"runtime"
	"slices"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// build turns what was read into a fabric.Fabric: nodes with their ports,
// links from the accepted arrivals, canonical paths, unreachable entries
// and duplicate GUIDs. The result does not depend on the order in which
// answers came back.
func (d *discovery) build() *fabric.Fabric {
	d.mu.Lock()
	defer d.mu.Unlock()
	// The walk is over: what only resolve needed (the per-port arrival
	// maps, the arrivals at known GUIDs) is dropped before the model is
	// made, and each node's PortInfos once its ports are made, so the
	// collector can hand that memory to the model instead of the heap
	// growing by the model's size (9,472 nodes: about 18 MB of walk
	// state, 5 MB of model).
	for _, n := range d.nodes {
		n.out, n.claimed = nil, nil
	}
	d.pending = nil
	// Collect now, while the heap is at the walk's size, so the model is
	// made in what the walk leaves instead of growing the heap past it:
	// peak memory is the walk's rather than walk plus model. One forced
	// cycle over the walk's live state costs a few milliseconds.
	runtime.GC()
	f := &fabric.Fabric{Nodes: make([]*fabric.Node, 0, len(d.nodes))}
	for _, n := range d.nodes {
		d.fabricNode(n)
	}
	for _, a := range d.accepted {
		if a.from == nil || a.target == nil {
			continue
		}
		link(d.port(a.from, a.fromPort, nil), d.port(a.target, a.ni.LocalPortNum, a))
	}
	d.accepted = nil
	// A port whose link is up but whose far end never answered NodeInfo
	// leads somewhere unknown: Remote stays nil, marked so no check reads
	// it as uncabled.
	for _, u := range d.unreachable {
		if u.target == nil && u.from != nil && u.what == "NodeInfo" {
			if fp := d.port(u.from, u.fromPort, nil); fp != nil && fp.Remote == nil {
				fp.Unreached |= fabric.UnreachedPeer
			}
		}
	}
	d.canonicalPaths()
	nodes := slices.Clone(d.nodes)
	slices.SortStableFunc(nodes, func(x, y *node) int {
		return cmp.Or(comparePaths(x.canon, y.canon), cmp.Compare(x.ni.NodeGUID, y.ni.NodeGUID))
	})
	for _, n := range nodes {
		n.fn.Path = append(mad.Path{}, n.canon...) // empty, not nil, for the local node
		f.Nodes = append(f.Nodes, n.fn)
	}

	for _, u := range d.unreachable {
		e := fabric.Unreachable{What: u.what, Reason: errString(u.err), Err: u.err}
		from, port := u.from, u.fromPort
		if u.target != nil {
			e.Path = u.target.canon
			if c := u.target.creator; c != nil {
				from, port = c.from, c.fromPort
			}
		} else if u.from != nil {
			e.Path = u.from.canon.Extend(u.fromPort)
		} else {
			e.Path = slices.Clone(d.opts.Start)
		}
		if from != nil {
			e.FromGUID, e.FromPort = from.ni.NodeGUID, port
		}
		f.Unreachable = append(f.Unreachable, e)
	}
	slices.SortStableFunc(f.Unreachable, func(x, y fabric.Unreachable) int {
		return cmp.Or(comparePaths(x.Path, y.Path), cmp.Compare(x.What, y.What))
	})

	for guid, ns := range d.byGUID {
		if len(ns) < 2 {
			continue
		}
		ns = slices.Clone(ns)
		slices.SortFunc(ns, func(x, y *node) int { return comparePaths(x.canon, y.canon) })
		dup := fabric.DuplicateGUID{GUID: guid}
		for _, n := range ns {
			dup.Paths = append(dup.Paths, n.canon)
			dup.Descs = append(dup.Descs, n.desc)
		}
		f.DuplicateGUIDs = append(f.DuplicateGUIDs, dup)
	}
	slices.SortFunc(f.DuplicateGUIDs, func(x, y fabric.DuplicateGUID) int { return cmp.Compare(x.GUID, y.GUID) })
	return f
}

func (d *discovery) fabricNode(n *node) {
	fn := &fabric.Node{
		Type:              n.ni.NodeType,
		GUID:              n.ni.NodeGUID,
		SystemImageGUID:   n.ni.SystemImageGUID,
		Description:       n.desc,
		DescriptionUnread: n.descLost,
		VendorID:          n.ni.VendorID,
		DeviceID:          n.ni.DeviceID,
		Revision:          n.ni.Revision,
		Ports:             make([]*fabric.Port, int(n.ni.NumPorts)+1),
	}
	n.fn = fn
	if si := n.si; si != nil {
		fn.Switch = &fabric.Switch{
			LinearFDBCap:  si.LinearFDBCap,
			LinearFDBTop:  si.LinearFDBTop,
			MulticastCap:  si.MulticastFDBCap,
			LIDsPerPort:   si.LIDsPerPort,
			EnhancedPort0: si.EnhancedPort0,
			LifeTimeValue: si.LifeTimeValue,
			DefaultPort:   si.DefaultPort,
			PartitionCap:  si.PartitionEnforcementCap,
			MulticastTop:  si.MulticastFDBTop,
		}
	} else if n.ni.NodeType == mad.NodeSwitch {
		fn.Switch = &fabric.Switch{} // SwitchInfo could not be read
	}
	for p, pi := range n.pi {
		if pi != nil {
			d.port(n, uint8(p), nil)
		}
	}
	if n.creator == nil && n.ni.LocalPortNum != 0 {
		d.port(n, n.ni.LocalPortNum, nil) // the start node's own port
	}
	// A port whose PortInfo went unanswered is there, state unknown: a
	// port missing from the model reads as one that does not exist, and
	// a route the table sends out of it as a dead end, where it is one
	// that could not be looked at.
	for p, lost := range n.piLost {
		if lost {
			d.port(n, uint8(p), nil)
		}
	}
	// Every port read has its fabric.Port now; ports made later (by
	// links) were not read.
	n.pi, n.fdr10, n.fdr10Lost, n.piLost = nil, nil, nil, nil
}

// port returns the fabric port p of n, making it if needed; a is the
// arrival through it, if any (a CA port's GUID comes from there).
func (d *discovery) port(n *node, p uint8, a *arrival) *fabric.Port {
	fn := n.fn
	if int(p) >= len(fn.Ports) {
		return nil
	}
	if fp := fn.Ports[p]; fp != nil {
		if a != nil && n.ni.NodeType != mad.NodeSwitch {
			fp.GUID = a.ni.PortGUID
		}
		return fp
	}
	fp := &fabric.Port{Node: fn, Num: p}
	switch {
	case n.ni.NodeType == mad.NodeSwitch:
		fp.GUID = n.ni.PortGUID // switch ports share port 0's GUID
	case a != nil:
		fp.GUID = a.ni.PortGUID
	case n.creator != nil && n.creator.ni.LocalPortNum == p:
		fp.GUID = n.creator.ni.PortGUID
	case n.creator == nil && n.ni.LocalPortNum == p:
		fp.GUID = n.ni.PortGUID
	}
	if int(p) < len(n.pi) && n.pi[p] != nil {
		pi := n.pi[p]
		caps := d.caps(n)
		var fdr10 *mad.MlnxExtPortInfo // n.fdr10 may be short or nil: none read
		if int(p) < len(n.fdr10) {
			fdr10 = n.fdr10[p]
		}
		fp.LID = pi.LID
		fp.LMC = pi.LMC
		fp.State = pi.PortState
		fp.PhysState = pi.PhysState
		fp.WidthActive = pi.LinkWidthActive
		fp.WidthEnabled = pi.WidthEnabled()
		fp.WidthSupported = pi.LinkWidthSupported
		fp.SpeedActive = pi.SpeedActive(caps, fdr10 != nil && fdr10.FDR10Active())
		fp.SpeedEnabled = pi.SpeedEnabled(caps)
		fp.SpeedSupported = pi.SpeedSupported(caps)
		if fdr10 != nil && fdr10.FDR10Enabled() {
			fp.SpeedEnabled |= mad.SpeedFDR10
		}
		if fdr10 != nil && fdr10.FDR10Supported() {
			fp.SpeedSupported |= mad.SpeedFDR10
		}
		fp.NeighborMTU = pi.NeighborMTU
		fp.MTUCap = pi.MTUCap
		fp.CapMask = pi.CapabilityMask
		fp.CapMask2 = pi.CapabilityMask2
		fp.MasterSMLID = pi.MasterSMLID
		fp.VLCap = pi.VLCap
		fp.OperVLs = pi.OperationalVLs
		fp.PKeyEnforce = pkeyEnforce(pi)
		fp.MKeyProtect, fp.MKeyLease = pi.MKeyProtectBits, pi.MKeyLeasePeriod
		if n.ni.NodeType == mad.NodeSwitch && p != 0 && caps == nil {
			// Port 0's CapabilityMask says how to read the extended
			// speed fields; without it HDR would read as QDR. Unknown
			// is left zero so nothing reads a wrong speed.
			fp.Unreached |= fabric.UnreachedSpeed
			fp.SpeedActive, fp.SpeedEnabled, fp.SpeedSupported = 0, 0, 0
		}
		if int(p) < len(n.fdr10Lost) && n.fdr10Lost[p] {
			fp.Unreached |= fabric.UnreachedSpeed // QDR or FDR10: unknown
			fp.SpeedActive = 0
		}
	} else {
		// Made for a link (or the start node) but its PortInfo was not
		// answered: state and rate unknown, not Down.
		fp.Unreached |= fabric.UnreachedInfo
	}
	fn.Ports[p] = fp
	return fp
}

func link(a, b *fabric.Port) {
	if a == nil || b == nil {
		return
	}
	if (a.Remote != nil && a.Remote != b) || (b.Remote != nil && b.Remote != a) {
		return // resolve keeps this from happening; never rewire
	}
	a.Remote, b.Remote = b, a
}

// canonicalPaths gives every node the shortest, then lowest, directed
// route from the start along the links found, through switches only (and
// the local CA's own port).
func (d *discovery) canonicalPaths() {
	for _, n := range d.nodes {
		n.canon = n.path
	}
	if d.start == nil {
		return
	}
	byFabric := make(map[*fabric.Node]*node, len(d.nodes))
	for _, n := range d.nodes {
		byFabric[n.fn] = n
	}
	seen := map[*node]bool{d.start: true}
	d.start.canon = slices.Clone(d.opts.Start)
	queue := []*node{d.start}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if n.ni.NodeType != mad.NodeSwitch && (n != d.start || len(n.canon) > 0) {
			continue
		}
		if len(n.canon) >= d.opts.MaxHops {
			continue
		}
		for p, fp := range n.fn.Ports {
			if p == 0 || fp == nil || fp.Remote == nil {
				continue
			}
			if n.ni.NodeType != mad.NodeSwitch && uint8(p) != n.ni.LocalPortNum {
				continue // from the local CA, only its own port leads out
			}
			m := byFabric[fp.Remote.Node]
			if m == nil || seen[m] {
				continue
			}
			seen[m] = true
			m.canon = n.canon.Extend(uint8(p))
			queue = append(queue, m)
		}
	}
}

// pkeyEnforce is PortInfo's partition enforcement bits as
// fabric.Port.PKeyEnforce.
func pkeyEnforce(pi *mad.PortInfo) uint8 {
	var e uint8
	if pi.PartitionEnforcementInbound {
		e |= fabric.PKeyEnforceIn
	}
	if pi.PartitionEnforcementOutbound {
		e |= fabric.PKeyEnforceOut
	}
	return e
}
