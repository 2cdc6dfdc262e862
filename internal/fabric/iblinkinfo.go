package fabric

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/ibdoctor/ibdoctor/mad"
)

// iblinkinfo's output (infiniband-diags): every port of every node, one
// line each, grouped under a node header, or with -l one line per port
// naming both ends' node GUIDs:
//
//	Switch: 0x0000000000200002 leaf01:
//	           4    1[  ] ==( 1X           2.5 Gbps Active/  LinkUp)==>       1    1[  ] "gpu001 mlx5_0" (Could be 12X Could be 10.0 Gbps)
//	           4    9[  ] ==(                Down/ Polling)==>             [  ] "" ( )
//	CA: gpu001 mlx5_0:            (or Router: desc:)
//	      0x0000000000100001      1    1[  ] ==( 1X           2.5 Gbps Active/  LinkUp)==>       4    1[  ] "leaf01" (...)
//	0x0000000000200002 "                        leaf01"      4    1[  ] ==( 1X ... )==>  0x0000000000100001      1    1[  ] "gpu001 mlx5_0" (...)
//
// Fields: the node's LID (a switch's port-0 LID, a CA port's), port
// number, [external port], active width, speed (the lane rate in Gb/s),
// port state / physical state; then the peer's LID, port and
// description. Peers are found by LID. A CA header names no GUID and
// its lines give the port GUID only: without -l, each CA is named by
// its first port's GUID (FileInfo.Notes says so). Vendor and device IDs,
// LMC and enabled/supported rates are not in the text.

var (
	iblSwitchHead = regexp.MustCompile(`^Switch:\s+0x([0-9a-fA-F]{1,16})\s(.*):$`)
	iblCAHead     = regexp.MustCompile(`^(CA|Router):\s(.*):$`)
	// [0xGUID ["desc"]] LID PORT[ext] ==( link )==> rest
	iblPort = regexp.MustCompile(`^(?:0x([0-9a-fA-F]{1,16})\s+(?:"(.*?)"\s+)?)?(\d+)\s+(\d+)\[[^\]]*\]\s+==\((.*)\)==>\s*(.*)$`)
	// [0xGUID] LID PORT[ext] "desc" (...)
	iblPeer = regexp.MustCompile(`^(?:0x([0-9a-fA-F]{1,16})\s+)?(\d+)\s+(\d+)\[[^\]]*\]\s+"(.*)"\s+\(.*\)$`)
	iblNone = regexp.MustCompile(`^\[[^\]]*\]\s+""\s+\(.*\)$`)
)

// iblSpeeds are the lane rates iblinkinfo prints, by speed.
var iblSpeeds = map[string]mad.Speed{
	"2.5": mad.SpeedSDR, "5.0": mad.SpeedDDR, "10.0": mad.SpeedQDR, "14.0625": mad.SpeedFDR,
	"25.78125": mad.SpeedEDR, "53.125": mad.SpeedHDR, "106.25": mad.SpeedNDR, "212.5": mad.SpeedXDR,
}

var iblStates = map[string]mad.PortState{"Down": mad.PortStateDown, "Initialize": mad.PortStateInit, "Init": mad.PortStateInit, "Armed": mad.PortStateArmed, "Active": mad.PortStateActive}

var iblPhys = map[string]mad.PhysState{"Sleep": mad.PhysSleep, "Polling": mad.PhysPolling, "Disabled": mad.PhysDisabled,
	"PortConfigurationTraining": mad.PhysConfigTraining, "LinkUp": mad.PhysLinkUp, "LinkErrorRecovery": mad.PhysLinkErrorRecovery, "PhyTest": mad.PhysPhyTest}

type iblRow struct {
	line     int
	text     string
	port     *Port
	hasPeer  bool
	peerLID  uint16
	peerNum  int
	peerGUID uint64
}

// ParseIBLinkInfo reads iblinkinfo output (default or -l); notes say what
// the text could not carry.
func ParseIBLinkInfo(data []byte) (*Fabric, []string, error) {
	f := &Fabric{}
	byGUID := map[uint64]*Node{}
	var cur *Node
	var rows []iblRow
	lineNo := 0
	caByPort := false
	fail := func(line int, text string, err error) error {
		return &lineError{format: string(FormatIBLinkInfo), line: line, text: text, err: err}
	}
	getNode := func(guid uint64, typ mad.NodeType, desc string) *Node {
		if n := byGUID[guid]; n != nil {
			return n
		}
		n := &Node{GUID: guid, Type: typ, Description: desc, Ports: make([]*Port, 1)}
		if typ == mad.NodeSwitch {
			n.Switch = &Switch{}
		}
		byGUID[guid] = n
		f.Nodes = append(f.Nodes, n)
		return n
	}
	var caDesc string
	caType := mad.NodeCA
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += off
		}
		lineNo++
		raw := strings.TrimRight(string(data[off:end]), "\r")
		off = end + 1
		t := strings.TrimSpace(raw)
		if t == "" || t[0] == '#' {
			continue
		}
		if m := iblSwitchHead.FindStringSubmatch(t); m != nil {
			g, _ := strconv.ParseUint(m[1], 16, 64)
			if byGUID[g] != nil {
				return nil, nil, fail(lineNo, t, fmt.Errorf("switch 0x%016x listed twice", g))
			}
			cur, caDesc = getNode(g, mad.NodeSwitch, m[2]), ""
			continue
		}
		if m := iblCAHead.FindStringSubmatch(t); m != nil {
			cur, caDesc, caType = nil, m[2], mad.NodeCA
			if m[1] == "Router" {
				caType = mad.NodeRouter
			}
			continue
		}
		m := iblPort.FindStringSubmatch(t)
		if m == nil {
			return nil, nil, fail(lineNo, t, errors.New("not an iblinkinfo node header or port line"))
		}
		lid, err1 := strconv.ParseUint(m[3], 10, 16)
		num, err2 := strconv.ParseUint(m[4], 10, 8)
		if err1 != nil || err2 != nil || num == 0 {
			return nil, nil, fail(lineNo, t, errors.New("LID or port number out of range"))
		}
		var n *Node
		switch {
		case m[2] != "" || (m[1] != "" && cur == nil && caDesc == ""):
			// -l: the node's GUID and (padded) description on every line.
			g, _ := strconv.ParseUint(m[1], 16, 64)
			// -l prints no node type: a CA until two of its ports share
			// a LID (below), which only a switch's do.
			n = getNode(g, mad.NodeCA, strings.TrimLeft(m[2], " "))
		case cur != nil && m[1] == "":
			n = cur
		case caDesc != "" && m[1] != "":
			// A CA port: its header names no GUID; the port GUID stands
			// for the node (the first port's, for every port of it).
			g, _ := strconv.ParseUint(m[1], 16, 64)
			if cur == nil {
				cur = getNode(g, caType, caDesc)
				caByPort = true
			}
			n = cur
		default:
			return nil, nil, fail(lineNo, t, errors.New("a port line outside a node (no \"Switch:\" or \"CA:\" header before it)"))
		}
		for len(n.Ports) <= int(num) {
			n.Ports = append(n.Ports, nil)
		}
		if n.Ports[num] != nil {
			return nil, nil, fail(lineNo, t, fmt.Errorf("port %d of %q listed twice", num, n.Description))
		}
		p := &Port{Node: n, Num: uint8(num)}
		if m[1] != "" && m[2] == "" {
			p.GUID, _ = strconv.ParseUint(m[1], 16, 64)
		}
		if err := iblLink(p, m[5]); err != nil {
			return nil, nil, fail(lineNo, t, err)
		}
		n.Ports[num] = p
		// The LID moves to port 0 for a switch once types are known.
		p.LID = uint16(lid)
		row := iblRow{line: lineNo, text: t, port: p}
		if err := iblRest(&row, m[6]); err != nil {
			return nil, nil, fail(lineNo, t, err)
		}
		rows = append(rows, row)
	}
	// -l does not print node types: a node with the same LID on two
	// ports is a switch (CA ports have a LID each).
	for _, n := range f.Nodes {
		if n.Type == mad.NodeSwitch {
			continue
		}
		lids := map[uint16]int{}
		for _, p := range n.Ports {
			if p != nil && p.LID != 0 {
				lids[p.LID]++
			}
		}
		for _, c := range lids {
			if c > 1 {
				n.Type, n.Switch = mad.NodeSwitch, &Switch{}
			}
		}
	}
	// A switch's LID is its port 0's.
	byLID := map[uint16]*Node{}
	for _, n := range f.Nodes {
		if n.Type != mad.NodeSwitch {
			for _, p := range n.Ports {
				if p != nil && p.LID != 0 {
					byLID[p.LID] = n
				}
			}
			continue
		}
		var lid uint16
		for _, p := range n.Ports {
			if p != nil && p.LID != 0 {
				lid = p.LID
				p.LID = 0
			}
		}
		n.Ports[0] = &Port{Node: n, Num: 0, GUID: n.GUID, LID: lid, State: mad.PortStateActive, PhysState: mad.PhysLinkUp}
		for _, p := range n.Ports {
			if p != nil {
				p.GUID = n.GUID
			}
		}
		if lid != 0 {
			byLID[lid] = n
		}
	}
	for _, r := range rows {
		if !r.hasPeer {
			continue
		}
		var pn *Node
		if r.peerGUID != 0 {
			pn = byGUID[r.peerGUID]
		} else {
			pn = byLID[r.peerLID]
		}
		if pn == nil || r.peerNum >= len(pn.Ports) || pn.Ports[r.peerNum] == nil {
			return nil, nil, fail(r.line, r.text, fmt.Errorf("the peer (LID %d port %d) is not listed in the file", r.peerLID, r.peerNum))
		}
		q := pn.Ports[r.peerNum]
		if r.port.Remote == q {
			continue
		}
		if r.port.Remote != nil || q.Remote != nil && q.Remote != r.port {
			return nil, nil, fail(r.line, r.text, errors.New("a port of this link is already on another"))
		}
		r.port.Remote, q.Remote = q, r.port
	}
	var notes []string
	if caByPort {
		notes = append(notes, "iblinkinfo without -l prints no CA node GUIDs: each CA is named by its first port's GUID (iblinkinfo -l, or ibnetdiscover, gives them)")
	}
	return f, notes, nil
}

// iblLink reads "4X 2.5 Gbps Active/  LinkUp" or "Down/ Polling".
func iblLink(p *Port, s string) error {
	state, phys, ok := strings.Cut(s, "/")
	if !ok {
		return fmt.Errorf("link %q: no state/physical state", strings.TrimSpace(s))
	}
	f := strings.Fields(state)
	if len(f) == 0 {
		return fmt.Errorf("link %q: no port state", strings.TrimSpace(s))
	}
	st, ok1 := iblStates[f[len(f)-1]]
	ph, ok2 := iblPhys[strings.TrimSpace(phys)]
	if !ok1 || !ok2 {
		return fmt.Errorf("link %q: unknown port or physical state", strings.TrimSpace(s))
	}
	p.State, p.PhysState = st, ph
	switch len(f) {
	case 1:
		return nil
	case 4:
		if f[2] != "Gbps" {
			break
		}
		w, err := parseWidthText(f[0])
		sp, ok := iblSpeeds[f[1]]
		if err != nil || !ok {
			break
		}
		p.WidthActive, p.SpeedActive = w, sp
		return nil
	case 5:
		// FDR10: "4X  10.0 Gbps (FDR10) Active"
		if f[2] != "Gbps" || f[3] != "(FDR10)" {
			break
		}
		w, err := parseWidthText(f[0])
		if err != nil {
			break
		}
		p.WidthActive, p.SpeedActive = w, mad.SpeedFDR10
		return nil
	}
	return fmt.Errorf("link %q: want WIDTH SPEED Gbps STATE/PHYSSTATE", strings.TrimSpace(s))
}

func parseWidthText(s string) (mad.Width, error) {
	switch strings.ToUpper(s) {
	case "1X":
		return mad.Width1X, nil
	case "2X":
		return mad.Width2X, nil
	case "4X":
		return mad.Width4X, nil
	case "8X":
		return mad.Width8X, nil
	case "12X":
		return mad.Width12X, nil
	}
	return 0, fmt.Errorf("width %q", s)
}

// iblRest reads the peer part of a port line.
func iblRest(r *iblRow, s string) error {
	s = strings.TrimSpace(s)
	if iblNone.MatchString(s) {
		return nil
	}
	m := iblPeer.FindStringSubmatch(s)
	if m == nil {
		return fmt.Errorf("peer %q: want [0xGUID] LID PORT[ext] \"description\" (...)", s)
	}
	lid, err1 := strconv.ParseUint(m[2], 10, 16)
	num, err2 := strconv.ParseUint(m[3], 10, 8)
	if err1 != nil || err2 != nil || num == 0 {
		return fmt.Errorf("peer %q: LID or port out of range", s)
	}
	r.hasPeer, r.peerLID, r.peerNum = true, uint16(lid), int(num)
	if m[1] != "" {
		r.peerGUID, _ = strconv.ParseUint(m[1], 16, 64)
	}
	return nil
}
