package fabric

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ibdoctor/ibdoctor/mad"
)

// DumpOptions selects dump_fts output variants.
type DumpOptions struct {
	// All lists every LID up to the top, invalid entries too (dump_fts -a).
	All bool
	// NoDests leaves out the destination column (dump_fts -n).
	NoDests bool
}

// WriteDumpFTS writes the unicast LFT of every switch that has one, in
// f.Nodes order, in the text format of infiniband-diags' dump_fts, which
// OpenSM's file routing engine loads (opensm -R file -U FILE).
func WriteDumpFTS(w io.Writer, f *Fabric, o DumpOptions) error {
	d := &dumper{w: bufio.NewWriterSize(w, 64<<10), f: f, o: o}
	for _, n := range f.Nodes {
		if n.Type != mad.NodeSwitch || n.Switch == nil || n.Switch.LFT == nil {
			continue
		}
		d.writeSwitch(n)
	}
	return d.w.Flush()
}

// WriteSwitchLFT writes one switch's LFT in dump_fts format.
func WriteSwitchLFT(w io.Writer, f *Fabric, sw *Node, o DumpOptions) error {
	if sw.Type != mad.NodeSwitch || sw.Switch == nil || sw.Switch.LFT == nil {
		return fmt.Errorf("topology: %q (GUID %#016x) is not a switch with a forwarding table", sw.Description, sw.GUID)
	}
	d := &dumper{w: bufio.NewWriter(w), f: f, o: o}
	d.writeSwitch(sw)
	return d.w.Flush()
}

func ftsNodeTypeName(t mad.NodeType) string {
	switch t {
	case mad.NodeCA:
		return "Channel Adapter"
	case mad.NodeSwitch:
		return "Switch"
	case mad.NodeRouter:
		return "Router"
	}
	return "Unknown"
}

// dumper writes LFTs in dump_fts format. Every switch lists the same
// destinations, so the text after each valid entry's port (": (...)\n")
// is made once per LID and kept: a 9,472-node fabric's 12 million entries
// then cost an append each, not a format and a LID lookup.
type dumper struct {
	w    *bufio.Writer
	f    *Fabric
	o    DumpOptions
	dest [][]byte // by LID; nil until first needed
	line []byte
}

func (d *dumper) destText(lid int) []byte {
	if lid >= len(d.dest) {
		d.dest = append(d.dest, make([][]byte, lid+1-len(d.dest))...)
	}
	if b := d.dest[lid]; b != nil {
		return b
	}
	var b []byte
	switch p := d.f.PortByLID(uint16(lid)); {
	case p == nil:
		b = []byte(": (unknown node and type)\n")
	case p.LMC > 0 && uint16(lid) != p.LID:
		// dump_fts counts a port's paths from 1, the base LID being
		// path #1, so base+1 is "path #2".
		b = fmt.Appendf(nil, ": (path #%d out of %d: portguid 0x%016x)\n", uint16(lid)-p.LID+1, 1<<p.LMC, p.GUID)
	default:
		b = fmt.Appendf(nil, ": (%s portguid 0x%016x: '%s')\n", ftsNodeTypeName(p.Node.Type), p.GUID, p.Node.Description)
	}
	d.dest[lid] = b
	return b
}

const illegalPort = ": (path #0 - illegal port)\n"

// writeSwitchHeader writes a switch's section header and returns the
// highest LID its table lists.
func writeSwitchHeader(w *bufio.Writer, n *Node) int {
	top := n.Switch.LFT.Len() - 1
	if t := int(n.Switch.LinearFDBTop); t > 0 && t < top {
		top = t
	}
	addr := "Lid 0"
	if n.Path != nil {
		addr = "DR path slid 0; dlid 0; " + n.Path.String()
	} else if p := n.Ports[0]; p != nil {
		addr = "Lid " + strconv.Itoa(int(p.LID))
	}
	fmt.Fprintf(w, "Unicast lids [0x0-0x%x] of switch %s guid 0x%016x (%s):\n", max(top, 0), addr, n.GUID, n.Description)
	w.WriteString("  Lid  Out   Destination\n       Port     Info \n")
	return top
}

// writeSwitchTrailer writes the count line that ends a switch's section.
func writeSwitchTrailer(w *bufio.Writer, count int, all bool) {
	if all {
		fmt.Fprintf(w, "%d lids dumped \n", count)
	} else {
		fmt.Fprintf(w, "%d valid lids dumped \n", count)
	}
}

func (d *dumper) writeSwitch(n *Node) {
	w := d.w
	lft := n.Switch.LFT
	top := writeSwitchHeader(w, n)
	count := 0
	for lid := 0; lid <= top; lid++ {
		out := lft.At(uint16(lid))
		valid := lid != 0 && int(out) < len(n.Ports)
		if !valid && !d.o.All {
			continue
		}
		count++
		// "0x%04x %03d "
		b := append(d.line[:0], '0', 'x')
		b = appendPadded(b, uint64(lid), 16, 4)
		b = append(b, ' ')
		b = appendPadded(b, uint64(out), 10, 3)
		b = append(b, ' ')
		switch {
		case d.o.NoDests:
			b = append(b, '\n')
		case !valid:
			b = append(b, illegalPort...)
		default:
			b = append(b, d.destText(lid)...)
		}
		w.Write(b)
		d.line = b
	}
	writeSwitchTrailer(w, count, d.o.All)
}

// appendPadded appends v in base (lower-case digits) with leading zeros
// to at least width digits, as %0*x and %0*d do.
func appendPadded(b []byte, v uint64, base, width int) []byte {
	var tmp [20]byte
	digits := strconv.AppendUint(tmp[:0], v, base)
	for i := len(digits); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, digits...)
}

// DumpedLFT is one switch's table as read from dump_fts or ibroute text.
type DumpedLFT struct {
	GUID        uint64
	Description string
	// LID is the switch's LID when the header names it ("switch Lid 4");
	// Path is its directed route when the header gives one.
	LID  uint16
	Path mad.Path
	// Entries in file order.
	Entries []DumpedEntry
}

// DumpedEntry is one "0x0005 006 : (...)" line.
type DumpedEntry struct {
	LID  uint16
	Port uint8
	// PortGUID of the destination when the line names one, else 0.
	PortGUID uint64
	// Dest is the text between the parentheses, if any.
	Dest string
}

// LFT returns the entries as a table indexed by LID (NoRoute elsewhere),
// long enough for the highest LID listed.
func (d *DumpedLFT) LFT() []uint8 {
	top := 0
	for _, e := range d.Entries {
		top = max(top, int(e.LID))
	}
	lft := make([]uint8, top+1)
	for i := range lft {
		lft[i] = NoRoute
	}
	for _, e := range d.Entries {
		lft[e.LID] = e.Port
	}
	return lft
}

// ParseDumpFTS reads dump_fts (or ibroute) unicast output: any number of
// "Unicast lids [...] of switch ... guid 0x... (desc):" sections with
// their "0xLID PORT ..." lines. Column headers, trailers and '#' comments
// are skipped; a Multicast section is an error.
func ParseDumpFTS(r io.Reader) ([]DumpedLFT, error) {
	var out []DumpedLFT
	var cur *DumpedLFT
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	lineno := 0
	for sc.Scan() {
		lineno++
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#':
		case strings.HasPrefix(line, "Multicast mlids"):
			return nil, fmt.Errorf("topology: dump_fts line %d: a multicast table; give unicast output (dump_fts without -M)", lineno)
		case strings.HasPrefix(line, "dump_ucast_routes: Switch 0x"), strings.HasPrefix(line, "osm_ucast_mgr_dump_ucast_routes: Switch 0x"):
			// OpenSM's fdbs dump (opensm.fdbs) and ibdiagnet's
			// (ibdiagnet2.fdbs, the osm_ucast_mgr_ prefix).
			_, hex, _ := strings.Cut(line, "Switch 0x")
			g, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
			if err != nil {
				return nil, fmt.Errorf("topology: dump_fts line %d: switch GUID in %q: %w", lineno, line, err)
			}
			out = append(out, DumpedLFT{GUID: g})
			cur = &out[len(out)-1]
		case strings.HasPrefix(line, "Unicast lids"):
			d, err := parseHeader(line)
			if err != nil {
				return nil, fmt.Errorf("topology: dump_fts line %d: %w", lineno, err)
			}
			out = append(out, d)
			cur = &out[len(out)-1]
		case strings.HasPrefix(line, "0x"):
			if cur == nil {
				return nil, fmt.Errorf("topology: dump_fts line %d: LFT entry before any \"Unicast lids\" header", lineno)
			}
			e, err := parseEntry(line)
			if err != nil {
				return nil, fmt.Errorf("topology: dump_fts line %d: %w", lineno, err)
			}
			cur.Entries = append(cur.Entries, e)
		case dumpFTSChrome(line):
			// Column headings and the count line: not table content.
		default:
			// Anything else is not this format: a wrong file, or one
			// edited or cut; skipping it could drop routes unseen.
			// (Tool messages are taken out before: ReadLFTFile.)
			if len(line) > 80 {
				line = line[:77] + "..."
			}
			return nil, fmt.Errorf("topology: dump_fts line %d: %q is not dump_fts/ibroute output (a \"Unicast lids\" header, a \"0xLID PORT\" entry, the column headings or the count line): give the file dump_fts or ibroute wrote, unedited", lineno, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("topology: reading dump_fts: %w", err)
	}
	return out, nil
}

func parseHeader(line string) (DumpedLFT, error) {
	var d DumpedLFT
	i := strings.Index(line, " guid 0x")
	if i < 0 {
		return d, fmt.Errorf("switch header %q has no \" guid 0x\"", line)
	}
	rest := line[i+len(" guid 0x"):]
	j := strings.IndexByte(rest, ' ')
	if j < 0 {
		j = len(rest)
	}
	g, err := strconv.ParseUint(rest[:j], 16, 64)
	if err != nil {
		return d, fmt.Errorf("switch header: GUID %q: %w", rest[:j], err)
	}
	d.GUID = g
	if k := strings.IndexByte(rest, '('); k >= 0 {
		desc := rest[k+1:]
		desc = strings.TrimSuffix(desc, ":")
		desc = strings.TrimSuffix(desc, ")")
		if len(desc) >= 2 && desc[0] == '\'' && desc[len(desc)-1] == '\'' {
			desc = desc[1 : len(desc)-1] // OpenSM's LFT dump quotes it
		}
		d.Description = desc
	}
	sw := line[:i]
	if k := strings.Index(sw, " of switch "); k >= 0 {
		sw = sw[k+len(" of switch "):]
		if s, ok := strings.CutPrefix(sw, "Lid "); ok {
			if v, err := strconv.ParseUint(strings.TrimSpace(s), 0, 16); err == nil {
				d.LID = uint16(v)
			}
		} else if k := strings.LastIndex(sw, "; "); k >= 0 && strings.HasPrefix(sw, "DR path") {
			if p, err := mad.ParsePath(sw[k+2:]); err == nil {
				d.Path = p
			}
		}
	}
	return d, nil
}

func parseEntry(line string) (DumpedEntry, error) {
	var e DumpedEntry
	f := strings.Fields(line)
	if len(f) < 2 {
		return e, fmt.Errorf("entry %q: want \"0xLID PORT\"", line)
	}
	lid, err := strconv.ParseUint(f[0][2:], 16, 16)
	if err != nil {
		return e, fmt.Errorf("entry %q: LID: %w", line, err)
	}
	pf := f[1]
	if pf == ":" && len(f) >= 3 {
		pf = f[2] // OpenSM's fdbs: "0x000F : 006  : 03   : yes"
		if pf == "UNREACHABLE" {
			// ibdiagnet's fdbs: "0x0001 : UNREACHABLE" (no route).
			lid, err := strconv.ParseUint(f[0][2:], 16, 16)
			if err != nil {
				return e, fmt.Errorf("entry %q: LID: %w", line, err)
			}
			e.LID, e.Port = uint16(lid), NoRoute
			return e, nil
		}
	}
	port, err := strconv.ParseUint(pf, 10, 8)
	if err != nil {
		return e, fmt.Errorf("entry %q: port: %w", line, err)
	}
	e.LID, e.Port = uint16(lid), uint8(port)
	if i := strings.IndexByte(line, '('); i >= 0 {
		e.Dest = strings.TrimSuffix(line[i+1:], ")")
	}
	if i := strings.Index(line, "portguid 0x"); i >= 0 {
		s := line[i+len("portguid 0x"):]
		j := strings.IndexFunc(s, func(r rune) bool { return !strings.ContainsRune("0123456789abcdefABCDEF", r) })
		if j < 0 {
			j = len(s)
		}
		if g, err := strconv.ParseUint(s[:j], 16, 64); err == nil {
			e.PortGUID = g
		}
	}
	return e, nil
}

// LoadLFTs installs parsed tables into f's switches, matched by node
// GUID, as OpenSM's file routing engine does: a switch's whole table is
// replaced (LIDs not listed get NoRoute), and an entry naming a port GUID
// whose port now has another LID is moved to that port's LID. Tables for
// switches not in f are reported in the error only if none matched.
// LinearFDBTop becomes the highest LID in the fabric or the tables.
func LoadLFTs(f *Fabric, tables []DumpedLFT) error {
	byGUID := map[uint64]*Port{}
	top := 0
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil {
				continue
			}
			if _, ok := byGUID[p.GUID]; !ok {
				byGUID[p.GUID] = p
			}
			if p.LID != 0 {
				top = max(top, int(p.LID)+1<<p.LMC-1)
			}
		}
	}
	for _, t := range tables {
		for _, e := range t.Entries {
			top = max(top, int(e.LID))
		}
	}
	matched := 0
	var in BlockInterner
	lft := make([]uint8, top+1)
	for _, t := range tables {
		n := f.NodeByGUID(t.GUID)
		if n == nil || n.Type != mad.NodeSwitch {
			continue
		}
		matched++
		if n.Switch == nil {
			n.Switch = &Switch{}
		}
		for i := range lft {
			lft[i] = NoRoute
		}
		for _, e := range t.Entries {
			lid := e.LID
			if p := byGUID[e.PortGUID]; e.PortGUID != 0 && p != nil && p.LID != 0 {
				size := uint16(1) << p.LMC
				if lid < p.LID || lid >= p.LID+size {
					lid = p.LID + lid&(size-1)
				}
			}
			lft[lid] = e.Port
		}
		n.Switch.LFT = LFTFromBytes(lft, &in)
		n.Switch.LinearFDBTop = uint16(top)
	}
	if matched == 0 && len(tables) > 0 {
		return fmt.Errorf("none of the %d switch GUIDs in the dump (first %#016x) is in the fabric; was the dump taken on another subnet?", len(tables), tables[0].GUID)
	}
	return nil
}

// dumpFTSChrome reports the lines dump_fts, ibroute and OpenSM's dumps
// print around a table: "Lid  Out   Destination", "Port     Info",
// "LID : Port : Hops : Optimal", "N valid lids dumped" / "N lids dumped".
func dumpFTSChrome(line string) bool {
	f := strings.Fields(line)
	switch {
	case len(f) == 3 && f[0] == "Lid" && f[1] == "Out" && f[2] == "Destination":
		return true
	case len(f) == 2 && f[0] == "Port" && f[1] == "Info":
		return true
	case strings.Join(f, " ") == "LID : Port : Hops : Optimal":
		return true
	case len(f) >= 3 && f[len(f)-2] == "lids" && f[len(f)-1] == "dumped":
		_, err := strconv.ParseUint(f[0], 10, 32)
		return err == nil && (len(f) == 3 || len(f) == 4 && f[1] == "valid")
	}
	return false
}
