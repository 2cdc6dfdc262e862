package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/discover"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/ibdoctor/ibdoctor/internal/source"
	"github.com/ibdoctor/ibdoctor/internal/words"
	"github.com/ibdoctor/ibdoctor/mad"
	"github.com/spf13/cobra"
)

// discoverOptions are discover's flags.
type discoverOptions struct {
	format   string
	diffFile string
	start    string
	maxHops  int
	path     mad.Path // start, parsed
}

// newDiscoverCmd builds the command; runF, when not nil, runs instead of runDiscover
// (tests parse the flags without reading the fabric).
func newDiscoverCmd(a *app, runF func(*discoverOptions) error) *cobra.Command {
	var o discoverOptions
	cmd := &cobra.Command{
		Use:   "discover",
		Short: "Walk the subnet with directed-route SMPs and list every node",
		Long: `discover walks the subnet from the local port like ibnetdiscover — NodeInfo,
then NodeDescription, SwitchInfo and PortInfo of each new node, then the
neighbours behind every port that is physically up — with many SMPs in flight
(-o/--outstanding, default 64; ibnetdiscover sends 2), each timing out after
-t/--timeout and retried --retries times.

Output (--format):
  table          nodes (type, GUID, LID, ports, links, description), a
                 summary, and what could not be reached (the default)
  json           the fabric as an ibdoctor.fabric/v1 document
                 (docs/schema-fabric.md)
  ibnetdiscover  ibnetdiscover's topology text, which ibsim and --sim read

With --diff FILE the fabric found is compared with a saved one (a discover
--format json file, a sweep's fabric file, ibnetdiscover text or an ibsim net
file) and the changes are printed instead: nodes added or removed, cables added,
removed or moved, link rates, LIDs and descriptions that changed.

Exit status: 0 everything answered (and, with --diff, nothing changed); 1 --diff
found changes; 2 could not discover (no device, the start node did not answer,
bad flags, interrupted); 3 discovery finished but some nodes or ports did not
answer (listed; what was found is printed).`,
		Example: `  ibdoctor discover --sim
  ibdoctor discover --format json > fabric.json
  ibdoctor discover --diff fabric.json
  ibdoctor discover --start 0,1,33 --max-hops 2 -o 16 --timeout 2s --retries 5`,
		Args: a.noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return withExit(ExitUndecided, err)
			}
			if runF != nil {
				return runF(&o)
			}
			return a.runDiscover(cmd.Context(), &o)
		},
	}
	cmd.SetFlagErrorFunc(flagError)
	fs := cmd.Flags()
	fs.StringVar(&o.format, "format", "table", "output: table, json (ibdoctor.fabric/v1) or ibnetdiscover (topology text)")
	completeValues(cmd, "format", discoverFormats)
	fs.StringVar(&o.diffFile, "diff", "", "compare with a saved fabric (JSON, ibnetdiscover text or ibsim net file) and print the changes")
	fs.StringVar(&o.start, "start", "", `start at the node at this directed route, e.g. "0,1,3" (default: the local node)`)
	fs.IntVar(&o.maxHops, "max-hops", 0, fmt.Sprintf("longest directed route followed (0: %d, the most a route can have)", mad.MaxHops))
	return cmd
}

// validate checks the flags before anything is sent.
func (o *discoverOptions) validate() error {
	if !slices.Contains(discoverFormats, o.format) {
		return fmt.Errorf("--format %q: want %s", o.format, orList(discoverFormats))
	}
	var err error
	o.path, err = mad.ParsePath(o.start)
	if err != nil {
		return fmt.Errorf("--start: %w", err)
	}
	if o.maxHops < 0 || o.maxHops > mad.MaxHops {
		return fmt.Errorf("--max-hops %d: want 1..%d (0: %d)", o.maxHops, mad.MaxHops, mad.MaxHops)
	}
	if o.maxHops > 0 && len(o.path) > o.maxHops {
		return fmt.Errorf("--start %v has %d hops, more than --max-hops %d", o.path, len(o.path), o.maxHops)
	}
	return nil
}

// runDiscover walks the fabric and prints it, or its changes from --diff.
func (a *app) runDiscover(parent context.Context, o *discoverOptions) error {
	var (
		old *fabric.Fabric
		err error
	)
	if o.diffFile != "" {
		if old, err = a.loadInterruptible(parent, o.diffFile); err != nil {
			return withExit(ExitUndecided, notFound("--diff", o.diffFile, err, "an earlier discovery (saved with 'ibdoctor discover --format json > FILE') or another fabric file --sim reads"))
		}
	}
	ctx, stop := signalContext(parent)
	defer stop()
	// Not open's discovery: --start and --max-hops, and an interrupted
	// walk is exit 2 here.
	sess, err := a.open(ctx, openOptions{need: source.Need{SMP: true}})
	if err != nil {
		return err
	}
	defer sess.Close()

	pr := newProgress(a.stderr)
	pr.Stage("discovery")
	began := time.Now()
	f, runErr := discover.Run(ctx, sess.Engine, discover.Options{
		MaxHops:  o.maxHops,
		Start:    o.path,
		Progress: func(p discover.Progress) { pr.Discover(p) },
		Unread:   sess.Unread(),
	})
	took := time.Since(began)
	pr.Done()
	if f == nil {
		return withExit(ExitUndecided, runErr)
	}
	sess.DropStandIns(f)
	sess.SavedAs(f).Apply(f)

	w := bufio.NewWriter(a.stdout)
	st := a.style()
	var changes fabric.Changes
	if old != nil {
		changes = fabric.Diff(old, f)
		err = printChanges(w, st, o.format, changes, o.diffFile)
	} else {
		err = printFabric(w, st, o.format, f, sess.Name, took)
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		return withExit(ExitUndecided, err)
	}
	if o.format != "table" || old != nil {
		// The table lists what was not reached on stdout;
		// machine formats keep stdout clean and say it here.
		printUnreachable(a.stderr, f, a.io.ErrWidth())
	}
	switch {
	case runErr != nil:
		return withExit(ExitUndecided, fmt.Errorf("%w; what was found is printed", runErr))
	case len(changes) > 0:
		return withExit(ExitFindings, nil)
	case len(f.Unreachable) > 0:
		return withExit(ExitPartial, fmt.Errorf("%d %s %s not reached (listed); what was found is printed", len(f.Unreachable), words.Noun(len(f.Unreachable), "node")+" or "+words.Noun(len(f.Unreachable), "port"), words.Verb(len(f.Unreachable), "were")))
	}
	return nil
}

// printFabric writes the discovered fabric in format.
func printFabric(w io.Writer, st report.Style, format string, f *fabric.Fabric, source string, took time.Duration) error {
	switch format {
	case "json":
		// Streamed: the document is never whole in memory.
		if err := fabric.WriteJSON(w, f, fabric.MarshalOptions{Indent: true}); err != nil {
			return err
		}
		_, err := io.WriteString(w, "\n")
		return err
	case "ibnetdiscover":
		return fabric.WriteIBNetDiscover(w, f)
	}
	rows := make([][]string, 0, len(f.Nodes))
	var sw, ca, rt, links int
	for _, n := range f.Nodes {
		up := 0
		for _, p := range n.Ports {
			if p != nil && p.Num != 0 && p.Remote != nil {
				up++
			}
		}
		switch n.Type {
		case mad.NodeSwitch:
			sw++
		case mad.NodeRouter:
			rt++
		default:
			ca++
		}
		rows = append(rows, []string{n.Type.String(), fmt.Sprintf("%#016x", n.GUID), nodeLIDs(n),
			strconv.Itoa(n.NumPorts()), strconv.Itoa(up), n.Description})
	}
	links = len(f.Links())
	if err := st.Table(w, []string{"TYPE", "GUID", "LID", "PORTS", "LINKS", "DESCRIPTION"}, rows); err != nil {
		return err
	}
	fmt.Fprintln(w)
	io.WriteString(w, report.WrapString(st.Bold("Discovered")+": ", fmt.Sprintf("%s (%s, %s, %s), %s, from %s in %v",
		plural(len(f.Nodes), "node"), plural(sw, "switch"), plural(ca, "CA"), plural(rt, "router"), plural(links, "link"), source, words.Duration(took)), st.Width))
	for _, d := range f.DuplicateGUIDs {
		paths := make([]string, len(d.Paths))
		for i, p := range d.Paths {
			paths[i] = p.String()
		}
		fmt.Fprintf(w, "%s GUID %#016x is claimed by %d nodes (%s) at paths %s\n", st.Red("Duplicate:"),
			d.GUID, len(d.Paths), strings.Join(d.Descs, ", "), strings.Join(paths, " "))
	}
	if len(f.Unreachable) == 0 {
		fmt.Fprintln(w, st.Green("Everything answered."))
		return nil
	}
	fmt.Fprintf(w, "%s (%d):\n", st.Red("Could not read"), len(f.Unreachable))
	writeUnreachable(w, f, st.Width)
	return nil
}

// nodeLIDs is a node's LID: port 0's for a switch, each port's for CAs
// and routers ("-" for none).
func nodeLIDs(n *fabric.Node) string {
	var lids []string
	for _, p := range n.Ports {
		if p == nil || (n.Type == mad.NodeSwitch) != (p.Num == 0) {
			continue
		}
		if p.LID != 0 {
			lids = append(lids, strconv.Itoa(int(p.LID)))
		}
	}
	if lids == nil {
		return "-"
	}
	return strings.Join(lids, ",")
}

func printUnreachable(w io.Writer, f *fabric.Fabric, width int) {
	if len(f.Unreachable) == 0 {
		return
	}
	fmt.Fprintf(w, "Could not read (%d):\n", len(f.Unreachable))
	writeUnreachable(w, f, width)
}

// writeUnreachable lists what discovery could not read: what, the
// directed route, the node and port it lies behind, and why, with the
// paths one dead node failed from many ports on one line
// (report.UnreachedLines).
func writeUnreachable(w io.Writer, f *fabric.Fabric, width int) {
	wheres := f.UnreachableWheres()
	us := make([]report.Unreached, len(f.Unreachable))
	for i, u := range f.Unreachable {
		us[i] = report.Unreached{What: u.What, Where: wheres[i], Reason: u.Reason}
	}
	for _, l := range report.UnreachedLines(us) {
		io.WriteString(w, report.WrapString("  ", l, width))
	}
}

// changeJSON is one change of `discover --diff --format json`.
type changeJSON struct {
	Kind string `json:"kind"`
	GUID string `json:"guid"`
	Port *int   `json:"port,omitempty"`
	Name string `json:"name"`
	Old  string `json:"old,omitempty"`
	New  string `json:"new,omitempty"`
}

// printChanges writes Diff's result in format.
func printChanges(w io.Writer, st report.Style, format string, cs fabric.Changes, against string) error {
	switch format {
	case "json":
		out := struct {
			Against string       `json:"against"`
			Changes []changeJSON `json:"changes"`
		}{Against: against, Changes: []changeJSON{}}
		rows := cs.Rows()
		for i, c := range cs {
			j := changeJSON{Kind: c.Kind.String(), GUID: fmt.Sprintf("%#016x", c.GUID), Name: c.Name, Old: c.Old, New: c.New}
			if rows[i][3] != "" {
				p := int(c.Port)
				j.Port = &p
			}
			out.Changes = append(out.Changes, j)
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	case "ibnetdiscover":
		_, err := io.WriteString(w, cs.String())
		return err
	}
	if len(cs) == 0 {
		fmt.Fprintf(w, "%s the fabric matches %s.\n", st.Green("No changes:"), against)
		return nil
	}
	if err := st.Table(w, cs.Header(), cs.Rows()); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%s against %s\n", st.Yellow(fmt.Sprintf("%d changes", len(cs))), against)
	return nil
}

// discoverFormats are what discover --format takes.
var discoverFormats = []string{"table", "json", "ibnetdiscover"}
