package checks

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
)

// Undecided is a subject a check could not judge because something the
// judgement needs was not read (a MAD unanswered after the retries): the
// check's verdict there is "could not decide", reported as such — never
// a finding, and never silently counted as healthy.
type Undecided struct {
	Check string
	// Subject is what a finding would be about first: a switch, a port,
	// a host.
	Subject Entity
	// Reason says what was not read.
	Reason string
}

// String is the subject as the report names it.
func (u Undecided) String() string { return u.Subject.String() }

// undecidedJSON is Undecided in the report: the subject's fields inline,
// as docs/schema-report.md lists them.
type undecidedJSON struct {
	Check  string `json:"check"`
	GUID   string `json:"node_guid"`
	Node   string `json:"node"`
	Port   int    `json:"port,omitempty"`
	Reason string `json:"reason"`
}

// MarshalJSON writes {check, node_guid, node, port, reason}.
func (u Undecided) MarshalJSON() ([]byte, error) {
	return json.Marshal(undecidedJSON{Check: u.Check, GUID: fmt.Sprintf("0x%016x", u.Subject.NodeGUID), Node: u.Subject.Node, Port: u.Subject.Port, Reason: u.Reason})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (u *Undecided) UnmarshalJSON(b []byte) error {
	var j undecidedJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	g, err := strconv.ParseUint(j.GUID, 0, 64)
	if err != nil {
		return fmt.Errorf("undecided: node_guid %q: %w", j.GUID, err)
	}
	*u = Undecided{Check: j.Check, Subject: Entity{NodeGUID: g, GUID: j.GUID, Node: j.Node, Port: j.Port}, Reason: j.Reason}
	return nil
}

// couldNotDecide records that check could not judge the subject: the
// report lists it and a run with one is not "healthy".
func (s *Snapshot) couldNotDecide(check, reason string, subject Entity) {
	s.undecided = append(s.undecided, Undecided{Check: check, Subject: subject, Reason: reason})
}

// takeUndecided returns what the checks could not decide, without
// repeats, and clears it.
func (s *Snapshot) takeUndecided() []Undecided {
	u := s.undecided
	s.undecided = nil
	out := u[:0]
	for _, x := range u {
		if !slices.ContainsFunc(out, func(y Undecided) bool {
			return y.Check == x.Check && y.Reason == x.Reason && y.Subject.NodeGUID == x.Subject.NodeGUID && y.Subject.Port == x.Subject.Port
		}) {
			out = append(out, x)
		}
	}
	return out
}

// notOnMovedCables drops the topology.* findings that name a port whose
// cable a gate found moved since the sweep (Snapshot.MovedCables) and
// lists them could-not-decide: they compare the snapshot's cable map,
// which the gate has just found stale there (trial B17: a rail swap fixed
// since the sweep kept the gate at exit 1 on the snapshot's
// topology.rail-miswired). The next sweep judges the new map.
func (s *Snapshot) notOnMovedCables(fs []Finding) []Finding {
	if len(s.MovedCables) == 0 {
		return fs
	}
	out := fs[:0]
	for _, f := range fs {
		if strings.HasPrefix(f.Check, "topology.") {
			i := slices.IndexFunc(f.Entities, func(e Entity) bool {
				return e.Port != 0 && s.MovedCables[fabric.PortID{GUID: entityGUID(e), Port: uint8(e.Port)}] != ""
			})
			if i >= 0 {
				e := f.Entities[i]
				e.NodeGUID = entityGUID(e)
				s.couldNotDecide(f.Check, fmt.Sprintf("judged on the snapshot's cables (%s), but %s", f.Title, s.MovedCables[fabric.PortID{GUID: e.NodeGUID, Port: uint8(e.Port)}]), e)
				continue
			}
		}
		out = append(out, f)
	}
	return out
}
