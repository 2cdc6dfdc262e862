package checks_test

import (
	"regexp"
	"strings"
	"testing"
)

// TestUnreachablePointsAtLinkDown (trial T14's rest): leaf01/33's cable
// to spine01 is down and the tables still send routes out of it. The
// routing.unreachable finding names the link.down finding as its cause,
// and the link.down finding names the lost routes as its consequence.
// Before, two findings side by side that said nothing of each other.
func TestUnreachablePointsAtLinkDown(t *testing.T) {
	fs := sampleWith(t, "down leaf01/33\n", true)
	var down, unr []string
	for _, f := range fs {
		var ev []string
		for _, e := range f.Evidence {
			ev = append(ev, e.Name+": "+e.Text)
		}
		switch {
		case f.Check == "link.down" && strings.Contains(f.Title, "leaf01/33"):
			down = append(down, strings.Join(ev, " | "))
		case f.Check == "routing.unreachable" && strings.Contains(f.Evidence[0].Text, "leaf01/33"):
			unr = append(unr, strings.Join(ev, " | "))
		}
	}
	if len(down) != 1 || len(unr) == 0 {
		t.Fatalf("want one link.down on leaf01/33 and routing.unreachable through it, got:%s", titles(fs))
	}
	if !strings.Contains(down[0], "routing.unreachable") {
		t.Errorf("link.down does not name its lost routes: %s", down[0])
	}
	for _, u := range unr {
		if !strings.Contains(u, "link.down") || !strings.Contains(u, "leaf01/33, whose link is down") || !strings.Contains(u, "spine01/1") {
			t.Errorf("routing.unreachable does not point at the link.down: %s", u)
		}
	}
}

// TestUnreachableTraceIsTypeable (trial G3): routing.unreachable's next
// step ended "'ibdoctor trace' shows the path", with nothing to trace;
// every other next step names a command to type. It names the first
// affected pair by LID (a LID resolves whatever the host's HCA count)
// and by name.
func TestUnreachableTraceIsTypeable(t *testing.T) {
	fs := sampleWith(t, "down leaf01/33\n", true)
	re := regexp.MustCompile(`'ibdoctor trace (\d+) (\d+)' \(([^)]+) to ([^),;]+)`)
	n := 0
	for _, f := range fs {
		if f.Check != "routing.unreachable" {
			continue
		}
		n++
		m := re.FindStringSubmatch(f.Action)
		if m == nil {
			t.Errorf("%s: next step names no pair to trace: %s", f.Title, f.Action)
			continue
		}
		if m[1] == m[2] {
			t.Errorf("%s: traces LID %s to itself", f.Title, m[1])
		}
		if !strings.Contains(f.Title+" "+f.Evidence[0].Text, strings.Fields(m[4])[0]) {
			t.Errorf("%s: the traced destination %s is not one the finding names", f.Title, m[4])
		}
	}
	if n == 0 {
		t.Fatalf("no routing.unreachable:%s", titles(fs))
	}
}
