package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/ibdoctor/ibdoctor/internal/route"
	"github.com/ibdoctor/ibdoctor/internal/source"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/internal/words"
	"github.com/ibdoctor/ibdoctor/mad"
	"github.com/spf13/cobra"
)

// traceOptions are trace's arguments.
type traceOptions struct {
	src, dst string
}

// newTraceCmd builds trace; runF, when not nil, runs instead of runTrace.
func newTraceCmd(a *app, runF func(*traceOptions) error) *cobra.Command {
	var o traceOptions
	cmd := &cobra.Command{
		Use:   "trace SRC DST",
		Short: "Follow the route from one port to another through the switches' forwarding tables",
		Long: `trace follows the unicast route from SRC to DST hop by hop, like ibtracert: at
each switch it reads only the forwarding-table block that holds DST's LID and
the egress port's state, then steps through that port. It prints each switch
crossed (name, GUID, LID, in-port -> out-port) and how the route ends:
delivered, no route (0xFF) at a switch, a dead end (egress port down), a loop,
or delivered to the wrong port.

SRC and DST are LIDs (decimal or 0x hex), node or port GUIDs (0x and more than
four hex digits), node descriptions, or host names ("gpu042" for "gpu042
mlx5_0") when they name one port. A host with several HCAs is named with its
HCA ("gpu001 mlx5_0"): the host name alone is refused, listing its ports, as
each HCA has its own route. With two LIDs no discovery is needed; names and
GUIDs are looked up by discovering the fabric first.

Exit status: 0 delivered, 1 the route does not deliver, 2 could not trace
(a DST LID that no port found holds and no switch routes too: a typo, or a port
whose link is down).`,
		Example: `  ibdoctor trace --sim "gpu001 mlx5_0" "gpu012 mlx5_0"
  ibdoctor trace --sim 13 101
  ibdoctor trace 12 0x1f
  ibdoctor trace 0x0002c90300a1b2c3 "leaf03"`,
		Args: exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.src, o.dst = args[0], args[1]
			if runF != nil {
				return runF(&o)
			}
			return a.runTrace(cmd.Context(), &o)
		},
	}
	cmd.SetFlagErrorFunc(flagError)
	return cmd
}

// runTrace follows the route and prints it.
func (a *app) runTrace(parent context.Context, o *traceOptions) error {
	ctx, stop := signalContext(parent)
	defer stop()
	// Discovery only when the endpoints are not two LIDs (a.trace).
	sess, err := a.open(ctx, openOptions{need: source.Need{SMP: true}})
	if err != nil {
		return err
	}
	defer sess.Close()
	lt, f, err := a.trace(ctx, sess.Engine, o.src, o.dst)
	if err == nil {
		err = a.unheldDST(ctx, sess.Engine, lt, f, o.dst)
	}
	var we *route.WalkError
	if errors.As(err, &we) && sess.TablesNotInFile[we.GUID] != "" {
		// The simulator refuses a table the file does not have: say so,
		// not its MAD status.
		err = fmt.Errorf("route: reading %s at directed route %v: %s", we.What, we.Path, sess.TablesNotInFile[we.GUID])
	}
	if err != nil {
		return withExit(ExitUndecided, err)
	}
	w := bufio.NewWriter(a.stdout)
	st := a.style()
	if sess.RoutesComputed {
		io.WriteString(w, report.WrapString("Routes: ", report.RoutesComputedNote, st.Width))
	}
	// Names as the findings give them: in the discovered fabric, where two
	// nodes sharing a description are told apart, else the walk's.
	names := f
	if names == nil {
		names = lt.Fabric
	}
	printTrace(w, st, lt, names)
	if err := w.Flush(); err != nil {
		return err
	}
	if lt.Outcome != route.Delivered {
		return withExit(ExitFindings, nil)
	}
	return nil
}

// trace resolves the endpoints and follows the route. Two LIDs are traced
// without discovery unless the source cannot be found by following the
// LFTs from here; anything else discovers first (the fabric is returned,
// nil when none was discovered).
func (a *app) trace(ctx context.Context, e *transport.Engine, src, dst string) (route.LiveTrace, *fabric.Fabric, error) {
	from, okf := route.ParseLID(src)
	to, okt := route.ParseLID(dst)
	if okf && okt {
		lt, err := route.TraceLive(ctx, e, from, to, route.LiveOptions{})
		if !errors.Is(err, route.ErrSourceNotFound) {
			return lt, nil, err
		}
	}
	f, err := a.discover(ctx, e, nil)
	if err != nil {
		return route.LiveTrace{}, nil, err
	}
	sp, err := route.Resolve(f, src)
	if err != nil {
		return route.LiveTrace{}, f, fmt.Errorf("SRC: %w", err)
	}
	from = sp.LID
	if okt {
		// A destination LID need not be in the fabric: the tables may
		// still route a LID whose port lost its link (routing.lost-lid).
	} else {
		dp, err := route.Resolve(f, dst)
		if err != nil {
			return route.LiveTrace{}, f, fmt.Errorf("DST: %w", err)
		}
		to = dp.LID
	}
	lt, err := route.TraceLive(ctx, e, from, to, route.LiveOptions{Fabric: f})
	return lt, f, err
}

// unheldDST refuses a DST LID that no port holds and the tables do not
// route (no route for it at a switch): a typo, not a route that fails to
// deliver (trial E11: "trace 13 9999" exited 1 as a fabric fault). A LID
// the tables do route somewhere (to a port that lost its link) stays the
// trace's outcome. Two LIDs were traced without discovery: the fabric is
// discovered now, on this path only, to tell who holds the LID.
func (a *app) unheldDST(ctx context.Context, e *transport.Engine, lt route.LiveTrace, f *fabric.Fabric, dst string) error {
	to, ok := route.ParseLID(dst)
	if !ok || lt.Outcome != route.NoRoute {
		return nil
	}
	if f == nil {
		var err error
		if f, err = a.discover(ctx, e, nil); err != nil {
			return err
		}
	}
	if f.PortByLID(to) != nil {
		return nil
	}
	at := "the first switch"
	if len(lt.Hops) > 0 && lt.Hops[len(lt.Hops)-1].Switch != nil {
		at = lt.Hops[len(lt.Hops)-1].Switch.Description
	}
	// Discovery sees no port without a link: a host's LID whose link
	// went down, and whose route the SM then took out of the tables,
	// looks like a typo here (review R4). Which it is cannot be told.
	why := "no port discovery reached holds it (a port without a link is not seen: it may be one whose link is down"
	if len(f.Unreachable) > 0 {
		why += ", or of a node that did not answer"
	}
	why += ")"
	return fmt.Errorf("DST LID %d: %s, and %s has no route for it: give the LID of a port ('ibdoctor discover' lists them), a GUID or a node description, or check the link of the port that should hold it", to, why, at)
}

// portText names a port and the LID it was traced by: with an LMC the
// LID among the port's range (trial A10: four traces to DLIDs 108-111,
// with different hops, all ended "LID 108"). lid 0, or one the port does
// not own, names its base LID.
func portText(p *fabric.Port, lid uint16) string {
	lp := p
	if p.Node.Type == mad.NodeSwitch {
		lp = p.Node.Ports[0]
	}
	at := fmt.Sprintf("LID %d", lp.LID)
	if lp.LMC > 0 && lp.LID != 0 {
		last := int(lp.LID) + 1<<lp.LMC - 1
		if lid < lp.LID || int(lid) > last {
			lid = lp.LID
		}
		at = fmt.Sprintf("LID %d of its %d-%d, LMC %d", lid, lp.LID, last, lp.LMC)
	}
	if p.Node.Type == mad.NodeSwitch {
		return fmt.Sprintf("switch %s (GUID %#016x, %s)", p.Node.Description, p.Node.GUID, at)
	}
	return fmt.Sprintf("%s port %d (GUID %#016x, %s)", p.Node.Description, p.Num, p.GUID, at)
}

// printTrace prints the hops and the ending.
func printTrace(w io.Writer, st report.Style, lt route.LiveTrace, names *fabric.Fabric) {
	if src := lt.Fabric.PortByLID(lt.From); src != nil {
		io.WriteString(w, report.WrapString("", "From "+portText(src, lt.From), st.Width))
	} else {
		fmt.Fprintf(w, "From LID %d\n", lt.From)
	}
	if len(lt.Hops) > 0 {
		var rows [][]string
		for i, h := range lt.Hops {
			sw := h.Switch
			lid := ""
			if p := sw.Ports[0]; p != nil {
				lid = strconv.Itoa(int(p.LID))
			}
			in := strconv.Itoa(int(h.In))
			if h.In == 0 {
				in = "-"
			}
			out := strconv.Itoa(int(h.Out))
			if i == len(lt.Hops)-1 && lt.Outcome == route.Loop {
				// The loop closes on arrival: the switch was not asked
				// again, and port 0 would read as the switch itself.
				out = "(loop)"
			}
			if i == len(lt.Hops)-1 && lt.Outcome != route.Delivered && lt.Outcome != route.Misdelivered {
				out = st.Red(out)
			}
			rows = append(rows, []string{strconv.Itoa(i + 1), sw.Description, fmt.Sprintf("%#016x", sw.GUID), lid, in + " -> " + out})
		}
		st.Table(w, []string{"HOP", "SWITCH", "GUID", "LID", "IN -> OUT"}, rows)
	}
	io.WriteString(w, report.WrapString("", endText(st, lt, names), st.Width))
}

// endText says how the route ended, naming where: a switch without its
// GUID beside is named as the findings name it (fabric.NameOf, trial C8).
func endText(st report.Style, lt route.LiveTrace, names *fabric.Fabric) string {
	var last *route.Hop
	if len(lt.Hops) > 0 {
		last = &lt.Hops[len(lt.Hops)-1]
	}
	n := len(lt.Hops)
	switch lt.Outcome {
	case route.Delivered:
		return st.Green(fmt.Sprintf("To %s: delivered after %s", portText(lt.End, lt.To), words.Count(n, "switch hop")))
	case route.NoRoute:
		if sw := last.Switch.Switch; sw != nil && lt.To > sw.LinearFDBTop {
			return st.Red(fmt.Sprintf("No route to LID %d at %s (GUID %#016x): beyond its LinearFDBTop %d, the table has no entry for it", lt.To, last.Switch.Description, last.Switch.GUID, sw.LinearFDBTop))
		}
		return st.Red(fmt.Sprintf("No route (0xFF) to LID %d at %s (GUID %#016x): its forwarding table entry is %d", lt.To, last.Switch.Description, last.Switch.GUID, last.Out))
	case route.DeadEnd:
		return st.Red(fmt.Sprintf("Dead end at %s: LID %d is forwarded out of port %d, which is %v/%v", names.NameOf(last.Switch), lt.To, last.Out, lt.End.State, lt.End.PhysState))
	case route.Loop:
		return st.Red(fmt.Sprintf("Loop: the route to LID %d comes back to %s (in by port %d)", lt.To, names.NameOf(last.Switch), last.In))
	case route.Misdelivered:
		return st.Red(fmt.Sprintf("Misdelivered: the route to LID %d ends at %s, which does not own it", lt.To, portText(lt.End, 0)))
	case route.SourceDown:
		return st.Red(fmt.Sprintf("The source port %s has no live link", portText(lt.End, lt.From)))
	case route.NoTable:
		return st.Red(fmt.Sprintf("No forwarding table at %s", names.NameOf(last.Switch)))
	case route.Unread:
		return st.Yellow(fmt.Sprintf("Not known past %s: LID %d leaves by port %d, whose state or far end did not answer (could not look, not a dead end)", names.NameOf(last.Switch), lt.To, last.Out))
	}
	return lt.Outcome.String()
}
