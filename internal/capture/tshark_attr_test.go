package capture

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// attrMAD is one SMP built with an attribute's own encoder, and the
// tshark fields that must show the encoded values.
type attrMAD struct {
	name   string
	attr   mad.Attribute
	mod    uint32
	fields map[string]uint64
}

// TestTsharkAttributeEncoders records SMP responses whose data areas come
// from the mad package's encoders (unlike the capture test set, which is
// built from raw bytes) and checks tshark decodes every field to the
// value encoded: an independent reading of each attribute's layout.
func TestTsharkAttributeEncoders(t *testing.T) {
	tshark := needTool(t, "tshark", "tshark")
	mads := []attrMAD{
		{"SMInfo", &mad.SMInfo{GUID: 0x0002c90300001112, SMKey: 0x0123456789abcdef, ActCount: 0x00c0ffee, Priority: 14, State: mad.SMStandby}, 0,
			map[string]uint64{
				"infiniband.sminfo.guid":     0x0002c90300001112,
				"infiniband.sminfo.sm_key":   0x0123456789abcdef,
				"infiniband.sminfo.actcount": 0x00c0ffee,
				"infiniband.sminfo.priority": 14,
				"infiniband.sminfo.smstate":  uint64(mad.SMStandby),
			}},
		// tshark shows the first entry's fields (occurrence=f): its
		// membership bit and partition, split where the encoder puts them.
		{"P_KeyTable", &mad.PKeyTable{Keys: [mad.PKeyBlockSize]mad.PKey{0x8abc, 0x0002}}, 0,
			map[string]uint64{
				"infiniband.p_keytable.membershiptype": 1,
				"infiniband.p_keytable.p_keybase":      0x0abc,
			}},
		// SL0 is the first byte's high nibble, SL1 its low one: tshark
		// shows the first byte's (occurrence=f), split where the
		// encoder puts them.
		{"SLtoVLMappingTable", &mad.SLtoVLTable{VL: [16]uint8{5, 10, 1, 2, 3, 4, 6, 7, 8, 9, 11, 12, 13, 14, 0, 15}}, mad.SLtoVLMod(3, 7),
			map[string]uint64{
				"infiniband.sltovlmappingtable.sltovlhighbits": 5,
				"infiniband.sltovlmappingtable.sltovllowbits":  10,
			}},
	}
	var fields []string
	for _, m := range mads {
		for f := range m.fields {
			fields = append(fields, f)
		}
	}
	fields = append(fields, "_ws.malformed", "_ws.expert")
	var buf bytes.Buffer
	w, err := NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range mads {
		s := mad.NewLIDGet(m.attr.AttributeID(), m.mod)
		s.Method = mad.MethodGetResp
		s.TID = 0x0000abcd00000100 + uint64(i)
		if err := m.attr.MarshalAttr(s.Data[:]); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
		if err := w.Record(Received, transport.SMPAt(piLID), testLocal, s.Marshal(), testEpoch.Add(time.Duration(i)*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "attrs.pcap")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-n", "-r", path, "-T", "fields", "-E", "separator=/t", "-E", "occurrence=f"}
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	cmd := exec.Command(tshark, args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != len(mads) {
		t.Fatalf("tshark printed %d packets, want %d:\n%s", len(lines), len(mads), out)
	}
	for i, line := range lines {
		cols := strings.Split(line, "\t")
		got := map[string]string{}
		for j, c := range cols {
			got[fields[j]] = c
		}
		for _, f := range []string{"_ws.malformed", "_ws.expert"} {
			if got[f] != "" {
				t.Errorf("%s: tshark shows %s = %q", mads[i].name, f, got[f])
			}
		}
		for f, want := range mads[i].fields {
			v, err := strconv.ParseUint(got[f], 0, 64)
			if err != nil || v != want {
				t.Errorf("%s: tshark %s = %q, encoded %#x", mads[i].name, f, got[f], want)
			}
		}
	}
}
