package cli

import (
	"strings"
	"testing"
)

// TestFlagValueNeedsEquals: --sim and --ibsim may stand alone, so pflag
// gives them a value only with '=': "--sim FILE" leaves FILE as a stray
// argument, and the error says to write --sim=FILE (for every command,
// trace's two arguments included). A trace with the wrong number of
// arguments shows its usage line.
func TestFlagValueNeedsEquals(t *testing.T) {
	topo := chkTopology(t)
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"check --sim FILE", []string{"check", "--sim", topo}, []string{"--sim=" + topo, "--sim alone"}},
		{"links --sim FILE", []string{"links", "--sim", topo}, []string{"--sim=" + topo}},
		{"trace --sim FILE SRC DST", []string{"trace", "--sim", topo, "1", "2"}, []string{"--sim=" + topo}},
		{"check --ibsim NAME", []string{"check", "--ibsim", "mysim"}, []string{"--ibsim=mysim"}},
		{"trace with one argument", []string{"trace", "--sim", "gpu001"}, []string{"ibdoctor trace SRC DST", "2 arguments"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, stderr := run(c.args...)
			if code != ExitUndecided {
				t.Fatalf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if n := strings.Count(strings.TrimSpace(stderr), "\n"); n > 1 {
				t.Errorf("want a one-line error, got:\n%s", stderr)
			}
		})
	}
}

// TestNotRunNamesFlags: the summary's not-run line names what to add to
// run the skipped checks, never a check's ID: a fabric file without
// forwarding tables needs --lfts for the routing checks. It never advises
// --interval: the file has no counters nor SM to read twice (trial C10).
func TestNotRunNamesFlags(t *testing.T) {
	topo := chkTopology(t)
	_, out, stderr := run("check", "--sim="+topo, "--no-color")
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Not run:") {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no Not run line:\n%s\n%s", out, stderr)
	}
	for _, w := range []string{"--lfts", "--expect-topology"} {
		if !strings.Contains(line, w) {
			t.Errorf("not-run line lacks %s: %s", w, line)
		}
	}
	if strings.Contains(line, "--interval") {
		t.Errorf("not-run line advises --interval, which cannot help a file: %s", line)
	}
	if strings.Contains(line, "routing.") || strings.Contains(line, "counters.") {
		t.Errorf("not-run line names check IDs: %s", line)
	}
}

// TestFaultsErrorsNameFileOnce: a bad or missing --faults file is one line
// that names the file once, with the line and the fault, and no package
// prefix ("sim:").
func TestFaultsErrorsNameFileOnce(t *testing.T) {
	unknownNode := writeFile(t, "node.faults", "# planted\ndegrade leaf99/1 width=1x\n")
	unknownFault := writeFile(t, "kind.faults", "wobble leaf01\n")
	missing := t.TempDir() + "/none.faults"
	for _, c := range []struct {
		path string
		want []string
	}{
		{unknownNode, []string{"line 2 (degrade)", `"leaf99"`}},
		{unknownFault, []string{"line 1", `unknown fault "wobble"`}},
		{missing, []string{"no such file", "docs/faults.md"}},
	} {
		code, _, stderr := run("check", "--sim", "--faults", c.path)
		if code != ExitUndecided || strings.Count(stderr, c.path) != 1 || strings.Contains(stderr, "sim:") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("exit %d; want 2 and one line naming %s once, without 'sim:':\n%s", code, c.path, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("lacks %q:\n%s", w, stderr)
			}
		}
	}
}

// TestSimMissingFileNamesFormats: a --sim file that does not exist, with
// or without '=', is one line that names it once, says it is missing and
// lists every format --sim reads (the ibdiagnet db_csv and directory too).
func TestSimMissingFileNamesFormats(t *testing.T) {
	missing := t.TempDir() + "/nonexistent"
	for _, args := range [][]string{{"check", "--sim", missing}, {"check", "--sim=" + missing}, {"links", "--sim=" + missing}} {
		code, _, stderr := run(args...)
		if code != ExitUndecided || strings.Count(stderr, missing) != 1 || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%q: exit %d; want 2 and one line naming the file once:\n%s", args, code, stderr)
		}
		for _, w := range []string{"no such file", ".db_csv", "ibdiagnet directory", "ibsim net file", "--sim alone"} {
			if !strings.Contains(stderr, w) {
				t.Errorf("%q: lacks %q:\n%s", args, w, stderr)
			}
		}
	}
}

// TestComputedRoutesImpactSaysComputed: on a fabric file without tables
// the routes are ibdoctor's own, and a degraded link's impact says its
// path share is per those computed routes, never "per the forwarding
// tables".
func TestComputedRoutesImpactSaysComputed(t *testing.T) {
	topo := chkTopology(t)
	faults := writeFile(t, "deg.faults", "degrade leaf01/5 width=1x\n")
	_, out, stderr := run("check", "--sim="+topo, "--faults", faults, "--no-color", "--detail", "100")
	if !strings.Contains(out, "link.degraded-width") {
		t.Fatalf("no degraded link:\n%s\n%s", out, stderr)
	}
	i := strings.Index(out, "of host-to-host paths (")
	if i < 0 {
		t.Fatalf("no path share in the impact:\n%s", out)
	}
	basis := out[i : i+strings.Index(out[i:], ")")]
	if strings.Contains(out, "per the forwarding tables") || !strings.Contains(basis, "computed") {
		t.Errorf("impact on computed routes says %q:\n%s", basis, out)
	}
}

// TestBareSimExtraWordIsArity (trial E4): one word too many after a bare
// --sim ("trace --sim 13 101 7", "check --sim extra") read "--sim 13: no
// such file", sending the operator after a file when they had typed one
// argument too many. The argument-count error comes first; that the word,
// if meant as --sim's file, does not exist is its second clause.
func TestBareSimExtraWordIsArity(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
		not  string
	}{
		{[]string{"trace", "--sim", "13", "101", "7"}, []string{"trace takes 2 arguments, got 3", "usage: ibdoctor trace", "--sim=FILE"}, "--sim 13:"},
		{[]string{"check", "--sim", "extra"}, []string{`unexpected argument "extra": check takes only flags`, "--sim=FILE", "--sim alone"}, "--sim extra:"},
	} {
		code, _, stderr := run(c.args...)
		if code != ExitUndecided || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%q: exit %d, want 2 and one line:\n%s", c.args, code, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%q: lacks %q:\n%s", c.args, w, stderr)
			}
		}
		if strings.Contains(stderr, c.not) {
			t.Errorf("%q: blamed on --sim:\n%s", c.args, stderr)
		}
	}
}
