package gate

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/snapshot"
)

// sweptWith is sweptWithCounters with set run on the swept simulator
// first, the state loaded back as a gate loads it (gate.idx).
func sweptWith(t *testing.T, set func(*sim.Sim)) *snapshot.Snapshot {
	t.Helper()
	s, err := sim.New(build(t, tree4x4), sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	set(s)
	e := engineAt(t, s, "gpu001 mlx5_0")
	sw, err := diagnose.Run(context.Background(), e, diagnose.Options{Routes: true, Counters: true})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.New(sw.Fabric, sw.Counters, sw.Taken, "sim:test", "test", sw.Complete)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := snap.Save(dir); err != nil {
		t.Fatal(err)
	}
	back, err := snapshot.LoadForGate(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { back.Close() })
	return back
}

// TestGateGrowthAcrossAttributesUnknown: the growth since the sweep is
// computed by perf's one rule for an increase, as check's delta. leaf01's
// uplink has 145535 symbol errors; its 16-bit PortCounters field reads
// 65535, stuck.
//   - swept from PortCountersExtended (145535), read now from PortCounters
//     (65535, its PortCountersExtended dropped): before, the gate said the
//     counter was cleared since the sweep; the two fields cannot be
//     compared.
//   - read from PortCounters both times, stuck at 65535: before, a growth
//     of 0 (no growth); it may have grown by anything.
//
// Both are now undecided for counters.errors with the reason; no finding
// is on the since-snapshot basis for the port.
func TestGateGrowthAcrossAttributesUnknown(t *testing.T) {
	f := build(t, tree4x4)
	up := uplinkTo(t, f, "leaf01", "gpu009")
	port := fmt.Sprintf("leaf01/%d", up)
	for _, c := range []struct {
		name       string
		sweptDrop  bool
		wantReason string
	}{
		{"extended then narrow", false, "PortCounters in one sample and PortCountersExtended in the other"},
		{"narrow both times, stuck", true, "stuck at its maximum"},
	} {
		t.Run(c.name, func(t *testing.T) {
			snap := sweptWith(t, func(s *sim.Sim) {
				if err := s.SetCounter(port, "SymbolErrorCounter", 145535); err != nil {
					t.Fatal(err)
				}
				if c.sweptDrop {
					if err := s.Drop("leaf01", "PortCountersExtended"); err != nil {
						t.Fatal(err)
					}
				}
			})
			live, err := sim.New(build(t, tree4x4), sim.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := live.SetCounter(port, "SymbolErrorCounter", 145535); err != nil {
				t.Fatal(err)
			}
			if err := live.Drop("leaf01", "PortCountersExtended"); err != nil {
				t.Fatal(err)
			}
			e := tappedEngine(t, live, "gpu020 mlx5_0", &classTap{})
			doc, err := Run(context.Background(), snap, e, job())
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, u := range doc.Undecided {
				if u.Check == "counters.errors" && u.Subject.Node == "leaf01" && u.Subject.Port == int(up) {
					found = strings.Contains(u.Reason, "since the saved sweep") && strings.Contains(u.Reason, c.wantReason)
					if !found {
						t.Errorf("undecided reason %q", u.Reason)
					}
				}
			}
			if !found {
				t.Errorf("leaf01/%d not undecided for counters.errors; undecided %+v", up, doc.Undecided)
			}
			for _, fd := range doc.Findings {
				if fd.Check == "counters.errors" && fd.Basis == "since-snapshot" {
					t.Errorf("a growth judged across readings that cannot be compared: %s %q", fd.Basis, fd.Title)
				}
				if strings.Contains(fd.Title+fmt.Sprint(fd.Evidence), "cleared since the sweep") {
					t.Errorf("a change of attribute read as a clear: %q %v", fd.Title, fd.Evidence)
				}
			}
		})
	}
}
