package checks_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
)

// TestCorpusLeafWithoutSharpAN (trial C4): on the Quantum-2 capture 7 of
// the 8 rail leaves carry a SHARP Aggregation Node behind port 65; the
// leaf at LID 13 (0xfc6a1c030091cf00) has none, and nothing said so. Each
// of the capture's three files gives one warning naming that leaf alone,
// with its 7 peers as evidence.
func TestCorpusLeafWithoutSharpAN(t *testing.T) {
	for _, name := range []string{"quantum2-ndr-ibdiagnet2.ibnetdiscover", "quantum2-ndr-ibdiagnet2.lst", "quantum2-ndr-ibdiagnet2.db_csv"} {
		t.Run(name, func(t *testing.T) {
			res := corpusCheck(t, name, false)
			fs := slices.DeleteFunc(byCheck(res.Findings, "topology.missing-sharp-an"), func(f checks.Finding) bool { return !strings.HasPrefix(f.Title, "Leaf ") })
			if len(fs) != 1 {
				t.Fatalf("%d topology.missing-sharp-an findings, want one for the leaf at LID 13:%s", len(fs), titles(fs))
			}
			f := fs[0]
			if f.Severity.String() != "warning" || len(f.Entities) != 1 || checks.EntityGUID(f.Entities[0]) != 0xfc6a1c030091cf00 {
				t.Errorf("want a warning on the leaf 0xfc6a1c030091cf00 alone, got %s on %v", f.Severity, f.Entities)
			}
			if !strings.Contains(f.Title, "where its 7 peer leaves have one") {
				t.Errorf("title %q: want the 7 peers", f.Title)
			}
			ev := f.Evidence[0].Text
			if !strings.Contains(ev, "7 of the 8 Quantum-2 leaves") || !strings.Contains(ev, "port 65") {
				t.Errorf("evidence %q: want how many peers have one, and on which port", ev)
			}
			if !strings.Contains(f.Action, "sharp_am") || !strings.Contains(f.Action, "ibnetdiscover") {
				t.Errorf("action %q: want the AN's switch configuration and ibnetdiscover", f.Action)
			}
			for _, u := range res.Undecided {
				if u.Check == "topology.missing-sharp-an" {
					t.Errorf("undecided on a complete capture: %s: %s", u, u.Reason)
				}
			}
		})
	}
}

// TestCorpusSpineWithoutSharpAN (trial H2): the capture's one spine, the
// MQM9700 0xb0cf0e0300d33fc0 joining the 8 rail leaves, has no AN either
// (ibdiagnet's own PORT_HIERARCHY_MISSING on its port 65): no SHARP tree
// can span two leaves. Each file gives one warning naming it, with the 7
// leaves that have one and their 224 host ports.
func TestCorpusSpineWithoutSharpAN(t *testing.T) {
	for _, name := range []string{"quantum2-ndr-ibdiagnet2.ibnetdiscover", "quantum2-ndr-ibdiagnet2.lst", "quantum2-ndr-ibdiagnet2.db_csv"} {
		t.Run(name, func(t *testing.T) {
			res := corpusCheck(t, name, false)
			fs := slices.DeleteFunc(byCheck(res.Findings, "topology.missing-sharp-an"), func(f checks.Finding) bool { return strings.HasPrefix(f.Title, "Leaf ") })
			if len(fs) != 1 || len(fs[0].Entities) != 1 || checks.EntityGUID(fs[0].Entities[0]) != 0xb0cf0e0300d33fc0 || fs[0].Severity.String() != "warning" {
				t.Fatalf("want one warning on the spine 0xb0cf0e0300d33fc0:%s", titles(fs))
			}
			f := fs[0]
			if !strings.Contains(f.Title, "no switch above the leaves has one: SHARP trees cannot span the 7 leaves below it") {
				t.Errorf("title %q", f.Title)
			}
			if ev := f.Evidence[0].Text; !strings.Contains(ev, "joins 7 leaves with a SHARP Aggregation Node: no Aggregation Node behind its port 65") {
				t.Errorf("evidence %q", ev)
			}
			if !strings.Contains(f.Impact.Summary, "every SHARP job with hosts on more than one leaf (the 224 host ports under them)") {
				t.Errorf("impact %q", f.Impact.Summary)
			}
		})
	}
}

// TestCorpusSharpANAsPlanned: the same capture given as its own expected
// topology (--expect-topology) is the plan: it has the leaf at LID 13
// without an AN, so that leaf is built so and nothing is reported.
func TestCorpusSharpANAsPlanned(t *testing.T) {
	res := corpusCheck(t, "quantum2-ndr-ibdiagnet2.ibnetdiscover", true)
	if fs := byCheck(res.Findings, "topology.missing-sharp-an"); len(fs) > 0 {
		t.Errorf("the plan has the leaf without an AN, yet:%s", titles(fs))
	}
}

// TestCorpusSharpANNoFalseAlarm: every other dump of the corpus stays
// quiet. The DGX SuperPOD has an Aggregation Node on each of its 31
// leaves (and 9 spines); the others have none, or too few leaves to
// compare.
func TestCorpusSharpANNoFalseAlarm(t *testing.T) {
	for _, name := range topologyCorpus {
		if strings.HasPrefix(name, "quantum2-") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			res := corpusCheck(t, name, false)
			if fs := byCheck(res.Findings, "topology.missing-sharp-an"); len(fs) > 0 {
				t.Errorf("want none, got:%s", titles(fs))
			}
			for _, u := range res.Undecided {
				if u.Check == "topology.missing-sharp-an" {
					t.Errorf("undecided: %s: %s", u, u.Reason)
				}
			}
		})
	}
}
