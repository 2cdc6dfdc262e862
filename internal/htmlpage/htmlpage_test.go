package htmlpage

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/layout"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/transport"
)

// sampleReport sweeps the built-in sample fabric (its incident applied)
// in the simulator, as 'check --sim' does, and returns the report and the
// snapshot it was judged on. The sweep runs once per test binary; tests
// must not change what it returns (copy the snapshot to vary it).
func sampleReport(t testing.TB) (*report.Document, *checks.Snapshot) {
	t.Helper()
	sample.once.Do(func() { sample.doc, sample.snap, sample.err = sweepSample() })
	if sample.err != nil {
		t.Fatal(sample.err)
	}
	return sample.doc, sample.snap
}

var sample struct {
	once sync.Once
	doc  *report.Document
	snap *checks.Snapshot
	err  error
}

func sweepSample() (*report.Document, *checks.Snapshot, error) {
	return sweepSampleKilled()
}

// sweepSampleKilled sweeps the sample with the named nodes dead (they
// answer nothing).
func sweepSampleKilled(dead ...string) (*report.Document, *checks.Snapshot, error) {
	s, err := sim.Sample(sim.Options{})
	if err != nil {
		return nil, nil, err
	}
	for _, n := range dead {
		if err := s.Kill(n); err != nil {
			return nil, nil, err
		}
	}
	c, err := s.Attach("", 0)
	if err != nil {
		return nil, nil, err
	}
	e := transport.NewEngine(c, transport.Options{Timeout: 500 * time.Millisecond, Retries: 1})
	defer func() { e.Close(); c.Close() }()
	sw, err := diagnose.Run(context.Background(), e, diagnose.Options{Routes: true, Counters: true})
	if err != nil {
		return nil, nil, err
	}
	snap := sw.Snapshot(checks.Expectations{}, nil, nil)
	res, err := checks.Run(snap)
	if err != nil {
		return nil, nil, err
	}
	return sw.Document("check", "sim:sample", res, checks.Error), snap, nil
}

func render(t testing.TB, doc *report.Document, snap *checks.Snapshot) string {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, doc, snap, Options{}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// pageData is the JSON the page's script reads.
type pageData struct {
	Links []struct {
		N int        `json:"n"`
		C [][]string `json:"c"`
	} `json:"links"`
	Boxes []string `json:"boxes"`
	Find  []highlight
	Names [][2]any `json:"names"`
}

func dataOf(t *testing.T, page string) pageData {
	t.Helper()
	m := regexp.MustCompile(`(?s)<script type="application/json" id="data">(.*?)</script>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no data script in the page")
	}
	var d pageData
	if err := json.Unmarshal([]byte(m[1]), &d); err != nil {
		t.Fatalf("page data: %v", err)
	}
	return d
}

// TestSelfContained: the page loads nothing: no external scripts, styles,
// images or fonts, and no URL but the SVG namespace.
func TestSelfContained(t *testing.T) {
	doc, snap := sampleReport(t)
	page := render(t, doc, snap)
	for _, bad := range []string{"<link", " src=", "@import", "url(", "fetch(", "XMLHttpRequest"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	urls := regexp.MustCompile(`https?://[^"' )<]+`).FindAllString(page, -1)
	for _, u := range urls {
		if u != "http://www.w3.org/2000/svg" {
			t.Errorf("page refers to %s", u)
		}
	}
}

// TestSampleIncident: the sample fabric's incident is in the drawing: the
// two misrouted spines are framed critical with badges 1 and 2, the 1X
// uplink's bundle is drawn degraded (critical) with badge 3, and every
// finding is listed with its title, evidence and next step.
func TestSampleIncident(t *testing.T) {
	doc, snap := sampleReport(t)
	page := render(t, doc, snap)
	d := layout.Build(snap.Fabric, layout.Options{})
	box := func(name string) int { return d.BoxOf(snap.Fabric.NodesByName(name)[0]) }
	for i, sp := range []string{"spine01", "spine02"} {
		re := regexp.MustCompile(`<g id="b` + itoa(box(sp)) + `" class="bx k0 s3">.*?<text class="bt"[^>]*>(\d+)</text></g>`)
		m := re.FindStringSubmatch(page)
		if m == nil {
			t.Errorf("%s is not drawn as a critical switch with a badge", sp)
		} else if m[1] != itoa(i+1) {
			t.Errorf("%s carries badge %s, want %d", sp, m[1], i+1)
		}
	}
	leaf07 := snap.Fabric.NodesByName("leaf07")[0]
	uplink := d.BundleOf(leaf07.Ports[41])
	if !regexp.MustCompile(`<path id="l` + itoa(uplink) + `" class="l v2 s3[ "]`).MatchString(page) {
		t.Errorf("the 1X uplink's bundle (l%d) is not drawn degraded and critical", uplink)
	}
	if !strings.Contains(page, `<text x="`) || !regexp.MustCompile(`<g class="lb s3"><circle[^>]*/><text[^>]*>3</text></g>`).MatchString(page) {
		t.Error("no badge 3 on a link")
	}
	for _, f := range doc.Findings {
		for _, s := range []string{f.Title, f.Action} {
			if !strings.Contains(page, htmlEscape(s)) {
				t.Errorf("page lacks %q", s)
			}
		}
	}
	if !strings.Contains(page, "SymbolErrorCounter") {
		t.Error("no evidence in the page")
	}
	// Hover card of the uplink: both ends, the 1X rate, the counters and
	// the route load.
	data := dataOf(t, page)
	var card []string
	for _, c := range data.Links[uplink].C {
		if strings.HasPrefix(c[0], "leaf07/41") || strings.HasPrefix(c[1], "leaf07/41") {
			card = c
		}
	}
	if card == nil {
		t.Fatalf("no card for leaf07/41 in bundle %d: %v", uplink, data.Links[uplink])
	}
	if card[2] != "1X NDR" || !strings.Contains(card[3]+card[4], "SymbolErrorCounter=") || !strings.Contains(card[5], "paths") {
		t.Errorf("card of leaf07/41: %q", card)
	}
	if data.Links[uplink].N != 8 {
		t.Errorf("uplink bundle has %d cables, want 8", data.Links[uplink].N)
	}
}

// TestFindingHighlights: finding 1 (spine01's imbalance) highlights
// spine01 and its busiest link, and the routes through that link: from
// the other leaves up and down to leaf05's hosts.
func TestFindingHighlights(t *testing.T) {
	doc, snap := sampleReport(t)
	data := dataOf(t, render(t, doc, snap))
	if len(data.Find) != len(doc.Findings) {
		t.Fatalf("%d highlights for %d findings", len(data.Find), len(doc.Findings))
	}
	d := layout.Build(snap.Fabric, layout.Options{})
	f := snap.Fabric
	spine01, leaf05 := f.NodesByName("spine01")[0], f.NodesByName("leaf05")[0]
	h := data.Find[0]
	if doc.Findings[0].Check != "routing.ecmp-imbalance" {
		t.Fatalf("finding 1 is %s", doc.Findings[0].Check)
	}
	if !contains(h.Boxes, d.BoxOf(spine01)) {
		t.Errorf("finding 1 does not highlight spine01: %+v", h)
	}
	if !contains(h.Bundles, d.BundleOf(spine01.Ports[33])) {
		t.Errorf("finding 1 does not highlight spine01/33's link")
	}
	hostBundle := -1
	for i, b := range d.Bundles {
		if b.A == d.BoxOf(leaf05) && d.Boxes[b.B].Kind == layout.Hosts {
			hostBundle = i
		}
	}
	if !contains(h.Paths, hostBundle) {
		t.Errorf("finding 1's paths miss leaf05's hosts (bundle %d): %v", hostBundle, h.Paths)
	}
	up := 0
	for _, li := range h.Paths {
		if d.Bundles[li].A == d.BoxOf(spine01) && d.Bundles[li].B != d.BoxOf(leaf05) {
			up++
		}
	}
	if up == 0 {
		t.Errorf("finding 1's paths include no leaf's uplink to spine01: %v", h.Paths)
	}
}

// TestHeatView: with two counter samples the links carry heat classes and
// the view switch is enabled; without, it is disabled and says why.
func TestHeatView(t *testing.T) {
	doc, snap := sampleReport(t)
	page := render(t, doc, snap)
	if !strings.Contains(page, `value="util" disabled`) || regexp.MustCompile(`<path id="l\d+" class="[^"]* hu\d`).MatchString(page) {
		t.Error("heat view offered without an interval")
	}
	var ports []*fabric.Port
	for _, l := range snap.Fabric.Links() {
		ports = append(ports, l.A)
	}
	hot := *snap
	hot.Counters = fakeCounters{iv: 10 * time.Second, ports: ports, util: 0.9, stalled: 0.3}
	page = render(t, doc, &hot)
	if strings.Contains(page, `value="util" disabled`) {
		t.Error("heat view disabled with an interval")
	}
	if !strings.Contains(page, " hu5 hw3") {
		t.Error("no link in the hottest utilisation bucket")
	}
	if !strings.Contains(page, "sent 90% of rate (computed)") {
		t.Error("hover cards do not show the computed utilisation")
	}
}

// fakeCounters: every port sent util of its rate and was stalled for
// stalled of an interval.
type fakeCounters struct {
	iv            time.Duration
	ports         []*fabric.Port
	util, stalled float64
}

func (f fakeCounters) Interval() time.Duration { return f.iv }
func (f fakeCounters) Ports(fn func(checks.PortReading)) {
	for _, p := range f.ports {
		sec := f.iv.Seconds()
		fn(checks.PortReading{Port: p,
			XmitBytes:              uint64(f.util * p.Rate().BytesPerSecond() * sec),
			XmitWait:               &checks.CounterValue{Name: "PortXmitWait", Delta: uint64(f.stalled * 1e6 * sec), Value: 1},
			XmitWaitTicksPerSecond: 1e6})
	}
}

// TestRenderNoFabric: a report without a fabric is an error, not an
// empty page.
func TestRenderNoFabric(t *testing.T) {
	var b bytes.Buffer
	if err := Render(&b, &report.Document{}, &checks.Snapshot{}, Options{}); err == nil {
		t.Error("no error without a fabric")
	}
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func itoa(i int) string { return strconv.Itoa(i) }

// htmlEscape is how html/template writes text.
func htmlEscape(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;", "+", "&#43;")
	return r.Replace(s)
}

// TestSummarySingular: one unread thing and one skipped check are "1
// thing could not be read" and "1 check", as in the text summary.
func TestSummarySingular(t *testing.T) {
	doc0, snap := sampleReport(t)
	doc := *doc0
	doc.Unreached = []report.Unreached{{What: "PortCounters", Where: "gpu007 mlx5_0 port 1 (LID 14)", Reason: "timed out after 3 retries"}}
	doc.Skipped = []checks.Skipped{{Check: "counters.utilization", Reason: "needs two counter samples (add --interval)"}}
	page := render(t, &doc, snap)
	for _, want := range []string{"1 thing could not be read (listed below)", "<summary>1 check: counters.utilization</summary>"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "1 things") || strings.Contains(page, "1 checks") {
		t.Error("page says '1 things' or '1 checks'")
	}
}

// TestHostsAndErrorFrame: a hosts box counts hosts, not adapters (each
// leaf of the sample carries 4 hosts of 8 HCAs; before, "32 hosts"), with
// its HCAs' state below; leaf03, whose only finding is an error
// (gpu012's missing HCA), is framed in the error colour the legend
// names, not in critical red (before, .bx.s2 took --s3 and the legend
// had no error key).
func TestHostsAndErrorFrame(t *testing.T) {
	doc, snap := sampleReport(t)
	page := render(t, doc, snap)
	boxes := regexp.MustCompile(`<text x="[^"]*" y="[^"]*">(\d+ hosts)</text><text class="sub" x="[^"]*" y="[^"]*">([^<]*)</text>`).FindAllStringSubmatch(page, -1)
	if len(boxes) != 8 {
		t.Fatalf("%d hosts boxes, want 8", len(boxes))
	}
	subs := map[string]int{}
	for _, b := range boxes {
		if b[1] != "4 hosts" {
			t.Errorf("hosts box labelled %q, want 4 hosts", b[1])
		}
		subs[b[2]]++
	}
	if subs["32 HCAs up"] != 7 || subs["31 HCAs up"] != 1 {
		t.Errorf("hosts boxes' state %v, want 7 x '32 HCAs up' and leaf03's '31 HCAs up'", subs)
	}
	d := layout.Build(snap.Fabric, layout.Options{})
	leaf03 := d.BoxOf(snap.Fabric.NodesByName("leaf03")[0])
	if !regexp.MustCompile(`<g id="b` + itoa(leaf03) + `" class="bx k0 leaf s2">`).MatchString(page) {
		t.Errorf("leaf03 (an error finding) is not drawn with class s2")
	}
	if !regexp.MustCompile(`\.bx\.s2 rect\{stroke:var\(--s2\)`).MatchString(page) || regexp.MustCompile(`\.bx\.s2 rect[^{]*\{[^}]*--s3`).MatchString(page) {
		t.Error("the style sheet frames an error box in critical red")
	}
	if !strings.Contains(page, `<rect class="key s2"`) {
		t.Error("the legend has no error key")
	}
}

// TestUnreachedDrawn (trial T9): with spine03 dead the drawing showed a
// healthy 3-spine fabric, nothing on the leaves whose ports 49-56 lead to
// it. Each leaf now carries a dashed stub "8 unanswered" naming the
// ports, and the legend says what it means; a fabric that answered
// everywhere has neither.
func TestUnreachedDrawn(t *testing.T) {
	doc, snap, err := sweepSampleKilled("spine03")
	if err != nil {
		t.Fatal(err)
	}
	page := render(t, doc, snap)
	if strings.Contains(page, ">spine03<") {
		t.Fatal("spine03 drawn though it did not answer")
	}
	stubs := regexp.MustCompile(`<g class="unr"><title>8 ports whose far end did not answer \(could not look, not absent\): (leaf0\d)/49, leaf0\d/50, [^<]*leaf0\d/56</title><path d="[^"]*"/><text [^>]*>8 unanswered</text></g>`).FindAllStringSubmatch(page, -1)
	leaves := map[string]bool{}
	for _, m := range stubs {
		leaves[m[1]] = true
	}
	if len(stubs) != 8 || len(leaves) != 8 {
		t.Errorf("%d unanswered stubs on %d leaves, want one on each of the 8 leaves", len(stubs), len(leaves))
	}
	if !strings.Contains(page, `far end did not answer: not read, not absent</span>`) {
		t.Error("the legend does not say what a dashed stub is")
	}
	hdoc, hsnap := sampleReport(t)
	healthy := render(t, hdoc, hsnap)
	if strings.Contains(healthy, `class="unr"`) || strings.Contains(healthy, "far end did not answer") {
		t.Error("a fabric that answered everywhere has unanswered stubs or their legend")
	}
}
