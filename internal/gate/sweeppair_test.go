package gate

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/perf"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/snapshot"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// sweepErrorNames are the error counters a sweep reads per port.
var sweepErrorNames = []string{
	"SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter", "PortRcvErrors",
	"PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors", "PortXmitDiscards",
	"PortXmitConstraintErrors", "PortRcvConstraintErrors", "LocalLinkIntegrityErrors",
	"ExcessiveBufferOverrunErrors", "VL15Dropped",
}

// sweepReadings reads every port of f as a sweep does: a few counters
// nonzero (grown by grow since the saved sweep), each port's in the
// call's one buffer, reused for the next port as perf.Result does: a
// walk allocates nothing per port itself.
type sweepReadings struct {
	f    *fabric.Fabric
	grow uint64
}

func (sweepReadings) Interval() time.Duration { return 0 }

func (c sweepReadings) Ports(fn func(checks.PortReading)) {
	errs := make([]checks.CounterValue, 0, len(sweepErrorNames))
	i := 0
	for _, n := range c.f.Nodes {
		for _, p := range n.Ports {
			if p == nil || (p.Num == 0 && n.Switch == nil) {
				continue
			}
			i++
			errs = errs[:0]
			for j, name := range sweepErrorNames {
				v := checks.CounterValue{Name: name, Bits: 64}
				if (i+j)%97 == 0 {
					v.Value = uint64(i) + c.grow
				}
				errs = append(errs, v)
			}
			fn(checks.PortReading{Port: p, Errors: errs})
		}
	}
}

// previousSweep saves a sweep of f (sweepReadings, not grown) in a state
// dir and loads it as a later sweep does (snapshot.Load: gate.idx
// mapped); it returns the snapshot and the dir.
func previousSweep(t *testing.T, f *fabric.Fabric, taken time.Time) (*snapshot.Snapshot, string) {
	t.Helper()
	s, err := snapshot.New(f, sweepReadings{f: f}, taken, "sim:pair", "test", true)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := s.Save(dir); err != nil {
		t.Fatal(err)
	}
	prev, err := snapshot.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prev.Close() })
	return prev, dir
}

func fatTree8k(t *testing.T) *fabric.Fabric {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a 9,472-node fabric")
	}
	f, err := topology.FatTree8k().Build()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// checkGrown fails unless r was paired with the saved sweep: each
// nonzero counter grown by grow, each zero one by nothing.
func checkGrown(t *testing.T, r checks.PortReading, grow uint64) {
	t.Helper()
	if !r.Saved {
		t.Fatalf("%s/%d: not paired with the saved sweep", r.Port.Node.Description, r.Port.Num)
	}
	for _, c := range r.Errors {
		want := uint64(0)
		if c.Value != 0 {
			want = grow
		}
		if c.Growth != want || c.Unsaved || c.GrowthUnknown != "" || c.ClearedFrom != 0 {
			t.Fatalf("%s/%d %s=%d: growth %d (unsaved %v, unknown %q, cleared from %d), want %d",
				r.Port.Node.Description, r.Port.Num, c.Name, c.Value, c.Growth, c.Unsaved, c.GrowthUnknown, c.ClearedFrom, want)
		}
	}
}

// TestSweepPairingAllocatesNothingPerPort: a later sweep pairs every
// port's reading with the previous sweep's saved counters on each walk
// of the checks and the report; the saved side is decoded into storage
// reused from port to port. Before, each port's saved counters came as a
// map of their own (and its names as strings), per walk: a whole
// fabric's worth of garbage on each of a sweep's walks (issue 13: a
// later sweep's peak RSS over a first one's).
func TestSweepPairingAllocatesNothingPerPort(t *testing.T) {
	f := fatTree8k(t)
	taken := time.Now().Add(-10 * time.Minute)
	prev, _ := previousSweep(t, f, taken)
	const grow = 5
	paired := SinceSweep(sweepReadings{f: f, grow: grow}, prev, taken.Add(10*time.Minute))
	ports := 0
	paired.Ports(func(r checks.PortReading) {
		ports++
		checkGrown(t, r, grow)
	})
	if ports < 10000 {
		t.Fatalf("%d ports read", ports)
	}
	allocs := testing.AllocsPerRun(2, func() { paired.Ports(func(checks.PortReading) {}) })
	// A walk's own: the decoded name sets (one here), a few buffers.
	if allocs > 32 {
		t.Errorf("a walk pairing %d ports allocated %.0f times (a map per port?)", ports, allocs)
	}
}

// TestSweepPairingReleasesIndexPages: the previous sweep's gate.idx is
// mapped, and every page a walk reads counts in the sweep's RSS while it
// stays mapped; a walk of every port reads nearly all its node, port
// and counter records. The pairing gives the pages back as it goes
// (every few hundred ports: the resident part of the file falls during
// the walk) and when the walk ends. Before, the mapping held every page
// read until the sweep closed the snapshot, after the checks and the
// report: it only grew, and stayed.
func TestSweepPairingReleasesIndexPages(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/smaps")
	}
	f := fatTree8k(t)
	taken := time.Now().Add(-10 * time.Minute)
	prev, dir := previousSweep(t, f, taken)
	idx := filepath.Join(dir, prev.IndexFile)
	st, err := os.Stat(idx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := mappedRSS(t, idx); !ok {
		t.Fatalf("%s is not mapped", idx)
	}
	paired := SinceSweep(sweepReadings{f: f, grow: 1}, prev, taken.Add(10*time.Minute))
	var most, last int64
	ports, falls := 0, 0
	paired.Ports(func(r checks.PortReading) {
		if ports++; ports%100 == 0 {
			kb, _ := mappedRSS(t, idx)
			if kb < last {
				falls++
			}
			most, last = max(most, kb), kb
		}
	})
	after, _ := mappedRSS(t, idx)
	t.Logf("gate.idx %d kB; resident during a walk of %d ports at most %d kB (fell %d times), after it %d kB",
		st.Size()>>10, ports, most, falls, after)
	if most == 0 {
		t.Fatal("the walk read nothing of gate.idx")
	}
	if falls == 0 {
		t.Errorf("the resident part of gate.idx only grew during the walk (to %d kB of %d kB)", most, st.Size()>>10)
	}
	if after > 16 {
		t.Errorf("after the walk %d kB of gate.idx (%d kB) are still resident", after, st.Size()>>10)
	}
}

// mappedRSS is the resident kB of this process's mapping of path (the
// sum over its mappings), and whether it is mapped.
func mappedRSS(t *testing.T, path string) (int64, bool) {
	t.Helper()
	fh, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var kb int64
	in, found := false, false
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			// a mapping's header: range perms offset dev inode [path]
			in = len(fields) >= 6 && fields[5] == path
			found = found || in
			continue
		}
		if in && len(fields) >= 2 && fields[0] == "Rss:" {
			n, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				t.Fatalf("smaps: %q", line)
			}
			kb += n
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return kb, found
}

// TestSweepPairingBuildsNoPortMap: the pairing asks whether each port's
// reading came from its switch's all-ports sum; it finds the port's
// sample by walking the sample in step with the readings. Before, it
// asked perf.Sample.Port, whose first call builds a map by key of every
// port read, held with the sample through the checks and the report:
// the largest thing a later sweep held that a first one did not
// (1.7 MB live on FatTree8k on ibsim). The first walk's allocations are
// counted: they were over 30 bytes a port.
func TestSweepPairingBuildsNoPortMap(t *testing.T) {
	f := build(t, topology.FatTree2{Leaves: 32, Spines: 16, HostsPerLeaf: 32})
	s, err := sim.New(f, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	host := ""
	for _, n := range f.Nodes {
		if n.Switch == nil && host == "" {
			host = n.Description
		}
	}
	sw, err := diagnose.Run(context.Background(), engineAt(t, s, host), diagnose.Options{Routes: true, Counters: true})
	if err != nil {
		t.Fatal(err)
	}
	res, ok := sw.Counters.(*perf.Result)
	if !ok || res.Last == nil {
		t.Fatalf("counters %T, not a perf.Result with a sample", sw.Counters)
	}
	snap, err := snapshot.New(sw.Fabric, sw.Counters, sw.Taken, "sim:test", "test", sw.Complete)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := snap.Save(dir); err != nil {
		t.Fatal(err)
	}
	prev, err := snapshot.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer prev.Close()
	paired := SinceSweep(res, prev, sw.Taken.Add(time.Minute))
	var m0, m1 runtime.MemStats
	ports, saved := 0, 0
	count := func(r checks.PortReading) {
		ports++
		if r.Saved {
			saved++
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&m0)
	paired.Ports(count)
	runtime.ReadMemStats(&m1)
	if ports < 3000 || saved != ports {
		t.Fatalf("%d ports read, %d paired with the saved sweep", ports, saved)
	}
	allocated := m1.TotalAlloc - m0.TotalAlloc
	t.Logf("the first walk of %d ports allocated %d bytes", ports, allocated)
	if allocated > uint64(8*ports) {
		t.Errorf("the first walk of %d ports allocated %d bytes (a map of every port?)", ports, allocated)
	}
}
