package transport

import (
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/mad"
)

// TestTimeoutTextOneAttempt: with --retries 0 a MAD is sent once, and
// the reason says "after 1 attempt" (before: "after 1 attempts").
func TestTimeoutTextOneAttempt(t *testing.T) {
	e := &TimeoutError{Class: mad.ClassPerfMgt, Attr: mad.AttrPortCountersExtended, Addr: PerfAt(2, 0, 0), Attempts: 1}
	if s := e.Error(); !strings.Contains(s, "after 1 attempt in") {
		t.Errorf("%q", s)
	}
	e.Attempts = 4
	if s := e.Error(); !strings.Contains(s, "after 4 attempts in") {
		t.Errorf("%q", s)
	}
}
