package checks_test

import (
	"strings"
	"testing"
)

// TestCorpusOneFindingPerPort (trial H6): on the Quantum-2 db_csv the one
// bad link at is-north-7-compute-27 mlx5_11 made three warnings (its
// SymbolErrorCounter saturated, PortRcvErrors 1436771, PortXmitDiscards
// 111911), ranked like three problems, and its 55 link-downs were only
// an "also". The counters since the clear on one port are one finding:
// the most telling counter first, every one in its evidence, the
// link-downs in the title.
func TestCorpusOneFindingPerPort(t *testing.T) {
	res := corpusCheckIncreases(t, "quantum2-ndr-ibdiagnet2.db_csv")
	per := map[string]int{}
	for _, f := range byCheck(res.Findings, "counters.errors") {
		per[f.Entities[0].String()]++
		if f.Entities[0].String() != "is-north-7-compute-27 mlx5_11/1" {
			continue
		}
		if !strings.HasPrefix(f.Title, "SymbolErrorCounter saturated (at least 65535), PortRcvErrors 1436771, PortXmitDiscards 111911 and 55 link-downs on is-north-7-compute-27 mlx5_11/1") ||
			!strings.HasSuffix(f.Title, "since the last clear; not growing while sampled") {
			t.Errorf("compute-27 mlx5_11 title %q", f.Title)
		}
		var names []string
		for _, e := range f.Evidence {
			switch e.Name {
			case "SymbolErrorCounter", "PortRcvErrors", "PortXmitDiscards":
				names = append(names, e.Name)
			}
		}
		if strings.Join(names, " ") != "SymbolErrorCounter PortRcvErrors PortXmitDiscards" || f.Evidence[0].Name != "SymbolErrorCounter" {
			t.Errorf("compute-27 mlx5_11 evidence order %v:\n%s", names, evidenceText(f))
		}
		if ev := evidenceText(f); !strings.Contains(ev, "LinkDownedCounter 55") || strings.Count(ev, "also on this port") != 1 {
			t.Errorf("compute-27 mlx5_11 evidence does not say the link-downs once:\n%s", ev)
		}
	}
	for port, n := range per {
		if n != 1 {
			t.Errorf("%s: %d counters.errors findings, want 1", port, n)
		}
	}
	if len(per) != 10 {
		t.Errorf("%d ports with counter findings, want 10 (9 host ports, 1 switch port's relay errors): %v", len(per), per)
	}
}
