package cli

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDBCSVSavedFabricRunsSameChecks: a fabric saved from an
// ibdiagnet2.db_csv — discover --format json, a sweep's fabric file —
// keeps what the file recorded of its subnet manager, MasterSMLIDs, VLs,
// M_Key policy, partition enforcement and P_Key tables, so reading the
// saved fabric runs the same sm.*, config.* and partition.* checks with
// the same findings as the db_csv itself. They were dropped on save, and
// the saved fabric skipped those checks ("records no subnet manager").
// The counters and firmware versions (PM_INFO, NODES_INFO) are not in
// ibdoctor's JSON: --no-counters, and firmware.mixed-version is left out
// of the comparison.
func TestDBCSVSavedFabricRunsSameChecks(t *testing.T) {
	dbcsv := corpusPath(t, "quantum2-ndr-ibdiagnet2.db_csv")
	dir := t.TempDir()
	// The same with the file's SM, VLs, M_Key, P_Keys changed: what is
	// saved is what the sweep read, a second master and a port's table
	// included.
	faults := filepath.Join(dir, "faults")
	if err := os.WriteFile(faults, []byte("vls 0x5c25730300e6706e/1 vls=2\npkey 0x5c25730300e6706e/1 keys=0x8002\n"+
		"mkey 0x5c25730300e6706e/1 protect=2 lease=60\nsm 0x5c25730300e6706e/1 state=master priority=3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	type finding struct{ Check, Severity, Title string }
	type doc struct {
		Ran      []string  `json:"checks_run"`
		Findings []finding `json:"findings"`
	}
	check := func(args ...string) doc {
		t.Helper()
		code, out, stderr := run(append([]string{"check", "--no-counters", "--json"}, args...)...)
		var d doc
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("check %v: exit %d: %v: %s", args, code, err, stderr)
		}
		d.Ran = slices.DeleteFunc(d.Ran, func(id string) bool { return id == "firmware.mixed-version" })
		d.Findings = slices.DeleteFunc(d.Findings, func(f finding) bool { return f.Check == "firmware.mixed-version" })
		slices.Sort(d.Ran)
		slices.SortFunc(d.Findings, func(a, b finding) int { return strings.Compare(a.Check+a.Title, b.Check+b.Title) })
		return d
	}
	for _, c := range []struct {
		name  string
		flags []string
		finds []string // checks that must find something
	}{
		{"as recorded", nil, nil},
		{"faults", []string{"--faults", faults}, []string{"sm.multiple-masters", "partition.switch-drops", "partition.isolated", "sm.mkey-policy", "config.vl-mismatch"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sub := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
			saved := map[string]string{}
			code, out, stderr := run(append([]string{"discover", "--sim=" + dbcsv, "--format", "json"}, c.flags...)...)
			if code != 0 {
				t.Fatalf("discover: exit %d: %s", code, stderr)
			}
			saved["discover"] = sub + "-discover.json"
			if err := os.WriteFile(saved["discover"], []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			state := sub + "-state"
			if code, _, stderr := run(append([]string{"sweep", "--sim=" + dbcsv, "--no-counters", "--state-dir", state}, c.flags...)...); code != 0 && code != 1 {
				t.Fatalf("sweep: exit %d: %s", code, stderr)
			}
			var snap struct {
				FabricFile string `json:"fabric_file"`
			}
			b, err := os.ReadFile(filepath.Join(state, "snapshot.json"))
			if err == nil {
				err = json.Unmarshal(b, &snap)
			}
			if err != nil || snap.FabricFile == "" {
				t.Fatalf("snapshot.json: %v (%s)", err, b)
			}
			saved["sweep"] = sub + "-sweep.json"
			gunzipTo(t, filepath.Join(state, snap.FabricFile), saved["sweep"])

			want := check(append([]string{"--sim=" + dbcsv}, c.flags...)...)
			for _, inputs := range notRecordedChecks {
				for _, id := range inputs {
					if id != "sm.stalled" && !slices.Contains(want.Ran, id) {
						t.Fatalf("%s did not run on the db_csv itself", id)
					}
				}
			}
			for _, id := range c.finds {
				if !slices.ContainsFunc(want.Findings, func(f finding) bool { return f.Check == id }) {
					t.Fatalf("the faults give no %s on the db_csv: %v", id, want.Findings)
				}
			}
			for _, how := range []string{"discover", "sweep"} {
				got := check("--sim=" + saved[how])
				if !slices.Equal(got.Ran, want.Ran) {
					var missing []string
					for _, id := range want.Ran {
						if !slices.Contains(got.Ran, id) {
							missing = append(missing, id)
						}
					}
					t.Errorf("%s: checks run on the saved fabric differ from the db_csv's: not run %v (ran %d, want %d)", how, missing, len(got.Ran), len(want.Ran))
				}
				if !slices.Equal(got.Findings, want.Findings) {
					t.Errorf("%s: findings on the saved fabric:\n%v\nwant the db_csv's:\n%v", how, got.Findings, want.Findings)
				}
			}
		})
	}
}

func gunzipTo(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	z, err := gzip.NewReader(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if _, err := io.Copy(out, z); err != nil {
		t.Fatal(err)
	}
}
