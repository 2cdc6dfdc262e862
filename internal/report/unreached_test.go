package report

import (
	"fmt"
	"slices"
	"testing"
)

// TestUnreachedLinesGroups: one switch that does not answer, tried from
// ports 49-56 of 8 leaves, is one line naming the ports and the leaves
// (before: 64 lines); an entry of another kind or reason keeps its own
// line, and a group of one reads as the entry itself.
func TestUnreachedLinesGroups(t *testing.T) {
	var us []Unreached
	for l := 1; l <= 8; l++ {
		for p := 49; p <= 56; p++ {
			us = append(us, Unreached{What: "NodeInfo", Where: fmt.Sprintf("path 0,%d,%d (behind leaf%02d port %d)", l, p, l, p), Reason: "no response after 4 attempts"})
		}
	}
	us = append(us,
		Unreached{What: "PortInfo 49", Where: "spine02 (GUID 0x0000000000000002, path 0,1,49)", Reason: "no response after 4 attempts"},
		Unreached{What: "NodeInfo", Where: "path 0,9,3 (behind leaf09 port 3)", Reason: "no response after 4 attempts"},
		Unreached{What: "NodeInfo", Where: "path 0,9,4 (behind leaf09 port 4)", Reason: "MAD status 0x001c"},
	)
	got := UnreachedLines(us)
	want := []string{
		"NodeInfo at 65 paths behind ports 49-56 of leaf01, leaf02, leaf03, leaf04, leaf05, leaf06, leaf07, leaf08; port 3 of leaf09: no response after 4 attempts",
		"PortInfo 49 at spine02 (GUID 0x0000000000000002, path 0,1,49): no response after 4 attempts",
		"NodeInfo at path 0,9,4 (behind leaf09 port 4): MAD status 0x001c",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	if got := PortRanges([]int{60, 49, 50, 51, 53}); got != "ports 49-51,53,60" {
		t.Errorf("portRanges: %q", got)
	}
}

// TestUnreachedLinesPortOnce: a read of one port's attribute names the
// port once, in where it was ("PortInfo at spine02 port 2"), alone or
// grouped; before, a lone one read "PortInfo 2 at spine02 port 2".
func TestUnreachedLinesPortOnce(t *testing.T) {
	got := UnreachedLines([]Unreached{
		{What: "PortInfo 2", Where: "spine02 port 2", Reason: "no response after 4 attempts"},
		{What: "PortInfo 0", Where: "spine01 port 0", Reason: "no response after 4 attempts"},
		{What: "PortInfo 1", Where: "spine01 port 1", Reason: "not sent: PortInfo went unanswered there"},
		{What: "PortInfo 3", Where: "spine01 port 3", Reason: "not sent: PortInfo went unanswered there"},
	})
	want := []string{
		"PortInfo at spine02 port 2: no response after 4 attempts",
		"PortInfo at spine01 port 0: no response after 4 attempts",
		"PortInfo at spine01 ports 1,3: not sent: PortInfo went unanswered there",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}
