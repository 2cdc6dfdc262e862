package report

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
)

// wholeJSON is Document.JSON as it was before it streamed: the whole
// document encoded at once. WriteJSON must write these bytes.
func wholeJSON(t *testing.T, d *Document) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestDocumentStreamedIsWhole: the streamed report is byte for byte the
// whole encoding for the golden document with each list nil, empty or
// full and each optional field set or not (omitempty, null against []),
// and for the zero Document.
func TestDocumentStreamedIsWhole(t *testing.T) {
	r := rand.New(rand.NewSource(13))
	check := func(name string, d *Document) {
		t.Helper()
		want := wholeJSON(t, d)
		var got bytes.Buffer
		if err := d.WriteJSON(&got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("%s: streamed differs from whole:\n%s", name, lineDiff(string(want), got.String()))
		}
	}
	check("zero", &Document{})
	check("golden", goldenDoc())
	for trial := 0; trial < 300; trial++ {
		d := goldenDoc()
		pick := func() int { return r.Intn(3) } // 0 nil, 1 empty, 2 as is
		switch pick() {
		case 0:
			d.Findings = nil
		case 1:
			d.Findings = []checks.Finding{}
		}
		switch pick() {
		case 0:
			d.Unreached = nil
		case 1:
			d.Unreached = []Unreached{}
		}
		switch pick() {
		case 0:
			d.Undecided = nil
		case 1:
			d.Undecided = []checks.Undecided{}
		}
		switch pick() {
		case 0:
			d.ChecksRun, d.Skipped = nil, nil
		case 1:
			d.ChecksRun, d.Skipped = []string{}, []checks.Skipped{}
		}
		switch pick() {
		case 0:
			d.Timings, d.Counts = nil, nil
		case 1:
			d.Timings, d.Counts = map[string]string{}, map[string]int{}
		}
		if r.Intn(2) == 0 {
			d.MADs, d.Scope = nil, nil
		}
		if r.Intn(2) == 0 {
			d.Interval, d.CountersNotRead, d.RatesNotRead, d.CountersBasis, d.CountersCleared = "", "", "", "", ""
		} else {
			d.CountersNotRead, d.RatesNotRead, d.CountersBasis = "none <read> & \"why\"", "sim default", "over 1h"
			d.CountersCleared = "1 port's counters were cleared since the previous sweep (leaf01/3)"
		}
		d.RoutesComputed = r.Intn(2) == 0
		// Many entries, so the arrays are more than one element long.
		for i := r.Intn(4); i > 0 && d.Findings != nil; i-- {
			d.Findings = append(d.Findings, d.Findings...)
		}
		for i := r.Intn(4); i > 0 && d.Unreached != nil; i-- {
			d.Unreached = append(d.Unreached, Unreached{What: "NodeInfo", Where: "path 0,1,<2>", Reason: "no response"})
		}
		check("trial", d)
	}
}
