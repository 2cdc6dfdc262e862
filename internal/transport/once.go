package transport

import (
	"context"
	"errors"

	"github.com/ibdoctor/ibdoctor/mad"
)

// Unanswered reports whether err is a request that got no answer: every
// attempt timed out (*TimeoutError), or it was not sent because its
// destination left an earlier one unanswered (*SilentError). A status
// error, a response that does not decode, or a request never sent for
// another reason is not: the node (or the sender) said something.
func Unanswered(err error) bool {
	var te *TimeoutError
	var se *SilentError
	return errors.As(err, &te) || errors.As(err, &se)
}

// Once is an Engine whose SMP reads are each sent once, whatever
// Options.Retries says: a second look by another way at a node that
// already left a request unanswered after every attempt. Its retries
// were spent on the first way; a second full round would double the
// wait for a node that is silent both ways (a dead agent).
type Once struct{ e *Engine }

// Once returns e sending each SMP read once.
func (e *Engine) Once() Once { return Once{e} }

// Options are the Engine's, with the retries Once leaves out.
func (o Once) Options() Options {
	opts := o.e.opts
	// Negative is "none" in Options (0 is the default, 3): an Engine or
	// a deadline made from these must not retry either (review V7).
	opts.Retries = -1
	return opts
}

// Local is the Engine's local port.
func (o Once) Local() LocalPort { return o.e.Local() }

// GetSMP is Engine.GetSMP sent once.
func (o Once) GetSMP(ctx context.Context, path mad.Path, a mad.Attribute, mod uint32) (*mad.SMP, error) {
	req, err := mad.NewDRGet(path, a.AttributeID(), mod)
	if err != nil {
		return nil, err
	}
	r, err := o.e.do(ctx, DirectedRoute(), req.Marshal(), 1)
	return o.e.checkSMP(DirectedRoute(), req, a, r, err)
}

// GetSMPByLID is Engine.GetSMPByLID sent once.
func (o Once) GetSMPByLID(ctx context.Context, lid uint16, a mad.Attribute, mod uint32) (*mad.SMP, error) {
	req := mad.NewLIDGet(a.AttributeID(), mod)
	r, err := o.e.do(ctx, SMPAt(lid), req.Marshal(), 1)
	return o.e.checkSMP(SMPAt(lid), req, a, r, err)
}

// GoSMP is Engine.GoSMP sent once.
func (o Once) GoSMP(ctx context.Context, path mad.Path, a mad.Attribute, mod uint32, done func(*mad.SMP, error)) error {
	var req mad.SMP
	if err := req.InitDRGet(path, a.AttributeID(), mod); err != nil {
		return err
	}
	c := o.e.newSMPCall(a, done)
	c.r.tries = 1
	return c.start(ctx, DirectedRoute(), &req)
}

// GoSMPByLID is Engine.GoSMPByLID sent once.
func (o Once) GoSMPByLID(ctx context.Context, lid uint16, a mad.Attribute, mod uint32, done func(*mad.SMP, error)) error {
	c := o.e.newSMPCall(a, done)
	c.r.tries = 1
	var req mad.SMP
	req.InitLIDGet(a.AttributeID(), mod)
	return c.start(ctx, SMPAt(lid), &req)
}
