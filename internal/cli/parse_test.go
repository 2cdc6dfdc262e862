package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/iostreams"
	"github.com/ibdoctor/ibdoctor/internal/perf"
	"github.com/ibdoctor/ibdoctor/internal/top"
	"github.com/spf13/cobra"
)

// parsed is what parseOnly saw: the options the run func would have got
// (nil when it was not called), the global options, the exit code and
// stderr.
type parsed[T any] struct {
	opts   *T
	global globalOptions
	code   int
	stderr string
}

// parseOnly parses args for the command newCmd builds, under a root with
// the global flags, with the run func replaced by one that keeps the
// options: nothing is swept.
func parseOnly[T any](newCmd func(*app, func(*T) error) *cobra.Command, args ...string) parsed[T] {
	var out, errb bytes.Buffer
	a := &app{io: iostreams.New(nil, &out, &errb), stdout: &out, stderr: &errb}
	root := newBareRoot(a)
	var got *T
	root.AddCommand(newCmd(a, func(o *T) error { got = o; return nil }))
	root.SetArgs(args)
	code := execute(root, &errb, 0)
	return parsed[T]{opts: got, global: a.opts, code: code, stderr: errb.String()}
}

// flagCase is one row of a flag-parsing table: args, then either a check
// of the parsed options or the words the one-line error must hold.
type flagCase[T any] struct {
	name    string
	args    []string
	check   func(t *testing.T, o *T, g globalOptions)
	wantErr []string
}

func runFlagCases[T any](t *testing.T, newCmd func(*app, func(*T) error) *cobra.Command, cases []flagCase[T]) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := parseOnly(newCmd, c.args...)
			if c.wantErr != nil {
				if p.code != ExitUndecided || p.opts != nil {
					t.Fatalf("exit %d, ran %v; want exit 2 before running\n%s", p.code, p.opts != nil, p.stderr)
				}
				for _, w := range c.wantErr {
					if !strings.Contains(p.stderr, w) {
						t.Errorf("stderr lacks %q:\n%s", w, p.stderr)
					}
				}
				if strings.Count(strings.TrimSpace(p.stderr), "\n") > 0 {
					t.Errorf("want one line:\n%s", p.stderr)
				}
				return
			}
			if p.code != 0 || p.opts == nil {
				t.Fatalf("exit %d, ran %v:\n%s", p.code, p.opts != nil, p.stderr)
			}
			c.check(t, p.opts, p.global)
		})
	}
}

func TestCheckFlags(t *testing.T) {
	runFlagCases(t, newCheckCmd, []flagCase[checkCmdOptions]{
		{name: "defaults", args: []string{"check"}, check: func(t *testing.T, o *checkCmdOptions, g globalOptions) {
			if o.check.failOn != "error" || o.detail != 10 || o.check.oversub != 2 || o.check.imbalance != 1.2 || o.json || o.verbose || o.check.interval != 0 || g.source.Sim != "" {
				t.Errorf("%+v %+v", *o, g.source)
			}
		}},
		{name: "bare --sim is the sample", args: []string{"check", "--sim", "--json"}, check: func(t *testing.T, o *checkCmdOptions, g globalOptions) {
			if g.source.Sim != "sample" || !o.json {
				t.Errorf("sim %q json %v", g.source.Sim, o.json)
			}
		}},
		{name: "every flag", args: []string{"check", "--sim=f.txt", "--interval", "30s", "--fail-on", "warning", "--checks", "link,counters.errors", "-v", "--detail", "3", "--expect-rate", "4xNDR", "--html", "x.html", "--no-counters", "--sl", "1", "--pkey-index", "2", "--list"}, check: func(t *testing.T, o *checkCmdOptions, g globalOptions) {
			c := o.check
			if g.source.Sim != "f.txt" || c.interval.String() != "30s" || c.failOn != "warning" || strings.Join(c.only, "|") != "link|counters.errors" ||
				!o.verbose || o.detail != 3 || c.expectRate != "4xNDR" || o.html != "x.html" || !c.noCounters || c.sl != 1 || c.pkeyIndex != 2 || !o.list {
				t.Errorf("%+v %+v", *o, g.source)
			}
		}},
		{name: "unknown flag", args: []string{"check", "--bogus"}, wantErr: []string{"--bogus", "see 'ibdoctor check --help'"}},
		{name: "detail out of range", args: []string{"check", "--detail", "-1"}, wantErr: []string{"--detail -1", "from 0 to 1000000"}}, // was "from 0 to 1e+06"
		{name: "bad duration", args: []string{"check", "--interval", "30"}, wantErr: []string{"--interval", "30"}},
		{name: "stray argument", args: []string{"check", "leaf01"}, wantErr: []string{`"leaf01"`, "takes only flags"}},
		// Faults are the simulator's: on a real device they would be
		// dropped without a word.
		{name: "faults without --sim", args: []string{"check", "--faults", "f.txt"}, wantErr: []string{"--faults needs --sim", "injected into the simulator"}},
		{name: "faults with --ibsim", args: []string{"check", "--ibsim=x", "--faults", "f.txt"}, wantErr: []string{"--faults needs --sim"}},
		{name: "faults with --sim", args: []string{"check", "--sim", "--faults", "f.txt"}, check: func(t *testing.T, o *checkCmdOptions, g globalOptions) {
			if g.source.Faults != "f.txt" || g.source.Sim != "sample" {
				t.Errorf("%+v", g.source)
			}
		}},
	})
}

func TestTraceFlags(t *testing.T) {
	runFlagCases(t, newTraceCmd, []flagCase[traceOptions]{
		{name: "two arguments", args: []string{"trace", "gpu001", "gpu012 mlx5_0"}, check: func(t *testing.T, o *traceOptions, g globalOptions) {
			if o.src != "gpu001" || o.dst != "gpu012 mlx5_0" || g.source.Sim != "" {
				t.Errorf("%+v %+v", *o, g.source)
			}
		}},
		{name: "bare --sim before the arguments", args: []string{"trace", "--sim", "12", "0x1f"}, check: func(t *testing.T, o *traceOptions, g globalOptions) {
			if o.src != "12" || o.dst != "0x1f" || g.source.Sim != "sample" {
				t.Errorf("%+v sim %q", *o, g.source.Sim)
			}
		}},
		{name: "--ibsim=NAME", args: []string{"trace", "--ibsim=mysim", "1", "2"}, check: func(t *testing.T, o *traceOptions, g globalOptions) {
			if g.source.IBSim != "mysim" {
				t.Errorf("ibsim %q", g.source.IBSim)
			}
		}},
		{name: "one argument", args: []string{"trace", "gpu001"}, wantErr: []string{"2 arguments", "usage: ibdoctor trace SRC DST"}},
		{name: "three arguments", args: []string{"trace", "a", "b", "c"}, wantErr: []string{"got 3", "usage: ibdoctor trace SRC DST"}},
		{name: "unknown flag", args: []string{"trace", "--bogus", "a", "b"}, wantErr: []string{"--bogus", "see 'ibdoctor trace --help'"}},
		{name: "timeout out of range", args: []string{"trace", "-t", "0", "a", "b"}, wantErr: []string{"-t/--timeout 0s", "from 1ms"}},
	})
}

func TestRoutesFlags(t *testing.T) {
	runFlagCases(t, newRoutesCmd, []flagCase[routesOptions]{
		{name: "defaults", args: []string{"routes"}, check: func(t *testing.T, o *routesOptions, g globalOptions) {
			if o.format != "table" || o.all || o.switches != nil {
				t.Errorf("%+v", *o)
			}
		}},
		{name: "every flag", args: []string{"routes", "--sim=f.net", "--lfts=f.dump", "--format", "dump_fts", "-a", "--switch", "leaf01", "--switch", "0x2,3"}, check: func(t *testing.T, o *routesOptions, g globalOptions) {
			// --switch is an array: a comma stays in the value (no GUID list splitting).
			if o.format != "dump_fts" || !o.all || strings.Join(o.switches, "|") != "leaf01|0x2,3" || g.source.Sim != "f.net" || g.source.LFTs != "f.dump" {
				t.Errorf("%+v %+v", *o, g.source)
			}
		}},
		{name: "bad format", args: []string{"routes", "--format", "csv"}, wantErr: []string{`--format "csv"`, "table or dump_fts"}},
		{name: "unknown flag", args: []string{"routes", "--json"}, wantErr: []string{"--json", "see 'ibdoctor routes --help'"}},
		{name: "outstanding out of range", args: []string{"routes", "-o", "0"}, wantErr: []string{"-o/--outstanding 0", "from 1 to 4096"}},
		{name: "lfts without --sim", args: []string{"routes", "--lfts", "t.dump"}, wantErr: []string{"--lfts needs --sim"}},
	})
}

func TestLinksFlags(t *testing.T) {
	runFlagCases(t, newLinksCmd, []flagCase[linksOptions]{
		{name: "defaults", args: []string{"links"}, check: func(t *testing.T, o *linksOptions, g globalOptions) {
			if o.expect != "" || o.rates != nil || o.degraded || o.asJSON {
				t.Errorf("%+v", *o)
			}
		}},
		{name: "every flag", args: []string{"links", "--sim", "--expect-rate", "4xHDR,4xNDR", "--degraded", "--json"}, check: func(t *testing.T, o *linksOptions, g globalOptions) {
			if len(o.rates) != 2 || o.rates[1].String() != "4X NDR" || !o.degraded || !o.asJSON || g.source.Sim != "sample" {
				t.Errorf("%+v %q", *o, g.source.Sim)
			}
		}},
		{name: "bad rate", args: []string{"links", "--expect-rate", "4xFAST"}, wantErr: []string{"--expect-rate", `"4xFAST"`}},
		{name: "unknown flag", args: []string{"links", "--interval", "1s"}, wantErr: []string{"--interval", "see 'ibdoctor links --help'"}},
		{name: "stray argument", args: []string{"links", "leaf01"}, wantErr: []string{`"leaf01"`, "takes only flags"}},
	})
}

func TestDiscoverFlags(t *testing.T) {
	runFlagCases(t, newDiscoverCmd, []flagCase[discoverOptions]{
		{name: "defaults", args: []string{"discover"}, check: func(t *testing.T, o *discoverOptions, g globalOptions) {
			if o.format != "table" || o.diffFile != "" || len(o.path) != 0 || o.maxHops != 0 {
				t.Errorf("%+v", *o)
			}
		}},
		{name: "every flag", args: []string{"discover", "--format", "ibnetdiscover", "--diff", "old.json", "--start", "0,1,33", "--max-hops", "2", "-o", "16", "-t", "2s", "--retries", "5"}, check: func(t *testing.T, o *discoverOptions, g globalOptions) {
			if o.format != "ibnetdiscover" || o.diffFile != "old.json" || len(o.path) != 2 || o.maxHops != 2 ||
				g.source.Window != 16 || g.source.Timeout.String() != "2s" || g.source.Retries != 5 {
				t.Errorf("%+v %+v", *o, g.source)
			}
		}},
		{name: "bad format", args: []string{"discover", "--format", "xml"}, wantErr: []string{`--format "xml"`, "table, json or ibnetdiscover"}},
		{name: "bad start", args: []string{"discover", "--start", "0,x"}, wantErr: []string{"--start"}},
		{name: "start longer than max-hops", args: []string{"discover", "--start", "0,1,2,3", "--max-hops", "2"}, wantErr: []string{"--start", "more than --max-hops 2"}},
		{name: "max-hops out of range", args: []string{"discover", "--max-hops", "64"}, wantErr: []string{"--max-hops 64", "from 0 to 63"}},
		{name: "unknown flag", args: []string{"discover", "--json"}, wantErr: []string{"--json", "see 'ibdoctor discover --help'"}},
	})
}

func TestCountersFlags(t *testing.T) {
	runFlagCases(t, newCountersCmd, []flagCase[countersOptions]{
		{name: "defaults skip clean switches", args: []string{"counters"}, check: func(t *testing.T, o *countersOptions, g globalOptions) {
			if !o.skipClean || o.all || o.interval != 0 || o.mode != perf.ResetNone || o.json {
				t.Errorf("%+v", *o)
			}
		}},
		{name: "--all reads every port", args: []string{"counters", "-a"}, check: func(t *testing.T, o *countersOptions, g globalOptions) {
			if o.skipClean || !o.all {
				t.Errorf("%+v", *o)
			}
		}},
		{name: "--interval reads every port", args: []string{"counters", "--interval", "5s"}, check: func(t *testing.T, o *countersOptions, g globalOptions) {
			if o.skipClean || o.interval.String() != "5s" {
				t.Errorf("%+v", *o)
			}
		}},
		{name: "reset errors", args: []string{"counters", "--reset", "errors"}, check: func(t *testing.T, o *countersOptions, g globalOptions) {
			if o.mode != perf.ResetErrors || o.skipClean {
				t.Errorf("%+v", *o)
			}
		}},
		{name: "skip-clean-switches given wins", args: []string{"counters", "-a", "--skip-clean-switches"}, check: func(t *testing.T, o *countersOptions, g globalOptions) {
			if !o.skipClean {
				t.Errorf("%+v", *o)
			}
		}},
		{name: "every other flag", args: []string{"counters", "--reset", "all", "--json", "--thresholds", "t.conf", "--sl", "3", "--pkey-index", "1"}, check: func(t *testing.T, o *countersOptions, g globalOptions) {
			if o.mode != perf.ResetAll || !o.json || o.thresholds != "t.conf" || o.sl != 3 || o.pkeyIndex != 1 {
				t.Errorf("%+v", *o)
			}
		}},
		{name: "bad reset", args: []string{"counters", "--reset", "some"}, wantErr: []string{`--reset "some"`, "errors or all"}},
		{name: "sl out of range", args: []string{"counters", "--sl", "16"}, wantErr: []string{"--sl 16", "from 0 to 15"}},
		{name: "unknown flag", args: []string{"counters", "--verbose"}, wantErr: []string{"--verbose", "see 'ibdoctor counters --help'"}},
	})
}

func TestTopFlags(t *testing.T) {
	runFlagCases(t, newTopCmd, []flagCase[topOptions]{
		{name: "defaults", args: []string{"top"}, check: func(t *testing.T, o *topOptions, g globalOptions) {
			if o.interval.String() != "2s" || o.budget != 4096 || o.once || o.json || o.key != top.ByErrors || o.switches != nil || o.hosts != "" {
				t.Errorf("%+v", *o)
			}
		}},
		{name: "every flag", args: []string{"top", "--sim", "-n", "5s", "--switch", "spine01", "--switch", "leaf02, rack B", "--hosts", "gpu[001-016]", "--budget", "0", "--once", "--json", "--sort", "wait", "--filter", "leaf", "--thresholds", "t.conf", "--sl", "2", "--pkey-index", "3"}, check: func(t *testing.T, o *topOptions, g globalOptions) {
			if o.interval.String() != "5s" || strings.Join(o.switches, "|") != "spine01|leaf02, rack B" || o.hosts != "gpu[001-016]" || o.budget != 0 || !o.once || !o.json ||
				o.key != top.ByXmitWait || o.filter != "leaf" || o.thresholds != "t.conf" || o.sl != 2 || o.pkeyIndex != 3 || g.source.Sim != "sample" {
				t.Errorf("%+v", *o)
			}
		}},
		{name: "sort util", args: []string{"top", "--sort", "u"}, check: func(t *testing.T, o *topOptions, g globalOptions) {
			if o.key != top.ByUtilization {
				t.Errorf("%v", o.key)
			}
		}},
		{name: "zero interval", args: []string{"top", "-n", "0s"}, wantErr: []string{"--interval 0s", "positive duration"}},
		{name: "bad sort", args: []string{"top", "--sort", "name"}, wantErr: []string{`--sort "name"`, "errors, wait or util"}},
		{name: "negative budget", args: []string{"top", "--budget", "-1"}, wantErr: []string{"--budget -1"}},
		{name: "unknown flag", args: []string{"top", "--all"}, wantErr: []string{"--all", "see 'ibdoctor top --help'"}},
	})
}

func TestSweepFlags(t *testing.T) {
	dir := t.TempDir()
	runFlagCases(t, newSweepCmd, []flagCase[sweepOptions]{
		{name: "defaults", args: []string{"sweep"}, check: func(t *testing.T, o *sweepOptions, g globalOptions) {
			if o.out != "-" || o.prom != "" || o.failOn != -1 || o.promMin != checks.Warning || o.noSave || o.lockWait.String() != "1m0s" || o.stateDir != defaultStateDir() {
				t.Errorf("%+v", *o)
			}
		}},
		{name: "every flag", args: []string{"sweep", "--sim", "--out", dir + "/r.json", "--prom", dir + "/p.prom", "--html", dir + "/f.html", "--prom-min-severity", "info", "--state-dir", dir,
			"--no-save", "--lock-wait", "0s", "--fail-on", "critical", "--interval", "10s", "--expect-rate", "4xNDR"}, check: func(t *testing.T, o *sweepOptions, g globalOptions) {
			if o.out != dir+"/r.json" || o.prom != dir+"/p.prom" || o.html != dir+"/f.html" || o.promMin != checks.Info || o.stateDir != dir || !o.noSave ||
				o.lockWait != 0 || o.failOn != checks.Critical || o.check.interval.String() != "10s" || len(o.expectation.HostRates) != 1 || g.source.Sim != "sample" {
				t.Errorf("%+v", *o)
			}
		}},
		{name: "prom on stdout", args: []string{"sweep", "--prom", "-"}, wantErr: []string{"--prom -", "node_exporter"}},
		{name: "out is a directory", args: []string{"sweep", "--out", dir}, wantErr: []string{"--out"}},
		{name: "bad prom severity", args: []string{"sweep", "--prom-min-severity", "loud"}, wantErr: []string{"--prom-min-severity", `"loud"`}},
		{name: "bad fail-on", args: []string{"sweep", "--fail-on", "bad"}, wantErr: []string{"--fail-on", `"bad"`}},
		{name: "lock-wait out of range", args: []string{"sweep", "--lock-wait", "-1s"}, wantErr: []string{"--lock-wait -1s"}},
		{name: "unknown flag", args: []string{"sweep", "--verbose"}, wantErr: []string{"--verbose", "see 'ibdoctor sweep --help'"}},
	})
}

func TestVersionFlags(t *testing.T) {
	runFlagCases(t, newVersionCmd, []flagCase[versionOptions]{
		{name: "text", args: []string{"version"}, check: func(t *testing.T, o *versionOptions, g globalOptions) {
			if o.json {
				t.Error("json")
			}
		}},
		{name: "json", args: []string{"version", "--json"}, check: func(t *testing.T, o *versionOptions, g globalOptions) {
			if !o.json {
				t.Error("not json")
			}
		}},
		{name: "stray argument", args: []string{"version", "full"}, wantErr: []string{`"full"`, "takes only flags"}},
		{name: "unknown flag", args: []string{"version", "--short"}, wantErr: []string{"--short", "see 'ibdoctor version --help'"}},
	})
}

func TestBaselineAcceptFlags(t *testing.T) {
	// accept is under baseline: the table's command is a baseline holding it.
	newCmd := func(a *app, runF func(*baselineOptions) error) *cobra.Command {
		b := &cobra.Command{Use: "baseline"}
		b.AddCommand(newBaselineAcceptCmd(a, runF))
		return b
	}
	runFlagCases(t, newCmd, []flagCase[baselineOptions]{
		{name: "defaults", args: []string{"baseline", "accept"}, check: func(t *testing.T, o *baselineOptions, g globalOptions) {
			if o.stateDir != defaultStateDir() || o.lockWait.String() != "1m0s" || o.partial {
				t.Errorf("%+v", *o)
			}
		}},
		{name: "every flag", args: []string{"baseline", "accept", "--state-dir", "/srv/ib", "--lock-wait", "5s", "--partial"}, check: func(t *testing.T, o *baselineOptions, g globalOptions) {
			if o.stateDir != "/srv/ib" || o.lockWait.String() != "5s" || !o.partial {
				t.Errorf("%+v", *o)
			}
		}},
		{name: "lock-wait out of range", args: []string{"baseline", "accept", "--lock-wait", "-1s"}, wantErr: []string{"--lock-wait -1s"}},
		{name: "unknown flag", args: []string{"baseline", "accept", "--force"}, wantErr: []string{"--force", "see 'ibdoctor baseline accept --help'"}},
	})
}

func TestGateFlags(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	runFlagCases(t, newGateCmd, []flagCase[gateOptions]{
		{name: "nodes expanded, defaults", args: []string{"gate", "--nodes", "gpu[001-003],gpu010"}, check: func(t *testing.T, o *gateOptions, g globalOptions) {
			if strings.Join(o.hosts, ",") != "gpu001,gpu002,gpu003,gpu010" || o.failOn != checks.Error || o.maxAge.String() != "1h0m0s" || o.json || o.stateDir != defaultStateDir() {
				t.Errorf("%+v", *o)
			}
		}},
		{name: "every flag", args: []string{"gate", "--sim", "--nodes", "h1", "--node-name-map", "m.txt", "--state-dir", "/srv/ib", "--max-age", "0s", "--json", "--fail-on", "warning", "--interval", "5s", "--no-counters", "--expect-rate", "4xNDR", "--checks", "link"}, check: func(t *testing.T, o *gateOptions, g globalOptions) {
			if strings.Join(o.hosts, ",") != "h1" || o.nameMap != "m.txt" || o.stateDir != "/srv/ib" || o.maxAge != 0 || !o.json || o.failOn != checks.Warning ||
				o.check.interval.String() != "5s" || !o.check.noCounters || len(o.expect.HostRates) != 1 || strings.Join(o.check.only, ",") != "link" || g.source.Sim != "sample" {
				t.Errorf("%+v", *o)
			}
		}},
		{name: "no hosts", args: []string{"gate"}, wantErr: []string{"no hosts", "--nodes", "SLURM_JOB_NODELIST"}},
		{name: "empty host list", args: []string{"gate", "--nodes", ",,,"}, wantErr: []string{"names no host"}},
		{name: "bad hostlist", args: []string{"gate", "--nodes", "gpu[001-"}, wantErr: []string{"--nodes"}},
		{name: "bad fail-on", args: []string{"gate", "--nodes", "h1", "--fail-on", "never"}, wantErr: []string{"--fail-on", `"never"`}},
		{name: "bad check", args: []string{"gate", "--nodes", "h1", "--checks", "link.wobbly"}, wantErr: []string{"--checks", "link.wobbly"}},
		{name: "negative max-age", args: []string{"gate", "--nodes", "h1", "--max-age", "-1m"}, wantErr: []string{"--max-age -1m0s"}},
		{name: "unknown flag", args: []string{"gate", "--hosts", "h1"}, wantErr: []string{"--hosts", "see 'ibdoctor gate --help'"}},
		{name: "faults without --sim", args: []string{"gate", "--nodes", "h1", "--faults", "f.txt"}, wantErr: []string{"--faults needs --sim (faults are injected into the simulator)"}},
		// The summary's "Not run" line says "--verbose says why": gate has it.
		{name: "verbose", args: []string{"gate", "--nodes", "h1", "-v"}, check: func(t *testing.T, o *gateOptions, g globalOptions) {
			if !o.verbose {
				t.Errorf("%+v", *o)
			}
		}},
		{name: "verbose long", args: []string{"gate", "--nodes", "h1", "--verbose"}, check: func(t *testing.T, o *gateOptions, g globalOptions) {
			if !o.verbose {
				t.Errorf("%+v", *o)
			}
		}},
	})
	t.Run("hosts from Slurm", func(t *testing.T) {
		t.Setenv("SLURM_JOB_NODELIST", "node[07-08]")
		p := parseOnly(newGateCmd, "gate")
		if p.opts == nil || strings.Join(p.opts.hosts, ",") != "node07,node08" {
			t.Errorf("exit %d: %s", p.code, p.stderr)
		}
	})
}
