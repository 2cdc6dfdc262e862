package htmlpage

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// chromium finds Debian's chromium-headless-shell. Without it the test
// skips, naming the package; with CI=true it fails.
func chromium(t *testing.T) string {
	t.Helper()
	for _, c := range []string{"chromium-headless-shell", "/usr/lib/chromium/chromium-headless-shell"} {
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium-headless-shell not found; CI installs Debian's chromium-headless-shell package")
	}
	t.Skip("chromium-headless-shell not found (apt-get install chromium-headless-shell)")
	return ""
}

// runChromium runs the headless shell on the page with args and returns
// its standard output. The sandbox is off: tests run as root in CI.
func runChromium(t *testing.T, bin, page string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args = append([]string{"--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
		"--user-data-dir=" + t.TempDir()}, args...)
	cmd := exec.CommandContext(ctx, bin, append(args, page)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, errb.String())
	}
	return out.Bytes()
}

func writeSamplePage(t *testing.T) string {
	t.Helper()
	doc, snap := sampleReport(t)
	p := filepath.Join(t.TempDir(), "sample.html")
	if err := os.WriteFile(p, []byte(render(t, doc, snap)), 0o644); err != nil {
		t.Fatal(err)
	}
	return "file://" + p
}

// TestBrowserScreenshot renders the sample fabric's page in headless
// Chromium and checks the picture: not blank, and the incident visible at
// a glance: the critical red of the two misrouted spines' frames and the
// degraded orange of the 1X uplink cover a good number of pixels.
func TestBrowserScreenshot(t *testing.T) {
	bin := chromium(t)
	page := writeSamplePage(t)
	shot := filepath.Join(t.TempDir(), "sample.png")
	runChromium(t, bin, page, "--window-size=1280,900", "--screenshot="+shot)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	b := img.Bounds()
	if b.Dx() != 1280 || b.Dy() != 900 {
		t.Errorf("screenshot is %dx%d, want 1280x900", b.Dx(), b.Dy())
	}
	bg := img.At(b.Min.X, b.Max.Y-1)
	colours := map[[3]uint32]bool{}
	ink, red, orange := 0, 0, 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := img.At(x, y)
			r, g, bl, _ := c.RGBA()
			colours[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
			if c != bg {
				ink++
			}
			if near(r>>8, g>>8, bl>>8, 0xa5, 0x0e, 0x0e) { // critical frame (--s3)
				red++
			}
			if near(r>>8, g>>8, bl>>8, 0xd5, 0x5e, 0x00) { // degraded line
				orange++
			}
		}
	}
	total := b.Dx() * b.Dy()
	t.Logf("%d colours, %.1f%% ink, %d critical-red and %d degraded-orange pixels", len(colours), 100*float64(ink)/float64(total), red, orange)
	if len(colours) < 50 || ink < total/20 {
		t.Errorf("screenshot looks blank: %d colours, %d of %d pixels not background", len(colours), ink, total)
	}
	if red < 300 {
		t.Errorf("only %d pixels of critical red: the misrouted spines are not framed", red)
	}
	if orange < 300 {
		t.Errorf("only %d pixels of degraded orange: the 1X uplink is not visible", orange)
	}
}

func near(r, g, b, R, G, B uint32) bool {
	d := func(x, y uint32) uint32 {
		if x > y {
			return x - y
		}
		return y - x
	}
	return d(r, R) < 24 && d(g, G) < 24 && d(b, B) < 24
}

// TestBrowserDOM loads the page in headless Chromium and reads the DOM
// after the script ran: the findings and the drawing are there, the
// script finished, and opening the page at #f=1 highlights finding 1's
// switch (spine01) and dims the rest, as a click would.
func TestBrowserDOM(t *testing.T) {
	bin := chromium(t)
	page := writeSamplePage(t)
	dom := string(runChromium(t, bin, page+"#f=1", "--dump-dom"))
	if !strings.Contains(dom, `data-ready="yes"`) {
		t.Fatal("the page's script did not finish (no data-ready on <html>)")
	}
	if n := strings.Count(dom, `<li class="f s`); n != 12 {
		t.Errorf("%d findings in the DOM, want the sample's 12", n)
	}
	for _, want := range []string{"spine01 spreads 32 destinations", "trained at 1X instead of 4X", `<svg id="fab"`, ">spine02</text>", ">leaf07</text>", "4 hosts", "32 HCAs up"} {
		if !strings.Contains(dom, want) {
			t.Errorf("DOM lacks %q", want)
		}
	}
	if n := len(regexp.MustCompile(`<path id="l\d+"`).FindAllString(dom, -1)); n != 40 {
		t.Errorf("%d links drawn, want 40 (32 leaf-spine bundles, 8 to hosts)", n)
	}
	if !regexp.MustCompile(`<li class="f s3 on" data-f="0"`).MatchString(dom) {
		t.Error("#f=1 did not select finding 1")
	}
	if !regexp.MustCompile(`<svg id="fab"[^>]*class="dim"`).MatchString(dom) {
		t.Error("#f=1 did not dim the drawing")
	}
	if !regexp.MustCompile(`<g id="b\d+" class="bx k0 s3 hl"><rect[^>]*>(</rect>)?<text[^>]*>spine01</text>`).MatchString(dom) {
		t.Error("#f=1 did not highlight spine01")
	}
	if !regexp.MustCompile(`class="l[^"]* hp"`).MatchString(dom) {
		t.Error("#f=1 highlighted no route")
	}

	dom = string(runChromium(t, bin, page+"#q=gpu012", "--dump-dom"))
	// gpu012 has 8 HCAs; mlx5_3's port is stuck in Polling, so discovery
	// never reached it.
	if !strings.Contains(dom, `<span id="qn">7 matches</span>`) {
		m := regexp.MustCompile(`<span id="qn">[^<]*</span>`).FindString(dom)
		t.Errorf("search for gpu012: %s, want 7 matches (its HCAs but the one in Polling)", m)
	}
}
