package fabric

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ibdoctor/ibdoctor/mad"
)

// ibsim net files (the topology language of the OFED fabric simulator,
// ibsim 0.10-0.12). The reader follows ibsim's own parser so that the
// model it returns is the fabric ibsim will simulate: GUIDs assigned the
// way ibsim assigns them, widths and speeds computed from both ends'
// enabled masks the way ibsim brings links up.
//
//	vendid=0x2c9                      id lines: apply to the next node
//	devid=0xcf08                      (devid stays until changed)
//	sysimgguid=0x...
//	switchguid=0x...                  also caguid=, hcaguids=, rtguid=
//	Switch 40 "leaf01" # "MF0;leaf01:MQM8700/U1" enhanced port 0 lid 4 lmc 0
//	[1] "gpu001"[1]
//	[4] "gpu004"[1] w=1               w= width, s= speed, e= ext speed masks
//
//	Hca 1 "gpu001" # "gpu001 mlx5_0"  also Ca, Rt
//	[1] "leaf01"[1] # lid 9 lmc 0     a CA port's LID in the trailing comment
//
// Global lines width=, speed=, extspeed= set the enabled masks of ports of
// nodes declared after them. include, do, module and @aliases are not
// supported (an error says so).

// ibsim's width and speed mask encodings.
const (
	ibsimSpeedLegacy = mad.SpeedSDR | mad.SpeedDDR | mad.SpeedQDR
	ibsimSpeedExt    = mad.SpeedFDR | mad.SpeedEDR | mad.SpeedHDR | mad.SpeedNDR
)

// extToSpeed maps ibsim's e= mask (FDR 1, EDR 2, HDR 4, NDR 8) to Speed.
func extToSpeed(e uint64) mad.Speed {
	var s mad.Speed
	for i, sp := range []mad.Speed{mad.SpeedFDR, mad.SpeedEDR, mad.SpeedHDR, mad.SpeedNDR} {
		if e&(1<<i) != 0 {
			s |= sp
		}
	}
	return s
}

// speedToExt is the inverse of extToSpeed.
func speedToExt(s mad.Speed) uint64 {
	var e uint64
	for i, sp := range []mad.Speed{mad.SpeedFDR, mad.SpeedEDR, mad.SpeedHDR, mad.SpeedNDR} {
		if s&sp != 0 {
			e |= 1 << i
		}
	}
	return e
}

// ParseNetFile reads an ibsim net file and returns the fabric ibsim would
// build from it, and the file's node ids (what SIM_HOST and the ibsim
// console name nodes by). As in ibsim: a node without a guid line gets
// the next GUID of its type's counter (CAs from 0x100000, switches from
// 0x200000, routers from 0, each CA reserving 1+ports GUIDs); a switch's
// ports share its GUID and a CA's port i has GUID+i; system image GUID is
// the node GUID unless sysimgguid= precedes it; a description defaults to
// the node id. Linked ports are LinkUp/Init (what ibsim reports before an
// SM runs) with the width and speed ibsim brings the link up at; unlinked
// ports are Polling/Down. Ports report the Supported masks ibsim 0.10
// reports. Nodes keep the file order; the first node's Path is empty (it
// is the default attach point), the others' nil.
//
// Quirks of ibsim kept on purpose: a "Ca" line's port count is read from
// its fourth character on, so "Ca 12" declares 2 ports (ibnetdiscover
// writes "Ca\t12", which ibsim reads correctly); a port line without
// [peerport] connects to port 1.
func ParseNetFile(r io.Reader) (*Fabric, map[string]*Node, error) {
	p, err := parseNetFile(r)
	if err != nil {
		return nil, nil, err
	}
	return &p.f, p.ids, nil
}

// parseNetFile is ParseNetFile, keeping the parser (whether the file gave
// any rate).
func parseNetFile(r io.Reader) (*netParser, error) {
	p := &netParser{
		ids:       make(map[string]*Node),
		width:     mad.Width4X,
		speed:     1, // SDR
		guidsCA:   0x100000,
		guidsSW:   0x200000,
		absCA:     0x100000,
		absSW:     0x200000,
		byGUID:    make(map[uint64]bool),
		remoteIDs: make(map[*Port]netPeer),
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		p.lineNo++
		line := strings.TrimRight(sc.Text(), "\r")
		if err := p.line(line); err != nil {
			return nil, &lineError{format: "ibsim net file", line: p.lineNo, text: line, err: err}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("fabric: reading ibsim net file: %w", err)
	}
	if err := p.link(); err != nil {
		return nil, err
	}
	if len(p.f.Nodes) > 0 {
		p.f.Nodes[0].Path = mad.Path{}
	}
	return p, nil
}

type netPeer struct {
	id   string
	port int
	line int
	text string
}

type netParser struct {
	f      Fabric
	lineNo int
	ids    map[string]*Node
	cur    *Node
	left   int // port lines still allowed in the current record

	width            mad.Width // global width=
	speed, ext       uint64    // global speed=, extspeed=
	vendID, devID    uint64
	sysGUID          uint64
	guidsCA, guidsSW uint64
	guidsRt          uint64
	absCA, absSW     uint64
	absRt            uint64
	byGUID           map[uint64]bool
	remoteIDs        map[*Port]netPeer
	ports            []*Port // every port in declaration order
	// rates is set when the file gives any width or speed (width=,
	// speed=, extspeed=, w=, s=, e=, or ibnetdiscover's connection
	// data): without one every link runs ibsim's default, 4X SDR.
	rates bool
}

func (p *netParser) line(line string) error {
	if p.cur != nil {
		// Inside a record: ibsim reads port lines until a line that
		// starts with neither '[' nor '@' (comment lines are skipped),
		// and that line is consumed as the end of the record.
		switch {
		case strings.HasPrefix(line, "#"):
			return nil
		case strings.HasPrefix(line, "["):
			if p.left == 0 {
				// ibsim stops reading the record after nports lines
				// and ignores further "[..." lines.
				p.cur = nil
				return nil
			}
			p.left--
			return p.portLine(line)
		case strings.HasPrefix(line, "@"):
			return errors.New("port aliases (@name) are not supported")
		default:
			p.cur = nil
			if strings.TrimSpace(line) != "" {
				return errors.New("ibsim ends a node record at the first line that is not a [port] line and would swallow this one; put a blank line before it")
			}
			return nil
		}
	}
	has := func(pfx string) bool { return strings.HasPrefix(line, pfx) }
	switch {
	case has("Switch"):
		return p.nodeLine(mad.NodeSwitch, line, 6)
	case has("Hca"), has("Ca"):
		return p.nodeLine(mad.NodeCA, line, 3)
	case has("Rt"):
		return p.nodeLine(mad.NodeRouter, line, 3)
	case has("switchguid"):
		return p.guidBase(line, &p.absSW, &p.guidsSW)
	case has("hcaguids"), has("caguid"):
		return p.guidBase(line, &p.absCA, &p.guidsCA)
	case has("rtguid"):
		return p.guidBase(line, &p.absRt, &p.guidsRt)
	case has("vendid"):
		v, err := assignValue(line)
		p.vendID = v & 0xffffff
		return err
	case has("devid"):
		v, err := assignValue(line)
		p.devID = v & 0xffff
		return err
	case has("sysimgguid"):
		v, err := assignValue(line)
		p.sysGUID = v
		return err
	case has("width"):
		v, err := assignValue(line)
		if err == nil && (v < 1 || v > 31) {
			err = fmt.Errorf("width=%d: want a LinkWidthEnabled mask 1..31 (1=1X 2=4X 4=8X 8=12X 16=2X)", v)
		}
		p.width, p.rates = mad.Width(v), true
		return err
	case has("speed"):
		v, err := assignValue(line)
		if err == nil && (v < 1 || v > 7) {
			err = fmt.Errorf("speed=%d: want a LinkSpeedEnabled mask 1..7 (1=SDR 2=DDR 4=QDR)", v)
		}
		p.speed, p.rates = v, true
		return err
	case has("extspeed"):
		v, err := assignValue(line)
		if err == nil && v > 15 {
			err = fmt.Errorf("extspeed=%d: want a LinkSpeedExtEnabled mask 0..15 (1=FDR 2=EDR 4=HDR 8=NDR)", v)
		}
		p.ext, p.rates = v, true
		return err
	case has("module"), has("include"), has("do"):
		return fmt.Errorf("%q lines are not supported; expand the file first", strings.Fields(line)[0])
	}
	return nil // ibsim ignores every other line
}

// assignValue parses the number after '=' the way strtol(s, 0) does
// (leading part only: "0x10(10)" gives 0x10).
func assignValue(line string) (uint64, error) {
	_, v, ok := strings.Cut(line, "=")
	if !ok {
		return 0, errors.New("assignment without '='")
	}
	return leadingNumber(v)
}

func leadingNumber(v string) (uint64, error) {
	v = strings.TrimLeft(v, " \t")
	end := 0
	hex := len(v) > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')
	if hex {
		end = 2
	}
	for end < len(v) {
		c := v[end]
		if c >= '0' && c <= '9' || hex && (c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			end++
			continue
		}
		break
	}
	n, err := parseUint(v[:end], 64)
	if err != nil {
		return 0, fmt.Errorf("%q does not start with a number", v)
	}
	return n, nil
}

func (p *netParser) guidBase(line string, abs, cur *uint64) error {
	i := strings.IndexAny(line, "=+")
	if i < 0 {
		return errors.New("guid line without '=' or '+'")
	}
	v, err := leadingNumber(line[i+1:])
	if err != nil {
		return err
	}
	if line[i] == '+' {
		*cur = *abs + v
	} else {
		*abs, *cur = v, v
	}
	return nil
}

func (p *netParser) nodeLine(typ mad.NodeType, line string, skip int) error {
	if len(line) < skip {
		return errors.New("node line without a port count")
	}
	rest := strings.TrimLeftFunc(line[skip:], func(r rune) bool { return r < '0' || r > '9' })
	nports, err := leadingNumber(rest)
	if err != nil || nports == 0 || nports > 254 {
		return fmt.Errorf("node line: port count must be 1..254")
	}
	id, after, ok := quoted(line)
	if !ok {
		return errors.New(`node line without a quoted node id`)
	}
	if len(id) > 64 {
		id = id[:64]
	}
	if _, dup := p.ids[id]; dup {
		return fmt.Errorf("node id %q already exists", id)
	}
	var desc, tail string
	if i := strings.IndexByte(after, '#'); i >= 0 {
		s := strings.TrimLeft(after[i+1:], " \t")
		if strings.HasPrefix(s, `"`) {
			if j := strings.IndexByte(s[1:], '"'); j >= 0 {
				desc, tail = s[1:1+j], s[2+j:]
			} else {
				desc = s[1:]
			}
		} else {
			desc, tail = s, ""
			for _, k := range []string{" enhanced port ", " base port ", " lid ", " lmc "} {
				if j := strings.Index(s, k); j >= 0 {
					desc, tail = s[:j], s[j+1:]
					break
				}
			}
		}
	}
	if desc == "" {
		desc = id
	}
	if len(desc) > 63 {
		desc = desc[:63]
	}
	var guid *uint64
	switch typ {
	case mad.NodeSwitch:
		guid = &p.guidsSW
	case mad.NodeCA:
		guid = &p.guidsCA
	default:
		guid = &p.guidsRt
	}
	if p.byGUID[*guid] {
		return fmt.Errorf("node GUID 0x%x already exists (a guid line reused it)", *guid)
	}
	n := &Node{
		Type:            typ,
		GUID:            *guid,
		SystemImageGUID: *guid,
		Description:     desc,
		VendorID:        uint32(p.vendID),
		DeviceID:        uint16(p.devID),
		Ports:           make([]*Port, nports+1),
	}
	if p.sysGUID != 0 {
		n.SystemImageGUID = p.sysGUID
	}
	p.byGUID[n.GUID] = true
	if typ == mad.NodeSwitch {
		*guid++
		n.Switch = &Switch{EnhancedPort0: strings.Contains(tail, "enhanced port 0")}
	} else {
		*guid += nports + 1
	}
	p.vendID, p.sysGUID = 0, 0
	first := 1
	if typ == mad.NodeSwitch {
		first = 0
	}
	for i := first; i <= int(nports); i++ {
		pt := &Port{Node: n, Num: uint8(i), GUID: n.GUID,
			WidthEnabled: p.width, SpeedEnabled: mad.Speed(p.speed) | extToSpeed(p.ext)}
		if typ != mad.NodeSwitch {
			pt.GUID = n.GUID + uint64(i)
		}
		n.Ports[i] = pt
		p.ports = append(p.ports, pt)
	}
	if typ == mad.NodeSwitch {
		p0 := n.Ports[0]
		p0.State, p0.PhysState = mad.PortStateActive, mad.PhysLinkUp
		p0.WidthEnabled, p0.SpeedEnabled = 0, 0
		if err := lidLMC(p0, tail); err != nil {
			return err
		}
	}
	p.ids[id] = n
	p.f.Nodes = append(p.f.Nodes, n)
	p.cur, p.left = n, int(nports)
	return nil
}

// lidLMC reads "lid N" and "lmc N" anywhere in s (ibsim uses strstr).
func lidLMC(pt *Port, s string) error {
	if i := strings.Index(s, "lid "); i >= 0 {
		v, err := leadingNumber(s[i+4:])
		if err != nil || v > 0xffff {
			return fmt.Errorf("lid in %q is not a LID", s)
		}
		pt.LID = uint16(v)
	}
	if i := strings.Index(s, "lmc "); i >= 0 {
		v, err := leadingNumber(s[i+4:])
		if err != nil || v > 7 {
			return fmt.Errorf("lmc in %q is not 0..7", s)
		}
		pt.LMC = uint8(v)
	}
	return nil
}

func (p *netParser) portLine(line string) error {
	n := p.cur
	num, err := leadingNumber(line[1:])
	if err != nil || num > uint64(n.NumPorts()) {
		return fmt.Errorf("bad port number (node has ports 1..%d)", n.NumPorts())
	}
	if num == 0 {
		return errors.New("port 0 cannot be cabled")
	}
	pt := n.Ports[num]
	if _, dup := p.remoteIDs[pt]; dup {
		return fmt.Errorf("port %d listed twice", num)
	}
	rid, rest, ok := quoted(line)
	if !ok {
		return errors.New(`port line without a quoted peer node id`)
	}
	if strings.ContainsAny(rid, "@#") {
		return fmt.Errorf("peer %q: aliases and module prefixes are not supported", rid)
	}
	if len(rid) > 64 {
		rid = rid[:64]
	}
	peer := netPeer{id: rid, port: 1, line: p.lineNo, text: line}
	if strings.HasPrefix(rest, "[") {
		v, err := leadingNumber(rest[1:])
		if err != nil || v == 0 {
			return errors.New("bad peer port number after the peer id")
		}
		peer.port = int(v)
	}
	// Options: every '=' with the nearest letter before it.
	for i := 0; i < len(rest); i++ {
		if rest[i] != '=' {
			continue
		}
		j := i - 1
		for j >= 0 && !isAlpha(rest[j]) {
			j--
		}
		if j < 0 {
			return errors.New("'=' without an option letter")
		}
		v, err := leadingNumber(rest[i+1:])
		if err != nil {
			return fmt.Errorf("option %c=: %v", rest[j], err)
		}
		switch rest[j] {
		case 'w', 's', 'e':
			p.rates = true
		}
		switch rest[j] {
		case 'w':
			if v < 1 || v > 31 {
				return fmt.Errorf("w=%d: want a LinkWidthEnabled mask 1..31 (1=1X 2=4X 4=8X 8=12X 16=2X)", v)
			}
			pt.WidthEnabled = mad.Width(v)
		case 's':
			if v < 1 || v > 7 {
				return fmt.Errorf("s=%d: want a LinkSpeedEnabled mask 1..7 (1=SDR 2=DDR 4=QDR)", v)
			}
			pt.SpeedEnabled = pt.SpeedEnabled&^ibsimSpeedLegacy | mad.Speed(v)
		case 'e':
			if v > 15 {
				return fmt.Errorf("e=%d: want a LinkSpeedExtEnabled mask 0..15 (1=FDR 2=EDR 4=HDR 8=NDR)", v)
			}
			pt.SpeedEnabled = pt.SpeedEnabled&^ibsimSpeedExt | extToSpeed(v)
		}
	}
	// Connection data as ibnetdiscover writes it: the last "lid ..."
	// without a quote after it.
	if n.Type != mad.NodeRouter {
		if i := lastLidNoQuote(rest); i >= 0 {
			if n.Type == mad.NodeCA {
				if err := lidLMC(pt, rest); err != nil {
					return err
				}
			}
			var rlid, width int
			var sp string
			if k, _ := fmt.Sscanf(rest[i:], "lid %d %dx%s", &rlid, &width, &sp); k == 3 {
				p.rates = true
				switch width {
				case 12:
					pt.WidthEnabled = mad.Width1X | mad.Width4X | mad.Width12X
				case 8:
					pt.WidthEnabled = mad.Width8X
				case 4:
					pt.WidthEnabled = mad.Width1X | mad.Width4X
				case 1:
					pt.WidthEnabled = mad.Width1X
				case 2:
					pt.WidthEnabled = mad.Width2X
				default:
					return fmt.Errorf("width %dx is not 1x, 2x, 4x, 8x or 12x", width)
				}
				if len(sp) > 9 {
					sp = sp[:9]
				}
				// ibsim matches the token as a prefix of each name;
				// SDR..QDR set the legacy mask only, FDR10 adds the
				// Mellanox bit, FDR..NDR replace everything.
				const all = mad.SpeedFDR10 | ibsimSpeedLegacy
				for _, c := range []struct {
					name    string
					en      mad.Speed
					replace bool
				}{
					{"SDR", mad.SpeedSDR, false},
					{"DDR", mad.SpeedSDR | mad.SpeedDDR, false},
					{"QDR", ibsimSpeedLegacy, false},
					{"FDR", all | mad.SpeedFDR, true},
					{"EDR", all | mad.SpeedFDR | mad.SpeedEDR, true},
					{"HDR", all | mad.SpeedFDR | mad.SpeedEDR | mad.SpeedHDR, true},
					{"NDR", all | ibsimSpeedExt, true},
					{"FDR10", all, false},
				} {
					if !strings.HasPrefix(c.name, sp) {
						continue
					}
					if c.replace {
						pt.SpeedEnabled = c.en
					} else {
						pt.SpeedEnabled = pt.SpeedEnabled&^ibsimSpeedLegacy | c.en
					}
					break
				}
			}
		}
	}
	p.remoteIDs[pt] = peer
	return nil
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// lastLidNoQuote finds "lid" followed by no double quote up to the end
// (ibsim's regex `lid[^"]*$`, leftmost match).
func lastLidNoQuote(s string) int {
	q := strings.LastIndexByte(s, '"')
	if i := strings.Index(s[q+1:], "lid"); i >= 0 {
		return q + 1 + i
	}
	return -1
}

// link connects ports the way ibsim's connect_ports does: both ends must
// name each other; the link comes up at the best width and speeds
// enabled on both ends.
func (p *netParser) link() error {
	for _, pt := range p.ports {
		peer, ok := p.remoteIDs[pt]
		if pt.Num == 0 && pt.Node.Type == mad.NodeSwitch {
			continue
		}
		if !ok {
			pt.State, pt.PhysState = mad.PortStateDown, mad.PhysPolling
			continue
		}
		if pt.Remote != nil {
			continue
		}
		fail := func(format string, a ...any) error {
			return &lineError{format: "ibsim net file", line: peer.line, text: peer.text, err: fmt.Errorf(format, a...)}
		}
		rn := p.ids[peer.id]
		if rn == nil {
			return fail("peer node %q is not declared", peer.id)
		}
		if peer.port > rn.NumPorts() {
			return fail("peer %q has %d ports, not %d", peer.id, rn.NumPorts(), peer.port)
		}
		rp := rn.Ports[peer.port]
		back, ok := p.remoteIDs[rp]
		if !ok || back.port != int(pt.Num) || p.ids[back.id] != pt.Node {
			return fail("peer %q port %d does not name this port back (ibsim needs the cable on both ends)", peer.id, peer.port)
		}
		w := (pt.WidthEnabled & rp.WidthEnabled).Max()
		if w == 0 {
			return fail("no width enabled on both ends (%v and %v); ibsim aborts on this", pt.WidthEnabled, rp.WidthEnabled)
		}
		common := pt.SpeedEnabled & rp.SpeedEnabled
		legacy := (common & ibsimSpeedLegacy).Max()
		if legacy == 0 {
			return fail("no SDR/DDR/QDR speed enabled on both ends (%v and %v); ibsim aborts on this", pt.SpeedEnabled, rp.SpeedEnabled)
		}
		sp := legacy
		if e := (common & ibsimSpeedExt).Max(); e != 0 {
			sp = e
		} else if common&mad.SpeedFDR10 != 0 {
			sp = mad.SpeedFDR10
		}
		for _, q := range []*Port{pt, rp} {
			q.WidthActive, q.SpeedActive = w, sp
			q.State, q.PhysState = mad.PortStateInit, mad.PhysLinkUp
		}
		pt.Remote, rp.Remote = rp, pt
	}
	for _, pt := range p.ports {
		if pt.Num == 0 && pt.Node.Type == mad.NodeSwitch {
			continue
		}
		pt.WidthSupported = mad.Width1X | mad.Width2X | mad.Width4X | mad.Width8X | mad.Width12X
		pt.SpeedSupported = ibsimSpeedLegacy
		if pt.SpeedActive&ibsimSpeedExt != 0 {
			pt.SpeedSupported |= mad.SpeedFDR | mad.SpeedEDR | mad.SpeedHDR
		}
	}
	return nil
}

// NetFileOptions tune WriteNetFile.
type NetFileOptions struct {
	// NodeID names a node in the file (what SIM_HOST and console
	// commands use). Default: ibnetdiscover's "S-<guid>"/"H-<guid>"/
	// "R-<guid>". Ids must be unique, at most 31 bytes (the attach
	// request's limit) and free of '"', '#', '@' and whitespace.
	NodeID func(*Node) string
	// MaxSpeed is the fastest lane speed the target ibsim can bring a
	// link up at: 0 means HDR (ibsim 0.10, Debian 12); set mad.SpeedNDR
	// for ibsim 0.11+. Faster speeds in the fabric are written as it.
	MaxSpeed mad.Speed
}

// DefaultNodeID is WriteNetFile's default node id: "S-<16 hex digits>"
// for switches, "H-..." for CAs, "R-..." for routers.
func DefaultNodeID(n *Node) string {
	s := idNodeName(n)
	return s[1 : len(s)-1]
}

// WriteNetFile writes f as an ibsim net file from which ibsim simulates
// the same nodes (type, GUID, system image GUID, vendor and device IDs,
// description, port count, switch enhanced port 0), the same cables and,
// for each port, enabled width and speed masks: the port's Enabled masks
// where set, else its Active width and speed, so a link degraded in the
// model (e.g. 1X on both ends) comes up degraded in ibsim. Switch port-0
// LIDs and CA/router port LIDs that are set are written too (an SM may
// keep or replace them). FDR10 (a Mellanox extension ibsim only takes
// from ibnetdiscover-style comments) is written that way.
//
// What ibsim cannot reproduce: CA port GUIDs other than node GUID + port
// number, and per-port Supported masks; WriteNetFile does not fail on
// those. It fails on what would make ibsim abort: ids that are not
// unique, descriptions with '"' or line breaks, and links whose ends have
// no width or legacy speed in common.
func WriteNetFile(w io.Writer, f *Fabric, opt NetFileOptions) error {
	idOf := opt.NodeID
	if idOf == nil {
		idOf = DefaultNodeID
	}
	maxSp := opt.MaxSpeed
	if maxSp == 0 {
		maxSp = mad.SpeedHDR
	}
	ids := make(map[*Node]string, len(f.Nodes))
	seen := make(map[string]*Node, len(f.Nodes))
	for _, n := range f.Nodes {
		id := idOf(n)
		if id == "" || len(id) > 31 || strings.ContainsAny(id, "\"#@ \t\r\n") {
			return fmt.Errorf("fabric: net file: node 0x%016x: id %q must be 1..31 bytes without quotes, '#', '@' or spaces", n.GUID, id)
		}
		if o := seen[id]; o != nil {
			return fmt.Errorf("fabric: net file: nodes 0x%016x and 0x%016x both have id %q; give NodeID a unique name", o.GUID, n.GUID, id)
		}
		if strings.ContainsAny(n.Description, "\"\r\n") {
			return fmt.Errorf("fabric: net file: node %s: description %q has a quote or line break ibsim cannot read", id, n.Description)
		}
		seen[id], ids[n] = n, id
	}
	type enabled struct {
		w          mad.Width
		legacy, ex uint64
		fdr10      bool
	}
	en := func(pt *Port) enabled {
		wm := pt.WidthEnabled
		if wm == 0 {
			wm = pt.WidthActive
		}
		sm := pt.SpeedEnabled
		if sm == 0 {
			sm = pt.SpeedActive
		}
		// clamp to what the target ibsim can do
		if sm&^(maxSp|(maxSp-1)) != 0 {
			sm &= maxSp | (maxSp - 1)
			sm |= maxSp
		}
		e := enabled{w: wm, legacy: uint64(sm & ibsimSpeedLegacy), ex: speedToExt(sm)}
		if e.legacy == 0 {
			e.legacy = 7 // ibsim needs a legacy speed; real ports enable all three
		}
		e.fdr10 = e.ex == 0 && sm&mad.SpeedFDR10 != 0
		return e
	}
	for _, l := range f.Links() {
		a, b := en(l.A), en(l.B)
		name := func(p *Port) string { return fmt.Sprintf("%s[%d]", ids[p.Node], p.Num) }
		if a.w != 0 && b.w != 0 && a.w&b.w == 0 {
			return fmt.Errorf("fabric: net file: link %s-%s: widths %v and %v have nothing in common; ibsim would abort", name(l.A), name(l.B), a.w, b.w)
		}
		if a.legacy&b.legacy == 0 {
			return fmt.Errorf("fabric: net file: link %s-%s: speeds %v and %v have no SDR/DDR/QDR in common; ibsim would abort", name(l.A), name(l.B), l.A.SpeedEnabled, l.B.SpeedEnabled)
		}
	}

	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# ibsim net file written by ibdoctor: %d nodes\n", len(f.Nodes))
	for _, n := range f.Nodes {
		fmt.Fprintf(bw, "\nvendid=0x%x\ndevid=0x%x\n", n.VendorID, n.DeviceID)
		if n.SystemImageGUID != 0 && n.SystemImageGUID != n.GUID {
			fmt.Fprintf(bw, "sysimgguid=0x%x\n", n.SystemImageGUID)
		}
		id := ids[n]
		desc := ""
		if n.Description != "" {
			desc = " # \"" + n.Description + "\""
		}
		switch n.Type {
		case mad.NodeSwitch:
			fmt.Fprintf(bw, "switchguid=0x%x\n", n.GUID)
			mode := "base"
			if n.Switch != nil && n.Switch.EnhancedPort0 {
				mode = "enhanced"
			}
			if desc == "" {
				desc = ` # ""`
			}
			fmt.Fprintf(bw, "Switch %d \"%s\"%s %s port 0", n.NumPorts(), id, desc, mode)
			if p0 := n.Ports[0]; p0 != nil && p0.LID != 0 {
				fmt.Fprintf(bw, " lid %d lmc %d", p0.LID, p0.LMC)
			}
			bw.WriteByte('\n')
		case mad.NodeRouter:
			fmt.Fprintf(bw, "rtguid=0x%x\nRt %d \"%s\"%s\n", n.GUID, n.NumPorts(), id, desc)
		default:
			fmt.Fprintf(bw, "caguid=0x%x\nHca %d \"%s\"%s\n", n.GUID, n.NumPorts(), id, desc)
		}
		for _, pt := range n.Ports {
			if pt == nil || pt.Num == 0 || pt.Remote == nil {
				continue
			}
			r := pt.Remote
			fmt.Fprintf(bw, "[%d] \"%s\"[%d]", pt.Num, ids[r.Node], r.Num)
			e := en(pt)
			if e.fdr10 {
				// ibsim takes FDR10 only from "lid N <w>xFDR10"; that
				// also sets the width mask from the lane count.
				if n.Type == mad.NodeCA && pt.LID != 0 {
					fmt.Fprintf(bw, " # lid %d lmc %d \"-\"", pt.LID, pt.LMC)
				} else {
					bw.WriteString(" #")
				}
				lanes := e.w.Max().Lanes()
				if lanes == 0 {
					lanes = 4
				}
				fmt.Fprintf(bw, " lid 0 %dxFDR10\n", lanes)
				continue
			}
			if e.w != 0 {
				fmt.Fprintf(bw, " w=%d", e.w)
			}
			fmt.Fprintf(bw, " s=%d e=%d", e.legacy, e.ex)
			if n.Type == mad.NodeCA && pt.LID != 0 {
				fmt.Fprintf(bw, " # lid %d lmc %d", pt.LID, pt.LMC)
			}
			bw.WriteByte('\n')
		}
	}
	return bw.Flush()
}

// IBSimArgs returns the ibsim command-line limits a fabric needs beyond
// ibsim's defaults (-N 2048 nodes, -S 256 switches, -P 13312 ports,
// -L 30720 LFT entries), with some headroom, e.g. ["-N", "60000", ...].
func IBSimArgs(f *Fabric) []string {
	var nodes, switches, ports, lids int
	for _, n := range f.Nodes {
		nodes++
		ports += len(n.Ports)
		if n.Type == mad.NodeSwitch {
			switches++
			lids++
		} else {
			lids += n.NumPorts()
		}
	}
	var args []string
	add := func(flag string, need, def int) {
		if need > def {
			args = append(args, flag, strconv.Itoa(need+need/8+16))
		}
	}
	add("-N", nodes, 2048)
	add("-S", switches, 256)
	add("-P", ports, 13312)
	if lids+1 > 30720 {
		args = append(args, "-L", "49152")
	}
	return args
}
