package checks

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

func init() {
	register(Check{
		ID:      "partition.isolated",
		Summary: "a host port shares no partition it can talk in with any other host (P_Key tables: two ports talk in a partition both hold when at least one is a full member); with a job, two of its hosts that cannot talk",
		Needs:   []string{"partitions"},
		run:     (*Snapshot).partitionIsolated,
	})
	register(Check{
		ID:      "partition.switch-drops",
		Summary: "a switch port that enforces partitions lacks a partition of the host cabled to it: the host's packets in it are dropped there",
		Needs:   []string{"partitions"},
		run:     (*Snapshot).partitionSwitchDrops,
	})
	register(Check{
		ID:      "partition.job-mismatch",
		Summary: "with a job, some of its hosts lack a partition most of the others hold (their memberships differ)",
		Needs:   []string{"partitions"},
		run:     (*Snapshot).partitionJobMismatch,
	})
}

// PartitionView is the P_Key tables read with SMPs: every host port's,
// and those of the switch ports that enforce partitions (PortInfo
// enforcement bits). A port missing from Tables was not read (Unread
// says why): could not decide, never "no partition".
type PartitionView struct {
	// Tables holds each read port's valid entries, in table order.
	Tables map[*fabric.Port][]mad.PKey
	Unread map[*fabric.Port]string
	// Errs holds an unread port's read error, where there was one: how
	// the report words it (did not answer, refused), not judged.
	Errs map[*fabric.Port]error
}

// pkeySet is a port's partitions: the membership of each (full wins when
// a partition is listed twice).
type pkeySet map[uint16]bool

func setOf(keys []mad.PKey) pkeySet {
	s := pkeySet{}
	for _, k := range keys {
		if k.Valid() {
			s[k.Partition()] = s[k.Partition()] || k.Full()
		}
	}
	return s
}

// canTalk reports whether two ports share a partition in which at least
// one of them is a full member (IBA 10.9.1: limited members cannot talk
// to each other).
func canTalk(a, b pkeySet) bool {
	for p, fullA := range a {
		if fullB, ok := b[p]; ok && (fullA || fullB) {
			return true
		}
	}
	return false
}

func (s pkeySet) String() string {
	ps := make([]uint16, 0, len(s))
	for p := range s {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	var out []string
	for _, p := range ps {
		k := mad.PKey(p)
		m := "limited"
		if s[p] {
			k |= 0x8000
			m = "full"
		}
		out = append(out, fmt.Sprintf("%s (%s)", k, m))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// hostTables returns the host ports whose tables were read, in fabric
// order, with their partitions.
func (s *Snapshot) hostTables() ([]*fabric.Port, map[*fabric.Port]pkeySet) {
	var ports []*fabric.Port
	sets := map[*fabric.Port]pkeySet{}
	for _, n := range s.Fabric.Nodes {
		if !isHostNode(n) {
			continue
		}
		for _, p := range n.Ports {
			if p == nil || p.Num == 0 {
				continue
			}
			keys, ok := s.Partitions.Tables[p]
			if !ok {
				continue
			}
			ports = append(ports, p)
			sets[p] = setOf(keys)
		}
	}
	return ports, sets
}

// partitionIsolated finds, on the whole fabric, the host ports that can
// talk to no other host port; with a job (Scope), the pairs of its hosts
// that cannot talk, which stop the job: its collectives need every pair.
func (s *Snapshot) partitionIsolated() []Finding {
	ports, sets := s.hostTables()
	if s.Scope != nil {
		return s.jobIsolated(ports, sets)
	}
	if len(ports) < 2 {
		return nil
	}
	// Per partition, how many ports hold it and how many in full: a
	// port can talk to someone in it when another port holds it and one
	// of the two is full.
	holders, full := map[uint16]int{}, map[uint16]int{}
	for _, p := range ports {
		for k, f := range sets[p] {
			holders[k]++
			if f {
				full[k]++
			}
		}
	}
	var out []Finding
	for _, p := range ports {
		alone := true
		for k, f := range sets[p] {
			others, fullOthers := holders[k]-1, full[k]
			if f {
				fullOthers--
			}
			if (f && others > 0) || (!f && fullOthers > 0) {
				alone = false
				break
			}
		}
		if !alone {
			continue
		}
		sh := s.pathShare(p)
		share := sh.v
		out = append(out, Finding{
			Check:    "partition.isolated",
			Severity: Error,
			Title:    fmt.Sprintf("%s shares no partition with any other host: it cannot talk to them", s.portName(p)),
			Entities: []Entity{s.entityOf(p, "end")},
			Evidence: []Evidence{{Name: "P_Keys", Value: float64(len(sets[p])),
				Text: fmt.Sprintf("its P_Key table holds %s; no other of the %d host ports read holds one of them with a full member on either side", sets[p], len(ports))}},
			Impact: Impact{PathShare: share, PathShareLowerBound: sh.atLeast, Score: 0.5 * max(share, 1/float64(len(ports))),
				Summary: "every connection to or from this host fails (its packets are dropped at the receiving port's P_Key check)"},
			Action: "Check the subnet manager's partition configuration (OpenSM partitions.conf, UFM partitions): the host's port GUID is missing from the partition the others share, or is listed as limited (not full) where all members are limited. Then 'ibdoctor check' again after the SM's sweep.",
			Basis:  "topology",
		})
	}
	return out
}

// jobIsolated reports the pairs of the job's host ports that share no
// partition to talk in, grouped by the two P_Key sets so a host cut off
// from 63 others is one finding.
func (s *Snapshot) jobIsolated(ports []*fabric.Port, sets map[*fabric.Port]pkeySet) []Finding {
	var job []*fabric.Port
	for _, p := range ports {
		if s.Scope.Hosts[p.Node] {
			job = append(job, p)
		}
	}
	// Group the job's ports by their partitions (most jobs have one or
	// two groups): pairs are judged per pair of groups.
	type group struct {
		set   pkeySet
		ports []*fabric.Port
	}
	var groups []*group
	for _, p := range job {
		key := sets[p].String()
		i := slices.IndexFunc(groups, func(g *group) bool { return g.set.String() == key })
		if i < 0 {
			groups = append(groups, &group{set: sets[p]})
			i = len(groups) - 1
		}
		groups[i].ports = append(groups[i].ports, p)
	}
	var out []Finding
	for i, a := range groups {
		for _, b := range groups[i:] {
			if a == b && len(a.ports) < 2 {
				continue
			}
			if canTalk(a.set, b.set) {
				continue
			}
			pairs := len(a.ports) * len(b.ports)
			if a == b {
				pairs = len(a.ports) * (len(a.ports) - 1) / 2
			}
			what := fmt.Sprintf("%d pairs of the job's hosts cannot talk", pairs)
			if pairs == 1 {
				what = "Two of the job's hosts cannot talk"
			}
			title := fmt.Sprintf("%s: %s and %s share no partition", what, s.hostNames(a.ports, 3), s.hostNames(b.ports, 3))
			if a == b {
				title = fmt.Sprintf("The job's hosts %s cannot talk to each other: they are limited members of every partition they hold", s.hostNames(a.ports, 3))
			}
			ents := make([]Entity, 0, len(a.ports)+len(b.ports))
			for _, p := range a.ports {
				ents = append(ents, s.entityOf(p, "end"))
			}
			if a != b {
				for _, p := range b.ports {
					ents = append(ents, s.entityOf(p, "peer"))
				}
			}
			out = append(out, Finding{
				Check:    "partition.isolated",
				Severity: Critical,
				Title:    title,
				Entities: ents,
				Evidence: []Evidence{{Name: "pairs", Value: float64(pairs),
					Text: fmt.Sprintf("%s hold %s; %s hold %s: no partition both hold with a full member on either side", s.hostNames(a.ports, 5), a.set, s.hostNames(b.ports, 5), b.set)}},
				Impact: Impact{PathShare: 1, Score: 1,
					Summary: "the job cannot start: its collectives need every pair of hosts to talk, and these pairs' packets are dropped at the P_Key check"},
				Action: "Put every host of the job in one partition as a full member (OpenSM partitions.conf, UFM partitions) or run the job on hosts that share one; 'ibdoctor check' lists each port's P_Keys in the evidence.",
				Basis:  "topology",
			})
		}
	}
	return out
}

// partitionSwitchDrops finds the host ports cabled to a switch port that
// enforces partitions and lacks one of the host's: the switch drops the
// host's packets in that partition (inbound from the host, outbound to
// it).
func (s *Snapshot) partitionSwitchDrops() []Finding {
	var out []Finding
	for _, n := range s.Fabric.Nodes {
		if n.Type != mad.NodeSwitch {
			continue
		}
		for _, sp := range n.Ports {
			if sp == nil || sp.Num == 0 || sp.PKeyEnforce == 0 || sp.Remote == nil || !isHostNode(sp.Remote.Node) || !s.inScope(sp) {
				continue
			}
			swKeys, ok := s.Partitions.Tables[sp]
			hostKeys, ok2 := s.Partitions.Tables[sp.Remote]
			if !ok || !ok2 {
				continue // could not decide
			}
			have := setOf(swKeys)
			host := setOf(hostKeys)
			var dropped []string
			kept := 0
			for k, f := range host {
				if _, ok := have[k]; ok {
					kept++
					continue
				}
				key := mad.PKey(k)
				if f {
					key |= 0x8000
				}
				dropped = append(dropped, key.String())
			}
			if len(dropped) == 0 {
				continue
			}
			slices.Sort(dropped)
			sev := Error
			what := "the host's packets in that partition are dropped there"
			if len(dropped) > 1 {
				what = "the host's packets in those partitions are dropped there"
			}
			if kept == 0 {
				sev = Critical
				what = "every partition it holds: the host is cut off"
			}
			var dirs []string
			if sp.PKeyEnforce&fabric.PKeyEnforceIn != 0 {
				dirs = append(dirs, "inbound")
			}
			if sp.PKeyEnforce&fabric.PKeyEnforceOut != 0 {
				dirs = append(dirs, "outbound")
			}
			sh := s.pathShare(sp)
			share := sh.v
			out = append(out, Finding{
				Check:    "partition.switch-drops",
				Severity: sev,
				Title:    fmt.Sprintf("Switch port %s enforces partitions and lacks %s of %s: %s", s.portName(sp), strings.Join(dropped, ", "), s.nodeName(sp.Remote.Node), what),
				Entities: []Entity{s.entityOf(sp, "end"), s.entityOf(sp.Remote, "peer")},
				Evidence: []Evidence{{Name: "partitions dropped", Value: float64(len(dropped)),
					Text: fmt.Sprintf("%s enforces partitions (%s); its P_Key table holds %s, the host port %s holds %s", s.portName(sp), strings.Join(dirs, ", "), have, s.portName(sp.Remote), host)}},
				Impact: Impact{PathShare: share, PathShareLowerBound: sh.atLeast, Score: cmp.Or(share, 0.01),
					Summary: fmt.Sprintf("the host's traffic in %s never leaves its leaf port", strings.Join(dropped, ", "))},
				Action: fmt.Sprintf("The subnet manager did not give %s the host's partitions: check partitions.conf (OpenSM: the switch port needs the partition when enforcement is on; 'no_partition_enforcement' or the port's GUID in the partition), then re-sweep. 'smpquery pkeys' on the switch port shows its table.", s.portName(sp)),
				Basis:  "topology",
			})
		}
	}
	return out
}

// heldKeyText is partition k as the holders' P_Key tables and smpquery
// write it: with the membership bit (0x8001 when all hold it as full
// members), both spellings when the holders differ (trial G8: the bare
// 0x0001 matched nothing an operator could grep for). partitions.conf
// writes the low 15 bits and the membership per port: the action says so.
func heldKeyText(k uint16, full, limited int) string {
	switch {
	case limited == 0:
		return mad.PKey(k | 0x8000).String()
	case full == 0:
		return mad.PKey(k).String()
	}
	return fmt.Sprintf("%s (%d full members) / %s (%d limited)", mad.PKey(k|0x8000), full, mad.PKey(k), limited)
}

// memberships says how the holders hold a partition: "full members",
// "limited members" or both with their counts.
func memberships(full, limited int) string {
	switch {
	case limited == 0:
		return "full members"
	case full == 0:
		return "limited members"
	}
	return fmt.Sprintf("%d full and %d limited members", full, limited)
}

// partitionJobMismatch names the job's hosts that lack a partition most
// of the others hold: they can still talk (else partition.isolated), but
// the job's traffic in that partition cannot reach them.
func (s *Snapshot) partitionJobMismatch() []Finding {
	if s.Scope == nil {
		return nil
	}
	ports, sets := s.hostTables()
	var job []*fabric.Port
	for _, p := range ports {
		if s.Scope.Hosts[p.Node] {
			job = append(job, p)
		}
	}
	if len(job) < 3 {
		return nil
	}
	if len(s.jobIsolated(ports, sets)) > 0 {
		return nil // hosts that cannot talk at all: partition.isolated says it
	}
	count := map[uint16]int{}
	for _, p := range job {
		for k := range sets[p] {
			count[k]++
		}
	}
	var parts []uint16
	for k, c := range count {
		// Most hold it, not all: a partition of half the hosts is a
		// design (storage, a second tenant), not a mismatch.
		if 2*c > len(job) && c < len(job) {
			parts = append(parts, k)
		}
	}
	slices.Sort(parts)
	var out []Finding
	for _, k := range parts {
		var lacking []*fabric.Port
		for _, p := range job {
			if _, ok := sets[p][k]; !ok {
				lacking = append(lacking, p)
			}
		}
		full, limited := 0, 0
		for _, p := range job {
			if f, ok := sets[p][k]; ok && f {
				full++
			} else if ok {
				limited++
			}
		}
		key := heldKeyText(k, full, limited)
		ents := make([]Entity, 0, len(lacking))
		for _, p := range lacking {
			ents = append(ents, s.entityOf(p, "end"))
		}
		out = append(out, Finding{
			Check:    "partition.job-mismatch",
			Severity: Warning,
			Title:    fmt.Sprintf("%d of the job's %d host ports lack partition %s that the others hold: %s", len(lacking), len(job), key, s.hostNames(lacking, 5)),
			Entities: ents,
			Evidence: []Evidence{{Name: "holders", Value: float64(count[k]), Unit: "ports",
				Text: fmt.Sprintf("%d of %d job host ports hold partition %s", count[k], len(job), key)}},
			Impact: Impact{PathShare: float64(len(lacking)) / float64(len(job)), Score: 0.1 * float64(len(lacking)) / float64(len(job)),
				Summary: "if the job runs in that partition (its P_Key index), these hosts cannot join it"},
			Action: fmt.Sprintf("Give these hosts' ports the partition (partitions.conf writes it as %s, the key's low 15 bits, and each port's membership as =full or =limited: the others hold it as %s) or check which P_Key the job uses (NCCL_IB_PKEY, UCX_IB_PKEY).", mad.PKey(k&0x7fff), memberships(full, limited)),
			Basis:  "topology",
		})
	}
	return out
}
