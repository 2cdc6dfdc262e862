package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math/rand"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/buildinfo"
	"github.com/ibdoctor/ibdoctor/internal/perf"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/ibdoctor/ibdoctor/internal/top"
)

// topJSONWhole is writeTopJSON as it was before it streamed: the whole
// topJSON encoded at once. The streamed document must be these bytes.
func topJSONWhole(v *topView, fr *top.Frame, rows []*top.Row) []byte {
	doc := topJSON{Schema: TopSchema, Version: buildinfo.Get().Version, GeneratedAt: fr.At.UTC(), Source: v.source,
		SortedBy: v.sort.String(), IntervalSeconds: fr.Interval.Seconds(), Watched: fr.Watched, Ports: []topPort{}, NotRead: []string{}, ReadNarrow: []string{}}
	for _, r := range rows {
		if r.Measured {
			doc.Ports = append(doc.Ports, topPortOf(r))
		}
	}
	// Not read: the Could not read list's lines (TestTopJSONNotReadAsText).
	doc.NotRead = append(doc.NotRead, report.UnreachedLines(v.notRead(fr))...)
	for _, e := range fr.Narrow {
		doc.ReadNarrow = append(doc.ReadNarrow, e.Error())
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// randomTopRow is a row with every optional part of a port's entry on or
// off, names with characters JSON escapes (or, with HTML escaping, would).
func randomTopRow(r *rand.Rand) *top.Row {
	names := []string{"leaf01", "gpu<7> & \"x\"", "héllo\tworld", "", "spine\u2028"}
	row := &top.Row{Node: names[r.Intn(len(names))], Num: r.Intn(65), Peer: names[r.Intn(len(names))], Rate: []string{"", "4X NDR", "1X HDR"}[r.Intn(3)],
		ErrorsPerSecond: r.Float64() * 1e3, XmitWait: r.Float64(), TxUtil: r.Float64(), RxUtil: r.Float64(),
		TxBytesPerSec: r.Float64() * 1e10, RxBytesPerSec: float64(r.Intn(1000)),
		ErrorsUnknown: r.Intn(3) == 0, Narrow: r.Intn(3) == 0, Measured: r.Intn(5) != 0}
	if r.Intn(4) == 0 {
		row.XmitWait = -1
	}
	if r.Intn(4) == 0 {
		row.Unknown = "PortXmitWait stuck at its maximum"
	}
	switch r.Intn(3) {
	case 0:
		row.HasVerdict, row.Verdict, row.Check, row.Title = true, checks.Severity(r.Intn(4)), "counters.errors", "errors <rising>"
	case 1:
		row.Undecided = "counters.congestion"
	}
	return row
}

// TestTopJSONStreamedIsWhole: the streamed top --json is byte for byte the
// document encoded whole, for empty, small and random snapshots.
func TestTopJSONStreamedIsWhole(t *testing.T) {
	r := rand.New(rand.NewSource(13))
	at := time.Date(2026, 11, 26, 18, 0, 0, 123, time.FixedZone("x", 3600))
	for trial := 0; trial < 200; trial++ {
		n := trial % 7
		if trial%50 == 49 {
			n = 500
		}
		rows := make([]*top.Row, n)
		for i := range rows {
			rows[i] = randomTopRow(r)
		}
		fr := &top.Frame{Watched: r.Intn(100000), Interval: time.Duration(r.Int63n(int64(time.Minute))), At: at}
		for i := r.Intn(3); i > 0; i-- {
			fr.Errors = append(fr.Errors, &perf.PortError{What: "PortCounters", LID: uint16(r.Intn(60000)), Err: errors.New("no response <after> 4 attempts")})
		}
		for i := r.Intn(3); i > 0; i-- {
			fr.Narrow = append(fr.Narrow, &perf.PortError{What: "PortCountersExtended", LID: uint16(r.Intn(60000)), Err: errors.New("unsupported & unanswered")})
		}
		v := &topView{source: []string{"sim:sample", "ibsim <sim>"}[r.Intn(2)], sort: top.SortKey(r.Intn(3))}
		want := topJSONWhole(v, fr, rows)
		var got bytes.Buffer
		if err := writeTopJSON(&got, v, fr, top.RowsView(rows)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("trial %d (%d rows): streamed differs from whole\nstreamed:\n%s\nwhole:\n%s", trial, n, got.Bytes(), want)
		}
	}
}

// BenchmarkTopJSON8k writes top --json for FatTree8k's 49,152 linked
// ports, whole (as before) and streamed: -benchmem's B/op is what the
// document costs in memory.
func BenchmarkTopJSON8k(b *testing.B) {
	r := rand.New(rand.NewSource(8))
	rows := make([]*top.Row, 49152)
	for i := range rows {
		rows[i] = randomTopRow(r)
		rows[i].Measured = true
	}
	fr := &top.Frame{Watched: len(rows), Interval: 2 * time.Second, At: time.Now()}
	v := &topView{source: "ibsim", sort: top.SortKey(0)}
	b.Run("whole", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			_ = topJSONWhole(v, fr, rows)
		}
	})
	b.Run("streamed", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if err := writeTopJSON(io.Discard, v, fr, top.RowsView(rows)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
