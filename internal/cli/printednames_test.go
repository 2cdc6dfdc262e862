package cli

import (
	"regexp"
	"strings"
	"testing"
)

// TestRoutesNamesFeedBack: trial C8, on the Quantum-2 capture whose 8
// unmanaged switches are all "Quantum-2 Mellanox Technologies". check
// names each "Quantum-2 Mellanox Technologies (0xGUID)"; routes printed
// the bare description in its headers, DESTINATION and VIA columns (8
// switches looking like one) and --switch refused the printed form ("no
// node or port in the fabric has name ..."). Every switch name routes
// prints now selects that switch alone, and the bare shared description
// is a one-line error naming the candidates as printed.
func TestRoutesNamesFeedBack(t *testing.T) {
	q := corpusPath(t, "quantum2-ndr-ibdiagnet2.ibnetdiscover")
	code, out, stderr := run("routes", "--sim="+q, "--no-color")
	if code != 0 {
		t.Fatalf("routes: exit %d: %s", code, stderr)
	}
	head := regexp.MustCompile(`(?m)^(\S.*?)  GUID (0x[0-9a-f]{16})  LID \d+  path `)
	headers := map[string]string{} // name -> its header line
	for _, m := range head.FindAllStringSubmatch(out, -1) {
		if _, dup := headers[m[1]]; dup {
			t.Errorf("two tables headed %q", m[1])
		}
		headers[m[1]] = m[0]
	}
	if len(headers) != 9 {
		t.Fatalf("%d distinct switch names in the headers, want 9 (1 MQM9700, 8 Quantum-2)", len(headers))
	}
	// The names in the DESTINATION ("NAME (switch)") and VIA ("NAME[n]")
	// columns are the headers' names.
	dest := regexp.MustCompile(`(?m)^ \d+\s+\d+\s+(.+?) \(switch\)\s+(.+)\[\d+\]$`)
	seen := 0
	for _, m := range dest.FindAllStringSubmatch(out, -1) {
		for _, name := range m[1:] {
			if _, ok := headers[name]; !ok {
				t.Fatalf("routes printed switch %q, which names no table:\n%s", name, m[0])
			}
		}
		seen++
	}
	if seen == 0 {
		t.Fatal("no switch destination routed through a switch in the output")
	}
	for name, h := range headers {
		code, out, stderr := run("routes", "--sim="+q, "--no-color", "--switch", name)
		if code != 0 || strings.Count(out, "  GUID 0x") != 1 || !strings.Contains(out, h) {
			t.Errorf("routes --switch %q: exit %d, %d tables, %s", name, code, strings.Count(out, "  GUID 0x"), stderr)
		}
	}
	const shared = "Quantum-2 Mellanox Technologies"
	code, _, stderr = run("routes", "--sim="+q, "--switch", shared)
	if code == 0 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Fatalf("routes --switch %q: exit %d, want a one-line error: %s", shared, code, stderr)
	}
	for name := range headers {
		if strings.HasPrefix(name, shared+" (0x") && !strings.Contains(stderr, `"`+name+`"`) {
			t.Errorf("the ambiguity does not name %q: %s", name, stderr)
		}
	}
	if !strings.Contains(stderr, "8 switches") {
		t.Errorf("the ambiguity does not say 8 switches: %s", stderr)
	}
}
