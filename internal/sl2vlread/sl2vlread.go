// Package sl2vlread reads the SLtoVLMappingTables routing.credit-loop
// needs: only those of the port pairs on the dependency cycles the
// routes make (checks.CreditCycles.SL2VLPairs), so a fabric without a
// cycle costs no MAD. It only sends Gets (SMP SLtoVLMappingTable),
// through the request engine and its read-only guard.
package sl2vlread

import (
	"context"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fanout"
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
	fanout.Each(ctx, workers, pairs, v.Tables, v.Unread, func(pr checks.SL2VLPair) (mad.SLtoVLTable, string) {
		var t mad.SLtoVLTable
		if pr.Switch.Path == nil {
			return t, "no directed route to the switch"
		}
		if _, err := g.GetSMP(ctx, pr.Switch.Path, &t, mad.SLtoVLMod(pr.In, pr.Out)); err != nil {
			return t, err.Error()
		}
		return t, ""
	})
	return v
}
