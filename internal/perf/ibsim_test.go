package perf

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/discover"
	"github.com/ibdoctor/ibdoctor/internal/ibsimtest"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/internal/transport/ibsim"
	"github.com/ibdoctor/ibdoctor/mad"
)

const ibsimNet = `Switch 4 "sw1" # "switch one"
[1] "h1"[1]
[2] "h2"[1]

Hca 1 "h1" # "host one HCA"
[1] "sw1"[1]

Hca 1 "h2" # "host two HCA"
[1] "sw1"[2]
`

// perfqueryValues parses perfquery's "Name:....value" lines.
func perfqueryValues(t *testing.T, out string) map[string]uint64 {
	t.Helper()
	m := map[string]uint64{}
	for _, line := range strings.Split(out, "\n") {
		i := strings.IndexByte(line, ':')
		if i <= 0 || strings.HasPrefix(line, "#") {
			continue
		}
		v, err := strconv.ParseUint(strings.TrimLeft(line[i+1:], "."), 0, 64)
		if err == nil {
			m[line[:i]] = v
		}
	}
	return m
}

// TestIbsimAgainstPerfquery sweeps a real ibsim fabric (LIDs from OpenSM)
// through the ibsim transport and compares every error counter and
// PortXmitWait with what perfquery prints for the same ports.
func TestIbsimAgainstPerfquery(t *testing.T) {
	ibsimtest.Require(t, "perfquery", "opensm")
	s := ibsimtest.Start(t, ibsimNet)
	s.StartOpenSM(ibsimtest.OpenSMOptions{Once: true})
	for _, c := range []string{
		`PerformanceSet "sw1"[1] PortCounters.SymbolErrorCounter=1234`,
		`PerformanceSet "sw1"[1] PortCounters.LinkDownedCounter=7`,
		`PerformanceSet "sw1"[1] PortCounters.PortXmitDiscards=65535`,
		`PerformanceSet "sw1"[1] PortCounters.PortXmitWait=4000000000`,
		`PerformanceSet "sw1"[2] PortCounters.LocalLinkIntegrityErrors=15`,
		`PerformanceSet "h2"[1] PortCounters.PortRcvErrors=42`,
	} {
		s.MustConsole(c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := ibsim.Dial(ctx, ibsim.Options{SockName: s.SockName, Host: "h1"})
	if err != nil {
		t.Fatal(err)
	}
	eng := transport.NewEngine(c, transport.Options{Timeout: 2 * time.Second})
	defer eng.Close()
	f, err := discover.Run(ctx, eng, discover.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Sweep(ctx, eng, f, Options{})
	if err != nil || len(res.Errors) != 0 {
		t.Fatalf("%v %v", err, res.Errors)
	}
	if got, want := len(res.Last.Ports), linkedPorts(f); got != want || want != 4 {
		t.Fatalf("read %d ports, want %d (2 switch ports, 2 HCA ports)", got, want)
	}
	compared := 0
	for _, pc := range res.Last.Ports {
		// ibsim: switch caps 0x1300, HCA 0x1200; no 64-bit error counters,
		// so both attributes are read
		if pc.Basic == nil || pc.Extended() == nil {
			t.Errorf("%v: basic %v ext %v", pc.Key, pc.Basic != nil, pc.Extended() != nil)
		}
		host := pc.Port.Node.Description
		var out string
		if pc.Port.Node.Type == mad.NodeSwitch {
			out = s.MustRun("h1", "perfquery", strconv.Itoa(int(pc.LID)), strconv.Itoa(int(pc.Key.Port)))
		} else {
			out = s.MustRun("h1", "perfquery", strconv.Itoa(int(pc.LID)), "1")
		}
		want := perfqueryValues(t, out)
		for _, v := range pc.Counters() {
			if v.Kind != mad.KindError && v.Kind != mad.KindWait {
				continue // traffic counters grow with every MAD in ibsim
			}
			w, ok := want[v.Name]
			if !ok {
				t.Errorf("%s port %d: perfquery printed no %s", host, pc.Key.Port, v.Name)
				continue
			}
			if w != v.Value {
				t.Errorf("%s port %d %s = %d, perfquery %d", host, pc.Key.Port, v.Name, v.Value, w)
			}
			compared++
		}
		if pc.Port.Node.Description == "switch one" && pc.Key.Port == 1 {
			if v, _ := pc.Get("PortXmitDiscards"); !v.Saturated {
				t.Errorf("PortXmitDiscards 65535 not marked saturated")
			}
			if v, _ := pc.Get("PortXmitData"); v.Bits != 64 {
				t.Errorf("PortXmitData from %v bits, want the 64-bit extended counter", v.Bits)
			}
		}
	}
	if compared < 4*12 {
		t.Errorf("only %d counters compared", compared)
	}

	// AllPortSelect on ibsim's switch: the sum shows errors, so the ports
	// are read one by one and give the same values
	res2, err := Sweep(ctx, eng, f, Options{SkipCleanSwitches: true})
	if err != nil || len(res2.Errors) != 0 {
		t.Fatalf("%v %v", err, res2.Errors)
	}
	for _, pc := range res2.Last.Ports {
		if pc.FromAllPorts {
			t.Errorf("%v skipped although its switch has errors", pc.Key)
		}
	}
}
