package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/ibsimtest"
	"github.com/ibdoctor/ibdoctor/internal/perf"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/ibdoctor/ibdoctor/internal/tmuxtest"
	"github.com/ibdoctor/ibdoctor/internal/top"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/mad"
)

// TestTopLiveInTmux runs `top --sim -n 1s` in a 100x24 tmux pane: it
// shows the sample fabric's ports with their far end and rate, refreshes
// (the clock in the header moves), changes the sort on 'w', filters on
// '/', and quits on 'q' with exit 0, leaving the alternate screen.
//
// A capture can catch a frame half drawn: tmux takes the program's
// output in pieces, so the header may be the new frame's while the rows
// below are still the last one's (under load 30-46 the filter's status
// line showed with unfiltered rows, and the sort's header with the old
// order). Each step therefore waits, with a generous bound, for a screen
// on which everything it asserts holds, and fails with what was missing
// and the last screen.
func TestTopLiveInTmux(t *testing.T) {
	tmuxtest.Require(t)
	bin := ibdoctorBinary(t)
	p := tmuxtest.Start(t, 100, 24, t.TempDir(), bin, "top", "--sim", "-n", "1s")
	// waitScreen polls the screen until missing says nothing is (it
	// returns what the screen lacks, "" when it has it all).
	waitScreen := func(what string, missing func(s string) string) string {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			s := p.Screen()
			m := missing(s)
			if m == "" {
				return s
			}
			if time.Now().After(deadline) {
				t.Fatalf("waited for %s: %s; the screen shows:\n%s", what, m, s)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	first := waitScreen("the ports with rates", func(s string) string {
		for _, want := range []string{"rates over", "spine02/49", "ibdoctor top  sim:sample", "PORT", "FAR END", "RATE", "leaf07/41", "1X NDR", "congestion"} {
			if !strings.Contains(s, want) {
				return fmt.Sprintf("the screen lacks %q", want)
			}
		}
		return ""
	})
	lines := strings.Split(strings.TrimRight(first, "\n"), "\n")
	if len(lines) > 24 || !strings.HasPrefix(lines[0], "ibdoctor top") {
		t.Errorf("the view does not fit 24 lines with its header on top:\n%s", first)
	}
	for _, l := range lines {
		if report.VisibleWidth(l) > 100 {
			t.Errorf("line wider than the pane: %q", l)
		}
	}
	clock := strings.Fields(lines[0])[3]
	waitScreen("a refresh (the header's clock moves)", func(s string) string {
		if strings.Contains(strings.SplitN(s, "\n", 2)[0], clock) {
			return "the header still shows " + clock
		}
		return ""
	})
	p.SendKeys("w")
	// The most stalled port comes first: spine01/33 and spine02/33 wait
	// 75% of the time on the sample fabric.
	waitScreen("the sort by xmit-wait, a stalled spine port first", func(s string) string {
		rows := strings.Split(s, "\n")
		switch {
		case !strings.Contains(s, "sorted by xmit-wait"):
			return "the header does not say sorted by xmit-wait"
		case len(rows) < 6 || !strings.Contains(rows[5], "/33"):
			return "sorted by xmit-wait, the first port is not a stalled spine port"
		}
		return ""
	})
	p.SendKeys("/", "leaf07", "Enter")
	waitScreen("the filter", func(s string) string {
		rows := strings.Split(s, "\n")
		if len(rows) < 6 || !strings.Contains(s, `filter "leaf07"`) {
			return "the status line does not show the filter"
		}
		shown := 0
		for _, l := range rows[5:] {
			if strings.TrimSpace(l) == "" {
				continue
			}
			if !strings.Contains(l, "leaf07") {
				return fmt.Sprintf("filtered on leaf07, the view shows %q", l)
			}
			shown++
		}
		if shown == 0 {
			return "filtered on leaf07, the view shows no port"
		}
		return ""
	})
	p.SendKeys("q")
	code, after := p.WaitExit(10 * time.Second)
	if code != 0 {
		t.Errorf("q: exit %d, want 0\n%s", code, after)
	}
	if strings.Contains(after, "FAR END") {
		t.Errorf("after q the top screen is still shown (alternate screen not left):\n%s", after)
	}
}

// TestTopLiveAt80: in an 80x24 pane the live view fits (no line wider,
// so the terminal wraps nothing), keeps the verdicts whole and quits on
// q with exit 0.
func TestTopLiveAt80(t *testing.T) {
	tmuxtest.Require(t)
	bin := ibdoctorBinary(t)
	p := tmuxtest.Start(t, 80, 24, t.TempDir(), bin, "top", "--sim", "-n", "1s")
	s := p.WaitFor("the ports with rates", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "VERDICT") && strings.Contains(s, "congestion")
	})
	for _, l := range strings.Split(s, "\n") {
		if report.VisibleWidth(l) > 80 {
			t.Errorf("line wider than the pane: %q", l)
		}
	}
	// The header keeps the sort, the scope and the rates' interval.
	if head := strings.SplitN(s, "\n", 2)[0]; !strings.Contains(head, "by verdict,err/s; 1022 ports, rates over") || strings.Contains(head, report.Ellipsis) {
		t.Errorf("the header is cut: %q", head)
	}
	if !strings.Contains(s, "VERDICT") || strings.Contains(s, report.Ellipsis+"\n") && strings.Contains(s, "warning c"+report.Ellipsis) {
		t.Errorf("the verdict column is cut or gone:\n%s", s)
	}
	p.SendKeys("q")
	if code, after := p.WaitExit(10 * time.Second); code != 0 {
		t.Errorf("q: exit %d, want 0\n%s", code, after)
	}
}

// TestTopOnceJSON: without a terminal top prints one snapshot; --json's
// ports carry the far end, the rate and the checks' verdicts.
func TestTopOnceJSON(t *testing.T) {
	bin := ibdoctorBinary(t)
	out, err := exec.Command(bin, "top", "--sim", "-n", "300ms", "--json", "--sort", "wait").Output()
	if err != nil {
		t.Fatalf("top --json: %v", err)
	}
	var doc topJSON
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("top --json: %v\n%s", err, out)
	}
	if doc.Schema != TopSchema || doc.Watched == 0 || len(doc.Ports) != doc.Watched || doc.IntervalSeconds <= 0 {
		t.Fatalf("document: schema %q, %d watched, %d ports, interval %v", doc.Schema, doc.Watched, len(doc.Ports), doc.IntervalSeconds)
	}
	top := doc.Ports[0]
	if !strings.HasSuffix(top.Node, "") || top.XmitWaitShare == nil || *top.XmitWaitShare < 0.5 || top.Verdict == "" || top.Check != "counters.congestion" {
		t.Errorf("sorted by wait, the first port is %+v; want a congested port judged by counters.congestion", top)
	}
	var degraded bool
	for _, p := range doc.Ports {
		if p.Node == "spine02" && p.Port == 49 {
			degraded = p.Rate == "1X NDR" && p.FarEnd == "leaf07/41" && p.Check == "counters.errors" && p.ErrorsPerSecond != nil && *p.ErrorsPerSecond > 0
		}
	}
	if !degraded {
		t.Errorf("spine02/49 (1X, symbol errors) not reported with its rate, far end and verdict")
	}
}

// TestTopIBSim: on an ibsim fabric brought up by OpenSM, top --once
// --json watches every linked port and names each one's far end and rate
// as the fabric has them.
func TestTopIBSim(t *testing.T) {
	ibsimtest.Require(t, "opensm")
	f, err := topology.FatTree2{Common: topology.Common{SwitchPorts: 8, Rate: mad.Rate{Width: mad.Width4X, Speed: mad.SpeedHDR}},
		Leaves: 2, Spines: 2, HostsPerLeaf: 3}.Build()
	if err != nil {
		t.Fatal(err)
	}
	s := ibsimtest.StartFabric(t, f, fabric.NetFileOptions{})
	host := fabric.DefaultNodeID(f.NodesByName(f.Nodes[len(f.Nodes)-1].Description)[0])
	s.StartOpenSM(ibsimtest.OpenSMOptions{Host: host, Once: true})
	var out, errb bytes.Buffer
	code := Main([]string{"top", "--ibsim=" + s.SockName, "--ibsim-host", host, "--once", "--json", "-n", "300ms"}, strings.NewReader(""), &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var doc topJSON
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil && p.Num != 0 && p.Remote != nil {
				want[fmt.Sprintf("%s/%d", n.Description, p.Num)] = fmt.Sprintf("%s/%d %s", p.Remote.Node.Description, p.Remote.Num, p.Rate())
			}
		}
	}
	if doc.Watched != len(want) || len(doc.Ports) != len(want) {
		t.Fatalf("%d watched, %d ports; the fabric has %d linked ports", doc.Watched, len(doc.Ports), len(want))
	}
	for _, p := range doc.Ports {
		k := fmt.Sprintf("%s/%d", p.Node, p.Port)
		if got := p.FarEnd + " " + p.Rate; got != want[k] {
			t.Errorf("%s: far end and rate %q, want %q", k, got, want[k])
		}
	}
	// The text snapshot, as on an 80-column terminal: a row per watched
	// port, each with its far end, and nothing wider than the screen.
	code, text, stderr := runAt(80, "top", "--ibsim="+s.SockName, "--ibsim-host", host, "--once", "-n", "300ms")
	if code != 0 {
		t.Fatalf("text: exit %d: %s", code, stderr)
	}
	if !strings.Contains(text, "by verdict,err/s;") || !strings.Contains(text, "VERDICT") {
		t.Errorf("text snapshot lacks its header:\n%s", text)
	}
	for k, w := range want {
		far := strings.Fields(w)[0]
		if !regexp.MustCompile(`(?m)^ ` + regexp.QuoteMeta(k) + ` +` + regexp.QuoteMeta(far) + ` `).MatchString(text) {
			t.Errorf("text snapshot has no row for %s (to %s):\n%s", k, far, text)
		}
	}
	if long := wider(text, 80); len(long) > 0 {
		t.Errorf("text lines wider than 80:\n%s", strings.Join(long, "\n"))
	}
}

// TestTopBadFlags: bad values are refused with one line naming the flag and
// exit 2, before any fabric is opened (no --sim is needed to see them).
func TestTopBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"top", "-n", "0s"}, "--interval 0s: give a positive duration"},
		{[]string{"top", "--interval", "-1s"}, "--interval -1s"},
		{[]string{"top", "--budget", "-5"}, "--budget -5"},
		{[]string{"top", "--sort", "speed"}, `--sort "speed": want errors, wait or util`},
		{[]string{"top", "--thresholds", "/nonexistent/thr"}, "--thresholds"},
		{[]string{"top", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"top", "extra"}, `unexpected argument "extra"`},
	} {
		var out, errb bytes.Buffer
		code := Main(c.args, strings.NewReader(""), &out, &errb)
		msg := strings.TrimSpace(errb.String())
		if code != ExitUndecided || !strings.Contains(msg, c.want) || strings.Count(msg, "\n") > 0 || out.Len() > 0 {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit 2 and one line with %q", c.args, code, msg, out.String(), c.want)
		}
	}
}

// TestTopOnceBudgetHonoursInterval: with a budget below the scope (1,000
// MADs, 333 of the sample's 1,022 ports a refresh at 3 MADs a port; 500
// before PortInfo was re-read) top --once read its
// slices wrapped round the scope, so the last slice's ports were read
// twice one refresh apart: 'rates over 260ms', interval_seconds 0.218
// for -n 1s. Each port's two readings are -n apart at least.
func TestTopOnceBudgetHonoursInterval(t *testing.T) {
	code, out, stderr := run("top", "--sim", "--once", "-n", "1s", "--budget", "1000", "--json")
	if code != ExitHealthy {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Interval float64 `json:"interval_seconds"`
		Watched  int     `json:"ports_watched"`
		Ports    []struct {
			Node string `json:"node"`
		} `json:"ports"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Interval < 1 || doc.Watched != 1022 || len(doc.Ports) != doc.Watched {
		t.Errorf("interval_seconds %v (want at least the -n 1s), %d of %d ports", doc.Interval, len(doc.Ports), doc.Watched)
	}
	// The header names the budget's slice, not the last, shorter one
	// ("23 of 1022 ports").
	_, text, _ := run("top", "--sim", "--once", "-n", "300ms", "--budget", "1000")
	if !strings.Contains(text, "333 of 1022 ports per refresh (budget)") {
		t.Errorf("header: %s", strings.SplitN(text, "\n", 2)[0])
	}
}

// TestTopRowNotReadShown (trial D4): a row whose port the last refresh
// could not read shows "not read" and "?" figures, not the older
// reading's rates as if current; JSON nulls them and says why.
func TestTopRowNotReadShown(t *testing.T) {
	var b bytes.Buffer
	r := &top.Row{Node: "h009 HCA-1", Num: 1, Peer: "leaf2/3", Rate: "4X SDR", Measured: true, XmitWait: 0.25, TxUtil: 0.5, RxUtil: 0.5,
		ErrorsPerSecond: 4, NotRead: "PortCounters: no response"}
	writeTopTable(&b, report.Style{}, top.RowsView([]*top.Row{r}), 0)
	out := b.String()
	if !strings.Contains(out, "not read") || strings.Contains(out, "50.0%") || strings.Contains(out, "25.0%") {
		t.Errorf("a row not read shows its old figures:\n%s", out)
	}
	p := topPortOf(r)
	if p.NotRead == "" || p.ErrorsPerSecond != nil || p.TxUtilization != nil || p.XmitWaitShare != nil {
		t.Errorf("JSON of a row not read: %+v", p)
	}
}

// TestTopHeaderStatusAt80 (trial D4d): at 80 columns the header was cut
// at "rates over 2.…" (ibsim:trialD_sm/h001, 80 ports, 2.01s) and the
// status said "1 port not read" naming nothing, the keys cut at "q qu…".
// The header must fit whole with the scope and interval, and the status
// name the port not read and fit.
func TestTopHeaderStatusAt80(t *testing.T) {
	h009 := &fabric.Node{Description: "h009 HCA-1", GUID: 9}
	p := &fabric.Port{Node: h009, Num: 1}
	fr := &top.Frame{Watched: 80, PerRefresh: 80, Cycle: 1, Interval: 2013 * time.Millisecond, At: time.Date(2026, 11, 27, 14, 17, 21, 0, time.UTC),
		Errors: []*perf.PortError{{Key: perf.Key{GUID: 9, Port: 1}, Port: p, Node: h009, LID: 15, What: "PortCounters", Err: fmt.Errorf("no response")}}}
	v := &topView{source: "ibsim:trialD_sm/h001", interval: 2 * time.Second}
	h := v.header(fr, 79)
	if report.VisibleWidth(h) > 79 || !strings.Contains(h, "80 ports") || !strings.Contains(h, "2s") {
		t.Errorf("header at 79 columns (%d): %q", report.VisibleWidth(h), h)
	}
	s := v.status(report.Style{}, fr, 79)
	if report.VisibleWidth(s) > 79 || !strings.Contains(s, "h009 HCA-1/1") || strings.Contains(s, report.Ellipsis) {
		t.Errorf("status at 79 columns (%d): %q", report.VisibleWidth(s), s)
	}
}
