package sim

import (
	"fmt"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Fabric returns a model of the simulated subnet as it is now, faults
// included: what a complete, perfect discovery would find. Every port is
// present (uncabled ones Down/Polling); switches' forwarding tables are
// copies. The result is independent of s.
func (s *Sim) Fabric() *fabric.Fabric {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.exportLocked(true)
}

func (s *Sim) exportLocked(withLFTs bool) *fabric.Fabric {
	f := &fabric.Fabric{Nodes: make([]*fabric.Node, len(s.nodes))}
	for i := range s.nodes {
		n := &s.nodes[i]
		fn := &fabric.Node{
			Type: n.typ, GUID: n.guid, SystemImageGUID: n.sysGUID, Description: n.desc,
			VendorID: n.vendor, DeviceID: n.devID, Revision: n.rev,
			Ports: make([]*fabric.Port, len(n.ports)),
		}
		if sw := n.sw; sw != nil {
			fn.Switch = &fabric.Switch{
				LinearFDBCap: sw.fdbCap, LinearFDBTop: sw.fdbTop, MulticastCap: sw.mcCap,
				LIDsPerPort: sw.lidsPP, EnhancedPort0: sw.enhanced0, LifeTimeValue: sw.lifeTime,
				DefaultPort: sw.defPort, PartitionCap: sw.partCap, MulticastTop: sw.mcTop,
			}
			if withLFTs {
				fn.Switch.LFT = sw.lft.Clone()
			}
		}
		ports := make([]fabric.Port, len(n.ports))
		for pi := range n.ports {
			if pi == 0 && n.typ != mad.NodeSwitch {
				continue
			}
			p := &n.ports[pi]
			lid, lmc := p.lid, p.lmc
			if n.typ == mad.NodeSwitch {
				lid, lmc = n.ports[0].lid, n.ports[0].lmc
			}
			wEn, sEn := p.enabled()
			ports[pi] = fabric.Port{
				Node: fn, Num: uint8(pi), GUID: p.guid, LID: lid, LMC: lmc,
				State: p.state, PhysState: p.phys,
				WidthActive: p.wAct, WidthEnabled: wEn, WidthSupported: p.wSup,
				SpeedActive: p.sAct, SpeedEnabled: sEn, SpeedSupported: p.sSup,
				NeighborMTU: p.nbrMTU, MTUCap: p.mtuCap, CapMask: p.capMask, CapMask2: p.capMask2,
			}
			fn.Ports[pi] = &ports[pi]
		}
		f.Nodes[i] = fn
	}
	for i := range s.nodes {
		for pi := range s.nodes[i].ports {
			p := &s.nodes[i].ports[pi]
			if p.remote >= 0 && f.Nodes[i].Ports[pi] != nil {
				f.Nodes[i].Ports[pi].Remote = f.Nodes[p.remote].Ports[p.remotePort]
			}
		}
	}
	return f
}

// Sweep recomputes every switch's forwarding table with min-hop routing
// over the links as they are now (down links avoided, miswired cables
// followed), as a subnet manager's heavy sweep would. LIDs are kept.
func (s *Sim) Sweep() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.exportLocked(false)
	if err := topology.Route(f); err != nil {
		return fmt.Errorf("sim: sweep: %w", err)
	}
	for i := range s.nodes {
		if sw := s.nodes[i].sw; sw != nil {
			fs := f.Nodes[i].Switch
			sw.lft, sw.lftOwned, sw.lftUnknown = fs.LFT, true, false
			sw.fdbTop = fs.LinearFDBTop
		}
	}
	s.rerouteLocked()
	return nil
}

// KeepRecorded gives f, a fabric discovered over this simulator, what its
// file recorded beyond the topology and the simulator answers as such
// (Recorded).
func (s *Sim) KeepRecorded(f *fabric.Fabric) {
	f.Recorded, f.SMs, f.PKeys = s.Recorded(f)
}

// Recorded is what f, a fabric discovered over this simulator, keeps of
// what its file recorded beyond the topology and the simulator answers as
// such (fabric.Recorded): which inputs, the subnet managers as they answer
// SMInfo and the ports' P_Key tables, so that f saved and read again is
// judged on them too. The ports' PortInfo fields (MasterSMLID, VLs, M_Key,
// enforcement) are discovery's own reading. Inputs the file did not record
// stay unrecorded: the simulator's stand-ins are not saved as read. An SM
// behind a node f does not hold (not reached, a duplicated GUID) leaves
// the SMs unrecorded rather than saved as absent. f is only read.
func (s *Sim) Recorded(f *fabric.Fabric) (rec fabric.Recorded, sms []fabric.RecordedSM, pkeys map[*fabric.Port][]mad.PKey) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	rec = s.recorded
	// port finds the discovered port of simulated node ni, port pn.
	port := func(ni int32, pn uint8) *fabric.Port {
		g := s.nodes[ni].guid
		n := f.NodeByGUID(g)
		if n == nil || len(s.byGUID[g]) != 1 || int(pn) >= len(n.Ports) {
			return nil
		}
		return n.Ports[pn]
	}
	if rec.SMInfo {
		sms = make([]fabric.RecordedSM, 0, len(s.sms)) // recorded: none is not nil
		for _, a := range s.sms {
			p := port(a.node, a.port)
			if p == nil {
				rec.SMInfo, sms = false, nil
				break
			}
			guid := a.guid
			if guid == 0 {
				guid = s.nodes[a.node].ports[a.port].guid
				if s.nodes[a.node].typ == mad.NodeSwitch {
					guid = s.nodes[a.node].guid
				}
			}
			sms = append(sms, fabric.RecordedSM{Port: p, GUID: guid, State: a.state, Priority: a.priority, ActCount: a.act.Load()})
		}
	}
	if rec.PKeys {
		pkeys = map[*fabric.Port][]mad.PKey{}
		for i := range s.nodes {
			for pn := range s.nodes[i].ports {
				sp := &s.nodes[i].ports[pn]
				if sp.pkeyUnknown || len(sp.pkeys) == 0 {
					continue
				}
				if p := port(int32(i), uint8(pn)); p != nil {
					pkeys[p] = append([]mad.PKey(nil), sp.pkeys...)
				}
			}
		}
	}
	return rec, sms, pkeys
}
