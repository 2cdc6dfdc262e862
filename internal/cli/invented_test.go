package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestFileWithoutEnabledMasksInventsNone (trial C1): ibnetdiscover text
// (plain, -p) records only each link's active width and speed, yet the
// simulator answered LinkWidthEnabled/LinkSpeed(Ext)Enabled set to that
// active rate, so check read "SW-6IB4 Voltaire/1 has only 1X enabled
// (LinkWidthEnabled ...) ... the cable is not at fault" (a mask nobody
// read) and 'links --json' printed "enabled": "1X SDR" for every link.
// A file that records no enabled mask gives no enabled evidence: the
// slow link is still reported, its action keeps the cable in play, and
// links leaves "enabled" out (unknown, as the fabric JSON does). An
// ibdiagnet2.db_csv records the masks (PORTS LinkWidthEn, LinkSpeedEn):
// links keeps them.
func TestFileWithoutEnabledMasksInventsNone(t *testing.T) {
	for _, c := range []struct{ file, title string }{
		{"voltaire-sdr-2007.ibnetdiscover", "trained at 1X instead of 4X"},
		{"plafrim-voltaire-qdr.ibnetdiscover-p", "trained at SDR instead of QDR"},
		{"switchib-sx6012-mixed-2016.ibnetdiscover", "trained at SDR where FDR was expected"},
	} {
		t.Run(c.file, func(t *testing.T) {
			path := corpusPath(t, c.file)
			code, out, stderr := run("check", "--json", "--sim="+path)
			var doc struct {
				Findings []struct {
					Check    string `json:"check"`
					Title    string `json:"title"`
					Action   string `json:"action"`
					Evidence []struct {
						Name string `json:"name"`
						Text string `json:"text"`
					} `json:"evidence"`
				} `json:"findings"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("check: exit %d: %v: %s", code, err, stderr)
			}
			seen := false
			for _, f := range doc.Findings {
				if !strings.HasPrefix(f.Check, "link.degraded-") {
					continue
				}
				if strings.Contains(f.Title, c.title) {
					seen = true
				}
				for _, e := range f.Evidence {
					if e.Name == "enabled" || strings.Contains(e.Text, "enabled (Link") {
						t.Errorf("%s: evidence from a mask the file does not record: %s", f.Title, e.Text)
					}
				}
				if strings.Contains(f.Action, "not at fault") || strings.Contains(f.Action, "Re-enable") {
					t.Errorf("%s: action rules the cable out on an invented mask: %s", f.Title, f.Action)
				}
			}
			if !seen {
				t.Errorf("no link.degraded-* finding %q: %s", c.title, out)
			}
			code, out, stderr = run("links", "--json", "--sim="+path)
			if code != ExitHealthy && code != ExitFindings {
				t.Fatalf("links: exit %d: %s", code, stderr)
			}
			if strings.Contains(out, `"enabled"`) {
				i := strings.Index(out, `"enabled"`)
				t.Errorf("links --json gives an enabled rate the file does not record: ...%s...", out[max(0, i-200):min(len(out), i+40)])
			}
		})
	}
	code, out, stderr := run("links", "--json", "--sim="+corpusPath(t, "quantum2-ndr-ibdiagnet2.db_csv"))
	if code != ExitHealthy && code != ExitFindings {
		t.Fatalf("links db_csv: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, `"enabled": "4X NDR"`) {
		t.Errorf("links --json on a db_csv (PORTS records LinkWidthEn, LinkSpeedEn) lost the enabled rates")
	}
}
