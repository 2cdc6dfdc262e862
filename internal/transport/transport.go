// Package transport moves MADs between ibdoctor and a fabric. A Conn is
// one local port's raw MAD endpoint (the kernel umad device, the ibsim
// simulator, or the in-process simulator); the Engine on top of it owns
// transaction IDs, windows, timeouts and retries. Everything above this
// package talks to an Engine and never knows which Conn is underneath.
package transport

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/words"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Well-known QPs and Q_Key.
const (
	QP0     = 0          // subnet management (SMPs)
	QP1     = 1          // general services (PerfMgt, SA)
	GSIQKey = 0x80010000 // Q_Key of QP1
)

// Addr says where a MAD goes (on Send) or where it came from (on Recv).
//
// A directed-route SMP (class 0x81) carries its path inside the MAD; its
// Addr has DLID = mad.PermissiveLID and QP 0. A LID-routed MAD names the
// destination port's LID, QP and Q_Key; on RoCE ports (no LIDs) a GRH
// with the remote GID is needed instead.
type Addr struct {
	DLID      uint16 // destination LID; mad.PermissiveLID for directed route
	QP        uint32 // destination QP: 0 for SMPs, 1 for PerfMgt
	QKey      uint32 // GSIQKey for QP1, 0 for QP0
	SL        uint8  // service level
	PKeyIndex uint16 // index into the local port's P_Key table
	GRH       *GRH   // nil: no global route header
}

// GRH is the global route header part of an address.
type GRH struct {
	DGID         netip.Addr // remote GID as an IPv6 address
	SGIDIndex    uint8      // local GID table index
	HopLimit     uint8
	TrafficClass uint8
	FlowLabel    uint32
}

// DirectedRoute returns the address of a directed-route SMP.
func DirectedRoute() Addr { return Addr{DLID: mad.PermissiveLID, QP: QP0} }

// SMPAt returns the address of a LID-routed SMP to lid.
func SMPAt(lid uint16) Addr { return Addr{DLID: lid, QP: QP0} }

// PerfAt returns the address of a PerfMgt GMP to lid on the given SL and
// P_Key index.
func PerfAt(lid uint16, sl uint8, pkeyIndex uint16) Addr {
	return Addr{DLID: lid, QP: QP1, QKey: GSIQKey, SL: sl, PKeyIndex: pkeyIndex}
}

func (a Addr) String() string {
	if a.GRH != nil {
		return fmt.Sprintf("gid %s qp %d", a.GRH.DGID, a.QP)
	}
	if a.DLID == mad.PermissiveLID && a.QP == QP0 {
		return "directed route"
	}
	return fmt.Sprintf("lid %d qp %d", a.DLID, a.QP)
}

// Packet is one MAD crossing a Conn.
type Packet struct {
	// Addr is the destination on Send and the source on Recv.
	Addr Addr
	// MAD is the 256-byte MAD. On a Recv with Status ETimedOut it may be
	// only the 24-byte header of the request that was not answered.
	MAD []byte
	// Status is 0 for a delivered MAD, or StatusTimedOut when the lower
	// layer reports that the request identified by MAD's TID was not
	// answered (the kernel's and ibsim's status 110).
	Status int
	// Timeout is a hint on Send for lower layers that track responses
	// themselves (umad): how long to wait before reporting StatusTimedOut.
	// Zero: the layer does not track it and the Engine's own timer decides.
	Timeout time.Duration
	// Owner is set by a Recycler Conn on a packet it made from a pool of
	// its own, for its Recycle to know the packet for one of them (never
	// by its shape); the Engine and other Conns leave it nil.
	Owner any
}

// StatusTimedOut is the Packet.Status of an unanswered request (ETIMEDOUT).
const StatusTimedOut = 110

// Conn is one local port's MAD endpoint.
//
// Send and Recv may be called concurrently from different goroutines; Recv
// is called by a single reader. Recv blocks until a packet arrives, ctx is
// done (ctx.Err()), or the Conn is closed (ErrClosed). Implementations
// never deliver a packet to more than one Recv.
type Conn interface {
	Send(ctx context.Context, p *Packet) error
	Recv(ctx context.Context) (*Packet, error)
	// Local describes the port this Conn sends from.
	Local() LocalPort
	Close() error
}

// Deliverer is a Conn whose own reader goroutine can hand each packet it
// receives straight to the Engine, sparing the switch to the goroutine
// that calls Recv (on ibsim that switch is a thread wake-up for about
// every answer).
type Deliverer interface {
	// Deliver makes the Conn call f with every packet it receives from
	// now on, one at a time from a single goroutine, instead of queueing
	// it for Recv. f may call Send. f returns true when it kept neither
	// the packet nor its MAD, which the Conn may then reuse. Recv still
	// returns the packets queued before, and the error that ends
	// receiving.
	Deliver(f func(*Packet) bool)
}

// TimeoutNotifier is a Conn that can say it reports every request it
// leaves unanswered with a StatusTimedOut packet Packet.Timeout after it
// was sent, and never one it answered in time: the simulator on the wall
// clock, which decides itself which MADs its fabric loses. When
// NotifiesTimeouts is true the Engine ends an attempt on the Conn's notice
// and its own timer is only a backstop, NoticeGrace later: an answer
// given in time can reach the Engine's reader after Timeout on a loaded
// machine, and the Engine's timer would call a node that answered
// unanswered (could not look where it could).
type TimeoutNotifier interface {
	NotifiesTimeouts() bool
}

// NoticeGrace is how long after Timeout the Engine waits for a
// TimeoutNotifier's notice before it ends the attempt itself.
const NoticeGrace = 10 * time.Second

// Recycler is a Conn that reuses the packets its Recv returned: the
// Engine's reader hands back each one whose packet and MAD it did not
// keep (what a Deliverer's f reports), so a Conn that answers millions of
// MADs in process (the simulator) need not allocate each answer.
type Recycler interface {
	Recycle(*Packet)
}

// LocalPort describes the port a Conn is bound to.
type LocalPort struct {
	Name      string // "mlx5_0/1", "ibsim:sim/h0001", "sim:sample"
	NodeGUID  uint64
	PortGUID  uint64
	PortNum   uint8
	LID       uint16 // 0 when no SM has assigned one
	SMLID     uint16
	LinkLayer string // "InfiniBand" or "Ethernet"
	// NoVendorMADs, when not empty, says why NVIDIA's vendor-specific
	// class (0x0A, GeneralInfo) cannot be asked through this port: ibsim
	// implements no vendor class, or no agent for it was registered.
	// Nodes not asked are not unreached; the firmware check says why.
	NoVendorMADs string
	// NoARInfo, when not empty, says why NVIDIA's AdaptiveRoutingInfo
	// SMP (0xFF20) cannot be read through this port: ibsim does not
	// implement it, a fabric file recorded none.
	NoARInfo string
}

// Errors.
var (
	// ErrClosed is returned by a Conn or Engine used after Close.
	ErrClosed = errors.New("transport: closed")
	// ErrTimeout matches (errors.Is) every request that got no answer
	// after all its attempts.
	ErrTimeout = errors.New("transport: no response")
	// ErrReadOnly is returned for a Set when writes were not enabled.
	ErrReadOnly = errors.New("transport: refusing to send a Set: ibdoctor is read-only unless writes are enabled explicitly (e.g. counters --reset)")
)

// TimeoutError is the error of a request that was never answered.
// errors.Is(err, ErrTimeout) is true for it.
type TimeoutError struct {
	Addr     Addr
	Class    mad.Class
	Attr     mad.AttrID
	AttrMod  uint32
	Path     mad.Path // directed route, if any
	Attempts int
	Waited   time.Duration
}

func (e *TimeoutError) Error() string {
	where := e.Addr.String()
	if e.Path != nil {
		where = "path " + e.Path.String()
	}
	return fmt.Sprintf("transport: no response to %s %s (%s) after %s in %v",
		e.Class, mad.AttrName(e.Class, e.Attr), where, words.Count(e.Attempts, "attempt"), words.Duration(e.Waited))
}

// Is makes errors.Is(err, ErrTimeout) hold.
func (e *TimeoutError) Is(target error) bool { return target == ErrTimeout }

// SilentError is a request the Engine did not send because an earlier
// request to the same destination went unanswered after every attempt
// (Engine.SkipSilent): what it asks for is not read, as if it had timed
// out, without the wait.
type SilentError struct {
	Addr    Addr
	Class   mad.Class
	Attr    mad.AttrID
	AttrMod uint32
	Path    mad.Path // directed route, if any
	Earlier *TimeoutError
}

func (e *SilentError) Error() string {
	where := e.Addr.String()
	if e.Path != nil {
		where = "path " + e.Path.String()
	}
	return fmt.Sprintf("transport: %s %s (%s) not sent: %s went unanswered there after %s",
		e.Class, mad.AttrName(e.Class, e.Attr), where, mad.AttrName(e.Earlier.Class, e.Earlier.Attr), words.Count(e.Earlier.Attempts, "attempt"))
}

// StatusError is a response whose MAD status reports an error.
type StatusError struct {
	Class  mad.Class
	Attr   mad.AttrID
	Status mad.Status
	Addr   Addr
	Path   mad.Path
}

func (e *StatusError) Error() string {
	where := e.Addr.String()
	if e.Path != nil {
		where = "path " + e.Path.String()
	}
	return fmt.Sprintf("transport: %s %s (%s) answered with status %s", e.Class, mad.AttrName(e.Class, e.Attr), where, e.Status)
}
