package cli

import (
	"bytes"
	"fmt"
	"os"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
)

// fabricDecoders read a fabric from a file's bytes; JSON support is added
// by the file that owns the JSON codec.
var jsonFabric func(data []byte) (*fabric.Fabric, error)

// loadFabricFile reads a saved fabric: ibdoctor JSON (a snapshot or a
// discover --format json), ibnetdiscover text, or an ibsim net file.
func loadFabricFile(path string) (*fabric.Fabric, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	trimmed := bytes.TrimSpace(data)
	switch {
	case len(trimmed) > 0 && trimmed[0] == '{':
		if jsonFabric == nil {
			return nil, fmt.Errorf("%s: JSON fabrics are not supported by this build", path)
		}
		f, err := jsonFabric(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return f, nil
	default:
		return sim.ParseTopology(data, path)
	}
}
