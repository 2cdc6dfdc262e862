package report

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// TestReadFailedWhy: a read's error words the entry once: a timeout or a
// skipped silent node "did not answer", a status error "refused ATTR
// (status 0x001C)", anything else nothing (the caller says "not read").
func TestReadFailedWhy(t *testing.T) {
	te := &transport.TimeoutError{Class: mad.ClassSubnLID, Attr: mad.AttrPortInfo, Attempts: 4}
	for _, c := range []struct {
		what string
		err  error
		want string
	}{
		{"PortInfo 3", te, "did not answer"},
		{"PortInfo 3", fmt.Errorf("x: %w", &transport.SilentError{Earlier: te}), "did not answer"},
		{"LinearForwardingTable block 0", &transport.StatusError{Class: mad.ClassSubnLID, Status: 0x1c}, "refused LinearForwardingTable (status 0x001C)"},
		{"P_KeyTable", fmt.Errorf("wrapped: %w", &transport.StatusError{Status: 0x0c}), "refused P_KeyTable (status 0x000C)"},
		{"PortInfo 3", errors.New("transport: bad response"), ""},
		{"PortInfo 3", nil, ""},
	} {
		u := Unreached{What: c.what, Where: "spine01 port 3", Reason: "r"}.ReadFailed(c.err)
		if got := u.Why(); got != c.want {
			t.Errorf("%s, %v: %q, want %q", c.what, c.err, got, c.want)
		}
	}
}
