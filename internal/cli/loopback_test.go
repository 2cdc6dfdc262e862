package cli

import (
	"fmt"
	"strings"
	"testing"
)

// loopedHCA is an ibnetdiscover file (written for the test) whose first
// node is a dual-port adapter with its two ports cabled to each other,
// beside a switch with a cable from its port 5 to its port 6 and two
// hosts: 'check --sim' attaches at the first host port that is up, the
// looped adapter's.
const loopedHCA = `vendid=0x2c9
devid=0x1003
sysimgguid=0x2c9030004e953
caguid=0x2c9030004e950
Ca 2 "H-0002c9030004e950" # "lab HCA-1"
[1](2c9030004e951) "H-0002c9030004e950"[2](2c9030004e952) # lid 4 lmc 0 "lab HCA-1" lid 5 4xFDR
[2](2c9030004e952) "H-0002c9030004e950"[1](2c9030004e951) # lid 5 lmc 0 "lab HCA-1" lid 4 4xFDR

vendid=0x2c9
devid=0xc738
sysimgguid=0xf452140300576400
switchguid=0xf452140300576400(f452140300576400)
Switch 12 "S-f452140300576400" # "sw1" enhanced port 0 lid 1 lmc 0
[1] "H-0002c9030004e938"[1](2c9030004e939) # "hostA HCA-1" lid 2 4xFDR
[2] "H-0002c9030004e940"[1](2c9030004e941) # "hostB HCA-1" lid 3 4xFDR
[5] "S-f452140300576400"[6] # "sw1" lid 1 4xFDR
[6] "S-f452140300576400"[5] # "sw1" lid 1 4xFDR

vendid=0x2c9
devid=0x1003
sysimgguid=0x2c9030004e93b
caguid=0x2c9030004e938
Ca 2 "H-0002c9030004e938" # "hostA HCA-1"
[1](2c9030004e939) "S-f452140300576400"[1] # lid 2 lmc 0 "sw1" lid 1 4xFDR

vendid=0x2c9
devid=0x1003
sysimgguid=0x2c9030004e943
caguid=0x2c9030004e940
Ca 2 "H-0002c9030004e940" # "hostB HCA-1"
[1](2c9030004e941) "S-f452140300576400"[2] # lid 3 lmc 0 "sw1" lid 1 4xFDR
`

// TestLoopbacksInAFile: a sweep that starts on an adapter whose ports are
// cabled to each other sees one node and one link (no crash, no endless
// walk), reports the adapter's loopback and says the rest of the file was
// not reached (undecided, exit 2); the file with the switch's part first
// reports the switch's loopback cable (sw1 5-6) and nothing else.
func TestLoopbacksInAFile(t *testing.T) {
	first := writeFile(t, "looped.ibnetdiscover", loopedHCA)
	code, out, stderr := run("check", "--sim="+first, "--no-color")
	if code != ExitUndecided || !strings.Contains(out, "link.loopback  Port lab HCA-1/1 is cabled back to lab HCA-1/2 (a loopback cable)") || !strings.Contains(out, "not cabled to the part the sweep starts from") {
		t.Errorf("sweep from the looped adapter: exit %d\n%s%s", code, out, stderr)
	}
	blocks := strings.Split(strings.TrimSpace(loopedHCA), "\n\n")
	sw := writeFile(t, "sw.ibnetdiscover", strings.Join(append(blocks[1:], blocks[0]), "\n\n")+"\n")
	code, out, stderr = run("check", "--sim="+sw, "--no-color")
	if !strings.Contains(out, "Findings:  0 critical, 0 error, 1 warning, 0 info") || !strings.Contains(out, "Port sw1/5 is cabled back to sw1/6 (a loopback cable)") {
		t.Errorf("sweep from the switch's part: exit %d\n%s%s", code, out, stderr)
	}
}

// TestLinksNotesLoopbacks: 'links' listed the SwitchIB's three cables
// back to itself like any link; it notes them LOOPBACK (check's
// link.loopback verdict), not as below their rate, and its exit status
// stays the rate verdict's (1 for r-ufm96 at SDR; 0 for a fabric whose
// only remark is a loopback).
func TestLinksNotesLoopbacks(t *testing.T) {
	code, doc, stderr := linksJSON(t, "--sim="+corpusPath(t, "switchib-sx6012-mixed-2016.ibnetdiscover"))
	if code != ExitFindings {
		t.Errorf("links: exit %d, want 1 (the SDR link): %s", code, stderr)
	}
	var loops []string
	for _, l := range doc.Links {
		if !l.Loopback {
			continue
		}
		if l.Degraded || l.B == nil {
			t.Errorf("loopback %+v marked degraded or without its far end", l)
			continue
		}
		loops = append(loops, fmt.Sprintf("%d-%d", l.A.Port, l.B.Port))
	}
	if strings.Join(loops, " ") != "1-2 19-21 29-30" {
		t.Errorf("loopback links %q, want the SwitchIB's 1-2 19-21 29-30", loops)
	}
	blocks := strings.Split(strings.TrimSpace(loopedHCA), "\n\n")
	sw := writeFile(t, "sw.ibnetdiscover", strings.Join(append(blocks[1:], blocks[0]), "\n\n")+"\n")
	code, out, stderr := run("links", "--sim="+sw, "--no-color")
	if !strings.Contains(out, "LOOPBACK: cabled back to the same node") || !strings.Contains(out, "1 loopback cable,") {
		t.Errorf("links on a switch with a loopback cable:\n%s%s", out, stderr)
	}
	if code != ExitPartial || !strings.Contains(stderr, "not cabled to the part") {
		// The file's looped adapter is not reached: undecided, not a
		// failure of the loopback note.
		t.Errorf("links: exit %d, want 3 for the part not reached: %s", code, stderr)
	}
}
