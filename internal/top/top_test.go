package top

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/discover"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/source"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

func sample(t *testing.T) (*source.Session, *fabric.Fabric, []*fabric.Port) {
	t.Helper()
	ctx := context.Background()
	sess, err := source.Open(ctx, ctx, source.Options{Sim: "sample", Need: source.Need{SMP: true, Perf: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	f, err := discover.Run(ctx, sess.Engine, discover.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ports []*fabric.Port
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil && p.Num != 0 && p.Remote != nil {
				ports = append(ports, p)
			}
		}
	}
	return sess, f, ports
}

// TestBudgetReadsInTurns: with a budget of 200 MADs the sample fabric's
// 1,022 linked ports are read 66 per refresh (3 MADs a port: its
// counters and PortInfo); after one turn every port
// has been read once, after two every port has rates; no refresh after
// the first turn (which also asks each PMA's ClassPortInfo and each
// switch's port-0 PortInfo once) sends
// more than the budget.
func TestBudgetReadsInTurns(t *testing.T) {
	sess, f, ports := sample(t)
	s := NewSampler(sess.Engine, f, Options{Ports: ports, Budget: 200, PortInfo: sess.Engine})
	if s.PerRefresh() != 66 || s.Cycle() != (len(ports)+65)/66 {
		t.Fatalf("PerRefresh %d, Cycle %d for %d ports", s.PerRefresh(), s.Cycle(), len(ports))
	}
	ctx := context.Background()
	var fr *Frame
	failed := 0
	for i := 0; i < s.Cycle(); i++ {
		var err error
		if fr, err = s.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		failed += len(fr.Errors) // a loaded test host can time a read out
	}
	if len(rowsOf(fr))+failed != len(ports) || failed > len(ports)/20 {
		t.Fatalf("after one turn %d rows and %d not read, want %d rows", len(rowsOf(fr)), failed, len(ports))
	}
	for i := 0; i < s.Cycle(); i++ {
		before := sess.Engine.Stats().Sent
		var err error
		if fr, err = s.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		if sent := sess.Engine.Stats().Sent - before; sent > 200 {
			t.Errorf("refresh %d of the second turn sent %d MADs, budget 200", i, sent)
		}
		if fr.ReadNow > 66 {
			t.Errorf("refresh read %d ports", fr.ReadNow)
		}
	}
	measured := 0
	for _, r := range rowsOf(fr) {
		if r.Measured {
			measured++
		}
	}
	if measured < len(ports)-len(ports)/20 || fr.Interval <= 0 {
		t.Errorf("after two turns %d of %d ports measured, interval %v", measured, len(ports), fr.Interval)
	}
}

// TestVerdictsAreChecks: the verdict on a port is the counter checks'
// finding on it: the sample fabric's 1X uplink spine02/49 has symbol
// errors climbing (counters.errors) and its peer waits to send
// (counters.congestion); a clean host port has none.
func TestVerdictsAreChecks(t *testing.T) {
	sess, f, ports := sample(t)
	s := NewSampler(sess.Engine, f, Options{Ports: ports})
	ctx := context.Background()
	if _, err := s.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	// spine02/49 counts 40 symbol errors a second: back-to-back refreshes
	// can be 20 ms apart and see none.
	time.Sleep(250 * time.Millisecond)
	fr, err := s.Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*Row{}
	for _, r := range rowsOf(fr) {
		byName[r.Node+"/"+itoa(r.Num)] = r
	}
	sp := byName["spine02/49"]
	if sp == nil || !sp.HasVerdict || sp.Check != "counters.errors" || sp.Verdict < checks.Warning || sp.ErrorsPerSecond <= 0 || sp.Peer != "leaf07/41" || sp.Rate != "1X NDR" {
		t.Errorf("spine02/49: %+v", sp)
	}
	lf := byName["leaf07/41"]
	if lf == nil || !lf.HasVerdict || lf.Check != "counters.congestion" || lf.XmitWait <= 0.1 {
		t.Errorf("leaf07/41: %+v", lf)
	}
	rows := rowsOf(fr)
	Sort(rows, ByXmitWait)
	if rows[0].XmitWait < rows[len(rows)-1].XmitWait {
		t.Error("ByXmitWait is not worst first")
	}
	Sort(rows, ByErrors)
	if rows[0].ErrorsPerSecond <= 0 {
		t.Error("ByErrors: the first port has no errors")
	}
	if got := Filter(rows, "LEAF07/4"); len(got) == 0 {
		t.Error("Filter is not case-insensitive over the node and far end")
	} else {
		for _, r := range got {
			if r.Node != "leaf07" && r.Peer[:6] != "leaf07" {
				t.Errorf("Filter kept %s/%d (to %s)", r.Node, r.Num, r.Peer)
			}
		}
	}
	// The frame's view sorts and filters the records as Sort and Filter
	// do the rows made of them.
	for _, k := range []SortKey{ByErrors, ByXmitWait, ByUtilization} {
		for _, filter := range []string{"", "LEAF07/4", "gpu0"} {
			want := Filter(rowsOf(fr), filter)
			Sort(want, k)
			v := fr.View(filter, k)
			if v.Len() != len(want) {
				t.Fatalf("View(%q, %v): %d rows, Filter and Sort %d", filter, k, v.Len(), len(want))
			}
			for i, w := range want {
				if r := v.Row(i); r.Port != w.Port {
					t.Errorf("View(%q, %v) row %d: %s/%d, Sort: %s/%d", filter, k, i, r.Node, r.Num, w.Node, w.Num)
					break
				}
			}
		}
	}
}

// refreshByPort refreshes s once and gives its rows by "node/port"; a
// refresh that failed fails the test, unless partialOK and a frame came
// with the error.
func refreshByPort(ctx context.Context, t *testing.T, s *Sampler, partialOK bool) map[string]*Row {
	t.Helper()
	fr, err := s.Refresh(ctx)
	if err != nil && (!partialOK || fr == nil) {
		t.Fatal(err)
	}
	m := map[string]*Row{}
	for _, r := range rowsOf(fr) {
		m[r.Node+"/"+itoa(r.Num)] = r
	}
	return m
}

// rowsOf makes every row of fr, in the order of the watched ports.
func rowsOf(fr *Frame) []*Row {
	var rows []*Row
	for i := range fr.s.recs {
		if fr.s.recs[i].read {
			rows = append(rows, fr.s.row(i))
		}
	}
	return rows
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

func TestParseSortKey(t *testing.T) {
	for in, want := range map[string]SortKey{"errors": ByErrors, "wait": ByXmitWait, "util": ByUtilization, "U": ByUtilization} {
		if got, err := ParseSortKey(in); err != nil || got != want {
			t.Errorf("ParseSortKey(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseSortKey("speed"); err == nil {
		t.Error("ParseSortKey(speed): no error")
	}
	if ByUtilization.Next() != ByErrors {
		t.Error("the sort does not cycle")
	}
}

// TestSortErrorsVerdictFirst (trial N7): sorted by errors, the ports are
// worst first by their verdict, then by errors/s: an info relay-error
// port counting millions a second (PortRcvSwitchRelayErrors, info by
// design) no longer sits above the error ports, nor above a warning.
// Sorted by wait or utilisation the figure chosen still leads.
func TestSortErrorsVerdictFirst(t *testing.T) {
	rows := func() []*Row {
		return []*Row{
			{Node: "leaf03", Num: 60, ErrorsPerSecond: 6.1e6, HasVerdict: true, Verdict: checks.Info},
			{Node: "gpu001", Num: 1, ErrorsPerSecond: 2},
			{Node: "leaf02", Num: 35, ErrorsPerSecond: 6.1, HasVerdict: true, Verdict: checks.Error},
			{Node: "leaf07", Num: 41, XmitWait: 0.5, HasVerdict: true, Verdict: checks.Warning},
			{Node: "spine02", Num: 49, ErrorsPerSecond: 39.9, XmitWait: 0.4, HasVerdict: true, Verdict: checks.Error},
		}
	}
	order := func(rs []*Row) string {
		var s []string
		for _, r := range rs {
			s = append(s, r.Node+"/"+itoa(r.Num))
		}
		return strings.Join(s, " ")
	}
	rs := rows()
	Sort(rs, ByErrors)
	if got, want := order(rs), "spine02/49 leaf02/35 leaf07/41 leaf03/60 gpu001/1"; got != want {
		t.Errorf("by errors: %s, want %s", got, want)
	}
	rs = rows()
	Sort(rs, ByXmitWait)
	if got, want := order(rs), "leaf07/41 spine02/49 leaf02/35 leaf03/60 gpu001/1"; got != want {
		t.Errorf("by wait: %s, want %s", got, want)
	}
}

// watchHealthy discovers the healthy sample fabric from gpu001 mlx5_0 on
// a live sim, for a test that changes it between refreshes: the sim, the
// engine, the fabric found and its ports with a link.
func watchHealthy(t *testing.T) (*sim.Sim, *transport.Engine, *fabric.Fabric, []*fabric.Port) {
	t.Helper()
	sm, err := sim.SampleHealthy(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := sm.Attach("gpu001 mlx5_0", 1)
	if err != nil {
		t.Fatal(err)
	}
	eng := transport.NewEngine(c, transport.Options{Timeout: 100 * time.Millisecond, Retries: -1})
	t.Cleanup(func() { eng.Close() })
	f, err := discover.Run(context.Background(), eng, discover.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ports []*fabric.Port
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil && p.Num != 0 && p.Remote != nil {
				ports = append(ports, p)
			}
		}
	}
	return sm, eng, f, ports
}

// TestLinkGoesAwayWhileWatched (trial D4): top watches the healthy
// sample fabric, then leaf01/3 is disabled (no SM sweep: LID-routed MADs
// to gpu001 mlx5_2 are lost in it) and gpu001 mlx5_1's SymbolErrorCounter
// jumps by 300. The next refresh must say gpu001 mlx5_2/1 was not read
// (its row not left showing the old figures as if read), count the 300
// errors on gpu001 mlx5_1/1, and list no port twice.
func TestLinkGoesAwayWhileWatched(t *testing.T) {
	sm, eng, f, ports := watchHealthy(t)
	ctx := context.Background()
	s := NewSampler(eng, f, Options{Ports: ports})
	if _, err := s.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if err := sm.Down("leaf01/3"); err != nil {
		t.Fatal(err)
	}
	if err := sm.AddCounter("gpu001 mlx5_1/1", "SymbolErrorCounter", 300); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	fr, err := s.Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	byName := map[string]*Row{}
	for _, r := range rowsOf(fr) {
		name := r.Node + "/" + itoa(r.Num)
		seen[name]++
		byName[name] = r
	}
	for name, n := range seen {
		if n > 1 {
			t.Errorf("%s listed %d times", name, n)
		}
	}
	if r := byName["gpu001 mlx5_2/1"]; r == nil || r.NotRead == "" {
		t.Errorf("gpu001 mlx5_2/1 (behind the disabled leaf01/3) not said to be not read: %+v", r)
	}
	if r := byName["gpu001 mlx5_1/1"]; r == nil || r.ErrorsUnknown || r.ErrorsPerSecond <= 0 {
		t.Errorf("gpu001 mlx5_1/1 (SymbolErrorCounter +300): %+v", r)
	}
	if r := byName["leaf01/3"]; r != nil && r.NotRead != "" {
		t.Errorf("leaf01/3 answered but is said not read: %+v", r)
	}
}

// TestDisabledPortHasNoRate (trial D4b): ibsim's `ibportstate LID P
// disable` leaves the switch port PortState Active, PhysState Disabled:
// its PMA still answers, so top watches it, but its RATE must not read
// "4X SDR" as if linked (links prints "(no link)").
func TestDisabledPortHasNoRate(t *testing.T) {
	n := &fabric.Node{Description: "leaf2", Type: mad.NodeSwitch}
	p := &fabric.Port{Node: n, Num: 3, State: mad.PortStateActive, PhysState: mad.PhysDisabled, WidthActive: mad.Width4X, SpeedActive: mad.SpeedSDR}
	if r := rateOf(p).String(); r != "(no link)" {
		t.Errorf("Disabled port's rate %q, want (no link)", r)
	}
	p.PhysState = mad.PhysLinkUp
	if r := rateOf(p).String(); r != "4X SDR" {
		t.Errorf("linked port's rate %q, want 4X SDR", r)
	}
}

// TestRefreshRereadsPortInfo (trial D4 leftover): a port disabled after
// top started kept the rate discovery read ('4X NDR' on a port with no
// link; only its far end turned 'not read'), and a link that retrained
// narrower kept its old width. Each refresh re-reads the PortInfo of the
// ports it reads (in the same slices as the counters): the disabled
// port reads '(no link)', as at start (d1f3974), the retrained one its
// new width.
func TestRefreshRereadsPortInfo(t *testing.T) {
	sm, eng, f, ports := watchHealthy(t)
	ctx := context.Background()
	s := NewSampler(eng, f, Options{Ports: ports, PortInfo: eng})
	rows := func() map[string]*Row { return refreshByPort(ctx, t, s, false) }
	rows()
	before := rows()
	for _, name := range []string{"leaf01/3", "leaf01/5"} {
		if r := before[name]; r == nil || r.Rate == "" || r.Rate == "(no link)" || strings.HasPrefix(r.Rate, "1X") {
			t.Fatalf("%s before the fault: %+v", name, r)
		}
	}
	if err := sm.Down("leaf01/3"); err != nil {
		t.Fatal(err)
	}
	if err := sm.Degrade("leaf01/5", mad.Width1X, 0); err != nil {
		t.Fatal(err)
	}
	after := rows()
	if r := after["leaf01/3"]; r == nil || r.Rate != "(no link)" || !strings.Contains(r.NotRead, "no link") {
		t.Errorf("leaf01/3 disabled while watched: %+v, want RATE (no link) and its counters said not read", r)
	}
	if r := after["leaf01/5"]; r == nil || !strings.HasPrefix(r.Rate, "1X ") {
		t.Errorf("leaf01/5 retrained to 1X while watched: %+v, want RATE 1X", r)
	}
}

// TestRefreshNotActiveIsNotNoLink (review R5): a link left in Init after
// top started (a flap with no SM sweeping) is up, trained at its rate;
// only its ports are not Active, so perf does not read the HCA's end. Its
// row must say that (perf's 'port is Init' note, which markNotRead puts
// after newRates), not 'no link since the last refresh', and keep its
// rate. It held before: this pins the order of the two notes.
func TestRefreshNotActiveIsNotNoLink(t *testing.T) {
	sm, eng, f, ports := watchHealthy(t)
	ctx := context.Background()
	s := NewSampler(eng, f, Options{Ports: ports, PortInfo: eng})
	rows := func() map[string]*Row { return refreshByPort(ctx, t, s, true) }
	rows()
	before := rows()["gpu002 mlx5_0/1"]
	if before == nil || before.Rate == "" || before.Rate == "(no link)" {
		t.Fatalf("gpu002 mlx5_0/1 before: %+v, want a row with its rate", before)
	}
	if err := sm.NotActive("gpu002 mlx5_0/1", mad.PortStateInit); err != nil {
		t.Fatal(err)
	}
	r := rows()["gpu002 mlx5_0/1"]
	if r == nil || r.NotRead == "" || strings.Contains(r.NotRead, "no link") || !strings.Contains(r.NotRead, "Init") || r.Rate != before.Rate {
		t.Errorf("gpu002 mlx5_0/1 in Init: %+v, want its rate %q kept and a note that it is not Active (Init), not 'no link'", r, before.Rate)
	}
}

// TestDisabledStaleWhileWatchedSaysNoLink (trial G10): a port disabled
// while top runs, as ibsim's `ibportstate ... disable` leaves it
// (PhysState Disabled, PortState still Active), still answers its
// counters, so its row read RATE (no link) beside 0 err/s and verdict
// "-": nothing wrong with a host whose only link just went away. Its row
// says the link is gone, not figures of a link.
func TestDisabledStaleWhileWatchedSaysNoLink(t *testing.T) {
	sm, eng, f, ports := watchHealthy(t)
	ctx := context.Background()
	s := NewSampler(eng, f, Options{Ports: ports, PortInfo: eng})
	rows := func() map[string]*Row { return refreshByPort(ctx, t, s, false) }
	rows()
	rows()
	if err := sm.DisabledStale("leaf01/3"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		after := rows()
		if r := after["leaf01/3"]; r == nil || r.Rate != "(no link)" || !strings.Contains(r.NotRead, "no link") {
			t.Errorf("leaf01/3 disabled while watched (PortState still Active): %+v, want RATE (no link) and the row saying so", r)
		}
	}
}
