package htmlpage

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// countingWriter counts the page's bytes without keeping them.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

var _ io.Writer = (*countingWriter)(nil)

// benchPage renders the page of a generated, routed fabric with route
// loads and an interval's counters on every link (the heat view's data:
// the largest page; busy but below the checks' thresholds, so the page is
// the drawing's, not thousands of findings'), and fails when it exceeds limit bytes. It reports
// the page's size in MB and its time per render.
func benchPage(b *testing.B, t topology.Builder, limit int64) {
	f, err := topology.Routed(t)
	if err != nil {
		b.Fatal(err)
	}
	snap := &checks.Snapshot{Fabric: f, Loads: diagnose.NewLoads(f), Taken: time.Now()}
	var ports []*fabric.Port
	for _, l := range f.Links() {
		ports = append(ports, l.A, l.B)
	}
	snap.Counters = fakeCounters{iv: 30 * time.Second, ports: ports, util: 0.5, stalled: 0.005}
	res, err := checks.Run(snap)
	if err != nil {
		b.Fatal(err)
	}
	doc := &report.Document{Command: "check", Source: "generated", Findings: res.Findings, Fabric: diagnose.Summarize(f), GeneratedAt: snap.Taken}
	doc.CountBySeverity()
	doc.Status, doc.FailOn, doc.Complete = diagnose.Status(res.Findings, checks.Error, true), "error", true
	b.ResetTimer()
	var size int64
	for range b.N {
		var w countingWriter
		if err := Render(&w, doc, snap, Options{}); err != nil {
			b.Fatal(err)
		}
		size = w.n
	}
	b.ReportMetric(float64(size)/1e6, "MB/page")
	// IBDOCTOR_PAGE_OUT=DIR keeps the page, to time it in a browser.
	if dir := os.Getenv("IBDOCTOR_PAGE_OUT"); dir != "" {
		var buf bytes.Buffer
		if err := Render(&buf, doc, snap, Options{}); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("page-%d.html", len(f.Nodes))), buf.Bytes(), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if size > limit {
		b.Errorf("page of %d nodes is %.1f MB, over the %.0f MB limit", len(f.Nodes), float64(size)/1e6, float64(limit)/1e6)
	}
}

// BenchmarkPage8k: the 9,472-node fat tree (8,192 HCAs, 1,280 switches),
// drawn switch by switch; the page must stay within 15 MB.
func BenchmarkPage8k(b *testing.B) { benchPage(b, topology.FatTree8k(), 15e6) }

// BenchmarkPage50k: the 48,896-node fat tree, drawn by pod; within 50 MB.
func BenchmarkPage50k(b *testing.B) { benchPage(b, topology.FatTree50k(), 50e6) }
