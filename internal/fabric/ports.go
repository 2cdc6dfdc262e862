package fabric

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/ibdoctor/ibdoctor/mad"
)

// `ibnetdiscover -p` (--ports): one line per port of every node, what the
// common Prometheus exporters keep. With -v, "DR path" lines come first.
//
//	CA    78  1 0x946dae0300630bfe 4x HDR - SW    51 81 0x946dae0300630bf6 ( 'desc' - 'peer desc' )
//	SW    24  1 0x946dae0300618c82 4x SDR                                    'desc'
//	DR path slid 0; dlid 0; 0,1,2 -> new Channel Adapter {001175000077f23e} portnum 1 lid 0-0 ""
//
// Fields: node type, LID (a switch's port-0 LID, a CA port's base LID),
// port number, port GUID, active width and speed; then the peer's, and
// both descriptions. A port without a peer is listed too (speed "???"
// when the link is down).
//
// The lines name ports, not nodes: a switch's ports share its port GUID
// (taken as the node GUID, as it is on every switch we have seen), but a
// CA's node GUID is not printed. The -v "DR path" lines give it: the
// node reached by path P (entered at "portnum") is the peer of port
// P[-1] of the switch reached by P[:-1]. Without them, each CA port
// becomes a node of its own whose GUID is the port GUID (FileInfo.Notes
// says so). The node at path "0" is the initiator. Vendor and device IDs,
// LMC and port counts are not in the text: NumPorts is the highest port
// listed.

var (
	portsLine = regexp.MustCompile(`^(CA|SW|RT)\s+(\d+)\s+(\d+)\s+0x([0-9a-fA-F]{1,16})\s+(\S+)\s+(\S+)\s*(.*)$`)
	portsPeer = regexp.MustCompile(`^-\s+(CA|SW|RT)\s+(\d+)\s+(\d+)\s+0x([0-9a-fA-F]{1,16})\s+\(\s'(.*)'\s-\s'(.*)'\s\)\s*$`)
	portsDesc = regexp.MustCompile(`^'(.*)'\s*$`)
	drLine    = regexp.MustCompile(`^DR path slid \d+; dlid \d+; ([\d,]+) -> (?:new|known) (Switch|Channel Adapter|Router) \{([0-9a-fA-F]{1,16})\} portnum (\d+)`)
)

type portsEnd struct {
	typ  mad.NodeType
	lid  uint16
	num  int
	guid uint64
	desc string
}

type portsRow struct {
	line       int
	text       string
	self       portsEnd
	rate       string
	peer       *portsEnd
	w          mad.Width
	s          mad.Speed
	unreadable bool
}

type drEntry struct {
	path  []int
	typ   mad.NodeType
	guid  uint64
	entry int
}

// ParseIBNetDiscoverPorts reads `ibnetdiscover -p` output, with or
// without -v's DR path lines. notes says what the text could not carry.
func ParseIBNetDiscoverPorts(r io.Reader) (f *Fabric, notes []string, err error) {
	var rows []portsRow
	var drs []drEntry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	lineNo := 0
	fail := func(text string, err error) error {
		return &lineError{format: string(FormatIBNetDiscoverPorts), line: lineNo, text: text, err: err}
	}
	for sc.Scan() {
		lineNo++
		line := strings.TrimRight(sc.Text(), "\r")
		t := strings.TrimSpace(line)
		switch {
		case t == "" || t[0] == '#':
			continue
		case strings.HasPrefix(t, "DR path"):
			m := drLine.FindStringSubmatch(t)
			if m == nil {
				continue // other -v progress lines carry nothing we use
			}
			d := drEntry{typ: drType(m[2])}
			for _, h := range strings.Split(m[1], ",") {
				v, err := strconv.Atoi(h)
				if err != nil || v > 255 {
					return nil, nil, fail(line, fmt.Errorf("DR path hop %q is not a port number", h))
				}
				d.path = append(d.path, v)
			}
			d.guid, _ = strconv.ParseUint(m[3], 16, 64)
			d.entry, _ = strconv.Atoi(m[4])
			drs = append(drs, d)
			continue
		}
		row, err := parsePortsRow(t)
		if err != nil {
			return nil, nil, fail(line, err)
		}
		row.line, row.text = lineNo, line
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("fabric: reading ibnetdiscover -p: %w", err)
	}
	return buildPorts(rows, drs)
}

func drType(s string) mad.NodeType {
	switch s {
	case "Switch":
		return mad.NodeSwitch
	case "Router":
		return mad.NodeRouter
	}
	return mad.NodeCA
}

func portsType(s string) mad.NodeType {
	switch s {
	case "SW":
		return mad.NodeSwitch
	case "RT":
		return mad.NodeRouter
	}
	return mad.NodeCA
}

func parsePortsEnd(typ, lid, num, guid string) (portsEnd, error) {
	var e portsEnd
	e.typ = portsType(typ)
	l, err := strconv.ParseUint(lid, 10, 16)
	if err != nil {
		return e, fmt.Errorf("LID %q is not 0..65535", lid)
	}
	n, err := strconv.ParseUint(num, 10, 8)
	if err != nil || n == 0 {
		return e, fmt.Errorf("port number %q is not 1..255", num)
	}
	g, err := strconv.ParseUint(guid, 16, 64)
	if err != nil {
		return e, fmt.Errorf("port GUID %q is not hex", guid)
	}
	e.lid, e.num, e.guid = uint16(l), int(n), g
	return e, nil
}

func parsePortsRow(t string) (portsRow, error) {
	var row portsRow
	m := portsLine.FindStringSubmatch(t)
	if m == nil {
		return row, errors.New("not an ibnetdiscover -p line (want TYPE LID PORT 0xGUID WIDTH SPEED, then '- peer ...' or 'description')")
	}
	var err error
	if row.self, err = parsePortsEnd(m[1], m[2], m[3], m[4]); err != nil {
		return row, err
	}
	row.rate = m[5] + m[6]
	if m[5] == "???" || m[6] == "???" {
		row.unreadable = m[5] == "???"
		if m[5] != "???" {
			row.w, _, _ = parseCompactRate(m[5] + "???")
		}
	} else if row.w, row.s, err = parseCompactRate(m[5] + m[6]); err != nil {
		return row, err
	}
	rest := m[7]
	if p := portsPeer.FindStringSubmatch(rest); p != nil {
		peer, err := parsePortsEnd(p[1], p[2], p[3], p[4])
		if err != nil {
			return row, fmt.Errorf("peer: %w", err)
		}
		row.self.desc, peer.desc = p[5], p[6]
		row.peer = &peer
		return row, nil
	}
	d := portsDesc.FindStringSubmatch(rest)
	if d == nil {
		return row, fmt.Errorf("after the rate, %q is neither '- TYPE LID PORT 0xGUID ( 'desc' - 'peer desc' )' nor 'desc'", rest)
	}
	row.self.desc = d[1]
	return row, nil
}

func buildPorts(rows []portsRow, drs []drEntry) (*Fabric, []string, error) {
	// Port GUID → node GUID, from the DR paths where they say it.
	nodeOf := make(map[uint64]uint64)
	byPath := make(map[string]drEntry, len(drs))
	key := func(p []int) string { return fmt.Sprint(p) }
	for _, d := range drs {
		if _, ok := byPath[key(d.path)]; !ok {
			byPath[key(d.path)] = d
		}
	}
	// A switch's port GUID (the -p lines') is its node GUID.
	peerOf := make(map[[2]uint64]portsEnd) // (switch port GUID, port) → peer
	for _, r := range rows {
		if r.self.typ == mad.NodeSwitch && r.peer != nil {
			peerOf[[2]uint64{r.self.guid, uint64(r.self.num)}] = *r.peer
		}
	}
	for _, d := range drs {
		if d.typ == mad.NodeSwitch || len(d.path) < 2 {
			continue
		}
		parent, ok := byPath[key(d.path[:len(d.path)-1])]
		if !ok || parent.typ != mad.NodeSwitch {
			continue
		}
		if pe, ok := peerOf[[2]uint64{parent.guid, uint64(d.path[len(d.path)-1])}]; ok && pe.typ == d.typ && pe.num == d.entry {
			nodeOf[pe.guid] = d.guid
		}
	}
	var initiator uint64
	var haveInit bool
	if d, ok := byPath[key([]int{0})]; ok {
		initiator, haveInit = d.guid, true
		if d.typ != mad.NodeSwitch {
			// The local CA's port: the one row of its type cabled to the
			// node at path 0,P whose port GUID is not mapped yet.
			if next, ok := byPath[key([]int{0, d.entry})]; ok {
				var cand []uint64
				for _, r := range rows {
					if r.self.typ == d.typ && r.self.num == d.entry && r.peer != nil && r.peer.guid == next.guid {
						if _, done := nodeOf[r.self.guid]; !done {
							cand = append(cand, r.self.guid)
						}
					}
				}
				if len(cand) == 1 {
					nodeOf[cand[0]] = d.guid
				}
			}
		}
	}
	nodeGUID := func(e portsEnd) uint64 {
		if e.typ == mad.NodeSwitch {
			return e.guid
		}
		if g, ok := nodeOf[e.guid]; ok {
			return g
		}
		return e.guid
	}

	f := &Fabric{}
	// Nodes are keyed by GUID and, where no DR path names the node, by
	// LID too: two ports that print one GUID at different LIDs are two
	// nodes claiming one GUID (recorded in DuplicateGUIDs), not one.
	type nodeKey struct {
		guid uint64
		lid  uint16
	}
	nodes := make(map[nodeKey]*Node)
	byGUID := make(map[uint64][]*Node)
	unmapped := 0
	getNode := func(e portsEnd) (*Node, error) {
		g := nodeGUID(e)
		k := nodeKey{g, e.lid}
		if _, mapped := nodeOf[e.guid]; mapped && e.typ != mad.NodeSwitch {
			k.lid = 0
		}
		n := nodes[k]
		if n == nil {
			n = &Node{Type: e.typ, GUID: g, Description: e.desc, Ports: make([]*Port, 1)}
			if e.typ == mad.NodeSwitch {
				n.Switch = &Switch{}
				n.Ports[0] = &Port{Node: n, Num: 0, GUID: e.guid, LID: e.lid, State: mad.PortStateActive, PhysState: mad.PhysLinkUp}
			} else if _, ok := nodeOf[e.guid]; !ok {
				unmapped++
			}
			nodes[k] = n
			byGUID[g] = append(byGUID[g], n)
			f.Nodes = append(f.Nodes, n)
		}
		if n.Type != e.typ {
			return nil, fmt.Errorf("GUID 0x%016x is both a %v and a %v", g, n.Type, e.typ)
		}
		return n, nil
	}
	portOf := func(n *Node, e portsEnd) *Port {
		for len(n.Ports) <= e.num {
			n.Ports = append(n.Ports, nil)
		}
		p := n.Ports[e.num]
		if p == nil {
			p = &Port{Node: n, Num: uint8(e.num), GUID: e.guid}
			if n.Type != mad.NodeSwitch {
				p.LID = e.lid
			}
			n.Ports[e.num] = p
		}
		return p
	}
	for _, r := range rows {
		fail := func(err error) error {
			return &lineError{format: string(FormatIBNetDiscoverPorts), line: r.line, text: r.text, err: err}
		}
		n, err := getNode(r.self)
		if err != nil {
			return nil, nil, fail(err)
		}
		p := portOf(n, r.self)
		p.WidthActive, p.SpeedActive = r.w, r.s
		if r.peer == nil {
			// Listed without a peer: no cable, or the link is not up;
			// -p does not say which (PhysState 0: unknown).
			p.State, p.PhysState = mad.PortStateDown, mad.PhysNoChange
			continue
		}
		p.State, p.PhysState = mad.PortStateActive, mad.PhysLinkUp
		rn, err := getNode(*r.peer)
		if err != nil {
			return nil, nil, fail(err)
		}
		rp := portOf(rn, *r.peer)
		if rp.Remote == nil && rp.State == 0 {
			// Until its own line comes, the far end is what this line says.
			rp.State, rp.PhysState = mad.PortStateActive, mad.PhysLinkUp
			rp.WidthActive, rp.SpeedActive = r.w, r.s
		}
		if p.Remote != nil && p.Remote != rp {
			return nil, nil, fail(fmt.Errorf("port %d is cabled twice", p.Num))
		}
		if rp.Remote != nil && rp.Remote != p {
			return nil, nil, fail(fmt.Errorf("peer 0x%016x port %d is already cabled to 0x%016x port %d", rn.GUID, rp.Num, rp.Remote.Node.GUID, rp.Remote.Num))
		}
		p.Remote, rp.Remote = rp, p
	}
	if haveInit {
		if ns := byGUID[initiator]; len(ns) == 1 {
			ns[0].Path = mad.Path{}
		}
	}
	var notes []string
	for _, n := range f.Nodes {
		ns := byGUID[n.GUID]
		if len(ns) < 2 || ns[0] != n {
			continue
		}
		d := DuplicateGUID{GUID: n.GUID}
		for _, o := range ns {
			d.Descs = append(d.Descs, o.Description)
		}
		f.DuplicateGUIDs = append(f.DuplicateGUIDs, d)
		notes = append(notes, fmt.Sprintf("GUID 0x%016x is claimed by %d nodes at different LIDs (%q): read as %d nodes", n.GUID, len(ns), d.Descs, len(ns)))
	}
	if unmapped > 0 {
		notes = append(notes, fmt.Sprintf("%d CA or router port(s) have no DR path line naming their node (ibnetdiscover -p without -v): each is read as a node of its own whose GUID is the port GUID", unmapped))
	}
	return f, notes, nil
}

// decodePorts is ParseIBNetDiscoverPorts on bytes.
func decodePorts(data []byte, info *FileInfo) (*Fabric, error) {
	f, notes, err := ParseIBNetDiscoverPorts(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	info.Notes = append(info.Notes, notes...)
	return f, nil
}
