package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// notRecordedChecks are the checks whose input a fabric file may not
// record, by what they read: on a --sim file without it they judged the
// simulator's stand-in (a healthy default SM, MTU, VLs, P_Keys), and "no
// finding" read as "checked and healthy".
var notRecordedChecks = map[string][]string{
	"subnet manager": {"sm.no-master", "sm.multiple-masters", "sm.priority", "sm.stale-master-lid", "sm.stalled"},
	"M_Key":          {"sm.mkey-policy"},
	"MTU":            {"config.mtu-mismatch"},
	"VL":             {"config.vl-mismatch"},
	"P_Key":          {"partition.isolated", "partition.job-mismatch", "partition.switch-drops"},
}

type fileprovDoc struct {
	Ran     []string `json:"checks_run"`
	Skipped []struct {
		Check  string `json:"check"`
		Reason string `json:"reason"`
	} `json:"checks_skipped"`
}

func (d fileprovDoc) reason(id string) (string, bool) {
	for _, s := range d.Skipped {
		if s.Check == id {
			return s.Reason, true
		}
	}
	return "", false
}

func fileprovCheck(t *testing.T, args ...string) fileprovDoc {
	t.Helper()
	code, out, stderr := run(append([]string{"check", "--json"}, args...)...)
	var d fileprovDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("check %v: exit %d: %v: %s", args, code, err, stderr)
	}
	return d
}

// TestFileRecordsCheckInputs: for each fabric file format, a check whose
// input the format does not record is skipped with "FILE (FORMAT) records
// no X", and a check whose input the file carried runs on it: an
// ibdiagnet2.db_csv's PORTS give NMTU and MTUCap, VLCap and OpVLs, the
// M_Key bits, MSMLID and partition enforcement, its SM_INFO the subnet
// managers and its PKEY the P_Key tables. sm.stalled needs two SMInfo
// readings: a file records one.
func TestFileRecordsCheckInputs(t *testing.T) {
	all := []string{"MTU", "subnet manager", "M_Key", "VL", "P_Key"}
	cases := []struct {
		file, format string
		runs         []string // inputs the file carries: their checks run
	}{
		{"dgx-ndr-2025.ibnetdiscover", "ibnetdiscover", nil},
		{"treydock-hdr.ibnetdiscover-p", "ibnetdiscover -p", nil},
		{"quantum2-ndr-ibdiagnet2.ibnetdiscover", "ibdiagnet2.ibnetdiscover", nil},
		{"quantum2-ndr-ibdiagnet2.lst", "ibdiagnet2.lst", nil},
		{"qnib-netlist.clos5", "ibsim net file", nil},
		{"quantum2-ndr-ibdiagnet2.db_csv", "ibdiagnet2.db_csv", all},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			d := fileprovCheck(t, "--sim="+corpusPath(t, c.file))
			prefix := c.file + " (" + c.format + ")"
			for what, ids := range notRecordedChecks {
				for _, id := range ids {
					why, skipped := d.reason(id)
					switch {
					case id == "sm.stalled" && slices.Contains(c.runs, what):
						if !skipped || !strings.HasPrefix(why, prefix) || !strings.Contains(why, "one SMInfo reading") {
							t.Errorf("%s: skipped %v with %q, want it skipped: the file records one SMInfo reading", id, skipped, why)
						}
					case slices.Contains(c.runs, what):
						if skipped || !slices.Contains(d.Ran, id) {
							t.Errorf("%s: the file records its %s, so it must run; skipped: %q", id, what, why)
						}
					case !skipped:
						t.Errorf("%s ran on the simulator's stand-in %s: %s records none", id, what, c.format)
					case !strings.HasPrefix(why, prefix) || !strings.Contains(why, what):
						t.Errorf("%s skipped with %q, want it to start %q and name the %s", id, why, prefix, what)
					}
				}
			}
		})
	}
}

// TestFileStandInsNotSaved: a fabric discovered over a file that records
// no MTU is saved without the simulator's stand-in NeighborMTU (it wrote
// 4096 on every port), so that file read again is not judged on it.
func TestFileStandInsNotSaved(t *testing.T) {
	topo := corpusPath(t, "dgx-ndr-2025.ibnetdiscover")
	code, out, stderr := run("discover", "--sim="+topo, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := strings.Count(out, `"neighbor_mtu"`) + strings.Count(out, `"mtu_cap"`); n > 0 {
		t.Errorf("%d ports saved with the simulator's MTU, which the file does not record", n)
	}
	// Nor its SM, VLs, M_Key policy or P_Keys (a db_csv's are kept:
	// TestDBCSVSavedFabricRunsSameChecks).
	for _, field := range []string{`"recorded"`, `"sms"`, `"master_sm_lid"`, `"vl_cap"`, `"oper_vls"`, `"mkey_protect"`, `"pkey_enforce"`, `"pkeys"`} {
		if n := strings.Count(out, field); n > 0 {
			t.Errorf("%s saved %d times: the simulator's stand-in, which the file does not record", field, n)
		}
	}
	var doc struct {
		Nodes []struct {
			Ports []struct {
				Speed *struct {
					Enabled   string `json:"enabled"`
					Supported string `json:"supported"`
				} `json:"speed"`
				Width *struct {
					Enabled   string `json:"enabled"`
					Supported string `json:"supported"`
				} `json:"width"`
			} `json:"ports"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	speeds := 0
	for _, n := range doc.Nodes {
		for _, p := range n.Ports {
			if p.Speed != nil && (p.Speed.Supported != "" || p.Speed.Enabled != "") {
				speeds++
			}
		}
	}
	if speeds > 0 {
		t.Errorf("%d ports saved with the simulator's supported or enabled speeds, which the file does not record", speeds)
	}
	widths := 0
	for _, n := range doc.Nodes {
		for _, p := range n.Ports {
			if p.Width != nil && (p.Width.Supported != "" || p.Width.Enabled != "") {
				widths++
			}
		}
	}
	if widths > 0 {
		t.Errorf("%d ports saved with the simulator's supported or enabled widths, which the file does not record", widths)
	}
	saved := filepath.Join(t.TempDir(), "dgx.json")
	if err := os.WriteFile(saved, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	d := fileprovCheck(t, "--sim="+saved)
	if why, skipped := d.reason("config.mtu-mismatch"); !skipped || !strings.HasPrefix(why, "dgx.json (ibdoctor JSON) records no MTU") {
		t.Errorf("config.mtu-mismatch on the saved file: skipped %v %q", skipped, why)
	}
}

// TestFilePlantedInputsRun: --faults that plant an input the file does
// not record (an mtu, a second master SM) make it a what-if: those checks
// run on the planted data, and find what was planted; the others stay
// skipped.
func TestFilePlantedInputsRun(t *testing.T) {
	topo := corpusPath(t, "dgx-ndr-2025.ibnetdiscover")
	faults := filepath.Join(t.TempDir(), "faults.txt")
	if err := os.WriteFile(faults, []byte("mtu \"a08-p1-dgx-04-c17 mlx5_5/1\" mtu=1024\nsm \"a08-p1-dgx-04-c16 mlx5_5/1\" state=master\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run("check", "--json", "--sim="+topo, "--faults="+faults)
	var d struct {
		fileprovDoc
		Findings []struct {
			Check string `json:"check"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("exit %d: %v: %s", code, err, stderr)
	}
	for _, id := range []string{"config.mtu-mismatch", "sm.multiple-masters", "sm.priority", "sm.stale-master-lid", "sm.no-master"} {
		if !slices.Contains(d.Ran, id) {
			why, _ := d.reason(id)
			t.Errorf("%s not run on what --faults planted: %s", id, why)
		}
	}
	for _, id := range []string{"config.vl-mismatch", "sm.mkey-policy", "partition.isolated"} {
		if _, skipped := d.reason(id); !skipped {
			t.Errorf("%s ran: nothing planted it, the file records none", id)
		}
	}
	found := map[string]bool{}
	for _, f := range d.Findings {
		found[f.Check] = true
	}
	if !found["config.mtu-mismatch"] || !found["sm.multiple-masters"] {
		t.Errorf("planted faults not found: %v", found)
	}
}
