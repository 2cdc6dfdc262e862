package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/ibdoctor/ibdoctor/internal/discover"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/ibdoctor/ibdoctor/internal/route"
	"github.com/ibdoctor/ibdoctor/internal/source"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/internal/words"
	"github.com/ibdoctor/ibdoctor/mad"
	"github.com/spf13/cobra"
)

// routesOptions are routes' flags.
type routesOptions struct {
	format   string
	switches []string
	all      bool
}

// newRoutesCmd builds the command; runF, when not nil, runs instead of runRoutes
// (tests parse the flags without reading the fabric).
func newRoutesCmd(a *app, runF func(*routesOptions) error) *cobra.Command {
	var o routesOptions
	cmd := &cobra.Command{
		Use:   "routes",
		Short: "Read every switch's unicast forwarding table (LFT) and print it",
		Long: `routes discovers the fabric, reads every switch's linear forwarding table with
many SMPs in flight, and prints it switch by switch: by default as a table that
names each destination and where each egress port leads (unrouted destinations
shown as NO ROUTE), or with --format dump_fts exactly as infiniband-diags'
dump_fts prints it, which OpenSM's file routing engine loads (opensm -R file -U
FILE).

Switches that do not answer are listed on stderr and the exit status is 3; what
was read is printed.`,
		Example: `  ibdoctor routes --sim
  ibdoctor routes --format dump_fts > lfts.dump && opensm -R file -U lfts.dump
  ibdoctor routes --switch leaf01 --switch 0x0002c90300a1b2c3 --switch 12`,
		Args: a.noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(routeFormats, o.format) {
				return withExit(ExitUndecided, fmt.Errorf("--format %q: want %s", o.format, orList(routeFormats)))
			}
			if runF != nil {
				return runF(&o)
			}
			return a.runRoutes(cmd.Context(), &o)
		},
	}
	cmd.SetFlagErrorFunc(flagError)
	cmd.Flags().StringVar(&o.format, "format", "table", "output: table (readable) or dump_fts (infiniband-diags format, loadable by opensm -R file -U)")
	completeValues(cmd, "format", routeFormats)
	cmd.Flags().StringArrayVar(&o.switches, "switch", nil, "only this switch, by name, GUID or LID (repeatable)")
	cmd.Flags().BoolVarP(&o.all, "all", "a", false, "also list LIDs that have no route (dump_fts -a)")
	return cmd
}

// runRoutes discovers, reads the selected switches' tables and prints them.
func (a *app) runRoutes(parent context.Context, o *routesOptions) error {
	ctx, stop := signalContext(parent)
	defer stop()
	sess, err := a.open(ctx, openOptions{need: source.Need{SMP: true}, discover: true})
	if err != nil {
		return err
	}
	defer sess.Close()
	f := sess.fabric
	var sel []*fabric.Node
	for _, s := range o.switches {
		n, err := findSwitch(f, s)
		if err != nil {
			return withExit(ExitUndecided, fmt.Errorf("--switch: %w", err))
		}
		sel = append(sel, n)
	}
	if sel == nil {
		for _, n := range f.Nodes {
			if n.Type == mad.NodeSwitch {
				sel = append(sel, n)
			}
		}
	}
	readErr := route.ReadLFTs(ctx, sess.Engine, f, route.ReadOptions{Parallel: a.opts.source.Window, Switches: sel})
	w := bufio.NewWriter(a.stdout)
	if sess.RoutesComputed {
		// dump_fts output stays loadable (opensm -U): the note
		// goes to stderr there, to the top of the table otherwise.
		if o.format == "dump_fts" {
			a.warnf("routes %s", report.RoutesComputedNote)
		} else {
			io.WriteString(w, report.WrapString("Routes: ", report.RoutesComputedNote, a.style().Width)+"\n")
		}
	}
	if o.format == "dump_fts" {
		for _, n := range sel {
			if n.Switch != nil && n.Switch.LFT != nil {
				if err := fabric.WriteSwitchLFT(w, f, n, fabric.DumpOptions{All: o.all}); err != nil {
					return err
				}
			}
		}
	} else {
		printLFTTables(w, a.style(), f, sel, o.all)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return a.notRead(f, readErr, sess.TablesNotInFile, ctx)
}

// discover walks the fabric with a progress line on stderr, adding unread
// (what the source records it could not read) to what did not answer. A
// discovery that could not start is exit 2.
func (a *app) discover(ctx context.Context, e *transport.Engine, unread []fabric.Unreachable) (*fabric.Fabric, error) {
	pr := newProgress(a.stderr)
	pr.Stage("discovery")
	f, err := discover.Run(ctx, e, discover.Options{Progress: func(p discover.Progress) { pr.Discover(p) }, Unread: unread})
	pr.Done()
	if f == nil {
		return nil, withExit(ExitUndecided, err)
	}
	if err != nil {
		// Interrupted: what was found is still worth printing; notRead
		// reports the interruption.
		f.Unreachable = append(f.Unreachable, fabric.Unreachable{What: "discovery", Reason: err.Error()})
	}
	return f, nil
}

// findSwitch resolves a --switch value to a switch of f: any name
// route.Resolve takes (a name as printed, a GUID, a LID).
func findSwitch(f *fabric.Fabric, s string) (*fabric.Node, error) {
	if ns := f.NodesNamed(s); len(ns) == 1 && ns[0].Type == mad.NodeSwitch {
		return ns[0], nil // named whole: its LID is not needed
	}
	p, err := route.Resolve(f, s)
	if err != nil {
		return nil, err
	}
	if p.Node.Type != mad.NodeSwitch {
		return nil, fmt.Errorf("%q is %q, not a switch", s, f.NameOf(p.Node))
	}
	return p.Node, nil
}

// notRead lists on stderr what discovery and the LFT reads missed, and
// turns it into exit 3 (partial). why, by switch GUID, replaces a failed
// table read's error (a table the --sim or --lfts file does not have).
func (a *app) notRead(f *fabric.Fabric, readErr error, why map[uint64]string, ctx context.Context) error {
	var us []report.Unreached
	wheres := f.UnreachableWheres()
	for i, u := range f.Unreachable {
		us = append(us, report.Unreached{What: u.What, Where: wheres[i], Reason: u.Reason})
	}
	n := len(us)
	lines := report.UnreachedLines(us)
	for _, e := range flatten(readErr) {
		var se *route.SwitchError
		if errors.As(e, &se) {
			reason := se.Err.Error()
			if w, ok := why[se.Switch.GUID]; ok {
				reason = w
			}
			lines = append(lines, fmt.Sprintf("%s at switch %s (GUID %#016x, path %v): %s", se.What, se.Switch.Description, se.Switch.GUID, se.Switch.Path, reason))
		} else {
			lines = append(lines, e.Error())
		}
		n++
	}
	if n == 0 {
		return nil
	}
	a.listStderr(fmt.Sprintf("Could not read (%d):", n), lines)
	if ctx.Err() != nil {
		return withExit(ExitUndecided, fmt.Errorf("interrupted: %w", ctx.Err()))
	}
	return withExit(ExitPartial, fmt.Errorf("%s; what was read is printed", notReadSummary(f.Unreachable, n)))
}

// notReadSummary says what n entries not read were: the directed-route
// paths that met a node that never answered (NodeInfo) are paths, not
// nodes (one dead spine is met from every leaf port cabled to it, and
// who it is is unknown), counted apart from the other reads.
func notReadSummary(un []fabric.Unreachable, n int) string {
	paths := 0
	for _, u := range un {
		if u.What == "NodeInfo" {
			paths++
		}
	}
	var parts []string
	if paths > 0 {
		parts = append(parts, fmt.Sprintf("%s %s to nodes that did not answer", words.Count(paths, "port"), words.Verb(paths, "lead")))
	}
	if other := n - paths; other > 0 {
		what := words.Count(other, "other read")
		if paths == 0 {
			what = words.Count(other, "read")
		}
		parts = append(parts, fmt.Sprintf("%s went unanswered", what))
	}
	return strings.Join(parts, ", ")
}

func flatten(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

// printLFTTables prints each switch's table: destination LIDs with the
// egress port, what owns the LID, and where the port leads. Destinations
// known in the fabric that have no route are shown as NO ROUTE; with all,
// unknown unrouted LIDs too.
func printLFTTables(w io.Writer, st report.Style, f *fabric.Fabric, sws []*fabric.Node, all bool) {
	first, unheld := true, false
	for _, n := range sws {
		if n.Switch == nil || n.Switch.LFT == nil {
			continue
		}
		if !first {
			fmt.Fprintln(w)
		}
		first = false
		lft := n.Switch.LFT
		lid := uint16(0)
		if p := n.Ports[0]; p != nil {
			lid = p.LID
		}
		var rows [][]string
		routed, holes := 0, 0
		for l := 1; l < lft.Len(); l++ {
			out := lft.At(uint16(l))
			dst := f.PortByLID(uint16(l))
			valid := int(out) <= n.NumPorts()
			if !valid && dst == nil && !all {
				continue
			}
			row := []string{strconv.Itoa(l), strconv.Itoa(int(out)), destText(f, dst), ""}
			unheld = unheld || dst == nil
			switch {
			case !valid:
				holes++
				row[1] = st.Red(strconv.Itoa(int(out)))
				row[3] = st.Red("NO ROUTE")
			case out == 0:
				routed++
				row[3] = "(this switch)"
			default:
				routed++
				p := n.Ports[out]
				switch {
				case p == nil || p.Remote == nil:
					row[3] = st.Yellow("port not cabled/down")
				default:
					row[3] = fmt.Sprintf("%s[%d]", f.NameOf(p.Remote.Node), p.Remote.Num)
				}
			}
			rows = append(rows, row)
		}
		// Two short lines, not one: piped output is never wrapped by us,
		// and one line was wider than an 80-column terminal, which then
		// broke it inside a word.
		title := fmt.Sprintf("%s  GUID %#016x  LID %d  path %v", st.Bold(f.NameOf(n)), n.GUID, lid, n.Path)
		count := fmt.Sprintf("LinearFDBTop %d: %d LIDs routed", n.Switch.LinearFDBTop, routed)
		if holes > 0 {
			count += ", " + st.Red(fmt.Sprintf("%d without a route", holes))
		}
		io.WriteString(w, report.WrapString("", title, st.Width))
		io.WriteString(w, report.WrapString("  ", count, st.Width))
		// One row per LID in every table: a long name is cut in its
		// middle, not wrapped, so each table keeps the same labelled
		// columns whatever its names' lengths.
		report.WriteTableRule(w, st.Width, st.RuleWidth, routeColumns, rows)
	}
	if unheld {
		// Said once, under the tables (trial E6: "?" had no legend).
		io.WriteString(w, "\n"+report.WrapString("", "? as DESTINATION: no port found holds the LID (check: routing.lost-lid)", st.Width))
	}
}

// routeColumns are the columns of a switch's routing table.
var routeColumns = []report.Column{
	{Header: "LID"}, {Header: "PORT"},
	{Header: "DESTINATION", Min: 16, CutMiddle: true}, {Header: "VIA", Min: 16, CutMiddle: true},
}

// destText names a LID's owner as the findings do (fabric.NameOf: two
// switches sharing a description are told apart, trial C8).
func destText(f *fabric.Fabric, p *fabric.Port) string {
	switch {
	case p == nil:
		return "?"
	case p.Node.Type == mad.NodeSwitch:
		return f.NameOf(p.Node) + " (switch)"
	}
	return fmt.Sprintf("%s port %d", f.NameOf(p.Node), p.Num)
}

// routeFormats are what routes --format takes.
var routeFormats = []string{"table", "dump_fts"}
