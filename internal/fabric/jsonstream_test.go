package fabric

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

// wholeDocument encodes f as MarshalWith did before it streamed: the
// whole jsonFabric built, then one Encode. The oracle for WriteJSON's
// layout.
func wholeDocument(t *testing.T, f *Fabric, opt MarshalOptions) []byte {
	index := map[*Node]int{}
	for i, n := range f.Nodes {
		index[n] = i
	}
	doc := jsonFabric{Schema: SchemaV1, Nodes: []jsonNode{}, Links: []jsonLink{}}
	for _, n := range f.Nodes {
		doc.Nodes = append(doc.Nodes, jsonNodeOf(n, opt))
	}
	for _, l := range f.Links() {
		doc.Links = append(doc.Links, jsonLinkOf(l, index))
	}
	for _, u := range f.Unreachable {
		doc.Unreachable = append(doc.Unreachable, jsonUnreachOf(u))
	}
	for _, d := range f.DuplicateGUIDs {
		doc.DuplicateGUIDs = append(doc.DuplicateGUIDs, jsonDuplicateOf(d))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if opt.Indent {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(doc); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestWriteJSONMatchesWholeDocument: the streamed document is byte for
// byte the one encoding/json makes of the whole, indented or not, with
// and without LFTs, for a fabric with every field set, real fixtures, an
// empty fabric and one without links.
func TestWriteJSONMatchesWholeDocument(t *testing.T) {
	nolinks := fullFabric()
	for _, n := range nolinks.Nodes {
		for _, p := range n.Ports {
			if p != nil {
				p.Remote = nil
			}
		}
	}
	nolinks.Unreachable, nolinks.DuplicateGUIDs = nil, nil
	fabrics := map[string]*Fabric{
		"full": fullFabric(), "hdr": parseFixture(t, "hdr.txt"), "qdr": parseFixture(t, "qdr.txt"),
		"empty": {}, "no links": nolinks,
	}
	for name, f := range fabrics {
		for _, opt := range []MarshalOptions{{}, {Indent: true}, {OmitLFT: true}, {OmitLFT: true, Indent: true}} {
			want := wholeDocument(t, f, opt)
			var got bytes.Buffer
			if err := WriteJSON(&got, f, opt); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				diffText(t, name, string(want), got.String())
				t.Fatalf("%s %+v: streamed document differs", name, opt)
			}
		}
	}
}

var errDiskFull = errors.New("disk full")

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n <= 0 {
		return 0, errDiskFull
	}
	w.n--
	return len(p), nil
}

// TestWriteJSONErrors: a fabric that cannot be written is refused before
// the first byte; a failing writer's error is returned.
func TestWriteJSONErrors(t *testing.T) {
	f := fullFabric()
	f.Nodes[0].Ports[1].Node = f.Nodes[1]
	var buf bytes.Buffer
	if err := WriteJSON(&buf, f, MarshalOptions{}); err == nil || buf.Len() != 0 {
		t.Fatalf("bad fabric: err %v, %d bytes written", err, buf.Len())
	}
	if err := WriteJSON(&failWriter{n: 5}, fullFabric(), MarshalOptions{Indent: true}); !errors.Is(err, errDiskFull) {
		t.Fatalf("failing writer: %v", err)
	}
}
