package discover

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/ibsimtest"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport/ibsim"
	"github.com/ibdoctor/ibdoctor/mad"
)

// BenchmarkVsIbnetdiscover8k discovers a 9,472-node three-level fat tree
// (topology.FatTree8k: 32-port switches, 8,192 HCAs, 1,280 switches) on
// ibsim, alternately with infiniband-diags' ibnetdiscover (under
// libumad2sim) and with ibdoctor's own binary (`ibdoctor discover --ibsim
// ... --format ibnetdiscover`, built for the benchmark), both attached at
// the same HCA, both writing the topology text to a file. Both run as
// child processes and are measured the same way: wall time, and peak
// resident memory, both through GNU time (/usr/bin/time -f %M, what -v
// prints as "Maximum resident set size"; it forks the tool from its own
// small process, so the tool's figure is not floored at this test
// process's size, as a direct child's would be). It reports the medians and the ratios
// (targets: time <= 0.5x, memory <= 2x). No SM runs: directed-route
// discovery needs no LIDs. IBDOCTOR_BENCH_RUNS sets the number of runs
// (default 3). It takes minutes, so it runs only when -bench names it:
//
//	go test -run '^$' -bench VsIbnetdiscover8k -benchtime 1x -timeout 30m ./internal/discover/
//
// It skips without ibsim and infiniband-diags (fails with CI=true).
func BenchmarkVsIbnetdiscover8k(b *testing.B) {
	if fl := flag.Lookup("test.bench"); fl == nil || !strings.Contains(fl.Value.String(), "8k") {
		b.Skip("takes minutes: run it by name, -bench VsIbnetdiscover8k -benchtime 1x -timeout 30m")
	}
	ibsimtest.Require(b, "ibnetdiscover")
	f, err := topology.FatTree8k().Build()
	if err != nil {
		b.Fatal(err)
	}
	var host string
	for _, n := range f.Nodes {
		if n.Type == mad.NodeCA {
			host = fabric.DefaultNodeID(n)
			break
		}
	}
	var net bytes.Buffer
	if err := fabric.WriteNetFile(&net, f, fabric.NetFileOptions{}); err != nil {
		b.Fatal(err)
	}
	benchVsIbnetdiscover(b, net.String(), host, len(f.Nodes))
}

// BenchmarkVsIbnetdiscover1k is the same on the 1,072-node two-level fat
// tree (32 leaves of 32 hosts, 16 spines).
func BenchmarkVsIbnetdiscover1k(b *testing.B) {
	ibsimtest.Require(b, "ibnetdiscover")
	benchVsIbnetdiscover(b, ibsimtest.FatTree(32, 32, 16), "h0517", 1072)
}

// childRun is one measured child process.
type childRun struct {
	wall   time.Duration
	cpu    time.Duration // the child's user + system time
	simCPU time.Duration // ibsim's CPU time meanwhile
	maxRSS int64         // bytes
	nodes  int           // node lines in its topology output
}

func benchVsIbnetdiscover(b *testing.B, net, host string, want int) {
	runs := 3
	if s := os.Getenv("IBDOCTOR_BENCH_RUNS"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			runs = n
		}
	}
	timeBin, err := exec.LookPath("/usr/bin/time")
	if err != nil {
		if os.Getenv("CI") == "true" {
			b.Fatal("GNU time (Debian package time) is not installed")
		}
		b.Skip("GNU time (Debian package time) is not installed")
	}
	s := ibsimtest.Start(b, net)
	ibsimPid := findIBSim(s.NetFile)
	dir := b.TempDir()
	bin := filepath.Join(dir, "ibdoctor")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, "github.com/ibdoctor/ibdoctor/cmd/ibdoctor")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building ibdoctor: %v\n%s", err, out)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LD_PRELOAD=") && !strings.HasPrefix(kv, ibsim.EnvSockName+"=") && !strings.HasPrefix(kv, ibsim.EnvHost+"=") {
			env = append(env, kv)
		}
	}
	env = append(env, ibsim.EnvSockName+"="+s.SockName, ibsim.EnvHost+"="+host)

	measure := func(name string, args []string, extraEnv ...string) childRun {
		out := filepath.Join(dir, name+".out")
		f, err := os.Create(out)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		var stderr bytes.Buffer
		// GNU time forks the tool from its own small process: a child
		// of this (large) test process would inherit its peak RSS
		// through vfork+exec and report that instead of its own.
		usage := filepath.Join(dir, name+".usage")
		cmd := exec.Command(timeBin, append([]string{"-f", "%M %U %S", "-o", usage}, args...)...)
		cmd.Dir = dir // libumad2sim writes sys-<pid>/ here
		cmd.Env = append(slices.Clone(env), extraEnv...)
		cmd.Stdout, cmd.Stderr = f, &stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		sim0 := procCPU(ibsimPid)
		start := time.Now()
		err = cmd.Run()
		r := childRun{wall: time.Since(start), simCPU: procCPU(ibsimPid) - sim0}
		if err != nil {
			b.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		u, err := os.ReadFile(usage)
		if err != nil {
			b.Fatal(err)
		}
		var kb int64
		var user, sys float64
		if _, err := fmt.Sscan(string(u), &kb, &user, &sys); err != nil {
			b.Fatalf("%s: %q: %v", usage, u, err)
		}
		r.maxRSS = kb << 10
		r.cpu = time.Duration((user + sys) * float64(time.Second))
		r.nodes = countNodeLines(b, out)
		if r.nodes != want {
			b.Fatalf("%s found %d nodes, want %d\n%s", name, r.nodes, want, stderr.String())
		}
		return r
	}

	var ours, theirs []childRun
	b.ResetTimer()
	for i := range runs {
		doOurs := func() {
			ours = append(ours, measure("ibdoctor", []string{bin, "discover", "--ibsim=" + s.SockName, "--ibsim-host", host, "--format", "ibnetdiscover"}))
		}
		doTheirs := func() {
			theirs = append(theirs, measure("ibnetdiscover", []string{"ibnetdiscover"}, "LD_PRELOAD="+ibsimtest.UMAD2Sim))
		}
		if i%2 == 0 {
			doOurs()
			doTheirs()
		} else {
			doTheirs()
			doOurs()
		}
		b.Logf("run %d: ibdoctor %v %s (CPU %v, ibsim's %v), ibnetdiscover %v %s (CPU %v, ibsim's %v)", i+1,
			ours[i].wall.Round(time.Millisecond), mb(ours[i].maxRSS), ours[i].cpu.Round(time.Millisecond), ours[i].simCPU.Round(10*time.Millisecond),
			theirs[i].wall.Round(time.Millisecond), mb(theirs[i].maxRSS), theirs[i].cpu.Round(time.Millisecond), theirs[i].simCPU.Round(10*time.Millisecond))
	}
	b.StopTimer()
	ot, tt := medianOf(ours, func(r childRun) float64 { return r.wall.Seconds() }), medianOf(theirs, func(r childRun) float64 { return r.wall.Seconds() })
	om, tm := medianOf(ours, func(r childRun) float64 { return float64(r.maxRSS) }), medianOf(theirs, func(r childRun) float64 { return float64(r.maxRSS) })
	b.ReportMetric(ot, "ibdoctor-s")
	b.ReportMetric(tt, "ibnetdiscover-s")
	b.ReportMetric(ot/tt, "time-ratio")
	b.ReportMetric(om/(1<<20), "ibdoctor-maxrss-MB")
	b.ReportMetric(tm/(1<<20), "ibnetdiscover-maxrss-MB")
	b.ReportMetric(om/tm, "mem-ratio")
	b.Logf("%d nodes; medians of %d runs: ibdoctor %.2f s %s, ibnetdiscover %.2f s %s; time ratio %.2f, memory ratio %.2f",
		want, runs, ot, mb(int64(om)), tt, mb(int64(tm)), ot/tt, om/tm)
}

// findIBSim returns the pid of the ibsim this benchmark started (the one
// whose command line names netFile), or 0; it is only read, never
// signalled.
func findIBSim(netFile string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cl, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		args := strings.Split(string(cl), "\x00")
		if len(args) > 0 && filepath.Base(args[0]) == "ibsim" && slices.Contains(args, netFile) {
			return pid
		}
	}
	return 0
}

// procCPU is a process's user + system time from /proc/PID/stat.
func procCPU(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the parenthesised command: state is field 3; utime
	// and stime are fields 14 and 15, in clock ticks (100 per second).
	rest := string(b[bytes.LastIndexByte(b, ')')+2:])
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/(1<<20)) }

func medianOf(rs []childRun, v func(childRun) float64) float64 {
	xs := make([]float64, len(rs))
	for i, r := range rs {
		xs[i] = v(r)
	}
	slices.Sort(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

// countNodeLines counts the node lines ("Switch\t..", "Ca\t..", "Rt\t..")
// of a topology file.
func countNodeLines(b *testing.B, path string) int {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "Switch\t") || strings.HasPrefix(line, "Ca\t") || strings.HasPrefix(line, "Rt\t") {
			n++
		}
	}
	return n
}
