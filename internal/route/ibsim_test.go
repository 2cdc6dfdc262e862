package route

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/discover"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/ibsimtest"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/internal/transport/ibsim"
	"github.com/ibdoctor/ibdoctor/mad"
)

// ibsimFabric is ibsim + OpenSM with ibdoctor attached at host through
// the ibsim transport, and the fabric discovered from there.
type ibsimFabric struct {
	sim  *ibsimtest.Sim
	host string
	eng  *transport.Engine
	f    *fabric.Fabric
	ctx  context.Context
}

func startIBSim(t testing.TB, net, host string, window int) *ibsimFabric {
	t.Helper()
	ibsimtest.Require(t, "opensm", "dump_fts", "ibtracert")
	s := ibsimtest.Start(t, net)
	// OpenSM's first sweep of FatTree8k takes over a minute when the
	// host is loaded and OpenSM is niced with the test.
	s.StartOpenSM(ibsimtest.OpenSMOptions{Host: host, Once: true, Timeout: 15 * time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	c, err := ibsim.Dial(ctx, ibsim.Options{SockName: s.SockName, Host: host})
	if err != nil {
		t.Fatal(err)
	}
	eng := transport.NewEngine(c, transport.Options{Timeout: 2 * time.Second, Window: window})
	t.Cleanup(func() { eng.Close() })
	r := &ibsimFabric{sim: s, host: host, eng: eng, ctx: ctx}
	r.rediscover(t)
	return r
}

func (r *ibsimFabric) rediscover(t testing.TB) {
	t.Helper()
	f, err := discover.Run(r.ctx, r.eng, discover.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Unreachable) > 0 {
		t.Fatalf("discovery missed %v", f.Unreachable)
	}
	r.f = f
}

// compareWithDumpFTS asserts that the LFTs in f equal dump_fts's tables
// entry for entry, switch by switch (matched by GUID).
func compareWithDumpFTS(t testing.TB, f *fabric.Fabric, text string) {
	t.Helper()
	real, err := fabric.ParseDumpFTS(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	nsw := 0
	for _, n := range f.Nodes {
		if n.Type == mad.NodeSwitch {
			nsw++
		}
	}
	if len(real) != nsw {
		t.Fatalf("dump_fts shows %d switches, ibdoctor discovered %d", len(real), nsw)
	}
	entries := 0
	for _, d := range real {
		sw := f.NodeByGUID(d.GUID)
		if sw == nil || sw.Switch == nil || sw.Switch.LFT == nil {
			t.Fatalf("dump_fts switch %#x %q: no table read by ibdoctor", d.GUID, d.Description)
		}
		if sw.Description != d.Description {
			t.Errorf("switch %#x: ibdoctor %q, dump_fts %q", d.GUID, sw.Description, d.Description)
		}
		want := d.LFT()
		got := sw.Switch.LFT.Bytes()
		for lid := 1; lid < max(len(got), len(want)); lid++ {
			g, w := uint8(fabric.NoRoute), uint8(fabric.NoRoute)
			if lid < len(got) {
				g = got[lid]
			}
			if lid < len(want) {
				w = want[lid]
			}
			if g != w {
				t.Errorf("%s LID %d: ibdoctor read port %d, dump_fts %d", sw.Description, lid, g, w)
			}
		}
		entries += len(d.Entries)
	}
	if entries == 0 {
		t.Fatal("dump_fts listed no entries")
	}
}

// tracertHop is one switch of an ibtracert route.
type tracertHop struct {
	GUID    uint64
	Name    string
	In, Out int
}

var (
	tracertArrow = regexp.MustCompile(`^\[(\d+)\] -> (ca|switch|router) port \{0x([0-9a-f]+)\}\[(\d+)\] lid \d+-\d+ "(.*)"$`)
	tracertFrom  = regexp.MustCompile(`^From (ca|switch|router) \{0x([0-9a-f]+)\} portnum (\d+) lid \d+-\d+ "(.*)"$`)
	tracertTo    = regexp.MustCompile(`^To (ca|switch|router) \{0x([0-9a-f]+)\} portnum (\d+) lid \d+-\d+ "(.*)"$`)
	tracertBad   = regexp.MustCompile(`Bad forwarding table entry found at: node "(.*)" lid entry (\d+) is (\d+)`)
)

// parseIBTracert turns ibtracert's output into the switches crossed, each
// with its in and out port (0 where the route starts or ends at the switch
// itself), and whether it reached its "To" line.
func parseIBTracert(t testing.TB, out string) (hops []tracertHop, arrived bool) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		line = strings.TrimSpace(line)
		switch m := tracertArrow.FindStringSubmatch(line); {
		case m != nil:
			outPort, _ := strconv.Atoi(m[1])
			if len(hops) > 0 {
				hops[len(hops)-1].Out = outPort
			}
			if m[2] == "switch" {
				g, _ := strconv.ParseUint(m[3], 16, 64)
				in, _ := strconv.Atoi(m[4])
				hops = append(hops, tracertHop{GUID: g, Name: m[5], In: in})
			}
			continue
		}
		if m := tracertFrom.FindStringSubmatch(line); m != nil {
			if m[1] == "switch" {
				g, _ := strconv.ParseUint(m[2], 16, 64)
				hops = append(hops, tracertHop{GUID: g, Name: m[4]})
			}
			continue
		}
		if tracertTo.MatchString(line) {
			arrived = true
			continue
		}
		if strings.HasPrefix(line, "ibtracert:") || strings.HasPrefix(line, "ibwarn:") {
			continue // the tool's own complaints (a failed route)
		}
		t.Fatalf("unexpected ibtracert line %q in\n%s", line, out)
	}
	return hops, arrived
}

func hopsOf(tr Trace) []tracertHop {
	var h []tracertHop
	for _, x := range tr.Hops {
		h = append(h, tracertHop{GUID: x.Switch.GUID, Name: x.Switch.Description, In: int(x.In), Out: int(x.Out)})
	}
	return h
}

func endpointLIDs(f *fabric.Fabric) (cas, sws []uint16) {
	for _, n := range f.Nodes {
		if n.Type == mad.NodeSwitch {
			sws = append(sws, n.Ports[0].LID)
		} else {
			for _, p := range n.Ports {
				if p != nil && p.LID != 0 {
					cas = append(cas, p.LID)
				}
			}
		}
	}
	return cas, sws
}

// TestIBSimSideBySide runs OpenSM on an ibsim fat tree and checks
// ibdoctor's routes against infiniband-diags on the same fabric:
// (a) the LFTs read through the ibsim transport equal dump_fts entry for
// entry; (b) TraceLive crosses the same switches and ports as ibtracert
// for a sample of pairs, from here and from elsewhere; (c) after OpenSM
// loads an edited table with a removed entry (opensm -R file -U), both
// report the pair unroutable at the same switch, and the LFTs still match.
func TestIBSimSideBySide(t *testing.T) {
	const host = "h0001"
	r := startIBSim(t, ibsimtest.FatTree(8, 6, 4), host, 0)
	if err := ReadLFTs(r.ctx, r.eng, r.f, ReadOptions{}); err != nil {
		t.Fatal(err)
	}
	dump := r.sim.MustRun(host, "dump_fts")
	compareWithDumpFTS(t, r.f, dump) // (a)

	// (b) A sample of pairs: host to host, host to switch, switch to host.
	cas, sws := endpointLIDs(r.f)
	rng := rand.New(rand.NewPCG(1, 2))
	type pair struct{ from, to uint16 }
	var pairs []pair
	for range 16 {
		pairs = append(pairs, pair{cas[rng.IntN(len(cas))], cas[rng.IntN(len(cas))]})
	}
	for range 4 {
		pairs = append(pairs, pair{cas[rng.IntN(len(cas))], sws[rng.IntN(len(sws))]}, pair{sws[rng.IntN(len(sws))], cas[rng.IntN(len(cas))]})
	}
	for _, p := range pairs {
		if p.from == p.to {
			continue
		}
		out := r.sim.MustRun(host, "ibtracert", fmt.Sprint(p.from), fmt.Sprint(p.to))
		want, arrived := parseIBTracert(t, out)
		if !arrived || len(want) == 0 {
			t.Fatalf("ibtracert %d %d did not arrive:\n%s", p.from, p.to, out)
		}
		for _, opt := range []LiveOptions{{}, {Fabric: r.f}} {
			lt, err := TraceLive(r.ctx, r.eng, p.from, p.to, opt)
			if err != nil {
				t.Fatalf("%d->%d: %v", p.from, p.to, err)
			}
			if lt.Outcome != Delivered || fmt.Sprint(hopsOf(lt.Trace)) != fmt.Sprint(want) {
				t.Fatalf("%d->%d (model %v):\nibdoctor %v %v\nibtracert %v\n%s", p.from, p.to, opt.Fabric != nil, hopsOf(lt.Trace), lt.Outcome, want, out)
			}
		}
		// And the offline trace over the tables read agrees.
		off, _ := TraceRoute(r.f, p.from, p.to)
		if fmt.Sprint(hopsOf(off)) != fmt.Sprint(want) {
			t.Fatalf("%d->%d offline %v, ibtracert %v", p.from, p.to, hopsOf(off), want)
		}
	}

	// (c) Remove the entry for a host's LID from the spine its route from
	// h0001 crosses, and have OpenSM load the edited dump.
	src := r.f.NodesByName("h0001 HCA-1")[0].Ports[1].LID
	dstNode := r.f.NodesByName("h0040 HCA-1")[0]
	dst := dstNode.Ports[1].LID
	before, _ := TraceRoute(r.f, src, dst)
	if len(before.Hops) != 3 {
		t.Fatalf("h0001->h0040: %v", before)
	}
	spine := before.Hops[1].Switch
	edited, removed := removeEntry(dump, spine.GUID, dst)
	if !removed {
		t.Fatalf("no entry for LID %d on %s in\n%s", dst, spine.Description, dump)
	}
	file := filepath.Join(r.sim.Dir, "blackhole.dump")
	if err := os.WriteFile(file, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	r.sim.StartOpenSM(ibsimtest.OpenSMOptions{Host: host, LFTFile: file, Once: true})
	r.rediscover(t)
	if err := ReadLFTs(r.ctx, r.eng, r.f, ReadOptions{}); err != nil {
		t.Fatal(err)
	}
	after := r.sim.MustRun(host, "dump_fts")
	compareWithDumpFTS(t, r.f, after)
	// OpenSM may renumber; trace by the same ports' LIDs now.
	src = r.f.NodesByName("h0001 HCA-1")[0].Ports[1].LID
	dst = r.f.NodesByName("h0040 HCA-1")[0].Ports[1].LID
	if got := r.f.NodeByGUID(spine.GUID).Switch.LFT.At(dst); got != fabric.NoRoute {
		t.Fatalf("OpenSM did not load the black hole (entry %d); log: %s", got, r.sim.Dir)
	}
	out, err := r.sim.Run(host, "ibtracert", "-f", fmt.Sprint(src), fmt.Sprint(dst))
	var te *ibsimtest.ToolError
	if !errors.As(err, &te) {
		t.Fatalf("ibtracert through a black hole succeeded: %v\n%s", err, out)
	}
	m := tracertBad.FindStringSubmatch(te.Stderr)
	if m == nil || m[2] != fmt.Sprint(dst) || m[3] != "255" {
		t.Fatalf("ibtracert -f did not report the bad entry:\n%s\n%s", te.Stdout, te.Stderr)
	}
	for _, opt := range []LiveOptions{{}, {Fabric: r.f}} {
		lt, err := TraceLive(r.ctx, r.eng, src, dst, opt)
		if err != nil {
			t.Fatal(err)
		}
		last := lt.Hops[len(lt.Hops)-1]
		if lt.Outcome != NoRoute || last.Switch.Description != m[1] || last.Switch.GUID != spine.GUID || last.Out != fabric.NoRoute {
			t.Fatalf("ibdoctor: %v; ibtracert: no route at %q", lt.Trace, m[1])
		}
	}
	// The hops before the black hole are the ones ibtracert printed.
	partial, _ := parseIBTracert(t, te.Stdout)
	lt, _ := TraceLive(r.ctx, r.eng, src, dst, LiveOptions{})
	got := hopsOf(lt.Trace)
	if len(partial) != len(got)-1 || fmt.Sprint(partial[:len(partial)-1]) != fmt.Sprint(got[:len(partial)-1]) || partial[len(partial)-1].GUID != got[len(partial)-1].GUID {
		t.Fatalf("before the black hole: ibtracert %v, ibdoctor %v", partial, got)
	}
	t.Logf("black hole at %s for LID %d: both report it; ibtracert: %s", m[1], dst, m[0])
}

// removeEntry deletes the line for lid from switch guid's section of a
// dump_fts text.
func removeEntry(dump string, guid uint64, lid uint16) (string, bool) {
	var b strings.Builder
	in, removed := false, false
	header := fmt.Sprintf(" guid 0x%016x ", guid)
	entry := fmt.Sprintf("0x%04x ", lid)
	for _, line := range strings.SplitAfter(dump, "\n") {
		if strings.HasPrefix(line, "Unicast lids") {
			in = strings.Contains(line, header)
		}
		if in && strings.HasPrefix(line, entry) {
			removed = true
			continue
		}
		b.WriteString(line)
	}
	return b.String(), removed
}
