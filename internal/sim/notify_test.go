package sim

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// TestConnNotifiesTimeouts: on the wall clock the simulator says which
// requests went unanswered (transport.TimeoutNotifier), so an Engine ends
// an attempt to a dead node on the simulator's notice, after Timeout, and
// its own timer is only a backstop; a live node's answer is the
// request's. On a manual clock the notices wait for the clock, and the
// Engine keeps its own timer.
func TestConnNotifiesTimeouts(t *testing.T) {
	f := fatTree(t, 2, 2, 2)
	man, _ := newSim(t, f, Options{})
	if attach(t, man, "gpu001 mlx5_0", 1).NotifiesTimeouts() {
		t.Error("on a manual clock the Conn says it reports its timeouts")
	}
	wall, err := New(fatTree(t, 2, 2, 2), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := wall.Kill("spine01"); err != nil {
		t.Fatal(err)
	}
	c := attach(t, wall, "gpu001 mlx5_0", 1)
	if !c.NotifiesTimeouts() {
		t.Fatal("on the wall clock the Conn does not say it reports its timeouts")
	}
	e := transport.NewEngine(c, transport.Options{Timeout: 50 * time.Millisecond, Retries: -1})
	defer e.Close()
	ctx := context.Background()
	if _, err := e.Do(ctx, transport.SMPAt(lidOf(t, wall, "leaf01")), mad.NewLIDGet(mad.AttrNodeInfo, 0).Marshal()); err != nil {
		t.Errorf("leaf01: %v", err)
	}
	_, err = e.Do(ctx, transport.SMPAt(lidOf(t, wall, "spine01")), mad.NewLIDGet(mad.AttrNodeInfo, 0).Marshal())
	var te *transport.TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("dead spine01: %v, want a timeout", err)
	}
	if te.Waited >= transport.NoticeGrace {
		t.Errorf("dead spine01: waited %v, the Engine's backstop: the simulator sent no notice", te.Waited)
	}
}
