// Package smread reads SMInfo from every port of a discovered fabric that
// advertises a subnet manager (PortInfo CapabilityMask IsSM), for the
// sm.* checks. It only sends Gets, through the request engine and its
// read-only guard.
package smread

import (
	"context"
	"fmt"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Getter is what Read needs from the request engine (*transport.Engine
// implements it).
type Getter interface {
	GetSMP(ctx context.Context, path mad.Path, a mad.Attribute, mod uint32) (*mad.SMP, error)
}

// SMPorts returns the ports of f that advertise an SM: a CA's port with
// IsSM, a switch's port 0 with IsSM.
func SMPorts(f *fabric.Fabric) []*fabric.Port {
	var out []*fabric.Port
	for _, n := range f.Nodes {
		for i, p := range n.Ports {
			if p == nil || p.CapMask&mad.CapIsSM == 0 {
				continue
			}
			if n.Type == mad.NodeSwitch && i != 0 {
				continue
			}
			out = append(out, p)
		}
	}
	return out
}

// pathTo returns a directed route that arrives at port p itself (an SM
// answers for the port an SMP comes in by), or false when discovery left
// none. localPort is the number of the port ibdoctor sends from.
func pathTo(p *fabric.Port, local *fabric.Node, localPort uint8) (mad.Path, bool) {
	if path, ok := fabric.DRPathTo(p, local, localPort); ok {
		return path, true
	}
	if n := p.Node; len(n.Path) > 0 {
		return n.Path, true
	}
	return nil, false
}

// Read asks every SM port of f for its SMInfo. A port that does not
// answer is a reading with Reason set (unreached: it says nothing about
// whether an SM runs there). localPort is the port number ibdoctor sends
// from (f.Nodes[0] is the local node in a discovered fabric).
func Read(ctx context.Context, g Getter, f *fabric.Fabric, localPort uint8) []checks.SMReading {
	var local *fabric.Node
	if len(f.Nodes) > 0 && f.Nodes[0].Path != nil && len(f.Nodes[0].Path) == 0 {
		local = f.Nodes[0]
	}
	var out []checks.SMReading
	for _, p := range SMPorts(f) {
		r := checks.SMReading{Port: p}
		path, ok := pathTo(p, local, localPort)
		if !ok {
			r.Reason = "no directed route to the port"
			out = append(out, r)
			continue
		}
		var si mad.SMInfo
		if _, err := g.GetSMP(ctx, path, &si, 0); err != nil {
			r.Reason = err.Error()
		} else {
			r.Info, r.At = si, time.Now()
		}
		out = append(out, r)
		if ctx.Err() != nil {
			break
		}
	}
	return out
}

// ReadAgain reads SMInfo once more from every reading that answered the
// first time and records it as the reading's Again; one that fails now
// keeps its first answer and notes why in AgainReason.
func ReadAgain(ctx context.Context, g Getter, f *fabric.Fabric, localPort uint8, rs []checks.SMReading) {
	var local *fabric.Node
	if len(f.Nodes) > 0 && f.Nodes[0].Path != nil && len(f.Nodes[0].Path) == 0 {
		local = f.Nodes[0]
	}
	for i := range rs {
		r := &rs[i]
		if r.Reason != "" {
			continue
		}
		path, _ := pathTo(r.Port, local, localPort)
		var si mad.SMInfo
		if _, err := g.GetSMP(ctx, path, &si, 0); err != nil {
			r.AgainReason = fmt.Sprintf("second read: %v", err)
			continue
		}
		r.Again, r.Between = &si, time.Since(r.At)
	}
}
