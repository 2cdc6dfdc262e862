package checks_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/sim"
)

// TestCorpusHostLinkShareLabel (trial H9): with --lfts the avakas dump has
// 1 of its 25 forwarding tables, and 39204 of 39340 host pairs could not be
// followed, yet node008's link share was labelled "(per the forwarding
// tables)". A host's own link carries every path to and from the host,
// 2 of 281 hosts' share whatever the tables: the label says that, not
// the tables.
func TestCorpusHostLinkShareLabel(t *testing.T) {
	s, info, err := sim.Load(context.Background(), corpusFile(t, "avakas-qlogic-qdr.ibnetdiscover-v-p"), corpusFile(t, "avakas-qlogic-qdr.ibroute-lid1"), sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sw := sweepOf(t, s, false)
	sw.RoutesComputed = !info.Routes
	res, err := checks.Run(sw.Snapshot(checks.Expectations{}, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range byCheck(res.Findings, "link.degraded-speed") {
		if !strings.Contains(f.Title, "node008") {
			continue
		}
		found = true
		if strings.Contains(f.Impact.Summary, "per the forwarding tables") || !strings.Contains(f.Impact.Summary, "0.71% of host-to-host paths (every path to or from its host crosses it, whatever the routes)") {
			t.Errorf("node008's impact: %s", f.Impact.Summary)
		}
	}
	if !found {
		t.Fatalf("no link.degraded-speed finding on node008: %d findings", len(res.Findings))
	}
}
