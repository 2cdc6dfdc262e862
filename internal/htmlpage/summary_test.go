package htmlpage

import (
	"bytes"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/report"
)

var tagRE = regexp.MustCompile(`<[^>]*>`)

// pageText is the page's text between from and to, tags removed,
// entities decoded and runs of white space made one space.
func pageText(t *testing.T, page, from, to string) string {
	t.Helper()
	i := strings.Index(page, from)
	j := strings.Index(page[max(i, 0):], to)
	if i < 0 || j < 0 {
		t.Fatalf("page has no %q ... %q", from, to)
	}
	s := html.UnescapeString(tagRE.ReplaceAllString(page[i:i+j], ""))
	return strings.Join(strings.Fields(s), " ")
}

// TestSummaryLinesAsText: the page's summary carries every line of the
// text report's summary, with the same words, and the Could not decide
// and Could not read lists as check prints them. Trial T1 and T8: the
// page had no Undecided line and no Could not decide list (status
// "undecided" with no reason on the page), no Counters, Rates or
// Snapshot line, and said "the sweep was incomplete" for a check that
// swept nothing.
func TestSummaryLinesAsText(t *testing.T) {
	doc0, snap := sampleReport(t)
	doc := *doc0
	doc.Complete = false
	doc.Status = "undecided"
	doc.RoutesComputed = true
	doc.CountersBasis = "the increase during ibdiagnet's run (PM_DELTA), span not in the file: no BER, utilisation or share of time stalled"
	doc.CountersNotRead = "the file carries no counters, so none were read"
	doc.SnapshotKept = "the sweep was incomplete: the state dir's snapshot of 2026-11-27T08:00:00Z is kept"
	doc.RatesNotRead = "f.net (ibsim net file) gives no link rates: every link shows ibsim's default 4X SDR"
	doc.Unreached = []report.Unreached{
		{What: "NodeInfo", Where: "path 0,1,33,9 (behind leaf02 port 1)", Reason: "no response after 1 attempt"},
		{What: "NodeInfo", Where: "path 0,1,33,10 (behind leaf02 port 2)", Reason: "no response after 1 attempt"},
	}
	doc.Undecided = []checks.Undecided{
		{Check: "routing.unreachable", Subject: checks.Entity{Node: "leaf02"}, Reason: "56 routes lead from here to ports 49-56, whose state or far end was not read: not followed further"},
		{Check: "routing.loop", Subject: checks.Entity{Node: "spine03"}, Reason: "its LFT was not read"},
	}
	doc.Scope = &report.ScopeSummary{JobHosts: 2, Hosts: []string{"gpu001 mlx5_0"}, Switches: 3, Ports: 9,
		Unmatched: []string{"gpu999"}, Snapshot: "st/snapshot.json", SnapshotAt: "2026-11-27T08:00:00Z"}
	var text bytes.Buffer
	report.Summary(&text, report.Style{}, &doc)
	page := render(t, &doc, snap)
	summary := pageText(t, page, `<dl id="summary">`, `</dl>`)
	lines := strings.Split(strings.TrimRight(text.String(), "\n"), "\n")[1:]
	labels := map[string]bool{}
	for _, l := range lines {
		label, rest, ok := strings.Cut(l, ":")
		if !ok || strings.HasPrefix(l, " ") {
			label, rest = "", l
		}
		labels[label] = true
		want := strings.Join(strings.Fields(rest), " ")
		if label == "Not run" {
			// The page opens the line into every check and its reason.
			want = "1 check"
			if len(doc.Skipped) != 1 {
				want = report.Plural(len(doc.Skipped), "check")
			}
		}
		if !strings.Contains(summary, want) {
			t.Errorf("text summary line %q: the page's summary lacks %q\npage: %s", label, want, summary)
		}
	}
	for _, l := range []string{"Undecided", "Counters", "Snapshot", "Rates", "Routes", "Scope", "Reached", "Status"} {
		if !labels[l] {
			t.Errorf("the text summary has no %s line: the test does not cover it", l)
		}
		if !strings.Contains(page, "<dt>"+l+"</dt>") {
			t.Errorf("page has no %s row", l)
		}
	}
	if strings.Contains(page, "the sweep was incomplete;") || strings.Contains(summary, "fail on error); the sweep was incomplete") {
		t.Errorf("page's Status speaks of a sweep: %s", summary)
	}
	decide := pageText(t, page, "Could not decide (2)", "</ul>")
	for _, u := range doc.Undecided {
		if !strings.Contains(decide, report.UndecidedLine(u)) {
			t.Errorf("Could not decide list lacks %q: %s", report.UndecidedLine(u), decide)
		}
	}
	unread := pageText(t, page, "Could not read (2)", "</ul>")
	for _, l := range report.UnreachedLines(doc.Unreached) {
		if !strings.Contains(unread, strings.Join(strings.Fields(l), " ")) {
			t.Errorf("Could not read list lacks %q: %s", l, unread)
		}
	}
}
