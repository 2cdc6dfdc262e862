package cli

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

var hopLine = regexp.MustCompile(`^\s*(\d+)\s+(\S+)\s+0x([0-9a-f]{16})\s+(\d+)\s+(\S+) -> (\S+)\s*$`)

// hops returns "switch in->out" per hop line of trace's output.
func hops(out string) []string {
	var h []string
	for _, line := range strings.Split(out, "\n") {
		if m := hopLine.FindStringSubmatch(line); m != nil {
			h = append(h, fmt.Sprintf("%s %s->%s", m[2], m[5], m[6]))
		}
	}
	return h
}

func TestTraceDelivered(t *testing.T) {
	topo, model := simTopology(t)
	src, dst := model.NodesByName("gpu001 mlx5_0")[0].Ports[1], model.NodesByName("gpu012 mlx5_0")[0].Ports[1]
	var first string
	for _, args := range [][2]string{
		{"gpu001", "gpu012"},
		{"gpu001 mlx5_0", "gpu012 mlx5_0"},
		{fmt.Sprint(src.LID), fmt.Sprintf("%#x", dst.LID)},
		{fmt.Sprintf("%#x", src.GUID), fmt.Sprintf("%#x", dst.Node.GUID)},
	} {
		code, out, stderr := run("trace", "--sim="+topo, "--no-color", args[0], args[1])
		if code != 0 {
			t.Fatalf("%q: exit %d: %s\n%s", args, code, stderr, out)
		}
		h := hops(out)
		if len(h) != 3 || !strings.HasPrefix(h[0], "leaf01 1->") || !strings.HasPrefix(h[1], "spine0") || h[2] != "leaf03 "+h[2][len("leaf03 "):] || !strings.HasSuffix(h[2], "->4") {
			t.Fatalf("%q: hops %v\n%s", args, h, out)
		}
		if !strings.Contains(out, fmt.Sprintf("From gpu001 mlx5_0 port 1 (GUID %#016x, LID %d)", src.GUID, src.LID)) ||
			!strings.Contains(out, fmt.Sprintf("To gpu012 mlx5_0 port 1 (GUID %#016x, LID %d): delivered after 3 switch hops", dst.GUID, dst.LID)) {
			t.Fatalf("%q:\n%s", args, out)
		}
		if first == "" {
			first = out
		} else if out != first {
			t.Fatalf("%q traced differently:\n%s\nvs\n%s", args, out, first)
		}
	}
	// To a switch: ends on its port 0.
	code, out, _ := run("trace", "--sim="+topo, "--no-color", "gpu001", "spine02")
	if code != 0 || !strings.Contains(out, "To switch spine02") || !strings.HasSuffix(hops(out)[1], "->0") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestTraceBroken(t *testing.T) {
	topo, model := simTopology(t)
	dst := model.NodesByName("gpu012 mlx5_0")[0].Ports[1].LID
	faults := writeFile(t, "faults", fmt.Sprintf("blackhole leaf03 dlid=%d\n", dst))
	code, out, _ := run("trace", "--sim="+topo, "--faults", faults, "--no-color", "gpu001", "gpu012")
	h := hops(out)
	if code != ExitFindings || len(h) != 3 || h[2] != h[2][:len(h[2])-3]+"255" ||
		!strings.Contains(out, fmt.Sprintf("No route (0xFF) to LID %d at leaf03", dst)) {
		t.Fatalf("exit %d, hops %v:\n%s", code, h, out)
	}
	// The same by LIDs, where the source is found without discovery.
	src := model.NodesByName("gpu005 mlx5_0")[0].Ports[1].LID
	code, out, _ = run("trace", "--sim="+topo, "--faults", faults, "--no-color", fmt.Sprint(src), fmt.Sprint(dst))
	if code != ExitFindings || !strings.Contains(out, "at leaf03") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	// A loop between leaf03 and a spine.
	faults = writeFile(t, "faults", fmt.Sprintf("loop leaf03 spine01 dlid=%d\n", dst))
	code, out, _ = run("trace", "--sim="+topo, "--faults", faults, "--no-color", "gpu001", "gpu012")
	if code != ExitFindings || !strings.Contains(out, "Loop: the route to LID") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	// The hop where the loop closes leaves by no port: before, "-> 0"
	// (port 0 is the switch itself).
	if h := hops(out); len(h) == 0 || !strings.HasSuffix(h[len(h)-1], "->(loop)") {
		t.Errorf("last hop of a loop %v, want IN -> (loop)\n%s", h, out)
	}
	// A dead end: the last leaf's host port down.
	faults = writeFile(t, "faults", "down leaf03/4\n")
	code, out, _ = run("trace", "--sim="+topo, "--faults", faults, "--no-color", "gpu001", fmt.Sprint(dst))
	if code != ExitFindings || !strings.Contains(out, "Dead end at leaf03: LID") || !strings.Contains(out, "out of port 4") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestTraceBadArgs(t *testing.T) {
	topo, _ := simTopology(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"gpu00", "gpu012"}, `SRC: "gpu00" matches 9 ports: gpu001 mlx5_0 port 1 (LID`},
		{[]string{"gpu001", "nosuch"}, `DST: no node or port in the fabric has name nosuch`},
		// Not a name that is missing but a LID out of range: before, "has name 0".
		{[]string{"13", "0"}, `DST: 0 is not a valid LID (1..0xBFFF unicast)`},
		{[]string{"0xc000", "gpu001"}, `SRC: 0xc000 is not a valid LID (1..0xBFFF unicast)`},
		{[]string{"gpu001", "49152"}, `DST: 49152 is not a valid LID (1..0xBFFF unicast)`},
		{[]string{"gpu001"}, "usage: ibdoctor trace SRC DST"},
	} {
		code, _, stderr := run(append([]string{"trace", "--sim=" + topo}, c.args...)...)
		if code != ExitUndecided || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d: %s", c.args, code, stderr)
		}
	}
}
