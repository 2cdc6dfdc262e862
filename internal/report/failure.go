package report

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/transport"
)

// Failure kinds of a MAD read (Unreached.Failure).
const (
	// NoAnswer: every attempt timed out, or the read was not sent to a
	// node that left an earlier one unanswered. Could not look.
	NoAnswer = "no-answer"
	// Refused: the node answered with a MAD status error. It is up;
	// what it was asked for is not what it has (a snapshot's stale view
	// of it, an attribute its firmware does not give).
	Refused = "refused"
)

// ReadFailed is u with Failure (and Status) set from the read's error.
func (u Unreached) ReadFailed(err error) Unreached {
	var se *transport.StatusError
	switch {
	case transport.Unanswered(err):
		u.Failure = NoAnswer
	case errors.As(err, &se):
		u.Failure, u.Status = Refused, fmt.Sprintf("0x%04X", uint16(se.Status))
	}
	return u
}

// Why words for one line how a node failed a read, the one place that
// does: "did not answer", "refused LinearForwardingTable (status
// 0x001C)"; empty when Failure is not set.
func (u Unreached) Why() string {
	switch u.Failure {
	case NoAnswer:
		return "did not answer"
	case Refused:
		attr, _, _ := strings.Cut(u.What, " ") // "PortInfo 5", "LinearForwardingTable block 0"
		return fmt.Sprintf("refused %s (status %s)", attr, u.Status)
	}
	return ""
}

// OwnLeaf: u is the NodeInfo of the node one hop out of the reading
// port (directed route "0,N"), the switch that host is cabled to. When
// it does not answer, nothing past it was walked.
func (u Unreached) OwnLeaf() bool {
	if u.What != "NodeInfo" {
		return false
	}
	path, _, _, ok := fabric.ParseBehind(u.Where)
	return ok && strings.Count(path, ",") == 1
}
