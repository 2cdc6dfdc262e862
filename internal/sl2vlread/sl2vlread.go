// Package sl2vlread reads the SLtoVLMappingTables routing.credit-loop
// needs: only those of the port pairs on the dependency cycles the
// routes make (checks.CreditCycles.SL2VLPairs), so a fabric without a
// cycle costs no MAD. It only sends Gets (SMP SLtoVLMappingTable),
// through the request engine and its read-only guard.
package sl2vlread

import (
	"context"
	"sync"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Getter is what Read needs from the request engine (*transport.Engine
// implements it).
type Getter interface {
	GetSMP(ctx context.Context, path mad.Path, a mad.Attribute, mod uint32) (*mad.SMP, error)
}

// workers bounds the tables read at once; the engine's own window and
// per-destination limit still apply.
const workers = 16

// Read reads the table of every pair by directed route to its switch. A
// pair that does not answer is in Unread with the reason: the check then
// judges its cycle on VL0 and says the table was not read.
func Read(ctx context.Context, g Getter, pairs []checks.SL2VLPair) *checks.SL2VLView {
	v := &checks.SL2VLView{Tables: map[checks.SL2VLPair]mad.SLtoVLTable{}, Unread: map[checks.SL2VLPair]string{}}
	var mu sync.Mutex
	next := make(chan checks.SL2VLPair)
	var wg sync.WaitGroup
	for range min(workers, len(pairs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for pr := range next {
				var t mad.SLtoVLTable
				why := ""
				if pr.Switch.Path == nil {
					why = "no directed route to the switch"
				} else if _, err := g.GetSMP(ctx, pr.Switch.Path, &t, mad.SLtoVLMod(pr.In, pr.Out)); err != nil {
					why = err.Error()
				}
				mu.Lock()
				if why != "" {
					v.Unread[pr] = why
				} else {
					v.Tables[pr] = t
				}
				mu.Unlock()
			}
		}()
	}
	for _, pr := range pairs {
		if ctx.Err() != nil {
			mu.Lock()
			v.Unread[pr] = ctx.Err().Error()
			mu.Unlock()
			continue
		}
		next <- pr
	}
	close(next)
	wg.Wait()
	return v
}
