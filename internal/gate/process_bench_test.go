package gate

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/ibsimtest"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/mad"
)

// BenchmarkGateProcess8k measures what a prolog pays: the ibdoctor
// binary's `gate` as its own process, for 64 hosts spread over the
// 9,472-node fat tree (topology.FatTree8k) on ibsim, with a fresh state
// dir written by the binary's `sweep`. OpenSM sweeps once first (LIDs and
// tables; the gate addresses by LID) and exits. Each gate runs under GNU
// time: the figures are its peak resident memory and wall time (the
// simulator is another process). Figures in docs/architecture.md. It
// takes minutes, so it runs only when -bench names it:
//
//	go test -run '^$' -bench GateProcess8k -benchtime 1x -timeout 30m ./internal/gate/
//
// It skips without ibsim and opensm (fails with CI=true).
func BenchmarkGateProcess8k(b *testing.B) {
	ibsimtest.RequireNamedBench(b, "Process8k", "-bench GateProcess8k -benchtime 1x -timeout 30m")
	benchGateProcess(b, topology.FatTree8k())
}

// BenchmarkGateProcess10k is the same on BenchmarkGate10k's 10,816-node
// tree (64-port switches, 9,216 HCAs).
func BenchmarkGateProcess10k(b *testing.B) {
	ibsimtest.RequireNamedBench(b, "Process10k", "-bench GateProcess10k -benchtime 1x -timeout 30m")
	benchGateProcess(b, topology.FatTree3{Pods: 9, LeavesPerPod: 32, SpinesPerPod: 32, HostsPerLeaf: 32, Cores: 1024})
}

func benchGateProcess(b *testing.B, tree topology.FatTree3) {
	ibsimtest.Require(b, "opensm")
	f, net, host := ibsimtest.NetFile(b, tree)
	s := ibsimtest.Start(b, net)
	s.StartOpenSM(ibsimtest.OpenSMOptions{Host: host, Once: true, Timeout: 15 * time.Minute})
	bin := ibsimtest.BuildIbdoctor(b)
	state := filepath.Join(b.TempDir(), "state")
	attach := []string{"--ibsim=" + s.SockName, "--ibsim-host", host}

	t0 := time.Now()
	sw := s.MeasureChild(b, append([]string{bin, "sweep", "--state-dir", state, "--out", filepath.Join(b.TempDir(), "report.json")}, attach...),
		ibsimtest.ChildOptions{Host: host, GNUTime: true, ExitOK: []int{1}})
	b.Logf("sweep: exit %d, %v wall, %.0f MB max RSS (%v)", sw.Exit, sw.Wall.Round(time.Millisecond), float64(sw.MaxRSS)/1e6, time.Since(t0).Round(time.Millisecond))

	var hosts []string
	for _, n := range f.Nodes {
		if n.Type == mad.NodeCA {
			hosts = append(hosts, strings.Fields(n.Description)[0])
		}
	}
	stride := len(hosts) / 64
	job := make([]string, 64)
	for i := range job {
		job[i] = hosts[i*stride]
	}
	args := append([]string{bin, "gate", "--state-dir", state, "--nodes", strings.Join(job, ","), "--json"}, attach...)
	var rss, wall []float64
	b.ResetTimer()
	for range ibsimtest.BenchRuns() {
		c := s.MeasureChild(b, args, ibsimtest.ChildOptions{Host: host, GNUTime: true})
		rss = append(rss, float64(c.MaxRSS))
		wall = append(wall, c.Wall.Seconds())
		b.Logf("gate: exit %d, %v wall, %v CPU, %.1f MB max RSS", c.Exit, c.Wall.Round(time.Millisecond), c.CPU.Round(time.Millisecond), float64(c.MaxRSS)/1e6)
	}
	b.StopTimer()
	b.ReportMetric(float64(len(f.Nodes)), "nodes")
	b.ReportMetric(ibsimtest.Median(rss)/1e6, "gate-maxRSS-MB")
	b.ReportMetric(ibsimtest.Median(wall), "gate-wall-s")
}
