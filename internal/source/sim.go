package source

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/snapshot"
	"github.com/ibdoctor/ibdoctor/internal/transport"
)

// openSim builds the in-process simulator — the built-in sample fabric
// with its incident ("sample"), or a saved fabric file (see
// fabric.ReadFile) with --lfts' forwarding tables — applies --faults, and
// attaches where the file was written from (else the first host port
// that is up). It records in s what was read and whether the routes are
// ibdoctor's own.
func openSim(ctx context.Context, o Options, s *Session) (transport.Conn, error) {
	// Every run is a look at one fabric whose counters were last cleared
	// at the top of the UTC hour: a sweep and a later gate read the same
	// counters climbing, not restarted from each process's start. An hour
	// keeps the sample's counters near the incident it tells, far from
	// 64-bit saturation (docs/faults.md).
	clock := sim.NewEpochClock(time.Now().UTC().Truncate(time.Hour))
	// Concurrent: the simulated fabric answers on a core of its own while
	// the engine reads on another (a 49k sweep is millions of SMPs).
	opts := sim.Options{ServiceTime: o.SimServiceTime, HopLatency: o.SimHopLatency, Clock: clock, Concurrent: true}
	var (
		sm  *sim.Sim
		err error
	)
	if o.Sim == "sample" {
		if o.LFTs != "" {
			return nil, fmt.Errorf("--lfts is for a fabric file given with --sim=FILE, not the built-in sample")
		}
		sm, err = sim.Sample(opts)
		s.Name = "sim:sample"
	} else {
		if _, err := os.Stat(o.Sim); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("--sim %s: no such file: give %s, or --sim alone for the built-in sample", o.Sim, fabric.TopologyFormats)
		}
		var info *fabric.FileInfo
		sm, info, err = sim.Load(ctx, o.Sim, o.LFTs, opts)
		s.Name = "sim:" + filepath.Base(o.Sim)
		if info != nil {
			s.File = info
			s.RoutesComputed = err == nil && !info.Routes
			if err == nil && info.Counters && o.Faults == "" {
				s.CountersOnce = fmt.Sprintf("%s's counters are one reading (%s)", filepath.Base(o.Sim), info.Format)
				if info.Increases != nil {
					s.Increases = info.Increases
					s.IncreasesBasis = "the increase during ibdiagnet's run (PM_DELTA), span not in the file: no BER, utilisation or share of time stalled; 'ibdoctor counters --all' lists the values since the last clear (PM_INFO)"
				}
			}
			if err == nil && info.NoRates {
				s.RatesNotRead = fmt.Sprintf("%s (%s) gives no link rates ibsim reads (width=, speed=, w=, s=, e=): every link shows ibsim's default 4X SDR", filepath.Base(o.Sim), info.Format)
			}
			if err == nil && info.NoSupported && o.Faults == "" {
				s.SupportedNotRead = fmt.Sprintf("%s (%s) does not record supported speeds", filepath.Base(o.Sim), info.Format)
			}
			// A sweep's own fabric-<ns>.json.gz: its tables and counters
			// are in gate.idx beside it, which --sim does not read, so the
			// re-judgement is not the sweep's: said on the Counters line
			// and in a note, never filled in silently.
			sweepFile := false
			if err == nil && info.Gzip && info.Format == fabric.FormatJSON {
				idxs, _ := filepath.Glob(filepath.Join(filepath.Dir(o.Sim), "gate-*.idx"))
				if _, serr := os.Stat(filepath.Join(filepath.Dir(o.Sim), snapshot.IndexName)); serr == nil || len(idxs) > 0 {
					sweepFile = true
					info.Notes = append(info.Notes, fmt.Sprintf("a sweep's saved fabric: its forwarding tables and counters are in %s beside it, which --sim does not read, so the routes are ibdoctor's own and no counters were read: this is not the sweep's verdict (docs/schema-snapshot.md)", snapshot.IndexName))
				}
			}
			if err == nil && !info.Counters {
				if o.Faults == "" && sweepFile {
					s.NoCounters = fmt.Sprintf("%s (a sweep's fabric, %s) carries no counters: the sweep kept them in %s, which --sim does not read, so none were read", filepath.Base(o.Sim), info.Format, snapshot.IndexName)
				} else if o.Faults == "" {
					s.NoCounters = fmt.Sprintf("%s (%s) carries no counters, so none were read", filepath.Base(o.Sim), info.Format)
				} else {
					// A --faults scenario plants its counters on the
					// simulator's zeros: what-if values, said so.
					info.Notes = append(info.Notes, "the file carries no counters: the counters read are the simulator's, zero but for what --faults plants")
				}
			}
		}
	}
	if err != nil {
		// The --lfts file's errors name that flag and file.
		if le := (*sim.LFTsError)(nil); errors.As(err, &le) {
			return nil, err
		}
		return nil, fmt.Errorf("--sim: %w", err)
	}
	if guids := sm.TablesNotInFile(); len(guids) > 0 {
		from := o.Sim
		if o.LFTs != "" {
			from = o.LFTs
		}
		s.TablesNotInFile = map[uint64]string{}
		for _, g := range guids {
			s.TablesNotInFile[g] = "its forwarding table is not in " + filepath.Base(from) + " (the file gives other switches' tables)"
		}
	}
	if o.Faults != "" {
		edited, err := sm.ApplyFaultsFileRoutes(o.Faults)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("--faults %s: no such file: give a faults file (docs/faults.md), or leave --faults out", o.Faults)
		}
		if err != nil {
			return nil, fmt.Errorf("--faults %s: %w", o.Faults, err)
		}
		s.RoutesPlanted = edited
	}
	if s.File != nil {
		s.NotRecorded = notRecorded(filepath.Base(o.Sim), s.File, sm)
		s.sim = sm
	}
	if o.Sim != "" && !sm.SLtoVLPlanted() {
		s.NoSL2VL = fmt.Sprintf("%s carries no SL2VL tables, so none were read", filepath.Base(o.Sim))
	}
	// What was set up above dates from the epoch; from here the fabric
	// runs on the wall clock.
	clock.Start()
	c, err := sm.Attach("", 0)
	if err != nil {
		return nil, fmt.Errorf("attaching to the simulated fabric: %w", err)
	}
	return c, nil
}

// notRecorded says, by the checks' input, what the file (name, read as
// info says) does not record and --faults did not plant; what was
// planted on a file without it is noted as a what-if instead. Only an
// ibdiagnet2.db_csv records SMInfo and MasterSMLID (SM_INFO, PORTS'
// MSMLID), the M_Key policy, VLs and P_Key tables (PORTS, PKEY:
// FileInfo.Recorded); NeighborMTU a db_csv's PORTS and ibdoctor's JSON
// (FileInfo.NoMTU).
func notRecorded(name string, info *fabric.FileInfo, sm *sim.Sim) map[string]string {
	base := fmt.Sprintf("%s (%s)", name, info.Format)
	out := map[string]string{}
	rec := info.Recorded
	for _, in := range []struct {
		need, what, columns string
		faults              []string
		recorded            bool
	}{
		{"sm-recorded", "subnet manager", "SMInfo, MasterSMLID", []string{"sm", "nosm"}, rec.SMInfo},
		{"mkey", "M_Key policy", "PortInfo M_Key protection bits and lease period", []string{"mkey"}, rec.MKey},
		{"mtu", "MTU", "NeighborMTU, MTUCap", []string{"mtu"}, !info.NoMTU},
		{"vls", "VL configuration", "VLCap, OperationalVLs", []string{"vls"}, rec.VLs},
		{"partitions", "P_Key tables", "P_Key tables, switch ports' partition enforcement", []string{"pkey"}, rec.PKeys},
	} {
		switch {
		case in.recorded:
		case sm.Planted(in.faults...):
			info.Notes = append(info.Notes, fmt.Sprintf("the file records no %s (%s): what is read is the simulator's default but for what --faults plants (a what-if)", in.what, in.columns))
		default:
			out[in.need] = fmt.Sprintf("%s records no %s (%s): the simulator's stand-in is not the fabric's", base, in.what, in.columns)
		}
	}
	return out
}
