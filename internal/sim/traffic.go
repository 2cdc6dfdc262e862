package sim

import (
	"fmt"
	"slices"

	"github.com/ibdoctor/ibdoctor/mad"
)

// Pattern is how a Traffic's hosts talk to each other.
type Pattern int

const (
	// RingAllReduce: host i sends to host (i+Stride) mod n, the steady
	// state of a ring all-reduce (every host sends to its successor and
	// receives from its predecessor at the same rate).
	RingAllReduce Pattern = iota
	// Pairs: hosts 2i and 2i+1 send to each other.
	Pairs
	// AllToAll: every host sends RateGbps/(n-1) to every other host.
	// Limited to 2048 hosts.
	AllToAll
)

func (p Pattern) String() string {
	switch p {
	case RingAllReduce:
		return "ring-allreduce"
	case Pairs:
		return "pairs"
	case AllToAll:
		return "all-to-all"
	}
	return fmt.Sprintf("Pattern(%d)", int(p))
}

// Traffic is a workload: data flows between host ports, routed over the
// switches' forwarding tables. Each flow offers RateGbps; where the flows
// crossing a link offer more than its active rate, every flow through it
// is slowed to its share (credit-based flow control is lossless), and the
// transmitting port's PortXmitWait grows with the share of time it had
// data but no credits. Flows that hit a missing route or a down port are
// dropped there (PortRcvSwitchRelayErrors at the switch's ingress);
// flows caught in a routing loop are discarded when their lifetime runs
// out (PortXmitDiscards).
type Traffic struct {
	// Hosts are CA ports ("gpu001 mlx5_0", "gpu001 mlx5_0/1", a GUID);
	// empty means every cabled CA port, in fabric order.
	Hosts    []string
	Pattern  Pattern
	Stride   int     // RingAllReduce successor distance; 0 means 1
	RateGbps float64 // offered by each host
}

type trafficRun struct {
	id    int
	t     Traffic
	hosts []hostPort
}

type hostPort struct {
	node int32
	port uint8
}

type flow struct {
	src  hostPort
	dlid uint16
	gbps float64
}

// flowState is the routed traffic: per-port rates are in the counters.
type flowState struct {
	ports []hostPort // ports whose trafRate is set
	// Links is the offered and carried load per directed link, for
	// Sim.LinkLoad.
	links map[uint64]*linkLoad
}

type linkLoad struct {
	offered, carried, capacity float64 // Gb/s
}

func linkKey(ni int32, pi uint8) uint64 { return uint64(ni)<<8 | uint64(pi) }

// AddTraffic starts a workload and returns its id for RemoveTraffic.
// Counters start moving from the current time.
func (s *Sim) AddTraffic(t Traffic) (int, error) {
	if t.RateGbps <= 0 {
		return 0, fmt.Errorf("sim: traffic rate %v Gb/s: give a positive rate", t.RateGbps)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var hosts []hostPort
	if len(t.Hosts) == 0 {
		for i := range s.nodes {
			n := &s.nodes[i]
			if n.typ != mad.NodeCA {
				continue
			}
			for pi := 1; pi < len(n.ports); pi++ {
				if n.ports[pi].remote >= 0 {
					hosts = append(hosts, hostPort{int32(i), uint8(pi)})
				}
			}
		}
	} else {
		for _, h := range t.Hosts {
			ni, pi, err := s.resolvePort(h)
			if err != nil {
				return 0, fmt.Errorf("sim: traffic host: %w", err)
			}
			if s.nodes[ni].typ == mad.NodeSwitch {
				return 0, fmt.Errorf("sim: traffic host %q is a switch; traffic runs between CA ports", h)
			}
			hosts = append(hosts, hostPort{ni, pi})
		}
	}
	if len(hosts) < 2 {
		return 0, fmt.Errorf("sim: traffic needs at least two host ports, have %d", len(hosts))
	}
	if t.Pattern == AllToAll && len(hosts) > 2048 {
		return 0, fmt.Errorf("sim: all-to-all over %d hosts is too many flows; use at most 2048 hosts or a ring", len(hosts))
	}
	if t.Stride == 0 {
		t.Stride = 1
	}
	if t.Stride < 0 || t.Stride%len(hosts) == 0 {
		return 0, fmt.Errorf("sim: ring stride %d over %d hosts sends every host to itself", t.Stride, len(hosts))
	}
	s.trafficID++
	s.traffic = append(s.traffic, &trafficRun{id: s.trafficID, t: t, hosts: hosts})
	s.rerouteLocked()
	return s.trafficID, nil
}

// RemoveTraffic stops a workload; counters keep what it added.
func (s *Sim) RemoveTraffic(id int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, r := range s.traffic {
		if r.id == id {
			s.traffic = append(s.traffic[:i], s.traffic[i+1:]...)
			s.rerouteLocked()
			return
		}
	}
}

// LinkLoad reports the traffic offered to and carried by the link leaving
// port p of node (Gb/s), and its capacity. ok is false when no traffic
// crosses it.
func (s *Sim) LinkLoad(portRef string) (offered, carried, capacity float64, ok bool, err error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ni, pi, err := s.resolvePort(portRef)
	if err != nil {
		return 0, 0, 0, false, err
	}
	if s.flowState == nil {
		return 0, 0, 0, false, nil
	}
	l := s.flowState.links[linkKey(ni, pi)]
	if l == nil {
		return 0, 0, 0, false, nil
	}
	return l.offered, l.carried, l.capacity, true, nil
}

func (s *Sim) flows() []flow {
	var fl []flow
	for _, r := range s.traffic {
		h := r.hosts
		n := len(h)
		lid := func(hp hostPort) uint16 { return s.nodes[hp.node].ports[hp.port].lid }
		switch r.t.Pattern {
		case RingAllReduce:
			for i := range h {
				fl = append(fl, flow{src: h[i], dlid: lid(h[(i+r.t.Stride)%n]), gbps: r.t.RateGbps})
			}
		case Pairs:
			for i := 0; i+1 < n; i += 2 {
				fl = append(fl, flow{src: h[i], dlid: lid(h[i+1]), gbps: r.t.RateGbps})
				fl = append(fl, flow{src: h[i+1], dlid: lid(h[i]), gbps: r.t.RateGbps})
			}
		case AllToAll:
			per := r.t.RateGbps / float64(n-1)
			for i := range h {
				for j := range h {
					if i != j {
						fl = append(fl, flow{src: h[i], dlid: lid(h[j]), gbps: per})
					}
				}
			}
		}
	}
	return fl
}

// Bytes per packet the traffic model assumes (a 4 KiB MTU payload).
const trafficPacketBytes = 4096

// rerouteLocked recomputes every flow's path and rate and the ports'
// traffic rates, after folding the counters to now. Callers hold s.mu
// for writing. It runs after every change that can move traffic.
func (s *Sim) rerouteLocked() {
	now := s.ticks(s.now())
	if old := s.flowState; old != nil {
		for _, hp := range old.ports {
			c := s.nodes[hp.node].ports[hp.port].ctr
			c.fold(now)
			c.trafRate = [numCtrs]float64{}
		}
		s.flowState = nil
	}
	if len(s.traffic) == 0 {
		return
	}
	type routed struct {
		links []int32 // indexes into load
		gbps  float64
		// where it was lost, if it was
		lostAt  hostPort
		lostCtr ctrID
		lost    bool
	}
	fs := &flowState{links: make(map[uint64]*linkLoad)}
	var keys []uint64
	index := make(map[uint64]int32)
	var loads []*linkLoad
	flows := s.flows()
	rs := make([]routed, 0, len(flows))
	var hops []lidHop
	for _, f := range flows {
		if f.dlid == 0 {
			continue
		}
		hops = hops[:0]
		_, _, crossed, why := s.lidRoute(f.src.node, f.src.port, f.dlid, true, &hops)
		r := routed{gbps: f.gbps}
		for hi, h := range hops {
			if h.out == 0 {
				continue
			}
			last := hi == len(hops)-1
			if last && why != "" {
				break // the packet never left this node
			}
			k := linkKey(h.node, h.out)
			li, ok := index[k]
			if !ok {
				p := &s.nodes[h.node].ports[h.out]
				l := &linkLoad{capacity: mad.Rate{Width: p.wAct, Speed: p.sAct}.Gbps()}
				fs.links[k] = l
				li = int32(len(keys))
				index[k] = li
				keys = append(keys, k)
				loads = append(loads, l)
			}
			if slices.Contains(r.links, li) {
				continue // a loop crosses it again; count it once
			}
			r.links = append(r.links, li)
		}
		if why != "" && len(hops) > 0 {
			last := hops[len(hops)-1]
			r.lost = true
			switch {
			case crossed > s.opts.LIDHopLimit:
				// A loop: the packets die of old age in the last switch.
				r.lostAt, r.lostCtr = hostPort{last.node, last.out}, ctrXmitDiscards
			case last.in != 0:
				r.lostAt, r.lostCtr = hostPort{last.node, last.in}, ctrRcvSwitchRelayErrors
			default:
				r.lost = false // never left the source
			}
		}
		rs = append(rs, r)
	}
	for i := range rs {
		for _, li := range rs[i].links {
			loads[li].offered += rs[i].gbps
		}
	}
	touched := make(map[uint64]bool)
	touch := func(ni int32, pi uint8) *counters {
		c := s.ctrs(ni, pi, now)
		if k := linkKey(ni, pi); !touched[k] {
			touched[k] = true
			fs.ports = append(fs.ports, hostPort{ni, pi})
		}
		return c
	}
	for i := range rs {
		share := 1.0
		for _, li := range rs[i].links {
			if l := loads[li]; l.offered > l.capacity {
				share = min(share, l.capacity/l.offered)
			}
		}
		got := rs[i].gbps * share
		for _, li := range rs[i].links {
			loads[li].carried += got
		}
		if rs[i].lost {
			c := touch(rs[i].lostAt.node, rs[i].lostAt.port)
			c.trafRate[rs[i].lostCtr] += got * 1e9 / 8 / trafficPacketBytes
		}
	}
	waitPerSec := float64(1e9) / float64(s.opts.XmitWaitTick.Nanoseconds())
	for i, k := range keys {
		l := loads[i]
		ni, pi := int32(k>>8), uint8(k)
		bytes := l.carried * 1e9 / 8
		words, pkts := bytes/4, bytes/trafficPacketBytes
		c := touch(ni, pi)
		c.trafRate[ctrXmitData] += words
		c.trafRate[ctrXmitPkts] += pkts
		c.trafRate[ctrUnicastXmitPkts] += pkts
		if l.offered > l.capacity && l.offered > 0 {
			c.trafRate[ctrXmitWait] += (1 - l.capacity/l.offered) * waitPerSec
		}
		p := &s.nodes[ni].ports[pi]
		rc := touch(p.remote, p.remotePort)
		rc.trafRate[ctrRcvData] += words
		rc.trafRate[ctrRcvPkts] += pkts
		rc.trafRate[ctrUnicastRcvPkts] += pkts
	}
	s.flowState = fs
}
