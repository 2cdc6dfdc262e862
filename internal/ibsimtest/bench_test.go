package ibsimtest

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/topology"
)

func TestMedian(t *testing.T) {
	odd := []time.Duration{5, 1, 3}
	if m := Median(odd); m != 3 || odd[0] != 5 {
		t.Errorf("Median(%v) = %v (and must not sort its argument)", odd, m)
	}
	if m := Median([]float64{4, 1, 2, 8}); m != 3 {
		t.Errorf("even median = %v, want 3", m)
	}
	if m := Median([]float64(nil)); m != 0 {
		t.Errorf("empty median = %v", m)
	}
	type run struct{ wall float64 }
	if m := MedianOf([]run{{2}, {9}, {1}}, func(r run) float64 { return r.wall }); m != 2 {
		t.Errorf("MedianOf = %v, want 2", m)
	}
}

// TestMeasureChild runs a shell as a measured child of a small ibsim:
// its output file, its exit code, the environment it got, and GNU time's
// figures.
func TestMeasureChild(t *testing.T) {
	s := Start(t, FatTree(2, 2, 1))
	t.Setenv("LD_PRELOAD", "")
	script := []string{"sh", "-c", `echo "host=$SIM_HOST sock=$IBSIM_SOCKNAME preload=$LD_PRELOAD"; exit 1`}
	c := s.MeasureChild(t, script, ChildOptions{Host: "h0002", GNUTime: true, ExitOK: []int{1}})
	out, err := os.ReadFile(c.Output)
	if err != nil {
		t.Fatal(err)
	}
	if want := "host=h0002 sock=" + s.SockName + " preload=\n"; string(out) != want {
		t.Errorf("output %q, want %q", out, want)
	}
	if c.Exit != 1 || c.Wall <= 0 || c.MaxRSS <= 0 {
		t.Errorf("child %+v: want exit 1, a wall time and a peak RSS", c)
	}
	c = s.MeasureChild(t, []string{"sh", "-c", `echo "$LD_PRELOAD"`}, ChildOptions{Preload: true})
	if out, _ := os.ReadFile(c.Output); strings.TrimSpace(string(out)) != UMAD2Sim || c.Exit != 0 {
		t.Errorf("with Preload: LD_PRELOAD %q, exit %d", out, c.Exit)
	}
}

func TestNetFile(t *testing.T) {
	f, net, host := NetFile(t, topology.FatTree2{Leaves: 2, Spines: 1, HostsPerLeaf: 2})
	if l := countNet(net); l.nodes != len(f.Nodes) || l.switches != 3 {
		t.Errorf("net file has %+v, want %d nodes, 3 switches", l, len(f.Nodes))
	}
	if !strings.Contains(net, fmt.Sprintf("Hca 1 %q", host)) {
		t.Errorf("host %q is not a CA of the net file:\n%s", host, net)
	}
}
