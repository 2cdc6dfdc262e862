package checks_test

import (
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
)

// hcaPorts returns, by host entity, the switch ports a
// topology.missing-hca finding names as where the cable belongs.
func hcaPorts(fs []checks.Finding) map[string][]string {
	out := map[string][]string{}
	for _, f := range byCheck(fs, "topology.missing-hca") {
		host := ""
		var ports []string
		for _, e := range f.Entities {
			switch {
			case e.Role == "host":
				host = strings.Fields(e.Node)[0]
			case e.Port > 0:
				ports = append(ports, e.String())
			}
		}
		out[host] = ports
	}
	return out
}

// TestMissingHCANamesOnlyItsPort (trial F1): on the sample (gpu012
// mlx5_3 Polling at leaf03/28) gpu009 mlx5_4's cable at leaf03/5 goes
// down too. With a baseline that has gpu009 mlx5_4 at leaf03/5, link.down
// reports that cable, and gpu012's finding must not name leaf03/5 as
// where its cable belongs (nor get its lost LID); before, it named
// leaf03/5 first, and the .prom peer label moved there. Without a
// baseline nothing ties either port to either host: both findings say
// they could not tell which port, and name neither (before, each named
// both and gpu009's carried both lost LIDs).
func TestMissingHCANamesOnlyItsPort(t *testing.T) {
	_, before := incidentWith(t, "")
	base := checks.BaselineOf(before.Fabric)

	_, sw := incidentWith(t, "down leaf03/5\n")
	res, err := checks.Run(sw.Snapshot(checks.Expectations{}, base, nil))
	if err != nil {
		t.Fatal(err)
	}
	got := hcaPorts(res.Findings)
	if len(got) != 1 || strings.Join(got["gpu012"], ",") != "leaf03/28" {
		t.Errorf("with a baseline: missing-hca ports %v, want gpu012 at leaf03/28 alone", got)
	}
	for _, f := range byCheck(res.Findings, "topology.missing-hca") {
		for _, e := range f.Evidence {
			if e.Name == "lost LIDs" && strings.Contains(e.Text, "leaf03/5") {
				t.Errorf("gpu012's finding carries leaf03/5's lost LID: %s", e.Text)
			}
		}
	}
	res, _ = incidentWith(t, "down leaf03/5\n")
	got = hcaPorts(res.Findings)
	if len(got) != 2 || len(got["gpu009"]) != 0 || len(got["gpu012"]) != 0 {
		t.Errorf("without a baseline: missing-hca ports %v, want gpu009 and gpu012 naming no port", got)
	}
	for _, f := range byCheck(res.Findings, "topology.missing-hca") {
		if !strings.Contains(f.Title, "could not tell which port") {
			t.Errorf("without a baseline: %q does not say it could not tell which port", f.Title)
		}
	}
}
