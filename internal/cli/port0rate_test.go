package cli

import (
	"encoding/json"
	"testing"
)

// TestFilePort0NoInventedRate (trial H10): 'discover --format json' on the
// 2007 Voltaire dump showed each switch's port 0 at "4X NDR" (active mask
// 128): the file has no port 0 line, the simulator made the port up and
// its default filled the fastest speed, presented as read. A switch's
// port 0 that the file gives no rate for has none: width and speed are
// left out (unknown, per docs/schema-fabric.md), on every dump that lacks
// them.
func TestFilePort0NoInventedRate(t *testing.T) {
	for _, name := range []string{"voltaire-sdr-2007.ibnetdiscover", "sx6036-fdr10-2014.ibnetdiscover", "plafrim2-qlogic-ts.ibnetdiscover-p"} {
		code, out, stderr := run("discover", "--sim="+corpusPath(t, name), "--format", "json")
		if code != ExitHealthy && code != ExitPartial {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		var doc struct {
			Nodes []struct {
				Description string `json:"description"`
				Type        string `json:"type"`
				Ports       []struct {
					Num   int             `json:"num"`
					Width json.RawMessage `json:"width"`
					Speed json.RawMessage `json:"speed"`
				} `json:"ports"`
			} `json:"nodes"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		n := 0
		for _, nd := range doc.Nodes {
			for _, p := range nd.Ports {
				if p.Num != 0 {
					continue
				}
				n++
				if p.Speed != nil || p.Width != nil {
					t.Errorf("%s: %s port 0 width %s speed %s: the file gives it no rate", name, nd.Description, p.Width, p.Speed)
				}
			}
		}
		if n == 0 {
			t.Errorf("%s: no switch port 0 listed", name)
		}
	}
}
