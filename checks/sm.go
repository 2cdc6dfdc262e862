package checks

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/words"
	"github.com/ibdoctor/ibdoctor/mad"
)

func init() {
	register(Check{
		ID:      "sm.no-master",
		Summary: "no subnet manager has brought the fabric up: every physically up port is still in Init, without a LID (the root cause of one link.down per link, which it folds in)",
		Needs:   []string{"topology", "sm-recorded"},
		run:     (*Snapshot).noMasterSM,
	})
	register(Check{
		ID:      "sm.multiple-masters",
		Summary: "more than one subnet manager answers SMInfo as master on one subnet",
		Needs:   []string{"sm", "sm-recorded", "whole-fabric"},
		run:     (*Snapshot).multipleMasters,
	})
	register(Check{
		ID:      "sm.stalled",
		Summary: "the master subnet manager's ActCount did not advance between two SMInfo reads (--interval): it answers but does no work",
		Needs:   []string{"sm-interval", "whole-fabric"},
		run:     (*Snapshot).stalledSM,
	})
	register(Check{
		ID:      "sm.priority",
		Summary: "a standby subnet manager outranks the master (higher SMInfo priority: it should have taken over), or shares the master's priority (failover falls to the GUIDs)",
		Needs:   []string{"sm", "sm-recorded", "whole-fabric"},
		run:     (*Snapshot).smPriority,
	})
	register(Check{
		ID:      "sm.mkey-policy",
		Summary: "ports show different M_Key policies (PortInfo protection bits and lease period): SMs configured differently have swept the fabric",
		Needs:   []string{"topology", "mkey", "whole-fabric"},
		run:     (*Snapshot).mkeyPolicies,
	})
	register(Check{
		ID:      "sm.stale-master-lid",
		Summary: "active ports name a master SM LID (PortInfo MasterSMLID) where no master subnet manager runs",
		Needs:   []string{"sm", "sm-recorded", "whole-fabric"},
		run:     (*Snapshot).staleMasterLID,
	})
}

// SMReading is what one port that advertises a subnet manager (PortInfo
// IsSM) answered to SMInfo. Reason set means it did not answer: the port
// is unreached, which says nothing about whether its SM is master.
type SMReading struct {
	Port   *fabric.Port // a CA's port, or a switch's port 0
	Info   mad.SMInfo
	At     time.Time
	Reason string
	// Again is a second SMInfo read after the counter interval (nil
	// when only one was taken); Between is the time between the two.
	Again       *mad.SMInfo
	Between     time.Duration
	AgainReason string
}

// SMView is what the sm.* checks read besides the topology: the SMInfo
// readings of every port that advertises an SM. Nil in a Snapshot means
// SMInfo was not read (a saved file, not a live sweep).
type SMView struct {
	Readings []SMReading
	// AgainNotRead, when not empty, says why SMInfo cannot be read a
	// second time whatever the flags: a fabric file records no SM.
	AgainNotRead string
}

func (r SMReading) answered() bool { return r.Reason == "" }

// notReadTwice says why no SM's SMInfo was read twice, "" when one was.
// It advises --interval only where that would help: a fabric file
// records no SM, and a second read that went unanswered was tried.
func (v *SMView) notReadTwice() string {
	if v == nil {
		return "SMInfo was not read (a live sweep reads it)"
	}
	if v.readTwice() {
		return ""
	}
	if v.AgainNotRead != "" {
		return v.AgainNotRead
	}
	answered := 0
	for _, r := range v.Readings {
		if r.AgainReason != "" {
			return "the second SMInfo read was not answered: " + r.AgainReason
		}
		if r.answered() {
			answered++
		}
	}
	switch {
	case len(v.Readings) == 0:
		// Worded as read, true of a live fabric (an SM that exited) and
		// of a file alike (trial A7: "a fabric file records none" on ibsim).
		return "no port advertises a subnet manager (none has IsSM in its CapabilityMask), so there is no SMInfo to read twice"
	case answered == 0:
		return "no subnet manager answered SMInfo, so there is nothing to read twice"
	}
	return "needs two SMInfo reads (add --interval)"
}

// readTwice reports whether any SM answered both reads.
func (v *SMView) readTwice() bool {
	for _, r := range v.Readings {
		if r.Again != nil {
			return true
		}
	}
	return false
}

// smName names an SM by its port: "gpu001 mlx5_0/1 (LID 1)".
func (s *Snapshot) smName(p *fabric.Port) string {
	e := s.entityOf(p, "")
	if e.LID != 0 {
		return fmt.Sprintf("%s (LID %d)", e, e.LID)
	}
	return e.String()
}

// upPorts counts the ports whose link is physically up (a switch's port 0
// not counted: it is Active with or without an SM) and how many of those
// are Active, in Init or Armed, and without a LID.
type portCensus struct {
	up, active, init, noLID int
	sample                  []*fabric.Port
}

func census(f *fabric.Fabric) portCensus { return censusOf(f, nil) }

// censusOf is census over the ports in (all when nil): a gate's scope,
// the ports it re-read live — the rest of its snapshot is the sweep's
// and says nothing about whether an SM still runs.
func censusOf(f *fabric.Fabric, in map[*fabric.Port]bool) portCensus {
	var c portCensus
	for _, n := range f.Nodes {
		for i, p := range n.Ports {
			if p == nil || (n.Type == mad.NodeSwitch && i == 0) || p.PhysState != mad.PhysLinkUp || (in != nil && !in[p]) {
				continue
			}
			c.up++
			switch p.State {
			case mad.PortStateActive, mad.PortStateActiveDefer:
				c.active++
			case mad.PortStateInit, mad.PortStateArmed:
				c.init++
				if len(c.sample) < 3 {
					c.sample = append(c.sample, p)
				}
			}
			lid := p.LID
			if n.Type == mad.NodeSwitch && n.Ports[0] != nil {
				lid = n.Ports[0].LID
			}
			if lid == 0 {
				c.noLID++
			}
		}
	}
	return c
}

// noMasterSM is the root cause behind a fabric where nothing is Active:
// no SM ever assigned LIDs and activated the ports. Without this finding
// the symptom is one link.down per link.
func (s *Snapshot) noMasterSM() []Finding {
	var in map[*fabric.Port]bool
	if s.Scope != nil {
		in = s.Scope.Ports
	}
	c := censusOf(s.Fabric, in)
	if c.up == 0 || c.active > 0 || c.init == 0 {
		return nil
	}
	var masters, others, unreached []string
	if s.SM != nil {
		for _, r := range s.SM.Readings {
			switch {
			case !r.answered():
				unreached = append(unreached, s.smName(r.Port)+": "+r.Reason)
			case r.Info.State == mad.SMMaster:
				masters = append(masters, s.smName(r.Port))
			default:
				others = append(others, fmt.Sprintf("%s %s (priority %d)", s.smName(r.Port), r.Info.State, r.Info.Priority))
			}
		}
	}
	var sms []*fabric.Port
	if s.SM != nil {
		for _, r := range s.SM.Readings {
			sms = append(sms, r.Port)
		}
	}
	title := "No subnet manager is running: every port is stuck in Init without a LID, no traffic can pass"
	if c.noLID == 0 {
		// An SM assigned the LIDs, then died, and the links retrained.
		title = "No subnet manager is running: every port is stuck in Init (its LID kept from an SM that is gone), no traffic can pass"
	}
	if len(masters) > 0 {
		title = fmt.Sprintf("Master SM %s has not brought any port up: every port is stuck in Init, no traffic can pass", strings.Join(masters, ", "))
	}
	ev := []Evidence{
		{Name: "ports in Init", Value: float64(c.init), Unit: "ports",
			Text: fmt.Sprintf("%d of %d physically up ports are in Init or Armed, none Active (e.g. %s)", c.init, c.up, s.portList(c.sample))},
		{Name: "ports without LID", Value: float64(c.noLID), Unit: "ports",
			Text: fmt.Sprintf("%d of %d have no LID: no SM has assigned addresses", c.noLID, c.up)},
	}
	switch {
	case s.SM == nil:
		ev = append(ev, Evidence{Name: "SMInfo", Text: "SMInfo was not read (not a live sweep): judged from the port states alone"})
	case len(s.SM.Readings) == 0:
		ev = append(ev, Evidence{Name: "SM ports", Text: "no port advertises an SM (PortInfo IsSM): no SM process is attached anywhere"})
	default:
		if len(others) > 0 {
			ev = append(ev, Evidence{Name: "SM ports", Value: float64(len(others)), Text: "SMs found, none master: " + strings.Join(others, "; ")})
		}
		if len(unreached) > 0 {
			ev = append(ev, Evidence{Name: "SM ports unreached", Value: float64(len(unreached)), Text: "SMInfo not answered: " + strings.Join(unreached, "; ")})
		}
	}
	where := "on the hosts meant to run it"
	if len(sms) > 0 {
		names := make([]string, 0, len(sms))
		for _, p := range sms {
			names = append(names, s.entityOf(p, "").String())
		}
		where = "on " + strings.Join(names, ", ")
	}
	ents := make([]Entity, 0, len(sms))
	for _, p := range sms {
		ents = append(ents, s.entityOf(p, "sm"))
	}
	return []Finding{{
		Check:    "sm.no-master",
		Severity: Critical,
		Title:    title,
		Entities: ents,
		Evidence: ev,
		Impact:   Impact{PathShare: 1, Slowdown: 0, Score: 1, Summary: "the whole fabric is down: no port has a LID or is Active until a master SM sweeps"},
		Action:   fmt.Sprintf("Start or restart the subnet manager %s (systemctl status opensm; journalctl -u opensm, /var/log/opensm.log) and wait for 'SUBNET UP'; 'sminfo' must then name a master and 'ibdoctor check' show the ports Active. If an SM runs but stays in discovery, its log says why (a port it cannot reach, an M_Key it does not have).", where),
		Basis:    "topology",
	}}
}

// foldSymptoms folds the findings that a root-cause finding explains
// into its evidence: with no master SM, every Init link's link.down says
// the same thing once per link; a traffic imbalance held back by a
// misrouted switch downstream is that misroute's symptom
// (foldHeldBack).
func (s *Snapshot) foldSymptoms(fs []Finding) []Finding {
	fs = s.foldHeldBack(fs)
	fs = foldMissingHCA(fs)
	fs = foldLostLIDs(fs)
	linkDownCauses(fs)
	fs = foldShortUplinks(fs)
	fs = sweepFolds(fs)
	fs = foldLeafToLeaf(fs)
	fs = foldLinkEvents(fs)
	fs = foldPortCounters(fs)
	fs = s.foldRelayErrors(fs)
	relayCauses(fs)
	root := slices.IndexFunc(fs, func(f Finding) bool { return f.Check == "sm.no-master" })
	if root < 0 {
		return fs
	}
	var folded []string
	n, lost := 0, 0
	out := fs[:0]
	for _, f := range fs {
		if _, init := notActive(f.deadEnd); f.Check == "routing.unreachable" && init {
			// routes lost over those Init links: the same symptom
			lost++
			continue
		}
		if f.Check == "link.down" && len(f.Evidence) > 0 && f.Evidence[0].Name == "PortState" {
			n++
			if len(folded) < 5 && len(f.Entities) > 0 {
				folded = append(folded, f.Entities[0].String())
			}
			continue
		}
		out = append(out, f)
	}
	if n > 0 {
		i := slices.IndexFunc(out, func(f Finding) bool { return f.Check == "sm.no-master" })
		out[i].Evidence = append(out[i].Evidence, Evidence{Name: "link.down folded", Value: float64(n), Unit: "links",
			Text: fmt.Sprintf("%s physically up but not Active (%s): symptoms of this finding, not reported apart", words.Count(n, "link"), words.FirstOf(folded, n))})
	}
	if lost > 0 {
		i := slices.IndexFunc(out, func(f Finding) bool { return f.Check == "sm.no-master" })
		out[i].Evidence = append(out[i].Evidence, Evidence{Name: "routing.unreachable folded", Value: float64(lost),
			Text: fmt.Sprintf("%s lose routes over links left in Init: symptoms of this finding, not reported apart", words.Count(lost, "routing.unreachable finding"))})
	}
	return out
}

func (s *Snapshot) portList(ps []*fabric.Port) string {
	names := make([]string, 0, len(ps))
	for _, p := range ps {
		names = append(names, s.entityOf(p, "").String())
	}
	return strings.Join(names, ", ")
}

func (s *Snapshot) masters() []SMReading {
	var out []SMReading
	seen := map[uint64]bool{}
	for _, r := range s.SM.Readings {
		if r.answered() && r.Info.State == mad.SMMaster && !seen[r.Info.GUID] {
			seen[r.Info.GUID] = true
			out = append(out, r)
		}
	}
	return out
}

// lidOwners maps each LID of f to the port that owns it (a switch's LID
// to its port 0), LMC ranges included.
func lidOwners(f *fabric.Fabric) map[uint16]*fabric.Port {
	m := map[uint16]*fabric.Port{}
	for _, n := range f.Nodes {
		for i, p := range n.Ports {
			if p == nil || p.LID == 0 || (n.Type == mad.NodeSwitch && i != 0) {
				continue
			}
			for l := uint32(p.LID); l < uint32(p.LID)+1<<p.LMC && l < 0xc000; l++ {
				if _, ok := m[uint16(l)]; !ok {
					m[uint16(l)] = p
				}
			}
		}
	}
	return m
}

// masterCensus counts the Active ports naming each MasterSMLID.
func masterCensus(f *fabric.Fabric) map[uint16][]*fabric.Port {
	m := map[uint16][]*fabric.Port{}
	for _, n := range f.Nodes {
		for i, p := range n.Ports {
			if p == nil || p.State != mad.PortStateActive {
				continue
			}
			// A switch's ports share port 0's PortInfo fields for the SM.
			if n.Type == mad.NodeSwitch && i != 0 {
				continue
			}
			m[p.MasterSMLID] = append(m[p.MasterSMLID], p)
		}
	}
	return m
}

func (s *Snapshot) multipleMasters() []Finding {
	if s.Scope != nil {
		return s.sweepSM("sm.multiple-masters")
	}
	ms := s.masters()
	if len(ms) < 2 {
		return nil
	}
	byLID := masterCensus(s.Fabric)
	ents := make([]Entity, 0, len(ms))
	ev := make([]Evidence, 0, len(ms))
	names := make([]string, 0, len(ms))
	for _, r := range ms {
		ents = append(ents, s.entityOf(r.Port, "sm"))
		names = append(names, s.smName(r.Port))
		lid := s.entityOf(r.Port, "").LID
		ev = append(ev, Evidence{Name: "master", Value: float64(r.Info.Priority),
			Text: fmt.Sprintf("%s: SMInfo state Master, GUID 0x%016x, priority %d, ActCount %d; %s %s it as their master", s.smName(r.Port), r.Info.GUID, r.Info.Priority, r.Info.ActCount, words.Count(len(byLID[lid]), "port"), words.Verb(len(byLID[lid]), "name"))})
	}
	return []Finding{{
		Check:    "sm.multiple-masters",
		Severity: Critical,
		Title:    fmt.Sprintf("%d subnet managers are master at once: %s", len(ms), strings.Join(names, ", ")),
		Entities: ents,
		Evidence: ev,
		Impact:   Impact{PathShare: 1, Score: 1, Summary: "two masters reprogram LIDs and routes against each other: ports flap, routes change under running jobs, SA answers disagree"},
		Action:   "Keep one master: stop every SM but the intended one, or give the intended one the highest priority (opensm -p, sm_priority) and the others lower ones so they settle in Standby; check the subnets really are one (same subnet prefix) and that no SM was started by a host's default service. 'sminfo' against each then shows one Master.",
		Basis:    "sminfo",
	}}
}

func (s *Snapshot) stalledSM() []Finding {
	if s.Scope != nil {
		return s.sweepSM("sm.stalled")
	}
	var out []Finding
	for _, r := range s.masters() {
		if r.Again == nil || r.Again.GUID != r.Info.GUID || r.Again.ActCount != r.Info.ActCount {
			continue
		}
		out = append(out, Finding{
			Check:    "sm.stalled",
			Severity: Error,
			Title:    fmt.Sprintf("Master SM %s did no work in %s: its ActCount stayed at %d", s.smName(r.Port), words.Span(r.Between), r.Info.ActCount),
			Entities: []Entity{s.entityOf(r.Port, "sm")},
			Evidence: []Evidence{{Name: "ActCount", Value: float64(r.Info.ActCount),
				Text: fmt.Sprintf("ActCount %d at both SMInfo reads, %s apart (a working SM's count advances with every MAD it sends)", r.Info.ActCount, words.Duration(r.Between))}},
			Impact: Impact{PathShare: 1, Score: 0.5, Summary: "the fabric runs on its last routes, but the SM will not react to a failed link, a new node or a port coming back, and SA queries may hang"},
			Action: "Look at the SM process on that host: is it hung (high CPU, stuck in a sweep, its log stopped)? Restart it, or stop it so a standby SM takes over; 'sminfo' twice a few seconds apart must then show ActCount advancing.",
			Basis:  "sminfo",
		})
	}
	return out
}

func (s *Snapshot) staleMasterLID() []Finding {
	if s.Scope != nil {
		return s.sweepSM("sm.stale-master-lid")
	}
	if census(s.Fabric).active == 0 {
		return nil // nothing Active: sm.no-master's case
	}
	owners := lidOwners(s.Fabric)
	read := map[*fabric.Port]SMReading{}
	for _, r := range s.SM.Readings {
		read[r.Port] = r
	}
	ms := s.masters()
	var masterNames []string
	for _, r := range ms {
		masterNames = append(masterNames, s.smName(r.Port))
	}
	// The SMs alive but not master: with none master, a standby (or one
	// already discovering) is a failover under way, not an SM to start
	// (trial D3).
	var standbys []string
	for _, r := range s.SM.Readings {
		if !r.answered() || (r.Info.State != mad.SMStandby && r.Info.State != mad.SMDiscovering) {
			continue
		}
		act := ""
		if r.Again != nil && r.Again.GUID == r.Info.GUID {
			act = ", ActCount not advancing"
			if r.Again.ActCount != r.Info.ActCount {
				act = ", ActCount advancing"
			}
		}
		e := s.entityOf(r.Port, "")
		standbys = append(standbys, fmt.Sprintf("%s (LID %d, priority %d, %s%s)", e, e.LID, r.Info.Priority, r.Info.State, act))
	}
	var out []Finding
	byLID := masterCensus(s.Fabric)
	lids := make([]uint16, 0, len(byLID))
	for l := range byLID {
		lids = append(lids, l)
	}
	slices.Sort(lids)
	total := 0
	for _, ps := range byLID {
		total += len(ps)
	}
	for _, lid := range lids {
		ports := byLID[lid]
		owner := owners[lid]
		var why string
		switch {
		case lid == 0:
			why = "no LID at all (no SM has told them of a master)"
		case owner == nil && len(s.Fabric.Unreachable) > 0:
			continue // its owner may be what could not be read
		case owner == nil:
			why = "a LID no port of the fabric owns"
		case owner.CapMask&mad.CapIsSM == 0:
			why = fmt.Sprintf("%s, which runs no SM (IsSM is not set in its PortInfo)", s.entityOf(owner, "").String())
		default:
			r, ok := read[owner]
			switch {
			case !ok || !r.answered():
				continue // could not look: unreached, not stale
			case r.Info.State == mad.SMMaster:
				continue
			default:
				why = fmt.Sprintf("%s, whose SM is %s, not master", s.entityOf(owner, "").String(), r.Info.State)
			}
		}
		sev := Error
		tail := "and no SM answers as master anywhere, and no standby SM answers either"
		action := "Start the subnet manager again (systemctl start opensm on the SM hosts); once a master sweeps it rewrites MasterSMLID on every port. If an SM was moved on purpose, make it do a heavy sweep (kill -HUP the opensm process)."
		switch {
		case len(ms) > 0:
			sev = Warning
			tail = "while the master is " + strings.Join(masterNames, ", ")
			action = "The master sweeps and rewrites MasterSMLID on every port; if it does not within a sweep interval, make it do a heavy sweep (kill -HUP the opensm process)."
		case len(standbys) > 0:
			sm := "a standby SM answers at "
			if len(standbys) > 1 {
				sm = "standby SMs answer at "
			}
			tail = "and no SM answers as master anywhere; " + sm + strings.Join(standbys, ", ")
			action = "A failover is under way: the standby takes over once its polling of the gone master times out (OpenSM: sm_sminfo_polling_timeout x polling_retry_number, about 40-60 s by default), then sweeps and rewrites MasterSMLID; check again in a minute ('sminfo'). If it stays Standby, look at it (its log, its priority and this subnet's SM_Key). Meanwhile do not restart the old master: at a higher priority it takes mastership back, a second re-sweep of the fabric."
		}
		slices.SortFunc(ports, func(a, b *fabric.Port) int {
			return cmp.Compare(s.entityOf(a, "").String(), s.entityOf(b, "").String())
		})
		sample := ports[:min(3, len(ports))]
		ents := []Entity{}
		if owner != nil {
			ents = append(ents, s.entityOf(owner, "named-master"))
		}
		for _, p := range sample {
			ents = append(ents, s.entityOf(p, "end"))
		}
		out = append(out, Finding{
			Check:    "sm.stale-master-lid",
			Severity: sev,
			Title:    fmt.Sprintf("%d active ports name master SM LID %d, %s", len(ports), lid, why),
			Entities: ents,
			Evidence: []Evidence{{Name: "ports", Value: float64(len(ports)), Unit: "ports",
				Text: fmt.Sprintf("%d of %d Active ports have MasterSMLID %d (e.g. %s), %s", len(ports), total, lid, s.portList(sample), tail)}},
			Impact: Impact{PathShare: float64(len(ports)) / float64(max(1, total)), Score: 0.05 * float64(len(ports)) / float64(max(1, total)),
				Summary: "traffic still flows on the programmed routes, but traps and SA queries (path records for rdma_cm and MPI connection set-up) go to an SM that is not there, and nothing repairs the fabric after a failure"},
			Action:    action,
			Basis:     "sminfo",
			masterLID: lid,
		})
	}
	return out
}

// smPriority compares the priorities of the SMs that answered with the
// master's. IBA 14.4.1: an SM that finds a master of lower priority asks
// it to hand over, so a standby above the master means the handover
// fails (or the two see different subnets); one at the master's
// priority is legal, but the order of failover is then the GUIDs', not
// the operator's.
func (s *Snapshot) smPriority() []Finding {
	if s.Scope != nil {
		return s.sweepSM("sm.priority")
	}
	ms := s.masters()
	if len(ms) != 1 {
		return nil // none: sm.no-master; several: sm.multiple-masters
	}
	m := ms[0]
	var out []Finding
	var ties []string
	var tieEnts []Entity
	for _, r := range s.SM.Readings {
		if !r.answered() || r.Info.GUID == m.Info.GUID || r.Info.State == mad.SMMaster {
			continue
		}
		switch {
		case r.Info.Priority > m.Info.Priority:
			out = append(out, Finding{
				Check:    "sm.priority",
				Severity: Warning,
				Title:    fmt.Sprintf("%s SM %s (priority %d) outranks master %s (priority %d) but has not taken over", r.Info.State, s.smName(r.Port), r.Info.Priority, s.smName(m.Port), m.Info.Priority),
				Entities: []Entity{s.entityOf(r.Port, "sm"), s.entityOf(m.Port, "master")},
				Evidence: []Evidence{{Name: "priority", Value: float64(r.Info.Priority), Threshold: float64(m.Info.Priority),
					Text: fmt.Sprintf("SMInfo: %s is %s at priority %d (GUID 0x%016x); the master %s is at priority %d (GUID 0x%016x)", s.smName(r.Port), r.Info.State, r.Info.Priority, r.Info.GUID, s.smName(m.Port), m.Info.Priority, m.Info.GUID)}},
				Impact: Impact{PathShare: 1, Score: 0.05, Summary: "the SMs disagree on who should be master: a handover that keeps failing, or a restart of either, moves mastership (and may reprogram the fabric) when nobody expects it"},
				Action: "Decide which SM should be master and give it the highest priority (opensm -p / sm_priority), the others lower ones; if the higher one is meant to lead, look at its log for a failed handover (SM_Key mismatch, the master unreachable), then 'sminfo' against both.",
				Basis:  "sminfo",
			})
		case r.Info.Priority == m.Info.Priority:
			ties = append(ties, s.smName(r.Port))
			tieEnts = append(tieEnts, s.entityOf(r.Port, "sm"))
		}
	}
	if len(ties) > 0 {
		out = append(out, Finding{
			Check:    "sm.priority",
			Severity: Info,
			Title:    fmt.Sprintf("Master SM %s and %s have the same priority %d: which takes over on failover falls to their GUIDs", s.smName(m.Port), strings.Join(ties, ", "), m.Info.Priority),
			Entities: append([]Entity{s.entityOf(m.Port, "master")}, tieEnts...),
			Evidence: []Evidence{{Name: "priority", Value: float64(m.Info.Priority),
				Text: fmt.Sprintf("SMInfo priority %d on the master and %d other SMs (the lowest GUID wins a tie)", m.Info.Priority, len(ties))}},
			Impact: Impact{Score: 0.001, Summary: "none now; the failover order is not the one an operator set"},
			Action: "Give the SMs distinct priorities (opensm -p / sm_priority) in the order they should take over.",
			Basis:  "sminfo",
		})
	}
	return out
}

// mkeyPolicy is one M_Key policy as PortInfo shows it.
type mkeyPolicy struct {
	protect uint8
	lease   uint16
}

func (m mkeyPolicy) String() string {
	return fmt.Sprintf("protection bits %d, lease %d s", m.protect, m.lease)
}

// mkeyPolicies compares the M_Key policy (PortInfo protection bits and
// lease period) of every Active CA port and switch (port 0, which its
// ports share): the master SM sets one policy everywhere, so ports with
// another were swept by an SM configured otherwise (a second SM, an old
// master's leftovers) or never updated. The M_Key itself is hidden once
// protected, so two SMs with different keys and one protection level are
// not told apart.
func (s *Snapshot) mkeyPolicies() []Finding {
	if s.Scope != nil {
		return s.sweepMKeyPolicies()
	}
	by := map[mkeyPolicy][]*fabric.Port{}
	total := 0
	for _, n := range s.Fabric.Nodes {
		for i, p := range n.Ports {
			if p == nil || (n.Type == mad.NodeSwitch) != (i == 0) || p.State != mad.PortStateActive || p.Unreached&fabric.UnreachedInfo != 0 {
				continue
			}
			k := mkeyPolicy{p.MKeyProtect, p.MKeyLease}
			by[k] = append(by[k], p)
			total++
		}
	}
	if len(by) < 2 {
		return nil
	}
	var norm mkeyPolicy
	for k, ps := range by {
		if len(ps) > len(by[norm]) || (len(ps) == len(by[norm]) && k.protect > norm.protect) {
			norm = k
		}
	}
	var odd []*fabric.Port
	var parts []string
	keys := make([]mkeyPolicy, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b mkeyPolicy) int { return cmp.Compare(len(by[b]), len(by[a])) })
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s: %s", words.Count(len(by[k]), "port"), k))
		if k != norm {
			odd = append(odd, by[k]...)
		}
	}
	slices.SortFunc(odd, func(a, b *fabric.Port) int {
		return cmp.Or(strings.Compare(s.nodeName(a.Node), s.nodeName(b.Node)), cmp.Compare(a.Num, b.Num))
	})
	ents := make([]Entity, 0, len(odd))
	names := make([]string, 0, len(odd))
	for _, p := range odd {
		e := s.entityOf(p, "end")
		if p.Num == 0 {
			e = s.nodeEntity(p.Node, "switch")
		}
		ents = append(ents, e)
		if len(names) < 5 {
			names = append(names, e.String())
		}
	}
	other := mkeyPolicy{odd[0].MKeyProtect, odd[0].MKeyLease}.String()
	if len(keys) > 2 {
		other = "other policies"
	}
	return []Finding{{
		Check:    "sm.mkey-policy",
		Severity: Warning,
		Title:    fmt.Sprintf("%d of %d ports %s another M_Key policy (%s) than the fabric's (%s): %s", len(odd), total, words.Verb(len(odd), "run"), other, norm, words.FirstOf(names, len(odd))),
		Entities: ents,
		Evidence: []Evidence{{Name: "policies", Value: float64(len(by)),
			Text: "PortInfo M_Key policy: " + strings.Join(parts, "; ")}},
		Impact: Impact{PathShare: float64(len(odd)) / float64(total), Score: 0.01,
			Summary: "SMs configured with different M_Key policies: the master may be unable to reprogram the odd ports (a Set without their M_Key is refused), so a failover or repair stalls there"},
		Action: "Give every SM the same m_key, m_key_protect_bits and m_key_lease_period (opensm.conf) and let the master re-sweep; find which SM swept the odd ports ('sminfo', the SMs' logs).",
		Basis:  "topology",
	}}
}
