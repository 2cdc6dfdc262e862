package route

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// bfsPaths gives every node of f the shortest directed route from the
// node named start (discovery's paths, without running discovery).
func bfsPaths(f *fabric.Fabric, start *fabric.Node) {
	for _, n := range f.Nodes {
		n.Path = nil
	}
	start.Path = mad.Path{}
	queue := []*fabric.Node{start}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if n.Type != mad.NodeSwitch && n != start {
			continue // directed routes do not pass through CAs
		}
		for _, p := range n.Ports {
			if p == nil || p.Num == 0 || p.Remote == nil || p.Remote.Node.Path != nil {
				continue
			}
			p.Remote.Node.Path = n.Path.Extend(p.Num)
			queue = append(queue, p.Remote.Node)
		}
	}
}

// liveRig is a simulated fabric with an engine attached at gpu001, and a
// second, separately built model of the same fabric whose LFTs are read
// back from the simulator (so faults set on the simulator show in it).
type liveRig struct {
	sim    *sim.Sim
	eng    *transport.Engine
	model  *fabric.Fabric
	smps   *countingGetter
	local  uint16
	ctx    context.Context
	cancel context.CancelFunc
}

func newLiveRig(t *testing.T) *liveRig {
	t.Helper()
	s, err := sim.New(small(t), sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Attach("gpu001 mlx5_0", 1)
	if err != nil {
		t.Fatal(err)
	}
	eng := transport.NewEngine(c, transport.Options{Timeout: 200 * time.Millisecond, Retries: 1})
	t.Cleanup(func() { eng.Close(); c.Close() })
	r := &liveRig{sim: s, eng: eng, model: small(t)}
	r.ctx, r.cancel = context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(r.cancel)
	r.smps = &countingGetter{g: eng}
	r.local = lid(r.model, "gpu001 mlx5_0")
	bfsPaths(r.model, node(r.model, "gpu001 mlx5_0"))
	return r
}

// reread reads every switch's LFT from the simulator into the model.
func (r *liveRig) reread(t *testing.T) {
	t.Helper()
	if err := ReadLFTs(r.ctx, r.eng, r.model, ReadOptions{}); err != nil {
		t.Fatal(err)
	}
}

// countingGetter counts SMPs by attribute and directed route.
type countingGetter struct {
	g   SMPGetter
	lft map[string]int // LFT block reads by path
	n   int
}

func (c *countingGetter) GetSMP(ctx context.Context, path mad.Path, a mad.Attribute, mod uint32) (*mad.SMP, error) {
	c.n++
	if a.AttributeID() == mad.AttrLinearForwardingTable {
		if c.lft == nil {
			c.lft = map[string]int{}
		}
		c.lft[path.String()]++
	}
	return c.g.GetSMP(ctx, path, a, mod)
}

func (c *countingGetter) GetSMPByLID(ctx context.Context, lid uint16, a mad.Attribute, mod uint32) (*mad.SMP, error) {
	c.n++
	return c.g.GetSMPByLID(ctx, lid, a, mod)
}

// sameTrace compares a live trace with the offline one over the model.
func sameTrace(live, want Trace) error {
	d := func() error { return fmt.Errorf("live %v\nwant %v", live, want) }
	if live.Outcome != want.Outcome || len(live.Hops) != len(want.Hops) {
		return d()
	}
	for i, h := range live.Hops {
		w := want.Hops[i]
		if h.Switch.GUID != w.Switch.GUID || h.In != w.In || h.Out != w.Out || h.Switch.Description != w.Switch.Description {
			return d()
		}
	}
	if (live.End == nil) != (want.End == nil) {
		return d()
	}
	if live.End != nil && (live.End.Node.GUID != want.End.Node.GUID || live.End.Num != want.End.Num ||
		(live.End.Node.Type != mad.NodeSwitch || live.End.Num == 0) && live.End.LID != want.End.LID) {
		return d()
	}
	return nil
}

func allLIDs(f *fabric.Fabric) []uint16 {
	var out []uint16
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil && p.LID != 0 && (n.Type != mad.NodeSwitch || p.Num == 0) {
				out = append(out, p.LID)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestTraceLiveMatchesOffline follows every route from every LID (hosts
// and switches) on the simulator, hop by hop, and compares each with
// TraceRoute over the tables ReadLFTs read: same switches, ports and
// outcome. From the local port it also checks that only the switches on
// the route had their LFT read, one block each.
func TestTraceLiveMatchesOffline(t *testing.T) {
	r := newLiveRig(t)
	r.reread(t)
	lids := allLIDs(r.model)
	for _, from := range lids {
		for _, to := range lids {
			want, err := TraceRoute(r.model, from, to)
			if err != nil {
				t.Fatal(err)
			}
			// Without a model: the source is found by following the LFTs.
			r.smps.lft = nil
			got, err := TraceLive(r.ctx, r.smps, from, to, LiveOptions{})
			if err != nil {
				t.Fatalf("%d->%d: %v", from, to, err)
			}
			if err := sameTrace(got.Trace, want); err != nil {
				t.Fatalf("%d->%d without a model:\n%v", from, to, err)
			}
			if want.Outcome != Delivered {
				t.Fatalf("healthy fabric: %v", want)
			}
			// With the model: the source is reached by its path.
			got2, err := TraceLive(r.ctx, r.eng, from, to, LiveOptions{Fabric: r.model})
			if err != nil {
				t.Fatalf("%d->%d: %v", from, to, err)
			}
			if err := sameTrace(got2.Trace, want); err != nil {
				t.Fatalf("%d->%d with a model:\n%v", from, to, err)
			}
			if len(got2.LFTReads) != len(want.Hops) {
				t.Fatalf("%d->%d: read %d LFTs for %d hops", from, to, len(got2.LFTReads), len(want.Hops))
			}
			for i, sw := range got2.LFTReads {
				if sw != got2.Hops[i].Switch {
					t.Fatalf("%d->%d: LFT read of %s, hop %d is %s", from, to, sw.Description, i, got2.Hops[i].Switch.Description)
				}
			}
			// Without the model too, the only LFT blocks read were one
			// per switch on the way to the source and along the route.
			total := 0
			for _, n := range r.smps.lft {
				total += n
			}
			if total != len(got.LFTReads) {
				t.Fatalf("%d->%d: %d LFT SMPs, %d recorded", from, to, total, len(got.LFTReads))
			}
			if from == r.local && total != len(want.Hops) {
				t.Fatalf("%d->%d from the local port: %d LFT blocks read for %d hops", from, to, total, len(want.Hops))
			}
		}
	}
	// A trace costs a few SMPs per hop: far fewer than reading every
	// switch's table (the small fabric has 5 switches).
	r.smps.n = 0
	far := lid(r.model, "gpu012 mlx5_0")
	tr, err := TraceLive(r.ctx, r.smps, r.local, far, LiveOptions{})
	if err != nil || tr.Outcome != Delivered || len(tr.Hops) != 3 {
		t.Fatalf("%v %v", tr.Trace, err)
	}
	if r.smps.n > 8*len(tr.Hops)+4 {
		t.Errorf("%d SMPs for a %d-hop route", r.smps.n, len(tr.Hops))
	}
	if l := tr.Links(tr.Fabric); len(l) != 4 || l[0].A.LID != r.local || l[3].B.LID != far {
		t.Errorf("links of the live trace: %v", l)
	}
}

// TestTraceLiveFaults injects route faults into the simulator and checks
// that the live walk reports what TraceRoute reports over the tables read
// back: a black hole, a loop, a dead end, a misdelivery.
func TestTraceLiveFaults(t *testing.T) {
	a, b := "gpu001 mlx5_0", "gpu012 mlx5_0"
	cases := []struct {
		name  string
		fault func(r *liveRig, t *testing.T, want Trace) // want: the healthy trace a->b
		out   Outcome
		at    string // switch the route ends at
	}{
		{"blackhole at spine", func(r *liveRig, t *testing.T, want Trace) {
			must(t, r.sim.Blackhole(want.Hops[1].Switch.Description, want.To))
		}, NoRoute, "spine"},
		{"blackhole at last leaf", func(r *liveRig, t *testing.T, want Trace) {
			must(t, r.sim.Blackhole("leaf03", want.To))
		}, NoRoute, "leaf03"},
		{"loop leaf03-spine", func(r *liveRig, t *testing.T, want Trace) {
			must(t, r.sim.Loop("leaf03", want.Hops[1].Switch.Description, want.To))
		}, Loop, "spine"},
		{"dead end", func(r *liveRig, t *testing.T, want Trace) {
			h := want.Hops[1]
			ref := fmt.Sprintf("%s/%d", h.Switch.Description, h.Out)
			must(t, r.sim.Down(ref))
			// The model learns port states from discovery; mirror them.
			p := r.model.NodesByName(h.Switch.Description)[0].Ports[h.Out]
			p.State, p.Remote.State = mad.PortStateDown, mad.PortStateDown
		}, DeadEnd, "spine"},
		{"misdelivered", func(r *liveRig, t *testing.T, want Trace) {
			must(t, r.sim.SetRoute("leaf03", want.To, 1)) // gpu009's port
		}, Misdelivered, "leaf03"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newLiveRig(t)
			r.reread(t)
			from, to := lid(r.model, a), lid(r.model, b)
			healthy, _ := TraceRoute(r.model, from, to)
			c.fault(r, t, healthy)
			r.reread(t)
			want, _ := TraceRoute(r.model, from, to)
			if want.Outcome != c.out {
				t.Fatalf("offline after the fault: %v", want)
			}
			got, err := TraceLive(r.ctx, r.eng, from, to, LiveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := sameTrace(got.Trace, want); err != nil {
				t.Fatal(err)
			}
			if last := got.Hops[len(got.Hops)-1].Switch.Description; !strings.HasPrefix(last, c.at) {
				t.Errorf("ends at %s, want %s", last, c.at)
			}
			// The reverse direction and other sources are unaffected or
			// agree too.
			for _, src := range allLIDs(r.model) {
				want, _ := TraceRoute(r.model, src, to)
				got, err := TraceLive(r.ctx, r.eng, src, to, LiveOptions{Fabric: r.model})
				if err != nil {
					t.Fatalf("%d->%d: %v", src, to, err)
				}
				if err := sameTrace(got.Trace, want); err != nil {
					t.Fatalf("%d->%d: %v", src, to, err)
				}
			}
		})
	}
}

// TestTraceLiveSourceNotFound: without a model, a source behind a black
// hole (from the local port) cannot be found; the error says so and what
// to do. With the model it is reached by its directed route.
func TestTraceLiveSourceNotFound(t *testing.T) {
	r := newLiveRig(t)
	src := lid(r.model, "gpu012 mlx5_0")
	must(t, r.sim.Blackhole("leaf01", src))
	_, err := TraceLive(r.ctx, r.eng, src, r.local, LiveOptions{})
	if !errors.Is(err, ErrSourceNotFound) || !strings.Contains(err.Error(), "leaf01") {
		t.Fatalf("err = %v", err)
	}
	got, err := TraceLive(r.ctx, r.eng, src, r.local, LiveOptions{Fabric: r.model})
	if err != nil || got.Outcome != Delivered || got.Hops[0].Switch != node(r.model, "leaf03") {
		t.Fatalf("%v %v", got.Trace, err)
	}
	if _, err := TraceLive(r.ctx, r.eng, 999, r.local, LiveOptions{}); !errors.Is(err, ErrSourceNotFound) {
		t.Fatalf("unknown LID: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
