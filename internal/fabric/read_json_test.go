package fabric

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDecodeJSONFabric(t *testing.T) {
	model := fullFabric()
	doc, err := MarshalWith(model, MarshalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := readText(t, "fabric.json", string(doc))
	if err != nil {
		t.Fatal(err)
	}
	if cs := Diff(model, got); len(cs) != 0 || len(got.Nodes) != len(model.Nodes) {
		t.Errorf("%d nodes, changes:\n%s", len(got.Nodes), cs)
	}
	for _, tc := range []struct{ doc, want string }{
		{`{"schema":"ibdoctor.snapshot/v1","fabric_file":"fabric-2.json"}`, `its fabric is in "fabric-2.json" beside it`},
		{`{"schema":"ibdoctor.report/v1"}`, `JSON schema "ibdoctor.report/v1" is not a fabric`},
		{`{"schema":`, "not a JSON fabric"},
		{`{"schema":"ibdoctor.fabric/v1","nodes":[{"guid":"xyz"}]}`, "fabric"},
	} {
		_, err := readText(t, "x.json", tc.doc)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.doc, err, tc.want)
		}
	}
}

// FuzzDecodeJSONFabric: any bytes give a fabric or an error, never a panic.
func FuzzDecodeJSONFabric(f *testing.F) {
	f.Add([]byte(`{"schema":"ibdoctor.fabric/v1","nodes":[],"links":[]}`))
	f.Add([]byte(`{"schema":"ibdoctor.snapshot/v1","fabric_file":"f.json"}`))
	f.Add([]byte(`{"schema":"ibdoctor.fabric/v1","nodes":[{"type":"switch","guid":"0x1","ports":[{"num":0}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fab, err := decodeJSON(bytes.NewReader(data))
		if err == nil && fab == nil {
			t.Fatal("nil fabric without an error")
		}
	})
}

// readText writes text to a temporary file and reads it with ReadFile.
func readText(t *testing.T, name, text string) (*Fabric, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	f, _, err := ReadFile(context.Background(), p)
	return f, err
}

// A document larger than the head ReadFile detects the format from
// streams from the file: the same fabric as decoding it whole.
func TestReadFileJSONStreamed(t *testing.T) {
	model := fullFabric()
	lft := make([]uint8, 3*headSize)
	for i := range lft {
		lft[i] = uint8(i % 4)
	}
	model.Nodes[1].Switch.LFT = LFTFromBytes(lft, nil)
	doc, err := Marshal(model)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc) <= headSize {
		t.Fatalf("document of %d bytes fits the head", len(doc))
	}
	got, err := readText(t, "fabric.json", string(doc))
	if err != nil {
		t.Fatal(err)
	}
	if dump(got) != dump(model) {
		t.Errorf("streamed:\n%s\nwant:\n%s", dump(got), dump(model))
	}
	// Over the format's cap, it stops there and says so.
	p := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(p, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := openHead(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer h.close()
	h.size = 0 // as a pipe: the length is known only by reading
	r := h.reader(2 * headSize)
	if _, err := decodeJSON(r); err == nil || r.err == nil || !strings.Contains(r.err.Error(), "longer than the 1 MiB ibdoctor reads of a ibdoctor JSON file") {
		t.Errorf("over the cap: %v (reader: %v)", err, r.err)
	}
}

// "nodes" twice is refused: encoding/json would silently keep the last.
func TestUnmarshalNodesTwice(t *testing.T) {
	_, err := Unmarshal([]byte(`{"schema":"ibdoctor.fabric/v1","nodes":[],"Nodes":[{"type":"switch","guid":"0x1","ports":[]}]}`))
	if err == nil || !strings.Contains(err.Error(), `"nodes" given twice`) {
		t.Errorf("got %v", err)
	}
	_, err = Unmarshal([]byte(`{"schema":"ibdoctor.fabric/v1","nodes":[]} {}`))
	if err == nil || !strings.Contains(err.Error(), "more after the document's end") {
		t.Errorf("trailing document: %v", err)
	}
}

// unmarshalWhole is how Unmarshal decoded before it streamed: the whole
// document with encoding/json, then the nodes. FuzzReadJSONAsWhole holds
// the streaming decoder to it.
func unmarshalWhole(data []byte) (*Fabric, error) {
	var doc jsonFabric
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if doc.Schema != SchemaV1 {
		return nil, fmt.Errorf("schema %q", doc.Schema)
	}
	var (
		nodes []*Node
		extra jsonExtra
	)
	for i, jn := range doc.Nodes {
		n, err := jn.decode(nil, &extra, i)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, n)
	}
	return doc.link(nodes, &extra)
}

// FuzzReadJSONAsWhole: the streaming decoder reads a document exactly as
// decoding it whole does, but for "nodes" given twice, which it refuses.
func FuzzReadJSONAsWhole(f *testing.F) {
	good, err := Marshal(fullFabric())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"schema":"ibdoctor.fabric/v1","nodes":[],"links":[]}`))
	f.Add([]byte(`{"links":[],"NODES":null,"Schema":"ibdoctor.fabric/v1","extra":{"a":[1,2]}}`))
	f.Add([]byte(`{"schema":"ibdoctor.fabric/v1","nodes":[{"type":"switch","guid":"0x1","num_ports":1,"ports":[{"num":0}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		want, werr := unmarshalWhole(data)
		got, gerr := Unmarshal(data)
		switch {
		case gerr != nil && strings.Contains(gerr.Error(), `"nodes" given twice`):
		case (werr == nil) != (gerr == nil):
			t.Fatalf("whole: %v, streamed: %v", werr, gerr)
		case werr == nil && dump(got) != dump(want):
			t.Fatalf("whole:\n%s\nstreamed:\n%s", dump(want), dump(got))
		}
	})
}
