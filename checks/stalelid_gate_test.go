package checks

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// TestGateStaleMasterLIDFromItsField: a gate takes the master SM LID of
// the sweep's sm.stale-master-lid from the verdicts' master_lids, not by
// parsing the finding's title (smgate's note: a reworded title made the
// gate repeat the sweep's error on a LID a port owns now).
func TestGateStaleMasterLIDFromItsField(t *testing.T) {
	f, err := topology.Routed(topology.FatTree2{Leaves: 2, Spines: 2, HostsPerLeaf: 2})
	if err != nil {
		t.Fatal(err)
	}
	owner := node(t, f, "gpu002").Ports[1]
	if owner == nil || owner.LID == 0 {
		t.Fatal("gpu002 has no LID")
	}
	end := node(t, f, "gpu001")
	title := fmt.Sprintf("master SM LID %d is named by 3 active ports and no port owns it", owner.LID) // not the check's wording
	sweep := FabricVerdicts{Taken: time.Unix(1e9, 0).UTC(), Checks: []string{"sm.stale-master-lid"}, Findings: []Finding{{
		Check: "sm.stale-master-lid", Severity: Error, Title: title,
		Entities: []Entity{{GUID: fmt.Sprintf("%#016x", end.GUID), Node: end.Description, Port: 1, Role: "end"}},
		Evidence: []Evidence{}, Action: "start the SM",
	}}}
	b, err := json.Marshal(sweep)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["master_lids"] = map[string]uint16{title: owner.LID}
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	var read FabricVerdicts
	if err := json.Unmarshal(b, &read); err != nil {
		t.Fatal(err)
	}
	res, err := Run(&Snapshot{Fabric: f, Scope: ScopeFor(f, []*fabric.Node{end}), FabricRouting: &read}, "sm.stale-master-lid")
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range res.Findings {
		t.Errorf("gate repeated the sweep's %s %s %q though %s owns the LID now", fd.Severity, fd.Check, fd.Title, owner.Node.Description)
	}
	if len(res.Undecided) != 1 || res.Undecided[0].Check != "sm.stale-master-lid" {
		t.Errorf("undecided %+v, want sm.stale-master-lid", res.Undecided)
	}

	// Verdicts saved before master_lids: the title has the check's
	// wording, which is read.
	var older FabricVerdicts
	if err := json.Unmarshal(b, &older); err != nil {
		t.Fatal(err)
	}
	older.MasterLIDs = nil
	older.Findings[0].Title = fmt.Sprintf("3 active ports name master SM LID %d, a LID no port of the fabric owns", owner.LID)
	res, err = Run(&Snapshot{Fabric: f, Scope: ScopeFor(f, []*fabric.Node{end}), FabricRouting: &older}, "sm.stale-master-lid")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 0 || len(res.Undecided) != 1 {
		t.Errorf("older verdicts: findings %+v, undecided %+v; want it undecided", res.Findings, res.Undecided)
	}

	// The sweep's side: FabricWide keeps each finding's LID.
	sw := &Result{Ran: []string{"sm.stale-master-lid"}, Findings: []Finding{{Check: "sm.stale-master-lid", Severity: Error, Title: title, masterLID: owner.LID}}}
	v := FabricWide(&Snapshot{Fabric: f}, sw, time.Unix(1e9, 0))
	if v == nil || v.MasterLIDs[title] != owner.LID {
		t.Errorf("the sweep's verdicts keep master_lids %+v, want %q: %d", v, title, owner.LID)
	}
}
