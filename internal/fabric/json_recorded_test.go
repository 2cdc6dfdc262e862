package fabric

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/mad"
)

// fullFabricRecorded is fullFabric with every recorded input: a master
// and a standby SM, MasterSMLIDs, VLs, M_Key policy, partition
// enforcement and P_Key tables (a sparse one, a limited member).
func fullFabricRecorded() *Fabric {
	f := fullFabric()
	ca, sw := f.Nodes[0], f.Nodes[1]
	f.Recorded = Recorded{SMInfo: true, VLs: true, MKey: true, PKeys: true}
	f.SMs = []RecordedSM{
		{Port: sw.Ports[0], GUID: sw.GUID, State: mad.SMMaster, Priority: 12, ActCount: 4202301},
		{Port: ca.Ports[1], GUID: 0x043f720300c10000, State: mad.SMStandby, Priority: 3, ActCount: 7},
	}
	for _, p := range []*Port{sw.Ports[0], ca.Ports[1]} {
		p.MasterSMLID = 2
	}
	ca.Ports[1].VLCap, ca.Ports[1].OperVLs = 3, 3
	sw.Ports[1].VLCap, sw.Ports[1].OperVLs = 4, 3
	sw.Ports[0].MKeyProtect, sw.Ports[0].MKeyLease = 1, 60
	sw.Ports[1].PKeyEnforce = PKeyEnforceIn | PKeyEnforceOut
	sw.Ports[3].PKeyEnforce = PKeyEnforceOut
	f.PKeys = map[*Port][]mad.PKey{
		ca.Ports[1]: {0xffff, 0, 0x0005},
		sw.Ports[1]: {0xffff},
	}
	return f
}

// TestJSONRecordedGolden: what a source recorded beyond the topology is
// written (testdata/full-recorded.json) and read back exactly.
func TestJSONRecordedGolden(t *testing.T) {
	f := fullFabricRecorded()
	b, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "full-recorded.json")
	if *update {
		if err := os.WriteFile(golden, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	diffText(t, "golden", string(want), string(b))
	g, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	diffText(t, "round trip", dump(f), dump(g))
	if b2, err := Marshal(g); err != nil || !bytes.Equal(b, b2) {
		t.Fatalf("second Marshal differs from the first (%v)", err)
	}
}

// TestJSONRecordedDBCSV: a db_csv's SM_INFO, PKEY and PORTS' MSMLID,
// VLCap/OpVLs, M_Key and enforcement columns survive ibdoctor's JSON
// (they were dropped, so a saved fabric read again lacked them).
func TestJSONRecordedDBCSV(t *testing.T) {
	for _, name := range []string{"smpkey.db_csv", "quantum2-ndr-ibdiagnet2.db_csv"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", name)
			if !strings.HasPrefix(name, "smpkey") {
				path = corpusFile(t, name)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, _, err := ParseDBCSV(data)
			if err != nil {
				t.Fatal(err)
			}
			if f.Recorded == (Recorded{}) || len(f.PKeys) == 0 {
				t.Fatalf("%s records nothing beyond the topology: %+v", name, f.Recorded)
			}
			b, err := MarshalWith(f, MarshalOptions{})
			if err != nil {
				t.Fatal(err)
			}
			g, err := Unmarshal(b)
			if err != nil {
				t.Fatal(err)
			}
			diffText(t, name, dump(f), dump(g))
		})
	}
}

// TestJSONRecordedNotInvented: a fabric whose source recorded none of
// these inputs (the simulator's stand-ins fill the ports of a sweep over
// an ibnetdiscover file) writes none of their fields: fullFabric's
// document is unchanged with them set, and so is the fabric read back.
func TestJSONRecordedNotInvented(t *testing.T) {
	f := fullFabricRecorded()
	f.Recorded, f.SMs, f.PKeys = Recorded{}, nil, nil
	b, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "full.json"))
	if err != nil {
		t.Fatal(err)
	}
	diffText(t, "stand-ins left out", string(want), string(b))
	// One input recorded: only its fields.
	f = fullFabricRecorded()
	f.Recorded, f.SMs, f.PKeys = Recorded{VLs: true}, nil, nil
	b, err = Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"sms"`, `"master_sm_lid"`, `"mkey_protect"`, `"mkey_lease"`, `"pkey_enforce"`, `"pkeys"`} {
		if bytes.Contains(b, []byte(field)) {
			t.Errorf("%s written for an input the source did not record", field)
		}
	}
	if !bytes.Contains(b, []byte(`"vl_cap": 4`)) || !bytes.Contains(b, []byte(`"recorded": [
    "vls"
  ]`)) && !bytes.Contains(b, []byte(`"recorded": ["vls"]`)) {
		t.Errorf("VLs recorded but not written:\n%s", b)
	}
}

func TestJSONRecordedErrors(t *testing.T) {
	good, err := Marshal(fullFabricRecorded())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, old, new, want string }{
		{"unlisted input", `"vls",`, ``, `gives vl_cap, oper_vls, but "recorded" does not list "vls"`},
		{"unknown input", `"mkey",`, `"mkeys",`, `recorded "mkeys"`},
		{"sms without sm_info", `"sm_info",`, ``, `gives master_sm_lid`},
		{"vl range", `"vl_cap": 4`, `"vl_cap": 16`, "vl_cap 16"},
		{"enforce", `"in",`, `"inbound",`, `pkey_enforce "inbound"`},
		{"pkey", `"0x0005"`, `"0x10005"`, `pkeys[2] "0x10005"`},
		{"sm state", `"state": "Standby"`, `"state": "Sleeping"`, `state "Sleeping"`},
		{"sm port", `"port": 0,
      "sm_guid"`, `"port": 1,
      "sm_guid"`, "no port 1"},
		{"sm guid", `"sm_guid": "0xb83fd20300a10000"`, `"sm_guid": "b8"`, "sm_guid"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := strings.Replace(string(good), c.old, c.new, 1)
			if in == string(good) {
				t.Fatalf("test edit %q not found", c.old)
			}
			_, err := Unmarshal([]byte(in))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}
