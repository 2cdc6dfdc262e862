package fabric

import (
	"context"
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
		fab, err := decodeJSON(data)
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
