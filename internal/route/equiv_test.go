package route

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/mad"
)

// refRoute follows the route from switch sw towards dst one hop at a
// time with Rules.step (no index, no memo): the oracle for the
// Analyzer's precomputed steps. It returns the outcome, the egress ports
// of a delivered route, and the switch where a failed one ends (for a
// loop, the switch it comes back to).
func refRoute(r *Rules, sw *fabric.Node, to uint16, dst *fabric.Port) (Outcome, []*fabric.Port, *fabric.Node) {
	var ports []*fabric.Port
	seen := map[*fabric.Node]bool{}
	for {
		if seen[sw] {
			return Loop, nil, sw
		}
		seen[sw] = true
		if sw.Switch == nil {
			return NoTable, nil, sw
		}
		out, next, _, _, o := r.step(sw, to, dst)
		if next == nil {
			if o == Delivered {
				ports = append(ports, sw.Ports[out])
			}
			return o, ports, sw
		}
		if next.Switch == nil {
			return NoTable, nil, next
		}
		ports = append(ports, sw.Ports[out])
		sw = next
	}
}

// refHostPaths is HostPaths pair by pair with refRoute.
func refHostPaths(f *fabric.Fabric, r Rules, hosts []uint16, maxFailed int) (map[*fabric.Port]int64, [numOutcomes]int64, []Pair) {
	loads := map[*fabric.Port]int64{}
	var outc [numOutcomes]int64
	var failed []Pair
	for _, d := range hosts {
		dst := f.PortByLID(d)
		for _, s := range hosts {
			if s == d {
				continue
			}
			src := f.PortByLID(s)
			var o Outcome
			var ports []*fabric.Port
			if !r.up(src) || src.Remote.Node.Type != mad.NodeSwitch || src.Remote.Node.Switch == nil {
				o = SourceDown
			} else {
				o, ports, _ = refRoute(&r, src.Remote.Node, d, dst)
			}
			outc[o]++
			if o == Delivered {
				for _, p := range ports {
					loads[p]++
				}
			} else if len(failed) < maxFailed {
				failed = append(failed, Pair{s, d, o})
			}
		}
	}
	return loads, outc, failed
}

// damage breaks f at random: rewritten entries (port 0, ports beyond the
// switch, 0xFF), a lowered LinearFDBTop, a down link, a port whose state
// was not read, a missing port record, a switch without SwitchInfo, a
// host whose link is down.
func damage(rng *rand.Rand, f *fabric.Fabric, hosts []uint16, n int) {
	var sws []*fabric.Node
	for _, nd := range f.Nodes {
		if nd.Type == mad.NodeSwitch {
			sws = append(sws, nd)
		}
	}
	for k := 0; k < n; k++ {
		sw := sws[rng.IntN(len(sws))]
		if sw.Switch == nil {
			continue
		}
		l := hosts[rng.IntN(len(hosts))]
		switch rng.IntN(10) {
		case 0:
			sw.Switch.LFT.Set(l, fabric.NoRoute)
		case 1:
			sw.Switch.LFT.Set(l, 0)
		case 2:
			sw.Switch.LFT.Set(l, uint8(len(sw.Ports)+rng.IntN(3)))
		case 3:
			sw.Switch.LinearFDBTop = l - 1
		case 4:
			p := sw.Ports[1+rng.IntN(len(sw.Ports)-1)]
			if p != nil {
				p.State = mad.PortStateDown
			}
		case 5:
			p := sw.Ports[1+rng.IntN(len(sw.Ports)-1)]
			if p != nil {
				p.Unreached |= fabric.UnreachedInfo
				p.State = mad.PortStateDown
			}
		case 6:
			sw.Ports[1+rng.IntN(len(sw.Ports)-1)] = nil
		case 7:
			if rng.IntN(4) == 0 {
				sw.Switch = nil
			}
		case 8:
			h := f.PortByLID(l)
			h.State = mad.PortStateDown
		default:
			sw.Switch.LFT.Set(l, uint8(1+rng.IntN(len(sw.Ports)-1)))
		}
	}
}

// TestAnalyzerMatchesStepByStep compares HostPaths (loads, outcomes, the
// failed pairs in order) and Walk (outcome, failing switch, path) with
// the hop-by-hop oracle, under the zero, Strict and PortUp rules, on
// two- and three-level fat trees with random damage. The Analyzer judges
// each port once and counts sources by their leaf; this says that
// changes nothing.
func TestAnalyzerMatchesStepByStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 13))
	builds := []func() (*fabric.Fabric, error){
		func() (*fabric.Fabric, error) {
			return topology.FatTree2{Common: topology.Common{SwitchPorts: 12}, Leaves: 4, Spines: 3, HostsPerLeaf: 6, LinksPerPair: 2}.Build()
		},
		func() (*fabric.Fabric, error) {
			return topology.FatTree3{Common: topology.Common{SwitchPorts: 8}, Pods: 3, LeavesPerPod: 2, SpinesPerPod: 2, HostsPerLeaf: 3, Cores: 4}.Build()
		},
		// More than two LFT blocks of LIDs: a walk reads whole blocks
		// from its cache (stepIn), the last one, partial, entry by entry.
		func() (*fabric.Fabric, error) {
			return topology.FatTree2{Common: topology.Common{SwitchPorts: 24}, Leaves: 6, Spines: 3, HostsPerLeaf: 20, LinksPerPair: 1}.Build()
		},
	}
	noSMA := func(p *fabric.Port) bool { return p.State == mad.PortStateActive && p.Num != 3 }
	rulesets := map[string]Rules{"zero": {}, "strict": {Strict: true}, "portup": {Strict: true, PortUp: noSMA}}
	for round := 0; round < 24; round++ {
		for bi, build := range builds {
			for rname, rules := range rulesets {
				name := fmt.Sprintf("round%d/fabric%d/%s", round, bi, rname)
				f, err := build()
				if err != nil {
					t.Fatal(err)
				}
				if _, err := topology.AssignLIDs(f); err != nil {
					t.Fatal(err)
				}
				if err := topology.Route(f); err != nil {
					t.Fatal(err)
				}
				hosts := hostLIDs(f)
				damage(rng, f, hosts, round)
				set := hosts
				switch round % 3 {
				case 1:
					set = hosts[:len(hosts)/2+round%5]
				case 2: // a host listed twice
					set = append(slices.Clone(hosts[:len(hosts)/2]), hosts[1])
				}
				maxFailed := []int{0, 3, 1000}[round%3]
				wantLoads, wantOut, wantFailed := refHostPaths(f, rules, set, maxFailed)
				a := NewAnalyzerWith(f, rules)
				hp, err := a.HostPaths(set, maxFailed)
				if err != nil {
					t.Fatal(err)
				}
				if hp.Outcomes != wantOut {
					t.Fatalf("%s: outcomes %v, step by step %v", name, hp.Outcomes, wantOut)
				}
				if !slices.Equal(hp.Failed, wantFailed) {
					t.Fatalf("%s: failed %v, step by step %v", name, hp.Failed, wantFailed)
				}
				for _, sw := range f.Nodes {
					for i, v := range hp.Loads.Switch(sw) {
						if p := sw.Ports[i]; p != nil && v != wantLoads[p] || p == nil && v != 0 {
							t.Fatalf("%s: %s port %d: %d paths, step by step %d", name, sw.Description, i, v, wantLoads[p])
						}
					}
				}
				for _, sw := range f.Nodes {
					e, ok := a.EgressFrom(sw)
					if ok != (sw.Type == mad.NodeSwitch && sw.Switch != nil) {
						t.Fatalf("%s: EgressFrom(%s) %v", name, sw.Description, ok)
					}
					for lid := 0; ok && lid < sw.Switch.LFT.Len()+2; lid++ {
						if got, want := e.To(uint16(lid)), a.Egress(sw, uint16(lid)); got != want {
							t.Fatalf("%s: %s LID %d: egress %v, Egress %v", name, sw.Description, lid, got, want)
						}
					}
				}
				var w *Walk
				order := slices.Clone(hosts)
				if round%4 == 3 { // blocks in turn, and back
					rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
				}
				for _, d := range order {
					dst := f.PortByLID(d)
					if w == nil || round%2 == 0 {
						w = a.WalkTo(dst)
					} else {
						w.Reset(dst)
					}
					for _, sw := range f.Nodes {
						if sw.Type != mad.NodeSwitch || sw.Switch == nil {
							continue
						}
						o, at := w.From(sw)
						ro, ports, rat := refRoute(&rules, sw, d, dst)
						if o != ro {
							t.Fatalf("%s: %s -> LID %d: walk %v, step by step %v", name, sw.Description, d, o, ro)
						}
						if o == Delivered {
							if got := w.Path(sw); !slices.Equal(got, ports) {
								t.Fatalf("%s: %s -> LID %d: path %v, step by step %v", name, sw.Description, d, got, ports)
							}
						} else if o != Loop && at != rat {
							t.Fatalf("%s: %s -> LID %d: %v at %s, step by step at %s", name, sw.Description, d, o, at.Description, rat.Description)
						}
					}
				}
			}
		}
	}
}
