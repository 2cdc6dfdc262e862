package fabric

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/ibdoctor/ibdoctor/mad"
)

// BehindWhere is where an unread node lies when only the way to it is
// known: "path 0,1,49 (behind leaf01 port 49)". ParseBehind reads it back,
// so a rendering can group the reads one dead node failed from many ports.
func BehindWhere(path, node string, port int) string {
	return fmt.Sprintf("path %s (behind %s port %d)", path, node, port)
}

var behindRE = regexp.MustCompile(`^path (\S+) \(behind (.+) port (\d+)\)$`)

// ParseBehind splits a BehindWhere string; ok is false for any other.
func ParseBehind(where string) (path, node string, port int, ok bool) {
	m := behindRE.FindStringSubmatch(where)
	if m == nil {
		return "", "", 0, false
	}
	port, err := strconv.Atoi(m[3])
	if err != nil {
		return "", "", 0, false
	}
	return m[1], m[2], port, true
}

// UnreachableWheres says where each of f.Unreachable lies, for people, in
// the same order: the node by name and GUID when discovery knows the node
// at its directed route (it answered NodeInfo; a later read failed), else
// the route and the node and port it lies behind.
func (f *Fabric) UnreachableWheres() []string {
	if len(f.Unreachable) == 0 {
		return nil
	}
	byPath := make(map[string]*Node, len(f.Nodes))
	for _, n := range f.Nodes {
		if n.Path != nil {
			byPath[n.Path.String()] = n
		}
	}
	out := make([]string, len(f.Unreachable))
	for i, u := range f.Unreachable {
		if u.Where != "" {
			out[i] = u.Where
			continue
		}
		if n := byPath[u.Path.String()]; n != nil && u.Path != nil {
			out[i] = fmt.Sprintf("%s (GUID %#016x, path %s)", nodeName(n), n.GUID, u.Path)
			continue
		}
		where := "path " + u.Path.String()
		if n := f.NodeByGUID(u.FromGUID); n != nil && u.FromGUID != 0 {
			where = BehindWhere(u.Path.String(), nodeName(n), int(u.FromPort))
		}
		out[i] = where
	}
	return out
}

func nodeName(n *Node) string {
	if n.Description != "" {
		return n.Description
	}
	return fmt.Sprintf("0x%016x", n.GUID)
}

// AddUnreachable appends us to f.Unreachable, each with the node and port
// its directed route leaves from when f holds the node one hop short of
// it, and returns f.
func (f *Fabric) AddUnreachable(us []Unreachable) *Fabric {
	if len(us) == 0 {
		return f
	}
	byPath := make(map[string]*Node, len(f.Nodes))
	for _, n := range f.Nodes {
		if n.Path != nil {
			byPath[n.Path.String()] = n
		}
	}
	for _, u := range us {
		if k := len(u.Path); k > 0 && u.FromGUID == 0 {
			if n := byPath[u.Path[:k-1].String()]; n != nil {
				u.FromGUID, u.FromPort = n.GUID, u.Path[k-1]
			}
		}
		f.Unreachable = append(f.Unreachable, u)
	}
	return f
}

// DRPathTo is a directed route from the local node, sending from its port
// localPort, that arrives at port p itself (an agent answers for the port
// an SMP comes in by), or false when discovery left none: a switch by its
// own route; the local port by the empty one; a CA port by its switch's
// route out of the port it is cabled to, or, cabled straight to the local
// port (no switch between), one hop out of it.
func DRPathTo(p *Port, local *Node, localPort uint8) (mad.Path, bool) {
	n := p.Node
	switch {
	case n.Path == nil:
		return nil, false // not from a discovery
	case n.Type == mad.NodeSwitch:
		return n.Path, true
	case n == local && p.Num == localPort:
		return mad.Path{}, true
	case p.Remote != nil && p.Remote.Node.Type == mad.NodeSwitch && p.Remote.Node.Path != nil:
		return p.Remote.Node.Path.Extend(p.Remote.Num), true
	case p.Remote != nil && local != nil && p.Remote.Node == local && p.Remote.Num == localPort:
		return mad.Path{}.Extend(localPort), true
	}
	return nil, false
}
