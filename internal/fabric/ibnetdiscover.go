package fabric

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/ibdoctor/ibdoctor/mad"
)

// ibnetdiscover's topology text: what `ibnetdiscover` (infiniband-diags)
// prints by default and with -g, and what ibsim also loads as a net file.
//
// A node block is a few "key=value" id lines, a node line and one line per
// connected port:
//
//	vendid=0x2c9
//	devid=0xcf08
//	sysimgguid=0xb83fd20300b20000
//	switchguid=0xb83fd20300b20000(b83fd20300b20000)
//	Switch	40 "S-b83fd20300b20000"		# "MF0;leaf02:MQM8700/U1" enhanced port 0 lid 5 lmc 0
//	[1]	"H-043f720300c30000"[1](43f720300c30001) 		# "gpu003 mlx5_0" lid 7 4xHDR
//	[37]	"S-b83fd20300a10000"[2]		# "MF0;spine01:MQM8700/U1" lid 2 4xHDR
//
//	caguid=0x43f720300c30000
//	Ca	2 "H-043f720300c30000"		# "gpu003 mlx5_0"
//	[1](43f720300c30001) 	"S-b83fd20300b20000"[1]		# lid 7 lmc 0 "MF0;leaf02:MQM8700/U1" lid 5 4xHDR
//
// What the text carries, and so what ParseIBNetDiscover fills in: node
// type, GUID, system image GUID, vendor and device IDs, description and
// port count; a switch's port-0 GUID, LID, LMC and enhanced-port-0 flag;
// each connected port's GUID (CAs and routers), LID and LMC (CAs and
// routers), active width and speed and the cable to its peer. Ports
// without a cable are not listed and stay nil. Listed ports get
// PhysState LinkUp and State Active: ibnetdiscover only lists ports it
// crossed. Switch ports 1..N get the switch's port GUID. The node named in
// "# Initiated from node ..." gets an empty, non-nil Path (the local
// node); other nodes have a nil Path. Nodes keep the file's order.

// ParseIBNetDiscover reads ibnetdiscover output (the default format and
// -g's grouped format).
func ParseIBNetDiscover(r io.Reader) (*Fabric, error) {
	p := &idParser{ids: make(map[string]*Node)}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		p.lineNo++
		line := strings.TrimRight(sc.Text(), "\r")
		if err := p.line(line); err != nil {
			return nil, &lineError{format: "ibnetdiscover", line: p.lineNo, text: line, err: err}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("fabric: reading ibnetdiscover text: %w", err)
	}
	if err := p.finish(); err != nil {
		return nil, err
	}
	return &p.f, nil
}

type idPending struct {
	line       int
	text       string
	port       *Port
	remoteID   string
	remotePort int
	remoteGUID uint64
	remoteLID  uint16
}

type idParser struct {
	f      Fabric
	lineNo int
	ids    map[string]*Node // quoted node id → node
	cur    *Node            // node whose port lines follow
	// id lines seen since the last node line
	vendID, devID uint64
	sysGUID       uint64
	guid, portGUI uint64
	guidType      mad.NodeType
	haveGUID      bool
	localGUID     uint64
	haveLocal     bool
	pending       []idPending
}

func (p *idParser) resetIDs() {
	p.vendID, p.devID, p.sysGUID, p.guid, p.portGUI, p.guidType, p.haveGUID = 0, 0, 0, 0, 0, 0, false
}

func (p *idParser) line(line string) error {
	t := strings.TrimSpace(line)
	switch {
	case t == "":
		p.cur = nil
		return nil
	case strings.HasPrefix(t, "#"):
		if rest, ok := strings.CutPrefix(t, "# Initiated from node "); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				g, err := parseHex(f[0])
				if err != nil {
					return fmt.Errorf("initiating node GUID %q: %v", f[0], err)
				}
				p.localGUID, p.haveLocal = g, true
			}
		}
		return nil
	case t == "Non-Chassis Nodes", strings.HasPrefix(t, "Chassis "), strings.HasPrefix(t, "Hostname:"):
		p.cur = nil
		return nil
	case line[0] == '[':
		if p.cur == nil {
			return errors.New("port line outside a node block (no Switch/Ca/Rt line before it)")
		}
		return p.portLine(t)
	}
	key, val, isKV := strings.Cut(t, "=")
	if isKV && !strings.ContainsAny(key, " \t\"") {
		return p.idLine(key, val)
	}
	for _, h := range []struct {
		word string
		typ  mad.NodeType
	}{{"Switch", mad.NodeSwitch}, {"Ca", mad.NodeCA}, {"Hca", mad.NodeCA}, {"Rt", mad.NodeRouter}} {
		if rest, ok := strings.CutPrefix(t, h.word); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
			return p.nodeLine(h.typ, rest)
		}
	}
	return errors.New("not an ibnetdiscover line (want a comment, key=value, Switch/Ca/Rt node line or [port] line)")
}

func (p *idParser) idLine(key, val string) error {
	// Values may carry trailers: "sysimgguid=0x.. \t\t# Chassis 1",
	// "switchguid=0x..(portguid)\t# chassis type".
	if i := strings.IndexByte(val, '#'); i >= 0 {
		val = val[:i]
	}
	val = strings.TrimSpace(val)
	var paren string
	if i := strings.IndexByte(val, '('); i >= 0 {
		j := strings.IndexByte(val, ')')
		if j < i {
			return fmt.Errorf("%s: unbalanced parenthesis in %q", key, val)
		}
		val, paren = strings.TrimSpace(val[:i]), val[i+1:j]
	}
	n, err := parseUint(val, 64)
	if err != nil {
		return fmt.Errorf("%s: %q is not a number", key, val)
	}
	switch key {
	case "vendid":
		if n > 0xffffff {
			return fmt.Errorf("vendid 0x%x does not fit 24 bits", n)
		}
		p.vendID = n
	case "devid":
		if n > 0xffff {
			return fmt.Errorf("devid 0x%x does not fit 16 bits", n)
		}
		p.devID = n
	case "sysimgguid":
		p.sysGUID = n
	case "switchguid", "caguid", "rtguid", "hcaguids":
		p.guid, p.haveGUID = n, true
		p.portGUI = n
		if paren != "" {
			if p.portGUI, err = parseHex(paren); err != nil {
				return fmt.Errorf("%s: port GUID %q is not hex", key, paren)
			}
		}
	default:
		// ibsim-only settings (width=, speed=, ...) carry nothing for
		// the model; ibnetdiscover never prints them.
	}
	return nil
}

// nodeLine parses what follows "Switch"/"Ca"/"Rt":
// `\t40 "S-..."\t\t# "desc" enhanced port 0 lid 5 lmc 0`.
func (p *idParser) nodeLine(typ mad.NodeType, rest string) error {
	f := strings.Fields(rest)
	if len(f) == 0 {
		return errors.New("node line without a port count")
	}
	nports, err := parseUint(f[0], 8)
	if err != nil || nports == 0 {
		return fmt.Errorf("port count %q is not 1..255", f[0])
	}
	id, after, ok := quoted(rest)
	if !ok {
		return errors.New(`node line without a quoted node id such as "S-0002c90200400000"`)
	}
	if _, dup := p.ids[id]; dup {
		return fmt.Errorf("node id %q appears twice", id)
	}
	n := &Node{Type: typ, Ports: make([]*Port, nports+1)}
	if p.haveGUID {
		n.GUID = p.guid
	} else if g, ok := guidFromID(id); ok {
		n.GUID = g
	} else {
		return fmt.Errorf("node %q: no GUID (no %sguid= line before it and the id is not X-<16 hex digits>)", id, strings.ToLower(typ.String()))
	}
	n.SystemImageGUID = p.sysGUID
	n.VendorID = uint32(p.vendID)
	n.DeviceID = uint16(p.devID)
	comment := ""
	if i := strings.IndexByte(after, '#'); i >= 0 {
		comment = strings.TrimSpace(after[i+1:])
	}
	if typ == mad.NodeSwitch {
		n.Switch = &Switch{}
		p0 := &Port{Node: n, Num: 0, GUID: n.GUID}
		if p.haveGUID {
			p0.GUID = p.portGUI
		}
		// `"desc" enhanced port 0 lid 5 lmc 0`
		tail := comment
		for _, k := range []string{`" enhanced port 0`, `" base port 0`} {
			if i := strings.LastIndex(comment, k); i >= 1 && strings.HasPrefix(comment, `"`) {
				n.Description = comment[1:i]
				tail = comment[i+1:]
				n.Switch.EnhancedPort0 = strings.HasPrefix(k, `" enhanced`)
				break
			}
		}
		if n.Description == "" && strings.HasPrefix(comment, `"`) {
			if d, r, ok := quoted(comment); ok {
				n.Description, tail = d, r
			}
		}
		if v, ok := fieldAfter(tail, "lid"); ok {
			lid, err := parseUint(v, 16)
			if err != nil {
				return fmt.Errorf("switch lid %q is not a number", v)
			}
			p0.LID = uint16(lid)
		}
		if v, ok := fieldAfter(tail, "lmc"); ok {
			lmc, err := parseUint(v, 3)
			if err != nil {
				return fmt.Errorf("switch lmc %q is not 0..7", v)
			}
			p0.LMC = uint8(lmc)
		}
		n.Ports[0] = p0
	} else if strings.HasPrefix(comment, `"`) {
		if i := strings.LastIndexByte(comment, '"'); i > 0 {
			n.Description = comment[1:i]
		}
	}
	p.ids[id] = n
	p.f.Nodes = append(p.f.Nodes, n)
	p.cur = n
	p.resetIDs()
	return nil
}

// guidFromID reads the GUID from ibnetdiscover's node ids ("S-<16 hex>").
func guidFromID(id string) (uint64, bool) {
	if len(id) != 18 || id[1] != '-' {
		return 0, false
	}
	g, err := parseHex(id[2:])
	return g, err == nil
}

// portLine parses one connected port of p.cur.
//
//	switch: [1][ext 1]	"H-..."[1](43f...) 		# "desc" lid 7 4xHDR
//	CA:     [1](43f...) 	"S-..."[1]		# lid 7 lmc 0 "desc" lid 5 4xHDR
func (p *idParser) portLine(t string) error {
	n := p.cur
	num, rest, ok := bracketNum(t)
	if !ok {
		return errors.New("port line does not start with [port number]")
	}
	if num == 0 || num >= len(n.Ports) {
		return fmt.Errorf("port %d out of range 1..%d for this node", num, n.NumPorts())
	}
	if n.Ports[num] != nil && n.Ports[num].Remote != nil || p.portListed(n, num) {
		return fmt.Errorf("port %d listed twice", num)
	}
	rest = skipExt(rest)
	port := n.Ports[num]
	if port == nil {
		port = &Port{Node: n, Num: uint8(num)}
		n.Ports[num] = port
	}
	port.PhysState, port.State = mad.PhysLinkUp, mad.PortStateActive
	if n.Type == mad.NodeSwitch && n.Ports[0] != nil {
		port.GUID = n.Ports[0].GUID
	}
	// After the number: ibdiagnet's port label and/or the port GUID
	// (CAs and routers): "(1/1/1)", "(B184D0F0/0/0/1)(guid)", "(guid)".
	var parens []string
	for rs := strings.TrimLeft(rest, " \t"); strings.HasPrefix(rs, "(") && len(parens) < 2; rs = rest {
		j := strings.IndexByte(rs, ')')
		if j < 0 {
			return errors.New("unclosed ( after the port number")
		}
		parens = append(parens, rs[1:j])
		rest = rs[j+1:]
	}
	guidText := ""
	switch {
	case len(parens) == 2:
		p.setLabel(port, parens[0])
		guidText = parens[1]
	case len(parens) == 1 && n.Type == mad.NodeSwitch:
		// ibnetdiscover prints no GUID for a switch's own ports.
		p.setLabel(port, parens[0])
	case len(parens) == 1:
		if _, err := parseHex(parens[0]); err != nil {
			p.setLabel(port, parens[0])
		} else {
			guidText = parens[0]
		}
	}
	if guidText != "" {
		g, err := parseHex(guidText)
		if err != nil {
			return fmt.Errorf("port GUID %q is not hex", guidText)
		}
		port.GUID = g
	}
	rid, after, ok := quoted(rest)
	if !ok {
		return errors.New(`port line without a quoted peer id such as "S-0002c90200400000"`)
	}
	rnum, after, ok := bracketNum(strings.TrimLeft(after, " \t"))
	if !ok || rnum == 0 {
		return errors.New("peer id not followed by [peer port number]")
	}
	after = skipExt(after)
	pend := idPending{line: p.lineNo, text: t, port: port, remoteID: rid, remotePort: rnum}
	comment := ""
	if i := strings.IndexByte(after, '#'); i >= 0 {
		comment = strings.TrimSpace(after[i+1:])
		after = after[:i]
	}
	if as := strings.TrimSpace(after); as != "" {
		if !strings.HasPrefix(as, "(") || !strings.HasSuffix(as, ")") {
			return fmt.Errorf("unexpected %q after the peer port", as)
		}
		g, err := parseHex(as[1 : len(as)-1])
		if err != nil {
			return fmt.Errorf("peer port GUID %q is not hex", as)
		}
		pend.remoteGUID = g
	}
	// Comment: [lid L lmc M ]"peer desc" lid RL RATE [extras]
	if comment != "" {
		if !strings.HasPrefix(comment, `"`) {
			pre, _, _ := strings.Cut(comment, `"`)
			if v, ok := fieldAfter(pre, "lid"); ok {
				lid, err := parseUint(v, 16)
				if err != nil {
					return fmt.Errorf("port lid %q is not a number", v)
				}
				port.LID = uint16(lid)
			}
			if v, ok := fieldAfter(pre, "lmc"); ok {
				lmc, err := parseUint(v, 3)
				if err != nil {
					return fmt.Errorf("port lmc %q is not 0..7", v)
				}
				port.LMC = uint8(lmc)
			}
		}
		tail := comment
		if i := strings.LastIndex(comment, `" lid `); i >= 0 {
			tail = comment[i+1:]
		}
		f := strings.Fields(tail)
		if len(f) >= 3 && f[0] == "lid" {
			lid, err := parseUint(f[1], 16)
			if err != nil {
				return fmt.Errorf("peer lid %q is not a number", f[1])
			}
			pend.remoteLID = uint16(lid)
			w, s, err := parseCompactRate(f[2])
			if err != nil {
				return err
			}
			port.WidthActive, port.SpeedActive = w, s
		}
	}
	p.pending = append(p.pending, pend)
	return nil
}

// setLabel keeps ibdiagnet's label of a port ("1/1/1").
func (p *idParser) setLabel(pt *Port, label string) {
	if p.f.PortLabels == nil {
		p.f.PortLabels = make(map[*Port]string)
	}
	p.f.PortLabels[pt] = label
}

// portListed reports whether a port line for n[num] is already pending.
func (p *idParser) portListed(n *Node, num int) bool {
	pt := n.Ports[num]
	if pt == nil {
		return false
	}
	for i := len(p.pending) - 1; i >= 0 && p.pending[i].port.Node == n; i-- {
		if p.pending[i].port == pt {
			return true
		}
	}
	return false
}

// skipExt drops -g's "[ext N]" after a port number.
func skipExt(s string) string {
	if strings.HasPrefix(s, "[ext ") {
		if j := strings.IndexByte(s, ']'); j >= 0 {
			return s[j+1:]
		}
	}
	return s
}

func (p *idParser) finish() error {
	for _, pd := range p.pending {
		fail := func(format string, a ...any) error {
			return &lineError{format: "ibnetdiscover", line: pd.line, text: pd.text, err: fmt.Errorf(format, a...)}
		}
		rn := p.ids[pd.remoteID]
		if rn == nil {
			return fail("peer %q has no node block in the file", pd.remoteID)
		}
		if pd.remotePort >= len(rn.Ports) {
			return fail("peer %q has %d ports, not %d", pd.remoteID, rn.NumPorts(), pd.remotePort)
		}
		rp := rn.Ports[pd.remotePort]
		if rp == nil {
			// The peer's block does not list the cable back; take what
			// this line says about the far end.
			rp = &Port{Node: rn, Num: uint8(pd.remotePort), PhysState: mad.PhysLinkUp, State: mad.PortStateActive,
				WidthActive: pd.port.WidthActive, SpeedActive: pd.port.SpeedActive}
			if rn.Type == mad.NodeSwitch && rn.Ports[0] != nil {
				rp.GUID = rn.Ports[0].GUID
			}
			rn.Ports[pd.remotePort] = rp
		}
		if rp.GUID == 0 {
			rp.GUID = pd.remoteGUID
		}
		if rn.Type != mad.NodeSwitch && rp.LID == 0 {
			rp.LID = pd.remoteLID
		}
		if pd.port.Remote != nil && pd.port.Remote != rp {
			return fail("port %d is cabled twice", pd.port.Num)
		}
		if rp.Remote != nil && rp.Remote != pd.port {
			o := rp.Remote
			return fail("peer %q port %d is already cabled to 0x%016x port %d", pd.remoteID, pd.remotePort, o.Node.GUID, o.Num)
		}
		pd.port.Remote, rp.Remote = rp, pd.port
	}
	if p.haveLocal {
		for _, n := range p.f.Nodes {
			if n.GUID == p.localGUID {
				n.Path = mad.Path{}
				break
			}
		}
	}
	return nil
}

// WriteIBNetDiscover writes f in ibnetdiscover's default topology format:
// switches, then CAs, then routers, each group in f.Nodes order, ports in
// number order, only ports with a Remote. Byte for byte what
// infiniband-diags 44 prints for the same fabric, except the "generated"
// comment line, which carries no timestamp. The output also loads into
// ibsim as a net file.
func WriteIBNetDiscover(w io.Writer, f *Fabric) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "#\n# Topology file: generated by ibdoctor\n#\n")
	// The initiator is only written when known: a file read without
	// one (ibdiagnet's) must not gain one.
	if local := initiator(f); local != nil {
		lp := local.GUID
		if pt := localPort(local); pt != nil {
			lp = pt.GUID
		}
		fmt.Fprintf(bw, "# Initiated from node %016x port %016x\n", local.GUID, lp)
	}
	var buf []byte
	for _, typ := range []mad.NodeType{mad.NodeSwitch, mad.NodeCA, mad.NodeRouter} {
		for _, n := range f.Nodes {
			if n.Type != typ {
				continue
			}
			buf = writeIDNode(bw, f, n, buf)
		}
	}
	return bw.Flush()
}

// initiator is the node with an empty non-nil Path (the local node), or nil.
func initiator(f *Fabric) *Node {
	for _, n := range f.Nodes {
		if n.Path != nil && len(n.Path) == 0 {
			return n
		}
	}
	return nil
}

func localPort(n *Node) *Port {
	if n.Type == mad.NodeSwitch {
		return n.Ports[0]
	}
	var first *Port
	for _, p := range n.Ports {
		if p == nil {
			continue
		}
		if p.Remote != nil {
			return p
		}
		if first == nil {
			first = p
		}
	}
	return first
}

func idNodeName(n *Node) string { return string(appendIDNodeName(nil, n)) }

// appendIDNodeName appends n's quoted node id: "S-", "H-" or "R-" and
// the GUID in 16 hex digits.
func appendIDNodeName(b []byte, n *Node) []byte {
	c := byte('?')
	switch n.Type {
	case mad.NodeSwitch:
		c = 'S'
	case mad.NodeCA:
		c = 'H'
	case mad.NodeRouter:
		c = 'R'
	}
	b = append(b, '"', c, '-')
	b = appendHex16(b, n.GUID)
	return append(b, '"')
}

// appendHex16 appends v as 16 lower-case hex digits (%016x).
func appendHex16(b []byte, v uint64) []byte {
	const digits = "0123456789abcdef"
	for shift := 60; shift >= 0; shift -= 4 {
		b = append(b, digits[(v>>uint(shift))&0xf])
	}
	return b
}

func appendHex(b []byte, v uint64) []byte  { return strconv.AppendUint(b, v, 16) }
func appendUint(b []byte, v uint64) []byte { return strconv.AppendUint(b, v, 10) }

// peerLID is the LID ibnetdiscover prints for a peer: a switch's port-0
// LID, else the port's own.
func peerLID(p *Port) uint16 {
	if p.Node.Type == mad.NodeSwitch {
		if len(p.Node.Ports) > 0 && p.Node.Ports[0] != nil {
			return p.Node.Ports[0].LID
		}
		return 0
	}
	return p.LID
}

// writeIDNode writes one node block. It formats into buf (returned for
// reuse) rather than through fmt: a 10,000-node fabric has tens of
// thousands of port lines.
func writeIDNode(w *bufio.Writer, f *Fabric, n *Node, buf []byte) []byte {
	b := append(buf[:0], "\nvendid=0x"...)
	b = appendHex(b, uint64(n.VendorID))
	b = append(b, "\ndevid=0x"...)
	b = appendHex(b, uint64(n.DeviceID))
	b = append(b, '\n')
	if n.SystemImageGUID != 0 {
		b = append(b, "sysimgguid=0x"...)
		b = appendHex(b, n.SystemImageGUID)
		b = append(b, '\n')
	}
	switch n.Type {
	case mad.NodeSwitch:
		var p0 Port
		if len(n.Ports) > 0 && n.Ports[0] != nil {
			p0 = *n.Ports[0]
		} else {
			p0.GUID = n.GUID
		}
		mode := "base"
		if n.Switch != nil && n.Switch.EnhancedPort0 {
			mode = "enhanced"
		}
		b = append(b, "switchguid=0x"...)
		b = appendHex(b, n.GUID)
		b = append(b, '(')
		b = appendHex(b, p0.GUID)
		b = append(b, ")\nSwitch\t"...)
		b = appendUint(b, uint64(n.NumPorts()))
		b = append(b, ' ')
		b = appendIDNodeName(b, n)
		b = append(b, "\t\t# \""...)
		b = append(b, n.Description...)
		b = append(b, "\" "...)
		b = append(b, mode...)
		b = append(b, " port 0 lid "...)
		b = appendUint(b, uint64(p0.LID))
		b = append(b, " lmc "...)
		b = appendUint(b, uint64(p0.LMC))
		b = append(b, '\n')
	default:
		word, key := "Ca", "ca"
		if n.Type == mad.NodeRouter {
			word, key = "Rt", "rt"
		}
		b = append(b, key...)
		b = append(b, "guid=0x"...)
		b = appendHex(b, n.GUID)
		b = append(b, '\n')
		b = append(b, word...)
		b = append(b, '\t')
		b = appendUint(b, uint64(n.NumPorts()))
		b = append(b, ' ')
		b = appendIDNodeName(b, n)
		b = append(b, "\t\t# \""...)
		b = append(b, n.Description...)
		b = append(b, "\"\n"...)
	}
	for _, p := range n.Ports {
		if p == nil || p.Num == 0 || p.Remote == nil {
			continue
		}
		r := p.Remote
		label, labelled := f.PortLabels[p]
		if n.Type == mad.NodeSwitch {
			b = append(b, '[')
			b = appendUint(b, uint64(p.Num))
			b = append(b, ']')
			if labelled {
				b = append(b, '(')
				b = append(b, label...)
				b = append(b, ')')
			}
			b = append(b, '\t')
			b = appendIDNodeName(b, r.Node)
			b = append(b, '[')
			b = appendUint(b, uint64(r.Num))
			b = append(b, ']')
			if r.Node.Type != mad.NodeSwitch {
				b = append(b, '(')
				b = appendHex(b, r.GUID)
				b = append(b, ") "...)
			}
			b = append(b, "\t\t# \""...)
			b = append(b, r.Node.Description...)
			b = append(b, "\" lid "...)
		} else {
			b = append(b, '[')
			b = appendUint(b, uint64(p.Num))
			b = append(b, ']')
			if labelled {
				b = append(b, '(')
				b = append(b, label...)
				b = append(b, ')')
			}
			b = append(b, '(')
			b = appendHex(b, p.GUID)
			b = append(b, ") \t"...)
			b = appendIDNodeName(b, r.Node)
			b = append(b, '[')
			b = appendUint(b, uint64(r.Num))
			b = append(b, ']')
			if r.Node.Type != mad.NodeSwitch {
				b = append(b, " ("...)
				b = appendHex(b, r.GUID)
				b = append(b, ") "...)
			}
			b = append(b, "\t\t# lid "...)
			b = appendUint(b, uint64(p.LID))
			b = append(b, " lmc "...)
			b = appendUint(b, uint64(p.LMC))
			b = append(b, " \""...)
			b = append(b, r.Node.Description...)
			b = append(b, "\" lid "...)
		}
		b = appendUint(b, uint64(peerLID(r)))
		b = append(b, ' ')
		b = appendCompactRate(b, p.WidthActive, p.SpeedActive)
		b = append(b, '\n')
	}
	w.Write(b)
	return b
}

// sortedNodes returns f's nodes ordered by GUID (stable for duplicates).
func sortedNodes(f *Fabric) []*Node {
	s := slices.Clone(f.Nodes)
	slices.SortStableFunc(s, func(a, b *Node) int { return cmp.Compare(a.GUID, b.GUID) })
	return s
}
