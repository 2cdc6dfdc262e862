package htmlpage

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/layout"
	"github.com/ibdoctor/ibdoctor/internal/report"
)

//go:embed page.html
var pageHTML string

//go:embed page.css
var pageCSS string

//go:embed page.js
var pageJS string

var pageTmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"impact": report.ImpactShort,
	"inc":    func(i int) int { return i + 1 },
	"plural": report.Plural,
	"verdict": func(f checks.Finding) string {
		return verdictOf(f.Check).String()
	},
}).Parse(pageHTML))

// Options tune Render.
type Options struct {
	// Layout tunes the drawing (when to draw by pod).
	Layout layout.Options
}

// Render writes the page for a report and the snapshot its findings were
// judged on. The snapshot's fabric is drawn; its counters and route loads
// fill the link cards.
func Render(w io.Writer, doc *report.Document, snap *checks.Snapshot, o Options) error {
	if doc == nil || snap == nil || snap.Fabric == nil {
		return fmt.Errorf("htmlpage: nothing to draw (no report or no fabric)")
	}
	d := layout.Build(snap.Fabric, o.Layout)
	m := newModel(d, snap, doc.Findings)
	var svg strings.Builder
	m.writeSVG(&svg)
	data, err := m.data()
	if err != nil {
		return err
	}
	v := struct {
		Doc       *report.Document
		Title     string
		Taken     string
		Details   int
		CSS       template.CSS
		JS        template.JS
		SVG       template.HTML
		Data      template.JS
		Heat      bool
		ByPod     bool
		Verdicts  []string
		Usual     string
		Unreached bool
		// Rows are the summary's lines, Undecided and Unread its
		// lists, as the text report renders them (report.SummaryRows,
		// UndecidedLine, UnreachedLines): the same values, not copies.
		Rows      []report.SummaryRow
		Undecided []string
		Unread    []string
	}{
		Doc:       doc,
		Title:     fmt.Sprintf("ibdoctor %s: %s", doc.Command, doc.Source),
		Taken:     doc.GeneratedAt.UTC().Format("2006-01-02 15:04:05 UTC"),
		CSS:       template.CSS(pageCSS),
		JS:        template.JS(pageJS),
		SVG:       template.HTML(svg.String()),
		Data:      template.JS(data),
		Heat:      m.interval > 0,
		ByPod:     d.ByPod,
		Verdicts:  verdictNames[1:],
		Usual:     usualNote(m.usualCounts()),
		Unreached: len(m.unr) > 0,
		Rows:      report.SummaryRows(doc),
		Unread:    report.UnreachedLines(doc.Unreached),
	}
	for _, u := range doc.Undecided {
		v.Undecided = append(v.Undecided, report.UndecidedLine(u))
	}
	return pageTmpl.Execute(w, v)
}

func usualNote(u map[int]int) string {
	var parts []string
	if n, ok := u[0]; ok {
		parts = append(parts, fmt.Sprintf("%d between switches", n))
	}
	if n, ok := u[1]; ok {
		parts = append(parts, fmt.Sprintf("%d to hosts", n))
	}
	if len(parts) == 0 {
		return ""
	}
	return "a line is a bundle of cables: " + strings.Join(parts, ", ") + " unless numbered"
}

// data is the JSON the script reads: per bundle the hover card, per box
// its description, per finding what it highlights, and the names the
// search box finds.
func (m *model) data() (string, error) {
	type linkCard struct {
		A, B   string     `json:"-"`
		N      int        `json:"n"`
		Cables [][]string `json:"c"`
		More   int        `json:"m,omitempty"`
	}
	const maxCables = 16
	links := make([]linkCard, len(m.d.Bundles))
	for i, bu := range m.d.Bundles {
		c := linkCard{N: len(bu.Cables)}
		for k, l := range bu.Cables {
			if k == maxCables {
				c.More = len(bu.Cables) - k
				break
			}
			c.Cables = append(c.Cables, m.cable(l))
		}
		links[i] = c
	}
	boxes := make([]string, len(m.d.Boxes))
	var names [][2]any
	for i, b := range m.d.Boxes {
		switch b.Kind {
		case layout.Hosts:
			boxes[i] = fmt.Sprintf("%s: %s", b.Label, hostState(b))
		case layout.Pod:
			boxes[i] = fmt.Sprintf("%s: %d switches, %d cables inside", b.Label, len(b.Switches), len(b.Internal))
		default:
			s := b.Switches[0]
			boxes[i] = fmt.Sprintf("%s (switch, LID %d, GUID 0x%016x)", b.Label, lidOf(s.Ports), s.GUID)
			if b.Others > 0 {
				boxes[i] += fmt.Sprintf(", %d built-in CA (Aggregation Node)", b.Others)
			}
		}
		for _, s := range b.Switches {
			names = append(names, [2]any{m.f.NameOf(s), i})
		}
		for _, n := range b.Members {
			names = append(names, [2]any{m.f.NameOf(n) + " [" + caState(n) + "]", i})
		}
	}
	out := struct {
		Links []linkCard  `json:"links"`
		Boxes []string    `json:"boxes"`
		Find  []highlight `json:"find"`
		Names [][2]any    `json:"names"`
	}{links, boxes, m.hl, names}
	if out.Find == nil {
		out.Find = []highlight{}
	}
	// json.Marshal escapes <, > and & so the data cannot close the
	// script element it sits in.
	b, err := json.Marshal(out)
	if err != nil {
		return "", fmt.Errorf("htmlpage: %w", err)
	}
	return string(b), nil
}

func lidOf(ps []*fabric.Port) uint16 {
	for _, p := range ps {
		if p != nil && p.LID != 0 {
			return p.LID
		}
	}
	return 0
}
