package source

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/transport"
)

func init() { simOpener = openSim }

// openSim builds the in-process simulator — the built-in sample fabric
// with its incident ("sample"), or a topology file (ibnetdiscover text,
// ibsim net file, ibdoctor JSON) — applies --faults, and attaches to the
// first host port that is up.
func openSim(_ context.Context, o Options, s *Session) (transport.Conn, error) {
	opts := sim.Options{ServiceTime: o.SimServiceTime, HopLatency: o.SimHopLatency}
	var (
		sm  *sim.Sim
		err error
	)
	if o.Sim == "sample" {
		sm, err = sim.Sample(opts)
		s.Name = "sim:sample"
	} else {
		sm, err = sim.LoadFile(o.Sim, "", opts)
		s.Name = "sim:" + filepath.Base(o.Sim)
	}
	if err != nil {
		return nil, fmt.Errorf("--sim: %w (give an ibnetdiscover, ibsim net or ibdoctor JSON topology file, or --sim alone for the built-in sample)", err)
	}
	if o.Faults != "" {
		if err := sm.ApplyFaultsFile(o.Faults); err != nil {
			return nil, fmt.Errorf("--faults %s: %w", o.Faults, err)
		}
	}
	c, err := sm.Attach("", 0)
	if err != nil {
		return nil, fmt.Errorf("attaching to the simulated fabric: %w", err)
	}
	return c, nil
}
