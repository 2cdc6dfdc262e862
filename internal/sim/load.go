package sim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ibdoctor/ibdoctor/fixtures"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/words"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Prepare makes a fabric ready to simulate, as an SM's first sweep
// would: ports whose link is up are made Active; LIDs are assigned (as
// OpenSM does, all of them) when some switch or CA port whose link is up
// has none; and min-hop
// forwarding tables are computed when no switch has one. lfts, when not
// nil, are dump_fts tables to install instead of computing routes.
// computed reports that the routes are ibdoctor's own min-hop ones, not
// the file's.
func Prepare(f *fabric.Fabric, lfts []fabric.DumpedLFT) (computed bool, err error) {
	needLIDs, haveLFT := false, false
	for _, n := range f.Nodes {
		for i, p := range n.Ports {
			if p == nil {
				continue
			}
			if p.PhysState == mad.PhysLinkUp && (p.State == mad.PortStateInit || p.State == mad.PortStateArmed) {
				p.State = mad.PortStateActive
			}
			switch {
			case n.Type == mad.NodeSwitch && i == 0 && p.LID == 0:
				needLIDs = true
			case n.Type != mad.NodeSwitch && p.Remote != nil && p.PhysState == mad.PhysLinkUp && p.LID == 0:
				needLIDs = true
			}
		}
		if n.Type == mad.NodeSwitch && n.Ports[0] == nil {
			// ibnetdiscover text may leave port 0 out; a switch always
			// has its management port.
			n.Ports[0] = &fabric.Port{Node: n, Num: 0, GUID: n.GUID, State: mad.PortStateActive, PhysState: mad.PhysLinkUp}
			needLIDs = true
		}
		if n.Switch == nil && n.Type == mad.NodeSwitch {
			n.Switch = &fabric.Switch{}
		}
		if n.Switch != nil && n.Switch.LFT.Len() > 0 {
			haveLFT = true
		}
	}
	if needLIDs {
		if _, err := topology.AssignLIDs(f); err != nil {
			return false, fmt.Errorf("sim: assigning LIDs: %w", err)
		}
		haveLFT = false // old tables name old LIDs
	}
	f.Reindex()
	if lfts != nil && needLIDs && lidOnly(lfts) {
		// The tables' LIDs are the SM's; these are ibdoctor's. Entries
		// naming a port GUID can be moved onto its LID, these cannot.
		return false, &LFTsError{Err: errors.New("the forwarding tables name destinations by LID only (OpenSM's fdbs, dump_fts -n) and the topology file carries no LIDs (ibdoctor assigned its own), so they cannot be matched: give tables that name each destination's port (dump_fts, ibroute, opensm-lfts.dump) or a topology with LIDs (ibnetdiscover)")}
	}
	if lfts != nil {
		if err := fabric.LoadLFTs(f, lfts); err != nil {
			return false, &LFTsError{Err: err, Fix: "give the forwarding tables of this fabric (dump_fts or ibroute taken on its subnet)"}
		}
		return false, nil
	}
	if !haveLFT {
		if err := topology.Route(f); err != nil {
			return false, fmt.Errorf("sim: computing routes: %w", err)
		}
		return true, nil
	}
	return false, nil
}

// LFTsError is an error of the forwarding tables given with --lfts: the
// caller names that flag and its file, not --sim's (trial E10: "--sim:
// sim: loading forwarding tables: ..." never named the --lfts file).
type LFTsError struct {
	Path string // the --lfts file; "" when Prepare was given the tables
	Err  error
	Fix  string // what to give instead, when Err does not say it
}

func (e *LFTsError) Error() string {
	msg := e.Err.Error()
	switch {
	case e.Fix == "":
	case strings.HasSuffix(msg, "?"):
		msg += " " + strings.ToUpper(e.Fix[:1]) + e.Fix[1:]
	default:
		msg += ": " + e.Fix
	}
	if e.Path == "" {
		return "forwarding tables: " + msg
	}
	return "--lfts " + e.Path + ": " + msg
}

func (e *LFTsError) Unwrap() error { return e.Err }

// Load builds a Sim from a saved fabric file (read by fabric.ReadFile,
// which says in the returned FileInfo what format it read), with
// forwarding tables from the dump_fts/ibroute file lftPath when it is
// not empty, else from the topology file, else computed (see Prepare;
// FileInfo.Routes says whether the tables came from a file).
func Load(ctx context.Context, path, lftPath string, opts Options) (*Sim, *fabric.FileInfo, error) {
	f, info, err := fabric.ReadFile(ctx, path)
	if err != nil {
		return nil, info, err
	}
	if lftPath == "" {
		// An ibdiagnet directory keeps its forwarding tables beside the
		// topology: ibdiagnet2.fdbs.
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			fdbs := filepath.Join(path, "ibdiagnet2.fdbs")
			if _, err := os.Stat(fdbs); err == nil {
				lftPath = fdbs
				info.Notes = append(info.Notes, "forwarding tables from "+fdbs)
			}
		}
	}
	var lfts []fabric.DumpedLFT
	if lftPath != "" {
		const want = "give the output of dump_fts or ibroute taken on the fabric of the --sim file"
		if st, err := os.Stat(lftPath); err == nil && st.IsDir() {
			return nil, info, &LFTsError{Path: lftPath, Err: errors.New("a directory: " + want)}
		}
		data, li, err := fabric.ReadLFTFile(ctx, lftPath)
		if err != nil {
			var pe *fs.PathError
			switch {
			case errors.Is(err, fs.ErrNotExist):
				err = errors.New("no such file: " + want)
			case errors.As(err, &pe):
				err = pe.Err
			default:
				// The reader's own messages name the file first.
				if rest, ok := strings.CutPrefix(err.Error(), lftPath+": "); ok {
					err = errors.New(rest)
				}
			}
			return nil, info, &LFTsError{Path: lftPath, Err: err}
		}
		lfts, err = fabric.ParseDumpFTS(bytes.NewReader(data))
		if err != nil {
			return nil, info, &LFTsError{Path: lftPath, Err: err}
		}
		if w := li.Warning(); w != "" {
			info.Notes = append(info.Notes, "--lfts "+w)
		}
	}
	computed, err := Prepare(f, lfts)
	if err != nil {
		var le *LFTsError
		if errors.As(err, &le) {
			le.Path = lftPath
			if le.Fix != "" {
				le.Fix = fmt.Sprintf("give the forwarding tables of %s (dump_fts or ibroute taken on its subnet)", path)
			}
		}
		return nil, info, err
	}
	info.Routes = !computed
	if lfts != nil {
		switches, routed := 0, 0
		for _, n := range f.Nodes {
			if n.Type == mad.NodeSwitch {
				switches++
				if n.Switch != nil && n.Switch.LFT.Len() > 0 {
					routed++
				}
			}
		}
		if routed < switches {
			info.Notes = append(info.Notes, fmt.Sprintf("--lfts %s has tables for %d of the %d switches: the others' are not in it, so they are not read (listed as such) and no route through them is judged (give a dump_fts of the whole fabric)", lftPath, routed, switches))
		}
	}
	info.NoSupported = !anyPort(f, func(p *fabric.Port) bool { return p.SpeedSupported != 0 })
	info.NoWidthSupported = !anyPort(f, func(p *fabric.Port) bool { return p.WidthSupported != 0 })
	info.NoMTU = !anyPort(f, func(p *fabric.Port) bool { return p.NeighborMTU != 0 })
	info.Recorded = f.Recorded
	opts.fromFile = true
	s, err := New(f, opts)
	if err != nil {
		return s, info, err
	}
	if info.Routes {
		// Tables from a file that has some switches' and not others':
		// those are unknown, not empty.
		s.tablesNotInFile(f)
	}
	if f.Firmware == nil {
		s.noFirmware = fmt.Sprintf("%s (%s) carries no firmware versions", filepath.Base(path), info.Format)
	}
	s.noAR = fmt.Sprintf("%s (%s) carries no adaptive-routing state", filepath.Base(path), info.Format)
	// A dump holds what its tool reached, all of it connected; a file
	// whose nodes are not (several subnets, an edited fixture) loses the
	// others from every sweep, which would otherwise say it reached
	// everything: each other part is listed as not reached.
	if parts := s.parts(); len(parts) > 1 {
		off := 0
		for _, pt := range parts[1:] {
			off += len(pt.nodes)
			names := s.partNames(pt)
			links := "no link"
			if pt.links > 0 {
				links = plural(pt.links, "link")
			}
			info.Unread = append(info.Unread, fabric.Unreachable{What: fmt.Sprintf("%s (%s)", plural(len(pt.nodes), "node"), links),
				Where:  quoteSome(names, 3),
				Reason: fmt.Sprintf("in the file but not cabled to the part the sweep starts from (%s), so not read; %s", s.attachName(), partsAdvice)})
		}
		info.Notes = append(info.Notes, fmt.Sprintf("the file holds %d parts not cabled to each other; every command sees only the one holding where the sweep starts (%s: %d of the file's %d nodes, %s); the other %d nodes are listed as not reached: %s; %s",
			len(parts), s.attachName(), len(parts[0].nodes), len(f.Nodes), plural(parts[0].links, "link"), off, quoteSome(s.partNames(part{nodes: otherNodes(parts)}), 3), partsAdvice))
	}
	return s, info, nil
}

// partsAdvice ends what is said of a file in parts not cabled to each
// other: several subnets in one file, or a file cut short (at a line
// boundary nothing else tells), look the same.
const partsAdvice = "give each subnet as its own file, or the whole file if this one was cut short"

// tablesNotInFile marks the switches of f (the fabric s was built from,
// node for node) that have no forwarding table: their LFT is not
// answered.
func (s *Sim) tablesNotInFile(f *fabric.Fabric) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, n := range f.Nodes {
		if sw := s.nodes[i].sw; sw != nil && (n.Switch == nil || n.Switch.LFT.Len() == 0) {
			// LinearFDBTop 0 would say "routes nothing" without a read:
			// the top covers the fabric's LIDs, so a reader asks for the
			// table and is refused.
			sw.lftUnknown, sw.fdbTop = true, uint16(max(0, len(s.lidMap)-1))
		}
	}
}

// TablesNotInFile lists the GUIDs of the switches whose forwarding table
// the file the simulator was loaded from did not give while it gave
// others': they do not answer LinearForwardingTable.
func (s *Sim) TablesNotInFile() []uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []uint64
	for i := range s.nodes {
		if sw := s.nodes[i].sw; sw != nil && sw.lftUnknown {
			out = append(out, s.nodes[i].guid)
		}
	}
	return out
}

// attachName describes where Attach("", ...) attaches.
func (s *Sim) attachName() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ni, err := s.defaultAttachLocked()
	if err != nil {
		return "nowhere"
	}
	return strings.TrimSpace(s.nodes[ni].desc)
}

// otherNodes are the nodes of every part but the first.
func otherNodes(parts []part) []int32 {
	var out []int32
	for _, pt := range parts[1:] {
		out = append(out, pt.nodes...)
	}
	return out
}

// plural writes n with the noun, adding an s when n is not 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// quoteSome quotes the first n of names and counts the rest.
func quoteSome(names []string, n int) string {
	var quoted []string
	for _, x := range names[:min(n, len(names))] {
		quoted = append(quoted, strconv.Quote(x))
	}
	return words.FirstOf(quoted, len(names))
}

// LoadFile is Load without a context or the FileInfo.
func LoadFile(path, lftPath string, opts Options) (*Sim, error) {
	s, _, err := Load(context.Background(), path, lftPath, opts)
	return s, err
}

// Sample builds the built-in sample fabric (fixtures/sample): a two-level
// NDR fat tree of 32 servers × 8 GPUs' HCAs in 8 leaves and 4 spines, a
// ring all-reduce running across the leaves, and the incident the README
// walks through, with its faults applied (fixtures/sample/faults.txt).
func Sample(opts Options) (*Sim, error) {
	s, err := SampleHealthy(opts)
	if err != nil {
		return nil, err
	}
	fs, err := ParseFaults(bytes.NewReader(fixtures.SampleFaults()))
	if err != nil {
		return nil, fmt.Errorf("sim: sample faults: %w", err)
	}
	if err := s.ApplyFaults(fs); err != nil {
		return nil, fmt.Errorf("sim: sample faults: %w", err)
	}
	return s, nil
}

// SampleHealthy builds the sample fabric without its faults or traffic.
func SampleHealthy(opts Options) (*Sim, error) {
	f, _, err := SampleFabric()
	if err != nil {
		return nil, err
	}
	return New(f, opts)
}

// SampleFabric returns the sample fabric's model, ready for New (LIDs
// assigned, routes computed), and its faults file (fixtures/sample).
// Each call builds a fresh model.
func SampleFabric() (*fabric.Fabric, []byte, error) {
	f, _, err := fabric.Decode(fixtures.SampleTopology(), "sample topology")
	if err != nil {
		return nil, nil, err
	}
	if _, err := Prepare(f, nil); err != nil {
		return nil, nil, err
	}
	return f, fixtures.SampleFaults(), nil
}

// lidOnly reports whether no table entry names its destination's port
// GUID (LID 0 and switch-own entries aside, all do in dump_fts).
func lidOnly(lfts []fabric.DumpedLFT) bool {
	for _, d := range lfts {
		for _, e := range d.Entries {
			if e.PortGUID != 0 {
				return false
			}
		}
	}
	return true
}

// anyPort reports whether any port of f has the field read tells: a
// file records a field (supported speeds, widths, NeighborMTU) when any
// port gives it.
func anyPort(f *fabric.Fabric, read func(*fabric.Port) bool) bool {
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil && read(p) {
				return true
			}
		}
	}
	return false
}
