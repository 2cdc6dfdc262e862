// Package top is the model of `ibdoctor top`, a live view of the fabric's
// ports: it re-reads PerfMgt counters in turns within a MAD budget per
// refresh, keeps each port's previous reading, and turns two readings
// into the port's rates (perf) and its verdict (checks' counter checks:
// top judges nothing itself). Drawing and keys are the command's.
package top

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/discover"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/perf"
	"github.com/ibdoctor/ibdoctor/mad"
)

// MADsPerPort is what one port's reading costs: PortCounters,
// PortCountersExtended (the 64-bit data counters the rates need) and
// PortInfo (its state and rate now). A switch's port-0 PortInfo (the
// capability masks its speeds are decoded with) is read once a run.
const MADsPerPort = 3

// Options configure a Sampler.
type Options struct {
	// Ports are the ports to watch (all with a link, or a --switch or
	// --hosts scope).
	Ports []*fabric.Port
	// Budget is the most MADs one refresh may send; a scope larger than
	// Budget/MADsPerPort ports is read in turns, a slice per refresh, so
	// a 49k-node fabric stays responsive. 0: no limit.
	Budget int
	// Perf are the counter read options (SL, P_Key index, workers).
	Perf perf.Options
	// Expect holds the thresholds the verdicts use.
	Expect checks.Expectations
	// Now is the clock (default time.Now).
	Now func() time.Time
	// PortInfo, when set, re-reads each watched port's PortInfo (by its
	// directed route from discovery) as its counters are read, so its
	// state and rate are the link's now, not discovery's; nil keeps
	// discovery's.
	PortInfo discover.SMPReader
}

// Row is one port in the view. Its flags sit together so it packs
// without padding: top holds a row for every watched port.
type Row struct {
	Port *fabric.Port
	// Node and Num name the port; Peer the far end ("-" when unknown).
	Node string
	Num  int
	Peer string
	// Rate is the link's active rate ("4X NDR").
	Rate string
	// ErrorsPerSecond is the sum of the error counters' increases per
	// second; XmitWait the share of the time the port could not send
	// (-1: PortXmitWait not supported); TxUtil and RxUtil the data rates
	// as a share of the link's rate (-1: unknown).
	ErrorsPerSecond float64
	XmitWait        float64
	TxUtil, RxUtil  float64
	TxBytesPerSec   float64
	RxBytesPerSec   float64
	// ErrorsUnknown, WaitUnknown, TxUnknown and RxUnknown: the increase
	// behind that figure could not be computed (perf.DeltaValue.Unknown,
	// the reason in Unknown); the figure is not 0, it is not known.
	ErrorsUnknown, WaitUnknown, TxUnknown, RxUnknown bool
	// Narrow: the port's last reading came from the 16/32-bit
	// PortCounters, its PortCountersExtended unanswered: read, narrower.
	Narrow bool
	// HasVerdict is false when no check found anything (Verdict below).
	HasVerdict bool
	// Measured is false until the port has been read twice.
	Measured bool
	Unknown  string
	// Undecided names the counter check that could not judge the port
	// (its reason in Unknown) when no check found anything.
	Undecided string
	// Verdict is the worst finding of checks' counter checks on this
	// port over its last interval; Check and Title name that finding.
	Verdict checks.Severity
	Check   string
	Title   string
	// NotRead says why the last refresh that tried this port could not
	// read it ("" when it was read): its figures are then the older
	// reading's, and the view must say so, not show them as current
	// (trial D4: a host behind a disabled port kept its last rates).
	NotRead string
	// Read is when the port was last read.
	Read time.Time
	// prev is the port's last reading, the one the next is compared
	// with: kept in its row, not in a second map keyed by port, so a
	// port is one record (issue 13: top held each port twice).
	prev *perf.PortCounters
}

// Util is the larger of the two directions' utilisation.
func (r *Row) Util() float64 { return max(r.TxUtil, r.RxUtil) }

// Frame is the view after one refresh.
type Frame struct {
	// Rows holds every watched port that has been read twice, and those
	// read once (Measured false).
	Rows []*Row
	// Watched is the number of ports in scope; ReadNow how many this
	// refresh read; PerRefresh how many a refresh reads under the budget
	// (the last slice of a turn may be smaller).
	Watched, ReadNow, PerRefresh int
	// Cycle is how long a full turn over the scope takes in refreshes.
	Cycle int
	// Took is how long the refresh's reads took.
	Took time.Duration
	// Errors are the ports that could not be read this refresh.
	Errors []*perf.PortError
	// Narrow are the PMAs whose PortCountersExtended went unanswered this
	// refresh: their ports were read from PortCounters (Row.Narrow), so
	// they are said, not counted as not read.
	Narrow []*perf.PortError
	// Interval is the mean time between a port's two readings.
	Interval time.Duration
	At       time.Time
}

// Sampler reads the watched ports in turns and keeps their state.
type Sampler struct {
	g    perf.Getter
	f    *fabric.Fabric
	o    Options
	next int
	// rows are the watched ports' rows by key (two nodes sharing a
	// GUID share a row), list the same rows in the order first read.
	rows map[perf.Key]*Row
	list []*Row
	// caps are the switches' port-0 PortInfo (discover.RefreshCaps).
	caps map[*fabric.Node]*mad.PortInfo
}

// NewSampler watches o.Ports of f through g.
func NewSampler(g perf.Getter, f *fabric.Fabric, o Options) *Sampler {
	if o.Now == nil {
		o.Now = time.Now
	}
	o.Perf.Now = o.Now
	s := &Sampler{g: g, f: f, o: o, rows: map[perf.Key]*Row{}, caps: map[*fabric.Node]*mad.PortInfo{}}
	return s
}

// PerRefresh is how many ports one refresh reads.
func (s *Sampler) PerRefresh() int {
	n := len(s.o.Ports)
	if s.o.Budget > 0 {
		n = min(n, max(1, s.o.Budget/MADsPerPort))
	}
	return n
}

// Cycle is how many refreshes one turn over the whole scope takes.
func (s *Sampler) Cycle() int {
	n := s.PerRefresh()
	if n == 0 {
		return 1
	}
	return (len(s.o.Ports) + n - 1) / n
}

// Refresh reads the next slice of the scope and returns the view.
func (s *Sampler) Refresh(ctx context.Context) (*Frame, error) {
	n := s.PerRefresh()
	// The slices are the same every turn (the last one shorter), not
	// wrapped round the scope: a port is then read once a turn, Cycle
	// refreshes apart, never twice one refresh apart.
	batch := s.o.Ports[s.next:min(s.next+n, len(s.o.Ports))]
	if len(s.o.Ports) > 0 {
		s.next += len(batch)
		if s.next >= len(s.o.Ports) {
			s.next = 0
		}
	}
	po := s.o.Perf
	po.Ports = batch
	po.Interval, po.Reset, po.SkipCleanSwitches, po.ErrorsOnly = 0, perf.ResetNone, false, false
	start := s.o.Now()
	// The slice's PortInfo first, so the rates the counters are
	// divided by are the links' now: a port disabled or retrained since
	// discovery kept its old rate (trial D4). By directed route, from
	// the port top discovered from; ctx ends it as it ends the counters.
	var stale map[perf.Key]bool
	if s.o.PortInfo != nil {
		for _, u := range discover.RefreshCaps(ctx, s.o.PortInfo, batch, false, s.o.Perf.Workers, s.caps) {
			if stale == nil {
				stale = map[perf.Key]bool{}
			}
			stale[perf.Key{GUID: u.FromGUID, Port: u.FromPort}] = true
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	sample, err := perf.Read(ctx, s.g, s.f, po)
	if sample == nil {
		return nil, err
	}
	// The PMAs' ClassPortInfo does not change: ask each once.
	if s.o.Perf.Caps == nil {
		s.o.Perf.Caps = map[uint64]*mad.ClassPortInfo{}
	}
	for k, v := range sample.Caps {
		s.o.Perf.Caps[k] = v
	}
	res := perf.Compare(func(k perf.Key) (*perf.PortCounters, bool) {
		if r := s.rows[k]; r != nil && r.prev != nil {
			return r.prev, true
		}
		return nil, false
	}, sample, s.o.Perf.XmitWaitTick)
	fr := &Frame{Watched: len(s.o.Ports), ReadNow: len(batch), PerRefresh: n, Took: s.o.Now().Sub(start),
		Interval: res.Interval(), At: s.o.Now()}
	for _, e := range sample.Errors {
		if e.ReadNarrow > 0 {
			fr.Narrow = append(fr.Narrow, e)
		} else {
			fr.Errors = append(fr.Errors, e)
		}
	}
	if n > 0 {
		fr.Cycle = (len(s.o.Ports) + n - 1) / n
	}
	verdicts := map[perf.Key]checks.Finding{}
	undecided := map[perf.Key]checks.Undecided{}
	if res.Interval() > 0 {
		snap := &checks.Snapshot{Fabric: s.f, Counters: res, Expect: s.o.Expect, Taken: fr.At}
		cr, cerr := checks.Run(snap, "counters")
		if cerr != nil {
			return nil, cerr
		}
		for _, f := range cr.Findings {
			if len(f.Entities) == 0 || f.Entities[0].Role != "end" {
				continue
			}
			e := f.Entities[0]
			k := perf.Key{GUID: e.NodeGUID, Port: uint8(e.Port)}
			if old, ok := verdicts[k]; !ok || f.Severity > old.Severity {
				verdicts[k] = f
			}
		}
		for _, u := range cr.Undecided {
			k := perf.Key{GUID: u.Subject.NodeGUID, Port: uint8(u.Subject.Port)}
			if _, ok := undecided[k]; !ok {
				undecided[k] = u
			}
		}
	}
	for _, pc := range sample.Ports {
		if pc.FromAllPorts {
			continue
		}
		row := s.rows[pc.Key]
		if row == nil {
			row = newRow(s.f, pc)
			s.rows[pc.Key] = row
			s.list = append(s.list, row)
		}
		row.Read = pc.Time()
		row.NotRead = ""
		row.Narrow = pc.ExtUnanswered
		if d, ok := res.Delta(pc.Key); ok {
			row.Measured = true
			row.ErrorsPerSecond = 0
			row.ErrorsUnknown, row.WaitUnknown, row.TxUnknown, row.RxUnknown, row.Unknown = false, false, false, false, ""
			for _, c := range d.Counters {
				if c.Unknown {
					switch {
					case c.Kind == mad.KindError:
						row.ErrorsUnknown = true
					case c.Name == "PortXmitWait":
						row.WaitUnknown = true
					case c.Name == "PortXmitData":
						row.TxUnknown = true
					case c.Name == "PortRcvData":
						row.RxUnknown = true
					default:
						continue
					}
					row.Unknown = c.Why
					continue
				}
				if c.Kind == mad.KindError {
					row.ErrorsPerSecond += c.PerSecond
				}
			}
			row.XmitWait, row.TxUtil, row.RxUtil = d.XmitWaitShare, d.XmitUtilization, d.RcvUtilization
			row.TxBytesPerSec, row.RxBytesPerSec = d.XmitBytesPerSecond, d.RcvBytesPerSecond
			f, ok := verdicts[pc.Key]
			row.HasVerdict, row.Verdict, row.Check, row.Title = ok, f.Severity, f.Check, f.Title
			row.Undecided = ""
			if u, ok := undecided[pc.Key]; ok {
				row.Undecided = u.Check
				if row.Unknown == "" {
					row.Unknown = u.Reason
				}
			}
		}
		row.prev = pc
	}
	if s.o.PortInfo != nil {
		s.newRates(batch, sample, stale)
	}
	s.markNotRead(batch, fr.Errors)
	fr.Rows = append(fr.Rows, s.list...)
	return fr, err
}

// newRates sets the RATE of the batch's rows from the PortInfo re-read
// this refresh: '?' where it went unanswered (what the link runs at now
// is not known), '(no link)' where the link is down. A port whose link
// went down is not read (perf reads the ports a sweep reads): its row
// says so rather than show its last figures as current.
func (s *Sampler) newRates(batch []*fabric.Port, sample *perf.Sample, stale map[perf.Key]bool) {
	read := map[perf.Key]bool{}
	for _, pc := range sample.Ports {
		read[pc.Key] = true
	}
	for _, p := range batch {
		if p.Node == nil {
			continue
		}
		k := perf.Key{GUID: p.Node.GUID, Port: p.Num}
		row := s.rows[k]
		if row == nil {
			continue
		}
		if stale[k] {
			row.Rate = "?"
			continue
		}
		row.Rate = rateOf(p)
		if !read[k] && !perf.LinkUp(p.Node, p) {
			row.NotRead = fmt.Sprintf("no link since the last refresh (%s, %s): its counters are not read", p.State, p.PhysState)
		}
	}
}

// markNotRead says, on the rows of the batch's ports this refresh could
// not read, why: a port read before keeps its older figures, which the
// view must not show as current (trial D4). A PMA gone silent is one
// error for the node (Key.Port 0): every port of it in the batch.
func (s *Sampler) markNotRead(batch []*fabric.Port, errs []*perf.PortError) {
	for _, e := range errs {
		why := e.Error()
		if e.Key.Port != 0 {
			if row := s.rows[e.Key]; row != nil {
				row.NotRead = why
			}
			continue
		}
		for _, p := range batch {
			if p.Node == nil || p.Node.GUID != e.Key.GUID {
				continue
			}
			if row := s.rows[perf.Key{GUID: p.Node.GUID, Port: p.Num}]; row != nil {
				row.NotRead = why
			}
		}
	}
}

// newRow starts a port's row, its node and far end named as the findings
// name them (fabric.NameOf: two switches sharing a description are told
// apart, and the name is one --switch takes; trial C8).
func newRow(f *fabric.Fabric, pc *perf.PortCounters) *Row {
	r := &Row{Port: pc.Port, Num: int(pc.Key.Port), Peer: "-", XmitWait: -1, TxUtil: -1, RxUtil: -1}
	if p := pc.Port; p != nil {
		if p.Node != nil {
			r.Node = f.NameOf(p.Node)
		}
		if p.Remote != nil && p.Remote.Node != nil {
			r.Peer = fmt.Sprintf("%s/%d", f.NameOf(p.Remote.Node), p.Remote.Num)
		}
		r.Rate = rateOf(p)
	}
	return r
}

// rateOf is a port's RATE: its active rate, "(no link)" without one.
func rateOf(p *fabric.Port) string {
	switch {
	case p == nil:
		return ""
	case p.StateKnown() && (p.PhysState != 0 && !p.PhysState.LinkUp() || p.State == mad.PortStateDown):
		// Read with no link (ibsim's disable leaves PortState Active,
		// PhysState Disabled, and the old active rate): said as links
		// says it, not as a live 4X SDR link (trial D4).
		return "(no link)"
	case p.Rate().Width != 0:
		return p.Rate().String()
	}
	return ""
}

// SortKey orders the rows.
type SortKey int

const (
	ByErrors      SortKey = iota // error counters' increase per second
	ByXmitWait                   // share of time stalled
	ByUtilization                // busier direction's share of the rate
)

func (k SortKey) String() string {
	return [...]string{"errors/s", "xmit-wait", "utilization"}[k]
}

// Heading is how the view's header says what it is sorted by.
func (k SortKey) Heading() string {
	if k == ByErrors {
		return "verdict,err/s" // short: the header fits 100 columns whole
	}
	return k.String()
}

// SortKeyNames are the names --sort takes, in SortKey order (ParseSortKey
// also takes their short forms).
var SortKeyNames = []string{"errors", "wait", "util"}

// Next is the sort key after k (the view's sort key cycles).
func (k SortKey) Next() SortKey { return (k + 1) % 3 }

// ParseSortKey reads --sort.
func ParseSortKey(s string) (SortKey, error) {
	switch strings.ToLower(s) {
	case "errors", "error", "err", "e":
		return ByErrors, nil
	case "wait", "xmit-wait", "xmitwait", "w":
		return ByXmitWait, nil
	case "util", "utilization", "utilisation", "u":
		return ByUtilization, nil
	}
	return ByErrors, fmt.Errorf("--sort %q: want %s", s, orList(SortKeyNames))
}

// Sort orders rows worst first: by errors, the verdict's severity then
// errors/s; by wait or utilisation, k's figure then the severity; then by
// name.
func Sort(rows []*Row, k SortKey) {
	fig := func(r *Row) float64 {
		switch k {
		case ByXmitWait:
			return r.XmitWait
		case ByUtilization:
			return r.Util()
		}
		return r.ErrorsPerSecond
	}
	sev := func(r *Row) int {
		if !r.HasVerdict {
			return -1
		}
		return int(r.Verdict)
	}
	slices.SortStableFunc(rows, func(a, b *Row) int {
		if k == ByErrors {
			// Worst verdict first: by raw errors/s an info port (relay
			// errors, millions a second by design) sat above the error
			// ports (trial N7). Wait and utilisation are figures the
			// reader chose to rank by, and lead.
			if c := cmp.Compare(sev(b), sev(a)); c != 0 {
				return c
			}
		}
		return cmp.Or(cmp.Compare(fig(b), fig(a)), cmp.Compare(sev(b), sev(a)),
			strings.Compare(a.Node, b.Node), cmp.Compare(a.Num, b.Num))
	})
}

// Filter keeps the rows whose node or far end contains substr (case
// insensitive); "" keeps all.
func Filter(rows []*Row, substr string) []*Row {
	if substr == "" {
		return rows
	}
	s := strings.ToLower(substr)
	var out []*Row
	for _, r := range rows {
		if strings.Contains(strings.ToLower(r.Node), s) || strings.Contains(strings.ToLower(r.Peer), s) {
			out = append(out, r)
		}
	}
	return out
}

// orList is "a, b or c".
func orList(v []string) string {
	if len(v) < 2 {
		return strings.Join(v, "")
	}
	return strings.Join(v[:len(v)-1], ", ") + " or " + v[len(v)-1]
}
