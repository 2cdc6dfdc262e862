package fabric

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ibdoctor/ibdoctor/mad"
)

// Format names a file format ReadFile recognises.
type Format string

// The formats ReadFile reads, by the tool and options that write them.
const (
	FormatJSON          Format = "ibdoctor JSON"
	FormatIBNetDiscover Format = "ibnetdiscover"
	// FormatIBNetDiscoverPorts is `ibnetdiscover -p` (--ports), with or
	// without -v's "DR path" lines in front.
	FormatIBNetDiscoverPorts Format = "ibnetdiscover -p"
	// FormatIBDiagnetTopo is ibdiagnet's ibdiagnet2.ibnetdiscover:
	// ibnetdiscover text with port labels.
	FormatIBDiagnetTopo Format = "ibdiagnet2.ibnetdiscover"
	FormatIBDiagnetLst  Format = "ibdiagnet2.lst"
	FormatNetDump       Format = "ibdiagnet2.net_dump"
	FormatDBCSV         Format = "ibdiagnet2.db_csv"
	FormatNetFile       Format = "ibsim net file"
	FormatIBLinkInfo    Format = "iblinkinfo"
	// FormatLFTs is a forwarding-table dump (dump_fts, ibroute,
	// dump_lfts.sh): no topology, given with --lfts.
	FormatLFTs Format = "forwarding tables (dump_fts/ibroute)"
	// FormatOpenSMLFTs is OpenSM's fdbs dump (opensm.fdbs: "dump_ucast_routes:
	// Switch 0x..." then "0xLID : PORT : HOPS : yes"); its opensm-lfts.dump
	// (what opensm -U reads) is dump_fts' form. No topology either.
	FormatOpenSMLFTs Format = "OpenSM LFT dump"
)

// TopologyFormats is what --sim and --expect-topology accept, for error
// messages.
const TopologyFormats = "ibnetdiscover output (default, -g, -p or -v -p), iblinkinfo output (default or -l), an ibdiagnet2 file (.ibnetdiscover, .lst, .db_csv) or ibdiagnet directory, an ibsim net file or ibdoctor JSON (ibdoctor discover --format json)"

// maxBytes bounds how much of a file ReadFile reads, per format: text
// topologies of the largest fabrics are tens of MB; JSON and db_csv can
// carry forwarding tables and counters too. A larger file is not one of
// these (or not a fabric anyone can diagnose by hand), and reading it
// would only exhaust memory.
func maxBytes(f Format) int64 {
	switch f {
	case FormatJSON, FormatDBCSV:
		return 2 << 30
	case FormatLFTs, FormatOpenSMLFTs:
		return 4 << 30
	}
	return 512 << 20
}

// FileInfo says how ReadFile read a file.
type FileInfo struct {
	Name   string
	Format Format
	// Gzip is true when the file was gzip-compressed (told by its magic
	// bytes): a sweep's fabric-<ns>.json.gz, or a compressed dump.
	Gzip bool
	// Noise counts lines written by the tools themselves (ibwarn:,
	// iberror:, libibumad's "src/x.c:NN;" stderr) that were skipped;
	// FirstNoise is the first of them and FirstNoiseLine its line number.
	Noise          int
	FirstNoise     string
	FirstNoiseLine int
	// Unread is what those tool messages say could not be read: one entry
	// per directed route a message names ("DR path slid 0; dlid 0;
	// 0,1,1,31 Attr 0x11"), first message first. Whatever lies there is
	// missing from the file because it did not answer, not because it is
	// absent, so a fabric read from the file is not complete.
	Unread []Unreachable
	// Routes is true when the file carried forwarding tables.
	Routes bool
	// Counters is true when the file carried PerfMgt counters (an
	// ibdiagnet2.db_csv's PM_INFO): the simulator then answers with them.
	Counters bool
	// Increases are the counters' increases the file recorded over a span
	// it does not give (Fabric.CounterIncreases), by node GUID and port
	// number: the fabric a sweep discovers over the simulator has its own
	// ports. Nil when the file has none.
	Increases map[PortID]map[string]uint64
	// NoRates is true when the file gives no link width or speed at all
	// (an ibsim net file without width=/speed=/w=/s=): every link then
	// runs the simulator's default, 4X SDR, which is not the fabric's.
	NoRates bool
	// NoSupported is true when no port in the file gives a supported
	// link speed (ibnetdiscover text records only the active one): the
	// simulator then answers its device table's, not the board's.
	NoSupported bool
	// NoWidthSupported is the same for link widths: no port gives a
	// supported width (the simulator answers up to the active one, or
	// its device table's).
	NoWidthSupported bool
	// NoMTU is true when no port in the file gives its NeighborMTU (only
	// an ibdiagnet2.db_csv's PORTS or ibdoctor's JSON record it): the
	// simulator then answers none, which is not the fabric's.
	NoMTU bool
	// Recorded says which of the SM, VL, M_Key and P_Key inputs the file
	// records (Fabric.Recorded: an ibdiagnet2.db_csv's SM_INFO, PKEY and
	// PORTS columns); the checks that judge the others do not run.
	Recorded Recorded
	// Notes say what the format could not carry and how it was read
	// instead (e.g. -p without -v names no CA node GUIDs).
	Notes []string
}

// PortID names a port by its node's GUID and its number.
type PortID struct {
	GUID uint64
	Port uint8
}

// Warnings are the lines to show about how the file was read: skipped
// tool messages, then the notes.
func (i *FileInfo) Warnings() []string {
	if i == nil {
		return nil
	}
	var out []string
	if w := i.Warning(); w != "" {
		out = append(out, w)
	}
	for _, n := range i.Notes {
		out = append(out, fmt.Sprintf("%s: %s", i.Name, n))
	}
	return out
}

// Warning is the one line to show about skipped tool noise, or "".
func (i *FileInfo) Warning() string {
	if i == nil || i.Noise == 0 {
		return ""
	}
	t := i.FirstNoise
	if len(t) > 100 {
		t = t[:97] + "..."
	}
	lines := "line"
	if i.Noise > 1 {
		lines = "lines"
	}
	return fmt.Sprintf("%s: skipped %d %s of tool messages (the first, line %d: %q): the tool reported errors while writing it, so the fabric may be incomplete", i.Name, i.Noise, lines, i.FirstNoiseLine, t)
}

// headSize is how much of a file detection looks at.
const headSize = 64 << 10

// ReadFile reads a saved fabric, recognising its format from the content
// (never from the name, and never by trying parsers until one does not
// fail). The read is bounded (see maxBytes) and stops when ctx is done,
// FIFOs and character devices included.
//
// A directory is taken for an ibdiagnet output directory: its
// ibdiagnet2.db_csv is read, else its ibdiagnet2.ibnetdiscover, else its
// ibdiagnet2.lst (a note says which).
func ReadFile(ctx context.Context, path string) (*Fabric, *FileInfo, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		for _, name := range []string{"ibdiagnet2.db_csv", "ibdiagnet2.ibnetdiscover", "ibdiagnet2.lst"} {
			p := filepath.Join(path, name)
			if _, err := os.Stat(p); err != nil {
				continue
			}
			f, info, err := ReadFile(ctx, p)
			if info != nil {
				info.Notes = append(info.Notes, fmt.Sprintf("read from the ibdiagnet directory %s", path))
			}
			return f, info, err
		}
		return nil, nil, fmt.Errorf("%s: a directory without ibdiagnet2.db_csv, ibdiagnet2.ibnetdiscover or ibdiagnet2.lst: give a fabric file or an ibdiagnet output directory", path)
	}
	h, err := openHead(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	defer h.close()
	if h.format == FormatJSON {
		// Streamed, not read whole: the document with every table is the
		// largest file ibdoctor reads.
		r := h.reader(maxBytes(h.format))
		f, err := decodeJSON(r)
		if r.err != nil {
			return nil, nil, r.err
		}
		info := &FileInfo{Name: path, Format: h.format, Gzip: h.gzip}
		return finish(f, info, err)
	}
	data, err := h.rest(maxBytes(h.format))
	if err != nil {
		return nil, nil, err
	}
	f, info, err := decode(data, path, h.format)
	if info != nil {
		info.Gzip = h.gzip
	}
	return f, info, err
}

// isGzip tells gzip-compressed data by its magic bytes (RFC 1952).
func isGzip(data []byte) bool {
	return len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b
}

// gzipSource decompresses a gzip stream, its errors saying the data was
// compressed (a truncated .gz otherwise reads as "unexpected EOF").
type gzipSource struct{ z *gzip.Reader }

func (g gzipSource) Read(p []byte) (int, error) {
	n, err := g.z.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = errors.New("cut short (unexpected end)")
		}
		err = fmt.Errorf("gzip-compressed data: %w", err)
	}
	return n, err
}

// gunzip opens gzip-compressed data for reading.
func gunzip(r io.Reader) (io.Reader, error) {
	z, err := gzip.NewReader(r)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			err = errors.New("cut short (unexpected end)")
		}
		return nil, fmt.Errorf("gzip-compressed data: %w", err)
	}
	return gzipSource{z}, nil
}

// Decode reads a fabric from a file's bytes (name is used in messages),
// as ReadFile does.
func Decode(data []byte, name string) (*Fabric, *FileInfo, error) {
	if isGzip(data) {
		r, err := gunzip(bytes.NewReader(data))
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		// Bounded as ReadFile is, by the largest format's cap.
		limit := maxBytes(FormatLFTs)
		plain, err := io.ReadAll(io.LimitReader(r, limit+1))
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		if int64(len(plain)) > limit {
			return nil, nil, fmt.Errorf("%s: decompresses to more than the %d MiB ibdoctor reads: is it the right file?", name, limit>>20)
		}
		f, info, err := decodePlain(plain, name)
		if info != nil {
			info.Gzip = true
		}
		return f, info, err
	}
	return decodePlain(data, name)
}

func decodePlain(data []byte, name string) (*Fabric, *FileInfo, error) {
	format, err := detect(data, name)
	if errors.Is(err, errOnlyDR) {
		err = onlyDR(name)
	}
	if err != nil {
		return nil, nil, err
	}
	return decode(data, name, format)
}

func decode(data []byte, name string, format Format) (*Fabric, *FileInfo, error) {
	info := &FileInfo{Name: name, Format: format}
	if format != FormatJSON {
		data = skipNoise(data, info)
	}
	var (
		f   *Fabric
		err error
	)
	switch format {
	case FormatJSON:
		f, err = decodeJSON(bytes.NewReader(data))
	case FormatIBNetDiscover, FormatIBDiagnetTopo:
		// ibnetdiscover -v (or -s) prints its DR path progress lines
		// into the same output: they carry nothing the text does not.
		f, err = ParseIBNetDiscover(bytes.NewReader(commentOut(data, "DR path ")))
	case FormatNetFile:
		var np *netParser
		if np, err = parseNetFile(bytes.NewReader(data)); err == nil {
			f = &np.f
			info.NoRates = !np.rates
		}
	case FormatIBNetDiscoverPorts:
		f, err = decodePorts(data, info)
	case FormatIBDiagnetLst:
		f, err = decodeLst(data)
	case FormatDBCSV:
		f, err = decodeDBCSV(data, info)
	case FormatIBLinkInfo:
		var notes []string
		f, notes, err = ParseIBLinkInfo(data)
		info.Notes = append(info.Notes, notes...)
	case FormatNetDump:
		return nil, info, fmt.Errorf("%s: this is ibdiagnet's ibdiagnet2.net_dump (each switch's port table with FEC modes and neighbours), which names the far end's port by label, not number, so it is not read as a topology: give ibdiagnet2.lst, ibdiagnet2.ibnetdiscover or ibdiagnet2.db_csv from the same ibdiagnet directory", name)
	case FormatLFTs, FormatOpenSMLFTs:
		what := "dump_fts or ibroute output"
		if format == FormatOpenSMLFTs {
			what = "OpenSM's LFT dump"
		}
		return nil, info, fmt.Errorf("%s: this is a forwarding-table dump (%s), with no topology: give it with --lfts %s beside --sim=TOPOLOGY (an ibnetdiscover, ibdiagnet or ibdoctor JSON file of the same fabric)", name, what, name)
	default:
		return nil, info, fmt.Errorf("%s: %s is recognised but not read yet: give %s", name, format, TopologyFormats)
	}
	return finish(f, info, err)
}

// finish checks what a format's decoder made of the file named in info,
// and records in info what the fabric carries.
func finish(f *Fabric, info *FileInfo, err error) (*Fabric, *FileInfo, error) {
	name, format := info.Name, info.Format
	if err != nil {
		return nil, info, fmt.Errorf("%s: read as %s: %w%s", name, format, err, hint(format))
	}
	if len(f.Nodes) == 0 {
		return nil, info, fmt.Errorf("%s: read as %s, but it lists no nodes: give %s", name, format, TopologyFormats)
	}
	for _, n := range f.Nodes {
		if n.Switch != nil && n.Switch.LFT.Len() > 0 {
			info.Routes = true
			break
		}
	}
	info.Counters = len(f.Counters) > 0
	return f, info, nil
}

// hint is what to run to get a file this reads, after a parse error.
func hint(f Format) string {
	switch f {
	case FormatIBNetDiscover, FormatIBDiagnetTopo:
		return " (is the file complete and unedited? `ibnetdiscover > FILE` writes it afresh; `ibdoctor discover --format json` too)"
	case FormatNetFile:
		return " (an ibsim net file as ibsim reads it; `ibnetdiscover > FILE` on a live fabric gives a file this reads)"
	}
	return ""
}

// decodeJSON reads an ibdoctor.fabric/v1 document: what `discover
// --format json` writes, and the fabric file a sweep keeps beside its
// snapshot.json. Given snapshot.json itself it names the file to use.
// The document streams from r (see ReadJSON).
func decodeJSON(r io.Reader) (*Fabric, error) {
	f, top, err := readJSONDoc(r)
	var se *jsonSyntaxError
	switch {
	case errors.As(err, &se):
		return nil, fmt.Errorf("not a JSON fabric: %w", se.err)
	case top.schema == SchemaV1:
		return f, err
	case top.fabricFile != "" && strings.HasSuffix(top.fabricFile, ".gz"):
		// ibdoctor.snapshot/v2 compresses it (its tables are in gate.idx).
		return nil, fmt.Errorf("this is a sweep snapshot (%s); its fabric is in %q beside it, compressed: give `zcat %s > fabric.json` (forwarding tables not included)", top.schema, top.fabricFile, top.fabricFile)
	case top.fabricFile != "":
		return nil, fmt.Errorf("this is a sweep snapshot (%s); its fabric is in %q beside it: give that file", top.schema, top.fabricFile)
	}
	return nil, fmt.Errorf("JSON schema %q is not a fabric (want %q, as `ibdoctor discover --format json` writes)", top.schema, SchemaV1)
}

// noiseRE matches lines the diagnostic tools and libraries print on
// stderr, which land in a file saved with 2>&1: "ibwarn: [123] ...",
// "iberror: ...", "ibnetdiscover: iberror: ...", and libibumad/libibmad's
// "src/query_smp.c:195; umad (...) bad status 110".
var noiseRE = regexp.MustCompile(`^\s*(?:[\w./-]+:\s+)?(?:ibwarn|iberror|ibpanic|ibdebug)\b|^\s*[\w./-]+\.c:\d+;\s`)

// isNoise reports whether noiseRE matches line. The regexp backtracks,
// and nearly every line of a file is not noise (its run was 1.8 s over a
// 49k-node ibnetdiscover file): it runs only on a line holding what any
// match holds, "ib" then warn, error, panic or debug, or ".c:".
func isNoise(line []byte) bool {
	if !bytes.Contains(line, []byte(".c:")) {
		for rest := line; ; {
			i := bytes.Index(rest, []byte("ib"))
			if i < 0 {
				return false
			}
			rest = rest[i+2:]
			if bytes.HasPrefix(rest, []byte("warn")) || bytes.HasPrefix(rest, []byte("error")) ||
				bytes.HasPrefix(rest, []byte("panic")) || bytes.HasPrefix(rest, []byte("debug")) {
				break
			}
		}
	}
	return noiseRE.Match(line)
}

// skipNoise turns tool-message lines into comments of the same length
// (so line numbers stay right) and counts them in info. data is copied
// before the first change.
func skipNoise(data []byte, info *FileInfo) []byte {
	copied := false
	lineNo := 0
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += off
		}
		lineNo++
		line := data[off:end]
		if isNoise(line) {
			if info.Noise == 0 {
				info.FirstNoise = strings.TrimSpace(string(bytes.TrimRight(line, "\r")))
				info.FirstNoiseLine = lineNo
			}
			info.Noise++
			noteUnread(line, lineNo, info)
			if !copied {
				data = bytes.Clone(data)
				copied = true
			}
			l := data[off:end]
			for i := range l {
				l[i] = ' '
			}
			if len(l) > 0 {
				l[0] = '#'
			}
		}
		off = end + 1
	}
	return data
}

// drPathRE finds the directed route (and the attribute) a tool message
// names: libibmad's "(DR path slid 0; dlid 0; 0,1,1,31 Attr 0x11:0)".
var drPathRE = regexp.MustCompile(`DR path slid \d+; dlid \d+; (0(?:,\d+)*)(?: Attr (0x[0-9a-fA-F]+))?`)

// noteUnread records in info.Unread the directed route a tool message
// says it could not read, once per route.
func noteUnread(line []byte, lineNo int, info *FileInfo) {
	m := drPathRE.FindSubmatch(line)
	if m == nil {
		return
	}
	p, err := mad.ParsePath(string(m[1]))
	if err != nil {
		return
	}
	for _, u := range info.Unread {
		if u.Path.String() == p.String() {
			return
		}
	}
	what := "a read"
	if a, err := strconv.ParseUint(string(m[2]), 0, 16); err == nil && len(m[2]) > 0 {
		what = mad.AttrName(mad.ClassSubnDR, mad.AttrID(a))
	}
	msg := strings.TrimSpace(string(bytes.TrimRight(line, "\r")))
	if len(msg) > 100 {
		msg = msg[:97] + "..."
	}
	info.Unread = append(info.Unread, Unreachable{Path: p, What: what,
		Reason: fmt.Sprintf("not answered when the file was written, per the file's own error line (line %d: %q)", lineNo, msg)})
}

// commentOut turns lines starting with prefix into comments of the same
// length; data is copied before the first change.
func commentOut(data []byte, prefix string) []byte {
	copied := false
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += off
		}
		if bytes.HasPrefix(data[off:end], []byte(prefix)) {
			if !copied {
				data, copied = bytes.Clone(data), true
			}
			data[off] = '#'
		}
		off = end + 1
	}
	return data
}

var (
	// ibnetdiscover's node ids: "S-", "H-" or "R-" and 16 hex digits.
	idNodeIDRE = regexp.MustCompile(`^(?:Switch|Ca|Hca|Rt)\s+\d+\s+"[SHR]-[0-9a-fA-F]{16}"`)
	// -p: "CA    78  1 0x946dae0300630bfe 4x HDR ..." and "SW ..."
	portsLineRE = regexp.MustCompile(`^(?:CA|SW|RT)\s+\d+\s+\d+\s+0x[0-9a-fA-F]+\s`)
	// What only ibsim's language has: global width=/speed=/extspeed=
	// lines and w=/s=/e= masks after a port's peer.
	netOnlyRE = regexp.MustCompile(`^(?:width|speed|extspeed)\s*=|^\[\d+\].*\]\s+[wse]=\d`)
	// ibnetdiscover's node lines, also ibsim's.
	nodeLineRE = regexp.MustCompile(`^(?:Switch|Ca|Hca|Rt)\s+\d+\s+"`)
	// ibdiagnet's port labels on a port line: [1](1/1/1) or [1](1)(guid).
	labelRE = regexp.MustCompile(`^\[\d+\]\((?:[^)]*/[^)]*\)|[^)]*\)\()`)
	// net_dump's per-switch header: "desc", vendor, 0xGUID, LID n
	netDumpHeadRE = regexp.MustCompile(`^".*",\s*[^,]*,\s*0x[0-9a-fA-F]+,\s*LID\s+\d+`)
	// OpenSM's LFT dump: "Unicast lids [0x0-0x..] of switch Lid N guid ..." is dump_fts';
	// opensm-lfts.dump has "Switch 0x<guid>" then "0x<lid> : <port> : ..." lines.
	openSMSwitchRE = regexp.MustCompile(`^Switch\s+0x[0-9a-fA-F]+\s*$`)
	// iblinkinfo -l: `0x<16 hex> "desc"  LID PORT[..] ==(`
	iblLineRE = regexp.MustCompile(`^0x[0-9a-fA-F]{16}\s+".*"\s+\d+\s+\d+\[.*==\(`)
)

// detect names data's format from its first significant lines.
func detect(data []byte, name string) (Format, error) {
	head := data
	if len(head) > headSize {
		head = head[:headSize]
	}
	if isGzip(head) {
		// ReadFile and Decode take off one layer of gzip before this.
		return "", fmt.Errorf("%s: gzip-compressed twice: give the file decompressed once (zcat FILE > FILE.gz)", name)
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return "", fmt.Errorf("%s: binary data (a NUL byte in the first %d bytes), not a fabric file: give %s", name, len(head), TopologyFormats)
	}
	lines := strings.Split(string(head), "\n")
	if len(data) > len(head) && len(lines) > 1 {
		lines = lines[:len(lines)-1] // possibly cut short
	}
	sawIBDiag, sawID, sawTopoComment, sawVerbose := false, false, false, false
	first, firstNo := "", 0
	for i, raw := range lines {
		l := strings.TrimRight(raw, "\r")
		t := strings.TrimSpace(l)
		switch {
		case t == "" || isNoise([]byte(l)):
			continue
		case strings.HasPrefix(t, "#"):
			switch {
			case strings.Contains(t, "automatically generated by IBDIAG"):
				sawIBDiag = true
			case strings.HasPrefix(t, "# Topology file:"), strings.HasPrefix(t, "# Initiated from node"):
				sawTopoComment = true
			case strings.Contains(t, "ibsim net file"), strings.Contains(t, "Net configuration file"):
				return FormatNetFile, nil
			}
			continue
		}
		if first == "" {
			first, firstNo = t, i+1
		}
		switch {
		case t[0] == '{' && strings.HasPrefix(t, "{ CA Ports:"), strings.HasPrefix(t, "{ SW Ports:"):
			return FormatIBDiagnetLst, nil
		case t[0] == '{':
			return FormatJSON, nil
		case strings.HasPrefix(t, "DR path slid"):
			sawVerbose = true
			continue
		// Each pattern is tried only on a line that has the byte it
		// starts with (both of netOnlyRE's forms have an '='): detection
		// reads up to headSize of lines, and a regexp call per pattern
		// on each was most of reading the sample fabric.
		case strings.IndexByte(t, '=') >= 0 && netOnlyRE.MatchString(t):
			return FormatNetFile, nil
		case startsWith(t, "CSR") && portsLineRE.MatchString(t):
			return FormatIBNetDiscoverPorts, nil
		case strings.HasPrefix(t, "START_"):
			return FormatDBCSV, nil
		case startsWith(t, "S") && iblSwitchHead.MatchString(t), startsWith(t, "CR") && iblCAHead.MatchString(t), startsWith(t, "0") && iblLineRE.MatchString(t):
			return FormatIBLinkInfo, nil
		case strings.HasPrefix(t, "Unicast lids ["), strings.HasPrefix(t, "Multicast mlids"):
			return FormatLFTs, nil
		case startsWith(t, "S") && openSMSwitchRE.MatchString(t), strings.HasPrefix(t, "dump_ucast_routes: Switch 0x"), strings.HasPrefix(t, "osm_ucast_mgr_dump_ucast_routes: Switch 0x"):
			return FormatOpenSMLFTs, nil
		case startsWith(t, `"`) && netDumpHeadRE.MatchString(t):
			return FormatNetDump, nil
		case strings.HasPrefix(t, "switchguid="), strings.HasPrefix(t, "caguid="), strings.HasPrefix(t, "rtguid="),
			strings.HasPrefix(t, "hcaguids="), t == "Non-Chassis Nodes", strings.HasPrefix(t, "Chassis "):
			sawID = true
		case startsWith(t, "SCHR") && idNodeIDRE.MatchString(t):
			sawID = true
		case startsWith(t, "[") && labelRE.MatchString(t) && (sawIBDiag || sawID):
			return FormatIBDiagnetTopo, nil
		case startsWith(t, "SCHR") && nodeLineRE.MatchString(t):
			if !sawID && !sawTopoComment {
				// A node line whose id is a name, with no guid line
				// before it: ibsim's language, not ibnetdiscover's.
				return FormatNetFile, nil
			}
		}
	}
	switch {
	case sawIBDiag && (sawID || sawTopoComment):
		return FormatIBDiagnetTopo, nil
	case sawID || sawTopoComment:
		return FormatIBNetDiscover, nil
	case sawVerbose && len(data) > len(head):
		// -v's DR path lines can fill the head: look on past them.
		rest := data[bytes.LastIndexByte(head, '\n')+1:]
		for len(rest) > 0 {
			line, after, _ := bytes.Cut(rest, []byte("\n"))
			rest = after
			t := strings.TrimSpace(string(line))
			if t == "" || strings.HasPrefix(t, "DR path") || isNoise(line) {
				continue
			}
			if portsLineRE.MatchString(t) {
				return FormatIBNetDiscoverPorts, nil
			}
			break
		}
		if len(rest) == 0 {
			return "", errOnlyDR
		}
		return "", fmt.Errorf("%s: `ibnetdiscover -v` \"DR path\" lines, then something else: give %s", name, TopologyFormats)
	case sawVerbose:
		return "", errOnlyDR
	case first == "":
		return "", fmt.Errorf("%s: empty (nothing but blank lines, comments or tool messages): give %s", name, TopologyFormats)
	}
	if len(first) > 80 {
		first = first[:77] + "..."
	}
	return "", fmt.Errorf("%s: not a fabric file ibdoctor knows (line %d: %q): give %s", name, firstNo, first, TopologyFormats)
}

// startsWith reports whether t's first byte is one of set's.
func startsWith(t, set string) bool {
	return t != "" && strings.IndexByte(set, t[0]) >= 0
}

// readBounded reads path, detecting its format from the first headSize
// bytes and stopping at that format's maxBytes. It returns when ctx is
// done, even while blocked opening or reading a FIFO.
func readBounded(ctx context.Context, path string, maxBytes func(Format) int64) ([]byte, Format, error) {
	h, err := openHead(ctx, path)
	if err != nil {
		return nil, "", err
	}
	defer h.close()
	data, err := h.rest(maxBytes(h.format))
	return data, h.format, err
}

// head is a file open for reading with its first bytes read and its
// format detected from them.
type head struct {
	ctx    context.Context
	path   string
	f      *os.File
	src    io.Reader // f, or f decompressed
	gzip   bool
	stop   func() bool
	size   int64 // when a regular file not compressed
	buf    []byte
	eof    bool
	format Format
}

// openHead opens path and detects its format from the first headSize
// bytes (more while they are only ibnetdiscover -v's DR path lines).
func openHead(ctx context.Context, path string) (*head, error) {
	f, err := openCtx(ctx, path)
	if err != nil {
		return nil, err
	}
	// A pipe or FIFO's read blocks in the poller: a deadline ends it.
	h := &head{ctx: ctx, path: path, f: f, stop: context.AfterFunc(ctx, func() { f.SetReadDeadline(time.Unix(1, 0)) })}
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		h.size = st.Size()
	}
	h.buf = make([]byte, 0, min(max(h.size+1, 4096), headSize))
	h.src = f
	if h.buf, h.eof, err = readUpTo(ctx, f, h.buf, headSize, path); err != nil {
		h.close()
		return nil, err
	}
	if isGzip(h.buf) {
		// Told by the magic bytes; the caps (maxBytes) then bound what
		// is decompressed, the file's own size saying nothing of it.
		if h.src, err = gunzip(io.MultiReader(bytes.NewReader(h.buf), f)); err != nil {
			h.close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		h.gzip, h.size = true, 0
		h.buf = make([]byte, 0, headSize)
		if h.buf, h.eof, err = readUpTo(ctx, h.src, h.buf, headSize, path); err != nil {
			h.close()
			return nil, err
		}
	}
	h.format, err = detect(h.buf, path)
	for want := int64(2 * headSize); errors.Is(err, errOnlyDR) && !h.eof && want <= 64<<20; want *= 2 {
		// ibnetdiscover -v -p: the DR path lines come first, and on a
		// large fabric they fill more than the head.
		if h.buf, h.eof, err = readUpTo(ctx, h.src, h.buf, want, path); err != nil {
			h.close()
			return nil, err
		}
		h.format, err = detect(h.buf, path)
	}
	if errors.Is(err, errOnlyDR) {
		err = onlyDR(path)
	}
	if err != nil {
		h.close()
		return nil, err
	}
	return h, nil
}

func (h *head) close() {
	h.stop()
	h.f.Close()
}

// tooBig is the error for a regular file larger than limit, or nil.
func (h *head) tooBig(limit int64) error {
	if h.size > limit {
		return fmt.Errorf("%s: %d bytes, more than the %d MiB ibdoctor reads of a %s file: is it the right file?", h.path, h.size, max(limit>>20, 1), h.format)
	}
	return nil
}

func (h *head) tooLong(limit int64) error {
	return fmt.Errorf("%s: longer than the %d MiB ibdoctor reads of a %s file (a device or an endless stream?): give a saved file", h.path, max(limit>>20, 1), h.format)
}

// rest reads the whole file, up to limit bytes.
func (h *head) rest(limit int64) ([]byte, error) {
	if h.eof {
		return h.buf, nil
	}
	if err := h.tooBig(limit); err != nil {
		return nil, err
	}
	buf := h.buf
	if h.size > int64(cap(buf)) {
		buf = append(make([]byte, 0, h.size+1), buf...)
	}
	buf, _, err := readUpTo(h.ctx, h.src, buf, limit+1, h.path)
	if err != nil {
		return nil, err
	}
	if int64(len(buf)) > limit {
		return nil, h.tooLong(limit)
	}
	return buf, nil
}

// reader streams the whole file, head included, up to limit bytes; its
// err is why it stopped early (too long, interrupted, a read error),
// which a decoder reading it may only see as an unexpected end.
func (h *head) reader(limit int64) *headReader {
	r := &headReader{h: h, limit: limit, buf: h.buf, n: int64(len(h.buf))}
	if err := h.tooBig(limit); err != nil {
		r.err = err
	}
	return r
}

type headReader struct {
	h     *head
	limit int64
	buf   []byte // the head, not yet returned
	n     int64  // bytes taken from the file so far
	err   error
}

func (r *headReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if len(r.buf) > 0 {
		k := copy(p, r.buf)
		r.buf = r.buf[k:]
		return k, nil
	}
	if r.h.eof {
		return 0, io.EOF
	}
	if err := r.h.ctx.Err(); err != nil {
		r.err = fmt.Errorf("reading %s: interrupted: %w", r.h.path, context.Cause(r.h.ctx))
		return 0, r.err
	}
	k, err := r.h.src.Read(p)
	r.n += int64(k)
	switch {
	case r.n > r.limit:
		r.err = r.h.tooLong(r.limit)
		return 0, r.err
	case errors.Is(err, io.EOF):
		return k, io.EOF
	case err != nil && r.h.ctx.Err() != nil:
		r.err = fmt.Errorf("reading %s: interrupted: %w", r.h.path, context.Cause(r.h.ctx))
	case err != nil:
		r.err = fmt.Errorf("reading %s: %w", r.h.path, err)
	}
	return k, r.err
}

// readUpTo appends from r until EOF (eof true) or until buf holds n
// bytes, checking ctx between reads.
func readUpTo(ctx context.Context, r io.Reader, buf []byte, n int64, path string) (_ []byte, eof bool, _ error) {
	for int64(len(buf)) < n {
		if err := ctx.Err(); err != nil {
			return nil, false, fmt.Errorf("reading %s: interrupted: %w", path, context.Cause(ctx))
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		want := min(int64(cap(buf)), n)
		k, err := r.Read(buf[len(buf):want])
		buf = buf[:len(buf)+k]
		if errors.Is(err, io.EOF) {
			return buf, true, nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, false, fmt.Errorf("reading %s: interrupted: %w", path, context.Cause(ctx))
			}
			return nil, false, fmt.Errorf("reading %s: %w", path, err)
		}
	}
	return buf, false, nil
}

// openCtx opens path for reading. Opening a FIFO blocks until a writer
// comes; that wait is given up when ctx is done (the opening goroutine
// stays blocked until a writer arrives or the process exits).
func openCtx(ctx context.Context, path string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s: %w", path, errIsDir)
	}
	if st.Mode()&fs.ModeNamedPipe == 0 {
		return os.Open(path)
	}
	type res struct {
		f   *os.File
		err error
	}
	ch := make(chan res, 1)
	go func() {
		f, err := os.Open(path)
		ch <- res{f, err}
	}()
	select {
	case r := <-ch:
		return r.f, r.err
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.f != nil {
				r.f.Close()
			}
		}()
		return nil, fmt.Errorf("opening %s: interrupted while waiting for a writer: %w", path, context.Cause(ctx))
	}
}

func onlyDR(name string) error {
	return fmt.Errorf("%s: only `ibnetdiscover -v` \"DR path\" lines, no topology (the run stopped early?): give %s", name, TopologyFormats)
}

// errOnlyDR: all of data so far is -v's DR path lines; read more.
var errOnlyDR = errors.New("only DR path lines so far")

var errIsDir = errors.New("is a directory: give a file (ibnetdiscover output, an ibdiagnet2 file, ibsim net file or ibdoctor JSON)")

// ReadLFTFile reads a forwarding-table dump given with --lfts (dump_fts,
// ibroute, dump_lfts.sh output), bounded and interruptible as ReadFile
// is. Tool messages (ibwarn:, "/usr/sbin/ibroute: iberror: ...") are
// turned into comments and counted in the FileInfo; a file of another
// format is refused naming it.
func ReadLFTFile(ctx context.Context, path string) ([]byte, *FileInfo, error) {
	data, format, err := readBounded(ctx, path, maxBytes)
	if err != nil {
		return nil, nil, err
	}
	info := &FileInfo{Name: path, Format: format}
	switch format {
	case FormatLFTs, FormatOpenSMLFTs:
	default:
		return nil, info, fmt.Errorf("%s: this is %s, not a forwarding-table dump: give it with --sim=%s, and with --lfts the output of dump_fts or ibroute", path, format, path)
	}
	return skipNoise(data, info), info, nil
}
