package transport

import (
	"context"
	"fmt"

	"github.com/ibdoctor/ibdoctor/mad"
)

// GetSMP reads attribute a (modifier mod) from the node at the end of the
// directed route path and decodes the response into a. An empty path
// addresses the local node. From a CA, path[0] must be the local port
// number (the kernel refuses anything else).
func (e *Engine) GetSMP(ctx context.Context, path mad.Path, a mad.Attribute, mod uint32) (*mad.SMP, error) {
	req, err := mad.NewDRGet(path, a.AttributeID(), mod)
	if err != nil {
		return nil, err
	}
	return e.smp(ctx, DirectedRoute(), req, a)
}

// SetSMP writes a (modifier mod) to the node at the end of path and
// decodes the response into a. It needs Options.AllowWrites.
func (e *Engine) SetSMP(ctx context.Context, path mad.Path, a mad.Attribute, mod uint32) (*mad.SMP, error) {
	req, err := mad.NewDRSet(path, a, mod)
	if err != nil {
		return nil, err
	}
	return e.smp(ctx, DirectedRoute(), req, a)
}

// GetSMPByLID reads attribute a (modifier mod) with a LID-routed SMP to
// lid and decodes the response into a.
func (e *Engine) GetSMPByLID(ctx context.Context, lid uint16, a mad.Attribute, mod uint32) (*mad.SMP, error) {
	return e.smp(ctx, SMPAt(lid), mad.NewLIDGet(a.AttributeID(), mod), a)
}

// GoSMPByLID is GetSMPByLID without waiting, as GoSMP is GetSMP.
func (e *Engine) GoSMPByLID(ctx context.Context, lid uint16, a mad.Attribute, mod uint32, done func(*mad.SMP, error)) error {
	c := e.newSMPCall(a, done)
	var req mad.SMP
	req.InitLIDGet(a.AttributeID(), mod)
	return c.start(ctx, SMPAt(lid), &req)
}

// GoSMP is GetSMP without waiting: it starts the read and returns. done
// is called once, from an Engine goroutine, with the response (nil when
// none arrived) and the error GetSMP would have returned; a is decoded
// before done is called. When GoSMP returns an error (the request was
// refused up front) done is never called. The *mad.SMP given to done is
// valid only until done returns: the read's memory is then reused for
// another. See Engine.Go.
func (e *Engine) GoSMP(ctx context.Context, path mad.Path, a mad.Attribute, mod uint32, done func(*mad.SMP, error)) error {
	var req mad.SMP
	if err := req.InitDRGet(path, a.AttributeID(), mod); err != nil {
		return err
	}
	c := e.newSMPCall(a, done)
	return c.start(ctx, DirectedRoute(), &req)
}

// smpCall is one GoSMP or GoSMPByLID read in a single allocation: the
// Engine's request, the MAD as built (the first attempt is sent from it),
// the Response and the decoded answer. A table read is millions of these;
// separately they were six allocations and 1.4 KB a read. Once nothing
// touches it any more (request.refs) it goes back to the Engine's pool,
// so a table read allocates about as many as it keeps in flight.
type smpCall struct {
	r    request
	e    *Engine
	buf  [mad.Size]byte
	resp Response
	ans  mad.SMP
	a    mad.Attribute
	done func(*mad.SMP, error)
}

// newSMPCall takes a read from the pool, or makes one.
func (e *Engine) newSMPCall(a mad.Attribute, done func(*mad.SMP, error)) *smpCall {
	c, _ := e.smpCalls.Get().(*smpCall)
	if c == nil {
		c = new(smpCall)
	} else {
		*c = smpCall{}
	}
	c.e, c.a, c.done = e, a, done
	return c
}

func (c *smpCall) start(ctx context.Context, addr Addr, req *mad.SMP) error {
	req.MarshalTo(c.buf[:])
	c.r.c = c
	c.r.pooled = true
	c.r.refs.Store(1) // its completion's
	return c.e.start(&c.r, ctx, addr, c.buf[:], ctx.Done() != nil, true)
}

func (c *smpCall) response() *Response { return &c.resp }

// complete checks the answer against the request as built (decoded again
// from buf, which the Engine only gave a TID) and decodes it into c.a.
func (c *smpCall) complete(r *Response, err error) {
	var req mad.SMP
	if uerr := req.Unmarshal(c.buf[:]); uerr != nil {
		c.done(nil, fmt.Errorf("transport: request no longer decodes: %w", uerr)) // cannot happen: built by MarshalTo
		return
	}
	ans, err := c.e.checkSMPInto(c.r.addr, &req, c.a, r, err, &c.ans)
	c.resp = Response{} // its MAD is the Conn's to reuse once this returns (see dispatch)
	c.done(ans, err)
}

func (e *Engine) smp(ctx context.Context, addr Addr, req *mad.SMP, a mad.Attribute) (*mad.SMP, error) {
	r, err := e.Do(ctx, addr, req.Marshal())
	return e.checkSMP(addr, req, a, r, err)
}

// checkSMP checks that r answers req and decodes it into a.
func (e *Engine) checkSMP(addr Addr, req *mad.SMP, a mad.Attribute, r *Response, err error) (*mad.SMP, error) {
	return e.checkSMPInto(addr, req, a, r, err, nil)
}

// checkSMPInto is checkSMP decoding the response into resp (nil: a new
// SMP).
func (e *Engine) checkSMPInto(addr Addr, req *mad.SMP, a mad.Attribute, r *Response, err error, resp *mad.SMP) (*mad.SMP, error) {
	if r == nil {
		return nil, err
	}
	if resp == nil {
		resp = new(mad.SMP)
	}
	if derr := resp.Unmarshal(r.MAD); derr != nil {
		return nil, e.badResponse(addr, req.Path(), req.Header, derr)
	}
	req.TID = resp.TID // the Engine chose the TID
	want := *req
	if want.Method == mad.MethodSet {
		// The answer to a Set is a GetResp (IBA 13.4.5); ValidateResponse
		// expects the request's own method with the response bit.
		want.Method = mad.MethodGet
	}
	if verr := mad.ValidateResponse(&want, resp); verr != nil {
		return nil, e.badResponse(addr, req.Path(), req.Header, verr)
	}
	if err != nil { // a status error: nothing to decode
		return resp, err
	}
	if derr := resp.Decode(a); derr != nil {
		return resp, e.badResponse(addr, req.Path(), req.Header, derr)
	}
	return resp, nil
}

// GetPerf reads PerfMgt attribute a (modifier mod) from addr (see PerfAt)
// and decodes the response into a. a's encoding travels in the request,
// so set its selectors (PortSelect) before the call.
func (e *Engine) GetPerf(ctx context.Context, addr Addr, a mad.Attribute, mod uint32) (*mad.GMP, error) {
	req, err := mad.NewPerfGet(a.AttributeID(), mod, a)
	if err != nil {
		return nil, err
	}
	return e.perf(ctx, addr, req, a)
}

// SetPerf writes PerfMgt attribute a (e.g. PortCounters with a
// CounterSelect mask, which clears counters) and decodes the response into
// a. It needs Options.AllowWrites.
func (e *Engine) SetPerf(ctx context.Context, addr Addr, a mad.Attribute, mod uint32) (*mad.GMP, error) {
	req, err := mad.NewPerfSet(a, mod)
	if err != nil {
		return nil, err
	}
	return e.perf(ctx, addr, req, a)
}

// GoPerf is GetPerf without waiting: done is called once, from an Engine
// goroutine, with what GetPerf would have returned (a decoded before the
// call); when GoPerf returns an error, done is never called. See Engine.Go.
func (e *Engine) GoPerf(ctx context.Context, addr Addr, a mad.Attribute, mod uint32, done func(*mad.GMP, error)) error {
	req, err := mad.NewPerfGet(a.AttributeID(), mod, a)
	if err != nil {
		return err
	}
	return e.goOwned(ctx, addr, req.Marshal(), func(r *Response, err error) {
		done(e.checkPerf(addr, req, a, r, err))
	})
}

func (e *Engine) perf(ctx context.Context, addr Addr, req *mad.GMP, a mad.Attribute) (*mad.GMP, error) {
	r, err := e.Do(ctx, addr, req.Marshal())
	return e.checkPerf(addr, req, a, r, err)
}

// checkPerf checks that r answers req and decodes it into a.
func (e *Engine) checkPerf(addr Addr, req *mad.GMP, a mad.Attribute, r *Response, err error) (*mad.GMP, error) {
	if r == nil {
		return nil, err
	}
	resp, derr := mad.UnmarshalGMP(r.MAD)
	if derr != nil {
		return nil, e.badResponse(addr, nil, req.Header, derr)
	}
	req.TID = resp.TID
	if verr := validateGMP(req, resp); verr != nil {
		return nil, e.badResponse(addr, nil, req.Header, verr)
	}
	if err != nil {
		return resp, err
	}
	if derr := resp.Decode(a); derr != nil {
		return resp, e.badResponse(addr, nil, req.Header, derr)
	}
	return resp, nil
}

// GetVendor reads attribute a of Mellanox's vendor class (0x0A, e.g.
// GeneralInfo) from the port at lid, over QP1 as PerfMgt is read. Devices
// of other vendors do not answer it: a timeout says nothing about the node.
func (e *Engine) GetVendor(ctx context.Context, lid uint16, a mad.Attribute, mod uint32) (*mad.GMP, error) {
	return e.perf(ctx, PerfAt(lid, 0, 0), mad.NewVendorGet(a.AttributeID(), mod), a)
}

// validateGMP is ValidateResponse for PerfMgt and the vendor class.
func validateGMP(req, resp *mad.GMP) error {
	switch {
	case resp.Class != req.Class:
		return &mad.FieldError{Field: "GMP.MgmtClass", Msg: fmt.Sprintf("%v does not match request %v", resp.Class, req.Class)}
	case !resp.Method.IsResponse():
		return &mad.FieldError{Field: "GMP.Method", Msg: fmt.Sprintf("%v is not a response", resp.Method)}
	case resp.Method != mad.MethodGetResp: // the answer to Get and to Set (IBA 13.4.5)
		return &mad.FieldError{Field: "GMP.Method", Msg: fmt.Sprintf("%v does not answer %v", resp.Method, req.Method)}
	case resp.AttrID != req.AttrID:
		return &mad.FieldError{Field: "GMP.AttributeID", Msg: fmt.Sprintf("%s does not match request %s",
			mad.AttrName(resp.Class, resp.AttrID), mad.AttrName(req.Class, req.AttrID))}
	case resp.AttrMod != req.AttrMod:
		return &mad.FieldError{Field: "GMP.AttributeModifier", Msg: fmt.Sprintf("%d does not match request %d", resp.AttrMod, req.AttrMod)}
	case mad.TIDLow(resp.TID) != mad.TIDLow(req.TID):
		return &mad.FieldError{Field: "GMP.TransactionID", Msg: fmt.Sprintf("0x%016x does not match request 0x%016x", resp.TID, req.TID)}
	}
	return nil
}

// badResponse counts and wraps a response that does not answer the
// request or cannot be decoded.
func (e *Engine) badResponse(addr Addr, path mad.Path, h mad.Header, err error) error {
	e.count(func(s *counters) { s.errors++ })
	w := addr.String()
	if h.Class == mad.ClassSubnDR {
		w = "path " + path.String()
	}
	return fmt.Errorf("transport: bad response to %s %s (%s): %w", h.Class, mad.AttrName(h.Class, h.AttrID), w, err)
}
