package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
)

// loadFabricFile reads a saved fabric in any format fabric.ReadFile
// recognises, and prints its warning about skipped tool messages, if
// any, to stderr.
func loadFabricFile(ctx context.Context, path string, stderr io.Writer) (*fabric.Fabric, error) {
	f, info, err := fabric.ReadFile(ctx, path)
	if err != nil {
		return nil, err
	}
	for _, w := range info.Warnings() {
		if stderr != nil {
			fmt.Fprintf(stderr, "warning: %s\n", w)
		}
	}
	return f, nil
}
