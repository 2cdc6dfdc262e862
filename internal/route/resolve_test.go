package route

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

func TestParseLID(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint16
		ok   bool
	}{
		{"1", 1, true}, {"0x1f", 31, true}, {"0X1F", 31, true}, {"010", 10, true}, {"49151", 0xbfff, true},
		{"0", 0, false}, {"49152", 0, false}, {"0xc000", 0, false}, {"0x0002c90300a1b2c3", 0, false},
		{"gpu001", 0, false}, {"-1", 0, false}, {"", 0, false}, {"0x", 0, false},
	} {
		got, ok := ParseLID(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("ParseLID(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestResolve(t *testing.T) {
	f := small(t)
	// A second HCA port with its own LID on gpu005 makes "gpu005" ambiguous.
	g5 := node(f, "gpu005 mlx5_0")
	p2 := &fabric.Port{Node: g5, Num: 2, GUID: 0x0002c9fffe000005, LID: 200}
	g5.Ports = append(g5.Ports, p2)
	f.Reindex()
	leaf2 := node(f, "leaf02")
	g1 := node(f, "gpu001 mlx5_0").Ports[1]
	for _, c := range []struct {
		arg  string
		want *fabric.Port
	}{
		{fmt.Sprint(g1.LID), g1},
		{fmt.Sprintf("%#x", g1.LID), g1},
		{fmt.Sprintf("%#x", g1.Node.GUID), g1},
		{fmt.Sprintf("%#016x", g1.GUID), g1},
		{fmt.Sprintf("%#x", p2.GUID), p2},
		{"gpu001 mlx5_0", g1},
		{"gpu001", g1},
		{"leaf02", leaf2.Ports[0]},
		{fmt.Sprintf("%#x", leaf2.GUID), leaf2.Ports[0]},
		{fmt.Sprint(leaf2.Ports[0].LID), leaf2.Ports[0]},
		{"spine0", nil}, // two spines
		{"gpu00", nil},  // gpu001..gpu009
		{"gpu005", nil}, // two ports with LIDs
	} {
		got, err := Resolve(f, c.arg)
		if c.want == nil {
			var ae *AmbiguousError
			if !errors.As(err, &ae) || len(ae.Matches) < 2 {
				t.Errorf("Resolve(%q) = %v, %v; want ambiguous", c.arg, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Resolve(%q) = %v, %v; want %s port %d", c.arg, got, err, c.want.Node.Description, c.want.Num)
		}
	}
	_, err := Resolve(f, "gpu005")
	if err == nil || !strings.Contains(err.Error(), "gpu005 mlx5_0 port 1") || !strings.Contains(err.Error(), "gpu005 mlx5_0 port 2 (LID 200") {
		t.Errorf("ambiguity does not say which match: %v", err)
	}
	for _, arg := range []string{"nosuch", "999", "0x1234567890"} {
		var nf *NotFoundError
		if _, err := Resolve(f, arg); !errors.As(err, &nf) {
			t.Errorf("Resolve(%q): %v", arg, err)
		}
	}
	// A node without LIDs (no SM yet) says so.
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil && n.Type == mad.NodeSwitch {
				p.LID = 0
			}
		}
	}
	f.Reindex()
	if _, err := Resolve(f, "leaf01"); err == nil || !strings.Contains(err.Error(), "subnet manager") {
		t.Errorf("no LID: %v", err)
	}
}

// TestResolveFindingNotation: trial A12. Every finding names a port
// "NODE/PORT" ("Link at dual HCA-1/2 <-> oddb/3"); trace refused "dual
// HCA-1/2" ("no node or port in the fabric has name dual HCA-1/2") and
// for the full description of a 2-port HCA asked for "a full node
// description", the input it had been given. It now takes "DESC/PORT",
// "DESC port N" (its own ambiguity list's notation), "HOST/PORT" when one
// port of the host has that number, and a host's FQDN or short name as
// the descriptions of 3fe8112 do; a multi-port HCA's hint says to add
// the port.
func TestResolveFindingNotation(t *testing.T) {
	f := small(t)
	g5 := node(f, "gpu005 mlx5_0")
	p2 := &fabric.Port{Node: g5, Num: 2, GUID: 0x0002c9fffe000005, LID: 200}
	g5.Ports = append(g5.Ports, p2)
	g2 := node(f, "gpu002 mlx5_0")
	g2.Description = "gpu002.cluster.local mlx5_0"
	f.Reindex()
	p1 := g5.Ports[1]
	leaf2 := node(f, "leaf02")
	for _, c := range []struct {
		arg  string
		want *fabric.Port
	}{
		{"gpu005 mlx5_0/2", p2},
		{"gpu005 mlx5_0/1", p1},
		{"gpu005 mlx5_0 port 2", p2},
		{"gpu005/2", p2},
		{"gpu002", g2.Ports[1]},
		{"gpu002.cluster.local", g2.Ports[1]},
		{"gpu002/1", g2.Ports[1]},
		{"gpu001.cluster.local", node(f, "gpu001 mlx5_0").Ports[1]},
		{"leaf02/0", leaf2.Ports[0]},
	} {
		got, err := Resolve(f, c.arg)
		if err != nil || got != c.want {
			t.Errorf("Resolve(%q) = %v, %v; want %s port %d", c.arg, got, err, c.want.Node.Description, c.want.Num)
		}
	}
	_, err := Resolve(f, "gpu005 mlx5_0")
	const hint = `add the port: "gpu005 mlx5_0/1" or "gpu005 mlx5_0/2", or give a LID or GUID`
	if err == nil || !strings.Contains(err.Error(), hint) || strings.Contains(err.Error(), "give a full node description") {
		t.Errorf("a 2-port HCA's description: %v; want the hint %q", err, hint)
	}
	// A prefix of many hosts lists ten matches and how many more.
	for n := uint8(3); n <= 6; n++ {
		g5.Ports = append(g5.Ports, &fabric.Port{Node: g5, Num: n, GUID: 0x0002c9fffe000010 + uint64(n), LID: 200 + uint16(n)})
	}
	f.Reindex()
	if _, err := Resolve(f, "gpu00"); err == nil || !strings.Contains(err.Error(), " and ") || !strings.Contains(err.Error(), " more; give a full node description") || strings.Count(err.Error(), "GUID 0x") > 10 {
		t.Errorf("gpu00: %v", err)
	}
	// A port the node does not have, or one without a LID, says so.
	if _, err := Resolve(f, "gpu005 mlx5_0/9"); err == nil || !strings.Contains(err.Error(), "gpu005 mlx5_0 has no port 9") {
		t.Errorf("port 9: %v", err)
	}
	if _, err := Resolve(f, "leaf02/3"); err == nil || !strings.Contains(err.Error(), "leaf02/3") || !strings.Contains(err.Error(), "switch") {
		t.Errorf("a switch's external port: %v", err)
	}
}

// TestResolveDuplicateDescriptions: trial C8. Where two nodes share a
// description the findings name each "DESC (0xGUID)" (fabric.NameOf);
// every command taking a node took only the bare description, which
// matched both. Each printed name resolves to its node (the switch's port
// 0, the CA's port with a LID; "/PORT" and " port N" added as for any
// name); a GUID that is another node's is not taken; the bare shared
// description is one line naming the candidates as printed, and each
// candidate it names resolves.
func TestResolveDuplicateDescriptions(t *testing.T) {
	f := small(t)
	l1, l2 := node(f, "leaf01"), node(f, "leaf02")
	l2.Description = "leaf01"
	c1, c2 := node(f, "gpu001 mlx5_0"), node(f, "gpu002 mlx5_0")
	c2.Description = "gpu001 mlx5_0"
	f.Reindex()
	for _, c := range []struct {
		arg  string
		want *fabric.Port
	}{
		{f.NameOf(l1), l1.Ports[0]},
		{f.NameOf(l2), l2.Ports[0]},
		{f.NameOf(c1), c1.Ports[1]},
		{f.NameOf(c2), c2.Ports[1]},
		{f.NameOf(c2) + "/1", c2.Ports[1]},
		{f.NameOf(c2) + " port 1", c2.Ports[1]},
		{f.NameOf(l2) + "/0", l2.Ports[0]},
	} {
		if !strings.Contains(c.arg, " (0x") {
			t.Fatalf("NameOf does not tell %q apart", c.arg)
		}
		got, err := Resolve(f, c.arg)
		if err != nil || got != c.want {
			t.Errorf("Resolve(%q) = %v, %v; want %s port %d", c.arg, got, err, f.NameOf(c.want.Node), c.want.Num)
		}
	}
	// Another node's GUID under the name is no match.
	wrong := fmt.Sprintf("leaf01 (%#016x)", node(f, "leaf03").GUID)
	if p, err := Resolve(f, wrong); err == nil || !strings.Contains(err.Error(), `"leaf03"`) {
		t.Errorf("Resolve(%q) = %v, %v; want an error saying the GUID is leaf03's", wrong, p, err)
	}
	for _, c := range []struct {
		arg   string
		names []*fabric.Node
	}{{"leaf01", []*fabric.Node{l1, l2}}, {"gpu001 mlx5_0", []*fabric.Node{c1, c2}}} {
		_, err := Resolve(f, c.arg)
		var ae *AmbiguousError
		if !errors.As(err, &ae) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("Resolve(%q): %v; want a one-line ambiguity", c.arg, err)
		}
		for _, n := range c.names {
			if !strings.Contains(err.Error(), strconvQuote(f.NameOf(n))) {
				t.Errorf("Resolve(%q): %v; want it to name %q", c.arg, err, f.NameOf(n))
			}
		}
		if strings.Contains(err.Error(), "give a full node description") {
			t.Errorf("Resolve(%q): %v; the full description was given", c.arg, err)
		}
	}
}

func strconvQuote(s string) string { return fmt.Sprintf("%q", s) }
