package jsonstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

type elem struct {
	Name string         `json:"name"`
	Tags []string       `json:"tags"`
	Sub  map[string]int `json:"sub,omitempty"`
	Ptr  *elem          `json:"ptr,omitempty"`
}

type doc struct {
	Complete bool    `json:"complete"`
	Schema   string  `json:"schema"`
	Nested   elem    `json:"nested"`
	Items    []elem  `json:"items"`
	Empty    []elem  `json:"empty"`
	Numbers  []int   `json:"numbers"`
	Float    float64 `json:"float"`
}

// TestMatchesEncoder: an object written field by field is byte for byte
// what encoding/json's Encoder writes for the whole, with every
// combination of Indent and EscapeHTML, nested objects and arrays, empty
// arrays and strings that need escaping.
func TestMatchesEncoder(t *testing.T) {
	d := doc{
		Complete: true, Schema: `a "quoted" <html> & 'x' é`,
		Nested: elem{Name: "n", Tags: []string{}, Sub: map[string]int{"b": 2, "a": 1}},
		Items: []elem{
			{Name: "one", Tags: []string{"x", "<y>"}},
			{Name: "two", Tags: nil, Ptr: &elem{Name: "deep", Tags: []string{"z"}}},
		},
		Empty: []elem{}, Numbers: []int{1, 2, 3}, Float: 0.1,
	}
	for _, o := range []Options{{}, {Indent: true}, {EscapeHTML: true}, {Indent: true, EscapeHTML: true}} {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(o.EscapeHTML)
		if o.Indent {
			enc.SetIndent("", "  ")
		}
		if err := enc.Encode(d); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		w := New(&got, o)
		w.Field("complete", d.Complete)
		w.Field("schema", d.Schema)
		w.Field("nested", d.Nested)
		w.Array("items", len(d.Items), func(i int) any { return d.Items[i] })
		w.Array("empty", 0, nil)
		w.Array("numbers", len(d.Numbers), func(i int) any { return d.Numbers[i] })
		w.Field("float", d.Float)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("%+v:\n%s\nwant\n%s", o, got.String(), want.String())
		}
	}
	var empty bytes.Buffer
	if err := New(&empty, Options{Indent: true}).Close(); err != nil || empty.String() != "{}\n" {
		t.Fatalf("empty object %q, %v", empty.String(), err)
	}
}

var errFull = errors.New("full")

type failAfter struct{ n int }

func (w *failAfter) Write(p []byte) (int, error) {
	if w.n <= 0 {
		return 0, errFull
	}
	w.n--
	return len(p), nil
}

// TestErrors: the first write or encoding error stops the writer and is
// what Close returns.
func TestErrors(t *testing.T) {
	w := New(&failAfter{n: 3}, Options{Indent: true})
	calls := 0
	w.Array("a", 100, func(int) any { calls++; return 1 })
	if err := w.Close(); !errors.Is(err, errFull) || calls > 2 {
		t.Fatalf("err %v after %d elements", err, calls)
	}
	var buf bytes.Buffer
	w = New(&buf, Options{})
	w.Field("bad", func() {})
	w.Field("after", 1)
	if err := w.Close(); err == nil {
		t.Fatal("unencodable value accepted")
	}
}
