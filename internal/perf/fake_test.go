package perf

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// fakeGetter answers GetPerf from functions; nil ones answer zeros.
type fakeGetter struct {
	cpi  func(lid uint16, c *mad.ClassPortInfo) error
	ext  func(lid uint16, x *mad.PortCountersExtended) error
	pc   func(lid uint16, p *mad.PortCounters) error
	gets atomic.Int64
}

func (f *fakeGetter) GetPerf(ctx context.Context, a transport.Addr, at mad.Attribute, mod uint32) (*mad.GMP, error) {
	f.gets.Add(1)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var err error
	switch x := at.(type) {
	case *mad.ClassPortInfo:
		if f.cpi != nil {
			err = f.cpi(a.DLID, x)
		}
	case *mad.PortCountersExtended:
		if f.ext != nil {
			err = f.ext(a.DLID, x)
		}
	case *mad.PortCounters:
		if f.pc != nil {
			err = f.pc(a.DLID, x)
		}
	}
	return &mad.GMP{}, err
}

func (f *fakeGetter) SetPerf(ctx context.Context, a transport.Addr, at mad.Attribute, mod uint32) (*mad.GMP, error) {
	return nil, errors.New("fake: no Sets")
}

func TestRedirectAndFallback(t *testing.T) {
	f := fatTree(t)
	var leaf1 uint16
	for _, n := range f.Nodes {
		if n.Description == "leaf01" {
			leaf1 = n.Ports[0].LID
		}
	}
	g := &fakeGetter{
		cpi: func(lid uint16, c *mad.ClassPortInfo) error {
			c.CapabilityMask = mad.PMCapExtendedWidth | mad.PMCapXmitWait
			c.CapabilityMask2 = mad.PMCap2AdditionalCountersExtended
			if lid == leaf1 {
				c.RedirectLID, c.RedirectQP = 77, 5
			}
			return nil
		},
		// every extended read fails: the sweep falls back to PortCounters
		ext: func(lid uint16, x *mad.PortCountersExtended) error {
			return &transport.StatusError{}
		},
		pc: func(lid uint16, p *mad.PortCounters) error {
			p.SymbolErrorCounter = 3
			p.PortXmitWait = 10
			return nil
		},
	}
	res, err := Sweep(context.Background(), g, f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	redirected := 0
	for _, e := range res.Errors {
		if e.What != "ClassPortInfo" || !strings.Contains(e.Error(), "redirects to LID 77") {
			t.Errorf("unexpected %v", e)
		}
		redirected++
	}
	if redirected != 4 { // leaf01's four linked ports
		t.Errorf("%d redirect errors", redirected)
	}
	if len(res.Last.Ports) != linkedPorts(f)-4 {
		t.Errorf("%d ports", len(res.Last.Ports))
	}
	for _, pc := range res.Last.Ports {
		if pc.Extended() != nil || pc.Basic == nil {
			t.Fatalf("fallback: ext %v basic %v", pc.Extended() != nil, pc.Basic != nil)
		}
		if v, _ := pc.Get("SymbolErrorCounter"); v.Value != 3 || v.Bits != 16 || v.Source != mad.AttrPortCounters {
			t.Errorf("SymbolErrorCounter %+v", v)
		}
		if v, _ := pc.Get("PortXmitWait"); v.Value != 10 || v.Bits != 32 {
			t.Errorf("PortXmitWait %+v", v)
		}
	}
}

func TestExtendedWithoutErrorCounters(t *testing.T) {
	f := fatTree(t)
	g := &fakeGetter{
		cpi: func(lid uint16, c *mad.ClassPortInfo) error {
			c.CapabilityMask = mad.PMCapExtendedWidthNoIETF
			return nil
		},
		ext: func(lid uint16, x *mad.PortCountersExtended) error {
			x.XmitDataWords = 1 << 40
			x.PortUnicastXmitPkts = 99 // not valid without ExtendedWidth
			x.SymbolErrorCounter = 99  // not valid without AdditionalExtended
			return nil
		},
		pc: func(lid uint16, p *mad.PortCounters) error {
			p.SymbolErrorCounter = 2
			p.XmitDataWords = 0xffffffff
			p.PortXmitWait = 5 // not valid without IsPortCountersXmitWaitSupported
			return nil
		},
	}
	res, err := Sweep(context.Background(), g, f, Options{})
	if err != nil || len(res.Errors) != 0 {
		t.Fatalf("%v %v", err, res.Errors)
	}
	pc := res.Last.Ports[0]
	if v, _ := pc.Get("PortXmitData"); v.Value != 4<<40 || v.Bits != 64 || v.Saturated {
		t.Errorf("PortXmitData %+v: want the 64-bit counter in octets", v)
	}
	if v, _ := pc.Get("SymbolErrorCounter"); v.Value != 2 {
		t.Errorf("SymbolErrorCounter %+v: want PortCounters'", v)
	}
	for _, name := range []string{"PortUnicastXmitPkts", "PortXmitWait", "QP1Dropped"} {
		if _, ok := pc.Get(name); ok {
			t.Errorf("%s reported without its capability", name)
		}
	}
}

func TestCancelled(t *testing.T) {
	f := fatTree(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g := &fakeGetter{}
	res, err := Sweep(ctx, g, f, Options{})
	if !errors.Is(err, context.Canceled) || res == nil {
		t.Fatalf("%v %v", res, err)
	}
	if len(res.Last.Ports) != 0 {
		t.Errorf("ports read after cancel: %d", len(res.Last.Ports))
	}
}

func TestResetModeString(t *testing.T) {
	for m, s := range map[ResetMode]string{ResetNone: "none", ResetErrors: "errors", ResetAll: "all", 7: "ResetMode(7)"} {
		if m.String() != s {
			t.Errorf("%d: %q", m, m.String())
		}
	}
}
