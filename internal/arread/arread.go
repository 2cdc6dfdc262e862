// Package arread reads NVIDIA's AdaptiveRoutingInfo (vendor SMP 0xFF20)
// from every NVIDIA switch of a discovered fabric, for routing.adaptive
// and the note on routing imbalance findings. It only sends Gets, through
// the request engine and its read-only guard.
package arread

import (
	"context"
	"errors"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/fanout"
	"github.com/ibdoctor/ibdoctor/internal/firmread"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Getter is what Read needs from the request engine (*transport.Engine
// implements it).
type Getter interface {
	GetSMP(ctx context.Context, path mad.Path, a mad.Attribute, mod uint32) (*mad.SMP, error)
}

// workers bounds the switches read at once.
const workers = 32

// Read asks every NVIDIA switch of f (firmread.Asked) for its
// AdaptiveRoutingInfo by directed route, with modifier 0 (the current
// settings). A switch that answers with an error status has no adaptive
// routing (GroupCap 0); one that does not answer is unread.
func Read(ctx context.Context, g Getter, f *fabric.Fabric) *checks.ARView {
	v := &checks.ARView{Info: map[*fabric.Node]mad.ARInfo{}, Unread: map[*fabric.Node]string{}}
	var sws []*fabric.Node
	for _, n := range f.Nodes {
		if n.Type == mad.NodeSwitch && firmread.Asked(n) {
			sws = append(sws, n)
		}
	}
	fanout.Each(ctx, workers, sws, v.Info, v.Unread, func(n *fabric.Node) (mad.ARInfo, string) {
		var a mad.ARInfo
		if n.Path == nil {
			return a, "no directed route to the switch"
		}
		_, err := g.GetSMP(ctx, n.Path, &a, 0)
		var se *transport.StatusError
		switch {
		case errors.As(err, &se):
			return mad.ARInfo{}, "" // the attribute is not implemented: no adaptive routing
		case err != nil:
			return a, err.Error()
		}
		return a, ""
	})
	return v
}
