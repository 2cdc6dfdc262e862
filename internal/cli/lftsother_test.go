package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestLFTsErrorsNameTheFlag (trial E10): forwarding tables of another
// fabric read "--sim: sim: loading forwarding tables: topology: none of
// the 1 switch GUIDs ..." (and a missing --lfts file "--sim: --lfts: stat
// ..."): blamed on --sim, "sim:" twice, the file never named. Each is one
// line naming --lfts and its file, once, and the fix.
func TestLFTsErrorsNameTheFlag(t *testing.T) {
	topo := chkTopology(t)
	// A QLogic fabric's ibroute dump: no switch of the fat tree is in it.
	other := corpusPath(t, "avakas-qlogic-qdr.ibroute-lid1")
	missing := filepath.Join(t.TempDir(), "none.lfts")
	for _, c := range []struct {
		path string
		want []string
	}{
		{other, []string{"none of the", "another subnet", "forwarding tables of " + topo}},
		{missing, []string{"no such file", "dump_fts"}},
	} {
		code, _, stderr := run("check", "--sim="+topo, "--lfts", c.path)
		if code != ExitUndecided || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%s: exit %d, want 2 and one line:\n%s", c.path, code, stderr)
		}
		if !strings.HasPrefix(stderr, "ibdoctor: --lfts "+c.path+": ") || strings.Count(stderr, c.path) != 1 || strings.Contains(stderr, "sim:") || strings.Contains(stderr, "--sim:") || strings.Contains(stderr, "stat ") {
			t.Errorf("%s: want one line starting '--lfts FILE:' naming the file once, no 'sim:' nor '--sim:':\n%s", c.path, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%s: lacks %q:\n%s", c.path, w, stderr)
			}
		}
	}
}
