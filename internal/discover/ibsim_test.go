package discover

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/ibsimtest"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/internal/transport/ibsim"
)

var (
	ibndNode = regexp.MustCompile(`^(Switch|Ca|Rt)\s+(\d+)\s+"[SHR]-([0-9a-f]+)"`)
	ibndPort = regexp.MustCompile(`^\[(\d+)\].*?"[SHR]-([0-9a-f]+)"\[(\d+)\]`)
)

// ibnetdiscoverLinks parses ibnetdiscover's topology output into node
// GUIDs and canonical link strings.
func ibnetdiscoverLinks(t *testing.T, out string) (nodes []string, links []string) {
	t.Helper()
	var cur string
	seen := map[string]bool{}
	for line := range strings.Lines(out) {
		if m := ibndNode.FindStringSubmatch(line); m != nil {
			cur = m[3]
			nodes = append(nodes, cur)
			continue
		}
		if m := ibndPort.FindStringSubmatch(line); m != nil && cur != "" {
			lp, _ := strconv.Atoi(m[1])
			rg, _ := strconv.ParseUint(m[2], 16, 64)
			rp, _ := strconv.Atoi(m[3])
			cg, _ := strconv.ParseUint(cur, 16, 64)
			l := linkKey(cg, uint8(lp), rg, uint8(rp))
			if !seen[l] {
				seen[l] = true
				links = append(links, l)
			}
		}
	}
	slices.Sort(nodes)
	slices.Sort(links)
	return nodes, links
}

func linkKey(ag uint64, ap uint8, bg uint64, bp uint8) string {
	if bg < ag || (bg == ag && bp < ap) {
		ag, ap, bg, bp = bg, bp, ag, ap
	}
	return fmt.Sprintf("%016x[%d]-%016x[%d]", ag, ap, bg, bp)
}

func fabricLinks(fab *fabric.Fabric) (nodes []string, links []string) {
	for _, n := range fab.Nodes {
		nodes = append(nodes, fmt.Sprintf("%016x", n.GUID))
	}
	for _, l := range fab.Links() {
		links = append(links, linkKey(l.A.Node.GUID, l.A.Num, l.B.Node.GUID, l.B.Num))
	}
	slices.Sort(nodes)
	slices.Sort(links)
	return nodes, links
}

// TestAgainstIbnetdiscover discovers an ibsim fat tree through ibsim's
// socket protocol and compares nodes and links with what ibnetdiscover
// (under libumad2sim) finds on the same fabric.
func TestAgainstIbnetdiscover(t *testing.T) {
	ibsimtest.Require(t, "ibnetdiscover")
	s := ibsimtest.Start(t, ibsimtest.FatTree(6, 4, 3))
	out := s.MustRun("h0001", "ibnetdiscover")
	wantNodes, wantLinks := ibnetdiscoverLinks(t, out)
	if len(wantNodes) != 6*4+6+3 {
		t.Fatalf("ibnetdiscover found %d nodes:\n%s", len(wantNodes), out)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := ibsim.Dial(ctx, ibsim.Options{SockName: s.SockName, Host: "h0001"})
	if err != nil {
		t.Fatal(err)
	}
	e := transport.NewEngine(c, transport.Options{Timeout: 2 * time.Second})
	defer e.Close()
	fab, err := Run(ctx, e, Options{})
	if err != nil {
		t.Fatal(err)
	}
	gotNodes, gotLinks := fabricLinks(fab)
	if !slices.Equal(gotNodes, wantNodes) {
		t.Errorf("nodes differ:\n got %v\nwant %v", gotNodes, wantNodes)
	}
	if !slices.Equal(gotLinks, wantLinks) {
		t.Errorf("links differ:\n got %v\nwant %v", gotLinks, wantLinks)
	}
	if len(fab.Unreachable) != 0 || len(fab.DuplicateGUIDs) != 0 {
		t.Errorf("unreachable %v, duplicates %v", fab.Unreachable, fab.DuplicateGUIDs)
	}
	h := fab.NodesByName("h0013 HCA-1")
	if len(h) != 1 || h[0].Path.String() != "0,1,5,4,1" {
		t.Errorf("h0013: %v", h)
	}
	t.Logf("%d nodes, %d links; engine: %v", len(fab.Nodes), len(gotLinks), e.Stats())
}
