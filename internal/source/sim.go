package source

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
)

func init() { simOpener = openSim }

// sampleFabric returns the built-in sample fabric and its faults; set by
// sample.go once the embedded fixture exists.
var sampleFabric func() (f *fabric.Fabric, faults []byte, attach string, err error)

// openSim builds the in-process simulator from o.Sim ("sample" or a
// topology file) and attaches to a host port.
func openSim(_ context.Context, o Options, s *Session) (transport.Conn, error) {
	var (
		f      *fabric.Fabric
		faults []byte
		attach string
		err    error
	)
	if o.Sim == "sample" {
		if sampleFabric == nil {
			return nil, fmt.Errorf("the built-in sample fabric is not in this build; use --sim FILE")
		}
		f, faults, attach, err = sampleFabric()
		s.Name = "sim:sample"
	} else {
		f, err = LoadTopology(o.Sim)
		s.Name = "sim:" + filepath.Base(o.Sim)
	}
	if err != nil {
		return nil, err
	}
	sm, err := sim.New(f, sim.Options{ServiceTime: o.SimServiceTime, HopLatency: o.SimHopLatency})
	if err != nil {
		return nil, fmt.Errorf("building the simulated fabric: %w", err)
	}
	if len(faults) > 0 {
		fs, err := sim.ParseFaults(bytes.NewReader(faults))
		if err != nil {
			return nil, fmt.Errorf("sample faults: %w", err)
		}
		if err := sm.ApplyFaults(fs); err != nil {
			return nil, fmt.Errorf("sample faults: %w", err)
		}
	}
	if o.Faults != "" {
		if err := sm.ApplyFaultsFile(o.Faults); err != nil {
			return nil, fmt.Errorf("--faults %s: %w", o.Faults, err)
		}
	}
	s.Extra = sm
	c, err := sm.Attach(attach, 0)
	if err != nil {
		return nil, fmt.Errorf("attaching to the simulated fabric: %w", err)
	}
	return c, nil
}

// LoadTopology reads a topology file — ibnetdiscover text or an ibsim net
// file — and gives it LIDs and min-hop LFTs where it has none, as a
// subnet manager would.
func LoadTopology(path string) (*fabric.Fabric, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading topology: %w", err)
	}
	var f *fabric.Fabric
	if isNetFile(data) {
		f, _, err = fabric.ParseNetFile(bytes.NewReader(data))
	} else {
		f, err = fabric.ParseIBNetDiscover(bytes.NewReader(data))
	}
	if err != nil {
		return nil, fmt.Errorf("topology %s: %w", path, err)
	}
	if len(f.Nodes) == 0 {
		return nil, fmt.Errorf("topology %s: no nodes (is it ibnetdiscover output or an ibsim net file?)", path)
	}
	needLIDs := true
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil && p.LID != 0 {
				needLIDs = false
			}
		}
	}
	if needLIDs {
		if _, err := topology.AssignLIDs(f); err != nil {
			return nil, fmt.Errorf("topology %s: assigning LIDs: %w", path, err)
		}
	}
	if err := topology.Route(f); err != nil {
		return nil, fmt.Errorf("topology %s: routing: %w", path, err)
	}
	return f, nil
}

// isNetFile tells an ibsim net file from ibnetdiscover output: the latter
// has "vendid=" / "switchguid=" / "caguid=" lines and GUID-named ports.
func isNetFile(data []byte) bool {
	s := string(data)
	if strings.Contains(s, "switchguid=") || strings.Contains(s, "caguid=") || strings.Contains(s, "vendid=") {
		return false
	}
	return true
}
