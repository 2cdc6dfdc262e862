package transport

import (
	"context"
	"errors"
	"fmt"

	"github.com/ibdoctor/ibdoctor/internal/words"
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

// TwoWaysError is a read that got no answer the way it was first sent
// (by LID, or the node's directed route, after every attempt) nor by the
// directed route tried around that way (sent once, Once). Both are said:
// the second alone, "after 1 attempt", read as if --retries had been
// ignored (review V10). First and Second are each a *TimeoutError or a
// *SilentError; First may be of another read of the same node (the one
// that sent the node the other way), and this read is then said not sent
// that way.
type TwoWaysError struct {
	First, Second error
}

func (e *TwoWaysError) Error() string {
	// Worded as discovery words a timeout ("no response after 4
	// attempts"): the entry it is listed under names the read.
	r := unansweredRead(e.Second)
	return fmt.Sprintf("no response %s, nor %s", r.way(e.First), r.way(e.Second))
}

// read is one SMP read, as an unanswered error names it.
type read struct {
	Class   mad.Class
	Attr    mad.AttrID
	AttrMod uint32
}

// unansweredRead is the read err is the failure of.
func unansweredRead(err error) read {
	var te *TimeoutError
	var se *SilentError
	switch {
	case errors.As(err, &se):
		return read{se.Class, se.Attr, se.AttrMod}
	case errors.As(err, &te):
		return read{te.Class, te.Attr, te.AttrMod}
	}
	return read{}
}

// way says how r fared one way, err being that way's failure: "by LID 3
// after 4 attempts in 4s", or, when r itself was not sent that way, "by
// LID 3 (not sent: LinearForwardingTable went unanswered there after 4
// attempts)".
func (r read) way(err error) string {
	var (
		te   *TimeoutError
		se   *SilentError
		addr Addr
		path mad.Path
	)
	switch {
	case errors.As(err, &se):
		te, addr, path = se.Earlier, se.Addr, se.Path
	case errors.As(err, &te):
		addr, path = te.Addr, te.Path
	default:
		return fmt.Sprintf("(%v)", err)
	}
	by := "by " + addr.String()
	switch {
	case path != nil:
		by = "by directed route (path " + path.String() + ")"
	case addr.GRH == nil && addr.QP == QP0:
		by = fmt.Sprintf("by LID %d", addr.DLID)
	}
	if se == nil && te.Attr == r.Attr && te.AttrMod == r.AttrMod {
		return fmt.Sprintf("%s after %s in %v", by, words.Count(te.Attempts, "attempt"), words.Duration(te.Waited))
	}
	return fmt.Sprintf("%s (not sent: %s went unanswered there after %s)", by, mad.AttrName(te.Class, te.Attr), words.Count(te.Attempts, "attempt"))
}

// Unwrap makes errors.Is(err, ErrTimeout) and Unanswered hold.
func (e *TwoWaysError) Unwrap() []error { return []error{e.First, e.Second} }
