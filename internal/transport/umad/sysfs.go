// Package umad is the Linux kernel transport: it finds the local RDMA
// devices and ports in sysfs, maps a port to its /dev/infiniband/umadN
// character device, registers MAD agents on it and moves 64-byte
// ib_user_mad headers plus 256-byte MADs through read and write.
//
// The sysfs part (this file) is plain file parsing with an overridable root
// so that it can be tested against fixture trees on any OS; the device part
// needs Linux.
package umad

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/ibdoctor/ibdoctor/mad"
)

// DefaultSysfsRoot is where sysfs is mounted.
const DefaultSysfsRoot = "/sys"

// ErrNoDevice is returned when the host has no RDMA device at all.
// The message says how to get the device as well as how to do without.
var ErrNoDevice = errors.New("no InfiniBand device on this host (/sys/class/infiniband is empty): load the HCA's driver (e.g. modprobe mlx5_ib) and the MAD device module (modprobe ib_umad), and give yourself read-write access to /dev/infiniband/umad* (root, or a udev rule for your group); or try `--sim` for the built-in sample fabric")

// CA is one RDMA device (an HCA, a switch's management device, a soft
// device such as rxe) as sysfs describes it.
type CA struct {
	Name         string       // kernel device name, e.g. "mlx5_0"
	NodeType     mad.NodeType // 1 CA, 2 switch, 3 router (4 and up: iWARP and other non-IB)
	NodeGUID     uint64
	SysImageGUID uint64
	NodeDesc     string
	FWVer        string // empty when the driver does not expose it
	Ports        []Port // sorted by number; a switch has only port 0
}

// Port is one port of a CA.
type Port struct {
	CA        string // owning device name
	Num       uint8
	LID       uint16
	SMLID     uint16
	LMC       uint8
	State     mad.PortState
	PhysState mad.PhysState
	RateText  string   // sysfs text, e.g. "100 Gb/sec (4X EDR)"
	Rate      mad.Rate // parsed from RateText; zero if it could not be parsed
	CapMask   uint32   // PortInfo CapabilityMask
	LinkLayer string   // "InfiniBand", "Ethernet" or "Unknown"
	GID0      netip.Addr
	PortGUID  uint64 // low 64 bits of GID0
	// UMAD is the name of the umad character device for this port
	// ("umad3"), empty if ib_umad has none for it.
	UMAD string
}

// Name is "dev/port", the form used in messages and LocalPort.Name.
func (p *Port) Name() string { return fmt.Sprintf("%s/%d", p.CA, p.Num) }

// IsInfiniBand reports whether the port's link layer is InfiniBand (old
// kernels without a link_layer file count as InfiniBand).
func (p *Port) IsInfiniBand() bool { return p.LinkLayer == "InfiniBand" }

// linkUp reports whether the physical link is trained.
func (p *Port) linkUp() bool { return p.PhysState == mad.PhysLinkUp }

// Capability-mask bits used here.
const capIsSMDisabled = 0x400 // XDR GSI-only plane: SMPs must use the other device

// sysfsError names the file that could not be parsed.
type sysfsError struct {
	Path string
	Msg  string
	Err  error
}

func (e *sysfsError) Error() string {
	s := "umad: sysfs " + e.Path + ": " + e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *sysfsError) Unwrap() error { return e.Err }

// reader reads sysfs attribute files below one root.
type reader struct{ root string }

func (r reader) path(rel ...string) string {
	return filepath.Join(append([]string{r.root}, rel...)...)
}

// read returns the trimmed content of a file; missing files are errors.
func (r reader) read(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", &sysfsError{Path: path, Msg: "missing"}
		}
		return "", &sysfsError{Path: path, Msg: "cannot read", Err: unwrapPathError(err)}
	}
	return strings.TrimRight(string(b), "\n\x00 "), nil
}

// readOptional returns "" for a file that does not exist.
func (r reader) readOptional(path string) (string, error) {
	s, err := r.read(path)
	var se *sysfsError
	if errors.As(err, &se) && se.Msg == "missing" {
		return "", nil
	}
	return s, err
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// parseNumbered parses "%d: NAME" files (node_type, state, phys_state).
func parseNumbered(path, s string) (uint64, error) {
	num, _, ok := strings.Cut(s, ":")
	if !ok {
		return 0, &sysfsError{Path: path, Msg: fmt.Sprintf("%q is not of the form \"N: NAME\"", s)}
	}
	v, err := strconv.ParseUint(strings.TrimSpace(num), 10, 8)
	if err != nil {
		return 0, &sysfsError{Path: path, Msg: fmt.Sprintf("%q does not start with a number", s)}
	}
	return v, nil
}

// parseGUID parses the sysfs GUID format "0002:c903:00a1:b2c3".
func parseGUID(path, s string) (uint64, error) {
	parts := strings.Split(s, ":")
	bad := &sysfsError{Path: path, Msg: fmt.Sprintf("%q is not a GUID (want four groups of four hex digits, like 0002:c903:00a1:b2c3)", s)}
	if len(parts) != 4 {
		return 0, bad
	}
	var g uint64
	for _, p := range parts {
		if len(p) != 4 {
			return 0, bad
		}
		v, err := strconv.ParseUint(p, 16, 16)
		if err != nil {
			return 0, bad
		}
		g = g<<16 | v
	}
	return g, nil
}

// parseUint parses a number in C notation (0x prefix for hex) of the
// given bit size. hex requires the 0x prefix the kernel prints.
func parseUint(path, s string, bits int, hex bool) (uint64, error) {
	what := "a decimal number"
	if hex {
		what = "a hex number like 0x1a"
		if !strings.HasPrefix(s, "0x") && !strings.HasPrefix(s, "0X") {
			return 0, &sysfsError{Path: path, Msg: fmt.Sprintf("%q is not %s", s, what)}
		}
		s2 := s[2:]
		v, err := strconv.ParseUint(s2, 16, bits)
		if err != nil {
			return 0, &sysfsError{Path: path, Msg: fmt.Sprintf("%q is not %s of %d bits", s, what, bits)}
		}
		return v, nil
	}
	v, err := strconv.ParseUint(s, 10, bits)
	if err != nil {
		return 0, &sysfsError{Path: path, Msg: fmt.Sprintf("%q is not %s of %d bits", s, what, bits)}
	}
	return v, nil
}

// parseRate parses the "(4X EDR)" part of a sysfs rate.
func parseRate(s string) mad.Rate {
	i := strings.IndexByte(s, '(')
	j := strings.LastIndexByte(s, ')')
	if i < 0 || j < i {
		return mad.Rate{}
	}
	r, err := mad.ParseRate(s[i+1 : j])
	if err != nil {
		return mad.Rate{}
	}
	return r
}

// Enumerate reads every RDMA device and port below root (normally "/sys")
// and maps ports to their umad devices. Devices are sorted by name, ports
// by number. It returns ErrNoDevice when there is no device, and an error
// naming the file when a sysfs file cannot be parsed.
func Enumerate(root string) ([]CA, error) {
	if root == "" {
		root = DefaultSysfsRoot
	}
	r := reader{root: root}
	ibDir := r.path("class", "infiniband")
	ents, err := os.ReadDir(ibDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, ErrNoDevice
		}
		return nil, &sysfsError{Path: ibDir, Msg: "cannot list", Err: unwrapPathError(err)}
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) == 0 {
		return nil, ErrNoDevice
	}
	sort.Strings(names)

	umads, err := r.umadMap()
	if err != nil {
		return nil, err
	}
	cas := make([]CA, 0, len(names))
	for _, name := range names {
		ca, err := r.readCA(name, umads)
		if err != nil {
			return nil, err
		}
		cas = append(cas, ca)
	}
	return cas, nil
}

type devPort struct {
	dev  string
	port uint8
}

// umadMap maps device+port to the umad device name by reading
// class/infiniband_mad/umad*/{ibdev,port}. issm devices are ignored: a
// diagnostic tool must never open them.
func (r reader) umadMap() (map[devPort]string, error) {
	dir := r.path("class", "infiniband_mad")
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return map[devPort]string{}, nil // ib_umad not loaded: ports get no UMAD
		}
		return nil, &sysfsError{Path: dir, Msg: "cannot list", Err: unwrapPathError(err)}
	}
	m := make(map[devPort]string)
	for _, e := range ents {
		name := e.Name()
		num, ok := strings.CutPrefix(name, "umad")
		if !ok || num == "" || strings.Trim(num, "0123456789") != "" {
			continue
		}
		dev, err := r.read(filepath.Join(dir, name, "ibdev"))
		if err != nil {
			return nil, err
		}
		pp := filepath.Join(dir, name, "port")
		ps, err := r.read(pp)
		if err != nil {
			return nil, err
		}
		port, err := parseUint(pp, ps, 8, false)
		if err != nil {
			return nil, err
		}
		m[devPort{dev, uint8(port)}] = name
	}
	return m, nil
}

func (r reader) readCA(name string, umads map[devPort]string) (CA, error) {
	dir := r.path("class", "infiniband", name)
	ca := CA{Name: name}
	p := filepath.Join(dir, "node_type")
	s, err := r.read(p)
	if err != nil {
		return ca, err
	}
	nt, err := parseNumbered(p, s)
	if err != nil {
		return ca, err
	}
	ca.NodeType = mad.NodeType(nt)
	for _, f := range []struct {
		file string
		dst  *uint64
	}{{"node_guid", &ca.NodeGUID}, {"sys_image_guid", &ca.SysImageGUID}} {
		p := filepath.Join(dir, f.file)
		s, err := r.read(p)
		if err != nil {
			return ca, err
		}
		if *f.dst, err = parseGUID(p, s); err != nil {
			return ca, err
		}
	}
	if ca.NodeDesc, err = r.readOptional(filepath.Join(dir, "node_desc")); err != nil {
		return ca, err
	}
	if ca.FWVer, err = r.readOptional(filepath.Join(dir, "fw_ver")); err != nil {
		return ca, err
	}

	pdir := filepath.Join(dir, "ports")
	ents, err := os.ReadDir(pdir)
	if err != nil {
		return ca, &sysfsError{Path: pdir, Msg: "cannot list ports", Err: unwrapPathError(err)}
	}
	for _, e := range ents {
		n, err := strconv.ParseUint(e.Name(), 10, 8)
		if err != nil {
			return ca, &sysfsError{Path: filepath.Join(pdir, e.Name()), Msg: "port directory name is not a port number"}
		}
		port, err := r.readPort(name, filepath.Join(pdir, e.Name()), uint8(n))
		if err != nil {
			return ca, err
		}
		port.UMAD = umads[devPort{name, uint8(n)}]
		ca.Ports = append(ca.Ports, port)
	}
	sort.Slice(ca.Ports, func(i, j int) bool { return ca.Ports[i].Num < ca.Ports[j].Num })
	return ca, nil
}

func (r reader) readPort(ca, dir string, num uint8) (Port, error) {
	p := Port{CA: ca, Num: num}
	type field struct {
		file string
		bits int
		hex  bool
		set  func(uint64)
	}
	for _, f := range []field{
		{"lid", 16, true, func(v uint64) { p.LID = uint16(v) }},
		{"sm_lid", 16, true, func(v uint64) { p.SMLID = uint16(v) }},
		{"lid_mask_count", 8, false, func(v uint64) { p.LMC = uint8(v) }},
		{"cap_mask", 32, true, func(v uint64) { p.CapMask = uint32(v) }},
	} {
		path := filepath.Join(dir, f.file)
		s, err := r.read(path)
		if err != nil {
			return p, err
		}
		v, err := parseUint(path, s, f.bits, f.hex)
		if err != nil {
			return p, err
		}
		f.set(v)
	}
	for _, f := range []struct {
		file string
		set  func(uint64)
	}{
		{"state", func(v uint64) { p.State = mad.PortState(v) }},
		{"phys_state", func(v uint64) { p.PhysState = mad.PhysState(v) }},
	} {
		path := filepath.Join(dir, f.file)
		s, err := r.read(path)
		if err != nil {
			return p, err
		}
		v, err := parseNumbered(path, s)
		if err != nil {
			return p, err
		}
		f.set(v)
	}
	var err error
	if p.RateText, err = r.readOptional(filepath.Join(dir, "rate")); err != nil {
		return p, err
	}
	p.Rate = parseRate(p.RateText)
	if p.LinkLayer, err = r.readOptional(filepath.Join(dir, "link_layer")); err != nil {
		return p, err
	}
	if p.LinkLayer == "" {
		p.LinkLayer = "InfiniBand" // kernels before link_layer existed were IB only
	}
	// Read only index 0: a port has up to 1024 gids/* files and listing
	// them is slow (about a second per port under emulation).
	gp := filepath.Join(dir, "gids", "0")
	s, err := r.read(gp)
	if err != nil {
		return p, err
	}
	gid, err := netip.ParseAddr(s)
	if err != nil || !gid.Is6() || gid.Zone() != "" {
		return p, &sysfsError{Path: gp, Msg: fmt.Sprintf("%q is not a GID (want eight groups of hex digits, like fe80:0000:0000:0000:0002:c903:00a1:b2c4)", s)}
	}
	p.GID0 = gid
	b := gid.As16()
	for _, x := range b[8:] {
		p.PortGUID = p.PortGUID<<8 | uint64(x)
	}
	return p, nil
}

// Selection says which local port to use: CA and Port as given by the user
// (empty / 0 = pick one), and whether SMPs will be sent.
type Selection struct {
	CA   string
	Port int // 0: pick (a switch always uses port 0)
	SMP  bool
	Perf bool
}

// Select picks the local port the way infiniband-diags does: with no CA
// named, the first InfiniBand port that is ACTIVE on the first device (in
// name order) that has one; failing that, the first InfiniBand port whose
// physical link is up (enough for directed-route SMPs before a subnet
// manager has run). A switch device always uses its management port 0.
// The errors name what exists and what to do.
func Select(cas []CA, sel Selection) (*CA, *Port, error) {
	if len(cas) == 0 {
		return nil, nil, ErrNoDevice
	}
	if sel.CA == "" {
		if sel.Port != 0 {
			return nil, nil, fmt.Errorf("umad: a port number (%d) needs a device name too (available: %s)", sel.Port, listPorts(cas))
		}
		return pickAny(cas, sel)
	}
	var ca *CA
	for i := range cas {
		if cas[i].Name == sel.CA {
			ca = &cas[i]
		}
	}
	if ca == nil {
		return nil, nil, fmt.Errorf("umad: no RDMA device named %q on this host (available: %s)", sel.CA, listPorts(cas))
	}
	if ca.NodeType == mad.NodeSwitch && sel.Port == 0 && len(ca.Ports) > 0 && ca.Ports[0].Num == 0 {
		return ca, &ca.Ports[0], checkUsable(&ca.Ports[0], sel)
	}
	if sel.Port == 0 {
		if p := firstPort(ca, sel); p != nil {
			return ca, p, checkUsable(p, sel)
		}
		return nil, nil, fmt.Errorf("umad: %s has no usable InfiniBand port (%s)", ca.Name, describePorts(ca))
	}
	for i := range ca.Ports {
		if int(ca.Ports[i].Num) == sel.Port {
			return ca, &ca.Ports[i], checkUsable(&ca.Ports[i], sel)
		}
	}
	return nil, nil, fmt.Errorf("umad: %s has no port %d (it has %s)", ca.Name, sel.Port, describePorts(ca))
}

// firstPort returns the first ACTIVE InfiniBand port, else the first one
// with the physical link up, else nil.
func firstPort(ca *CA, sel Selection) *Port {
	if ca.NodeType == mad.NodeSwitch {
		for i := range ca.Ports {
			if ca.Ports[i].Num == 0 {
				return &ca.Ports[i]
			}
		}
	}
	var up *Port
	for i := range ca.Ports {
		p := &ca.Ports[i]
		if !p.IsInfiniBand() {
			continue
		}
		if p.State == mad.PortStateActive {
			return p
		}
		if up == nil && p.linkUp() && sel.SMP {
			up = p
		}
	}
	return up
}

func pickAny(cas []CA, sel Selection) (*CA, *Port, error) {
	// First pass: an ACTIVE port anywhere; second: link up (SMP only).
	for pass := 0; pass < 2; pass++ {
		for i := range cas {
			ca := &cas[i]
			if ca.NodeType < mad.NodeCA || ca.NodeType > mad.NodeRouter {
				continue
			}
			p := firstPort(ca, sel)
			if p == nil {
				continue
			}
			if pass == 0 && p.State != mad.PortStateActive && ca.NodeType != mad.NodeSwitch {
				continue
			}
			return ca, p, checkUsable(p, sel)
		}
	}
	var roce []string
	for i := range cas {
		for j := range cas[i].Ports {
			if !cas[i].Ports[j].IsInfiniBand() {
				roce = append(roce, cas[i].Ports[j].Name())
			}
		}
	}
	msg := "umad: no ACTIVE InfiniBand port on this host (" + listPorts(cas) + ")"
	if len(roce) > 0 && len(roce) == countPorts(cas) {
		msg = "umad: no InfiniBand port on this host, only Ethernet (RoCE) ports: " + strings.Join(roce, ", ") +
			"; SMP discovery needs an InfiniBand port (name a RoCE port with its device and port to send PerfMgt over it)"
	} else if sel.SMP {
		msg += "; check the cables and `ibstat`, or name a port with its device and port number"
	} else {
		msg += "; PerfMgt needs an ACTIVE port with a LID from a subnet manager: is an SM running?"
	}
	return nil, nil, errors.New(msg)
}

// checkUsable rejects a port that cannot do what was asked.
func checkUsable(p *Port, sel Selection) error {
	if p.State == mad.PortStateActive {
		return nil
	}
	if p.linkUp() && sel.SMP && !sel.Perf {
		return nil // directed-route SMPs work before the SM has brought the port up
	}
	var hint string
	switch {
	case !p.linkUp():
		hint = "the physical link is not up: check the cable and the port at the other end"
	case sel.Perf:
		hint = "PerfMgt needs an ACTIVE port with a LID from a subnet manager: is an SM running?"
	default:
		hint = "is a subnet manager running?"
	}
	return &PortStateError{Port: p.Name(), State: p.State, PhysState: p.PhysState, Hint: hint}
}

// PortStateError reports a port that is not ACTIVE.
type PortStateError struct {
	Port      string
	State     mad.PortState
	PhysState mad.PhysState
	Hint      string
}

func (e *PortStateError) Error() string {
	return fmt.Sprintf("umad: port %s is not ACTIVE (state %s, physical state %s); %s", e.Port, e.State, e.PhysState, e.Hint)
}

func countPorts(cas []CA) int {
	n := 0
	for i := range cas {
		n += len(cas[i].Ports)
	}
	return n
}

// listPorts lists every device and port with its state, for messages.
func listPorts(cas []CA) string {
	var parts []string
	for i := range cas {
		parts = append(parts, cas[i].Name+" "+describePorts(&cas[i]))
	}
	return strings.Join(parts, "; ")
}

func describePorts(ca *CA) string {
	if len(ca.Ports) == 0 {
		return "no ports"
	}
	var parts []string
	for _, p := range ca.Ports {
		s := fmt.Sprintf("port %d %s", p.Num, strings.ToUpper(p.State.String()))
		if !p.IsInfiniBand() {
			s += " " + p.LinkLayer
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}
