package checks

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
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
