package transport_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/internal/transport/transporttest"
	"github.com/ibdoctor/ibdoctor/mad"
)

// notifier is a Conn that reports every request it leaves unanswered
// (transport.TimeoutNotifier), as the simulator on the wall clock does.
type notifier struct{ *transporttest.Conn }

func (notifier) NotifiesTimeouts() bool { return true }

// TestNotifierAnswerReadLate: a Conn that reports its own timeouts
// answered, but the Engine's reader got the answer only after Timeout had
// passed on the wall clock, as on a loaded machine where it waited for a
// core. The answer is the request's: the Conn, which says when a request
// went unanswered, did not. Before, the Engine's own timer called it
// unanswered (internal/cli TestUnansweredInBothSamplesOnce at load 18:
// spine01's and leaf01's PortCountersExtended "no response ... in 490ms"
// on the simulator, which had answered them).
func TestNotifierAnswerReadLate(t *testing.T) {
	const timeout = 20 * time.Millisecond
	c := transporttest.New(transport.LocalPort{Name: "fake/1", PortNum: 1}, echo(func(*transport.Packet) time.Duration { return 10 * timeout }))
	e := transport.NewEngine(notifier{c}, transport.Options{Timeout: timeout, Retries: -1})
	t.Cleanup(func() { e.Close() })
	r, err := e.Do(context.Background(), transport.SMPAt(3), lidGet(7))
	if err != nil {
		t.Fatalf("an answer the Conn gave, read after the timeout: %v", err)
	}
	if modOf(t, r) != 7 || r.Attempts != 1 {
		t.Errorf("answer %d after %d attempts, want 7 after 1", modOf(t, r), r.Attempts)
	}

	// What it leaves unanswered ends with its notice, after Timeout, not
	// after the Engine's backstop.
	c2 := transporttest.New(transport.LocalPort{Name: "fake/1", PortNum: 1}, func(p *transport.Packet) []transporttest.Reply {
		return []transporttest.Reply{{Packet: transporttest.TimedOut(p.MAD), Delay: timeout}}
	})
	e2 := transport.NewEngine(notifier{c2}, transport.Options{Timeout: timeout, Retries: 1})
	t.Cleanup(func() { e2.Close() })
	_, err = e2.Do(context.Background(), transport.SMPAt(3), lidGet(7))
	var te *transport.TimeoutError
	if !errors.As(err, &te) || te.Attempts != 2 || c2.Sent() != 2 {
		t.Fatalf("err = %v after %d sends, want a timeout after 2 attempts", err, c2.Sent())
	}
	if te.Waited >= transport.NoticeGrace {
		t.Errorf("waited %v: the Engine's backstop, not the Conn's notices, ended it", te.Waited)
	}
	if te.Class != mad.ClassSubnLID {
		t.Errorf("timeout names class %v", te.Class)
	}
}
