package route

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/words"
	"github.com/ibdoctor/ibdoctor/mad"
)

// MaxUnicastLID is the highest unicast LID (0xC000 up are multicast).
const MaxUnicastLID = 0xBFFF

// ParseLID reads s as a unicast LID, decimal or 0x-prefixed hex. A number
// above MaxUnicastLID is not a LID (a GUID, say).
func ParseLID(s string) (uint16, bool) {
	v, err := strconv.ParseUint(s, 0, 64)
	if err != nil || v == 0 || v > MaxUnicastLID {
		return 0, false
	}
	if strings.HasPrefix(s, "0") && !strings.HasPrefix(s, "0x") && !strings.HasPrefix(s, "0X") && len(s) > 1 {
		// ParseUint reads a leading 0 as octal; a LID is never written so.
		d, err := strconv.ParseUint(s, 10, 16)
		if err != nil || d == 0 || d > MaxUnicastLID {
			return 0, false
		}
		return uint16(d), true
	}
	return uint16(v), true
}

// lidSyntax reports whether s is written as a LID is (decimal digits, or
// 0x and at most four hex digits; more is a GUID), whatever its value.
func lidSyntax(s string) bool {
	digits, base := s, "0123456789"
	if h, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		digits, base = h, "0123456789abcdef"
		if len(h) > 4 {
			return false
		}
	}
	return digits != "" && strings.Trim(strings.ToLower(digits), base) == ""
}

// AmbiguousError is a name that matches more than one port.
type AmbiguousError struct {
	Arg     string
	Matches []string // "gpu042 mlx5_0 port 1 (LID 12, GUID 0x...)"
	// Ports, when every match is a port of one node (a multi-port HCA
	// named by its full description), are those ports as the findings
	// name them ("dual HCA-1/1"): the hint is to add the port, not to
	// give the description already given (trial A12).
	Ports []string
	// Shared is set when matches share a description: they are listed
	// by the names the tool prints for them, "DESC (0xGUID)", which the
	// hint asks for (trial C8).
	Shared bool
	// Switches counts the matches that are switches (their port 0).
	Switches int
}

// addMatch lists p as a match, by the name the tool prints for its node.
func (e *AmbiguousError) addMatch(f *fabric.Fabric, p *fabric.Port) {
	name := f.NameOf(p.Node)
	if p.Node.Type == mad.NodeSwitch {
		e.Switches++
	}
	switch {
	case name == p.Node.Description:
		e.Matches = append(e.Matches, fmt.Sprintf("%s port %d (LID %d, GUID %#016x)", name, p.Num, p.LID, p.GUID))
	case p.Node.Type == mad.NodeSwitch:
		e.Shared = true
		e.Matches = append(e.Matches, fmt.Sprintf("%q (LID %d)", name, p.LID))
	default:
		e.Shared = true
		e.Matches = append(e.Matches, fmt.Sprintf("%q port %d (LID %d, GUID %#016x)", name, p.Num, p.LID, p.GUID))
	}
}

func (e *AmbiguousError) Error() string {
	hint := "give a full node description, a GUID or a LID"
	if e.Shared {
		hint = "give one of the quoted names (the description and its GUID), a GUID or a LID"
	}
	if len(e.Ports) > 1 {
		q := make([]string, len(e.Ports))
		for i, p := range e.Ports {
			q[i] = strconv.Quote(p)
		}
		hint = "add the port: " + strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1] + ", or give a LID or GUID"
	}
	// At most ten: a host prefix ("gpu") matched all 255 HCAs of the
	// sample, one stderr line of 30 terminal lines.
	what := "ports"
	if e.Switches == len(e.Matches) {
		what = "switches"
	}
	return fmt.Sprintf("%q matches %d %s: %s; %s", e.Arg, len(e.Matches), what, words.FirstSep(e.Matches, 10, "; "), hint)
}

// splitPort reads arg as a node and a port number in the notations
// ibdoctor prints: "NODE/PORT" (the findings') and "NODE port PORT" (an
// ambiguity's list).
func splitPort(arg string) (string, uint8, bool) {
	var name, num string
	if i := strings.LastIndexByte(arg, '/'); i > 0 {
		name, num = arg[:i], arg[i+1:]
	} else if n, p, ok := strings.Cut(arg, " port "); ok {
		name, num = n, p
	} else {
		return "", 0, false
	}
	v, err := strconv.ParseUint(num, 10, 8)
	if err != nil || strings.TrimSpace(name) == "" {
		return "", 0, false
	}
	return name, uint8(v), true
}

// pickPort returns port num of nodes, or says why none is the one.
func pickPort(f *fabric.Fabric, arg string, nodes []*fabric.Node, num uint8) (*fabric.Port, error) {
	var ports []*fabric.Port
	for _, n := range nodes {
		if int(num) < len(n.Ports) && n.Ports[num] != nil && n.Ports[num].Num == num {
			ports = append(ports, n.Ports[num])
			continue
		}
		for _, p := range n.Ports {
			if p != nil && p.Num == num {
				ports = append(ports, p)
				break
			}
		}
	}
	switch len(ports) {
	case 0:
		if len(nodes) == 1 {
			return nil, fmt.Errorf("%s has no port %d", nodes[0].Description, num)
		}
		return nil, fmt.Errorf("none of %s has a port %d", names(f, nodes), num)
	case 1:
		p := ports[0]
		switch {
		case p.Node.Type == mad.NodeSwitch && p.Num != 0:
			return nil, fmt.Errorf("%s is a port of switch %s, which is addressed by its port 0's LID: give %q, or the node cabled to that port", arg, p.Node.Description, p.Node.Description)
		case p.LID == 0:
			return nil, fmt.Errorf("%s has no LID (is its link up, and a subnet manager running?)", arg)
		}
		return p, nil
	}
	e := &AmbiguousError{Arg: arg}
	for _, p := range ports {
		e.addMatch(f, p)
	}
	sort.Strings(e.Matches)
	return nil, e
}

// NotFoundError is a name, GUID or LID that names nothing in the fabric.
type NotFoundError struct {
	Arg  string
	What string // "LID", "GUID", "name"
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no node or port in the fabric has %s %s", e.What, e.Arg)
}

// Resolve finds the port arg names in f: a LID (decimal or 0x hex), a
// node or port GUID (0x and more than four hex digits), a node
// description, or a host name — the first word of descriptions like
// "gpu042 mlx5_0" — or a prefix of descriptions, when exactly one port
// with a LID matches. A switch resolves to its port 0 (its LID), a CA to
// its port that has a LID. When several match, the *AmbiguousError lists
// them.
func Resolve(f *fabric.Fabric, arg string) (*fabric.Port, error) {
	if lid, ok := ParseLID(arg); ok {
		if p := f.PortByLID(lid); p != nil {
			return p, nil
		}
		return nil, &NotFoundError{Arg: arg, What: "LID"}
	}
	if s, ok := strings.CutPrefix(strings.ToLower(arg), "0x"); ok && !lidSyntax(arg) {
		if g, err := strconv.ParseUint(s, 16, 64); err == nil {
			if n := f.NodeByGUID(g); n != nil {
				return pick(f, arg, []*fabric.Node{n})
			}
			// A port GUID (a switch's ports carry the node's GUID,
			// found above).
			for _, n := range f.Nodes {
				for _, p := range n.Ports {
					if p != nil && p.GUID == g && (n.Type != mad.NodeSwitch || p.Num == 0) {
						return p, nil
					}
				}
			}
			return nil, &NotFoundError{Arg: arg, What: "GUID"}
		}
	}
	// A name as the tool prints it: a description, or "DESC (0xGUID)"
	// where nodes share DESC (fabric.NameOf).
	if ns := f.NodesNamed(arg); len(ns) > 0 {
		return pick(f, arg, ns)
	}
	if desc, g, ok := fabric.SplitNamed(arg); ok {
		if n := f.NodeByGUID(g); n != nil {
			return nil, fmt.Errorf("%q: GUID %#016x is %q, not %q: give the name as the tool prints it, or the GUID alone", arg, g, f.NameOf(n), desc)
		}
	}
	if name, num, ok := splitPort(arg); ok {
		// A port as the findings name it: "dual HCA-1/2", "gpu001/1",
		// "leaf01 (0x...)/0".
		ns := f.NodesNamed(name)
		if len(ns) == 0 {
			ns = hostNodes(f, name)
		}
		if len(ns) > 0 {
			return pickPort(f, arg, ns, num)
		}
	}
	// A host by its short name or FQDN, as descriptions may have either
	// (fabric.HostName).
	byHost := hostNodes(f, arg)
	var byPrefix []*fabric.Node
	for _, n := range f.Nodes {
		if strings.HasPrefix(n.Description, arg) {
			byPrefix = append(byPrefix, n)
		}
	}
	switch {
	case len(byHost) > 0:
		return pick(f, arg, byHost)
	case len(byPrefix) > 0:
		return pick(f, arg, byPrefix)
	}
	if lidSyntax(arg) {
		// Written as a LID but outside the unicast range: saying no
		// node has that name would send the user looking for one.
		return nil, fmt.Errorf("%s is not a valid LID (1..0x%X unicast)", arg, MaxUnicastLID)
	}
	return nil, &NotFoundError{Arg: arg, What: "name"}
}

// pick returns the one addressable port among nodes, or says which match.
func pick(f *fabric.Fabric, arg string, nodes []*fabric.Node) (*fabric.Port, error) {
	var ports []*fabric.Port
	for _, n := range nodes {
		for _, p := range n.Ports {
			if p == nil || p.LID == 0 || (n.Type == mad.NodeSwitch && p.Num != 0) {
				continue
			}
			ports = append(ports, p)
		}
	}
	switch len(ports) {
	case 1:
		return ports[0], nil
	case 0:
		return nil, fmt.Errorf("%q matches %s but no port of it has a LID (is a subnet manager running?)", arg, names(f, nodes))
	}
	e := &AmbiguousError{Arg: arg}
	one := true
	for _, p := range ports {
		e.addMatch(f, p)
		e.Ports = append(e.Ports, fmt.Sprintf("%s/%d", f.NameOf(p.Node), p.Num))
		one = one && p.Node == ports[0].Node
	}
	if !one {
		e.Ports = nil
	}
	sort.Strings(e.Matches)
	sort.Strings(e.Ports)
	return nil, e
}

// hostNodes are the nodes whose description's first word names host
// (fabric.NodesByHost: "gpu001" and "gpu001.cluster.local" alike); none
// for a name with a space (a description, not a host).
func hostNodes(f *fabric.Fabric, host string) []*fabric.Node {
	if host == "" || strings.ContainsAny(host, " \t") {
		return nil
	}
	return f.NodesByHost(host)
}

func names(f *fabric.Fabric, nodes []*fabric.Node) string {
	var s []string
	for _, n := range nodes {
		s = append(s, strconv.Quote(f.NameOf(n)))
	}
	return strings.Join(s, ", ")
}
