package gate

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// fullTimeouts is a simulator Conn on which a request the fabric loses
// costs the Engine's whole timeout, as on hardware and on ibsim: the
// simulator's at-once notices for MADs its tables lose (trial B14) are
// not passed on, so the Engine's own timer ends each attempt.
type fullTimeouts struct{ transport.Conn }

func (c fullTimeouts) Recv(ctx context.Context) (*transport.Packet, error) {
	for {
		p, err := c.Conn.Recv(ctx)
		if err != nil || p.Status != transport.StatusTimedOut {
			return p, err
		}
	}
}

// sentTap keeps the requests the Engine sends (each attempt) once armed.
type sentTap struct {
	armed atomic.Bool
	mu    sync.Mutex
	sent  []sentMAD
}

type sentMAD struct {
	dlid uint16
	path mad.Path // of a directed-route SMP
}

func (c *sentTap) Record(sent bool, a transport.Addr, m []byte, _ time.Time) {
	if !c.armed.Load() || !sent || len(m) < 4 || m[3]&0x80 != 0 {
		return
	}
	s := sentMAD{dlid: a.DLID}
	if mad.Class(m[1]) == mad.ClassSubnDR {
		var smp mad.SMP
		if err := smp.Unmarshal(m); err == nil {
			s.path = smp.Path()
		}
	}
	c.mu.Lock()
	c.sent = append(c.sent, s)
	c.mu.Unlock()
}

// to counts the requests sent to node n of f: LID-routed to one of its
// LIDs, or by a directed route from local that ends at it.
func (c *sentTap) to(f *fabric.Fabric, local *fabric.Port, n *fabric.Node) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	count := 0
	for _, s := range c.sent {
		if s.path == nil {
			for _, p := range n.Ports {
				if p != nil && p.LID != 0 && s.dlid >= p.LID && s.dlid < p.LID+1<<p.LMC {
					count++
					break
				}
			}
			continue
		}
		at := local.Node
		for _, out := range s.path {
			if int(out) >= len(at.Ports) || at.Ports[out] == nil || at.Ports[out].Remote == nil {
				at = nil
				break
			}
			at = at.Ports[out].Remote.Node
		}
		if at == n {
			count++
		}
	}
	return count
}

// waited is what a gate in a synctest bubble waited: the bubble's clock
// moves only when every goroutine waits, so its elapsed time is the
// timeouts the gate waited one after another (never the time it ran),
// counted in one request's whole timeout (every attempt).
type waited struct {
	elapsed, timeout time.Duration
}

// timeouts is how many whole request timeouts the gate waited one after
// another.
func (w waited) timeouts() float64 { return float64(w.elapsed) / float64(w.timeout) }

// gateTwoHCAs sweeps a clean twoHCAs fabric (with its baseline accepted
// or not), plants faults in a live copy and gates hosts on it from
// gpu016 mlx5_0 by LID, in a synctest bubble, every request the fabric
// loses costing the Engine's timeout (1 s, one retry).
func gateTwoHCAs(t *testing.T, baseline bool, faults func(t *testing.T, s *sim.Sim), hosts ...string) (doc *report.Document, tap *sentTap, st transport.Stats, w waited) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		snap, base := stateOf(t, liveSim(t), baseline)
		// The gate a minute after the sweep: its counters' increases are
		// over that span (the bubble's clock has not moved yet).
		time.Sleep(time.Minute)
		live := liveSim(t)
		faults(t, live)
		c, err := live.Attach("gpu016 mlx5_0", 1)
		if err != nil {
			t.Fatal(err)
		}
		tap = &sentTap{}
		tap.armed.Store(true)
		opts := transport.Options{Timeout: time.Second, Retries: 1, Tap: tap}
		e := transport.NewEngine(fullTimeouts{c}, opts)
		defer c.Close()
		defer e.Close()
		start := time.Now()
		doc, err = Run(context.Background(), snap, e, Options{Hosts: hosts, FailOn: checks.Error, ByLID: true, Source: "sim:test", Counters: true, Baseline: base})
		if err != nil {
			t.Fatal(err)
		}
		w = waited{elapsed: time.Since(start), timeout: 2 * opts.Timeout}
		st = e.Stats()
	})
	return doc, tap, st, w
}

// TestGateLeafPortDownNoMADs (trial F8): after the sweep the leaf port of
// a job host's HCA went down. The gate reads the job's switch ports
// first and sends nothing to the HCA behind the port it read without a
// link: before, it sent the HCA its PortInfo read, waited out every
// attempt (4 of a gate's 4.2 s in the trial) and listed the HCA as "no
// response". The verdict is the one it gave then and the one check gives
// on that fabric: link.down at error naming the switch port and the
// HCA, the HCA not listed unread.
func TestGateLeafPortDownNoMADs(t *testing.T) {
	model := build(t, twoHCAs)
	hca := model.NodesByName("gpu002 mlx5_0")[0]
	leafPort := hca.Ports[1].Remote
	ref := fmt.Sprintf("%s/%d", leafPort.Node.Description, leafPort.Num)
	local := model.NodesByName("gpu016 mlx5_0")[0].Ports[1]
	down := func(t *testing.T, s *sim.Sim) {
		if err := s.Down(ref); err != nil {
			t.Fatal(err)
		}
	}
	want := checkLinkDown(t, down, hca)
	for _, baseline := range []bool{true, false} {
		t.Run(fmt.Sprintf("baseline=%v", baseline), func(t *testing.T) {
			doc, tap, _, w := gateTwoHCAs(t, baseline, down, "gpu002", "gpu005")
			if n := tap.to(model, local, hca); n != 0 {
				t.Errorf("%d MADs sent to gpu002 mlx5_0, behind %s read down; want none", n, ref)
			}
			if w.elapsed != 0 {
				t.Errorf("the gate waited %.1f request timeouts; want none", w.timeouts())
			}
			if doc.Status != "unhealthy" {
				t.Errorf("status %q, want unhealthy", doc.Status)
			}
			got := ""
			for _, f := range doc.Findings {
				if f.Check == "link.down" {
					got += fmt.Sprintf("%s %s;", f.Severity, entities(f.Entities))
				}
			}
			if got != want {
				t.Errorf("gate's link.down: %q; check's: %q", got, want)
			}
			for _, u := range doc.Unreached {
				t.Errorf("listed unread: %+v", u)
			}
			for _, u := range doc.Undecided {
				t.Errorf("undecided: %s %s: %s", u.Check, u.Subject.Node, u.Reason)
			}
		})
	}
}

// checkLinkDown is what check says of the twoHCAs fabric with faults,
// swept from gpu016 mlx5_0 against the accepted baseline: its link.down
// findings naming hca, as "severity entities;" each.
func checkLinkDown(t *testing.T, faults func(t *testing.T, s *sim.Sim), hca *fabric.Node) string {
	t.Helper()
	s := liveSim(t)
	faults(t, s)
	sw, err := diagnose.Run(context.Background(), engineAt(t, s, "gpu016 mlx5_0"), diagnose.Options{Routes: true, Counters: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := checks.Run(sw.Snapshot(checks.Expectations{}, checks.BaselineOf(build(t, twoHCAs)), nil))
	if err != nil {
		t.Fatal(err)
	}
	out := ""
	for _, f := range res.Findings {
		if f.Check == "link.down" {
			for _, en := range f.Entities {
				if en.Node == hca.Description {
					out += fmt.Sprintf("%s %s;", f.Severity, entities(f.Entities))
					break
				}
			}
		}
	}
	if out == "" {
		t.Fatalf("check gives no link.down naming %s: %+v", hca.Description, res.Findings)
	}
	return out
}

func entities(es []checks.Entity) string {
	out := ""
	for _, en := range es {
		out += fmt.Sprintf(" %s/%d", en.Node, en.Port)
	}
	return out
}

// TestGateBlackholeOneTimeout (trial F8): a black hole in a leaf's table
// loses the gate's LID-routed MADs there. The gate's reads go out
// together, not one host after another, and each loss is waited out
// once. When the job's HCAs' LIDs are lost, their reads by LID time out
// together, one timeout for any number of hosts (the directed route
// around the loss answers, and the black hole on the job's routes fails
// the gate). When every LID is lost at the leaf, the
// LID-routed reads of the leaf's table time out, the directed route
// around them answers, the leaf's HCAs are read by that route from the
// start, and no PerfMgt read (LID-routed only) is sent where the SMPs by
// LID were lost. Before, the gate met that loss again in each of its
// steps: 3 timeouts one after another at the job's leaf (tables, ports,
// counters), 4 at its own leaf with the job elsewhere, where it still
// meets it twice: the switches on the job's routes are found level by
// level (the leaves, then the spines their tables lead to), each
// level's first read by LID lost once. Those verdicts do not change. In
// the gate's own leaf, with the job on it (the trial's 13-16 s), the
// lost requests took no link to route around: the leaf is asked by the
// directed route over the gate's own cable, and its table's black hole
// fails the gate as check judges it, where it said "leaf04 did not
// answer" (undecided) after 2 timeouts.
func TestGateBlackholeOneTimeout(t *testing.T) {
	model := build(t, twoHCAs)
	hcaLIDs := func(hosts ...string) []uint16 {
		var lids []uint16
		for _, h := range hosts {
			for _, n := range model.NodesByHost(h) {
				lids = append(lids, n.Ports[1].LID)
			}
		}
		return lids
	}
	var all []uint16
	for lid := uint16(1); lid <= 300; lid++ {
		all = append(all, lid)
	}
	cases := []struct {
		name     string
		leaf     string
		lids     []uint16
		hosts    []string
		timeouts float64
		status   string
	}{
		{"HCAs lost at their leaf", "leaf01", hcaLIDs("gpu001", "gpu002", "gpu003", "gpu004"), []string{"gpu001", "gpu002", "gpu003", "gpu004"}, 1, "unhealthy"},
		{"HCA lost at its leaf", "leaf01", hcaLIDs("gpu002"), []string{"gpu002"}, 1, "unhealthy"},
		{"job's leaf, 1 host", "leaf01", all, []string{"gpu002"}, 1, "unhealthy"},
		{"job's leaf, 4 hosts", "leaf01", all, []string{"gpu001", "gpu002", "gpu003", "gpu004"}, 1, "unhealthy"},
		{"job's leaf, 2 leaves", "leaf01", all, []string{"gpu001", "gpu005"}, 1, "unhealthy"},
		{"gate's own leaf", "leaf04", all, []string{"gpu001", "gpu005"}, 2, "undecided"},
		{"gate's own leaf, the job on it", "leaf04", all, []string{"gpu013", "gpu014"}, 1, "unhealthy"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc, _, st, w := gateTwoHCAs(t, true, func(t *testing.T, s *sim.Sim) {
				for _, lid := range c.lids {
					if err := s.Blackhole(c.leaf, lid); err != nil {
						t.Fatal(err)
					}
				}
			}, c.hosts...)
			if got := w.timeouts(); got != c.timeouts {
				t.Errorf("the gate waited %.2f request timeouts one after another; want %.0f", got, c.timeouts)
			}
			if doc.Status != c.status {
				t.Errorf("status %q, want %q", doc.Status, c.status)
			}
			if c.status == "unhealthy" && (len(doc.Findings) == 0 || doc.Findings[0].Check != "routing.unreachable" || doc.Findings[0].Entities[len(doc.Findings[0].Entities)-1].Node != c.leaf) {
				t.Errorf("findings %+v; want routing.unreachable at %s", doc.Findings, c.leaf)
			}
			for _, u := range doc.Unreached {
				switch {
				case strings.HasPrefix(u.What, "PortInfo") || strings.HasPrefix(u.What, "LinearForwardingTable"):
					t.Errorf("unread: %+v; the directed route around the black hole answers", u)
				case u.What == "PortCounters" && !strings.HasPrefix(u.Reason, LIDWayLost):
					t.Errorf("counters unread: %+v", u)
				}
			}
			if len(c.lids) < len(all) && st.TimedOut != uint64(len(c.lids)) {
				t.Errorf("%d requests timed out; want each of the %d HCAs lost once, together", st.TimedOut, len(c.lids))
			}
		})
	}
}

// TestGateSwitchMovedNotBlackhole: the SM gave leaf02 a LID no port had
// and re-routed since the sweep. Its old LID answers no one, and the
// directed route around that answers: the gate must tell that from a
// black hole (TestGateBlackholeOneTimeout) by reading the LID it answers
// with, say the LIDs changed, and read the counters of the HCAs on it by
// their LIDs, which did not move. Before, the move went unnoticed and
// the HCAs' counters were not read, "the LID-routed SMPs to leaf02 ...
// went unanswered".
func TestGateSwitchMovedNotBlackhole(t *testing.T) {
	doc, _, _, _ := gateTwoHCAs(t, true, func(t *testing.T, s *sim.Sim) {
		if err := s.SetLID("leaf02", 900, 0); err != nil {
			t.Fatal(err)
		}
		if err := s.Sweep(); err != nil {
			t.Fatal(err)
		}
	}, "gpu005", "gpu006")
	if doc.Status != "undecided" {
		t.Errorf("status %q, want undecided", doc.Status)
	}
	said := false
	for _, u := range doc.Unreached {
		said = said || (u.What == WhatLID && u.Where == "leaf02" && strings.Contains(u.Reason, LIDsChanged))
		if strings.HasPrefix(u.Reason, LIDWayLost) {
			t.Errorf("unread: %+v; the HCAs' LIDs did not move", u)
		}
	}
	if !said {
		t.Errorf("no entry saying leaf02's LID changed: %+v", doc.Unreached)
	}
}

// TestGateOwnCableMovedNoSecondLook: the gate's own cable now leads to
// another HCA (trial F's miswire of gpu001 and gpu002 at the gate's
// leaf): every request by LID is lost, and the directed route one hop
// out of the gate's port reaches that HCA, not the leaf. The gate asks
// it who it is once and looks no further that way: without that, the
// leaf's reads went by that route to the HCA ("leaf04 refused
// LinearForwardingTable", trial F's f8 gate 4 -> 12 s). (Not in a
// synctest bubble: the simulator times a MAD lost at a CA out on its
// own clock.)
func TestGateOwnCableMovedNoSecondLook(t *testing.T) {
	snap, base := stateOf(t, liveSim(t), true)
	live := liveSim(t)
	if err := live.Miswire("gpu016 mlx5_0/1", "gpu015 mlx5_0/1"); err != nil {
		t.Fatal(err)
	}
	c, err := live.Attach("gpu016 mlx5_0", 1)
	if err != nil {
		t.Fatal(err)
	}
	// Short timeouts: what was sent is asserted, not the time.
	e := transport.NewEngine(c, transport.Options{Timeout: 20 * time.Millisecond, Retries: 1})
	t.Cleanup(func() { e.Close(); c.Close() })
	doc, err := Run(context.Background(), snap, e, Options{Hosts: []string{"gpu013", "gpu014"}, FailOn: checks.Error, ByLID: true, Source: "sim:test", Counters: true, Baseline: base})
	if err != nil {
		t.Fatal(err)
	}
	if doc.Status != "undecided" {
		t.Errorf("status %q, want undecided", doc.Status)
	}
	for _, u := range doc.Unreached {
		if u.Failure == report.Refused {
			t.Errorf("unread: %+v; a read went to the HCA on the gate's cable", u)
		}
	}
}
