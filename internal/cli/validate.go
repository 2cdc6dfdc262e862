package cli

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagRange is the valid range of a numeric flag: [min, max] in the
// flag's unit (seconds for durations); above says min itself is
// excluded.
type flagRange struct {
	min, max float64
	above    bool
}

// numericFlags bounds every numeric flag of every command, by name, so a
// value that parses but makes no sense (-o 0, --retries 1000000 on a dead
// node, --timeout 0, a NaN ratio) is refused before anything is sent.
// --max-age is the gate's own (a snapshot's age).
var numericFlags = map[string]flagRange{
	"outstanding":      {min: 1, max: 4096},
	"per-node":         {min: 1, max: 256},
	"timeout":          {min: 0.001, max: 300},
	"retries":          {min: 0, max: 20},
	"port":             {min: 0, max: 254},
	"sim-service-time": {min: 0, max: 1},
	"sim-hop-latency":  {min: 0, max: 1},
	"interval":         {min: 0, max: 86400},
	"lock-wait":        {min: 0, max: 86400},
	"detail":           {min: 0, max: 1000000},
	"max-hops":         {min: 0, max: 63},
	"budget":           {min: 0, max: 10000000},
	"oversubscription": {min: 0, max: 1000, above: true},
	"imbalance":        {min: 1, max: 1000},
	"sl":               {min: 0, max: 15},
	"pkey-index":       {min: 0, max: 32767},
}

// validateFlags checks every numeric flag of cmd (its own and inherited)
// against numericFlags; the error names the flag, the value and the range.
func validateFlags(cmd *cobra.Command) error {
	var err error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if err != nil {
			return
		}
		r, ok := numericFlags[f.Name]
		if !ok {
			return
		}
		if f.Name == "interval" && cmd.Name() == "top" {
			return // a refresh period: top checks it itself
		}
		err = checkRange(f, r)
	})
	if err != nil {
		return err
	}
	// Options of the simulator mean nothing to a real device or ibsim:
	// dropped without a word, a --faults scenario would seem to have
	// been tried on the real fabric.
	if sim := cmd.Flags().Lookup("sim"); sim != nil && !sim.Changed {
		for _, s := range []struct{ name, why string }{
			{"faults", "faults are injected into the simulator"},
			{"lfts", "the tables of a fabric file given with --sim=FILE"},
		} {
			if f := cmd.Flags().Lookup(s.name); f != nil && f.Changed {
				return fmt.Errorf("--%s needs --sim (%s)", s.name, s.why)
			}
		}
	}
	return nil
}

func checkRange(f *pflag.Flag, r flagRange) error {
	var v float64
	isDur := f.Value.Type() == "duration"
	if isDur {
		d, err := time.ParseDuration(f.Value.String())
		if err != nil {
			return nil // pflag has said so
		}
		v = d.Seconds()
	} else {
		x, err := strconv.ParseFloat(f.Value.String(), 64)
		if err != nil {
			return nil
		}
		v = x
	}
	if !math.IsNaN(v) && v <= r.max && (v > r.min || (!r.above && v == r.min)) {
		return nil
	}
	name := "--" + f.Name
	if f.Shorthand != "" {
		name = "-" + f.Shorthand + "/--" + f.Name
	}
	// 'f', not 'g': a bound of 1000000 reads as itself, not 1e+06.
	lo, hi := strconv.FormatFloat(r.min, 'f', -1, 64), strconv.FormatFloat(r.max, 'f', -1, 64)
	if isDur {
		lo = time.Duration(r.min * float64(time.Second)).String()
		hi = time.Duration(r.max * float64(time.Second)).String()
	}
	want := fmt.Sprintf("from %s to %s", lo, hi)
	if r.above {
		want = fmt.Sprintf("above %s, at most %s", lo, hi)
	}
	return fmt.Errorf("%s %s is out of range: give a value %s", name, f.Value.String(), want)
}

// errWriter remembers the first error writing to w (a full disk, a
// closed pipe), so a command whose output was lost exits 2 instead of 0.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	n, err := e.w.Write(p)
	if err != nil && e.err == nil {
		e.err = err
	}
	return n, err
}

var errOutput = errors.New("writing the output")
