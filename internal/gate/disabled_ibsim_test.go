package gate

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/ibsimtest"
	"github.com/ibdoctor/ibdoctor/internal/snapshot"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/internal/transport/ibsim"
)

// TestGateDisabledPortIBSim (trial F3) on ibsim beside the C tools: after
// the sweep `ibportstate` disables leaf01/2, gpu002's only link. smpquery
// reads the port PhysLinkState Disabled, LinkState still Active; the gate
// re-reads it and must call the link down (exit 1's class) as check does,
// not follow the route into it and call gpu002 unanswered (undecided).
// It sends gpu002 nothing (trial F8): the HCA behind a port read without
// a link cannot answer, and before, the gate waited out its timeout.
func TestGateDisabledPortIBSim(t *testing.T) {
	ibsimtest.Require(t, "opensm", "smpquery", "ibportstate")
	net, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "ibnetdiscover", "hdr.net"))
	if err != nil {
		t.Fatal(err)
	}
	s := ibsimtest.Start(t, string(net))
	s.StartOpenSM(ibsimtest.OpenSMOptions{Host: "gpu001", Once: true})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := ibsim.Dial(ctx, ibsim.Options{SockName: s.SockName, Host: "gpu001"})
	if err != nil {
		t.Fatal(err)
	}
	tap := &sentTap{}
	e := transport.NewEngine(c, transport.Options{Timeout: 200 * time.Millisecond, Retries: -1, Tap: tap})
	defer e.Close()
	sw, err := diagnose.Run(ctx, e, diagnose.Options{Routes: true, Counters: true})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.New(sw.Fabric, sw.Counters, sw.Taken, "ibsim:test", "test", sw.Complete)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := snap.Save(dir); err != nil {
		t.Fatal(err)
	}
	hca := sw.Fabric.NodesByName("gpu002 mlx5_0")
	if len(hca) != 1 || hca[0].Ports[1] == nil || hca[0].Ports[1].Remote == nil || hca[0].Ports[1].Remote.Num != 2 {
		t.Fatalf("gpu002 mlx5_0 not found cabled to port 2: %v", hca)
	}
	leaf := hca[0].Ports[1].Remote.Node
	lid := strconv.Itoa(int(leaf.Ports[0].LID))
	s.MustRun("gpu001", "ibportstate", lid, "2", "disable")
	pi := s.MustRun("gpu001", "smpquery", "portinfo", lid, "2")
	if !strings.Contains(pi, "PhysLinkState:...................Disabled") || !strings.Contains(pi, "LinkState:.......................Active") {
		t.Fatalf("smpquery portinfo %s 2 after disable: want PhysLinkState Disabled, LinkState Active:\n%s", lid, pi)
	}

	g, err := snapshot.LoadForGate(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	tap.armed.Store(true)
	doc, err := Run(ctx, g, e, Options{Hosts: []string{"gpu002"}, FailOn: checks.Error, ByLID: true, Source: "ibsim:test", Counters: true})
	if err != nil {
		t.Fatal(err)
	}
	local := sw.Fabric.NodeByGUID(e.Local().NodeGUID).Ports[e.Local().PortNum]
	if n := tap.to(sw.Fabric, local, hca[0]); n != 0 {
		t.Errorf("%d MADs sent to gpu002 mlx5_0, behind %s/2 read Disabled; want none", n, leaf.Description)
	}
	if doc.Status != "unhealthy" || len(doc.Undecided) != 0 {
		t.Fatalf("status %q, want unhealthy with nothing undecided\nfindings %+v\nunreached %+v\nundecided %+v", doc.Status, doc.Findings, doc.Unreached, doc.Undecided)
	}
	found := false
	for _, f := range doc.Findings {
		found = found || (f.Severity >= checks.Error && len(f.Entities) > 0 && f.Entities[0].Node == leaf.Description && f.Entities[0].Port == 2)
	}
	if !found {
		t.Errorf("no error naming %s/2: %+v", leaf.Description, doc.Findings)
	}
}
