package fabric

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ibdoctor/ibdoctor/mad"
)

// ibdiagnet's ibdiagnet2.lst: one line per link, both ends in braces,
// then the link's state (numbers in hex):
//
//	{ CA Ports:01 SystemGUID:5c25.. NodeGUID:5c25.. PortGUID:5c25.. VenID:000002c9 DevID:1021 Rev:00000000 {host mlx5_0} LID:00b5 PN:01 } { SW Ports:41 ... {Quantum-2 Mellanox Technologies} LID:00b6 PN:0c } PHY=4x LOG=ACT SPD=100
//
// SPD is the per-lane rate in Gb/s (2.5 SDR ... 100 NDR). What the file
// does not carry: port 0's kind (enhanced or base), LMC, unconnected
// ports, the initiator.

// ParseIBDiagnetLst reads an ibdiagnet2.lst file.
func ParseIBDiagnetLst(r io.Reader) (*Fabric, error) {
	f := &Fabric{}
	nodes := make(map[uint64]*Node)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := strings.TrimRight(sc.Text(), "\r")
		t := strings.TrimSpace(line)
		if t == "" || t[0] == '#' {
			continue
		}
		if err := lstLine(f, nodes, t); err != nil {
			return nil, &lineError{format: string(FormatIBDiagnetLst), line: lineNo, text: line, err: err}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("fabric: reading ibdiagnet2.lst: %w", err)
	}
	return f, nil
}

type lstEnd struct {
	typ                 mad.NodeType
	ports               int
	sys, node, portGUID uint64
	ven, dev, rev       uint64
	desc                string
	lid                 uint16
	pn                  int
}

// lstEndText cuts "{ ... }" with a nested "{desc}" off the front of s.
func lstEndText(s string) (end lstEnd, rest string, err error) {
	s = strings.TrimLeft(s, " \t")
	if !strings.HasPrefix(s, "{ ") {
		return end, "", errors.New(`want "{ CA|SW|RT Ports:.. }" for each end of the link`)
	}
	s = s[2:]
	open := strings.IndexByte(s, '{')
	closeDesc := strings.Index(s, "} LID:")
	if open < 0 || closeDesc < open {
		return end, "", errors.New("no {description} followed by LID: in the end's braces")
	}
	end.desc = s[open+1 : closeDesc]
	tail := s[closeDesc+1:]
	stop := strings.Index(tail, " }")
	if stop < 0 {
		return end, "", errors.New("unclosed { of a link end")
	}
	fields := append(strings.Fields(s[:open]), strings.Fields(tail[:stop])...)
	rest = tail[stop+2:]
	if len(fields) == 0 {
		return end, "", errors.New("empty link end")
	}
	switch fields[0] {
	case "CA":
		end.typ = mad.NodeCA
	case "SW":
		end.typ = mad.NodeSwitch
	case "RT":
		end.typ = mad.NodeRouter
	default:
		return end, "", fmt.Errorf("node type %q: want CA, SW or RT", fields[0])
	}
	seen := map[string]bool{}
	for _, fld := range fields[1:] {
		k, v, ok := strings.Cut(fld, ":")
		if !ok {
			return end, "", fmt.Errorf("%q is not KEY:hex", fld)
		}
		n, err := strconv.ParseUint(v, 16, 64)
		if err != nil {
			return end, "", fmt.Errorf("%s %q is not hex", k, v)
		}
		seen[k] = true
		switch k {
		case "Ports":
			if n == 0 || n > 254 {
				return end, "", fmt.Errorf("Ports:%s is not 1..254", v)
			}
			end.ports = int(n)
		case "SystemGUID":
			end.sys = n
		case "NodeGUID":
			end.node = n
		case "PortGUID":
			end.portGUID = n
		case "VenID":
			end.ven = n & 0xffffff
		case "DevID":
			end.dev = n & 0xffff
		case "Rev":
			end.rev = n & 0xffffffff
		case "LID":
			if n > 0xffff {
				return end, "", fmt.Errorf("LID:%s does not fit 16 bits", v)
			}
			end.lid = uint16(n)
		case "PN":
			end.pn = int(n)
		}
	}
	for _, k := range []string{"Ports", "NodeGUID", "PortGUID", "PN"} {
		if !seen[k] {
			return end, "", fmt.Errorf("link end without %s:", k)
		}
	}
	if end.pn == 0 || end.pn > end.ports {
		return end, "", fmt.Errorf("PN:%x is not 1..Ports:%x", end.pn, end.ports)
	}
	return end, rest, nil
}

// lstSpeed maps SPD= (Gb/s per lane) to a speed.
func lstSpeed(s string) (mad.Speed, error) {
	switch s {
	case "2.5":
		return mad.SpeedSDR, nil
	case "5":
		return mad.SpeedDDR, nil
	case "10":
		return mad.SpeedQDR, nil
	case "FDR10", "10.3125":
		return mad.SpeedFDR10, nil
	case "14":
		return mad.SpeedFDR, nil
	case "25":
		return mad.SpeedEDR, nil
	case "50":
		return mad.SpeedHDR, nil
	case "100":
		return mad.SpeedNDR, nil
	}
	return 0, fmt.Errorf("SPD=%s: want the per-lane Gb/s (2.5, 5, 10, 14, 25, 50, 100)", s)
}

func lstLine(f *Fabric, nodes map[uint64]*Node, t string) error {
	a, rest, err := lstEndText(t)
	if err != nil {
		return err
	}
	b, rest, err := lstEndText(rest)
	if err != nil {
		return err
	}
	var w mad.Width
	var sp mad.Speed
	state := mad.PortStateActive
	for _, kv := range strings.Fields(rest) {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "PHY":
			if w, _, err = parseCompactRate(v + "???"); err != nil {
				return fmt.Errorf("PHY=%s: want a width such as 4x", v)
			}
		case "LOG":
			switch v {
			case "ACT":
				state = mad.PortStateActive
			case "ARM":
				state = mad.PortStateArmed
			case "INI":
				state = mad.PortStateInit
			case "DWN":
				state = mad.PortStateDown
			default:
				return fmt.Errorf("LOG=%s: want ACT, ARM, INI or DWN", v)
			}
		case "SPD":
			if sp, err = lstSpeed(v); err != nil {
				return err
			}
		}
	}
	var ports [2]*Port
	for i, e := range []lstEnd{a, b} {
		n := nodes[e.node]
		if n == nil {
			n = &Node{Type: e.typ, GUID: e.node, SystemImageGUID: e.sys, Description: e.desc,
				VendorID: uint32(e.ven), DeviceID: uint16(e.dev), Revision: uint32(e.rev), Ports: make([]*Port, e.ports+1)}
			if e.typ == mad.NodeSwitch {
				n.Switch = &Switch{}
				n.Ports[0] = &Port{Node: n, GUID: e.portGUID, LID: e.lid, State: mad.PortStateActive, PhysState: mad.PhysLinkUp}
			}
			nodes[e.node] = n
			f.Nodes = append(f.Nodes, n)
		}
		if n.Type != e.typ || n.NumPorts() != e.ports {
			return fmt.Errorf("node 0x%016x was a %v with %d ports, now a %v with %d", n.GUID, n.Type, n.NumPorts(), e.typ, e.ports)
		}
		if n.Ports[e.pn] != nil {
			return fmt.Errorf("node 0x%016x port %d is on two links", n.GUID, e.pn)
		}
		p := &Port{Node: n, Num: uint8(e.pn), GUID: e.portGUID, State: state, PhysState: mad.PhysLinkUp, WidthActive: w, SpeedActive: sp}
		if e.typ != mad.NodeSwitch {
			p.LID = e.lid
		}
		n.Ports[e.pn] = p
		ports[i] = p
	}
	ports[0].Remote, ports[1].Remote = ports[1], ports[0]
	return nil
}

func decodeLst(data []byte) (*Fabric, error) { return ParseIBDiagnetLst(bytes.NewReader(data)) }
