package checks

import (
	"strings"
	"testing"
)

// TestRankPortsNumerically: findings equal in all else are ordered by
// node, then port number: port 9 before port 21 (they were compared as
// text, "leaf/21" < "leaf/9").
func TestRankPortsNumerically(t *testing.T) {
	var fs []Finding
	for _, p := range []int{21, 9, 10, 2} {
		fs = append(fs, Finding{Check: "link.polling", Severity: Info, Entities: []Entity{{Node: "leaf", NodeGUID: 1, Port: p}}})
	}
	fs = append(fs, Finding{Check: "link.polling", Severity: Info, Entities: []Entity{{Node: "aaa", NodeGUID: 2, Port: 30}}})
	Rank(fs)
	var got []string
	for _, f := range fs {
		got = append(got, f.Entities[0].String())
	}
	if s := strings.Join(got, " "); s != "aaa/30 leaf/2 leaf/9 leaf/10 leaf/21" {
		t.Errorf("ranked %s, want aaa/30 leaf/2 leaf/9 leaf/10 leaf/21", s)
	}
}
