package checks

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// TestGateOversubscribedFromTheSweep: in a gate (a Scope) the check is
// the sweep's verdict on the switches of the job's part, not a judgement
// of the part (trial T7); verdicts of an older ibdoctor (no "checks")
// did not judge it, so the gate skips it and says why rather than judge
// its part or say nothing.
func TestGateOversubscribedFromTheSweep(t *testing.T) {
	f, err := topology.FatTree2{Leaves: 2, Spines: 2, HostsPerLeaf: 12}.Build()
	if err != nil {
		t.Fatal(err)
	}
	s := &Snapshot{Fabric: f}
	res, err := Run(s)
	if err != nil {
		t.Fatal(err)
	}
	v := FabricWide(s, res, time.Unix(1e9, 0))
	if !v.Judged("topology.oversubscribed") || !v.Judged("routing.ecmp-imbalance") {
		t.Fatalf("the sweep's verdicts judged %q", v.Checks)
	}
	// As a gate reads them: JSON, which drops the entities' NodeGUID.
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var read FabricVerdicts
	if err := json.Unmarshal(b, &read); err != nil {
		t.Fatal(err)
	}
	job := ScopeFor(f, []*fabric.Node{node(t, f, "gpu001")})
	gate := func(v *FabricVerdicts) *Result {
		res, err := Run(&Snapshot{Fabric: f, Scope: job, FabricRouting: v}, "topology.oversubscribed")
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	fs := gate(&read).Findings
	if len(fs) != 1 || !strings.Contains(fs[0].Title, "2 leaves are oversubscribed 6.0:1") || !slices.ContainsFunc(fs[0].Evidence, func(e Evidence) bool { return e.Name == "judged" }) {
		t.Errorf("gate with the sweep's verdicts: %+v", fs)
	}
	old := read
	old.Checks = nil
	if old.Judged("topology.oversubscribed") || !old.Judged("routing.ecmp-imbalance") {
		t.Errorf("an older ibdoctor's verdicts judged ecmp only")
	}
	for _, v := range []*FabricVerdicts{&old, nil} {
		r := gate(v)
		if len(r.Findings) != 0 || len(r.Skipped) != 1 || !strings.Contains(r.Skipped[0].Reason, "run 'ibdoctor sweep'") {
			t.Errorf("gate without the sweep's verdict: findings %+v, skipped %+v; want it skipped with the reason", r.Findings, r.Skipped)
		}
	}
}
