package fabric

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/ibdoctor/ibdoctor/mad"
)

// wholeDocument encodes f as MarshalWith did before it streamed: the
// whole jsonFabric built, then one Encode. The oracle for WriteJSON's
// layout.
func wholeDocument(t *testing.T, f *Fabric, opt MarshalOptions) []byte {
	index := map[*Node]int{}
	for i, n := range f.Nodes {
		index[n] = i
	}
	doc := jsonFabric{Schema: SchemaV1, Recorded: f.Recorded.names(), Nodes: []jsonNode{}, Links: []jsonLink{}}
	view := viewOf(f, opt)
	for _, n := range f.Nodes {
		doc.Nodes = append(doc.Nodes, jsonNodeOf(&view, n, opt, nil))
	}
	for _, l := range f.linksSeen() { // Links before it had a fast path
		doc.Links = append(doc.Links, jsonLinkOf(l, index))
	}
	for _, u := range f.Unreachable {
		doc.Unreachable = append(doc.Unreachable, jsonUnreachOf(u))
	}
	for _, r := range f.SMs {
		doc.SMs = append(doc.SMs, jsonSM{Node: index[r.Port.Node], GUID: hex64(r.Port.Node.GUID), Port: r.Port.Num,
			SMGUID: hex64(r.GUID), State: r.State.String(), Priority: r.Priority, ActCount: r.ActCount})
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
	for name, f := range oddLinkFabrics() {
		fabrics[name] = f
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

// oddLinkFabrics are fabrics whose links WriteJSON cannot write as it
// finds them (linksInOrder refuses them): it must then write Links' own
// list, so each is still the whole document byte for byte.
func oddLinkFabrics() map[string]*Fabric {
	odd := map[string]*Fabric{}
	// Two nodes with one GUID, both cabled: Links sorts their links
	// together, port by port, not node by node.
	f := fullFabric()
	twin := &Node{Type: mad.NodeCA, GUID: f.Nodes[0].GUID, Description: "twin"}
	twin.Ports = []*Port{nil, {Node: twin, Num: 1, GUID: 0x77}, {Node: twin, Num: 2, GUID: 0x78}}
	sw := f.Nodes[1]
	sw.Ports[2] = &Port{Node: sw, Num: 2, GUID: sw.GUID}
	twin.Ports[1].Remote, sw.Ports[2].Remote = sw.Ports[2], twin.Ports[1]
	ca := f.Nodes[0]
	ca.Ports[2].Remote, twin.Ports[2].Remote = twin.Ports[2], ca.Ports[2]
	f.Nodes = append(f.Nodes, twin)
	odd["duplicate GUID"] = f
	// A Remote that does not point back: Links keeps the first end it
	// meets.
	f = fullFabric()
	f.Nodes[2].Ports[1].Remote = f.Nodes[0].Ports[2]
	odd["one-sided"] = f
	// A port cabled to itself.
	f = fullFabric()
	f.Nodes[0].Ports[2].Remote = f.Nodes[0].Ports[2]
	odd["self"] = f
	// A port kept at an index other than its number.
	f = fullFabric()
	f.Nodes[1].Ports[2], f.Nodes[1].Ports[3] = f.Nodes[1].Ports[3], nil
	odd["misplaced port"] = f
	return odd
}

// TestLinksInOrder: a well-formed fabric's links are found in order (no
// map, no sort: what WriteJSON streams and Links returns), an odd one's
// are not, and Links is what it was for both (linksSeen, the way it
// was).
func TestLinksInOrder(t *testing.T) {
	check := func(name string, f *Fabric, fast bool) {
		t.Helper()
		n, order := f.linksInOrder()
		want := f.linksSeen()
		if (order != nil) != fast || (fast && (n != len(want) || n == 0)) {
			t.Errorf("%s: linksInOrder gave %d links (in order %v), want %d (in order %v)", name, n, order != nil, len(want), fast)
		}
		got := f.Links()
		if !slices.Equal(got, want) {
			t.Errorf("%s: Links gave %d links, not the %d it gave before", name, len(got), len(want))
		}
	}
	for name, f := range map[string]*Fabric{"full": fullFabric(), "hdr": parseFixture(t, "hdr.txt"), "qdr": parseFixture(t, "qdr.txt")} {
		check(name, f, true)
	}
	for name, f := range oddLinkFabrics() {
		check(name, f, false)
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
