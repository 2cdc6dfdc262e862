package cli

import (
	"context"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
)

// loadFabricFile reads a saved fabric in any format fabric.ReadFile
// recognises, and gives its warnings (skipped tool messages) to warn (nil:
// dropped).
func loadFabricFile(ctx context.Context, path string, warn func(string)) (*fabric.Fabric, error) {
	f, info, err := fabric.ReadFile(ctx, path)
	if err != nil {
		return nil, err
	}
	for _, w := range info.Warnings() {
		if warn != nil {
			warn(w)
		}
	}
	return f, nil
}
