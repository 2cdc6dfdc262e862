// Package layout places a fabric on a page: switches in rows by the tier
// the checks infer for them (core above spine above leaf), each leaf's
// hosts as one box below it, the cables between two boxes as one bundle.
// A fabric too large to draw switch by switch is drawn by pod. It computes
// geometry only; internal/htmlpage turns it into SVG.
package layout

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/words"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Kind is what a box stands for.
type Kind uint8

// Kinds of boxes.
const (
	Switch Kind = iota // one switch
	Hosts              // the hosts (and built-in CAs) cabled to one leaf or pod
	Pod                // the leaves and spines of one pod, drawn as one box
)

// Box is one drawn node.
type Box struct {
	Kind  Kind
	Label string
	// Row is the box's row index, 0 at the top.
	Row int
	// Group is the pod the box belongs to, -1 when none.
	Group int
	// Switches are the switches the box stands for (one for Switch).
	Switches []*fabric.Node
	// Members are a Hosts box's CAs: hosts, then Aggregation Nodes and
	// other built-in CAs and routers (Others of them).
	Members []*fabric.Node
	Others  int
	// Under is the switch or pod box a Hosts box hangs under, -1 when none.
	Under int
	// Internal are the cables inside a Pod box (not drawn as lines), or
	// between CAs of one Hosts box.
	Internal []fabric.Link
	X, Y     float64 // top-left corner
	W, H     float64
}

// Bundle is the cables between two boxes, drawn as one line.
type Bundle struct {
	A, B   int // box indexes, A in the upper row (or the left one)
	Cables []fabric.Link
}

// Row is one row of boxes.
type Row struct {
	Label string
	Y     float64
}

// Drawing is a placed fabric.
type Drawing struct {
	Boxes   []Box
	Bundles []Bundle
	Rows    []Row
	// Groups are the pods' extents (X, W) in the order of their numbers.
	Groups        []Span
	Width, Height float64
	// ByPod is true when pods were drawn as single boxes.
	ByPod bool
	// BoxW is the width of every box: wide enough for the longest
	// switch name, within MaxBoxW.
	BoxW float64

	perLine  []int // boxes per line of each row (fewer than the row's: wrapped)
	boxOf    map[*fabric.Node]int
	bundleOf map[*fabric.Port]int
}

// Span is a pod's extent: the rectangle around its boxes.
type Span struct{ X, Y, W, H float64 }

// Options tune Build.
type Options struct {
	// PodAbove is the switch count above which a fabric with pods is
	// drawn pod by pod (0: 2,000).
	PodAbove int
}

// Geometry, in SVG user units.
const (
	BoxW    = 76.0 // narrowest box; long switch names widen every box
	MaxBoxW = 240.0
	CharW   = 6.4 // width of a label character at the page's font size
	wrapMin = 16  // a row wraps only onto lines of at least this many boxes
	BoxH    = 26.0
	HostH   = 34.0
	Gap     = 10.0
	RowGap  = 130.0
	Margin  = 20.0
	LabelW  = 0.0
)

// BoxOf returns the box a fabric node is drawn in, or -1.
func (d *Drawing) BoxOf(n *fabric.Node) int {
	if i, ok := d.boxOf[n]; ok {
		return i
	}
	return -1
}

// BundleOf returns the bundle a cable end is drawn in, or -1 (a cable
// inside a pod box, or no cable).
func (d *Drawing) BundleOf(p *fabric.Port) int {
	if i, ok := d.bundleOf[p]; ok {
		return i
	}
	return -1
}

// Build places f.
func Build(f *fabric.Fabric, o Options) *Drawing {
	if o.PodAbove == 0 {
		o.PodAbove = 2000
	}
	tiers := checks.SwitchTiers(f)
	top := 0
	var switches []*fabric.Node
	for _, n := range f.Nodes {
		if n.Type == mad.NodeSwitch {
			switches = append(switches, n)
			top = max(top, tiers[n])
		}
	}
	pods := podsOf(f, tiers, top)
	byPod := pods != nil && len(switches) > o.PodAbove

	d := &Drawing{boxOf: map[*fabric.Node]int{}, bundleOf: map[*fabric.Port]int{}, ByPod: byPod, BoxW: BoxW}
	if !byPod {
		for _, n := range switches {
			d.BoxW = min(MaxBoxW, max(d.BoxW, CharW*float64(len([]rune(name(n))))+12))
		}
	}
	// Rows top to bottom: switches no leaf reaches, tier top..0 (pods
	// and what is above them when drawn by pod), hosts.
	rowOfTier := map[int]int{}
	var rows []Row
	if slices.ContainsFunc(switches, func(n *fabric.Node) bool { return tiers[n] < 0 }) {
		rowOfTier[-1] = len(rows)
		rows = append(rows, Row{Label: "no leaf below"})
	}
	podRow := -1
	for t := top; t >= 0; t-- {
		if byPod && t < top {
			if podRow < 0 {
				podRow = len(rows)
				rows = append(rows, Row{Label: "pods"})
			}
			rowOfTier[t] = podRow
			continue
		}
		rowOfTier[t] = len(rows)
		rows = append(rows, Row{Label: tierName(t, top)})
	}
	hostRow := len(rows)
	rows = append(rows, Row{Label: "hosts"})
	d.Rows = rows

	// Switch and pod boxes.
	podBox := map[int]int{}
	for _, n := range switches {
		t := tiers[n]
		g := -1
		if pods != nil {
			if pg, ok := pods[n]; ok {
				g = pg
			}
		}
		if byPod && g >= 0 {
			bi, ok := podBox[g]
			if !ok {
				bi = len(d.Boxes)
				podBox[g] = bi
				d.Boxes = append(d.Boxes, Box{Kind: Pod, Row: podRow, Group: g, Under: -1, W: d.BoxW, H: BoxH * 1.6})
			}
			d.Boxes[bi].Switches = append(d.Boxes[bi].Switches, n)
			d.boxOf[n] = bi
			continue
		}
		d.boxOf[n] = len(d.Boxes)
		d.Boxes = append(d.Boxes, Box{Kind: Switch, Label: name(n), Row: rowOfTier[t], Group: g, Switches: []*fabric.Node{n}, Under: -1, W: d.BoxW, H: BoxH})
	}
	for g, bi := range podBox {
		d.Boxes[bi].Label = fmt.Sprintf("pod %d", g+1)
	}

	// Hosts boxes: a CA goes with the first switch it is cabled to (its
	// leaf, or the pod of its leaf); CAs on no switch share one box.
	hostBox := map[int]int{} // switch box -> hosts box
	loose := -1
	for _, n := range f.Nodes {
		if n.Type == mad.NodeSwitch {
			continue
		}
		sb := -1
		for _, p := range n.Ports {
			if p != nil && p.Remote != nil && p.Remote.Node.Type == mad.NodeSwitch {
				sb = d.boxOf[p.Remote.Node]
				break
			}
		}
		var hb int
		if sb >= 0 && !checks.IsHost(n) && d.Boxes[sb].Kind == Switch && tiers[d.Boxes[sb].Switches[0]] != 0 {
			// A built-in CA (an Aggregation Node) of a switch that is no
			// leaf is drawn as part of its switch.
			d.Boxes[sb].Members = append(d.Boxes[sb].Members, n)
			d.Boxes[sb].Others++
			d.boxOf[n] = sb
			continue
		}
		if sb < 0 {
			if loose < 0 {
				loose = len(d.Boxes)
				d.Boxes = append(d.Boxes, Box{Kind: Hosts, Label: "not on a switch", Row: hostRow, Group: -1, Under: -1, W: d.BoxW, H: HostH})
			}
			hb = loose
		} else {
			var ok bool
			if hb, ok = hostBox[sb]; !ok {
				hb = len(d.Boxes)
				hostBox[sb] = hb
				d.Boxes = append(d.Boxes, Box{Kind: Hosts, Row: hostRow, Group: d.Boxes[sb].Group, Under: sb, W: d.BoxW, H: HostH})
			}
		}
		d.Boxes[hb].Members = append(d.Boxes[hb].Members, n)
		d.boxOf[n] = hb
	}
	for i := range d.Boxes {
		b := &d.Boxes[i]
		if b.Kind != Hosts {
			continue
		}
		// Hosts first, then built-in CAs and routers.
		slices.SortStableFunc(b.Members, func(x, y *fabric.Node) int {
			return cmp.Compare(hostRank(x), hostRank(y))
		})
		// A host is a machine, not an adapter: a DGX's 8 HCAs
		// ("gpu001 mlx5_0".."mlx5_7") are one host (checks.HostOf); an
		// adapter whose description names no host counts as one.
		hcas := 0
		names := map[string]bool{}
		for _, m := range b.Members {
			if checks.IsHost(m) {
				hcas++
				if h := checks.HostOf(m); h != "" {
					names[fabric.HostKey(h)] = true // GPU001 is gpu001 (review R6b)
				} else {
					names[fmt.Sprintf("0x%016x", m.GUID)] = true
				}
			}
		}
		b.Others = len(b.Members) - hcas
		if b.Label == "" {
			b.Label = fmt.Sprintf("%d hosts", len(names))
		}
	}

	// Bundles: one per pair of boxes; a cable inside one box is internal.
	pair := map[[2]int]int{}
	for _, l := range f.Links() {
		a, b := d.boxOf[l.A.Node], d.boxOf[l.B.Node]
		if a == b {
			d.Boxes[a].Internal = append(d.Boxes[a].Internal, l)
			continue
		}
		if d.Boxes[a].Row > d.Boxes[b].Row || (d.Boxes[a].Row == d.Boxes[b].Row && a > b) {
			a, b = b, a
			l.A, l.B = l.B, l.A
		}
		k := [2]int{a, b}
		bi, ok := pair[k]
		if !ok {
			bi = len(d.Bundles)
			pair[k] = bi
			d.Bundles = append(d.Bundles, Bundle{A: a, B: b})
		}
		d.Bundles[bi].Cables = append(d.Bundles[bi].Cables, l)
		d.bundleOf[l.A], d.bundleOf[l.B] = bi, bi
	}
	d.place()
	return d
}

func hostRank(n *fabric.Node) int {
	if checks.IsHost(n) {
		return 0
	}
	return 1
}

func tierName(t, top int) string {
	switch {
	case t == 0:
		return "leaf"
	case t == top && t >= 2:
		return "core"
	case t == 1:
		return "spine"
	}
	return fmt.Sprintf("tier %d", t)
}

// podsOf groups the switches below the top tier into pods: the connected
// sets of switches of tiers 0..top-1 (a 3-level fat tree's pods). Nil when
// that does not split the fabric into several multi-switch groups (a
// 2-level tree, where every leaf would be its own pod).
func podsOf(f *fabric.Fabric, tiers map[*fabric.Node]int, top int) map[*fabric.Node]int {
	if top < 2 {
		return nil
	}
	pod := map[*fabric.Node]int{}
	n := 0
	for _, s := range f.Nodes {
		if s.Type != mad.NodeSwitch || tiers[s] < 0 || tiers[s] >= top {
			continue
		}
		if _, ok := pod[s]; ok {
			continue
		}
		pod[s] = n
		q := []*fabric.Node{s}
		for len(q) > 0 {
			c := q[0]
			q = q[1:]
			for _, p := range c.Ports {
				if p == nil || p.Num == 0 || !checks.InterSwitch(p) {
					continue
				}
				r := p.Remote.Node
				if _, seen := pod[r]; seen || tiers[r] < 0 || tiers[r] >= top {
					continue
				}
				pod[r] = n
				q = append(q, r)
			}
		}
		n++
	}
	if n < 2 {
		return nil
	}
	return pod
}

// name is a node's description, or its GUID when it has none.
func name(n *fabric.Node) string {
	if n.Description != "" {
		return n.Description
	}
	return fmt.Sprintf("0x%016x", n.GUID)
}

// place gives every box its position. The bottom switch row (leaves, or
// pods) is ordered by pod and name, each hosts box sits under its switch,
// and every upper row is ordered by the mean position of the boxes it is
// cabled to below, then spread evenly across the width: boxes of a row
// never overlap, and parallel structure (a pod's spines over its leaves)
// lines up.
func (d *Drawing) place() {
	byRow := make([][]int, len(d.Rows))
	for i, b := range d.Boxes {
		byRow[b.Row] = append(byRow[b.Row], i)
	}
	hostRow := len(d.Rows) - 1
	// A row far wider than every other (a 50k fabric's 1,024 cores over
	// its 44 pods) wraps onto several lines as wide as the next widest
	// row, so the drawing keeps a shape one can look at.
	d.perLine = make([]int, len(d.Rows))
	widest := 0
	for r := range byRow {
		others := 0
		for o := range byRow {
			if o != r {
				others = max(others, len(byRow[o]))
			}
		}
		d.perLine[r] = len(byRow[r])
		if line := max(wrapMin, others); len(byRow[r]) > 2*line {
			d.perLine[r] = line
		}
		widest = max(widest, d.perLine[r])
	}
	d.Width = 2*Margin + float64(widest)*(d.BoxW+Gap) - Gap
	rowH := func(r int) float64 {
		h := BoxH
		for _, i := range byRow[r] {
			h = max(h, d.Boxes[i].H)
		}
		return h
	}
	y := Margin
	for r := range d.Rows {
		d.Rows[r].Y = y
		for _, i := range byRow[r] {
			d.Boxes[i].Y = y
		}
		lines := 1
		if d.perLine[r] > 0 {
			lines = (len(byRow[r]) + d.perLine[r] - 1) / d.perLine[r]
		}
		y += float64(lines)*(rowH(r)+Gap) - Gap + RowGap
	}
	d.Height = y - RowGap + Margin

	// The bottom switch row first, in pod then name order.
	base := hostRow - 1
	for base >= 0 && len(byRow[base]) == 0 {
		base--
	}
	xOf := map[int]float64{} // box centre
	if base >= 0 {
		slices.SortStableFunc(byRow[base], func(a, b int) int {
			return cmp.Or(cmp.Compare(d.Boxes[a].Group, d.Boxes[b].Group), words.Natural(d.Boxes[a].Label, d.Boxes[b].Label))
		})
		d.spread(byRow[base], xOf)
	}
	// Upper rows by barycentre of their neighbours below (and placed
	// rows in general), bottom up.
	nbrs := make([][]int, len(d.Boxes))
	for _, b := range d.Bundles {
		nbrs[b.A] = append(nbrs[b.A], b.B)
		nbrs[b.B] = append(nbrs[b.B], b.A)
	}
	for r := base - 1; r >= 0; r-- {
		bary := map[int]float64{}
		for _, i := range byRow[r] {
			sum, c := 0.0, 0
			for _, j := range nbrs[i] {
				if x, ok := xOf[j]; ok {
					sum += x
					c++
				}
			}
			if c > 0 {
				bary[i] = sum / float64(c)
			} else {
				bary[i] = d.Width // unconnected boxes to the right
			}
		}
		slices.SortStableFunc(byRow[r], func(a, b int) int {
			return cmp.Or(cmp.Compare(bary[a], bary[b]), words.Natural(d.Boxes[a].Label, d.Boxes[b].Label))
		})
		d.spread(byRow[r], xOf)
	}
	// Hosts boxes under their switch box; the box of CAs on no switch to
	// the right of everything.
	for _, i := range byRow[hostRow] {
		if u := d.Boxes[i].Under; u >= 0 {
			d.Boxes[i].X = xOf[u] - d.Boxes[i].W/2
		} else {
			d.Boxes[i].X = d.Width - Margin + Gap
			d.Width += d.Boxes[i].W + Gap
		}
	}
	// Pods' extents, from their boxes.
	for _, b := range d.Boxes {
		if b.Group < 0 {
			continue
		}
		for len(d.Groups) <= b.Group {
			d.Groups = append(d.Groups, Span{X: -1})
		}
		s := &d.Groups[b.Group]
		if s.X < 0 {
			s.X, s.W, s.Y, s.H = b.X, b.W, b.Y, b.H
			continue
		}
		right, bottom := max(s.X+s.W, b.X+b.W), max(s.Y+s.H, b.Y+b.H)
		s.X, s.Y = min(s.X, b.X), min(s.Y, b.Y)
		s.W, s.H = right-s.X, bottom-s.Y
	}
}

// spread places the boxes of one row in the given order, evenly across
// the drawing's width, centred in equal slots (a slot is at least a box
// and a gap wide, so boxes never overlap).
func (d *Drawing) spread(ids []int, xOf map[int]float64) {
	if len(ids) == 0 {
		return
	}
	per := len(ids)
	if r := d.Boxes[ids[0]].Row; d.perLine[r] > 0 && d.perLine[r] < per {
		per = d.perLine[r] // a wrapped row: line by line
	}
	slot := (d.Width - 2*Margin + Gap) / float64(per)
	for k, i := range ids {
		line, pos := k/per, k%per
		c := Margin - Gap/2 + slot*(float64(pos)+0.5)
		d.Boxes[i].X = c - d.Boxes[i].W/2
		d.Boxes[i].Y = d.Rows[d.Boxes[i].Row].Y + float64(line)*(d.Boxes[i].H+Gap)
		xOf[i] = c
	}
}
