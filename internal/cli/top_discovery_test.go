package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestTopSaysWhatDiscoveryMissed: gpu005 mlx5_1 does not answer
// NodeInfo; its link is up and leaf02's PMA answers for the port facing
// it (counters reads that port). Trial T2: top printed 1020 ports, no word
// of the HCA, not_read [] and exit 0, a view indistinguishable from a
// complete one; with --hosts 'gpu[005-006]' 15 rows for 16 HCAs and
// nothing else. Now top watches leaf02/2, lists the node under "Could not
// read" (stderr), on a footer line and in not_read, and exits 3.
func TestTopSaysWhatDiscoveryMissed(t *testing.T) {
	faults := writeFile(t, "faults.txt", "dead \"gpu005 mlx5_1\"\n")
	base := []string{"top", "--sim", "--faults", faults, "-n", "200ms", "--once", "--timeout", deadTimeout, "--retries", "0", "--no-color"}
	const missed = "behind leaf02 port 2"

	code, out, stderr := run(base...)
	if code != ExitPartial {
		t.Errorf("exit %d, want %d (not everything was read)\n%s", code, ExitPartial, stderr)
	}
	if !strings.Contains(out, " leaf02/2 ") {
		t.Errorf("leaf02/2 (its PMA answers) not watched:\n%s", firstLines(out, 3))
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if foot := lines[len(lines)-1]; !strings.Contains(foot, missed) {
		t.Errorf("no footer line naming the node not read; last line %q", foot)
	}
	if !strings.Contains(stderr, "Could not read (1):") || !strings.Contains(stderr, missed) {
		t.Errorf("stderr does not list the node not read:\n%s", stderr)
	}

	_, out, _ = run(append(base, "--json")...)
	var doc struct {
		NotRead []string `json:"not_read"`
		Watched int      `json:"ports_watched"`
		Ports   []struct {
			Node string `json:"node"`
			Port int    `json:"port"`
		} `json:"ports"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, firstLines(out, 20))
	}
	if len(doc.NotRead) != 1 || !strings.Contains(doc.NotRead[0], missed) {
		t.Errorf("not_read %q: want the node behind leaf02 port 2", doc.NotRead)
	}
	if doc.Watched != 1021 {
		t.Errorf("ports_watched %d, want 1021 (counters reads 1021)", doc.Watched)
	}

	// Scoped to the job's hosts: the HCA that did not answer cannot be
	// matched by name, so what discovery missed is said, not dropped.
	code, out, stderr = run(append(base, "--hosts", "gpu[005-006]")...)
	if code != ExitPartial || !strings.Contains(stderr, missed) {
		t.Errorf("--hosts: exit %d, stderr:\n%s", code, stderr)
	}
	lines = strings.Split(strings.TrimRight(out, "\n"), "\n")
	if foot := lines[len(lines)-1]; !strings.Contains(foot, missed) {
		t.Errorf("--hosts: no footer line naming the node not read; last line %q", foot)
	}
}

func firstLines(s string, n int) string {
	l := strings.SplitN(s, "\n", n+1)
	return strings.Join(l[:min(n, len(l))], "\n")
}
