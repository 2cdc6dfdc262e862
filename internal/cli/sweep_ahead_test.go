package cli

import (
	"bytes"
	"compress/gzip"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/snapshot"
)

var updateSweepState = flag.Bool("update-sweep-state", false, "rewrite testdata/sweepstate from the sweeps' fabric files")

// TestSweepFabricFileBytes: the fabric file a sweep saves, written while
// the checks run, is byte for byte the one the sweep wrote after them
// (the goldens are the files the sweep wrote before it wrote ahead,
// 733c71b): on the sample, the sample with faults, the sample as
// ibnetdiscover text, whose supported speeds are the simulator's
// stand-ins (left out of the file), and an ibdiagnet dump whose recorded
// SMs and P_Key tables the file keeps. The gzip stream is compared whole:
// it is what baseline.json.gz copies.
func TestSweepFabricFileBytes(t *testing.T) {
	code, text, stderr := run("discover", "--sim", "--format", "ibnetdiscover")
	if code != 0 {
		t.Fatalf("discover: exit %d: %s", code, stderr)
	}
	cases := []struct {
		name string
		args []string
	}{
		{"sample", []string{"--sim"}},
		{"sample-fault", []string{"--sim", "--faults", writeFile(t, "s.faults", "down leaf01/1\ndegrade \"gpu002 mlx5_3\"/1 width=1x\n")}},
		{"ibnetdiscover", []string{"--sim=" + writeFile(t, "sample.topo", text)}},
		{"dbcsv", []string{"--sim=../fabric/testdata/smpkey.db_csv"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			state := filepath.Join(dir, "state")
			args := append([]string{"sweep", "--state-dir", state, "--out", filepath.Join(dir, "r.json")}, c.args...)
			if code, _, stderr := run(args...); code == ExitUndecided {
				t.Fatalf("sweep: exit %d: %s", code, stderr)
			}
			s, err := snapshot.Load(state)
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			gz, err := os.ReadFile(filepath.Join(state, s.FabricFile))
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "sweepstate", c.name+".json.gz")
			if *updateSweepState {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, gz, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(gz, want) {
				got, want := gunzip(t, gz), gunzip(t, want)
				t.Errorf("%s is not %s: %d bytes of JSON against %d, first difference at byte %d", s.FabricFile, golden, len(got), len(want), firstDiff(got, want))
			}
		})
	}
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	z, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
