package checks_test

import (
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/sim"
)

// limitHDR returns faults that cap the named hosts' mlx5_6 ports at HDR
// (an HDR HCA in the NDR sample), one line each.
func limitHDR(hosts ...string) string {
	var b strings.Builder
	for _, h := range hosts {
		b.WriteString(`limit "` + h + ` mlx5_6"/1 speed=HDR` + "\n")
	}
	return b.String()
}

// TestSlowerHardwareOneHCA: one HDR HCA among the sample's 256 NDR host
// links trains at HDR, the best both ends support, so link.degraded-speed
// is right to stay quiet; before link.slower-hardware nothing said that
// this host's hardware caps its rail at half what its peers run.
func TestSlowerHardwareOneHCA(t *testing.T) {
	all := sampleWith(t, limitHDR("gpu027"), false)
	if d := append(byCheck(all, "link.degraded-speed"), byCheck(all, "link.degraded-width")...); len(d) > 0 {
		t.Errorf("a link at its hardware's best is not degraded:%s", titles(d))
	}
	fs := byCheck(all, "link.slower-hardware")
	if len(fs) != 1 {
		t.Fatalf("want 1 link.slower-hardware, got %d:%s", len(fs), titles(fs))
	}
	f := fs[0]
	t.Logf("%s\n    %v\n    %s\n    %s", f.Title, f.Evidence, f.Impact.Summary, f.Action)
	if f.Severity != checks.Info {
		t.Errorf("severity %s, want info", f.Severity)
	}
	if len(f.Entities) == 0 || f.Entities[0].String() != "gpu027 mlx5_6/1" {
		t.Errorf("entities %v, want gpu027 mlx5_6/1 first (the end whose hardware is slower)", f.Entities)
	}
	if !strings.Contains(f.Title, "gpu027 mlx5_6/1") || !strings.Contains(f.Title, "HDR") || !strings.Contains(f.Title, "NDR") {
		t.Errorf("title %q does not name the HCA port, its rate and its peers'", f.Title)
	}
	if f.Impact.LostGbps != 200 {
		t.Errorf("LostGbps %v, want 200 (4X NDR 400 - 4X HDR 200)", f.Impact.LostGbps)
	}
	if f.Impact.Score <= 0 || f.Impact.Slowdown != 2 {
		t.Errorf("impact %+v: want a score and a 2x all-reduce slowdown", f.Impact)
	}
	text := ""
	for _, e := range f.Evidence {
		text += e.Text + "\n"
	}
	for _, want := range []string{"supported", "255 of 256"} {
		if !strings.Contains(text, want) {
			t.Errorf("evidence does not say %q:\n%s", want, text)
		}
	}
	if !strings.Contains(strings.ToLower(f.Action), "replace") || !strings.Contains(f.Action, "keep reporting") {
		t.Errorf("action %q", f.Action)
	}
}

// TestSlowerHardwareSubFleet: three HDR HCAs among the NDR ones are a
// deliberate sub-fleet, not a swap: no finding (docs/checks.md).
func TestSlowerHardwareSubFleet(t *testing.T) {
	all := sampleWith(t, limitHDR("gpu003", "gpu014", "gpu027"), false)
	if fs := byCheck(all, "link.slower-hardware"); len(fs) > 0 {
		t.Errorf("sub-fleet of 3 reported:%s", titles(fs))
	}
	// Two are still a clear minority: one finding each.
	if fs := byCheck(sampleWith(t, limitHDR("gpu014", "gpu027"), false), "link.slower-hardware"); len(fs) != 2 {
		t.Errorf("two HDR HCAs: want 2 findings, got:%s", titles(fs))
	}
}

// TestSlowerHardwareHealthy: the healthy sample has none.
func TestSlowerHardwareHealthy(t *testing.T) {
	if fs := byCheck(sampleWith(t, "", false), "link.slower-hardware"); len(fs) > 0 {
		t.Errorf("healthy sample:%s", titles(fs))
	}
}

// TestSlowerHardwareSample: the built-in sample's planted "HDR HCA
// swapped into the NDR fabric" is reported, and nothing else is.
func TestSlowerHardwareSample(t *testing.T) {
	s, err := sim.Sample(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := checks.Run(sweepOf(t, s, false).Snapshot(checks.Expectations{}, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	fs := byCheck(res.Findings, "link.slower-hardware")
	if len(fs) != 1 || fs[0].Entities[0].String() != "gpu027 mlx5_6/1" {
		t.Errorf("want gpu027 mlx5_6/1 only, got:%s", titles(fs))
	}
}

// TestCorpusSlowerHardwareQuiet: the real dumps (mixed generations, FDR10
// cables, HDR100 boards) have no lone link capped by its hardware below
// its peers.
func TestCorpusSlowerHardwareQuiet(t *testing.T) {
	for _, name := range topologyCorpus {
		t.Run(name, func(t *testing.T) {
			res := corpusCheck(t, name, false)
			if fs := byCheck(res.Findings, "link.slower-hardware"); len(fs) > 0 {
				t.Errorf("%d findings:%s", len(fs), titles(fs))
			}
		})
	}
}

// TestSlowerHardwareOtherModel: the swap as it happens — a ConnectX-6 (an
// HDR board, its own device ID) in a host whose 255 peers carry
// ConnectX-7s at NDR. Its model has no peers of its own, so the per-model
// rule saw nothing; the host's peers (same name pattern and HCA naming)
// run NDR, and its hardware stops at HDR.
func TestSlowerHardwareOtherModel(t *testing.T) {
	s, err := sim.SampleHealthy(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := sim.ParseFaults(strings.NewReader(limitHDR("gpu027")))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ApplyFaults(fs); err != nil {
		t.Fatal(err)
	}
	sw := sweepOf(t, s, true)
	asCX6 := func(desc string) {
		t.Helper()
		for _, n := range sw.Fabric.Nodes {
			if n.Description == desc {
				n.DeviceID = 0x101b // ConnectX-6
				return
			}
		}
		t.Fatalf("no node %q", desc)
	}
	asCX6("gpu027 mlx5_6")
	res, err := checks.Run(sw.Snapshot(checks.Expectations{}, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	got := byCheck(res.Findings, "link.slower-hardware")
	if len(got) == 1 {
		t.Logf("%s\n    %v", got[0].Title, got[0].Evidence)
	}
	if len(got) != 1 || got[0].Entities[0].String() != "gpu027 mlx5_6/1" {
		t.Fatalf("want 1 link.slower-hardware on gpu027 mlx5_6/1, got:%s", titles(got))
	}
	text := ""
	for _, e := range got[0].Evidence {
		text += e.Text + "\n"
	}
	if !strings.Contains(text, "ConnectX-6") || !strings.Contains(text, "gpu") {
		t.Errorf("evidence should name the board and the hosts it is compared with:\n%s", text)
	}
	if d := append(byCheck(res.Findings, "link.degraded-speed"), byCheck(res.Findings, "link.degraded-width")...); len(d) > 0 {
		t.Errorf("a ConnectX-6 at HDR is not degraded:%s", titles(d))
	}

	// Three hosts with ConnectX-6 boards are a sub-fleet: quiet.
	s2, _ := sim.SampleHealthy(sim.Options{})
	fs2, _ := sim.ParseFaults(strings.NewReader(limitHDR("gpu003", "gpu014", "gpu027")))
	if err := s2.ApplyFaults(fs2); err != nil {
		t.Fatal(err)
	}
	sw = sweepOf(t, s2, true)
	for _, h := range []string{"gpu003", "gpu014", "gpu027"} {
		asCX6(h + " mlx5_6")
	}
	res, err = checks.Run(sw.Snapshot(checks.Expectations{}, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := byCheck(res.Findings, "link.slower-hardware"); len(got) > 0 {
		t.Errorf("three ConnectX-6 hosts are a sub-fleet, reported:%s", titles(got))
	}
}
