package route

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Block names one LinearForwardingTable block (64 LIDs from Index×64) of
// one switch.
type Block struct {
	Switch *fabric.Node
	Index  int
}

// ReadBlocks re-reads the given LFT blocks and writes them into their
// switches' Switch.LFT (grown to hold them; a switch without a table gets
// one holding only these blocks, its other entries NoRoute). A gate uses
// it to follow the live routes of a job's LIDs without reading whole
// tables. Switches are addressed by LID when byLID (the reader is not where
// the Paths were discovered from), else by Path. At most parallel reads
// are in flight (0: 64). It returns each failed block as a *SwitchError,
// joined; those blocks keep what the table held.
func ReadBlocks(ctx context.Context, g SMPGetter, blocks []Block, byLID bool, parallel int) error {
	if parallel <= 0 {
		parallel = 64
	}
	gg, ok := g.(goGetter)
	if !ok {
		gg = syncGo{g}
	}
	var (
		in   fabric.BlockInterner
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, parallel)
	)
	for _, b := range blocks {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		blk := new(mad.LFTBlock)
		done := func(_ *mad.SMP, err error) {
			defer func() { <-sem; wg.Done() }()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, &SwitchError{Switch: b.Switch, What: fmt.Sprintf("LinearForwardingTable block %d", b.Index), Err: err})
				return
			}
			storeBlock(b.Switch, b.Index, blk, &in)
		}
		n := b.Switch
		var err error
		switch {
		case n.Type != mad.NodeSwitch:
			err = errors.New("not a switch")
		case !byLID && n.Path != nil:
			err = gg.GoSMP(ctx, n.Path, blk, uint32(b.Index), done)
		case len(n.Ports) > 0 && n.Ports[0] != nil && n.Ports[0].LID != 0:
			err = gg.GoSMPByLID(ctx, n.Ports[0].LID, blk, uint32(b.Index), done)
		default:
			err = errNoAddress
		}
		if err != nil { // refused up front: done will not be called
			done(nil, err)
		}
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.Join(errs...)
}

// storeBlock puts one block into sw's table, growing it as needed.
func storeBlock(sw *fabric.Node, index int, blk *mad.LFTBlock, in *fabric.BlockInterner) {
	if sw.Switch == nil {
		sw.Switch = &fabric.Switch{}
	}
	if sw.Switch.LFT == nil {
		sw.Switch.LFT = fabric.NewLFT(0)
	}
	sw.Switch.LFT.SetBlock(index, &blk.Ports, in)
}
