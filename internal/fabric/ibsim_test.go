package fabric

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const umad2sim = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"

// needTools skips (or, under CI=true, fails) when the simulator tools are
// missing.
func needTools(t *testing.T) {
	t.Helper()
	var missing []string
	for _, tool := range []string{"ibsim", "ibnetdiscover"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if _, err := os.Stat(umad2sim); err != nil {
		missing = append(missing, umad2sim)
	}
	if len(missing) == 0 {
		return
	}
	msg := fmt.Sprintf("missing %s (Debian packages ibsim-utils, libumad2sim0, infiniband-diags)", strings.Join(missing, ", "))
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

var simSeq atomic.Int64

// simDiscover loads netText into a fresh ibsim (console on a pipe held
// open, unique socket name), runs the real ibnetdiscover against it from
// node simHost, stops ibsim and returns ibnetdiscover's output.
func simDiscover(t *testing.T, netText, simHost string) string {
	t.Helper()
	needTools(t)
	dir := t.TempDir()
	net := filepath.Join(dir, "fabric.net")
	if err := os.WriteFile(net, []byte(netText), 0o644); err != nil {
		t.Fatal(err)
	}
	sock := fmt.Sprintf("ibdfab%d_%d", os.Getpid(), simSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	console, consoleW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer consoleW.Close()
	var simOut bytes.Buffer
	sim := exec.CommandContext(ctx, "ibsim", "-s", net)
	sim.Dir = dir
	sim.Env = append(os.Environ(), "IBSIM_SOCKNAME="+sock)
	sim.Stdin, sim.Stdout, sim.Stderr = console, &simOut, &simOut
	if err := sim.Start(); err != nil {
		t.Fatal(err)
	}
	console.Close()
	exited := make(chan error, 1)
	go func() { exited <- sim.Wait() }()
	defer func() {
		_ = sim.Process.Kill()
		<-exited
	}()
	// Ready when ibsim's control socket exists.
	for ready := false; !ready; {
		b, _ := os.ReadFile("/proc/net/unix")
		ready = bytes.Contains(b, []byte("@"+sock+":ctl@"))
		if ready {
			break
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("ibsim exited (%v) loading the net file:\n%s", err, simOut.String())
		case <-ctx.Done():
			t.Fatalf("ibsim did not come up:\n%s", simOut.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	disc := exec.CommandContext(ctx, "ibnetdiscover")
	disc.Dir = dir // libumad2sim writes ./sys-<pid>/ here
	disc.Env = append(os.Environ(), "IBSIM_SOCKNAME="+sock, "LD_PRELOAD="+umad2sim, "SIM_HOST="+simHost)
	var stderr bytes.Buffer
	disc.Stderr = &stderr
	out, err := disc.Output()
	if err != nil {
		t.Fatalf("ibnetdiscover: %v\n%s\nibsim:\n%s", err, stderr.String(), simOut.String())
	}
	return string(out)
}

// The net file ibsim was given for the fixture, read by ParseNetFile,
// predicts what the real tools saw: same nodes, GUIDs, cables, rates.
func TestParseNetFileMatchesIBSim(t *testing.T) {
	for _, name := range []string{"hdr", "qdr"} {
		b, err := os.ReadFile(filepath.Join(fixtureDir, name+".net"))
		if err != nil {
			t.Fatal(err)
		}
		f, ids, err := ParseNetFile(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s.net: %v", name, err)
		}
		if ids["gpu001"] == nil && ids["node01"] == nil {
			t.Fatalf("%s.net: ids = %v", name, ids)
		}
		seen := parseFixture(t, name+".txt")
		diffText(t, name, topo(seen), topo(f))
	}
}

// A fabric written by WriteNetFile and loaded by the real ibsim is
// discovered by the real ibnetdiscover as the same fabric, degraded and
// FDR10 links included.
func TestWriteNetFileLoadsInIBSim(t *testing.T) {
	for _, c := range []struct{ fixture, host string }{{"hdr.txt", "H-043f720300c10000"}, {"qdr.txt", "H-0002c90300500000"}} {
		want := parseFixture(t, c.fixture)
		var net bytes.Buffer
		if err := WriteNetFile(&net, want, NetFileOptions{}); err != nil {
			t.Fatal(err)
		}
		// Our own reader predicts the same.
		pred, _, err := ParseNetFile(bytes.NewReader(net.Bytes()))
		if err != nil {
			t.Fatalf("ParseNetFile of our output: %v\n%s", err, net.String())
		}
		diffText(t, c.fixture+" predicted", topo(want), topo(pred))
		out := simDiscover(t, net.String(), c.host)
		got, err := ParseIBNetDiscover(strings.NewReader(out))
		if err != nil {
			t.Fatalf("parsing ibnetdiscover output: %v\n%s", err, out)
		}
		diffText(t, c.fixture+" via ibsim", topo(want), topo(got))
	}
}

// Our ibnetdiscover writer's output is itself a net file ibsim loads.
func TestWriteIBNetDiscoverLoadsInIBSim(t *testing.T) {
	want := parseFixture(t, "hdr.txt")
	var txt bytes.Buffer
	if err := WriteIBNetDiscover(&txt, want); err != nil {
		t.Fatal(err)
	}
	out := simDiscover(t, txt.String(), "H-043f720300c10000")
	got, err := ParseIBNetDiscover(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	diffText(t, "via ibsim", topo(want), topo(got))
}
