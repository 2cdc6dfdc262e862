package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/jsonstream"
	"github.com/ibdoctor/ibdoctor/internal/linkinfo"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/ibdoctor/ibdoctor/internal/source"
	"github.com/ibdoctor/ibdoctor/mad"
	"github.com/spf13/cobra"
)

// linksOptions are links' flags.
type linksOptions struct {
	expect   string
	degraded bool
	asJSON   bool
	rates    []mad.Rate // expect, parsed
}

// newLinksCmd builds the command; runF, when not nil, runs instead of runLinks
// (tests parse the flags without reading the fabric).
func newLinksCmd(a *app, runF func(*linksOptions) error) *cobra.Command {
	var o linksOptions
	cmd := &cobra.Command{
		Use:   "links",
		Short: "List every link with both ends, width, speed and state; mark the ones running below their rate",
		Long: `links discovers the fabric and prints one line per link, like iblinkinfo -l:
both ends' names, ports and LIDs, the active width and speed, and the ports'
states; sorted by node name (leaf2 before leaf10), then port, in --json too.

A link is marked DEGRADED when it runs below the best width or speed both of its
ends have enabled (a bad lane, a marginal cable or transceiver), or, with
--expect-rate, below the slowest of the expected rates. Supported masks alone
never mark a link: a port that supports a rate it has not enabled cannot train
at it. A port that is physically up whose far end did not answer is listed with
"(not reached)". A cable that comes back to its own switch or adapter is noted
LOOPBACK (check's link.loopback warning); that note alone does not change the
exit status. A link physically up with an end in Init or Armed (never
activated by a subnet manager) carries no data: it is marked NOT ACTIVE
(check's link.down).

--json prints {"links": [...], "complete": bool}; each link has "a" and "b"
(node, guid, port_guid, port, lid, state, phys_state; "b" is null when not
reached), "width", "speed", "rate", "gbps", "enabled" (best rate both ends
enable), "degraded" and "reasons", "loopback": true on a loopback cable, and
"not_active": "Init" or "Armed" on a link not Active.

Exit status: 0 no link marked and everything answered; 1 a link is marked
(DEGRADED or NOT ACTIVE);
2 could not discover; 3 some nodes or ports did not answer (listed on stderr).`,
		Example: `  ibdoctor links --sim
  ibdoctor links --expect-rate 4xNDR --degraded
  ibdoctor links --expect-rate 4xHDR,4xNDR --json`,
		Args: a.noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if o.rates, err = parseRates("--expect-rate", o.expect); err != nil {
				return withExit(ExitUndecided, err)
			}
			if runF != nil {
				return runF(&o)
			}
			return a.runLinks(cmd.Context(), &o)
		},
	}
	cmd.SetFlagErrorFunc(flagError)
	fs := cmd.Flags()
	fs.StringVar(&o.expect, "expect-rate", "", "also mark links below these rates, e.g. 4xNDR or 4xHDR,4xNDR (a link at one of them, or faster than the slowest, passes)")
	fs.BoolVar(&o.degraded, "degraded", false, "show only marked links")
	fs.BoolVar(&o.asJSON, "json", false, "print JSON")
	return cmd
}

// runLinks discovers the fabric and prints its links, marked.
func (a *app) runLinks(parent context.Context, o *linksOptions) error {
	ctx, stop := signalContext(parent)
	defer stop()
	sess, err := a.open(ctx, openOptions{need: source.Need{SMP: true}, discover: true})
	if err != nil {
		return err
	}
	defer sess.Close()
	f := sess.fabric
	all := linkinfo.Rows(f, linkinfo.Options{Expect: o.rates, WithoutLink: true})
	if sess.RatesNotRead != "" {
		// The simulator's default rates are not the fabric's: nothing
		// to mark, as check does not judge them.
		for i := range all {
			all[i].Reasons = nil
		}
	}
	rows := all[:0:0]
	marked := 0
	for _, r := range all {
		if r.Marked() {
			marked++
		}
		if !o.degraded || r.Marked() {
			rows = append(rows, r)
		}
	}
	w := bufio.NewWriter(a.stdout)
	if o.asJSON {
		err = writeLinksJSON(w, rows, len(f.Unreachable) == 0, sess.RatesNotRead)
	} else {
		err = writeLinksTable(w, a.style(), f, rows, all, marked)
		if err == nil && sess.RatesNotRead != "" {
			_, err = fmt.Fprintln(w, a.style().Yellow("Rates: "+sess.RatesNotRead+"; no link is marked"))
		}
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		return withExit(ExitUndecided, err)
	}
	partial := a.notRead(f, nil, nil, ctx)
	if ctx.Err() != nil {
		return partial // interrupted: exit 2
	}
	if marked > 0 {
		return withExit(ExitFindings, nil)
	}
	return partial
}

// endName names p's node as findings do (fabric.NameOf): with its GUID
// when another node shares the description, so rows never name two HCAs
// alike (firmware-default descriptions).
func endName(f *fabric.Fabric, p *fabric.Port) string { return f.NameOf(p.Node) }

func lidText(p *fabric.Port) string {
	if l := linkinfo.LID(p); l != 0 {
		return strconv.Itoa(int(l))
	}
	return "-"
}

// stateText is the port's state as read; a PortInfo that went unanswered
// is "not read" (its zero fields are unknown, not NoChange).
func stateText(p *fabric.Port) string {
	if !p.StateKnown() {
		return "not read"
	}
	return p.State.String() + "/" + p.PhysState.String()
}

// linkColumns are the columns of the links table. On a narrow terminal
// long node names (a UFM switch's, a CA's firmware default with its GUID)
// are cut in their middle, keeping the end that tells two apart; then an
// empty MARK column goes, then the LIDs (said under the table), so each
// link stays one row with its far end's PORT under PORT (trial E13).
func linkColumns(rows [][]string) []report.Column {
	cols := []report.Column{
		{Header: "NODE", Min: 16, CutMiddle: true}, {Header: "PORT"}, {Header: "LID", Drop: 3},
		{Header: "PEER", Min: 16, CutMiddle: true}, {Header: "PORT"}, {Header: "LID", Drop: 2},
		{Header: "WIDTH"}, {Header: "SPEED"}, {Header: "STATE"}, {Header: "MARK", Min: 16, Wrap: true},
	}
	marked := false
	for _, r := range rows {
		marked = marked || strings.TrimSpace(r[len(r)-1]) != ""
	}
	if !marked {
		cols[len(cols)-1].Drop = 1
	}
	return cols
}

func writeLinksTable(w io.Writer, st report.Style, f *fabric.Fabric, rows, all []linkinfo.Row, marked int) error {
	out := make([][]string, 0, len(rows))
	for _, r := range rows {
		row := []string{endName(f, r.A), strconv.Itoa(int(r.A.Num)), lidText(r.A), "", "", "",
			r.Rate.Width.String(), r.Rate.Speed.String(), stateText(r.A), ""}
		if r.B != nil {
			row[3], row[4], row[5] = endName(f, r.B), strconv.Itoa(int(r.B.Num)), lidText(r.B)
			if r.B.State != r.A.State || r.B.PhysState != r.A.PhysState || r.B.StateKnown() != r.A.StateKnown() {
				row[8] += " | " + stateText(r.B)
			}
		} else if r.NoLink {
			row[3], row[6], row[7] = "(no link)", "-", "-"
		} else {
			row[3] = st.Yellow("(not reached)")
		}
		if r.NotActive != 0 {
			// Trial A2: an Init link was listed with no mark.
			row[9] = st.Red("NOT ACTIVE: " + r.NotActive.String() + ": no data passes until the subnet manager activates it (check: link.down)")
		}
		if r.Degraded() {
			row[9] = strings.TrimPrefix(row[9]+"; ", "; ") + st.Red("DEGRADED: "+strings.Join(r.Reasons, "; "))
		} else if len(r.Undecided) > 0 {
			row[9] = st.Yellow("UNDECIDED: " + strings.Join(r.Undecided, "; "))
		}
		if r.Loopback {
			row[9] = strings.TrimPrefix(row[9]+"; ", "; ") + st.Yellow("LOOPBACK: cabled back to the same node, carries no traffic (check: link.loopback)")
		}
		out = append(out, row)
	}
	if err := report.WriteTableRule(w, st.Width, st.RuleWidth, linkColumns(out), out); err != nil {
		return err
	}
	io.WriteString(w, report.LeftOutNote(report.LeftOut(st.Width, linkColumns(out), out), st.Width))
	links, open, noLink, undecided, loops, inactive, slow := 0, 0, 0, 0, 0, 0, 0
	for _, r := range all {
		if r.Loopback {
			loops++
		}
		if r.NotActive != 0 {
			inactive++
		}
		if r.Degraded() {
			slow++
		}
		switch {
		case r.B != nil:
			links++
		case r.NoLink:
			noLink++
		default:
			open++
		}
		if !r.Degraded() && len(r.Undecided) > 0 {
			undecided++
		}
	}
	summary := fmt.Sprintf("\n%d links", links)
	if open > 0 {
		summary += " and " + plural(open, "port") + " whose far end did not answer"
	}
	if noLink > 0 {
		summary += ", " + plural(noLink, "port") + " without a link"
	}
	if loops > 0 {
		summary += ", " + st.Yellow(plural(loops, "loopback cable"))
	}
	if inactive > 0 {
		summary += ", " + st.Red(fmt.Sprintf("%d not Active (no data passes)", inactive))
	}
	switch {
	case slow > 0:
		summary += ", " + st.Red(fmt.Sprintf("%d below their rate", slow))
	case undecided == 0:
		summary += ", " + st.Green("none below its rate")
	default:
		summary += ", none below its rate of those judged"
	}
	if undecided > 0 {
		summary += ", " + st.Yellow(fmt.Sprintf("%d undecided (an end not read)", undecided))
	}
	// Wrapped to the terminal: the counts grew a clause (not Active) and
	// ran past 80 columns.
	_, err := io.WriteString(w, "\n"+report.WrapString("", strings.TrimPrefix(summary, "\n"), st.Width))
	return err
}

type linkEndJSON struct {
	Node      string `json:"node"`
	GUID      string `json:"guid"`
	PortGUID  string `json:"port_guid"`
	Port      uint8  `json:"port"`
	LID       uint16 `json:"lid"`
	State     string `json:"state"`
	PhysState string `json:"phys_state"`
}

type linkJSON struct {
	A        linkEndJSON  `json:"a"`
	B        *linkEndJSON `json:"b"`
	Width    string       `json:"width"`
	Speed    string       `json:"speed"`
	Rate     string       `json:"rate"`
	Gbps     float64      `json:"gbps"`
	Enabled  string       `json:"enabled,omitempty"`
	Degraded bool         `json:"degraded"`
	Reasons  []string     `json:"reasons"`
	// Loopback: the cable comes back to its own node (link.loopback).
	Loopback bool `json:"loopback,omitempty"`
	// NotActive: the link is physically up but an end is Init or Armed
	// (link.down): no data passes. Omitted when Active.
	NotActive string `json:"not_active,omitempty"`
	// Undecided says why the verdict could not be decided (an end not
	// read); omitted when it could.
	Undecided []string `json:"undecided,omitempty"`
}

func endJSON(p *fabric.Port) linkEndJSON {
	e := linkEndJSON{Node: p.Node.Description, GUID: fmt.Sprintf("%#016x", p.Node.GUID), PortGUID: fmt.Sprintf("%#016x", p.GUID), Port: p.Num,
		LID: linkinfo.LID(p), State: p.State.String(), PhysState: p.PhysState.String()}
	if !p.StateKnown() {
		e.State, e.PhysState = "not read", "not read"
	}
	return e
}

// writeLinksJSON writes {"complete": ..., "links": [...]} one link at a
// time (jsonstream): every link of a big fabric is not built as Go values
// and bytes at once.
func writeLinksJSON(w io.Writer, rows []linkinfo.Row, complete bool, ratesNotRead string) error {
	jw := jsonstream.New(w, jsonstream.Options{Indent: true, EscapeHTML: true})
	jw.Field("complete", complete)
	if ratesNotRead != "" {
		jw.Field("rates_not_read", ratesNotRead)
	}
	// Ports read without a link are not links: their own list, so a
	// reader counting "links" counts cables.
	var linked []linkinfo.Row
	var bare []linkEndJSON
	for _, r := range rows {
		if r.NoLink {
			bare = append(bare, endJSON(r.A))
		} else {
			linked = append(linked, r)
		}
	}
	rows = linked
	if bare == nil {
		bare = []linkEndJSON{}
	}
	jw.Field("ports_without_link", bare)
	jw.Array("links", len(rows), func(i int) any {
		r := rows[i]
		j := linkJSON{A: endJSON(r.A), Width: r.Rate.Width.String(), Speed: r.Rate.Speed.String(),
			Rate: r.Rate.String(), Gbps: r.Rate.Gbps(), Degraded: r.Degraded(), Reasons: r.Reasons, Undecided: r.Undecided, Loopback: r.Loopback}
		if j.Reasons == nil {
			j.Reasons = []string{}
		}
		if r.NotActive != 0 {
			j.NotActive = r.NotActive.String()
		}
		if r.B != nil {
			b := endJSON(r.B)
			j.B = &b
		}
		if r.Enabled.Width != 0 && r.Enabled.Speed != 0 {
			j.Enabled = r.Enabled.String()
		}
		return j
	})
	return jw.Close()
}
