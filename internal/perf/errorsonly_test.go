package perf

import (
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// TestErrorsOnly: on PMAs without the 64-bit error counters (ibsim's CA
// PMAs, older HCAs) ErrorsOnly reads one MAD per port instead of two and
// gets the same error counters; on PMAs with them it still reads the
// 64-bit values from PortCountersExtended.
func TestErrorsOnly(t *testing.T) {
	noAdditional := sim.PMACaps{
		Switch: sim.PMAAllPortSelect | sim.PMAExtendedWidth | sim.PMAXmitWait,
		CA:     sim.PMAExtendedWidth | sim.PMAXmitWait,
	}
	r := newRig(t, sim.Options{PMA: &noAdditional}, transport.Options{})
	r.must(t, r.sim.SetCounter("leaf01/1", "SymbolErrorCounter", 70000))
	r.must(t, r.sim.SetCounter("leaf02/3", "LinkDownedCounter", 7))

	full, err := Sweep(r.ctx, r.g, r.f, r.opts(Options{}))
	r.must(t, err)
	fullMADs := r.g.byAttr[uint8(mad.AttrPortCounters)].Load() + r.g.byAttr[uint8(mad.AttrPortCountersExtended)].Load()

	r.g = &countingGetter{g: r.eng}
	lean, err := Sweep(r.ctx, r.g, r.f, r.opts(Options{ErrorsOnly: true}))
	r.must(t, err)
	if n := r.g.byAttr[uint8(mad.AttrPortCountersExtended)].Load(); n != 0 {
		t.Errorf("ErrorsOnly read PortCountersExtended %d times from PMAs without 64-bit error counters", n)
	}
	leanMADs := r.g.byAttr[uint8(mad.AttrPortCounters)].Load()
	if ports := int64(linkedPorts(r.f)); leanMADs != ports || fullMADs != 2*ports {
		t.Errorf("counter MADs: full %d, errors-only %d, for %d ports (want 2 per port, then 1)", fullMADs, leanMADs, ports)
	}
	for _, key := range []Key{r.key(t, "leaf01", 1), r.key(t, "leaf02", 3)} {
		a, _ := full.Last.Port(key)
		b, _ := lean.Last.Port(key)
		if a == nil || b == nil {
			t.Fatalf("%v not read", key)
		}
		for _, name := range []string{"SymbolErrorCounter", "LinkDownedCounter"} {
			va, _ := a.Get(name)
			vb, _ := b.Get(name)
			if va.Value != vb.Value || va.Saturated != vb.Saturated {
				t.Errorf("%v %s: full %d (sat %v), errors-only %d (sat %v)", key, name, va.Value, va.Saturated, vb.Value, vb.Saturated)
			}
		}
	}

	// With the 64-bit error counters advertised, ErrorsOnly keeps reading
	// them: SymbolErrorCounter 70000 is exact, not a saturated 65535.
	r2 := newRig(t, sim.Options{}, transport.Options{})
	r2.must(t, r2.sim.SetCounter("leaf01/1", "SymbolErrorCounter", 70000))
	res, err := Sweep(r2.ctx, r2.g, r2.f, r2.opts(Options{ErrorsOnly: true}))
	r2.must(t, err)
	pc, _ := res.Last.Port(r2.key(t, "leaf01", 1))
	if v, _ := pc.Get("SymbolErrorCounter"); v.Value != 70000 || v.Saturated {
		t.Errorf("with 64-bit error counters: SymbolErrorCounter %d (saturated %v), want 70000", v.Value, v.Saturated)
	}
}
