package route

import (
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// TestWalkMatchesTraceRoute follows every switch's route to every host
// with one memoised Walk per host and compares each with TraceRoute from
// the switch's LID, on a healthy fabric and with a loop and a dead end.
func TestWalkMatchesTraceRoute(t *testing.T) {
	b := "gpu012 mlx5_0"
	edits := map[string]func(f *fabric.Fabric){
		"healthy": func(*fabric.Fabric) {},
		"loop": func(f *fabric.Fabric) {
			node(f, "leaf01").Switch.LFT.Set(lid(f, b), 5)
			node(f, "spine01").Switch.LFT.Set(lid(f, b), 1)
		},
		"dead end": func(f *fabric.Fabric) {
			p := node(f, "spine02").Ports[node(f, "spine02").Switch.LFT.At(lid(f, b))]
			p.State, p.PhysState = mad.PortStateDown, mad.PhysPolling
		},
	}
	for name, edit := range edits {
		t.Run(name, func(t *testing.T) {
			f := small(t)
			edit(f)
			a := NewAnalyzer(f)
			failed := 0
			for _, h := range hostLIDs(f) {
				w := a.WalkTo(f.PortByLID(h))
				for _, sw := range f.Nodes {
					if sw.Type != mad.NodeSwitch {
						continue
					}
					tr, err := TraceRoute(f, sw.Ports[0].LID, h)
					if err != nil {
						t.Fatal(err)
					}
					o, at := w.From(sw)
					if s, ok := a.Switch(sw); !ok {
						t.Fatalf("%s: not a switch of the analyzer", sw.Description)
					} else if o2, at2 := w.FromSwitch(s); o2 != o || at2 != at {
						t.Fatalf("%s -> LID %d: From %v at %v, FromSwitch %v at %v", sw.Description, h, o, at, o2, at2)
					}
					if o != tr.Outcome {
						t.Fatalf("%s -> LID %d: walk %v, trace %v", sw.Description, h, o, tr)
					}
					if o != Delivered {
						failed++
						// The failing switch is the trace's last hop; for a
						// loop, whichever switch of the loop a walk first
						// came back to (walks are memoised).
						onLoop := false
						for _, h := range tr.Hops {
							onLoop = onLoop || h.Switch == at
						}
						if last := tr.Hops[len(tr.Hops)-1].Switch; at != last && !(o == Loop && onLoop) {
							t.Errorf("%v: walk fails at %s", tr, at.Description)
						}
					}
					s, _ := a.Switch(sw)
					if n, want := w.Switches(s), len(tr.Hops); o == Delivered && n != want || o != Delivered && n != 0 {
						t.Fatalf("%v: Switches %d (outcome %v)", tr, n, o)
					}
					path := w.Path(sw)
					if o == Loop {
						continue // the trace repeats the switch that closes the loop
					}
					if len(path) != len(tr.Hops) {
						t.Fatalf("%v: walk path has %d ports", tr, len(path))
					}
					for i, p := range path {
						if h := tr.Hops[i]; p.Node != h.Switch || p.Num != h.Out {
							t.Fatalf("%v: walk hop %d leaves %s/%d", tr, i, p.Node.Description, p.Num)
						}
					}
				}
			}
			// A switch the analyzer does not know: no table, there.
			stray := &fabric.Node{Type: mad.NodeSwitch, GUID: 0xdead}
			s, ok := a.Switch(stray)
			if o, at := a.WalkTo(f.PortByLID(hostLIDs(f)[0])).FromSwitch(s); ok || o != NoTable || at != stray {
				t.Errorf("stray switch: ok %v, %v at %v", ok, o, at)
			}
			if (failed == 0) != (name == "healthy") {
				t.Errorf("%d failed routes", failed)
			}
		})
	}
}

// TestStrictRules checks what Rules.Strict and Rules.PortUp change.
func TestStrictRules(t *testing.T) {
	b := "gpu012 mlx5_0"
	cases := []struct {
		name          string
		edit          func(f *fabric.Fabric)
		loose, strict Outcome
	}{
		{"above LinearFDBTop", func(f *fabric.Fabric) { node(f, "leaf01").Switch.LinearFDBTop = lid(f, b) - 1 }, Delivered, BeyondTop},
		{"table too short", func(f *fabric.Fabric) {
			sw := node(f, "leaf01").Switch
			sw.LFT.Truncate(int(lid(f, b)), nil)
		}, NoTable, BeyondTop},
		{"port 0 for another LID", func(f *fabric.Fabric) { node(f, "leaf01").Switch.LFT.Set(lid(f, b), 0) }, NoRoute, Misdelivered},
		{"port unknown to the fabric", func(f *fabric.Fabric) {
			sw := node(f, "leaf01")
			sw.Ports[sw.Switch.LFT.At(lid(f, b))] = nil
		}, NoRoute, DeadEnd},
		{"no table", func(f *fabric.Fabric) { node(f, "leaf01").Switch.LFT = nil }, NoTable, NoTable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := small(t)
			c.edit(f)
			leaf, dst := node(f, "leaf01"), node(f, b).Ports[1]
			if o, _ := NewAnalyzer(f).WalkTo(dst).From(leaf); o != c.loose {
				t.Errorf("zero rules: %v, want %v", o, c.loose)
			}
			o, at := NewAnalyzerWith(f, Rules{Strict: true}).WalkTo(dst).From(leaf)
			if o != c.strict || at != leaf {
				t.Errorf("strict: %v at %v, want %v at leaf01", o, at, c.strict)
			}
		})
	}
	// PortUp: a port that is not LinkUp carries nothing, though neither
	// end is Down.
	f := small(t)
	leaf, dst := node(f, "leaf01"), node(f, b).Ports[1]
	up := leaf.Ports[leaf.Switch.LFT.At(dst.LID)]
	up.PhysState = mad.PhysPolling
	linkUp := func(p *fabric.Port) bool { return p.PhysState == mad.PhysLinkUp }
	if o, _ := NewAnalyzer(f).WalkTo(dst).From(leaf); o != Delivered {
		t.Errorf("zero rules: %v", o)
	}
	a := NewAnalyzerWith(f, Rules{PortUp: linkUp})
	if o, _ := a.WalkTo(dst).From(leaf); o != DeadEnd {
		t.Errorf("PortUp: %v, want dead end", o)
	}
	if p := a.Egress(leaf, dst.LID); p != nil {
		t.Errorf("Egress through a port that is not up: %s/%d", p.Node.Description, p.Num)
	}
	if p := NewAnalyzer(f).Egress(leaf, dst.LID); p != up {
		t.Errorf("Egress = %v, want leaf01/%d", p, up.Num)
	}
}
