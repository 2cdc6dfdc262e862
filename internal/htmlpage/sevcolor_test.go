package htmlpage

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/report"
)

// hexColor reads "#rrggbb".
func hexColor(t *testing.T, s string) [3]float64 {
	t.Helper()
	if len(s) == 4 { // #rgb
		s = "#" + strings.Repeat(s[1:2], 2) + strings.Repeat(s[2:3], 2) + strings.Repeat(s[3:4], 2)
	}
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "#"), 16, 32)
	if err != nil || len(s) != 7 {
		t.Fatalf("colour %q", s)
	}
	return [3]float64{float64(v>>16&0xff) / 255, float64(v>>8&0xff) / 255, float64(v&0xff) / 255}
}

// contrast is the WCAG 2 contrast ratio of two colours.
func contrast(a, b [3]float64) float64 {
	lum := func(c [3]float64) float64 {
		var l [3]float64
		for i, x := range c {
			if x <= 0.03928 {
				l[i] = x / 12.92
			} else {
				l[i] = math.Pow((x+0.055)/1.055, 2.4)
			}
		}
		return 0.2126*l[0] + 0.7152*l[1] + 0.0722*l[2]
	}
	la, lb := lum(a), lum(b)
	return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)
}

// hue is the colour's hue in degrees.
func hue(c [3]float64) float64 {
	hi, lo := max(c[0], c[1], c[2]), min(c[0], c[1], c[2])
	if hi == lo {
		return 0
	}
	var h float64
	switch hi {
	case c[0]:
		h = math.Mod((c[1]-c[2])/(hi-lo), 6)
	case c[1]:
		h = (c[2]-c[0])/(hi-lo) + 2
	default:
		h = (c[0]-c[1])/(hi-lo) + 4
	}
	h *= 60
	if h < 0 {
		h += 360
	}
	return h
}

// TestSeverityColours: the page colours each severity as the terminal
// does (report.SeverityLabel: critical bold red, error red, warning
// yellow, info cyan), readable: every severity colour has a contrast of
// at least 4.5:1 (WCAG AA for text) against the page's background, in
// the light scheme, the dark one and print. Before, an error finding's
// label and the summary's error count were critical's red while its
// frame was orange (#d55e00, 3.9:1), warnings were #b7791f (3.6:1),
// info labels had no colour, and printing from a dark-scheme browser
// kept the dark scheme's light colours on white paper.
func TestSeverityColours(t *testing.T) {
	doc, snap := sampleReport(t)
	page := render(t, doc, snap)
	// The terminal's colours, from the ANSI codes SeverityLabel writes.
	ansiHue := map[string][2]float64{"31": {-15, 15}, "33": {35, 65}, "36": {170, 200}}
	st := report.Style{Color: true}
	want := map[checks.Severity][2]float64{}
	for _, s := range []checks.Severity{checks.Critical, checks.Error, checks.Warning, checks.Info} {
		label := report.SeverityLabel(st, s)
		for code, r := range ansiHue {
			if strings.Contains(label, "\x1b["+code+"m") || strings.Contains(label, ";"+code+"m") {
				want[s] = r
			}
		}
		if _, ok := want[s]; !ok {
			t.Fatalf("terminal label of %s %q: no colour this test knows", s, label)
		}
	}
	schemes := map[string]string{}
	for _, m := range regexp.MustCompile(`(?s)(@media \((prefers-color-scheme:dark)\)\{|@media (print)\{\s*|^|\n|>):root\{([^}]*)\}`).FindAllStringSubmatch(page, -1) {
		name := "light"
		if m[2] != "" {
			name = "dark"
		} else if m[3] != "" {
			name = "print"
		}
		schemes[name] += m[4] + ";"
	}
	if len(schemes) != 3 {
		t.Fatalf("style sheet: schemes %v, want light, dark and print", schemes)
	}
	vars := func(s string) map[string]string {
		out := map[string]string{}
		for _, m := range regexp.MustCompile(`--([a-z0-9]+):(#[0-9a-fA-F]{6}|#[0-9a-fA-F]{3})\b`).FindAllStringSubmatch(s, -1) {
			out[m[1]] = m[2]
		}
		return out
	}
	light := vars(schemes["light"])
	for _, name := range []string{"light", "dark", "print"} {
		v := vars(schemes[name])
		if name == "print" {
			// print overrides some of the light scheme; the rest apply
			for k, x := range light {
				if _, ok := v[k]; !ok {
					v[k] = x
				}
			}
		}
		bg := hexColor(t, v["bg"])
		for s, r := range want {
			key := fmt.Sprintf("s%d", s)
			c, ok := v[key]
			if !ok {
				t.Errorf("%s: no --%s (%s)", name, key, s)
				continue
			}
			if name == "print" {
				if _, own := vars(schemes["print"])[key]; !own {
					t.Errorf("print: --%s (%s) not set: a dark-scheme browser prints %s on white", key, s, vars(schemes["dark"])[key])
				}
			}
			rgb := hexColor(t, c)
			if cr := contrast(rgb, bg); cr < 4.5 {
				t.Errorf("%s: %s %s on %s: contrast %.2f:1, want at least 4.5:1", name, s, c, v["bg"], cr)
			}
			h := hue(rgb)
			if h > 180+r[1] && r[0] < 0 {
				h -= 360
			}
			if h < r[0] || h > r[1] {
				t.Errorf("%s: %s %s has hue %.0f°, the terminal's colour for it is %.0f..%.0f°", name, s, c, h, r[0], r[1])
			}
		}
	}
	// Each severity's label and summary count take its own colour.
	for s := range want {
		for _, sel := range []string{fmt.Sprintf(`\.f\.s%d \.sev`, s), fmt.Sprintf(`\.n\.s%d`, s)} {
			re := regexp.MustCompile(sel + `(,[^{]*)?\{color:var\(--s(\d)\)`)
			re2 := regexp.MustCompile(`(^|[},])[^{}]*` + sel + `[^{]*\{color:var\(--s(\d)\)`)
			m := re.FindStringSubmatch(page)
			if m == nil {
				if m2 := re2.FindStringSubmatch(page); m2 != nil {
					m = []string{"", "", m2[2]}
				}
			}
			if m == nil || m[2] != fmt.Sprint(int(s)) {
				t.Errorf("%s: %s is not coloured var(--s%d): %v", s, sel, s, m)
			}
		}
	}
}
