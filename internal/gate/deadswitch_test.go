package gate

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// lidTap counts the requests sent to one LID (every attempt), and the
// directed-route SMPs sent (every attempt).
type lidTap struct {
	lid uint16
	n   atomic.Int64
	dr  atomic.Int64
}

func (c *lidTap) Record(sent bool, a transport.Addr, m []byte, _ time.Time) {
	if !sent || len(m) < 4 || m[3]&0x80 != 0 {
		return
	}
	if a.DLID == c.lid {
		c.n.Add(1)
	}
	// The gate's check of the cables on the job's routes reads NodeInfo
	// by directed route out of every egress port: not a retry.
	if mad.Class(m[1]) == mad.ClassSubnDR && len(m) >= 18 && mad.AttrID(binary.BigEndian.Uint16(m[16:18])) != mad.AttrNodeInfo {
		c.dr.Add(1)
	}
}

// deadSpineGate gates gpu001+gpu009 from gpu020 (by LID) with the spine
// their route crosses killed in the live fabric, counting the requests
// sent to that spine. With downs (ports cabled to it that went down) it
// gates from gpu001, where the sweep ran, by directed route: LID-routed
// MADs from elsewhere would be lost on the down link the job's route
// uses, as the job's traffic is.
func deadSpineGate(t *testing.T, downs ...string) (*report.Document, string, int64) {
	doc, spine, tap := deadSpineGateTap(t, downs...)
	return doc, spine, tap.n.Load()
}

func deadSpineGateTap(t *testing.T, downs ...string) (*report.Document, string, *lidTap) {
	t.Helper()
	snap := sweptWithCounters(t, build(t, tree4x4))
	f, _ := snap.FabricModel()
	up := uplinkTo(t, f, "leaf01", "gpu009")
	spine := f.NodesByHost("leaf01")[0].Ports[up].Remote.Node
	live, err := sim.New(build(t, tree4x4), sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := live.Kill(spine.Description); err != nil {
		t.Fatal(err)
	}
	for _, d := range downs {
		if err := live.Down(strings.ReplaceAll(d, "UP", fmt.Sprint(up))); err != nil {
			t.Fatal(err)
		}
	}
	tap := &lidTap{lid: spine.Ports[0].LID}
	at, o := "gpu020 mlx5_0", job()
	if len(downs) > 0 {
		at, o.ByLID = "gpu001 mlx5_0", false
	}
	c, err := live.Attach(at, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Short timeouts: the count of requests is asserted, not the time.
	e := transport.NewEngine(c, transport.Options{Timeout: 20 * time.Millisecond, Retries: 1, Tap: tap})
	t.Cleanup(func() { e.Close(); c.Close() })
	doc, err := Run(context.Background(), snapAgain(t, snap), e, o)
	if err != nil {
		t.Fatal(err)
	}
	return doc, spine.Description, tap
}

// TestGateDeadSpineOnRoute: the spine on the job's route stopped
// answering MADs (its agent is dead; it still forwards). The gate sends it
// one request's attempts (two in flight at most) by LID and one attempt by
// a directed route around that, not one per port and
// table block: in the trial a dead switch on the route took ~40 s with
// one timeout-and-retries per port. It is undecided, says the job's route
// crosses the switch that did not answer, and lists the unread ports of
// that switch on one line.
func TestGateDeadSpineOnRoute(t *testing.T) {
	doc, spine, tap := deadSpineGateTap(t)
	sent := tap.n.Load()
	// Retries: 1 → 2 attempts per request, PerDest 2 in flight.
	if sent > 2*2 {
		t.Errorf("%d requests sent to %s, which answers none; want at most 4 (one request's attempts, two in flight)", sent, spine)
	}
	// The directed route around the LID route is one more look, a single
	// attempt (review R7: it was a second full round of attempts, twice
	// the gate's wait for a dead switch).
	if n := tap.dr.Load(); n != 1 {
		t.Errorf("%d directed-route attempts to %s after it did not answer by LID; want 1", n, spine)
	}
	if doc.Status != "undecided" || len(doc.Findings) != 0 {
		t.Fatalf("status %q, findings %+v; want undecided", doc.Status, doc.Findings)
	}
	said := false
	for _, u := range doc.Undecided {
		if u.Check == "routing.unreachable" && u.Subject.Node == spine &&
			strings.Contains(u.Reason, "gpu001 mlx5_0") && strings.Contains(u.Reason, "gpu009 mlx5_0") &&
			strings.Contains(u.Reason, "cross") && strings.Contains(u.Reason, "which did not answer") {
			said = true
		}
	}
	if !said {
		t.Errorf("no routing.unreachable undecided saying the job's route crosses %s, which did not answer: %+v", spine, doc.Undecided)
	}
	lines := report.UnreachedLines(doc.Unreached)
	grouped := false
	for _, l := range lines {
		grouped = grouped || strings.HasPrefix(l, "PortInfo at "+spine+" ports ")
	}
	if !grouped || len(lines) > 3 {
		t.Errorf("could-not-read lines for one dead switch:\n%s", strings.Join(lines, "\n"))
	}
}

// TestGateSpineGoneOnRoute: the spine is gone (powered off: its links are
// down, seen from the leaf ports re-read live) and the SM has not routed
// around it. That is known broken, not undecided: the gate fails.
func TestGateSpineGoneOnRoute(t *testing.T) {
	doc, spine, _ := deadSpineGate(t, "leaf01/UP")
	if doc.Status != "unhealthy" {
		for _, u := range doc.Undecided {
			t.Logf("%s %s: %s", u.Check, u, u.Reason)
		}
		for _, u := range doc.Unreached {
			t.Logf("unread %+v", u)
		}
		t.Fatalf("%s gone with the job's route through it: status %q, findings %+v", spine, doc.Status, doc.Findings)
	}
}

// TestGateRefusedNotRetried (review R7): a switch on the job's route that
// answers its LFT block, or its PortInfo, with a MAD status error is up:
// the answer came back by LID, so a directed route around the LID route
// would not change it. The gate does not retry it by directed route
// (before it did, and then addressed the switch by that route for the
// rest of the gate); what it refused stays unread, the gate undecided.
func TestGateRefusedNotRetried(t *testing.T) {
	for _, attr := range []string{"LinearForwardingTable", "PortInfo"} {
		t.Run(attr, func(t *testing.T) {
			snap := sweptWithCounters(t, build(t, tree4x4))
			f, _ := snap.FabricModel()
			up := uplinkTo(t, f, "leaf01", "gpu009")
			spine := f.NodesByHost("leaf01")[0].Ports[up].Remote.Node
			live, err := sim.New(build(t, tree4x4), sim.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := live.Refuse(spine.Description, attr); err != nil {
				t.Fatal(err)
			}
			tap := &lidTap{lid: spine.Ports[0].LID}
			c, err := live.Attach("gpu020 mlx5_0", 1)
			if err != nil {
				t.Fatal(err)
			}
			e := transport.NewEngine(c, transport.Options{Timeout: 20 * time.Millisecond, Retries: 1, Tap: tap})
			t.Cleanup(func() { e.Close(); c.Close() })
			o := job()
			o.Counters = false
			doc, err := Run(context.Background(), snapAgain(t, snap), e, o)
			if err != nil {
				t.Fatal(err)
			}
			if n := tap.dr.Load(); n != 0 {
				t.Errorf("%d directed-route SMPs sent; want none: %s answered by LID", n, spine.Description)
			}
			refused := false
			for _, u := range doc.Unreached {
				refused = refused || (strings.HasPrefix(u.What, attr) && strings.Contains(u.Where, spine.Description) && strings.Contains(u.Reason, "status"))
			}
			if doc.Status != "undecided" || !refused {
				t.Errorf("status %q; want undecided with %s's %s unread by status:", doc.Status, spine.Description, attr)
				for _, u := range doc.Unreached {
					t.Errorf("  unread %s at %s: %s", u.What, u.Where, u.Reason)
				}
			}
		})
	}
}
