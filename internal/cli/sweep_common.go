package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/discover"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/source"
	"github.com/ibdoctor/ibdoctor/mad"
	"github.com/spf13/pflag"
)

// checkOptions are the flags check, sweep and gate share.
type checkOptions struct {
	interval       time.Duration
	failOn         string
	expectRate     string
	expectSwitch   string
	expectTopology string
	thresholds     string
	oversub        float64
	imbalance      float64
	only           []string
	sl             uint8
	pkeyIndex      uint16
	noCounters     bool
}

func (o *checkOptions) flags(fs *pflag.FlagSet, failOnDefault string) {
	fs.DurationVar(&o.interval, "interval", 0, "read counters twice this far apart and judge their increase (e.g. 30s); 0 reads once and judges absolute values")
	fs.StringVar(&o.failOn, "fail-on", failOnDefault, "lowest severity that makes the exit status unhealthy: info, warning, error or critical")
	fs.StringVar(&o.expectRate, "expect-rate", "", "acceptable rates of host links, e.g. 4xNDR or 4xHDR,4xNDR (default: what both ends have enabled)")
	fs.StringVar(&o.expectSwitch, "expect-switch-rate", "", "acceptable rates of switch-to-switch links (default: --expect-rate, else enabled rates and siblings)")
	fs.StringVar(&o.expectTopology, "expect-topology", "", "expected topology (ibnetdiscover text or ibdoctor JSON) for topology.miswired/changed and link.down")
	fs.StringVar(&o.thresholds, "thresholds", "", "counter thresholds file (docs/checks.md: Name=value, delta.Name=value, ber=...)")
	fs.Float64Var(&o.oversub, "oversubscription", 2, "largest acceptable host:uplink bandwidth ratio of a leaf")
	fs.Float64Var(&o.imbalance, "imbalance", 1.2, "largest acceptable max/mean route load over equal-cost ports")
	fs.StringSliceVar(&o.only, "checks", nil, "run only these checks or groups (link, counters, routing, topology)")
	fs.Uint8Var(&o.sl, "sl", 0, "service level of PerfMgt MADs (default 0, as ibqueryerrors --skip-sl uses)")
	fs.Uint16Var(&o.pkeyIndex, "pkey-index", 0, "P_Key table index of PerfMgt MADs (0: the default partition)")
	fs.BoolVar(&o.noCounters, "no-counters", false, "do not read PerfMgt counters")
}

// expectations turns the flags into checks.Expectations.
func (o *checkOptions) expectations() (checks.Expectations, error) {
	e := checks.Expectations{Oversubscription: o.oversub, ImbalanceRatio: o.imbalance}
	var err error
	if e.HostRates, err = parseRates("--expect-rate", o.expectRate); err != nil {
		return e, err
	}
	if e.SwitchRates, err = parseRates("--expect-switch-rate", o.expectSwitch); err != nil {
		return e, err
	}
	if len(e.SwitchRates) == 0 {
		e.SwitchRates = e.HostRates
	}
	if o.thresholds != "" {
		f, err := os.Open(o.thresholds)
		if err != nil {
			return e, fmt.Errorf("--thresholds: %w", err)
		}
		defer f.Close()
		if e.Thresholds, err = checks.ParseThresholds(f); err != nil {
			return e, fmt.Errorf("--thresholds %s: %w", o.thresholds, err)
		}
	}
	return e, nil
}

func parseRates(flag, s string) ([]mad.Rate, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []mad.Rate
	for _, part := range strings.Split(s, ",") {
		r, err := mad.ParseRate(part)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", flag, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// loadBaseline reads an expected topology file.
func loadBaseline(path string) (*fabric.Fabric, error) {
	if path == "" {
		return nil, nil
	}
	f, err := loadFabricFile(path)
	if err != nil {
		return nil, fmt.Errorf("--expect-topology: %w", err)
	}
	return f, nil
}

// signalContext is cancelled on SIGINT/SIGTERM, so an interrupted sweep
// still releases what it holds (an ibsim slot) and reports what it read.
func signalContext(parent context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
}

// openSource opens the fabric the global flags select.
func (a *app) openSource(ctx context.Context, smp, perf, writes bool) (*source.Session, error) {
	o := a.opts.source
	o.SMP, o.Perf, o.AllowWrites = smp, perf, writes
	s, err := source.Open(ctx, ctx, o)
	if err != nil {
		return nil, withExit(ExitUndecided, err)
	}
	return s, nil
}

// runSweep opens the source and sweeps it with a progress line on stderr.
func (a *app) runSweep(ctx context.Context, o diagnose.Options) (*diagnose.Sweep, *source.Session, error) {
	sess, err := a.openSource(ctx, true, o.Counters, false)
	if err != nil {
		return nil, nil, err
	}
	pr := newProgress(a.stderr)
	o.Stage = pr.Stage
	o.Discover.Progress = func(p discover.Progress) { pr.Discover(p) }
	sw, err := diagnose.Run(ctx, sess.Engine, o)
	pr.Done()
	if sw == nil {
		sess.Close()
		return nil, nil, withExit(ExitUndecided, err)
	}
	return sw, sess, nil
}
