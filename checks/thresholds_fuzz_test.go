package checks

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseThresholds: a thresholds file either parses into levels the
// checks can use (shares within 0..1, info not above warn) or is refused
// with an error naming its line.
func FuzzParseThresholds(f *testing.F) {
	for _, s := range []string{
		"# ours\nSymbolErrorCounter=100\ndelta.LinkDownedCounter = 0\nber=1e-15\n",
		"xmitwait.info=0.6\nxmitwait.warn=0.2\n",
		"since.PortRcvErrors=7\ndelta.PortRcvErrors=1000\n",
		"xmitwait.absolute=0x10\nutilization=1\n",
		"PortXmitWait=5\nBogus=1\n",
		"ber=1e-12\n\x87\x8f\x12!n\xaa\x00\x01",
		"\x87\x8f\x12!n\xaa\xc3\x28=\xfe\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		th, err := ParseThresholds(strings.NewReader(in))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "thresholds line ") && !strings.HasPrefix(err.Error(), "reading thresholds") {
				t.Fatalf("error does not name the line: %v", err)
			}
			if !utf8.ValidString(err.Error()) {
				t.Fatalf("error echoes bytes that are no text: %q", err)
			}
			return
		}
		for name, v := range map[string]float64{"ber": th.BER, "xmitwait.warn": th.XmitWaitWarn, "xmitwait.info": th.XmitWaitInfo, "utilization": th.Utilization} {
			if !(v >= 0 && v <= 1) {
				t.Fatalf("%s = %v accepted", name, v)
			}
		}
		if th.XmitWaitInfo > th.XmitWaitWarn {
			t.Fatalf("xmitwait.info %v above xmitwait.warn %v accepted", th.XmitWaitInfo, th.XmitWaitWarn)
		}
	})
}
