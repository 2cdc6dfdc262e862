package fabric

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestJSONLFTForms: a switch's "lft" decodes to the same table, or fails
// with the same error, whether it is a plain hex string (decoded from the
// decoder's bytes) or anything else (through encoding/json as a string).
// The wants are what the string field gave.
func TestJSONLFTForms(t *testing.T) {
	good, err := Marshal(fullFabric())
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(good), `"lft": "`)
	if i < 0 {
		t.Fatal("no lft in the document")
	}
	// Written as the string field wrote it.
	if want := `"lft": "` + lftHex(fullFabric().Nodes[1].Switch.LFT) + `"`; !strings.Contains(string(good), want) {
		t.Fatalf("the table is not written as %s", want)
	}
	j := i + 8 + strings.Index(string(good)[i+8:], `"`) + 1
	for _, c := range []struct{ v, want string }{
		{`"ff01"`, "[255 1]"},
		{`"FF01"`, "[255 1]"},
		{`"0a0B0c"`, "[10 11 12]"},
		{`"\u0030\u0031ff"`, "[1 255]"},
		{`"01\/ff"`, "fabric: unmarshal: nodes[1]: switch lft: encoding/hex: invalid byte: U+002F '/'"},
		{`""`, "[]"},
		{`null`, "no table"},
		{`"zz01"`, "fabric: unmarshal: nodes[1]: switch lft: encoding/hex: invalid byte: U+007A 'z'"},
		{`"0g"`, "fabric: unmarshal: nodes[1]: switch lft: encoding/hex: invalid byte: U+0067 'g'"},
		{`"ff0"`, "fabric: unmarshal: nodes[1]: switch lft: encoding/hex: odd length hex string"},
		{`"f"`, "fabric: unmarshal: nodes[1]: switch lft: encoding/hex: odd length hex string"},
		{`"ff\u00e9"`, "fabric: unmarshal: nodes[1]: switch lft: encoding/hex: invalid byte: U+00C3 'Ã'"},
		{"\"ff\xff\xfe\"", "fabric: unmarshal: nodes[1]: switch lft: encoding/hex: invalid byte: U+00EF 'ï'"},
		{`12`, "fabric: unmarshal: json: cannot unmarshal number into Go struct field jsonSwitch.switch.lft of type string"},
		{`true`, "fabric: unmarshal: json: cannot unmarshal bool into Go struct field jsonSwitch.switch.lft of type string"},
		{`{"a": 1}`, "fabric: unmarshal: json: cannot unmarshal object into Go struct field jsonSwitch.switch.lft of type string"},
		{`[1]`, "fabric: unmarshal: json: cannot unmarshal array into Go struct field jsonSwitch.switch.lft of type string"},
	} {
		f, err := Unmarshal([]byte(string(good)[:i] + `"lft": ` + c.v + string(good)[j:]))
		got := ""
		switch {
		case err != nil:
			got = err.Error()
		case f.Nodes[1].Switch.LFT == nil:
			got = "no table"
		default:
			var es []uint8
			for lid := range f.Nodes[1].Switch.LFT.Len() {
				es = append(es, f.Nodes[1].Switch.LFT.At(uint16(lid)))
			}
			got = fmt.Sprint(es)
		}
		if got != c.want {
			t.Errorf("lft %s: got %s, want %s", c.v, got, c.want)
		}
	}
}

// FuzzJSONLFT holds any "lft" value to what the string field made of it:
// encoding/json's string, then lftFromHex — the same table or the same
// error.
func FuzzJSONLFT(f *testing.F) {
	good, err := Marshal(fullFabric())
	if err != nil {
		f.Fatal(err)
	}
	i := strings.Index(string(good), `"lft": "`)
	j := i + 8 + strings.Index(string(good)[i+8:], `"`) + 1
	for _, v := range []string{`"ff01"`, `"\u0030\u0031ff"`, `""`, `null`, `"ff0"`, `12`, `"a\"b"`, "\"ff\xff\xfe\""} {
		f.Add([]byte(v))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		if !json.Valid(v) {
			return // the decoder's scan, before and after
		}
		doc := string(good)[:i] + `"lft": ` + string(v) + string(good)[j:]
		got, gerr := Unmarshal([]byte(doc))
		var s *string
		if err := json.Unmarshal(v, &s); err != nil {
			if gerr == nil || !strings.Contains(gerr.Error(), "cannot unmarshal") {
				t.Fatalf("lft %s: %v, want a type error", v, gerr)
			}
			return
		}
		if s == nil {
			if gerr != nil || got.Nodes[1].Switch.LFT != nil {
				t.Fatalf("lft null: %v, table %v", gerr, got.Nodes[1].Switch.LFT != nil)
			}
			return
		}
		want, werr := lftFromHex(*s, nil)
		if werr != nil {
			if gerr == nil || gerr.Error() != "fabric: unmarshal: nodes[1]: switch lft: "+werr.Error() {
				t.Fatalf("lft %s: %v, want %v", v, gerr, werr)
			}
			return
		}
		if gerr != nil {
			t.Fatalf("lft %s: %v", v, gerr)
		}
		lft := got.Nodes[1].Switch.LFT
		if lft.Len() != want.Len() {
			t.Fatalf("lft %s: %d entries, want %d", v, lft.Len(), want.Len())
		}
		for l := range want.Len() {
			if lft.At(uint16(l)) != want.At(uint16(l)) {
				t.Fatalf("lft %s: entry %d is %d, want %d", v, l, lft.At(uint16(l)), want.At(uint16(l)))
			}
		}
	})
}
