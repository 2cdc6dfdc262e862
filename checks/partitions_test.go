package checks_test

import (
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
)

// partitionSweep sweeps the healthy sample fabric after faults and runs
// the partition checks, over the whole fabric or (hosts given) as a
// gate's job over those hosts' nodes.
func partitionSweep(t *testing.T, faults string, hosts ...string) []checks.Finding {
	t.Helper()
	s, err := sim.SampleHealthy(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := sim.ParseFaults(strings.NewReader(faults))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ApplyFaults(fs); err != nil {
		t.Fatal(err)
	}
	sw := sweepOf(t, s, true)
	if sw.Partitions == nil || len(sw.Partitions.Unread) != 0 {
		t.Fatalf("P_Key tables not read: %+v", sw.Partitions)
	}
	var scope *checks.Scope
	if len(hosts) > 0 {
		var nodes []*fabric.Node
		for _, h := range hosts {
			for _, n := range sw.Fabric.Nodes {
				if strings.HasPrefix(n.Description, h+" ") {
					nodes = append(nodes, n)
				}
			}
		}
		scope = checks.ScopeFor(sw.Fabric, nodes)
	}
	res, err := checks.Run(sw.Snapshot(checks.Expectations{}, nil, scope), "partition.isolated", "partition.switch-drops", "partition.job-mismatch")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Findings {
		t.Logf("%s %s: %s\n    %s", f.Severity, f.Check, f.Title, f.Evidence[0])
	}
	return res.Findings
}

// TestPartitionsHealthy: every port in the default partition (what an
// SM without partitions.conf gives): nothing, fabric-wide or for a job.
func TestPartitionsHealthy(t *testing.T) {
	if fs := partitionSweep(t, ""); len(fs) != 0 {
		t.Errorf("%d findings on the healthy fabric", len(fs))
	}
	if fs := partitionSweep(t, "", "gpu001", "gpu002", "gpu005"); len(fs) != 0 {
		t.Errorf("%d findings for a healthy job", len(fs))
	}
}

// TestPartitionIsolated: a host port left only in a partition nobody
// else holds, and two ports that are only limited members of one, can
// talk to no other host: partition.isolated names each.
func TestPartitionIsolated(t *testing.T) {
	fs := partitionSweep(t, `pkey "gpu003 mlx5_0"/1 keys=0x8002
pkey "gpu004 mlx5_1"/1 keys=0x0005
pkey "gpu004 mlx5_2"/1 keys=0x0005
pkey "gpu004 mlx5_3"/1 keys=0x0006,0x7fff
`)
	iso := byCheck(fs, "partition.isolated")
	var names []string
	for _, f := range iso {
		if f.Severity != checks.Error {
			t.Errorf("%s: %s", f.Severity, f.Title)
		}
		names = append(names, f.Entities[0].String())
	}
	// gpu004 mlx5_3 is a limited member of the default partition, in
	// which everybody else is full: it can talk to them.
	want := "gpu003 mlx5_0/1,gpu004 mlx5_1/1,gpu004 mlx5_2/1"
	if strings.Join(names, ",") != want {
		t.Errorf("isolated %v, want %s", names, want)
	}
}

// TestPartitionSwitchDrops: a leaf port that enforces partitions and
// lacks the host's second partition drops its traffic there (error); a
// leaf port whose table is empty cuts the host off (critical).
func TestPartitionSwitchDrops(t *testing.T) {
	fs := partitionSweep(t, `pkey "gpu001 mlx5_0"/1 keys=0xffff,0x8001
pkey leaf01/1 keys=0xffff enforce=on
pkey leaf01/2 keys=none enforce=on
pkey leaf01/3 keys=0xffff enforce=off
`)
	d := byCheck(fs, "partition.switch-drops")
	if len(d) != 2 {
		t.Fatalf("%d partition.switch-drops findings, want 2", len(d))
	}
	for _, f := range d {
		switch f.Entities[0].String() {
		case "leaf01/1":
			if f.Severity != checks.Error || !strings.Contains(f.Title, "lacks 0x8001 of gpu001 mlx5_0") {
				t.Errorf("leaf01/1: %s %s", f.Severity, f.Title)
			}
		case "leaf01/2":
			if f.Severity != checks.Critical || !strings.Contains(f.Title, "lacks 0xffff") || !strings.Contains(f.Title, "cut off") {
				t.Errorf("leaf01/2: %s %s", f.Severity, f.Title)
			}
		default:
			t.Errorf("unexpected %s", f.Title)
		}
	}
}

// TestPartitionJob: a job whose hosts sit in two partitions with no
// full member in common cannot start (critical, naming both sides); one
// whose hosts all share the default partition but where one lacks the
// job's second partition gets a warning naming it.
func TestPartitionJob(t *testing.T) {
	var b strings.Builder
	for _, h := range []string{"gpu001", "gpu002"} {
		for i := 0; i < 8; i++ {
			b.WriteString(`pkey "` + h + ` mlx5_` + string(rune('0'+i)) + `"/1 keys=0x8010` + "\n")
		}
	}
	for i := 0; i < 8; i++ {
		b.WriteString(`pkey "gpu005 mlx5_` + string(rune('0'+i)) + `"/1 keys=0x8020` + "\n")
	}
	fs := partitionSweep(t, b.String(), "gpu001", "gpu002", "gpu005")
	iso := byCheck(fs, "partition.isolated")
	if len(iso) != 1 || iso[0].Severity != checks.Critical || !strings.Contains(iso[0].Title, "128 pairs") {
		t.Fatalf("job isolated: %d findings", len(iso))
	}

	b.Reset()
	for _, h := range []string{"gpu001", "gpu002", "gpu005"} {
		for i := 0; i < 8; i++ {
			if h == "gpu005" && i == 3 {
				continue
			}
			b.WriteString(`pkey "` + h + ` mlx5_` + string(rune('0'+i)) + `"/1 keys=0xffff,0x8010` + "\n")
		}
	}
	fs = partitionSweep(t, b.String(), "gpu001", "gpu002", "gpu005")
	if n := len(byCheck(fs, "partition.isolated")); n != 0 {
		t.Errorf("%d partition.isolated, want none (all share 0xffff)", n)
	}
	mm := byCheck(fs, "partition.job-mismatch")
	if len(mm) != 1 || mm[0].Severity != checks.Warning || !strings.Contains(mm[0].Title, "1 of the job's 24 host ports lack partition 0x8010 that") || mm[0].Entities[0].String() != "gpu005 mlx5_3/1" {
		t.Errorf("job mismatch: %d findings", len(mm))
	} else if a := mm[0].Action; !strings.Contains(a, "partitions.conf writes it as 0x0010") || !strings.Contains(a, "full") {
		// partitions.conf uses the key's low 15 bits and gives the
		// membership per port (=full, =limited): 0x8010 is not in it
		// (review R10).
		t.Errorf("job mismatch action %q: want the partitions.conf spelling 0x0010 and the membership", a)
	}
}
