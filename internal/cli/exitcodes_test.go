package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestExitCodesDoc reads docs/exit-codes.md's table and checks that the
// code's constants carry the same numbers under the same names, and that
// commands exit with them in the situations the table names (issue 17
// item 11: the doc and the code had drifted).
func TestExitCodesDoc(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "exit-codes.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^\| (\d+) \| (\w+) \| (.+) \|$`)
	doc := map[string]int{}
	meaning := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		n, _ := strconv.Atoi(m[1])
		doc[m[2]] = n
		meaning[m[2]] = m[3]
	}
	code := map[string]int{"healthy": ExitHealthy, "findings": ExitFindings, "undecided": ExitUndecided, "partial": ExitPartial}
	if len(doc) != len(code) {
		t.Errorf("the doc's table has %d codes %v; the code has %d %v", len(doc), doc, len(code), code)
	}
	for name, n := range code {
		if d, ok := doc[name]; !ok || d != n {
			t.Errorf("%s: code %d, doc %d (present %v)", name, n, d, ok)
		}
	}

	// Behaviour: one case per row, on the simulator.
	topo := chkTopology(t)
	dead := writeFile(t, "dead.faults", "dead \"gpu016 mlx5_0\"\n")
	spine1X := writeFile(t, "1x.faults", faultSpine1X)
	fast := []string{"--timeout", deadTimeout, "--retries", "0"}
	for _, c := range []struct {
		row  string
		args []string
	}{
		{"healthy", []string{"check", "--sim=" + topo}},
		{"findings", []string{"check", "--sim=" + topo, "--faults", spine1X}},
		{"findings", []string{"links", "--sim=" + topo, "--faults", spine1X}},
		{"undecided", []string{"check", "--bogus"}},
		{"undecided", []string{"check", "-o", "0", "--sim=" + topo}},
		{"undecided", append([]string{"check", "--sim=" + topo, "--faults", dead}, fast...)},
		{"partial", append([]string{"discover", "--sim=" + topo, "--faults", dead}, fast...)},
		{"partial", append([]string{"links", "--sim=" + topo, "--faults", dead}, fast...)},
	} {
		got, _, stderr := run(c.args...)
		if got != doc[c.row] {
			t.Errorf("%v: exit %d, the doc's %q row says %d (%s)\n%s", c.args, got, c.row, doc[c.row], meaning[c.row], stderr)
		}
		if cmd := c.args[0]; c.row != "healthy" && c.row != "undecided" && !strings.Contains(meaning[c.row], "`"+cmd) {
			t.Errorf("the doc's %q row does not name %s", c.row, cmd)
		}
	}
}
