package snapshot

import (
	"bufio"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/outfile"
)

// FabricAhead is a snapshot's fabric file written before Save, while the
// sweep's checks still judge the fabric (the file does not depend on
// their findings): staged under a temporary name in the state dir,
// renamed by Save with the rest of the state, removed by Abort. Until
// Save publishes it no reader sees it, so a sweep that fails or is
// interrupted leaves the previous state as it was.
type FabricAhead struct {
	dir, name string
	omitLFT   bool
	cancel    context.CancelFunc
	done      chan struct{}
	staged    *outfile.Staged
	err       error
}

// WriteFabricAhead starts writing the fabric file of the sweep taken at
// taken into dir, f as as saves it (nil: as it is), in a goroutine that
// only reads f, so the checks may read it meanwhile; f must not change
// until Wait returns. ctx ending stops the write and leaves no file. The
// tables go into the file only when gate.idx cannot lay f out (Save's
// rule; counters it cannot hold make Save write the file again).
func WriteFabricAhead(ctx context.Context, dir string, f *fabric.Fabric, taken time.Time, as *fabric.SavedAs) *FabricAhead {
	a := &FabricAhead{dir: dir, name: fabricFileName(taken), done: make(chan struct{})}
	a.omitLFT = indexable(f) == nil
	ctx, a.cancel = context.WithCancel(ctx)
	go func() {
		defer close(a.done)
		defer a.cancel()
		a.staged, a.err = outfile.StageHere(filepath.Join(dir, a.name), func(w io.Writer) error {
			return writeFabricGz(ctxWriter{ctx, w}, f, fabric.MarshalOptions{OmitLFT: a.omitLFT, As: as})
		})
	}()
	return a
}

// Wait waits for the write and returns its error.
func (a *FabricAhead) Wait() error {
	<-a.done
	if a.err != nil {
		return fmt.Errorf("snapshot: %w", a.err)
	}
	return nil
}

// Abort stops the write if it still runs (a sweep that failed does not
// wait for a file it throws away) and removes the staged file unless Save
// published it. A nil a does nothing.
func (a *FabricAhead) Abort() {
	if a == nil {
		return
	}
	a.cancel()
	<-a.done
	a.staged.Abort()
}

// ctxWriter fails its writes once ctx is done.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// fabricFileName is the name of the fabric file of the sweep taken at
// taken.
func fabricFileName(taken time.Time) string {
	return fmt.Sprintf("fabric-%d.json.gz", taken.UnixNano())
}

// writeFabricGz writes f's JSON, gzip-compressed, to w. The JSON writer
// writes a comma or a bracket at a time: buffered before gzip, whose
// every Write has a cost of its own (a quarter of the file's CPU at 49k
// nodes, issue 13). The bytes are the same either way.
func writeFabricGz(w io.Writer, f *fabric.Fabric, opt fabric.MarshalOptions) error {
	z, err := gzip.NewWriterLevel(w, gzip.DefaultCompression)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(z, 64<<10)
	if err := fabric.WriteJSON(bw, f, opt); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return z.Close()
}
