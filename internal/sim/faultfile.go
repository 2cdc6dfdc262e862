package sim

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Fault is one line of a faults file (docs/faults.md): a keyword,
// positional arguments (node and port references) and key=value options.
type Fault struct {
	Line int
	Kind string
	Args []string
	Opts []Opt
}

// Opt is a key=value option of a Fault, in file order.
type Opt struct{ Key, Value string }

func (f Fault) opt(key string) (string, bool) {
	for _, o := range f.Opts {
		if strings.EqualFold(o.Key, key) {
			return o.Value, true
		}
	}
	return "", false
}

func (f Fault) String() string {
	var b strings.Builder
	b.WriteString(f.Kind)
	for _, a := range f.Args {
		b.WriteByte(' ')
		if a == "" || strings.ContainsAny(a, blanks+"#=\"") {
			b.WriteString(`"` + a + `"`)
		} else {
			b.WriteString(a)
		}
	}
	for _, o := range f.Opts {
		b.WriteByte(' ')
		b.WriteString(o.Key)
		b.WriteByte('=')
		if strings.ContainsAny(o.Value, blanks+"#\"") {
			b.WriteString(`"` + o.Value + `"`)
		} else {
			b.WriteString(o.Value)
		}
	}
	return b.String()
}

// faultKinds lists every keyword with how many node/port references it
// takes (-1: one reference that may contain spaces) and which options it
// requires or allows.
var faultKinds = map[string]struct {
	refs     int
	required []string
	allowed  []string
	anyOpt   bool // counter: NAME=VALUE options
}{
	"degrade":   {refs: -1, allowed: []string{"width", "speed"}},
	"limit":     {refs: -1, allowed: []string{"width", "speed"}},
	"down":      {refs: -1},
	"polling":   {refs: -1},
	"training":  {refs: -1},
	"init":      {refs: -1},
	"armed":     {refs: -1},
	"counter":   {refs: -1, anyOpt: true},
	"lft":       {refs: -1, allowed: []string{"dlid", "port", "behind", "uplinks-to"}},
	"blackhole": {refs: -1, required: []string{"dlid"}},
	"loop":      {refs: 2, required: []string{"dlid"}},
	"asym":      {refs: 2},
	"dead":      {refs: -1},
	"flaky":     {refs: -1, required: []string{"answer"}},
	"drop":      {refs: -1, required: []string{"attr"}},
	"refuse":    {refs: -1, required: []string{"attr"}},
	"loss":      {refs: 0, required: []string{"share"}},
	"dupguid":   {refs: 2},
	"miswire":   {refs: 2},
	"traffic":   {refs: -1, required: []string{"rate"}, allowed: []string{"hosts", "stride"}},
	"sweep":     {refs: 0},
	"nosm":      {refs: 0},
	"lid":       {refs: -1, allowed: []string{"lid", "lmc"}},
	"desc":      {refs: -1, required: []string{"text"}},
	"mtu":       {refs: -1, required: []string{"mtu"}},
	"vls":       {refs: -1, required: []string{"vls"}},
	"revision":  {refs: -1, required: []string{"rev"}},
	"firmware":  {refs: -1, required: []string{"version"}},
	"skew":      {refs: -1, required: []string{"port"}},
	"sm":        {refs: -1, required: []string{"state"}, allowed: []string{"priority"}},
	"pkey":      {refs: -1, allowed: []string{"keys", "enforce"}},
	"mkey":      {refs: -1, required: []string{"protect"}, allowed: []string{"lease"}},
	"sl2vl":     {refs: -1, required: []string{"map"}},
	"ar":        {refs: -1, allowed: []string{"sls"}},
}

// ParseFaults reads a faults file: one fault per line, '#' starts a
// comment, blank lines are skipped. It checks the syntax only; names are
// resolved when the faults are applied to a Sim.
func ParseFaults(r io.Reader) ([]Fault, error) {
	var out []Fault
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		toks, err := tokenize(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if len(toks) == 0 {
			continue
		}
		f := Fault{Line: line, Kind: strings.ToLower(toks[0].s)}
		k, ok := faultKinds[f.Kind]
		if !ok {
			return nil, fmt.Errorf("line %d: unknown fault %q (one of degrade, limit, down, polling, counter, lft, blackhole, loop, asym, dead, flaky, dupguid, miswire, traffic, sweep, nosm, sm, drop, refuse, loss, lid, desc, mtu, vls, revision, firmware, skew, pkey, mkey, sl2vl, ar)", line, toks[0].s)
		}
		for _, t := range toks[1:] {
			if key, val, isOpt := strings.Cut(t.s, "="); isOpt && !t.quoted && key != "" {
				f.Opts = append(f.Opts, Opt{Key: key, Value: val})
				continue
			}
			if len(f.Opts) > 0 {
				return nil, fmt.Errorf("line %d: %q after options: put node names before key=value options", line, t.s)
			}
			if strings.TrimSpace(t.s) == "" {
				return nil, fmt.Errorf("line %d: empty name", line)
			}
			f.Args = append(f.Args, t.s)
		}
		if f.Kind == "traffic" {
			if len(f.Args) != 1 {
				return nil, fmt.Errorf("line %d: traffic takes one pattern (ring-allreduce, pairs, all-to-all)", line)
			}
			if _, err := parsePattern(f.Args[0]); err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
		} else if k.refs == 0 {
			if len(f.Args) != 0 {
				return nil, fmt.Errorf("line %d: %s takes no node or port", line, f.Kind)
			}
		} else if len(f.Args) == 0 {
			return nil, fmt.Errorf("line %d: %s needs a node or port", line, f.Kind)
		}
		if k.refs == 2 && len(f.Args) < 2 {
			return nil, fmt.Errorf("line %d: %s needs two nodes or ports (quote names with spaces)", line, f.Kind)
		}
		for _, req := range k.required {
			if _, ok := f.opt(req); !ok {
				return nil, fmt.Errorf("line %d: %s needs %s=", line, f.Kind, req)
			}
		}
		if !k.anyOpt {
			for _, o := range f.Opts {
				if !contains(k.required, o.Key) && !contains(k.allowed, o.Key) {
					return nil, fmt.Errorf("line %d: %s does not take %s=", line, f.Kind, o.Key)
				}
			}
		} else if len(f.Opts) == 0 {
			return nil, fmt.Errorf("line %d: counter needs NAME=VALUE (e.g. SymbolErrorCounter=+50/s)", line)
		}
		if err := checkFaultValues(f); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		out = append(out, f)
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, fmt.Errorf("line %d: longer than 1 MiB: not a faults file; give one fault per line (docs/faults.md)", line+1)
	} else if err != nil {
		return nil, fmt.Errorf("reading: %w", err)
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// blanks separate words in a faults file (ASCII only).
const blanks = " \t\r\v\f"

func isBlank(c byte) bool { return strings.IndexByte(blanks, c) >= 0 }

type token struct {
	s      string
	quoted bool // the token began with a quote: never an option
}

// tokenize splits a line on blanks; "double quotes" keep blanks, '#'
// outside quotes ends the line. key="a b" is an option with a quoted
// value; "a=b" is a quoted word.
func tokenize(line string) ([]token, error) {
	var toks []token
	var cur strings.Builder
	in, inQuote, quoted := false, false, false
	flush := func() {
		if in {
			toks = append(toks, token{cur.String(), quoted})
		}
		cur.Reset()
		in, quoted = false, false
	}
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case inQuote:
			if ch == '"' {
				inQuote = false
			} else {
				cur.WriteByte(ch)
			}
		case ch == '"':
			if !in {
				quoted = true
			}
			inQuote, in = true, true
		case ch == '#':
			flush()
			return toks, nil
		case isBlank(ch):
			flush()
		default:
			cur.WriteByte(ch)
			in = true
		}
	}
	if inQuote {
		return nil, fmt.Errorf("unterminated quote")
	}
	flush()
	return toks, nil
}

func parsePattern(s string) (Pattern, error) {
	switch strings.ToLower(s) {
	case "ring-allreduce", "ring", "allreduce":
		return RingAllReduce, nil
	case "pairs":
		return Pairs, nil
	case "all-to-all", "alltoall":
		return AllToAll, nil
	}
	return 0, fmt.Errorf("unknown traffic pattern %q (ring-allreduce, pairs, all-to-all)", s)
}

func parseWidth(s string) (mad.Width, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1x":
		return mad.Width1X, nil
	case "2x":
		return mad.Width2X, nil
	case "4x":
		return mad.Width4X, nil
	case "8x":
		return mad.Width8X, nil
	case "12x":
		return mad.Width12X, nil
	}
	return 0, fmt.Errorf("width %q: want 1x, 2x, 4x, 8x or 12x", s)
}

// parseCounterValue parses "1200" (set), "+50" (add once), "+50/s" or
// "50/s" (grow per second).
func parseCounterValue(v string) (set, add uint64, rate float64, kind byte, err error) {
	v = strings.TrimSpace(v)
	if r, ok := strings.CutSuffix(v, "/s"); ok {
		rate, err = strconv.ParseFloat(strings.TrimPrefix(r, "+"), 64)
		if err != nil || !(rate >= 0 && rate <= 1e12) {
			return 0, 0, 0, 0, fmt.Errorf("counter rate %q: want 0 to 1e12 per second, e.g. +50/s", v)
		}
		return 0, 0, rate, 'r', nil
	}
	if a, ok := strings.CutPrefix(v, "+"); ok {
		add, err = strconv.ParseUint(a, 10, 64)
		if err != nil {
			return 0, 0, 0, 0, fmt.Errorf("counter increment %q: want e.g. +50", v)
		}
		return 0, add, 0, 'a', nil
	}
	set, err = strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, 0, 0, 0, fmt.Errorf("counter value %q: want a number, +N, or +N/s", v)
	}
	return set, 0, 0, 's', nil
}

func parseShare(v string) (float64, error) {
	pct := strings.HasSuffix(v, "%")
	x, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("answer share %q: want e.g. 70%% or 0.7", v)
	}
	if pct {
		x /= 100
	}
	// Without %, 1.5 is neither a share nor (silently) 1.5%.
	if x <= 0 || x > 1 {
		return 0, fmt.Errorf("answer share %q must be above 0 and at most 100%%", v)
	}
	return x, nil
}

// parseLoss reads a loss share: "20%" or "0.2", at least 0, below 100%.
func parseLoss(v string) (float64, error) {
	pct := strings.HasSuffix(v, "%")
	x, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("loss share %q: want e.g. 20%% or 0.2", v)
	}
	if pct {
		x /= 100
	}
	if x < 0 || x >= 1 {
		return 0, fmt.Errorf("loss share %q must be at least 0 and below 100%% (0.2 or 20%%)", v)
	}
	return x, nil
}

func checkAttr(v string) error {
	for _, a := range droppable {
		if strings.EqualFold(a, v) {
			return nil
		}
	}
	return fmt.Errorf("attr %q: want one of %s", v, strings.Join(droppable, ", "))
}

func parseRate(v string) (float64, error) {
	t := strings.ToLower(strings.TrimSpace(v))
	for _, suf := range []string{"gb/s", "gbps", "gbit/s", "g"} {
		if x, ok := strings.CutSuffix(t, suf); ok {
			t = x
			break
		}
	}
	x, err := strconv.ParseFloat(t, 64)
	if err != nil || !(x > 0 && x <= 100000) {
		return 0, fmt.Errorf("rate %q: want Gb/s above 0 and at most 100000, e.g. 200 or 200Gbps", v)
	}
	return x, nil
}

func parsePortNum(v string) (uint8, error) {
	if strings.EqualFold(v, "none") {
		return fabric.NoRoute, nil
	}
	n, err := strconv.ParseUint(v, 10, 8)
	if err != nil {
		return 0, fmt.Errorf("port %q: want 0..254 or none", v)
	}
	return uint8(n), nil
}

// checkFaultValues validates the values that need no fabric.
func checkFaultValues(f Fault) error {
	for _, o := range f.Opts {
		var err error
		switch strings.ToLower(o.Key) {
		case "width":
			_, err = parseWidth(o.Value)
		case "speed":
			_, err = mad.ParseSpeed(o.Value)
		case "port", "uplinks-to":
			_, err = parsePortNum(o.Value)
		case "answer":
			_, err = parseShare(o.Value)
		case "share":
			_, err = parseLoss(o.Value)
		case "attr":
			err = checkAttr(o.Value)
		case "rate":
			_, err = parseRate(o.Value)
		case "stride":
			var n int
			if n, err = strconv.Atoi(o.Value); err != nil || n < 1 || n > 1<<20 {
				err = fmt.Errorf("stride %q: want a whole number from 1 to %d", o.Value, 1<<20)
			}
		case "mtu":
			_, err = parseMTU(o.Value)
		case "keys":
			_, err = parsePKeys(o.Value)
		case "map":
			_, err = parseSLtoVL(o.Value)
		case "enforce":
			_, err = parseOnOff(o.Value)
		case "protect":
			if v, e := strconv.Atoi(o.Value); e != nil || v < 0 || v > 3 {
				err = fmt.Errorf("protect=%s: want M_Key protection bits 0..3", o.Value)
			}
		case "lease":
			_, err = strconv.ParseUint(o.Value, 0, 16)
		case "rev":
			_, err = strconv.ParseUint(o.Value, 0, 32)
		case "vls":
			if v, e := strconv.Atoi(o.Value); e != nil || v < 1 || v > 5 {
				err = fmt.Errorf("vls=%s: want a VL code 1..5 (VL0, VL0-1, VL0-3, VL0-7, VL0-14)", o.Value)
			}
		case "lid", "lmc":
			if v, e := strconv.ParseUint(o.Value, 0, 16); e != nil || (o.Key == "lmc" && v > 7) || v >= 0xc000 {
				err = fmt.Errorf("%s=%s: want a unicast LID (0..0xbfff) or an LMC (0..7)", o.Key, o.Value)
			}
		case "priority":
			if v, e := strconv.Atoi(o.Value); e != nil || v < 0 || v > 15 {
				err = fmt.Errorf("priority=%s: want 0..15", o.Value)
			}
		case "state":
			if _, ok := smStateWords[strings.ToLower(o.Value)]; !ok && !strings.EqualFold(o.Value, "stalled") && !strings.EqualFold(o.Value, "gone") {
				err = fmt.Errorf("state=%s: want master, standby, discovering, notactive, stalled or gone", o.Value)
			}
		default:
			if f.Kind == "counter" {
				if _, err = counterByName(o.Key); err == nil {
					_, _, _, _, err = parseCounterValue(o.Value)
				}
			}
		}
		if err != nil {
			return err
		}
	}
	if f.Kind == "degrade" || f.Kind == "limit" {
		if _, w := f.opt("width"); !w {
			if _, s := f.opt("speed"); !s {
				return fmt.Errorf("%s needs width= and/or speed=", f.Kind)
			}
		}
	}
	if f.Kind == "lft" {
		_, d := f.opt("dlid")
		_, b := f.opt("behind")
		_, u := f.opt("uplinks-to")
		_, p := f.opt("port")
		switch {
		case u && !d && !b && !p:
		case (d != b) && p && !u:
		default:
			return fmt.Errorf("lft takes dlid=LIDS port=P, behind=NODE port=P, or uplinks-to=P")
		}
	}
	return nil
}

// ApplyFaultsFile reads and applies a faults file.
func (s *Sim) ApplyFaultsFile(path string) error {
	_, err := s.applyFaultsFile(path)
	return err
}

// ApplyFaultsFileRoutes is ApplyFaultsFile, and reports whether a fault
// edited forwarding tables (lft, blackhole, loop, asym, sweep): the
// tables are then planted, no longer ibdoctor's own computed ones.
func (s *Sim) ApplyFaultsFileRoutes(path string) (editedRoutes bool, err error) {
	return s.applyFaultsFile(path)
}

func (s *Sim) applyFaultsFile(path string) (bool, error) {
	// The caller names the file (--faults FILE): errors here say only
	// where in it and what.
	f, err := os.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return false, pe.Err
		}
		return false, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return false, errors.New("a directory: give a faults file, one fault per line (docs/faults.md)")
	}
	// A binary file (or /dev/zero) is refused from its first bytes,
	// before a line-by-line parse reads a megabyte of it.
	br := bufio.NewReaderSize(f, 64<<10)
	if head, _ := br.Peek(64 << 10); bytes.IndexByte(head, 0) >= 0 {
		return false, errors.New("binary data (a NUL byte): not a faults file; give a text file, one fault per line (docs/faults.md)")
	}
	faults, err := ParseFaults(br)
	if err != nil {
		return false, err
	}
	if err := s.ApplyFaults(faults); err != nil {
		return false, err
	}
	for _, f := range faults {
		switch f.Kind {
		case "lft", "blackhole", "loop", "asym", "sweep":
			return true, nil
		}
	}
	return false, nil
}

// ApplyFaults applies parsed faults in order. It stops at the first one
// that does not apply (unknown name, impossible change).
func (s *Sim) ApplyFaults(fs []Fault) error {
	for _, f := range fs {
		if err := s.applyFault(f); err != nil {
			return fmt.Errorf("line %d (%s): %w", f.Line, f.Kind, faultError{err})
		}
		s.mu.Lock()
		if s.planted == nil {
			s.planted = map[string]bool{}
		}
		s.planted[f.Kind] = true
		s.mu.Unlock()
	}
	return nil
}

// Planted reports whether a fault of one of kinds ("mtu", "sm", ...) was
// applied: on a fabric file that records no such data, what the
// simulator answers for it is then a what-if, not its default.
func (s *Sim) Planted(kinds ...string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, k := range kinds {
		if s.planted[k] {
			return true
		}
	}
	return false
}

// faultError is an error a fault of a file caused, without this package's
// "sim: " prefix: its reader knows the simulator is meant, and wants the
// line and the reason.
type faultError struct{ err error }

func (e faultError) Error() string { return strings.TrimPrefix(e.err.Error(), "sim: ") }
func (e faultError) Unwrap() error { return e.err }

// oneRef joins the positional words of a single-reference fault: node
// descriptions may contain blanks ("gpu012 mlx5_0/1").
func oneRef(f Fault) string { return strings.Join(f.Args, " ") }

// twoRefs splits the positional words of a two-reference fault at the
// one point where both halves name something.
func (s *Sim) twoRefs(f Fault, port bool) (string, string, error) {
	if len(f.Args) == 2 {
		return f.Args[0], f.Args[1], nil
	}
	ok := func(ref string) bool {
		s.mu.RLock()
		defer s.mu.RUnlock()
		if port {
			_, _, err := s.resolvePort(ref)
			return err == nil
		}
		_, err := s.resolveNode(ref)
		return err == nil
	}
	var found [][2]string
	for i := 1; i < len(f.Args); i++ {
		a, b := strings.Join(f.Args[:i], " "), strings.Join(f.Args[i:], " ")
		if ok(a) && ok(b) {
			found = append(found, [2]string{a, b})
		}
	}
	if len(found) != 1 {
		return "", "", fmt.Errorf("cannot tell the two names apart in %q: quote them", strings.Join(f.Args, " "))
	}
	return found[0][0], found[0][1], nil
}

// lidSpec parses dlid=: "57", "57-64", or a node name (its LIDs).
func (s *Sim) lidSpec(v string) ([]uint16, error) {
	if a, b, ok := strings.Cut(v, "-"); ok {
		lo, e1 := strconv.ParseUint(a, 10, 16)
		hi, e2 := strconv.ParseUint(b, 10, 16)
		if e1 == nil && e2 == nil {
			if lo == 0 || hi < lo || hi > 0xbfff {
				return nil, fmt.Errorf("LID range %q: want 1..49151, low to high", v)
			}
			var l []uint16
			for x := lo; x <= hi; x++ {
				l = append(l, uint16(x))
			}
			return l, nil
		}
	}
	if n, err := strconv.ParseUint(v, 10, 16); err == nil {
		if n == 0 || n > 0xbfff {
			return nil, fmt.Errorf("LID %d is not a unicast LID (1..49151)", n)
		}
		return []uint16{uint16(n)}, nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	ni, err := s.resolveNode(v)
	if err != nil {
		return nil, fmt.Errorf("dlid=%s: not a LID, a range or a node: %w", v, err)
	}
	l := s.lidsOf(ni, false)
	if len(l) == 0 {
		return nil, fmt.Errorf("dlid=%s: that node has no LID", v)
	}
	return l, nil
}

func (s *Sim) applyFault(f Fault) error {
	ref := oneRef(f)
	switch f.Kind {
	case "degrade", "limit":
		var w mad.Width
		var sp mad.Speed
		if v, ok := f.opt("width"); ok {
			w, _ = parseWidth(v)
		}
		if v, ok := f.opt("speed"); ok {
			sp, _ = mad.ParseSpeed(v)
		}
		if f.Kind == "limit" {
			return s.Limit(ref, w, sp)
		}
		return s.Degrade(ref, w, sp)
	case "down":
		return s.Down(ref)
	case "polling":
		return s.Polling(ref)
	case "training":
		return s.Training(ref)
	case "init":
		return s.NotActive(ref, mad.PortStateInit)
	case "armed":
		return s.NotActive(ref, mad.PortStateArmed)
	case "counter":
		for _, o := range f.Opts {
			set, add, rate, kind, _ := parseCounterValue(o.Value)
			var err error
			switch kind {
			case 's':
				err = s.SetCounter(ref, o.Key, set)
			case 'a':
				err = s.AddCounter(ref, o.Key, add)
			case 'r':
				err = s.CounterRate(ref, o.Key, rate)
			}
			if err != nil {
				return err
			}
		}
		return nil
	case "lft":
		if v, ok := f.opt("uplinks-to"); ok {
			p, _ := parsePortNum(v)
			return s.UplinksTo(ref, p)
		}
		pv, _ := f.opt("port")
		p, _ := parsePortNum(pv)
		if v, ok := f.opt("behind"); ok {
			return s.RouteBehind(ref, v, p)
		}
		v, _ := f.opt("dlid")
		lids, err := s.lidSpec(v)
		if err != nil {
			return err
		}
		return s.setRoutesRef(ref, lids, p)
	case "blackhole":
		v, _ := f.opt("dlid")
		lids, err := s.lidSpec(v)
		if err != nil {
			return err
		}
		return s.setRoutesRef(ref, lids, fabric.NoRoute)
	case "loop":
		a, b, err := s.twoRefs(f, false)
		if err != nil {
			return err
		}
		v, _ := f.opt("dlid")
		lids, err := s.lidSpec(v)
		if err != nil {
			return err
		}
		for _, l := range lids {
			if err := s.Loop(a, b, l); err != nil {
				return err
			}
		}
		return nil
	case "asym":
		a, b, err := s.twoRefs(f, true)
		if err != nil {
			return err
		}
		return s.Asymmetric(a, b)
	case "dead":
		return s.Kill(ref)
	case "flaky":
		v, _ := f.opt("answer")
		x, _ := parseShare(v)
		return s.Flaky(ref, x)
	case "drop":
		v, _ := f.opt("attr")
		return s.Drop(ref, v)
	case "refuse":
		v, _ := f.opt("attr")
		return s.Refuse(ref, v)
	case "loss":
		v, _ := f.opt("share")
		x, _ := parseLoss(v)
		return s.Loss(x)
	case "dupguid":
		a, b, err := s.twoRefs(f, false)
		if err != nil {
			return err
		}
		return s.DuplicateGUID(a, b)
	case "miswire":
		a, b, err := s.twoRefs(f, true)
		if err != nil {
			return err
		}
		return s.Miswire(a, b)
	case "sweep":
		return s.Sweep()
	case "nosm":
		s.NoSM()
		return nil
	case "lid":
		lid, lmc := -1, -1
		if v, ok := f.opt("lid"); ok {
			x, _ := strconv.ParseUint(v, 0, 16)
			lid = int(x)
		}
		if v, ok := f.opt("lmc"); ok {
			x, _ := strconv.ParseUint(v, 0, 8)
			lmc = int(x)
		}
		if lid < 0 && lmc < 0 {
			return fmt.Errorf("lid needs lid= and/or lmc=")
		}
		return s.SetLID(ref, lid, lmc)
	case "desc":
		v, _ := f.opt("text")
		return s.SetDescription(ref, v)
	case "mtu":
		v, _ := f.opt("mtu")
		m, _ := parseMTU(v)
		return s.SetMTU(ref, m)
	case "mkey":
		v, _ := f.opt("protect")
		protect, _ := strconv.Atoi(v)
		var lease uint64
		if v, ok := f.opt("lease"); ok {
			lease, _ = strconv.ParseUint(v, 0, 16)
		}
		return s.SetMKeyPolicy(ref, uint8(protect), uint16(lease))
	case "pkey":
		var keys []mad.PKey
		if v, ok := f.opt("keys"); ok {
			keys, _ = parsePKeys(v)
		}
		var enforce *bool
		if v, ok := f.opt("enforce"); ok {
			on, _ := parseOnOff(v)
			enforce = &on
		}
		if keys == nil && enforce == nil {
			return fmt.Errorf("pkey needs keys= and/or enforce=")
		}
		return s.SetPKeys(ref, keys, enforce)
	case "sl2vl":
		v, _ := f.opt("map")
		vl, _ := parseSLtoVL(v)
		return s.SetSLtoVL(ref, vl)
	case "skew":
		v, _ := f.opt("port")
		p, _ := parsePortNum(v)
		return s.Skew(ref, p)
	case "firmware":
		v, _ := f.opt("version")
		fw, err := parseFirmware(v)
		if err != nil {
			return err
		}
		return s.SetFirmware(ref, fw)
	case "ar":
		var sls uint64
		if v, ok := f.opt("sls"); ok {
			var err error
			if sls, err = strconv.ParseUint(v, 0, 16); err != nil || sls == 0 {
				return fmt.Errorf("sls=%s: want a 16-bit mask of service levels, e.g. sls=0x000f", v)
			}
		}
		return s.SetAR(ref, uint16(sls))
	case "revision":
		v, _ := f.opt("rev")
		x, _ := strconv.ParseUint(v, 0, 32)
		return s.SetRevision(ref, uint32(x))
	case "vls":
		v, _ := f.opt("vls")
		x, _ := strconv.Atoi(v)
		return s.SetVLs(ref, uint8(x))
	case "sm":
		st, _ := f.opt("state")
		prio := -1
		if v, ok := f.opt("priority"); ok {
			prio, _ = strconv.Atoi(v)
		}
		return s.SetSM(ref, st, prio)
	case "traffic":
		pat, _ := parsePattern(f.Args[0])
		rv, _ := f.opt("rate")
		rate, _ := parseRate(rv)
		t := Traffic{Pattern: pat, RateGbps: rate}
		if v, ok := f.opt("stride"); ok {
			t.Stride, _ = strconv.Atoi(v)
		}
		if v, ok := f.opt("hosts"); ok && v != "all" {
			hosts, err := s.hostList(v)
			if err != nil {
				return err
			}
			t.Hosts = hosts
		}
		_, err := s.AddTraffic(t)
		return err
	}
	return fmt.Errorf("unknown fault %q", f.Kind)
}

// setRoutesRef is SetRoute for several LIDs at once.
func (s *Sim) setRoutesRef(sw string, lids []uint16, port uint8) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ni, err := s.resolveSwitch(sw)
	if err != nil {
		return err
	}
	if err := s.setRoutes(ni, lids, port); err != nil {
		return err
	}
	s.rerouteLocked()
	return nil
}

// hostList expands hosts=: comma-separated names, where a name ending in
// '*' matches every CA whose description starts with the rest.
func (s *Sim) hostList(v string) ([]string, error) {
	var out []string
	for _, h := range strings.Split(v, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		prefix, glob := strings.CutSuffix(h, "*")
		if !glob {
			out = append(out, h)
			continue
		}
		s.mu.RLock()
		n0 := len(out)
		for i := range s.nodes {
			n := &s.nodes[i]
			if n.typ == mad.NodeSwitch || !strings.HasPrefix(n.desc, prefix) {
				continue
			}
			if len(s.byDesc[n.desc]) == 1 {
				out = append(out, n.desc)
			} else {
				out = append(out, fmt.Sprintf("0x%016x", n.guid))
			}
		}
		s.mu.RUnlock()
		if len(out) == n0 {
			return nil, fmt.Errorf("hosts=%s matches no CA", h)
		}
	}
	return out, nil
}

// parseMTU reads 256, 512, 1024, 2048 or 4096.
func parseMTU(v string) (mad.MTU, error) {
	for m := mad.MTU256; m <= mad.MTU4096; m++ {
		if v == strconv.Itoa(m.Bytes()) {
			return m, nil
		}
	}
	return 0, fmt.Errorf("mtu=%s: want 256, 512, 1024, 2048 or 4096", v)
}

// parsePKeys reads a comma-separated P_Key list ("0xffff,0x8001"; "none"
// for an empty table).
func parsePKeys(v string) ([]mad.PKey, error) {
	if strings.EqualFold(strings.TrimSpace(v), "none") {
		return []mad.PKey{}, nil
	}
	var out []mad.PKey
	for _, f := range strings.Split(v, ",") {
		x, err := strconv.ParseUint(strings.TrimSpace(f), 0, 16)
		if err != nil {
			return nil, fmt.Errorf("keys=%s: want P_Keys such as 0xffff,0x8001 (top bit: full member), or none", v)
		}
		out = append(out, mad.PKey(x))
	}
	return out, nil
}

func parseOnOff(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "on", "yes", "true", "1":
		return true, nil
	case "off", "no", "false", "0":
		return false, nil
	}
	return false, fmt.Errorf("enforce=%s: want on or off", v)
}

// parseFirmware reads a firmware version MAJOR.MINOR.SUBMINOR
// (28.39.1002), each a 32-bit number as GeneralInfo's extended fields.
func parseFirmware(v string) ([3]uint32, error) {
	var fw [3]uint32
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return fw, fmt.Errorf("version=%q: want MAJOR.MINOR.SUBMINOR, e.g. version=28.39.1002", v)
	}
	for i, p := range parts {
		x, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			return fw, fmt.Errorf("version=%q: %q is not a number (want MAJOR.MINOR.SUBMINOR, e.g. version=28.39.1002)", v, p)
		}
		fw[i] = uint32(x)
	}
	if fw == [3]uint32{} {
		return fw, fmt.Errorf("version=%q: 0.0.0 is no version", v)
	}
	return fw, nil
}

// parseSLtoVL reads the VLs of SL0..SL15, comma-separated
// ("0,1,2,3,4,5,6,7,0,1,2,3,4,5,6,7").
func parseSLtoVL(v string) ([16]uint8, error) {
	var out [16]uint8
	parts := strings.Split(v, ",")
	if len(parts) != len(out) {
		return out, fmt.Errorf("map=%s: want 16 comma-separated VLs, one per SL (SL0 first), e.g. 0,1,2,3,4,5,6,7,0,1,2,3,4,5,6,7", v)
	}
	for i, p := range parts {
		x, err := strconv.ParseUint(strings.TrimSpace(p), 10, 8)
		if err != nil || x > 15 {
			return out, fmt.Errorf("map=%s: SL%d's VL %q: want 0..15 (15 drops the SL)", v, i, p)
		}
		out[i] = uint8(x)
	}
	return out, nil
}
