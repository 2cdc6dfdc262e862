package cli

import (
	"strings"
	"testing"
)

// TestLinksOnePortFarEndSingular (trial G11): one port whose far end did
// not answer is "1 port", not "1 ports".
func TestLinksOnePortFarEndSingular(t *testing.T) {
	faults := writeFile(t, "faults.txt", "dead \"gpu005 mlx5_1\"\n")
	_, out, _ := run("links", "--sim", "--faults", faults, "--timeout", "2s", "--retries", "0", "--no-color")
	if !strings.Contains(out, " and 1 port whose far end did not answer") {
		t.Errorf("summary: %q", lastLine(out))
	}
}

func lastLine(s string) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return l[len(l)-1]
}
