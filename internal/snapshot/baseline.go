package snapshot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/outfile"
)

// BaselineName is the accepted topology in the state directory: what
// sweeps compare the fabric against (topology.changed, topology.miswired,
// link.down) until the operator accepts a new one with
// `ibdoctor baseline accept`. It is ibdoctor.fabric/v1 without forwarding
// tables.
const BaselineName = "baseline.json"

// LoadBaseline reads the accepted topology in dir; nil, nil when there is
// none yet.
func LoadBaseline(dir string) (*fabric.Fabric, error) {
	path := filepath.Join(dir, BaselineName)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	f, err := fabric.Unmarshal(data)
	if err != nil {
		return nil, fmt.Errorf("baseline %s: %w (accept the current fabric again: ibdoctor baseline accept)", path, err)
	}
	return f, nil
}

// SaveBaseline makes f the accepted topology in dir. The caller holds
// dir's Lock.
func SaveBaseline(dir string, f *fabric.Fabric) error {
	data, err := fabric.MarshalWith(f, fabric.MarshalOptions{OmitLFT: true, Indent: true})
	if err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	if err := outfile.WriteAtomic(filepath.Join(dir, BaselineName), data); err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	return nil
}
