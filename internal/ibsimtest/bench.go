package ibsimtest

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// RequireNamedBench skips b unless the -test.bench pattern contains
// substr, so that a benchmark that takes minutes runs only when named,
// not under a catch-all -bench . ; how says how to run it ("-bench
// LFTDump8k -benchtime 1x -timeout 30m").
func RequireNamedBench(b *testing.B, substr, how string) {
	b.Helper()
	if fl := flag.Lookup("test.bench"); fl == nil || !strings.Contains(fl.Value.String(), substr) {
		b.Skip("takes minutes: run it by name, " + how)
	}
}

// BenchRuns returns the number of runs a side-by-side benchmark makes:
// IBDOCTOR_BENCH_RUNS when it is a positive number, else 3.
func BenchRuns() int {
	if s := os.Getenv("IBDOCTOR_BENCH_RUNS"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return n
		}
	}
	return 3
}

// Builder builds a fabric (a topology.FatTree3, say).
type Builder interface {
	Build() (*fabric.Fabric, error)
}

// NetFile builds the fabric and returns it with its ibsim net file
// (fabric.WriteNetFile's default node ids) and the node id of its first
// CA, to attach tools at.
func NetFile(tb testing.TB, fb Builder) (f *fabric.Fabric, net, host string) {
	tb.Helper()
	f, err := fb.Build()
	if err != nil {
		tb.Fatal(err)
	}
	for _, n := range f.Nodes {
		if n.Type == mad.NodeCA {
			host = fabric.DefaultNodeID(n)
			break
		}
	}
	var b bytes.Buffer
	if err := fabric.WriteNetFile(&b, f, fabric.NetFileOptions{}); err != nil {
		tb.Fatal(err)
	}
	return f, b.String(), host
}

// BuildIbdoctor builds cmd/ibdoctor (CGO_ENABLED=0) into a temporary
// directory and returns the binary's path.
func BuildIbdoctor(tb testing.TB) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), "ibdoctor")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, "github.com/ibdoctor/ibdoctor/cmd/ibdoctor")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		tb.Fatalf("building ibdoctor: %v\n%s", err, out)
	}
	return bin
}

// ChildOptions configure MeasureChild.
type ChildOptions struct {
	// Host is the ibsim node the child attaches at (SIM_HOST).
	Host string
	// Preload sets LD_PRELOAD to libumad2sim, for libibumad programs
	// (infiniband-diags); ibdoctor speaks to ibsim itself.
	Preload bool
	// GNUTime runs the child under GNU time (/usr/bin/time -f "%M %U
	// %S") for its peak resident memory and CPU time. GNU time forks the
	// tool from its own small process: a direct child of a large test
	// process would report the parent's peak RSS (inherited through
	// vfork+exec) instead of its own. Without GNU time installed the
	// benchmark is skipped (failed with CI=true).
	GNUTime bool
	// ExitOK lists exit codes other than 0 that are a complete run (1
	// for a tool that reports findings by its exit code).
	ExitOK []int
}

// Child is one measured run of a child process.
type Child struct {
	Wall   time.Duration // wall clock, start to exit
	CPU    time.Duration // the child's user + system time (GNUTime only)
	MaxRSS int64         // the child's peak resident memory, bytes (GNUTime only)
	SimCPU time.Duration // ibsim's user + system time meanwhile
	Exit   int           // exit code
	Output string        // path of the file holding its standard output
	Stderr string        // its standard error
}

// MeasureChild runs args as a child process attached to s at o.Host
// (IBSIM_SOCKNAME and SIM_HOST set; LD_PRELOAD as o.Preload says), in
// s's scratch directory (libumad2sim writes sys-<pid>/ there), with its
// standard output in a file, and measures it. An exit other than 0 or
// o.ExitOK fails b with the child's stderr.
func (s *Sim) MeasureChild(b testing.TB, args []string, o ChildOptions) Child {
	b.Helper()
	argv := args
	var usage string
	if o.GNUTime {
		timeBin, err := exec.LookPath("/usr/bin/time")
		if err != nil {
			if os.Getenv("CI") == "true" {
				b.Fatal("GNU time (Debian package time) is not installed")
			}
			b.Skip("GNU time (Debian package time) is not installed")
		}
		uf, err := os.CreateTemp(s.Dir, filepath.Base(args[0])+"-*.usage")
		if err != nil {
			b.Fatal(err)
		}
		uf.Close()
		usage = uf.Name()
		argv = append([]string{timeBin, "-f", "%M %U %S", "-o", usage}, args...)
	}
	out, err := os.CreateTemp(s.Dir, filepath.Base(args[0])+"-*.out")
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	var stderr bytes.Buffer
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = s.scratch
	cmd.Env = s.toolEnv(o.Host, o.Preload)
	cmd.Stdout, cmd.Stderr = out, &stderr
	cmd.SysProcAttr = dieWithParent()
	pid := s.cmd.Process.Pid
	sim0 := procCPU(pid)
	start := time.Now()
	err = cmd.Run()
	c := Child{Wall: time.Since(start), SimCPU: procCPU(pid) - sim0, Output: out.Name(), Stderr: stderr.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		c.Exit = ee.ExitCode()
	}
	if err != nil && (c.Exit <= 0 || !slices.Contains(o.ExitOK, c.Exit)) {
		b.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, c.Stderr)
	}
	if usage != "" {
		u, err := os.ReadFile(usage)
		if err != nil {
			b.Fatal(err)
		}
		// The last line holds the figures; GNU time writes "Command
		// exited with non-zero status N" before it.
		lines := strings.Split(strings.TrimSpace(string(u)), "\n")
		var kb int64
		var user, sys float64
		if _, err := fmt.Sscan(lines[len(lines)-1], &kb, &user, &sys); err != nil {
			b.Fatalf("%s: %q: %v", usage, u, err)
		}
		c.MaxRSS = kb << 10
		c.CPU = time.Duration((user + sys) * float64(time.Second))
	}
	return c
}

// procCPU is a process's user + system time from /proc/PID/stat (0 when
// it cannot be read).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the parenthesised command: state is field 3; utime
	// and stime are fields 14 and 15, in clock ticks (100 per second).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 > len(b) {
		return 0
	}
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// Median returns the median of xs (the mean of the middle two for an
// even count; 0 for none) without reordering xs.
func Median[T ~int64 | ~float64](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// MedianOf returns the median of v over xs.
func MedianOf[T any](xs []T, v func(T) float64) float64 {
	vs := make([]float64, len(xs))
	for i, x := range xs {
		vs[i] = v(x)
	}
	return Median(vs)
}
