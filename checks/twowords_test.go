package checks

import (
	"strings"
	"testing"
)

// twoWords is strings.Fields for a description of exactly two words, and
// makes no slice.
func FuzzTwoWords(f *testing.F) {
	for _, s := range []string{"gpu042 mlx5_3", " gpu042\tmlx5_3 ", "gpu042", "", "a b c", "MT4129 ConnectX-7 Mellanox Technologies", "x\u00a0y", "h\u2003d", "  ", "a  b\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, b, ok := twoWords(s)
		w := strings.Fields(s)
		if ok != (len(w) == 2) || ok && (a != w[0] || b != w[1]) || !ok && (a != "" || b != "") {
			t.Fatalf("twoWords(%q) = %q, %q, %v; strings.Fields gives %q", s, a, b, ok, w)
		}
	})
}

func TestTwoWordsAllocates(t *testing.T) {
	if a := testing.AllocsPerRun(100, func() { twoWords("gpu042 mlx5_3") }); a != 0 {
		t.Errorf("%.0f allocations, want none", a)
	}
}
