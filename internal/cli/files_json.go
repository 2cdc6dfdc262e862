package cli

import (
	"encoding/json"
	"fmt"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
)

func init() { jsonFabric = decodeJSONFabric }

// decodeJSONFabric reads an ibdoctor.fabric/v1 document: what `discover
// --format json` writes, and the fabric file a sweep keeps beside its
// snapshot.json. Given snapshot.json itself it names the file to use.
func decodeJSONFabric(data []byte) (*fabric.Fabric, error) {
	var probe struct {
		Schema     string `json:"schema"`
		FabricFile string `json:"fabric_file"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("not a JSON fabric: %w", err)
	}
	switch {
	case probe.Schema == fabric.SchemaV1:
		return fabric.Unmarshal(data)
	case probe.FabricFile != "":
		return nil, fmt.Errorf("this is a sweep snapshot (%s); its fabric is in %q beside it: give that file", probe.Schema, probe.FabricFile)
	}
	return nil, fmt.Errorf("JSON schema %q is not a fabric (want %q, as `ibdoctor discover --format json` writes)", probe.Schema, fabric.SchemaV1)
}
