package checks_test

import (
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
)

// TestCorpusLeafToLeafQuiet: no real fabric has a leaf's spine cable
// plugged into another leaf; plafrim's leaves chained below a leaf (no
// spines of their own) and SX6036's spine with storage hosts (ib7) are
// the design, not a cable to move.
func TestCorpusLeafToLeafQuiet(t *testing.T) {
	for _, name := range topologyCorpus {
		t.Run(name, func(t *testing.T) {
			sw := corpusSweep(t, corpusFile(t, name))
			res, err := checks.Run(sw.Snapshot(checks.Expectations{}, nil, nil))
			if err != nil {
				t.Fatal(err)
			}
			if fs := byCheck(res.Findings, "topology.leaf-to-leaf"); len(fs) > 0 {
				t.Errorf("%d leaf-to-leaf findings:%s", len(fs), titles(fs))
			}
		})
	}
}
