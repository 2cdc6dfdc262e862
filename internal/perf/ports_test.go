package perf

import (
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/transport"
)

// twoSamples sweeps the rig's fabric twice 10 s apart with every port's
// counters distinct (each port's error counters and wait grow by its own
// amount), so that a reading that shows another port's values is caught.
func twoSamples(t *testing.T) (*rig, *Result) {
	t.Helper()
	r := newRig(t, sim.Options{}, transport.Options{})
	i := 0
	for _, n := range r.f.Nodes {
		for _, p := range n.Ports {
			if !linkUp(n, p) {
				continue
			}
			i++
			name := fmt.Sprintf("%s/%d", n.Description, p.Num)
			r.must(t, r.sim.SetCounter(name, "SymbolErrorCounter", uint64(i)))
			r.must(t, r.sim.CounterRate(name, "PortRcvErrors", float64(i)))
			r.must(t, r.sim.CounterRate(name, "PortXmitWait", float64(100*i)))
		}
	}
	res, err := Sweep(r.ctx, r.g, r.f, r.opts(Options{Interval: 10 * time.Second}))
	if err != nil || len(res.Errors) != 0 {
		t.Fatalf("%v %v", err, res.Errors)
	}
	return r, res
}

// wantReading is what Ports must give for one port, computed from the
// sample and the delta apart from Ports.
func wantReading(t *testing.T, res *Result, rd checksReading) {
	t.Helper()
	k := Key{rd.Port.Node.GUID, rd.Port.Num}
	pc, ok := res.Last.Port(k)
	d, dok := res.Delta(k)
	if !ok || !dok {
		t.Fatalf("%v: no reading or delta", k)
	}
	var errs []string
	for _, v := range pc.Errors() {
		dv, _ := d.Get(v.Name)
		errs = append(errs, fmt.Sprintf("%s=%d+%d", v.Name, v.Value, dv.Delta))
	}
	var got []string
	for _, c := range rd.Errors {
		got = append(got, fmt.Sprintf("%s=%d+%d", c.Name, c.Value, c.Delta))
	}
	if !reflect.DeepEqual(got, errs) {
		t.Errorf("%v: errors %v, want %v", k, got, errs)
	}
	w, _ := pc.Get("PortXmitWait")
	dw, _ := d.Get("PortXmitWait")
	if rd.XmitWait == nil || rd.XmitWait.Value != w.Value || rd.XmitWait.Delta != dw.Delta {
		t.Errorf("%v: XmitWait %+v, want %d+%d", k, rd.XmitWait, w.Value, dw.Delta)
	}
}

// Ports allocates per call, not per port: at the LID limit a reading of
// every port for each check that walks the counters was most of what
// check allocated (issue 13).
func TestResultPortsAllocsPerCall(t *testing.T) {
	_, res := twoSamples(t)
	n := 0
	res.Ports(func(checksReading) { n++ })
	if n < 8 {
		t.Fatalf("%d readings: too few ports for the test", n)
	}
	allocs := testing.AllocsPerRun(20, func() {
		res.Ports(func(rd checksReading) {
			if len(rd.Errors) == 0 {
				t.Errorf("port %v without errors", rd.Port)
			}
		})
	})
	if allocs > 2 {
		t.Errorf("Ports allocated %.0f times for %d ports; want at most 2 a call", allocs, n)
	}
}

// A reading's Errors and XmitWait are the call's own buffer, valid while
// fn runs: a caller that keeps readings keeps their Clone, and each kept
// reading still holds its own port's values after the call.
func TestResultPortsKeptClones(t *testing.T) {
	_, res := twoSamples(t)
	var kept []checksReading
	res.Ports(func(rd checksReading) {
		wantReading(t, res, rd)
		kept = append(kept, rd.Clone())
	})
	for _, rd := range kept {
		wantReading(t, res, rd)
	}
	// A clone is the caller's: changing it leaves the next call's
	// readings as they were.
	for i := range kept {
		kept[i].Errors[0].Growth = 99
		kept[i].XmitWait.Value = 1
	}
	res.Ports(func(rd checksReading) { wantReading(t, res, rd) })
}

// Calls from several goroutines at once share no buffer (run with -race).
func TestResultPortsConcurrent(t *testing.T) {
	_, res := twoSamples(t)
	var wg sync.WaitGroup
	got := make([][]checksReading, 4)
	for g := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				got[g] = got[g][:0]
				res.Ports(func(rd checksReading) {
					if len(rd.Errors) > 0 {
						rd.Errors[0].Growth++ // the caller's to change while fn runs
					}
					got[g] = append(got[g], rd.Clone())
				})
			}
		}()
	}
	wg.Wait()
	for g := 1; g < len(got); g++ {
		if !reflect.DeepEqual(got[g], got[0]) {
			t.Errorf("goroutine %d read other values than goroutine 0", g)
		}
	}
	for _, rd := range got[0] {
		wantReading(t, res, rd)
		if rd.Errors[0].Growth != 1 {
			t.Errorf("%v: Growth %d, want the 1 its own call added", rd.Port, rd.Errors[0].Growth)
		}
	}
}
