package fabric

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/ibdoctor/ibdoctor/internal/jsonstream"
	"github.com/ibdoctor/ibdoctor/mad"
)

// SchemaV1 names the JSON form of a Fabric written by Marshal. The schema
// is documented in docs/schema-fabric.md.
const SchemaV1 = "ibdoctor.fabric/v1"

// JSON document types. Field names are stable snake_case; GUIDs and
// vendor/device IDs are "0x..." hex strings; widths and speeds carry the
// operator string and the mask (the mask is authoritative on input).

type jsonFabric struct {
	Schema         string          `json:"schema"`
	Recorded       []string        `json:"recorded,omitempty"`
	Nodes          []jsonNode      `json:"nodes"`
	Links          []jsonLink      `json:"links"`
	SMs            []jsonSM        `json:"sms,omitempty"`
	Unreachable    []jsonUnreach   `json:"unreachable,omitempty"`
	DuplicateGUIDs []jsonDuplicate `json:"duplicate_guids,omitempty"`
}

// recordedNames are Recorded's inputs as the JSON names them, and the
// port fields each one carries: those fields are written only for an
// input the fabric's source recorded, so a simulator's stand-in is never
// saved as read.
var recordedNames = []struct {
	name   string
	on     func(*Recorded) *bool
	fields string
}{
	{"sm_info", func(r *Recorded) *bool { return &r.SMInfo }, "master_sm_lid"},
	{"vls", func(r *Recorded) *bool { return &r.VLs }, "vl_cap, oper_vls"},
	{"mkey", func(r *Recorded) *bool { return &r.MKey }, "mkey_protect, mkey_lease"},
	{"pkeys", func(r *Recorded) *bool { return &r.PKeys }, "pkey_enforce, pkeys"},
}

// jsonSM is one subnet manager's SMInfo as the source recorded it
// (RecordedSM): behind port "port" of nodes[node].
type jsonSM struct {
	Node     int    `json:"node"`
	GUID     string `json:"guid"`
	Port     uint8  `json:"port"`
	SMGUID   string `json:"sm_guid"`
	State    string `json:"state"`
	Priority uint8  `json:"priority"`
	ActCount uint32 `json:"act_count"`
}

type jsonNode struct {
	Type            string `json:"type"`
	GUID            string `json:"guid"`
	SystemImageGUID string `json:"system_image_guid"`
	Description     string `json:"description"`
	// DescriptionUnread: NodeDescription went unanswered (Node.DescriptionUnread).
	DescriptionUnread bool        `json:"description_unread,omitempty"`
	VendorID          string      `json:"vendor_id"`
	DeviceID          string      `json:"device_id"`
	Revision          string      `json:"revision"`
	NumPorts          int         `json:"num_ports"`
	Path              *string     `json:"path,omitempty"`
	Switch            *jsonSwitch `json:"switch,omitempty"`
	Ports             []jsonPort  `json:"ports"`
}

type jsonSwitch struct {
	LinearFDBCap  uint16   `json:"linear_fdb_cap"`
	LinearFDBTop  uint16   `json:"linear_fdb_top"`
	MulticastCap  uint16   `json:"multicast_cap"`
	LIDsPerPort   uint16   `json:"lids_per_port"`
	EnhancedPort0 bool     `json:"enhanced_port0"`
	LifeTimeValue uint8    `json:"life_time_value"`
	DefaultPort   uint8    `json:"default_port"`
	PartitionCap  uint16   `json:"partition_cap"`
	MulticastTop  uint16   `json:"multicast_top"`
	LFT           *lftText `json:"lft,omitempty"`
}

// lftText is a switch's "lft": two hex digits a LID. Read, a plain hex
// string is decoded straight from the bytes the decoder hands over,
// without encoding/json unquoting it and copying it into a string (98 KB
// a switch, 376 MB at 49k nodes, on the file's one decoding goroutine);
// anything else (escapes, a bad digit, an odd length, not a string) is
// decoded as the string field it was, so it reads or fails as before.
type lftText struct {
	b []byte // the entries, when the hex was decoded here
	s string // else the string as encoding/json decoded it (and, written, the hex)
}

// UnmarshalJSON implements json.Unmarshaler.
func (t *lftText) UnmarshalJSON(data []byte) error {
	if n := len(data); n >= 2 && data[0] == '"' && data[n-1] == '"' && n%2 == 0 {
		in := data[1 : n-1]
		b := make([]byte, len(in)/2)
		if _, err := hex.Decode(b, in); err == nil {
			*t = lftText{b: b}
			return nil
		}
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	*t = lftText{s: s}
	return nil
}

// MarshalText implements encoding.TextMarshaler: written as the string
// field was (a json.Marshaler's output would be validated and copied
// again, 98 KB a switch).
func (t lftText) MarshalText() ([]byte, error) {
	if t.b != nil {
		return hex.AppendEncode(nil, t.b), nil
	}
	return []byte(t.s), nil
}

// table builds the LFT t holds, its blocks in pool in.
func (t *lftText) table(in *BlockInterner) (*LFT, error) {
	if t.b != nil {
		return LFTFromBytes(t.b, in), nil
	}
	return lftFromHex(t.s, in)
}

type jsonPort struct {
	Num         uint8      `json:"num"`
	GUID        string     `json:"guid"`
	LID         uint16     `json:"lid"`
	LMC         uint8      `json:"lmc,omitempty"`
	State       string     `json:"state"`
	PhysState   string     `json:"phys_state"`
	Width       *jsonMasks `json:"width,omitempty"`
	Speed       *jsonMasks `json:"speed,omitempty"`
	NeighborMTU int        `json:"neighbor_mtu,omitempty"`
	MTUCap      int        `json:"mtu_cap,omitempty"`
	CapMask     string     `json:"cap_mask,omitempty"`
	CapMask2    string     `json:"cap_mask2,omitempty"`
	// Unreached names what went unanswered: "port_info", "speed",
	// "far_end" (fabric.Unreached).
	Unreached []string `json:"unreached,omitempty"`
	// What the source recorded beyond the topology (recordedNames):
	// written only for the inputs "recorded" lists.
	MasterSMLID uint16   `json:"master_sm_lid,omitempty"`
	VLCap       uint8    `json:"vl_cap,omitempty"`
	OperVLs     uint8    `json:"oper_vls,omitempty"`
	MKeyProtect uint8    `json:"mkey_protect,omitempty"`
	MKeyLease   uint16   `json:"mkey_lease,omitempty"`
	PKeyEnforce []string `json:"pkey_enforce,omitempty"`
	PKeys       []string `json:"pkeys,omitempty"`
}

// maxJSONPKeys bounds a port's P_Key table on input: a 16-bit
// PartitionCap.
const maxJSONPKeys = 65536

// nameBit is a flag bit and its name in the JSON.
type nameBit[B ~uint8] struct {
	bit  B
	name string
}

// bitsNamed ORs the bits that names name in table; bad is the first name
// table does not have (bits then incomplete).
func bitsNamed[B ~uint8](names []string, table []nameBit[B]) (bits B, bad string, ok bool) {
next:
	for _, name := range names {
		for _, nb := range table {
			if name == nb.name {
				bits |= nb.bit
				continue next
			}
		}
		return bits, name, false
	}
	return bits, "", true
}

// unreachedNames are fabric.Unreached's bits as the JSON names them.
var unreachedNames = []nameBit[Unreached]{{UnreachedInfo, "port_info"}, {UnreachedSpeed, "speed"}, {UnreachedPeer, "far_end"}}

// jsonMasks holds a port's active/enabled/supported width or speed.
type jsonMasks struct {
	Active        string  `json:"active,omitempty"`
	Enabled       string  `json:"enabled,omitempty"`
	Supported     string  `json:"supported,omitempty"`
	ActiveMask    *uint16 `json:"active_mask,omitempty"`
	EnabledMask   *uint16 `json:"enabled_mask,omitempty"`
	SupportedMask *uint16 `json:"supported_mask,omitempty"`
}

type jsonEnd struct {
	Node int    `json:"node"`
	GUID string `json:"guid"`
	Port uint8  `json:"port"`
}

type jsonLink struct {
	A    jsonEnd `json:"a"`
	B    jsonEnd `json:"b"`
	Rate string  `json:"rate,omitempty"` // A end's active rate, informative
}

type jsonUnreach struct {
	Path     *string `json:"path,omitempty"`
	FromGUID string  `json:"from_guid"`
	FromPort uint8   `json:"from_port"`
	What     string  `json:"what"`
	Reason   string  `json:"reason"`
	Where    string  `json:"where,omitempty"`
}

type jsonDuplicate struct {
	GUID         string   `json:"guid"`
	Paths        []string `json:"paths"`
	Descriptions []string `json:"descriptions,omitempty"`
}

// MarshalOptions tune Marshal.
type MarshalOptions struct {
	// OmitLFT leaves switches' forwarding tables out (they dominate the
	// size of a big fabric: 2 hex digits per LID per switch).
	OmitLFT bool
	// Indent pretty-prints with two spaces.
	Indent bool
	// As, when not nil, writes f as As.Apply would leave it, without
	// changing f: a sweep writes its fabric file while the checks still
	// read the fabric with the simulator's stand-ins in it.
	As *SavedAs
}

// SavedAs is how a fabric is saved when its source stood in for part of
// what it holds (a --sim file's simulator): the inputs the file recorded
// beyond the topology, and which answers were stand-ins, not read.
type SavedAs struct {
	Recorded Recorded
	SMs      []RecordedSM
	PKeys    map[*Port][]mad.PKey
	// DropSpeeds: the ports' supported and enabled speeds were stand-ins;
	// DropWidths likewise their supported and enabled widths.
	DropSpeeds, DropWidths bool
}

// Apply makes f what it is saved as. A nil a leaves f as it is.
func (a *SavedAs) Apply(f *Fabric) {
	if a == nil || f == nil {
		return
	}
	f.Recorded, f.SMs, f.PKeys = a.Recorded, a.SMs, a.PKeys
	if !a.DropSpeeds && !a.DropWidths {
		return
	}
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil {
				continue
			}
			if a.DropSpeeds {
				p.SpeedSupported, p.SpeedEnabled = 0, 0
			}
			if a.DropWidths {
				p.WidthSupported, p.WidthEnabled = 0, 0
			}
		}
	}
}

// savedView is what WriteJSON writes of f beyond its nodes' own fields:
// f's, or opt.As's.
type savedView struct {
	rec                    Recorded
	sms                    []RecordedSM
	pkeys                  map[*Port][]mad.PKey
	dropSpeeds, dropWidths bool
}

func viewOf(f *Fabric, opt MarshalOptions) savedView {
	if a := opt.As; a != nil {
		return savedView{a.Recorded, a.SMs, a.PKeys, a.DropSpeeds, a.DropWidths}
	}
	return savedView{rec: f.Recorded, sms: f.SMs, pkeys: f.PKeys}
}

// hex64 is fmt.Sprintf("0x%016x", v), without fmt's boxing of v (a
// GUID for every port of a fabric file).
func hex64(v uint64) string {
	const digits = "0123456789abcdef"
	var b [18]byte
	b[0], b[1] = '0', 'x'
	for i := 17; i >= 2; i-- {
		b[i] = digits[v&0xf]
		v >>= 4
	}
	return string(b[:])
}

// Marshal encodes f as an ibdoctor.fabric/v1 JSON document (indented,
// LFTs included). Unmarshal(Marshal(f)) reproduces f exactly.
func Marshal(f *Fabric) ([]byte, error) {
	return MarshalWith(f, MarshalOptions{Indent: true})
}

// MarshalWith is Marshal with options.
func MarshalWith(f *Fabric, opt MarshalOptions) ([]byte, error) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, f, opt); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteJSON writes what MarshalWith returns to w, byte for byte, one node,
// link or record at a time: the document is never whole in memory (at 49k
// nodes with LFTs it is hundreds of MB). f is checked before anything is
// written, so an error leaves w untouched unless w itself fails.
func WriteJSON(w io.Writer, f *Fabric, opt MarshalOptions) error {
	index := make(map[*Node]int, len(f.Nodes))
	for i, n := range f.Nodes {
		index[n] = i
	}
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil && p.Node != n {
				return fmt.Errorf("fabric: marshal: node %s port %d belongs to another node", hex64(n.GUID), p.Num)
			}
		}
	}
	// A fabric whose links are all well formed has them written as they
	// are found, in Links' order, without the list (2.2 MB at 49k nodes);
	// any other takes Links' own answer.
	var links []Link
	nlinks, order := f.linksInOrder()
	if order == nil {
		links = f.Links()
		nlinks = len(links)
		for _, l := range links {
			_, oka := index[l.A.Node]
			_, okb := index[l.B.Node]
			if !oka || !okb {
				return fmt.Errorf("fabric: marshal: link %s[%d]-%s[%d] leads to a node not in Nodes",
					hex64(l.A.Node.GUID), l.A.Num, hex64(l.B.Node.GUID), l.B.Num)
			}
		}
	}
	view := viewOf(f, opt)
	rec := view.rec
	var sms []jsonSM
	if rec.SMInfo {
		sms = make([]jsonSM, 0, len(view.sms))
		for _, r := range view.sms {
			i, ok := index[r.Port.Node]
			if !ok || int(r.Port.Num) >= len(r.Port.Node.Ports) || r.Port.Node.Ports[r.Port.Num] != r.Port {
				return fmt.Errorf("fabric: marshal: a subnet manager behind %s port %d, which is not in Nodes", hex64(r.Port.Node.GUID), r.Port.Num)
			}
			sms = append(sms, jsonSM{Node: i, GUID: hex64(r.Port.Node.GUID), Port: r.Port.Num, SMGUID: hex64(r.GUID),
				State: r.State.String(), Priority: r.Priority, ActCount: r.ActCount})
		}
	}
	jw := jsonstream.New(w, jsonstream.Options{Indent: opt.Indent})
	jw.Field("schema", SchemaV1)
	if names := rec.names(); len(names) > 0 {
		jw.Field("recorded", names)
	}
	// Each node is encoded before the next is made: its ports' slice is
	// reused, and the masks and capability strings, which repeat, are
	// made once (their garbage raised a sweep's peak heap by the GC
	// cycles it caused while the checks ran, issue 13).
	enc := &nodeEncoder{widths: map[[3]uint16]*jsonMasks{}, speeds: map[[3]uint16]*jsonMasks{}, caps: map[uint32]string{}, caps2: map[uint16]string{}}
	jw.Array("nodes", len(f.Nodes), func(i int) any { return enc.node(&view, f.Nodes[i], opt) })
	if order == nil {
		jw.Array("links", nlinks, func(i int) any { return jsonLinkOf(links[i], index) })
	} else {
		// Array asks for the links in turn: the next is the next A end
		// in order, nodes by GUID, each node's ports by number.
		k, pn := 0, 0
		jw.Array("links", nlinks, func(int) any {
			for {
				n := f.Nodes[order[k]]
				if pn >= len(n.Ports) {
					k, pn = k+1, 0
					continue
				}
				p := n.Ports[pn]
				pn++
				if isAEnd(p) {
					return jsonLinkOf(Link{A: p, B: p.Remote}, index)
				}
			}
		})
	}
	if sms != nil {
		jw.Array("sms", len(sms), func(i int) any { return sms[i] })
	}
	if len(f.Unreachable) > 0 {
		jw.Array("unreachable", len(f.Unreachable), func(i int) any { return jsonUnreachOf(f.Unreachable[i]) })
	}
	if len(f.DuplicateGUIDs) > 0 {
		jw.Array("duplicate_guids", len(f.DuplicateGUIDs), func(i int) any { return jsonDuplicateOf(f.DuplicateGUIDs[i]) })
	}
	if err := jw.Close(); err != nil {
		return fmt.Errorf("fabric: writing JSON: %w", err)
	}
	return nil
}

// names lists the inputs r says were recorded, by their JSON names.
func (r Recorded) names() []string {
	var out []string
	for _, x := range recordedNames {
		if *x.on(&r) {
			out = append(out, x.name)
		}
	}
	return out
}

// pkeyEnforceNames are PKeyEnforce's bits as the JSON names them.
var pkeyEnforceNames = []nameBit[uint8]{{PKeyEnforceIn, "in"}, {PKeyEnforceOut, "out"}}

// nodeEncoder makes WriteJSON's nodes (jsonNodeOf), sharing what repeats
// from one to the next: a node it returns is valid until the next.
type nodeEncoder struct {
	ports          []jsonPort
	widths, speeds map[[3]uint16]*jsonMasks
	caps           map[uint32]string
	caps2          map[uint16]string
	jn             jsonNode
}

func (e *nodeEncoder) node(view *savedView, n *Node, opt MarshalOptions) any {
	e.jn = jsonNodeOf(view, n, opt, e)
	e.ports = e.jn.Ports
	return &e.jn
}

// cachedMasks is masks(a, en, s), one *jsonMasks per value in m (the
// encoder only reads it).
func cachedMasks[T maskSet](m map[[3]uint16]*jsonMasks, a, en, s T) *jsonMasks {
	k := [3]uint16{uint16(a), uint16(en), uint16(s)}
	if v, ok := m[k]; ok {
		return v
	}
	v := masks(a, en, s)
	m[k] = v
	return v
}

// hexOnce is fmt.Sprintf(format, v), each value's string made once in m.
func hexOnce[T uint16 | uint32](m map[T]string, format string, v T) string {
	if s, ok := m[v]; ok {
		return s
	}
	s := fmt.Sprintf(format, v)
	m[v] = s
	return s
}

// jsonNodeOf makes n's JSON node; e, when not nil, shares what repeats
// (WriteJSON's nodeEncoder), else every value is the node's own.
func jsonNodeOf(view *savedView, n *Node, opt MarshalOptions, e *nodeEncoder) jsonNode {
	jn := jsonNode{
		Type:              nodeTypeName(n.Type),
		GUID:              hex64(n.GUID),
		SystemImageGUID:   hex64(n.SystemImageGUID),
		Description:       n.Description,
		DescriptionUnread: n.DescriptionUnread,
		VendorID:          fmt.Sprintf("0x%06x", n.VendorID),
		DeviceID:          fmt.Sprintf("0x%04x", n.DeviceID),
		Revision:          fmt.Sprintf("0x%08x", n.Revision),
		NumPorts:          n.NumPorts(),
		Ports:             []jsonPort{},
	}
	if e != nil && e.ports != nil {
		jn.Ports = e.ports[:0]
	}
	if len(n.Ports) == 0 {
		jn.NumPorts = -1 // no Ports slice at all
	}
	if n.Path != nil {
		s := n.Path.String()
		jn.Path = &s
	}
	if s := n.Switch; s != nil {
		js := &jsonSwitch{s.LinearFDBCap, s.LinearFDBTop, s.MulticastCap, s.LIDsPerPort, s.EnhancedPort0,
			s.LifeTimeValue, s.DefaultPort, s.PartitionCap, s.MulticastTop, nil}
		if s.LFT != nil && !opt.OmitLFT {
			js.LFT = &lftText{s: lftHex(s.LFT)}
		}
		jn.Switch = js
	}
	for _, p := range n.Ports {
		if p == nil {
			continue
		}
		we, ws, se, ss := p.WidthEnabled, p.WidthSupported, p.SpeedEnabled, p.SpeedSupported
		if view.dropWidths {
			we, ws = 0, 0
		}
		if view.dropSpeeds {
			se, ss = 0, 0
		}
		jp := jsonPort{
			Num: p.Num, GUID: hex64(p.GUID), LID: p.LID, LMC: p.LMC,
			State: p.State.String(), PhysState: p.PhysState.String(),
			NeighborMTU: mtuJSON(p.NeighborMTU), MTUCap: mtuJSON(p.MTUCap),
		}
		if e != nil {
			jp.Width = cachedMasks(e.widths, p.WidthActive, we, ws)
			jp.Speed = cachedMasks(e.speeds, p.SpeedActive, se, ss)
		} else {
			jp.Width = masks(p.WidthActive, we, ws)
			jp.Speed = masks(p.SpeedActive, se, ss)
		}
		if p.CapMask != 0 {
			if e != nil {
				jp.CapMask = hexOnce(e.caps, "0x%08x", p.CapMask)
			} else {
				jp.CapMask = fmt.Sprintf("0x%08x", p.CapMask)
			}
		}
		if p.CapMask2 != 0 {
			if e != nil {
				jp.CapMask2 = hexOnce(e.caps2, "0x%04x", p.CapMask2)
			} else {
				jp.CapMask2 = fmt.Sprintf("0x%04x", p.CapMask2)
			}
		}
		for _, u := range unreachedNames {
			if p.Unreached&u.bit != 0 {
				jp.Unreached = append(jp.Unreached, u.name)
			}
		}
		recordedPortJSON(&jp, p, view)
		jn.Ports = append(jn.Ports, jp)
	}
	return jn
}

// recordedPortJSON gives jp the fields of p that the fabric's source
// recorded (view.rec), and none of the others: a stand-in is not data.
func recordedPortJSON(jp *jsonPort, p *Port, view *savedView) {
	rec := view.rec
	if rec.SMInfo {
		jp.MasterSMLID = p.MasterSMLID
	}
	if rec.VLs {
		jp.VLCap, jp.OperVLs = p.VLCap, p.OperVLs
	}
	if rec.MKey {
		jp.MKeyProtect, jp.MKeyLease = p.MKeyProtect, p.MKeyLease
	}
	if !rec.PKeys {
		return
	}
	for _, e := range pkeyEnforceNames {
		if p.PKeyEnforce&e.bit != 0 {
			jp.PKeyEnforce = append(jp.PKeyEnforce, e.name)
		}
	}
	if keys := view.pkeys[p]; len(keys) > 0 {
		jp.PKeys = make([]string, len(keys))
		for i, k := range keys {
			jp.PKeys[i] = fmt.Sprintf("0x%04x", uint16(k))
		}
	}
}

func jsonLinkOf(l Link, index map[*Node]int) jsonLink {
	jl := jsonLink{A: jsonEnd{index[l.A.Node], hex64(l.A.Node.GUID), l.A.Num}, B: jsonEnd{index[l.B.Node], hex64(l.B.Node.GUID), l.B.Num}}
	if l.A.WidthActive != 0 || l.A.SpeedActive != 0 {
		jl.Rate = l.A.Rate().String()
	}
	return jl
}

func jsonUnreachOf(u Unreachable) jsonUnreach {
	ju := jsonUnreach{FromGUID: hex64(u.FromGUID), FromPort: u.FromPort, What: u.What, Reason: u.Reason, Where: u.Where}
	if u.Path != nil {
		s := u.Path.String()
		ju.Path = &s
	}
	return ju
}

func jsonDuplicateOf(d DuplicateGUID) jsonDuplicate {
	jd := jsonDuplicate{GUID: hex64(d.GUID), Paths: []string{}, Descriptions: d.Descs}
	for _, p := range d.Paths {
		jd.Paths = append(jd.Paths, p.String())
	}
	return jd
}

func nodeTypeName(t mad.NodeType) string {
	switch t {
	case mad.NodeCA:
		return "ca"
	case mad.NodeSwitch:
		return "switch"
	case mad.NodeRouter:
		return "router"
	}
	return strconv.Itoa(int(t))
}

func parseNodeType(s string) (mad.NodeType, error) {
	switch strings.ToLower(s) {
	case "ca":
		return mad.NodeCA, nil
	case "switch":
		return mad.NodeSwitch, nil
	case "router":
		return mad.NodeRouter, nil
	}
	n, err := strconv.ParseUint(s, 10, 8)
	if err != nil {
		return 0, fmt.Errorf("node type %q: want ca, switch, router or a number", s)
	}
	return mad.NodeType(n), nil
}

func u16p(v uint16) *uint16 { return &v }

// maskSet is a width or speed mask type.
type maskSet interface {
	~uint8 | ~uint16
	String() string
}

// masks encodes an active value and enabled/supported masks (widths or
// speeds) as names and numbers; nil when all are zero.
func masks[T maskSet](a, e, s T) *jsonMasks {
	if a == 0 && e == 0 && s == 0 {
		return nil
	}
	m := &jsonMasks{}
	if a != 0 {
		m.Active, m.ActiveMask = a.String(), u16p(uint16(a))
	}
	if e != 0 {
		m.Enabled, m.EnabledMask = e.String(), u16p(uint16(e))
	}
	if s != 0 {
		m.Supported, m.SupportedMask = s.String(), u16p(uint16(s))
	}
	return m
}

// mtuJSON gives an MTU in bytes; a code that is not an MTU is kept as
// the code itself (always < 256, so it cannot be mistaken for bytes).
func mtuJSON(m mad.MTU) int {
	if m == 0 {
		return 0
	}
	if b := m.Bytes(); b != 0 {
		return b
	}
	return int(m)
}

func mtuFromJSON(v int) (mad.MTU, error) {
	if v >= 0 && v < 256 {
		return mad.MTU(v), nil
	}
	for c := mad.MTU256; c <= mad.MTU4096; c++ {
		if c.Bytes() == v {
			return c, nil
		}
	}
	return 0, fmt.Errorf("MTU %d is not 256, 512, 1024, 2048 or 4096 bytes", v)
}

func parseWidthMask(s string) (mad.Width, error) {
	var w mad.Width
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" || part == "none" {
			continue
		}
		if strings.HasPrefix(part, "0x") {
			v, err := parseUint(part, 8)
			if err != nil {
				return 0, fmt.Errorf("width %q", s)
			}
			w |= mad.Width(v)
			continue
		}
		n, err := strconv.Atoi(strings.TrimSuffix(strings.ToUpper(part), "X"))
		if err != nil || widthFromLanes(n) == 0 {
			return 0, fmt.Errorf("width %q: %q is not 1X, 2X, 4X, 8X or 12X", s, part)
		}
		w |= widthFromLanes(n)
	}
	return w, nil
}

func parseSpeedMask(s string) (mad.Speed, error) {
	var sp mad.Speed
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" || part == "none" {
			continue
		}
		if strings.HasPrefix(part, "0x") {
			v, err := parseUint(part, 16)
			if err != nil {
				return 0, fmt.Errorf("speed %q", s)
			}
			sp |= mad.Speed(v)
			continue
		}
		x, err := mad.ParseSpeed(part)
		if err != nil {
			return 0, fmt.Errorf("speed %q: %w", s, err)
		}
		sp |= x
	}
	return sp, nil
}

// masks decodes one jsonMasks: the numbers when present, else the strings.
func (m *jsonMasks) decode(parse func(string) (uint16, error)) (a, e, s uint16, err error) {
	if m == nil {
		return 0, 0, 0, nil
	}
	pick := func(mask *uint16, str string) (uint16, error) {
		if mask != nil {
			return *mask, nil
		}
		if str == "" {
			return 0, nil
		}
		return parse(str)
	}
	if a, err = pick(m.ActiveMask, m.Active); err != nil {
		return
	}
	if e, err = pick(m.EnabledMask, m.Enabled); err != nil {
		return
	}
	s, err = pick(m.SupportedMask, m.Supported)
	return
}

// stateNames maps the state names the JSON carries back to states. Built
// on first use, not at init: every ibdoctor command links this package,
// few decode JSON.
var stateNames = sync.OnceValues(func() (map[string]mad.PortState, map[string]mad.PhysState) {
	a, b := make(map[string]mad.PortState), make(map[string]mad.PhysState)
	for i := 0; i < 256; i++ {
		a[mad.PortState(i).String()] = mad.PortState(i)
		b[mad.PhysState(i).String()] = mad.PhysState(i)
	}
	return a, b
})

func parseGUIDString(what, s string) (uint64, error) {
	if !strings.HasPrefix(s, "0x") && !strings.HasPrefix(s, "0X") {
		return 0, fmt.Errorf("%s %q: want a 0x-prefixed hex string", what, s)
	}
	v, err := strconv.ParseUint(s[2:], 16, 64)
	if err != nil {
		return 0, fmt.Errorf("%s %q: %v", what, s, err)
	}
	return v, nil
}

// Unmarshal decodes an ibdoctor.fabric/v1 document, rebuilding Node and
// Remote pointers from the links.
func Unmarshal(data []byte) (*Fabric, error) {
	return ReadJSON(bytes.NewReader(data))
}

// ReadJSON is Unmarshal reading from r: the nodes are decoded one by one
// as they stream, so a document with every switch's table (538 MB at
// 49k nodes) is never held whole, neither as bytes nor as hex strings.
func ReadJSON(r io.Reader) (*Fabric, error) {
	f, top, err := readJSONDoc(r)
	if top.schema != SchemaV1 && (err == nil || top.schemaSeen) {
		return nil, fmt.Errorf("fabric: unmarshal: schema %q, this ibdoctor reads %q", top.schema, SchemaV1)
	}
	return f, err
}

// jsonTop is what readJSONDoc saw at a document's top level besides a
// fabric: which schema it names, and a sweep snapshot's fabric_file.
type jsonTop struct {
	schema     string
	schemaSeen bool
	fabricFile string
}

// jsonSyntaxError is an error in a document's JSON itself, or in its
// schema's type: the document is not a fabric at all, rather than a
// fabric with a bad value.
type jsonSyntaxError struct{ err error }

func (e *jsonSyntaxError) Error() string { return e.err.Error() }
func (e *jsonSyntaxError) Unwrap() error { return e.err }

// readJSONDoc decodes a document's top-level object key by key, and each
// element of "nodes" on its own. Keys match as encoding/json matches
// them (case-insensitively); unknown keys are skipped, since v1 may gain
// fields; "nodes" twice is refused (encoding/json would keep the last).
// Errors in the JSON itself are a jsonSyntaxError.
func readJSONDoc(r io.Reader) (*Fabric, jsonTop, error) {
	var top jsonTop
	dec := json.NewDecoder(r)
	syntax := func(err error) error {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("fabric: unmarshal: %w", &jsonSyntaxError{err})
	}
	if t, err := dec.Token(); err != nil {
		return nil, top, syntax(err)
	} else if t != json.Delim('{') {
		return nil, top, syntax(fmt.Errorf("the document is %s, want an object", jsonKind(t)))
	}
	var (
		nodes     []*Node
		nodesSeen bool
		nodesErr  error
		doc       jsonFabric
		extra     jsonExtra
	)
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, top, syntax(err)
		}
		key, _ := t.(string)
		switch {
		case strings.EqualFold(key, "schema"):
			top.schemaSeen = true
			if err = dec.Decode(&top.schema); err != nil {
				return nil, top, syntax(err)
			}
		case strings.EqualFold(key, "fabric_file"):
			// Only a snapshot has it; a fabric's is ignored, whatever it is.
			var raw json.RawMessage
			if err = dec.Decode(&raw); err == nil {
				var s string
				if json.Unmarshal(raw, &s) == nil {
					top.fabricFile = s
				}
			}
		case strings.EqualFold(key, "nodes"):
			if nodesSeen {
				return nil, top, fmt.Errorf("fabric: unmarshal: \"nodes\" given twice: give one list of nodes")
			}
			nodesSeen = true
			nodes, nodesErr, err = readJSONNodes(dec, &extra)
		case strings.EqualFold(key, "links"):
			err = dec.Decode(&doc.Links)
		case strings.EqualFold(key, "recorded"):
			err = dec.Decode(&doc.Recorded)
		case strings.EqualFold(key, "sms"):
			err = dec.Decode(&doc.SMs)
		case strings.EqualFold(key, "unreachable"):
			err = dec.Decode(&doc.Unreachable)
		case strings.EqualFold(key, "duplicate_guids"):
			err = dec.Decode(&doc.DuplicateGUIDs)
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				return nil, top, fmt.Errorf("fabric: unmarshal: %w", err)
			}
			return nil, top, syntax(err)
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, top, syntax(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			err = errors.New("more after the document's end")
		}
		return nil, top, syntax(err)
	}
	if nodesErr != nil {
		return nil, top, nodesErr
	}
	if top.schema != SchemaV1 {
		return nil, top, nil
	}
	f, err := doc.link(nodes, &extra)
	return f, top, err
}

// readJSONNodes decodes "nodes" (the array, or null), one element at a
// time. The first element that does not make a Node is nodeErr; the rest
// are still read, so a syntax error later in the file is the one told,
// as it would be had the document been decoded whole.
func readJSONNodes(dec *json.Decoder, extra *jsonExtra) (nodes []*Node, nodeErr, err error) {
	t, err := dec.Token()
	if err != nil || t == nil {
		return nil, nil, err
	}
	if t != json.Delim('[') {
		return nil, nil, &json.UnmarshalTypeError{Value: jsonKind(t), Type: reflect.TypeFor[[]jsonNode](), Field: "nodes"}
	}
	var in BlockInterner // the switches' tables share their equal blocks
	for i := 0; dec.More(); i++ {
		var jn jsonNode
		if err := dec.Decode(&jn); err != nil {
			return nil, nil, err
		}
		if nodeErr != nil {
			continue
		}
		n, err := jn.decode(&in, extra, i)
		if err != nil {
			nodeErr = fmt.Errorf("fabric: unmarshal: nodes[%d]: %w", i, err)
			nodes = nil
			continue
		}
		nodes = append(nodes, n)
	}
	_, err = dec.Token()
	return nodes, nodeErr, err
}

// jsonKind names a token's kind for an error message.
func jsonKind(t json.Token) string {
	switch t := t.(type) {
	case json.Delim:
		if t == '[' {
			return "array"
		}
		return "object"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	}
	return "null"
}

// jsonExtra collects what the nodes' ports carry of the recorded
// inputs while they stream: the P_Key tables, and where a field of each
// input (by recordedNames' index) was first given, to refuse it when
// "recorded" does not list its input.
type jsonExtra struct {
	pkeys map[*Port][]mad.PKey
	first [4]string
}

// given notes that the port at where gave a field of input i.
func (x *jsonExtra) given(i int, where string) {
	if x.first[i] == "" {
		x.first[i] = where
	}
}

// link rebuilds the fabric from its decoded nodes and the rest of the
// document: the links' Remote pointers, what the source recorded,
// unreachable and duplicate GUIDs.
func (doc *jsonFabric) link(nodes []*Node, extra *jsonExtra) (*Fabric, error) {
	f := &Fabric{Nodes: nodes}
	if f.Nodes == nil {
		f.Nodes = []*Node{}
	}
	if err := doc.recorded(f, extra); err != nil {
		return nil, fmt.Errorf("fabric: unmarshal: %w", err)
	}
	for i, jl := range doc.Links {
		var ends [2]*Port
		for k, e := range []jsonEnd{jl.A, jl.B} {
			if e.Node < 0 || e.Node >= len(f.Nodes) {
				return nil, fmt.Errorf("fabric: unmarshal: links[%d]: node index %d out of range", i, e.Node)
			}
			n := f.Nodes[e.Node]
			if e.GUID != "" {
				g, err := parseGUIDString("guid", e.GUID)
				if err != nil {
					return nil, fmt.Errorf("fabric: unmarshal: links[%d]: %w", i, err)
				}
				if g != n.GUID {
					return nil, fmt.Errorf("fabric: unmarshal: links[%d]: node %d has GUID %s, link says %s", i, e.Node, hex64(n.GUID), e.GUID)
				}
			}
			if int(e.Port) >= len(n.Ports) || n.Ports[e.Port] == nil {
				return nil, fmt.Errorf("fabric: unmarshal: links[%d]: node %s has no port %d in \"ports\"", i, hex64(n.GUID), e.Port)
			}
			ends[k] = n.Ports[e.Port]
			if ends[k].Remote != nil {
				return nil, fmt.Errorf("fabric: unmarshal: links[%d]: node %s port %d is in two links", i, hex64(n.GUID), e.Port)
			}
		}
		if ends[0] == ends[1] {
			return nil, fmt.Errorf("fabric: unmarshal: links[%d]: a port cannot be linked to itself", i)
		}
		ends[0].Remote, ends[1].Remote = ends[1], ends[0]
	}
	for i, ju := range doc.Unreachable {
		var p mad.Path
		if ju.Path != nil {
			var err error
			if p, err = mad.ParsePath(*ju.Path); err != nil {
				return nil, fmt.Errorf("fabric: unmarshal: unreachable[%d]: %w", i, err)
			}
		}
		g, err := parseGUIDString("from_guid", ju.FromGUID)
		if err != nil {
			return nil, fmt.Errorf("fabric: unmarshal: unreachable[%d]: %w", i, err)
		}
		f.Unreachable = append(f.Unreachable, Unreachable{Path: p, FromGUID: g, FromPort: ju.FromPort, What: ju.What, Reason: ju.Reason, Where: ju.Where})
	}
	for i, jd := range doc.DuplicateGUIDs {
		g, err := parseGUIDString("guid", jd.GUID)
		if err != nil {
			return nil, fmt.Errorf("fabric: unmarshal: duplicate_guids[%d]: %w", i, err)
		}
		d := DuplicateGUID{GUID: g, Descs: jd.Descriptions}
		for _, s := range jd.Paths {
			p, err := mad.ParsePath(s)
			if err != nil {
				return nil, fmt.Errorf("fabric: unmarshal: duplicate_guids[%d]: %w", i, err)
			}
			d.Paths = append(d.Paths, p)
		}
		f.DuplicateGUIDs = append(f.DuplicateGUIDs, d)
	}
	return f, nil
}

// recorded sets f.Recorded from "recorded", refusing a field of an input
// it does not list (a value with no source), and f's recorded subnet
// managers and P_Key tables.
func (doc *jsonFabric) recorded(f *Fabric, extra *jsonExtra) error {
next:
	for _, name := range doc.Recorded {
		for _, x := range recordedNames {
			if name == x.name {
				*x.on(&f.Recorded) = true
				continue next
			}
		}
		return fmt.Errorf("recorded %q: want sm_info, vls, mkey or pkeys", name)
	}
	for i, x := range recordedNames {
		if where := extra.first[i]; where != "" && !*x.on(&f.Recorded) {
			return fmt.Errorf("%s gives %s, but \"recorded\" does not list %q: list it, or leave the fields out", where, x.fields, x.name)
		}
	}
	if len(doc.SMs) > 0 && !f.Recorded.SMInfo {
		return fmt.Errorf("\"sms\" given, but \"recorded\" does not list \"sm_info\": list it, or leave them out")
	}
	if f.Recorded.PKeys {
		f.PKeys = extra.pkeys
	}
	if !f.Recorded.SMInfo {
		return nil
	}
	f.SMs = make([]RecordedSM, 0, len(doc.SMs)) // recorded: none is not nil
	seen := map[*Port]bool{}
	for i, js := range doc.SMs {
		if js.Node < 0 || js.Node >= len(f.Nodes) {
			return fmt.Errorf("sms[%d]: node index %d out of range", i, js.Node)
		}
		n := f.Nodes[js.Node]
		if js.GUID != "" {
			g, err := parseGUIDString("guid", js.GUID)
			if err != nil {
				return fmt.Errorf("sms[%d]: %w", i, err)
			}
			if g != n.GUID {
				return fmt.Errorf("sms[%d]: node %d has GUID %s, the entry says %s", i, js.Node, hex64(n.GUID), js.GUID)
			}
		}
		if int(js.Port) >= len(n.Ports) || n.Ports[js.Port] == nil || (n.Type == mad.NodeSwitch) != (js.Port == 0) {
			return fmt.Errorf("sms[%d]: node %s has no port %d in \"ports\" an SM can be behind (a switch's port 0, a CA's own)", i, hex64(n.GUID), js.Port)
		}
		p := n.Ports[js.Port]
		if seen[p] {
			return fmt.Errorf("sms[%d]: node %s port %d has two subnet managers", i, hex64(n.GUID), js.Port)
		}
		seen[p] = true
		g, err := parseGUIDString("sm_guid", js.SMGUID)
		if err != nil {
			return fmt.Errorf("sms[%d]: %w", i, err)
		}
		st, ok := smStateByName(js.State)
		if !ok || js.Priority > 15 {
			return fmt.Errorf("sms[%d]: state %q priority %d: want NotActive, Discovering, Standby or Master, and a priority 0..15", i, js.State, js.Priority)
		}
		f.SMs = append(f.SMs, RecordedSM{Port: p, GUID: g, State: st, Priority: js.Priority, ActCount: js.ActCount})
	}
	return nil
}

// smStateByName is mad.SMState's String read back.
func smStateByName(s string) (mad.SMState, bool) {
	for st := mad.SMNotActive; st <= mad.SMMaster; st++ {
		if st.String() == s {
			return st, true
		}
	}
	return 0, false
}

func (jn *jsonNode) decode(in *BlockInterner, extra *jsonExtra, at int) (*Node, error) {
	t, err := parseNodeType(jn.Type)
	if err != nil {
		return nil, err
	}
	n := &Node{Type: t, Description: jn.Description, DescriptionUnread: jn.DescriptionUnread}
	if n.GUID, err = parseGUIDString("guid", jn.GUID); err != nil {
		return nil, err
	}
	if n.SystemImageGUID, err = parseGUIDString("system_image_guid", jn.SystemImageGUID); err != nil {
		return nil, err
	}
	for _, x := range []struct {
		name, s string
		bits    int
		dst     func(uint64)
	}{
		{"vendor_id", jn.VendorID, 24, func(v uint64) { n.VendorID = uint32(v) }},
		{"device_id", jn.DeviceID, 16, func(v uint64) { n.DeviceID = uint16(v) }},
		{"revision", jn.Revision, 32, func(v uint64) { n.Revision = uint32(v) }},
	} {
		if x.s == "" {
			continue
		}
		v, err := parseUint(x.s, x.bits)
		if err != nil {
			return nil, fmt.Errorf("%s %q: want a number of %d bits", x.name, x.s, x.bits)
		}
		x.dst(v)
	}
	if jn.Path != nil {
		if n.Path, err = mad.ParsePath(*jn.Path); err != nil {
			return nil, err
		}
	}
	switch {
	case jn.NumPorts == -1:
		if len(jn.Ports) != 0 {
			return nil, fmt.Errorf("num_ports -1 (no ports) but %d ports listed", len(jn.Ports))
		}
	case jn.NumPorts < 0 || jn.NumPorts > 254:
		return nil, fmt.Errorf("num_ports %d: want 0..254", jn.NumPorts)
	default:
		n.Ports = make([]*Port, jn.NumPorts+1)
	}
	if js := jn.Switch; js != nil {
		n.Switch = &Switch{js.LinearFDBCap, js.LinearFDBTop, js.MulticastCap, js.LIDsPerPort, js.EnhancedPort0,
			js.LifeTimeValue, js.DefaultPort, js.PartitionCap, js.MulticastTop, nil}
		if js.LFT != nil {
			t, err := js.LFT.table(in)
			if err != nil {
				return nil, fmt.Errorf("switch lft: %v", err)
			}
			n.Switch.LFT = t
		}
	}
	for _, jp := range jn.Ports {
		if int(jp.Num) >= len(n.Ports) {
			return nil, fmt.Errorf("port %d beyond num_ports %d", jp.Num, jn.NumPorts)
		}
		if n.Ports[jp.Num] != nil {
			return nil, fmt.Errorf("port %d listed twice", jp.Num)
		}
		p, err := jp.decode()
		if err != nil {
			return nil, fmt.Errorf("port %d: %w", jp.Num, err)
		}
		p.Node = n
		n.Ports[jp.Num] = p
		if err := jp.decodeRecorded(p, extra, fmt.Sprintf("nodes[%d] port %d", at, jp.Num)); err != nil {
			return nil, fmt.Errorf("port %d: %w", jp.Num, err)
		}
	}
	return n, nil
}

func (jp *jsonPort) decode() (*Port, error) {
	p := &Port{Num: jp.Num, LID: jp.LID, LMC: jp.LMC}
	var err error
	if p.GUID, err = parseGUIDString("guid", jp.GUID); err != nil {
		return nil, err
	}
	var ok bool
	portStates, physStates := stateNames()
	if p.State, ok = portStates[jp.State]; !ok && jp.State != "" {
		return nil, fmt.Errorf("state %q: want Down, Init, Armed, Active, ...", jp.State)
	}
	if p.PhysState, ok = physStates[jp.PhysState]; !ok && jp.PhysState != "" {
		return nil, fmt.Errorf("phys_state %q: want Polling, Disabled, LinkUp, ...", jp.PhysState)
	}
	wa, we, ws, err := jp.Width.decode(func(s string) (uint16, error) { w, err := parseWidthMask(s); return uint16(w), err })
	if err != nil {
		return nil, err
	}
	if wa > 0xff || we > 0xff || ws > 0xff {
		return nil, fmt.Errorf("width mask over 8 bits")
	}
	p.WidthActive, p.WidthEnabled, p.WidthSupported = mad.Width(wa), mad.Width(we), mad.Width(ws)
	sa, se, ss, err := jp.Speed.decode(func(s string) (uint16, error) { v, err := parseSpeedMask(s); return uint16(v), err })
	if err != nil {
		return nil, err
	}
	p.SpeedActive, p.SpeedEnabled, p.SpeedSupported = mad.Speed(sa), mad.Speed(se), mad.Speed(ss)
	if p.NeighborMTU, err = mtuFromJSON(jp.NeighborMTU); err != nil {
		return nil, fmt.Errorf("neighbor_mtu: %w", err)
	}
	if p.MTUCap, err = mtuFromJSON(jp.MTUCap); err != nil {
		return nil, fmt.Errorf("mtu_cap: %w", err)
	}
	if jp.CapMask != "" {
		v, err := parseUint(jp.CapMask, 32)
		if err != nil {
			return nil, fmt.Errorf("cap_mask %q: want a 32-bit number", jp.CapMask)
		}
		p.CapMask = uint32(v)
	}
	if jp.CapMask2 != "" {
		v, err := parseUint(jp.CapMask2, 16)
		if err != nil {
			return nil, fmt.Errorf("cap_mask2 %q: want a 16-bit number", jp.CapMask2)
		}
		p.CapMask2 = uint16(v)
	}
	u, bad, ok := bitsNamed(jp.Unreached, unreachedNames)
	if !ok {
		return nil, fmt.Errorf("unreached %q: want port_info, speed or far_end", bad)
	}
	p.Unreached |= u
	return p, nil
}

// decodeRecorded reads the fields of the recorded inputs into p (the
// P_Key table into extra), checking their ranges, and notes in extra
// which inputs the port gave fields of.
func (jp *jsonPort) decodeRecorded(p *Port, extra *jsonExtra, where string) error {
	if jp.MasterSMLID != 0 {
		extra.given(0, where)
	}
	if jp.VLCap != 0 || jp.OperVLs != 0 {
		extra.given(1, where)
	}
	if jp.MKeyProtect != 0 || jp.MKeyLease != 0 {
		extra.given(2, where)
	}
	if len(jp.PKeyEnforce) > 0 || len(jp.PKeys) > 0 {
		extra.given(3, where)
	}
	if jp.VLCap > 15 || jp.OperVLs > 15 || jp.MKeyProtect > 3 {
		return fmt.Errorf("vl_cap %d oper_vls %d mkey_protect %d: want 4-bit VL codes and 2 protection bits", jp.VLCap, jp.OperVLs, jp.MKeyProtect)
	}
	p.MasterSMLID, p.VLCap, p.OperVLs, p.MKeyProtect, p.MKeyLease = jp.MasterSMLID, jp.VLCap, jp.OperVLs, jp.MKeyProtect, jp.MKeyLease
	e, bad, ok := bitsNamed(jp.PKeyEnforce, pkeyEnforceNames)
	if !ok {
		return fmt.Errorf("pkey_enforce %q: want in or out", bad)
	}
	p.PKeyEnforce |= e
	if len(jp.PKeys) == 0 {
		return nil
	}
	if len(jp.PKeys) > maxJSONPKeys {
		return fmt.Errorf("pkeys: %d entries, a table has at most %d", len(jp.PKeys), maxJSONPKeys)
	}
	keys := make([]mad.PKey, len(jp.PKeys))
	for i, k := range jp.PKeys {
		v, err := parseUint(k, 16)
		if err != nil {
			return fmt.Errorf("pkeys[%d] %q: want a 16-bit number", i, k)
		}
		keys[i] = mad.PKey(v)
	}
	if extra.pkeys == nil {
		extra.pkeys = map[*Port][]mad.PKey{}
	}
	extra.pkeys[p] = keys
	return nil
}

// lftHex is t's entries in hex, two digits a LID.
func lftHex(t *LFT) string {
	b := make([]byte, 0, 2*t.Len())
	for i := range t.NumBlocks() {
		b = hex.AppendEncode(b, t.Block(i)[:min(mad.LFTBlockSize, t.Len()-i*mad.LFTBlockSize)])
	}
	return string(b)
}

// lftFromHex decodes a table written by lftHex a block at a time, with
// hex.DecodeString's errors (the first bad digit, then an odd length).
func lftFromHex(s string, in *BlockInterner) (*LFT, error) {
	const w = 2 * mad.LFTBlockSize
	t := &LFT{offs: make([]uint32, 0, (len(s)/2+mad.LFTBlockSize-1)/mad.LFTBlockSize)}
	for i := 0; i < len(s); i += w {
		var buf [w]byte
		c := copy(buf[:], s[i:])
		blk := LFTBlock(noRouteBytes)
		k, err := hex.Decode(blk[:], buf[:c])
		if err != nil {
			return nil, err
		}
		t.offs = append(t.offs, 0)
		t.put(len(t.offs)-1, &blk, in)
		t.n += k
	}
	return t, nil
}
