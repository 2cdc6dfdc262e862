// Package source opens the fabric ibdoctor talks to — the kernel umad
// device, an ibsim simulator, or the in-process simulator — and puts the
// request engine (and an optional capture) on top. Commands call Open and
// never look at which one they got.
package source

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/capture"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/internal/transport/ibsim"
)

// Options select and tune the fabric connection. They mirror the global
// flags (internal/cli/root.go).
type Options struct {
	// Sim selects the in-process simulator: "sample" for the built-in
	// sample fabric, or a saved fabric file (any format fabric.ReadFile
	// reads). Empty: not the simulator.
	Sim string
	// LFTs is a forwarding-table dump (dump_fts, ibroute) for the
	// fabric file Sim names; without it the file's own tables are used,
	// else ibdoctor computes min-hop routes (Session.RoutesComputed).
	LFTs string
	// Faults is an optional faults file for the simulator.
	Faults string
	// SimServiceTime and SimHopLatency give the simulator hardware-like
	// timing (0: answer at once).
	SimServiceTime, SimHopLatency time.Duration

	// IBSim selects an ibsim fabric by socket name; IBSimHost is the node
	// to attach to.
	IBSim, IBSimHost string

	// CA and Port select the local umad port (infiniband-diags' -C/-P).
	CA   string
	Port int

	// Pcap, when set, records every MAD exchanged into this file.
	Pcap string

	// Engine tuning. Retries is the number of retries after a timeout:
	// 0 means none (unlike transport.Options, where 0 is the default).
	Timeout time.Duration
	Retries int
	Window  int
	PerDest int

	// Need says what the command will do with the fabric.
	Need Need
}

// Need is what a command will do with the fabric: which management
// classes it uses (umad registers only those agents) and whether it may
// write (counters --reset): without Writes the engine refuses every Set.
type Need struct {
	SMP, Perf, Writes bool
	// Vendor asks for NVIDIA's vendor-specific class (GeneralInfo, the
	// firmware version) as well.
	Vendor bool
}

// Session is an open fabric.
type Session struct {
	Engine *transport.Engine
	// Name says what was opened ("sim:sample", "ibsim:sim/h0001",
	// "umad:mlx5_0/1").
	Name string
	// Kind is "sim", "ibsim" or "umad".
	Kind string
	// File says how a --sim file was read (nil otherwise).
	File *fabric.FileInfo
	// sim is the in-process simulator of a --sim session (KeepRecorded).
	sim *sim.Sim
	// RoutesComputed is true when the simulator's forwarding tables are
	// ibdoctor's own min-hop routes, not the fabric's: every output
	// that shows routes must say so.
	RoutesComputed bool
	// RoutesPlanted is true when --faults edited the forwarding tables
	// (lft, blackhole, loop, asym, sweep): computed or not, they are then
	// a routing to judge, as if the SM had written them.
	RoutesPlanted bool
	// NoCounters, when not empty, says why the fabric has no counters to
	// read: a --sim file whose format carries none. The simulator's zeros
	// are then not counters read, and commands must not judge them.
	NoCounters string
	// NoSL2VL, when not empty, says why the fabric's SLtoVLMappingTables
	// are not to be read: a --sim file (no format carries them) whose
	// --faults plant none. The simulator's every-SL-on-VL0 is then not a
	// table read.
	NoSL2VL string
	// NotRecorded names, by the checks' input ("sm-recorded", "mkey",
	// "mtu", "vls", "partitions": checks.Snapshot.NotRecorded), what a
	// --sim file does not record: the simulator's stand-in for it (a
	// healthy default SM, default VLs and P_Keys) is not read data, so the
	// checks that judge it do not run. An input --faults plants is a
	// what-if and is not listed.
	NotRecorded map[string]string
	// CountersOnce, when not empty, says the counters are one reading a
	// file recorded (ibdiagnet's PM_INFO): they do not move, so an
	// interval would measure no increase that the fabric did not have.
	CountersOnce string
	// RatesNotRead, when not empty, says why the link rates are not the
	// fabric's: a --sim file that gives none (the simulator's default
	// 4X SDR). Checks that judge rates do not run on them.
	RatesNotRead string
	// SupportedNotRead, when not empty, says the --sim file records no
	// supported link speeds: what a host's HCA can run is not known
	// (checks.Snapshot.SupportedNotRead).
	SupportedNotRead string
	// Increases, when not nil, are the increases the --sim file recorded
	// for its counters (fabric.FileInfo.Increases: ibdiagnet's PM_DELTA),
	// to judge instead of the values (diagnose.WithIncreases);
	// IncreasesBasis says what they are, for the report.
	Increases      map[fabric.PortID]map[string]uint64
	IncreasesBasis string
	// TablesNotInFile names, by switch GUID, why a switch's forwarding
	// table is not answered: the --sim or --lfts file gives other
	// switches' tables and not its own (diagnose.Options.TablesNotRead).
	TablesNotInFile map[uint64]string

	closers []func() error
}

// Unread is what the --sim file itself records could not be read when it
// was written (fabric.FileInfo.Unread); nil for other sources.
func (s *Session) Unread() []fabric.Unreachable {
	if s.File == nil {
		return nil
	}
	return s.File.Unread
}

// Close closes the engine, the connection and the capture.
func (s *Session) Close() error {
	var errs []error
	for i := len(s.closers) - 1; i >= 0; i-- {
		if err := s.closers[i](); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Open connects to the fabric o selects and returns a session whose
// engine is ready. ctx bounds the opening; lifetime (may be nil) closes
// connections that hold resources elsewhere (an ibsim slot) when done.
func Open(ctx context.Context, lifetime context.Context, o Options) (*Session, error) {
	s := &Session{}
	var conn transport.Conn
	var err error
	switch {
	case o.Sim != "":
		s.Kind = "sim"
		conn, err = openSim(ctx, o, s)
	case o.IBSim != "":
		s.Kind = "ibsim"
		var c *ibsim.Conn
		c, err = ibsim.Dial(ctx, ibsim.Options{SockName: o.IBSim, Host: o.IBSimHost, Lifetime: lifetime})
		if err == nil {
			conn = c
			s.Name = fmt.Sprintf("ibsim:%s/%s", c.SockName(), nonEmpty(o.IBSimHost, os.Getenv("SIM_HOST"), "default"))
		}
	default:
		s.Kind = "umad"
		conn, err = openUmad(ctx, o, s)
	}
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, conn.Close)
	// The flag says how many retries; the engine reads 0 as "default".
	retries := o.Retries
	if retries == 0 {
		retries = -1
	}
	opts := transport.Options{
		Timeout:     o.Timeout,
		Retries:     retries,
		Window:      o.Window,
		PerDest:     o.PerDest,
		AllowWrites: o.Need.Writes,
	}
	if o.Pcap != "" {
		w, err := capture.Create(o.Pcap)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("--pcap: %w", err)
		}
		s.closers = append(s.closers, w.Close)
		opts.Tap = w.ForEngine(conn.Local())
	}
	s.Engine = transport.NewEngine(conn, opts)
	s.closers = append(s.closers, s.Engine.Close)
	return s, nil
}

func nonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// DropStandIns clears from f, a fabric swept over a --sim file, what the
// file did not record and the simulator answered in its stead (the MTU:
// NotRecorded["mtu"]), so that a fabric saved from it (discover
// --format json, a sweep's snapshot) does not carry it as read.
func (s *Session) DropStandIns(f *fabric.Fabric) {
	if f == nil || s.NotRecorded["mtu"] == "" {
		return
	}
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil {
				p.NeighborMTU, p.MTUCap = 0, 0
			}
		}
	}
}

// SavedAs is what f, a fabric swept over a --sim file that is about to
// be saved (discover's output, a sweep's snapshot, after the checks
// judged it), is saved as; nil when it is saved as it is (a live
// fabric's). It keeps what the file recorded beyond the topology and the
// sweep read from it (its subnet managers, MasterSMLIDs, VLs, M_Key
// policy, P_Key tables: see sim.Recorded), so that the saved fabric read
// again runs the same checks on the same data; and it drops the supported
// and enabled speeds the simulator answered for a file that records none
// (SupportedNotRead), and the supported and enabled widths likewise: the
// checks hedge on them, but a file saved with them would carry them as
// read. f is only read: SavedAs.Apply, or fabric.MarshalOptions.As, saves
// it so.
func (s *Session) SavedAs(f *fabric.Fabric) *fabric.SavedAs {
	speeds := s.SupportedNotRead != ""
	if f == nil || (s.sim == nil && !speeds) {
		return nil
	}
	a := &fabric.SavedAs{Recorded: f.Recorded, SMs: f.SMs, PKeys: f.PKeys, DropSpeeds: speeds,
		DropWidths: speeds && s.File != nil && s.File.NoWidthSupported}
	if s.sim != nil {
		a.Recorded, a.SMs, a.PKeys = s.sim.Recorded(f)
	}
	return a
}
