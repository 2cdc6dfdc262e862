package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFlagRanges: every numeric flag is range-checked before anything
// runs (issue 17 item 10), with one line naming the flag and the range.
// --sim names a file that does not exist: had the command started, the
// error would be about the file (no sweep runs here).
func TestFlagRanges(t *testing.T) {
	missing := "--sim=" + filepath.Join(t.TempDir(), "no-such-fabric.txt")
	badThr := func(line string) string { return writeFile(t, "t.thresholds", line+"\n") }
	cases := []struct {
		args []string
		want []string // all in the one line of stderr
	}{
		{[]string{"check", "-o", "0"}, []string{"-o/--outstanding 0", "from 1 to 4096"}},
		{[]string{"check", "-o", "-5"}, []string{"-o/--outstanding -5", "from 1 to 4096"}},
		{[]string{"discover", "--outstanding", "100000"}, []string{"--outstanding 100000", "from 1 to 4096"}},
		{[]string{"check", "--timeout", "0"}, []string{"-t/--timeout 0s", "from 1ms to 5m0s"}},
		{[]string{"links", "-t", "-1s"}, []string{"--timeout -1s"}},
		{[]string{"check", "--retries", "-1"}, []string{"--retries -1", "from 0 to 20"}},
		{[]string{"counters", "--retries", "1000000"}, []string{"--retries 1000000", "from 0 to 20"}},
		{[]string{"check", "--per-node", "0"}, []string{"--per-node 0", "from 1 to 256"}},
		{[]string{"check", "--interval", "-30s"}, []string{"--interval -30s", "from 0s to 24h0m0s"}},
		{[]string{"sweep", "--interval", "-1s", "--state-dir", t.TempDir()}, []string{"--interval -1s"}},
		{[]string{"counters", "--interval", "48h"}, []string{"--interval 48h0m0s"}},
		{[]string{"check", "--oversubscription", "NaN"}, []string{"--oversubscription NaN", "above 0"}},
		{[]string{"check", "--oversubscription", "0"}, []string{"--oversubscription 0", "above 0"}},
		{[]string{"check", "--imbalance", "+Inf"}, []string{"--imbalance +Inf", "from 1 to 1000"}},
		{[]string{"check", "--imbalance", "0.5"}, []string{"--imbalance 0.5"}},
		{[]string{"check", "--sl", "16"}, []string{"--sl 16", "from 0 to 15"}},
		{[]string{"check", "--pkey-index", "40000"}, []string{"--pkey-index 40000", "from 0 to 32767"}},
		{[]string{"check", "--detail", "-1"}, []string{"--detail -1"}},
		{[]string{"discover", "--max-hops", "64"}, []string{"--max-hops 64", "from 0 to 63"}},
		{[]string{"top", "--budget", "-1", "--once"}, []string{"--budget -1"}},
		{[]string{"check", "-P", "255"}, []string{"-P/--port 255", "from 0 to 254"}},
		{[]string{"check", "--sim-service-time", "-1us"}, []string{"--sim-service-time -1µs"}},
		{[]string{"sweep", "--lock-wait", "-1s", "--state-dir", t.TempDir()}, []string{"--lock-wait -1s"}},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, out, stderr := run(append(c.args, missing)...)
			if code != ExitUndecided {
				t.Fatalf("exit %d, want 2\n%s%s", code, out, stderr)
			}
			if strings.Count(stderr, "\n") != 1 || strings.Contains(stderr, "no-such-fabric") {
				t.Errorf("want one line about the flag, not the fabric:\n%s", stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}

	// Values that parse but are no number, in files and lists.
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"check", "--thresholds", badThr("ber=NaN")}, []string{"line 1", "ber", "from 0 to 1"}},
		{[]string{"check", "--thresholds", badThr("utilization=Inf")}, []string{"line 1", "utilization", "from 0 to 1"}},
		{[]string{"check", "--thresholds", badThr("xmitwait.warn=-0.1")}, []string{"xmitwait.warn"}},
		// The rate typo: HDX is no speed (it was read as SDR).
		{[]string{"check", "--expect-rate", "4xHDX"}, []string{"--expect-rate", `"4xHDX"`, "HDR"}},
		{[]string{"links", "--expect-rate", "4xHDX"}, []string{"--expect-rate", `"4xHDX"`}},
		{[]string{"gate", "--nodes", ",,,"}, []string{"--nodes", `",,,"`, "names no host"}},
		{[]string{"check", "--sim", "--faults", writeFile(t, "f.faults", "flaky leaf01 answer=NaN\n")}, []string{"line 1", "answer"}},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			args := c.args
			if args[0] == "gate" {
				args = append(args, "--state-dir", t.TempDir(), "--sim")
			} else {
				args = append(args, "--sim")
			}
			code, out, stderr := run(args...)
			if code != ExitUndecided {
				t.Fatalf("exit %d, want 2\n%s%s", code, out, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}

// TestWriteErrorExits2: output that cannot be written (stdout on a full
// disk) is no answer: exit 2 with a message, never 0.
func TestWriteErrorExits2(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer full.Close()
	for _, args := range [][]string{
		{"check", "--sim"},
		{"check", "--sim", "--json"},
		{"discover", "--sim"},
		{"links", "--sim"},
		{"version"},
	} {
		var errb strings.Builder
		code := Main(args, strings.NewReader(""), full, &errb)
		if code != ExitUndecided || !strings.Contains(errb.String(), "no space left") {
			t.Errorf("%v to /dev/full: exit %d, stderr %q; want 2 naming the write error", args, code, errb.String())
		}
	}
}
