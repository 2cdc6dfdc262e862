package checks_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// wantMisnamed checks that f is the misnamed-adapter warning, not a
// missing HCA with a cable to reseat, and that its title and evidence
// name each of want.
func wantMisnamed(t *testing.T, f checks.Finding, want ...string) {
	t.Helper()
	if f.Severity != checks.Warning || strings.Contains(f.Title, "missing") || strings.Contains(f.Action, "reseat") {
		t.Errorf("got %s %q\n  do: %s\nwant a warning that does not say missing nor reseat", f.Severity, f.Title, f.Action)
	}
	all := f.Title
	for _, e := range f.Evidence {
		all += "\n" + e.Text
	}
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("finding does not say %q:\n%s", w, all)
		}
	}
	if !strings.Contains(f.Action, "rdma-ndd") || !strings.Contains(f.Action, "node_desc") {
		t.Errorf("action does not give the fix: %s", f.Action)
	}
}

func guidOf(t *testing.T, f *fabric.Fabric, desc string) string {
	t.Helper()
	ns := f.NodesByName(desc)
	if len(ns) != 1 {
		t.Fatalf("%d nodes described %q", len(ns), desc)
	}
	return fmt.Sprintf("0x%016x", ns[0].GUID)
}

// TestMissingHCAMisnamedOnRails: on a rail-optimized fabric a host's
// adapters are on one leaf per rail, each on the port number the host has
// on every rail leaf (gpu003: leaf01/3, leaf02/3, leaf03/3, leaf04/3).
// An adapter answering at such a place under the firmware default,
// another host's description or "localhost" is that host's, misnamed:
// the finding names it (GUID, LID, leaf port), the host it most likely
// is and why, and the fix, not a cable to reseat (E1 on rails).
func TestMissingHCAMisnamedOnRails(t *testing.T) {
	base, err := topology.RailOptimized{Servers: 8, ServersPerLeaf: 4, Spines: 4, Hosts: topology.Hosts{HCAsPerServer: 4}}.Build()
	if err != nil {
		t.Fatal(err)
	}
	t.Run("firmware default", func(t *testing.T) {
		res := railSweep(t, `desc "gpu003 mlx5_2" text="MT4123 ConnectX6   Mellanox Technologies"`+"\n")
		f := oneMissingHCA(t, res.Findings)
		wantMisnamed(t, f, "gpu003's mlx5_2", "leaf03/3", guidOf(t, base, "gpu003 mlx5_2"), "LID",
			"port 3", "leaf01/3", "rail mlx5_2")
		if d := byCheck(res.Findings, "names.default-description"); len(d) > 0 {
			t.Errorf("names.default-description not folded into the finding:%s", titles(d))
		}
	})
	t.Run("another host's description", func(t *testing.T) {
		res := railSweep(t, `desc "gpu006 mlx5_1" text="gpu007 mlx5_1"`+"\n")
		f := oneMissingHCA(t, res.Findings)
		wantMisnamed(t, f, "gpu006's mlx5_1", "leaf06/2", `"gpu007 mlx5_1"`, guidOf(t, base, "gpu006 mlx5_1"), "port 2")
		if strings.Contains(f.Title, "leaf06/3") {
			t.Errorf("title %q names gpu007's own mlx5_1 (leaf06/3)", f.Title)
		}
		if d := byCheck(res.Findings, "names.duplicate-description"); len(d) > 0 {
			t.Errorf("names.duplicate-description not folded into the finding:%s", titles(d))
		}
	})
	t.Run("localhost", func(t *testing.T) {
		res := railSweep(t, `desc "gpu002 mlx5_3" text="localhost mlx5_3"`+"\n")
		f := oneMissingHCA(t, res.Findings)
		wantMisnamed(t, f, "gpu002's mlx5_3", "leaf04/2", `"localhost mlx5_3"`, guidOf(t, base, "gpu002 mlx5_3"))
	})
	t.Run("ubuntu, on two hosts", func(t *testing.T) {
		// Two adapters answer under Ubuntu's installer name: "ubuntu"
		// is no host of the fabric (names.default-description's
		// placeholderHost), whatever its adapter count (review R12).
		res := railSweep(t, `desc "gpu002 mlx5_3" text="ubuntu mlx5_3"`+"\n"+`desc "gpu006 mlx5_1" text="ubuntu mlx5_1"`+"\n")
		fs := byCheck(res.Findings, "topology.missing-hca")
		if len(fs) != 2 {
			t.Fatalf("want 2 topology.missing-hca, got:%s", titles(fs))
		}
		for _, f := range fs {
			switch {
			case strings.HasPrefix(f.Title, "gpu002"):
				wantMisnamed(t, f, "gpu002's mlx5_3", "leaf04/2", `"ubuntu mlx5_3"`, "the host name before one was set", guidOf(t, base, "gpu002 mlx5_3"))
			case strings.HasPrefix(f.Title, "gpu006"):
				wantMisnamed(t, f, "gpu006's mlx5_1", "leaf06/2", `"ubuntu mlx5_1"`, "the host name before one was set", guidOf(t, base, "gpu006 mlx5_1"))
			default:
				t.Errorf("finding on another host: %s", f.Title)
			}
		}
	})
	t.Run("its port down instead", func(t *testing.T) {
		// The misnamed adapter of another host does not make a missing
		// HCA a misnamed one: gpu003's mlx5_2 port is down.
		res := railSweep(t, "down \"gpu003 mlx5_2\"/1\ndesc \"gpu004 mlx5_2\" text=\"MT4123 ConnectX6   Mellanox Technologies\"\n")
		var got []checks.Finding
		for _, f := range byCheck(res.Findings, "topology.missing-hca") {
			if strings.HasPrefix(f.Title, "gpu003") {
				got = append(got, f)
			}
		}
		if len(got) != 1 || got[0].Severity == checks.Warning || !strings.Contains(got[0].Title, "mlx5_2 missing; leaf03/3 without a link") || strings.Contains(got[0].Title, "another name") {
			logFindings(t, res.Findings)
			t.Fatalf("gpu003's findings:%s\nwant one: its mlx5_2 is missing, leaf03/3 without a link; the adapter on leaf03/4 is gpu004's", titles(got))
		}
		// gpu004's misnamed mlx5_2 is still an adapter gpu004 has: it
		// counts among the peers that have one, so gpu003's finding is
		// as severe as with gpu004's named (before: 6 of the 7 other
		// hosts by name, under the clear majority, info).
		alone := railSweep(t, "down \"gpu003 mlx5_2\"/1\n")
		want := oneMissingHCA(t, alone.Findings)
		if got[0].Severity != want.Severity || !strings.Contains(got[0].Evidence[0].Text, "all 7 other gpu* hosts") {
			t.Errorf("gpu003's finding with gpu004's mlx5_2 misnamed: %s %q (%s)\nwant it as with gpu004's named: %s (%s)", got[0].Severity, got[0].Title, got[0].Evidence[0].Text, want.Severity, want.Evidence[0].Text)
		}
	})
}

// TestMissingHCAMisnamedOnRailsCouldNotTell: when the places do not tie
// an adapter answering under another name to one host, the finding does
// not guess: with hosts cabled out of port order it says it could not
// tell which host, and where two hosts lacking the device both use that
// port number it names both (never guess silently).
func TestMissingHCAMisnamedOnRailsCouldNotTell(t *testing.T) {
	build := func(t *testing.T) *fabric.Fabric {
		f, err := topology.RailOptimized{Servers: 16, ServersPerLeaf: 8, Spines: 2, Hosts: topology.Hosts{HCAsPerServer: 4}}.Build()
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	port := func(f *fabric.Fabric, leaf string, n int) *fabric.Port { return f.NodesByName(leaf)[0].Ports[n] }
	t.Run("hosts not on one port number", func(t *testing.T) {
		f := build(t)
		// Unit 1's rail-1 leaf takes its hosts in another order: no
		// port number says whose an adapter is.
		for n := 1; n <= 8; n += 2 {
			swapCables(port(f, "leaf02", n).Remote, port(f, "leaf02", n+1).Remote)
		}
		n := f.NodesByName("gpu003 mlx5_2")[0]
		n.Description = "MT4123 ConnectX6   Mellanox Technologies"
		f.Reindex()
		fs := byCheckSnap(t, f, "topology.missing-hca")
		if len(fs) != 1 {
			t.Fatalf("want 1 topology.missing-hca, got:%s", titles(fs))
		}
		t.Logf("%s %s\n    %v\n    do: %s", fs[0].Severity, fs[0].Title, fs[0].Evidence, fs[0].Action)
		for _, w := range []string{"gpu003", "mlx5_2", "could not tell which host", "leaf03/3"} {
			if !strings.Contains(fs[0].Title, w) {
				t.Errorf("title %q does not say %q", fs[0].Title, w)
			}
		}
		if !strings.Contains(fs[0].Action, "rdma-ndd") {
			t.Errorf("action does not offer the rename: %s", fs[0].Action)
		}
	})
	t.Run("two hosts could own it", func(t *testing.T) {
		f := build(t)
		// gpu003 and gpu004 both lack mlx5_2 by name (firmware default
		// on leaf03/3 and leaf03/4); gpu003's mlx5_3 is unplugged and
		// gpu004's mlx5_3 cable sits in leaf04/3, where gpu003's goes:
		// port 3 of the unit's leaves is gpu003's and gpu004's.
		for _, h := range []string{"gpu003", "gpu004"} {
			f.NodesByName(h + " mlx5_2")[0].Description = "MT4123 ConnectX6   Mellanox Technologies"
		}
		l3, l4 := port(f, "leaf04", 3), port(f, "leaf04", 4)
		mine, theirs := l3.Remote, l4.Remote
		mine.Remote, l4.Remote = nil, nil
		mine.State, mine.PhysState = 1, 2
		l4.State, l4.PhysState = 1, 2
		l3.Remote, theirs.Remote = theirs, l3
		f.Reindex()
		fs := byCheckSnap(t, f, "topology.missing-hca")
		var got *checks.Finding
		for i := range fs {
			t.Logf("%s %s\n    %v", fs[i].Severity, fs[i].Title, fs[i].Evidence)
			if strings.HasPrefix(fs[i].Title, "gpu003 ") {
				got = &fs[i]
			}
		}
		if got == nil {
			t.Fatalf("no finding for gpu003")
		}
		if got.Severity == checks.Warning || !strings.Contains(got.Title, "gpu004") || !strings.Contains(got.Title, "leaf03/3") {
			t.Errorf("gpu003: %s %q\nwant it to say the adapter on leaf03/3 may be gpu003's or gpu004's", got.Severity, got.Title)
		}
	})
}

// TestCorpusMisnamedRailHCA: the DGX SuperPOD file with one adapter of
// two hosts renamed: a08-p1-dgx-04-c05's mlx5_4 answering under the
// firmware default, b07-p1-dgx-07-c03's HCA-2 under its neighbour's
// description. Each host's adapters are on port 5 (3) of their unit's
// rail leaves; the renamed adapter is on that port of the fourth: each
// finding names the adapter, the host and why, not a missing HCA.
func TestCorpusMisnamedRailHCA(t *testing.T) {
	p := corpusFile(t, "dgx-ndr-2025.ibnetdiscover")
	s, _, err := sim.Load(context.Background(), p, "", sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := sim.ParseFaults(strings.NewReader(`desc "a08-p1-dgx-04-c05 mlx5_4" text="MT4129 ConnectX7   Mellanox Technologies"
desc "b07-p1-dgx-07-c03 HCA-2" text="b07-p1-dgx-07-c04 HCA-2"
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ApplyFaults(fs); err != nil {
		t.Fatal(err)
	}
	sw := sweepOf(t, s, true)
	sw.RoutesComputed = true
	res, err := checks.Run(sw.Snapshot(checks.Expectations{}, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	byHost := map[string]checks.Finding{}
	for _, f := range byCheck(res.Findings, "topology.missing-hca") {
		if h, _, _ := strings.Cut(f.Title, " "); strings.HasPrefix(h, "a08-p1-dgx-04-c05") || strings.HasPrefix(h, "b07-p1-dgx-07-c0") {
			byHost[strings.TrimSuffix(h, "'s")] = f
		} else {
			t.Logf("other: %s", f.Title)
		}
	}
	if len(byHost) != 2 {
		t.Fatalf("findings of the renamed hosts: %v, want a08-p1-dgx-04-c05 and b07-p1-dgx-07-c03", byHost)
	}
	a := byHost["a08-p1-dgx-04-c05"]
	t.Logf("%s %s\n    %v\n    do: %s", a.Severity, a.Title, a.Evidence, a.Action)
	wantMisnamed(t, a, "a08-p1-dgx-04-c05's mlx5_4", "MF0;A09-P1-IBLEAF-03-04:MQM9701/U1/5", "0xe09d7303007a528c", "LID 677", "port 5")
	b := byHost["b07-p1-dgx-07-c03"]
	t.Logf("%s %s\n    %v\n    do: %s", b.Severity, b.Title, b.Evidence, b.Action)
	wantMisnamed(t, b, "b07-p1-dgx-07-c03's HCA-2", "MF0;B09-P1-IBLEAF-02-07:MQM9701/U1/3", `"b07-p1-dgx-07-c04 HCA-2"`, "port 3")
	if d := byCheck(res.Findings, "names.duplicate-description"); len(d) > 0 {
		t.Errorf("names.duplicate-description not folded:%s", titles(d))
	}
}
