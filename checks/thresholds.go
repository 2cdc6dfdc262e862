package checks

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Thresholds for counters.errors and counters.congestion. A counter is
// over its threshold when its value (or its increase over the interval)
// is strictly greater, as in ibqueryerrors.
type Thresholds struct {
	// Absolute thresholds apply to a single sample: the counts since the
	// counters were last cleared.
	Absolute map[string]uint64
	// Delta thresholds apply to the increase over a sampled interval.
	Delta map[string]uint64
	// Since thresholds apply to the growth since the previous sweep (a
	// sweep's or a gate's pairing with the saved counters): a span of
	// minutes to --max-age, not a sampled interval, so a link that went
	// down or retrained even once in it is reported (threshold 0).
	Since map[string]uint64
	// BER is the largest acceptable symbol-error bit error rate.
	BER float64
	// XmitWaitWarn is the share of time stalled that makes a congestion
	// warning (info below it, down to XmitWaitInfo).
	XmitWaitWarn, XmitWaitInfo float64
	// XmitWaitAbsolute is the absolute PortXmitWait count flagged when no
	// interval was sampled.
	XmitWaitAbsolute uint64
	// Utilization is the share of the link rate that makes a hot link.
	Utilization float64
}

// DefaultThresholds returns the built-in thresholds. The absolute ones are
// the values ibqueryerrors' shipped error_thresholds file suggests; the
// delta ones are ibdiagnet's (v1) defaults for a counter that grew during
// the pause between two reads; BER 1e-12 is the IBA target and ibdiagnet's
// default. docs/checks.md lists them.
func DefaultThresholds() *Thresholds {
	t := &Thresholds{
		Absolute: map[string]uint64{
			"SymbolErrorCounter":           10,
			"LinkErrorRecoveryCounter":     10,
			"LinkDownedCounter":            10,
			"PortRcvErrors":                10,
			"PortRcvRemotePhysicalErrors":  100,
			"PortRcvSwitchRelayErrors":     100,
			"PortXmitDiscards":             100,
			"PortXmitConstraintErrors":     100,
			"PortRcvConstraintErrors":      100,
			"LocalLinkIntegrityErrors":     10,
			"ExcessiveBufferOverrunErrors": 10,
			"VL15Dropped":                  100,
			"QP1Dropped":                   100,
		},
		Delta: map[string]uint64{
			"SymbolErrorCounter":           1,
			"LinkErrorRecoveryCounter":     1,
			"LinkDownedCounter":            1,
			"PortRcvErrors":                1,
			"PortRcvRemotePhysicalErrors":  10,
			"PortRcvSwitchRelayErrors":     100,
			"PortXmitDiscards":             10,
			"PortXmitConstraintErrors":     10,
			"PortRcvConstraintErrors":      10,
			"LocalLinkIntegrityErrors":     10,
			"ExcessiveBufferOverrunErrors": 10,
			"VL15Dropped":                  10,
			"QP1Dropped":                   10,
		},
		BER:              1e-12,
		XmitWaitWarn:     0.20,
		XmitWaitInfo:     0.05,
		XmitWaitAbsolute: 1000,
		Utilization:      0.90,
	}
	// Between two sweeps the per-interval thresholds hold but for the
	// link events: one link-down or one retrain in that span is the flap
	// that stalls (or kills) a job, and is worth a warning (trial T1).
	t.Since = maps.Clone(t.Delta)
	t.Since["LinkDownedCounter"] = 0
	t.Since["LinkErrorRecoveryCounter"] = 0
	return t
}

func binaryThresholds(why string) string {
	return "binary data (" + why + "), not a thresholds file: give a text file of Name=value lines (docs/checks.md)"
}

// ParseThresholds reads a thresholds file over the defaults. Lines are
// "Name=value" (an absolute threshold, the format of ibqueryerrors'
// error_thresholds file), "delta.Name=value" (per sampled interval),
// "since.Name=value" (growth since the previous sweep), or one of "ber",
// "xmitwait.warn", "xmitwait.info", "xmitwait.absolute", "utilization";
// '#' starts a comment.
func ParseThresholds(r io.Reader) (*Thresholds, error) {
	t := DefaultThresholds()
	// A delta. line also governs the growth since the previous sweep
	// unless the file gives that counter a since. line (in any order): a
	// site that raised delta.PortRcvErrors keeps it raised in sweeps and
	// gates, as before since. existed.
	deltaSet, sinceSet := map[string]bool{}, map[string]bool{}
	// The lines that set the two congestion levels (0: the default), to
	// name them when the pair is inverted.
	infoLine, warnLine := 0, 0
	// A binary file is said to be one, as --sim and --faults say it,
	// not echoed back as a line that is not Name=value (trial E9): a
	// NUL byte in its head, or a line that is no UTF-8 text.
	br := bufio.NewReaderSize(r, 64<<10)
	if head, _ := br.Peek(64 << 10); bytes.IndexByte(head, 0) >= 0 {
		at := bytes.Count(head[:bytes.IndexByte(head, 0)], []byte("\n")) + 1
		return nil, fmt.Errorf("thresholds line %d: %s", at, binaryThresholds("a NUL byte"))
	}
	sc := bufio.NewScanner(br)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if !utf8.ValidString(text) || strings.ContainsFunc(text, func(c rune) bool { return c < ' ' && c != '\t' || c == 0x7f }) {
			return nil, fmt.Errorf("thresholds line %d: %s", line, binaryThresholds("bytes that are no text"))
		}
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		text = strings.TrimSpace(text)
		if text == "" {
			continue
		}
		key, val, ok := strings.Cut(text, "=")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if !ok || key == "" || val == "" {
			return nil, fmt.Errorf("thresholds line %d: %q is not Name=value", line, text)
		}
		fail := func(err error) error {
			return fmt.Errorf("thresholds line %d: %s: %v", line, key, err)
		}
		switch strings.ToLower(key) {
		case "ber", "xmitwait.warn", "xmitwait.info", "utilization":
			f, err := strconv.ParseFloat(val, 64)
			// Each is a rate or a share: NaN or Inf would silently turn
			// the check off (NaN compares false) or on.
			if err != nil || !(f >= 0 && f <= 1) {
				return nil, fail(fmt.Errorf("want a number from 0 to 1 (a rate or a share of time), got %q", val))
			}
			switch strings.ToLower(key) {
			case "ber":
				t.BER = f
			case "xmitwait.warn":
				t.XmitWaitWarn, warnLine = f, line
			case "xmitwait.info":
				t.XmitWaitInfo, infoLine = f, line
			default:
				t.Utilization = f
			}
			continue
		}
		n, err := strconv.ParseUint(val, 0, 64)
		if err != nil {
			return nil, fail(fmt.Errorf("want a whole number, got %q", val))
		}
		switch {
		case strings.EqualFold(key, "xmitwait.absolute") || key == "PortXmitWait":
			t.XmitWaitAbsolute = n
		case strings.HasPrefix(key, "delta."):
			name := strings.TrimPrefix(key, "delta.")
			if err := setKnown(t.Delta, name, n); err != nil {
				return nil, fail(err)
			}
			deltaSet[name] = true
		case strings.HasPrefix(key, "since."):
			name := strings.TrimPrefix(key, "since.")
			if err := setKnown(t.Since, name, n); err != nil {
				return nil, fail(err)
			}
			sinceSet[name] = true
		default:
			if err := setKnown(t.Absolute, key, n); err != nil {
				return nil, fail(err)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading thresholds: %w", err)
	}
	if err := xmitWaitOrder(t, infoLine, warnLine); err != nil {
		return nil, err
	}
	for name := range deltaSet {
		if !sinceSet[name] {
			t.Since[name] = t.Delta[name]
		}
	}
	return t, nil
}

// xmitWaitOrder refuses an info level above the warning level: a share of
// time below the info level is not reported at all, so the pair would hide
// congestion above the warning level (trial B6).
func xmitWaitOrder(t *Thresholds, infoLine, warnLine int) error {
	if t.XmitWaitInfo <= t.XmitWaitWarn {
		return nil
	}
	where := func(line int) string {
		if line == 0 {
			return "the default"
		}
		return fmt.Sprintf("line %d", line)
	}
	const fix = "a share of time between them would be reported as nothing; lower xmitwait.info or raise xmitwait.warn"
	if infoLine != 0 {
		return fmt.Errorf("thresholds line %d: xmitwait.info %g is above xmitwait.warn %g (%s): %s", infoLine, t.XmitWaitInfo, t.XmitWaitWarn, where(warnLine), fix)
	}
	return fmt.Errorf("thresholds line %d: xmitwait.warn %g is below xmitwait.info %g (%s): %s", warnLine, t.XmitWaitWarn, t.XmitWaitInfo, where(infoLine), fix)
}

// setKnown sets m's threshold for a counter it already names; an
// unknown name is an error listing the known ones.
func setKnown(m map[string]uint64, name string, n uint64) error {
	if _, known := m[name]; !known {
		return fmt.Errorf("unknown counter (known: %s)", knownNames(m))
	}
	m[name] = n
	return nil
}

func knownNames(m map[string]uint64) string {
	keys := make([]string, 0, len(m))
	for k := range maps.Keys(m) {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return strings.Join(keys, ", ")
}
