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
	// One node times out, once: deadTimeout is enough, as the simulator
	// itself says which reads went unanswered (transport.TimeoutNotifier),
	// however late a loaded machine reads the others' answers.
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

// TestTopUnknownBytesPerSecondNull: leaf02's PortCountersExtended never
// answers, so the increase of its ports' 32-bit data counters is unknown.
// Trial T10: tx_utilization was null but tx_bytes_per_second 0 (an
// invented idle port for a jq sum); both come from that one increase and
// are null together, as counters --json has them.
func TestTopUnknownBytesPerSecondNull(t *testing.T) {
	faults := writeFile(t, "faults.txt", "drop leaf02 attr=PortCountersExtended\n")
	_, out, _ := run("top", "--sim", "--faults", faults, "-n", "200ms", "--once", "--json", "--timeout", deadTimeout, "--retries", "0")
	var doc struct {
		Ports []struct {
			Node    string   `json:"node"`
			Port    int      `json:"port"`
			TxUtil  *float64 `json:"tx_utilization"`
			RxUtil  *float64 `json:"rx_utilization"`
			TxBytes *float64 `json:"tx_bytes_per_second"`
			RxBytes *float64 `json:"rx_bytes_per_second"`
			Unknown string   `json:"unknown"`
		} `json:"ports"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, firstLines(out, 20))
	}
	unknown := 0
	for _, p := range doc.Ports {
		if p.Unknown == "" || p.TxUtil != nil {
			if p.TxBytes == nil || p.RxBytes == nil {
				t.Errorf("%s/%d: bytes per second null with the increase known", p.Node, p.Port)
			}
			continue
		}
		unknown++
		if p.TxBytes != nil || p.RxBytes != nil {
			t.Errorf("%s/%d: tx_utilization null (%s) but tx/rx_bytes_per_second %v/%v, want null", p.Node, p.Port, p.Unknown, deref(p.TxBytes), deref(p.RxBytes))
		}
	}
	if unknown == 0 {
		t.Fatalf("no port with an unknown data increase: the fault did not bite\n%s", firstLines(out, 40))
	}
}

func deref(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

// TestTopJSONNotReadAsText: with leaf01's port 49 down (the SM has not
// routed around it), the reads sent by LID from gpu001 mlx5_0 to spine03
// and to a few HCAs go unanswered. top's "Could not read" says spine03's
// silent PMA once, with the ports it covers; --json's not_read had one
// entry per port instead (70 against the text's 8), each the raw error.
// docs/schema-report.md: each not_read entry is the one line of text the
// Could not read list prints.
func TestTopJSONNotReadAsText(t *testing.T) {
	faults := writeFile(t, "faults.txt", "down leaf01/49\n")
	code, out, stderr := run("top", "--sim", "--faults", faults, "-n", "200ms", "--json", "--timeout", deadTimeout, "--retries", "0")
	if code != ExitPartial {
		t.Errorf("exit %d, want %d\n%s", code, ExitPartial, stderr)
	}
	var doc struct {
		NotRead []string `json:"not_read"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, firstLines(out, 20))
	}
	_, list, ok := strings.Cut(stderr, "Could not read (")
	if !ok {
		t.Fatalf("no Could not read list on stderr:\n%s", stderr)
	}
	var text []string
	for _, l := range strings.Split(list, "\n")[1:] {
		if !strings.HasPrefix(l, "  ") {
			break
		}
		text = append(text, strings.TrimPrefix(l, "  "))
	}
	if strings.Join(doc.NotRead, "\n") != strings.Join(text, "\n") {
		t.Errorf("not_read (%d entries) is not the Could not read list (%d lines):\n%s\nwant:\n%s", len(doc.NotRead), len(text), firstLines(strings.Join(doc.NotRead, "\n"), 10), strings.Join(text, "\n"))
	}
	spine := 0
	for _, l := range doc.NotRead {
		if strings.Contains(l, "spine03") {
			spine++
			if !strings.Contains(l, "ClassPortInfo at spine03 (LID 3): ") || !strings.Contains(l, "(counters of ports ") {
				t.Errorf("spine03's entry is not its PMA's, with the ports it covers: %q", l)
				break
			}
		}
	}
	if spine != 1 {
		t.Errorf("%d not_read entries name spine03, want 1", spine)
	}
}
