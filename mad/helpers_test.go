package mad

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readHex reads a testdata hex dump: '#' starts a comment, an optional
// "0010:" offset prefix is ignored, the rest is hex byte pairs.
func readHex(t testing.TB, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("read golden: %v", err)
	}
	b, err := parseHexDump(raw)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return b
}

func parseHexDump(raw []byte) ([]byte, error) {
	var out []byte
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		if i := strings.IndexByte(line, ':'); i >= 0 {
			line = line[i+1:]
		}
		line = strings.Join(strings.Fields(line), "")
		if line == "" {
			continue
		}
		b, err := hex.DecodeString(line)
		if err != nil {
			return nil, err
		}
		out = append(out, b...)
	}
	return out, sc.Err()
}

// goldenFiles lists testdata/*.hex, for fuzz seeds.
func goldenFiles(t testing.TB) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join("testdata", "*.hex"))
	if err != nil {
		t.Fatal(err)
	}
	if len(m) == 0 {
		t.Fatal("no golden files in testdata")
	}
	for i := range m {
		m[i] = filepath.Base(m[i])
	}
	return m
}

// diagText parses infiniband-diags "Name:.....value" output into a map.
func diagText(t testing.TB, name string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		i := strings.IndexByte(line, ':')
		if i <= 0 || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "\t") {
			continue
		}
		v := strings.TrimLeft(line[i+1:], ".")
		m[line[:i]] = strings.TrimSpace(v)
	}
	return m
}
