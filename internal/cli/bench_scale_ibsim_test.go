package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/ibsimtest"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/mad"
)

// BenchmarkScaleVsIbnetdiscover8k measures issue 13's rows on ibsim: the
// fabric topology.FatTree8k (9,472 nodes) routed once by OpenSM (min-hop,
// opensm -o: the tables stay, the SM is gone), then, each a child process
// timed by GNU time in the same run: ibnetdiscover, ibdoctor check (every
// counter and forwarding table), sweep into an empty state directory
// (and its state on disk per node), sweep2 (the same sweep again in that
// directory: a later sweep, comparing against the baseline the first
// accepted), gate (64 hosts spread over the fabric, against that state),
// the JSON outputs (discover --format json, links --json, check --json,
// counters --all --json, top --json) and counters --all and top --once
// beside them (the difference is what the JSON costs). It reports each
// one's wall time and peak RSS against ibnetdiscover's, and check's MADs. Minutes of
// CPU, so it runs only when named:
//
//	IBDOCTOR_BENCH_RUNS=1 go test -run '^$' -bench ScaleVsIbnetdiscover8k -benchtime 1x -timeout 60m ./internal/cli/
func BenchmarkScaleVsIbnetdiscover8k(b *testing.B) {
	ibsimtest.RequireNamedBench(b, "8k", "-bench ScaleVsIbnetdiscover8k -benchtime 1x -timeout 60m")
	benchScale(b, topology.FatTree8k(), 30*time.Minute)
}

// BenchmarkScaleVsIbnetdiscover49k is the same on topology.FatTree50k
// (48,896 nodes: 45,056 HCAs, 3,840 switches, just under the unicast LID
// limit). Tens of minutes of CPU:
//
//	IBDOCTOR_BENCH_RUNS=1 nice go test -run '^$' -bench ScaleVsIbnetdiscover49k -benchtime 1x -timeout 240m ./internal/cli/
func BenchmarkScaleVsIbnetdiscover49k(b *testing.B) {
	ibsimtest.RequireNamedBench(b, "49k", "-bench ScaleVsIbnetdiscover49k -benchtime 1x -timeout 240m")
	// OpenSM alone took 27 minutes to compute min-hop tables for it on a
	// loaded 2-core machine, then had yet to push them: give it two hours.
	benchScale(b, topology.FatTree50k(), 120*time.Minute)
}

var (
	madsLine   = regexp.MustCompile(`(\d+) MADs`)
	timingLine = regexp.MustCompile(`(?m)^Timing:.*$`)
)

func benchScale(b *testing.B, ft topology.FatTree3, smWait time.Duration) {
	ibsimtest.Require(b, "ibnetdiscover", "opensm")
	f, net, host := ibsimtest.NetFile(b, ft)
	s := ibsimtest.Start(b, net)
	t0 := time.Now()
	s.StartOpenSM(ibsimtest.OpenSMOptions{Host: host, Once: true, Extra: []string{"-R", "minhop"}, Timeout: smWait})
	b.Logf("%d nodes; OpenSM routed them in %v", len(f.Nodes), time.Since(t0).Round(time.Second))
	bin := ibsimtest.BuildIbdoctor(b)
	at := []string{"--ibsim=" + s.SockName, "--ibsim-host", host}
	// stateArg stands for the run's state directory: each run's sweep is
	// a first sweep into an empty one, its sweep2 a later sweep there.
	const stateArg = "{state}"
	sweepArgs := append([]string{bin, "sweep", "--state-dir", stateArg}, at...)
	// gate: 64 hosts spread evenly over the fabric's HCAs, as
	// BenchmarkGateProcess8k picks them, against the state the sweeps
	// left (issue 13's gate row: ≤ 0.5 s and ≤ 100 MB at 49k).
	var hosts []string
	for _, n := range f.Nodes {
		if n.Type == mad.NodeCA {
			hosts = append(hosts, strings.Fields(n.Description)[0])
		}
	}
	job := make([]string, 64)
	for i := range job {
		job[i] = hosts[i*(len(hosts)/len(job))]
	}
	gateArgs := append([]string{bin, "gate", "--state-dir", stateArg, "--nodes", strings.Join(job, ",")}, at...)
	type tool struct {
		name    string
		args    []string
		preload bool
	}
	tools := []tool{
		{"ibnetdiscover", []string{"ibnetdiscover"}, true},
		{"check", append([]string{bin, "check"}, at...), false},
		{"sweep", sweepArgs, false},
		{"sweep2", sweepArgs, false},
		{"gate", gateArgs, false},
		{"discover-json", append([]string{bin, "discover", "--format", "json"}, at...), false},
		{"links-json", append([]string{bin, "links", "--json"}, at...), false},
		{"check-json", append([]string{bin, "check", "--json"}, at...), false},
		{"counters", append([]string{bin, "counters", "--all"}, at...), false},
		{"counters-json", append([]string{bin, "counters", "--all", "--json"}, at...), false},
		{"top", append([]string{bin, "top", "--once"}, at...), false},
		{"top-json", append([]string{bin, "top", "--json"}, at...), false},
	}
	// IBDOCTOR_BENCH_TOOLS=check,sweep,sweep2,gate runs only those beside ibnetdiscover
	// (at 49k each tool is minutes on ibsim).
	if only := os.Getenv("IBDOCTOR_BENCH_TOOLS"); only != "" {
		want := strings.Split(only, ",")
		tools = slices.DeleteFunc(tools, func(t tool) bool { return t.name != "ibnetdiscover" && !slices.Contains(want, t.name) })
	}
	// IBDOCTOR_BENCH_PROFILE_DIR=DIR keeps a CPU and a heap profile of
	// each ibdoctor child there (DIR/check.cpu.pprof, ...), the last run's.
	if dir := os.Getenv("IBDOCTOR_BENCH_PROFILE_DIR"); dir != "" {
		// Made here rather than refused: a missing DIR found only now
		// would cost the minutes OpenSM took to route the fabric.
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatalf("IBDOCTOR_BENCH_PROFILE_DIR: %v", err)
		}
		for i, t := range tools {
			if t.name != "ibnetdiscover" {
				tools[i].args = append(slices.Clone(t.args), "--cpuprofile", filepath.Join(dir, t.name+".cpu.pprof"), "--memprofile", filepath.Join(dir, t.name+".heap.pprof"))
			}
		}
	}
	runs := ibsimtest.BenchRuns()
	got := map[string][]ibsimtest.Child{}
	inState := func(args []string, dir string) []string {
		args = slices.Clone(args)
		for i, a := range args {
			if a == stateArg {
				args[i] = dir
			}
		}
		return args
	}
	var state string
	b.ResetTimer()
	for i := range runs {
		state = b.TempDir()
		swept := false
		for _, t := range tools {
			if (t.name == "sweep2" || t.name == "gate") && !swept {
				// IBDOCTOR_BENCH_TOOLS left the sweep out: a first
				// sweep, not measured, accepts the baseline.
				r := s.MeasureChild(b, inState(sweepArgs, state), ibsimtest.ChildOptions{Host: host, ExitOK: []int{1, 3}})
				b.Logf("run %d: a first sweep for %s (not measured): %v, exit %d", i+1, t.name, r.Wall.Round(time.Millisecond), r.Exit)
				swept = true
			}
			swept = swept || t.name == "sweep"
			r := s.MeasureChild(b, inState(t.args, state), ibsimtest.ChildOptions{Host: host, Preload: t.preload, GNUTime: true, ExitOK: []int{1, 3}})
			got[t.name] = append(got[t.name], r)
			extra := ""
			if t.name == "check" || t.name == "sweep" || t.name == "sweep2" {
				out, _ := os.ReadFile(r.Output)
				if m := timingLine.Find(out); m != nil {
					b.Logf("run %d: %s %s", i+1, t.name, m)
				}
				if m := madsLine.FindSubmatch(out); m != nil && t.name == "check" {
					extra = ", " + string(m[0])
					n, _ := strconv.Atoi(string(m[1]))
					b.ReportMetric(float64(n), "check-MADs")
				}
			}
			b.Logf("run %d: %s %v %.1f MB (CPU %v, ibsim's %v, exit %d%s)", i+1, t.name, r.Wall.Round(time.Millisecond),
				float64(r.MaxRSS)/(1<<20), r.CPU.Round(time.Millisecond), r.SimCPU.Round(10*time.Millisecond), r.Exit, extra)
		}
	}
	b.StopTimer()
	wall := func(r ibsimtest.Child) float64 { return r.Wall.Seconds() }
	rss := func(r ibsimtest.Child) float64 { return float64(r.MaxRSS) }
	refT, refM := ibsimtest.MedianOf(got["ibnetdiscover"], wall), ibsimtest.MedianOf(got["ibnetdiscover"], rss)
	b.ReportMetric(refT, "ibnetdiscover-s")
	b.ReportMetric(refM/(1<<20), "ibnetdiscover-MB")
	for _, t := range tools[1:] {
		tt, tm := ibsimtest.MedianOf(got[t.name], wall), ibsimtest.MedianOf(got[t.name], rss)
		b.ReportMetric(tt, t.name+"-s")
		b.ReportMetric(tm/(1<<20), t.name+"-MB")
		b.ReportMetric(tt/refT, t.name+"-time-ratio")
		b.ReportMetric(tm/refM, t.name+"-mem-ratio")
		b.Logf("%s: median %.2f s %.1f MB; %.2f× ibnetdiscover's wall, %.2f× its RSS", t.name, tt, tm/(1<<20), tt/refT, tm/refM)
	}
	if len(got["sweep"]) == 0 && len(got["sweep2"]) == 0 {
		return // IBDOCTOR_BENCH_TOOLS left the sweeps out: no state to count
	}
	var size int64
	ents, _ := os.ReadDir(state)
	for _, e := range ents {
		if fi, err := os.Stat(filepath.Join(state, e.Name())); err == nil && fi.Mode().IsRegular() {
			size += fi.Size()
			b.Logf("state: %s %d bytes", e.Name(), fi.Size())
		}
	}
	b.ReportMetric(float64(size)/float64(len(f.Nodes)), "state-B/node")
	b.Logf("sweep state: %s, %.0f B per node", fmt.Sprintf("%.1f MB", float64(size)/(1<<20)), float64(size)/float64(len(f.Nodes)))
}
