package fabric

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func gzipped(t testing.TB, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	if _, err := z.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// A sweep's fabric-<ns>.json.gz is ibdoctor JSON, gzip-compressed: read
// as that JSON (trial T10: refused as "binary data"). Gzip is told by its
// magic bytes, not the name; any format inside is read by its own parser.
func TestReadFileGzip(t *testing.T) {
	model := fullFabric()
	doc, err := Marshal(model)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "fabric-1.json.gz")
	if err := os.WriteFile(p, gzipped(t, doc), 0o644); err != nil {
		t.Fatal(err)
	}
	got, info, err := ReadFile(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if dump(got) != dump(model) || info.Format != FormatJSON || !info.Gzip {
		t.Errorf("read %s gzip %v:\n%s\nwant:\n%s", info.Format, info.Gzip, dump(got), dump(model))
	}
	// Decode reads the same bytes the same way.
	if got, info, err := Decode(gzipped(t, doc), "x"); err != nil || dump(got) != dump(model) || !info.Gzip {
		t.Errorf("Decode: %v", err)
	}
	// ibnetdiscover text inside, under any name.
	text := "Switch 2 \"a\"\n[1] \"b\"[1]\n\nHca 1 \"b\"\n[1] \"a\"[1]\n"
	q := filepath.Join(dir, "topo")
	if err := os.WriteFile(q, gzipped(t, []byte(text)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, pinfo, _ := Decode([]byte(text), "plain")
	if f, info, err := ReadFile(context.Background(), q); err != nil || len(f.Nodes) != 2 || info.Format != pinfo.Format || !info.Gzip {
		t.Errorf("gzipped text: %v", err)
	}
	// Truncated: a one-line error saying the compressed data is cut.
	z := gzipped(t, doc)
	if err := os.WriteFile(q, z[:len(z)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadFile(context.Background(), q); err == nil || !strings.Contains(err.Error(), "gzip-compressed") || strings.Contains(err.Error(), "\n") {
		t.Errorf("truncated: %v", err)
	}
	// Compressed twice: said, not taken for binary data of another kind.
	if err := os.WriteFile(q, gzipped(t, gzipped(t, doc)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadFile(context.Background(), q); err == nil || !strings.Contains(err.Error(), "compressed twice") {
		t.Errorf("twice: %v", err)
	}
}

// Decompression is bounded by the format's cap on what is decompressed,
// not on the (much smaller) compressed file.
func TestReadFileGzipBounded(t *testing.T) {
	text := strings.Repeat("# Topology file: generated on a loop\n", 4*headSize/37)
	p := filepath.Join(t.TempDir(), "long.gz")
	if err := os.WriteFile(p, gzipped(t, []byte(text)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := readBounded(context.Background(), p, func(Format) int64 { return 2 * headSize })
	if err == nil || !strings.Contains(err.Error(), "MiB ibdoctor reads of a ibnetdiscover file") {
		t.Errorf("over the cap: %v", err)
	}
	if _, _, err := readBounded(context.Background(), p, func(Format) int64 { return 8 * headSize }); err != nil {
		t.Errorf("under the cap: %v", err)
	}
	// Streamed JSON: the same cap on the decompressed bytes.
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
	if err := os.WriteFile(p, gzipped(t, doc), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := openHead(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer h.close()
	r := h.reader(2 * headSize)
	if _, err := decodeJSON(r); err == nil || r.err == nil || !strings.Contains(r.err.Error(), "longer than the 1 MiB ibdoctor reads of a ibdoctor JSON file") {
		t.Errorf("over the cap: %v (reader: %v)", err, r.err)
	}
}

// FuzzDecodeGzip: gzip-compressed input of any content gives what the
// content gives, or an error; never a panic.
func FuzzDecodeGzip(f *testing.F) {
	f.Add([]byte("Switch 2 \"a\"\n[1] \"b\"[1]\n\nHca 1 \"b\"\n[1] \"a\"[1]\n"))
	f.Add([]byte(`{"schema":"ibdoctor.fabric/v1","nodes":[],"links":[]}`))
	f.Add([]byte{0x1f, 0x8b, 8, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		plain, pinfo, perr := Decode(data, "fuzz")
		z, zinfo, zerr := Decode(gzipped(t, data), "fuzz")
		if (perr == nil) != (zerr == nil) && !bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
			t.Fatalf("plain %v, gzipped %v", perr, zerr)
		}
		if perr == nil && zerr == nil && (dump(plain) != dump(z) || pinfo.Format != zinfo.Format || !zinfo.Gzip) {
			t.Fatalf("gzipped read differs")
		}
		// Raw bytes that start like gzip: an error or a fabric, no panic.
		Decode(append([]byte{0x1f, 0x8b}, data...), "fuzz")
	})
}
