package hostlist

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // space-separated
	}{
		{"gpu001", "gpu001"},
		{"gpu[001-004]", "gpu001 gpu002 gpu003 gpu004"},
		{"gpu[001-004,010],cpu[1-3]", "gpu001 gpu002 gpu003 gpu004 gpu010 cpu1 cpu2 cpu3"},
		{"rack[1-2]-gpu[01-03]", "rack1-gpu01 rack1-gpu02 rack1-gpu03 rack2-gpu01 rack2-gpu02 rack2-gpu03"},
		{"gpu[08-11]", "gpu08 gpu09 gpu10 gpu11"},
		{"gpu[8-11]", "gpu8 gpu9 gpu10 gpu11"},
		{"gpu[098-101]", "gpu098 gpu099 gpu100 gpu101"},
		{"  a, b  c\n\td ", "a b c d"},
		{"gpu[1 - 2 , 5]", "gpu1 gpu2 gpu5"},
		{"n[1-2]-ib", "n1-ib n2-ib"},
		{"[1-3]", "1 2 3"},
		{"gpu[5-5]", "gpu5"},
		{"a,a", "a a"},
		{"", ""},
		{" , ,", ""},
		{"x[0]y[00-01]", "x0y00 x0y01"},
	} {
		got, err := Expand(c.in)
		if err != nil {
			t.Errorf("Expand(%q): %v", c.in, err)
			continue
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("Expand(%q) = %q, want %q", c.in, g, c.want)
		}
	}
}

func TestExpandErrors(t *testing.T) {
	for _, c := range []struct{ in, part, reason string }{
		{"gpu[1-3", "gpu[1-3", "not closed"},
		{"ok,gpu1-3]", "gpu1-3]", "without '['"},
		{"gpu[1-[2]]", "gpu[1-[2]]", "cannot nest"},
		{"gpu[]", "gpu[]", "empty brackets"},
		{"gpu[3-1]", "gpu[3-1]", "runs backwards"},
		{"gpu[a-b]", "gpu[a-b]", `"a-b" is not a number`},
		{"gpu[1-]", "gpu[1-]", `"1-" is not a number`},
		{"gpu[1,,2]", "gpu[1,,2]", `"" is not a number`},
		{"gpu[1-9999999999]", "gpu[1-9999999999]", "more than"},
		{"a[1-1024]b[1-1025]", "a[1-1024]b[1-1025]", "more than"},
		{"gpu[99999999999999999999]", "gpu[99999999999999999999]", "too large"},
	} {
		_, err := Expand(c.in)
		var he *Error
		if !errors.As(err, &he) || he.Part != c.part || !strings.Contains(he.Reason, c.reason) {
			t.Errorf("Expand(%q) err = %v, want part %q reason ~%q", c.in, err, c.part, c.reason)
		}
	}
}

func TestCompress(t *testing.T) {
	for _, c := range []struct {
		in   string // space-separated
		want string
	}{
		{"gpu001 gpu002 gpu003 gpu010", "gpu[001-003,010]"},
		{"gpu003 gpu001 gpu002 gpu001", "gpu[001-003]"},
		{"cpu1 cpu2 cpu3 cpu10 cpu11", "cpu[1-3,10-11]"},
		{"gpu09 gpu10 gpu11", "gpu[09-11]"},
		{"gpu001 gpu100", "gpu[001,100]"},
		{"gpu1 gpu01", "gpu01,gpu1"},
		{"login mgmt gpu7", "gpu7,login,mgmt"},
		{"rack1-gpu01 rack1-gpu02 rack2-gpu01", "rack1-gpu[01-02],rack2-gpu01"},
		{"n1-ib n2-ib n3-ib", "n[1-3]-ib"},
		{"", ""},
	} {
		got := Compress(strings.Fields(c.in))
		if got != c.want {
			t.Errorf("Compress(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// Expand(Compress(x)) is the set x, for many shapes of x.
func TestCompressRoundTrip(t *testing.T) {
	var names []string
	for i := 0; i < 300; i += 1 + i%7 {
		names = append(names, fmt.Sprintf("gpu%03d", i), fmt.Sprintf("cpu%d", i), fmt.Sprintf("r%d-n%02d-ib", i%3, i%40))
	}
	checkRoundTrip(t, names)
}

func checkRoundTrip(t *testing.T, names []string) {
	t.Helper()
	c := Compress(names)
	got, err := Expand(c)
	if err != nil {
		t.Fatalf("Expand(Compress) = %v for %q", err, c)
	}
	want := slices.Clone(names)
	slices.Sort(want)
	want = slices.Compact(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("Expand(Compress(names)) differs: compressed %q\n got %q\nwant %q", c, got, want)
	}
}

func FuzzExpand(f *testing.F) {
	for _, s := range []string{"gpu[001-004,010],cpu[1-3]", "rack[1-2]-gpu[01-04]", "a b,c", "x[1-3", "gpu[09-11]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		names, err := Expand(s)
		if err != nil {
			var he *Error
			if !errors.As(err, &he) {
				t.Fatalf("error %v is not a *hostlist.Error", err)
			}
			return
		}
		if len(names) > MaxHosts {
			t.Fatalf("%d names", len(names))
		}
		for _, n := range names {
			if n == "" || strings.ContainsAny(n, "[], \t\n") {
				return // odd names (e.g. from other whitespace) need not compress
			}
		}
		if len(names) < 5000 {
			checkRoundTrip(t, names)
		}
	})
}
