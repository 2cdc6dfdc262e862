package sim

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"github.com/ibdoctor/ibdoctor/fixtures"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/mad"
)

// ParseTopology reads a topology description: ibdoctor's fabric JSON,
// ibnetdiscover text (default or -g format), or an ibsim net file,
// whichever the bytes are. name is used in errors.
func ParseTopology(data []byte, name string) (*fabric.Fabric, error) {
	trim := bytes.TrimSpace(data)
	if len(trim) == 0 {
		return nil, fmt.Errorf("sim: %s is empty: give an ibnetdiscover, ibsim net or ibdoctor JSON topology", name)
	}
	if trim[0] == '{' {
		f, err := fabric.Unmarshal(data)
		if err != nil {
			return nil, fmt.Errorf("sim: %s: %w", name, err)
		}
		return f, nil
	}
	f, errID := fabric.ParseIBNetDiscover(bytes.NewReader(data))
	if errID == nil && len(f.Nodes) > 0 {
		return f, nil
	}
	f, _, errNet := fabric.ParseNetFile(bytes.NewReader(data))
	if errNet == nil && len(f.Nodes) > 0 {
		return f, nil
	}
	if errID == nil {
		errID = errors.New("no nodes")
	}
	if errNet == nil {
		errNet = errors.New("no nodes")
	}
	return nil, fmt.Errorf("sim: %s is neither ibnetdiscover text (%v) nor an ibsim net file (%v)", name, errID, errNet)
}

// Prepare makes a fabric ready to simulate, as an SM's first sweep
// would: ports whose link is up are made Active; LIDs are assigned (as
// OpenSM does, all of them) when some switch or CA port whose link is up
// has none; and min-hop
// forwarding tables are computed when no switch has one. lfts, when not
// nil, are dump_fts tables to install instead of computing routes.
func Prepare(f *fabric.Fabric, lfts []topology.DumpedLFT) error {
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
		if n.Switch != nil && len(n.Switch.LFT) > 0 {
			haveLFT = true
		}
	}
	if needLIDs {
		if _, err := topology.AssignLIDs(f); err != nil {
			return fmt.Errorf("sim: assigning LIDs: %w", err)
		}
		haveLFT = false // old tables name old LIDs
	}
	f.Reindex()
	if lfts != nil {
		if err := topology.LoadLFTs(f, lfts); err != nil {
			return fmt.Errorf("sim: loading forwarding tables: %w", err)
		}
		return nil
	}
	if !haveLFT {
		if err := topology.Route(f); err != nil {
			return fmt.Errorf("sim: computing routes: %w", err)
		}
	}
	return nil
}

// LoadFile builds a Sim from a topology file (see ParseTopology), with
// forwarding tables from the dump_fts file lftPath when it is not empty,
// else from the topology file or computed (see Prepare).
func LoadFile(path, lftPath string, opts Options) (*Sim, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sim: topology: %w", err)
	}
	f, err := ParseTopology(data, path)
	if err != nil {
		return nil, err
	}
	var lfts []topology.DumpedLFT
	if lftPath != "" {
		fh, err := os.Open(lftPath)
		if err != nil {
			return nil, fmt.Errorf("sim: forwarding tables: %w", err)
		}
		lfts, err = topology.ParseDumpFTS(fh)
		fh.Close()
		if err != nil {
			return nil, fmt.Errorf("sim: %s: %w", lftPath, err)
		}
	}
	if err := Prepare(f, lfts); err != nil {
		return nil, err
	}
	return New(f, opts)
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
	f, err := ParseTopology(fixtures.SampleTopology(), "sample topology")
	if err != nil {
		return nil, nil, err
	}
	if err := Prepare(f, nil); err != nil {
		return nil, nil, err
	}
	return f, fixtures.SampleFaults(), nil
}
