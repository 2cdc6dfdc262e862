package fabric

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkReadFileJSON reads a fabric file with every switch's table
// (fatTree(64, 32, 32): 2,144 nodes, 96 tables of 2,145 entries) through
// ReadFile. B/op is what the read allocates: before the document
// streamed, the file whole plus every table as a hex string.
func BenchmarkReadFileJSON(b *testing.B) {
	f := fatTree(64, 32, 32)
	for _, n := range f.Nodes {
		if n.Switch != nil {
			lft := make([]uint8, len(f.Nodes)+1)
			for i := range lft {
				lft[i] = uint8(i % 32)
			}
			n.Switch.LFT = LFTFromBytes(lft, nil)
		}
	}
	doc, err := MarshalWith(f, MarshalOptions{})
	if err != nil {
		b.Fatal(err)
	}
	p := filepath.Join(b.TempDir(), "fabric.json")
	if err := os.WriteFile(p, doc, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ReadFile(context.Background(), p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadFileIBNetDiscover reads the same fat tree written by
// WriteIBNetDiscover through ReadFile.
func BenchmarkReadFileIBNetDiscover(b *testing.B) {
	var buf bytes.Buffer
	if err := WriteIBNetDiscover(&buf, fatTree(64, 32, 32)); err != nil {
		b.Fatal(err)
	}
	p := filepath.Join(b.TempDir(), "fabric.txt")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ReadFile(context.Background(), p); err != nil {
			b.Fatal(err)
		}
	}
}
