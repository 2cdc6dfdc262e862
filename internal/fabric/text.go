package fabric

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ibdoctor/ibdoctor/mad"
)

// Helpers shared by the ibnetdiscover and ibsim net-file codecs.

// compactRate prints a width and speed the way ibnetdiscover does in its
// port comments: "4xNDR", "1xQDR", "4xFDR10"; unknown parts print as
// "??" (width) and "???" (speed) like the real tool.
func compactRate(w mad.Width, s mad.Speed) string { return string(appendCompactRate(nil, w, s)) }

func appendCompactRate(b []byte, w mad.Width, s mad.Speed) []byte {
	if n := w.Lanes(); n != 0 {
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(b, 'x')
	} else {
		b = append(b, "??"...)
	}
	if s != 0 && s&(s-1) == 0 && s.DataGbps() != 0 {
		return append(b, s.String()...)
	}
	return append(b, "???"...)
}

// parseCompactRate parses "4xHDR", "12xQDR", "1xFDR10"; "??" and "???"
// parts (ibnetdiscover's unknown values) give zero without error.
func parseCompactRate(tok string) (mad.Width, mad.Speed, error) {
	i := strings.IndexAny(tok, "xX")
	if i < 0 {
		return 0, 0, fmt.Errorf("rate %q: want <lanes>x<speed>, e.g. 4xHDR", tok)
	}
	var w mad.Width
	if ws := tok[:i]; ws != "??" {
		n, err := strconv.Atoi(ws)
		if err != nil {
			return 0, 0, fmt.Errorf("rate %q: width %q is not a lane count", tok, ws)
		}
		w = widthFromLanes(n)
		if w == 0 {
			return 0, 0, fmt.Errorf("rate %q: %d lanes is not a link width (1, 2, 4, 8, 12)", tok, n)
		}
	}
	var s mad.Speed
	if ss := tok[i+1:]; ss != "???" {
		var err error
		if s, err = mad.ParseSpeed(ss); err != nil {
			return 0, 0, fmt.Errorf("rate %q: %w", tok, err)
		}
	}
	return w, s, nil
}

func widthFromLanes(n int) mad.Width {
	switch n {
	case 1:
		return mad.Width1X
	case 2:
		return mad.Width2X
	case 4:
		return mad.Width4X
	case 8:
		return mad.Width8X
	case 12:
		return mad.Width12X
	}
	return 0
}

// parseUint parses a C-style number ("0x2c9", "17", "0") like strtoul
// with base 0 would, but strictly: the whole string must be the number.
func parseUint(s string, bits int) (uint64, error) {
	s = strings.TrimSpace(s)
	if len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X") {
		return strconv.ParseUint(s[2:], 16, bits)
	}
	return strconv.ParseUint(s, 10, bits)
}

// parseHex parses bare hex digits ("43f720300c30001") as ibnetdiscover
// prints port GUIDs in parentheses; a 0x prefix is allowed.
func parseHex(s string) (uint64, error) {
	s = strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(s), "0x"), "0X")
	return strconv.ParseUint(s, 16, 64)
}

// quoted returns the text between the first double quote in s and the
// next one, and what follows the closing quote.
func quoted(s string) (val, rest string, ok bool) {
	i := strings.IndexByte(s, '"')
	if i < 0 {
		return "", s, false
	}
	j := strings.IndexByte(s[i+1:], '"')
	if j < 0 {
		return "", s, false
	}
	return s[i+1 : i+1+j], s[i+1+j+1:], true
}

// bracketNum parses "[12]" at the start of s and returns 12 and the rest.
func bracketNum(s string) (int, string, bool) {
	if len(s) < 3 || s[0] != '[' {
		return 0, s, false
	}
	j := strings.IndexByte(s, ']')
	if j < 0 {
		return 0, s, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(s[1:j]))
	if err != nil || n < 0 {
		return 0, s, false
	}
	return n, s[j+1:], true
}

// fieldAfter returns the whitespace-separated token after key in s
// ("lid 5 lmc 0", "lid" → "5").
func fieldAfter(s, key string) (string, bool) {
	f := strings.Fields(s)
	for i := 0; i+1 < len(f); i++ {
		if f[i] == key {
			return f[i+1], true
		}
	}
	return "", false
}

// lineError names the input, line number and line of a parse error.
type lineError struct {
	format string // "ibnetdiscover", "ibsim net file"
	line   int
	text   string
	err    error
}

func (e *lineError) Error() string {
	t := e.text
	if len(t) > 120 {
		t = t[:117] + "..."
	}
	return fmt.Sprintf("fabric: %s line %d: %v (line: %q)", e.format, e.line, e.err, t)
}

func (e *lineError) Unwrap() error { return e.err }
