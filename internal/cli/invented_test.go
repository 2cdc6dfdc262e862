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
		// A ConnectX-4: no board of it runs below FDR, so not hedged (H13).
		{"switchib-sx6012-mixed-2016.ibnetdiscover", "trained at SDR instead of FDR"},
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

// TestFileWithoutVLsInventsNone (trial C1 audit): a net file records no
// VLs (NotRecorded "vls": config.vl-mismatch does not run), yet
// routing.credit-loop's evidence read the simulator's stand-in as the
// fabric's: "ports on the cycle run up to VL0-7 (OperationalVLs)". It
// says the file records none instead.
func TestFileWithoutVLsInventsNone(t *testing.T) {
	code, out, stderr := run("check", "--json", "--sim=../../fixtures/ring/ring5.net", "--lfts", "../../fixtures/ring/ring5-minhop.dump_fts")
	if code != ExitFindings {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, `"check": "routing.credit-loop"`) {
		t.Fatalf("no credit loop on min-hop's ring: %s", out)
	}
	if strings.Contains(out, "(OperationalVLs)") {
		t.Errorf("credit-loop evidence from VLs the file does not record: %s", out[strings.Index(out, "(OperationalVLs)")-80:strings.Index(out, "(OperationalVLs)")+20])
	}
	if !strings.Contains(out, "records no VL configuration") {
		t.Errorf("credit-loop evidence does not say the VLs are not in the file")
	}
}
