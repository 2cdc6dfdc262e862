package checks_test

import (
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// nested reports whether s opens a parenthesis inside another one.
func nested(s string) bool {
	depth := 0
	for _, r := range s {
		switch r {
		case '(':
			depth++
			if depth > 1 {
				return true
			}
		case ')':
			depth = max(0, depth-1)
		}
	}
	return false
}

// TestWordingNoNestedParentheses: no finding of the incident fabric says
// "(spine02/49 (to leaf07/41))" in its title or next step: a port's far
// end inside a parenthesis is written without a second one.
func TestWordingNoNestedParentheses(t *testing.T) {
	f, err := topology.FatTree2{Leaves: 4, Spines: 4, HostsPerLeaf: 4}.Build()
	if err != nil {
		t.Fatal(err)
	}
	sw := sweepSim(t, f, 0, func(s *sim.Sim) {
		fs, err := sim.ParseFaults(strings.NewReader(incidentFaults))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.ApplyFaults(fs); err != nil {
			t.Fatal(err)
		}
	})
	res, err := checks.Run(sw.Snapshot(checks.Expectations{}, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, f := range res.Findings {
		for _, s := range []string{f.Title, f.Action, f.Impact.Summary} {
			if nested(s) {
				t.Errorf("%s: nested parentheses: %s", f.Check, s)
			}
		}
		if f.Check == "counters.errors" {
			seen++
		}
	}
	if seen == 0 {
		t.Fatal("no counters.errors finding: the test looks at nothing")
	}
}
