// Package cli holds ibdoctor's commands, one file each. Commands are thin:
// they parse flags, call the packages that do the work, and print.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strings"

	"github.com/ibdoctor/ibdoctor/internal/iostreams"
	"github.com/ibdoctor/ibdoctor/internal/outfile"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/ibdoctor/ibdoctor/internal/source"
	"github.com/spf13/cobra"
)

// Exit codes, documented in docs/exit-codes.md.
const (
	ExitHealthy   = 0 // the job ran completely and found nothing at or above the threshold
	ExitFindings  = 1 // findings at or above --fail-on (check, gate)
	ExitUndecided = 2 // could not decide: bad input, device error, incomplete sweep
	ExitPartial   = 3 // discovery or sweep finished but could not reach everything
)

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

// withExit returns an error that makes Main exit with code; err may be nil
// (nothing more to print).
func withExit(code int, err error) error { return &exitError{code: code, err: err} }

// app holds what every command shares.
type app struct {
	// io knows whether the streams are terminals and how wide; stdin,
	// stdout and stderr are its streams.
	io             *iostreams.IOStreams
	stdin          io.Reader
	stdout, stderr io.Writer
	opts           globalOptions
	// cpu is the CPU profile being written (--cpuprofile), renamed into
	// place by stopProfiles.
	cpu *os.File
	// args are the command line's words (after the program's name), for
	// a command that must find one flag on a line pflag refused (sweep's
	// --prom).
	args []string
}

// style is how to draw on stdout: colour on a terminal unless --no-color
// or NO_COLOR, and the terminal's width (0, no limit, for a pipe).
func (a *app) style() report.Style {
	a.io.SetNoColor(a.opts.noColor)
	st := report.Style{Color: a.io.ColorEnabled(), Width: a.io.OutputWidth()}
	if st.Width == 0 {
		st.RuleWidth = a.io.TerminalWidth()
	}
	return st
}

// globalOptions are the persistent flags of the root command.
type globalOptions struct {
	noColor bool
	source  source.Options
	// cpuProfile and memProfile are hidden flags for measuring ibdoctor
	// itself (docs/architecture.md, issue 13): pprof files written when
	// the command ends.
	cpuProfile, memProfile string
}

// preRun checks cmd's numeric flags and starts the profiles, before any
// command runs (root's PersistentPreRunE; sweep's, which also marks the
// textfile failed when it refuses).
func (a *app) preRun(cmd *cobra.Command) error {
	if err := validateFlags(cmd); err != nil {
		return withExit(ExitUndecided, err)
	}
	if err := a.startProfile(); err != nil {
		return withExit(ExitUndecided, err)
	}
	return nil
}

func newRootCmd(a *app) *cobra.Command {
	root := newBareRoot(a)
	root.AddCommand(newVersionCmd(a, nil))
	root.AddCommand(newCheckCmd(a, nil))
	root.AddCommand(newRoutesCmd(a, nil))
	root.AddCommand(newTraceCmd(a, nil))
	root.AddCommand(newSweepCmd(a, nil))
	root.AddCommand(newGateCmd(a, nil))
	root.AddCommand(newBaselineCmd(a))
	root.AddCommand(newDiscoverCmd(a, nil))
	root.AddCommand(newLinksCmd(a, nil))
	root.AddCommand(newCountersCmd(a, nil))
	root.AddCommand(newTopCmd(a, nil))
	return root
}

// newBareRoot is the root command with the global flags and no commands;
// tests add the one command whose flags they parse.
func newBareRoot(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "ibdoctor",
		Short: "Diagnose an InfiniBand fabric: discover it, read its counters and routes, rank what is wrong",
		Long: `ibdoctor speaks InfiniBand management datagrams itself to discover a subnet,
read every port's counters and every switch's forwarding table, and rank what
is wrong by what it costs.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return a.preRun(cmd)
		},
	}
	// Help fits the terminal: pflag wraps the flags' descriptions at its
	// width (0, a pipe: one line each), and helpText the rest.
	width := a.io.OutputWidth()
	root.SetUsageTemplate(strings.ReplaceAll(root.UsageTemplate(), "FlagUsages |", fmt.Sprintf("FlagUsagesWrapped %d |", width)))
	root.SetHelpFunc(func(c *cobra.Command, _ []string) {
		io.WriteString(c.OutOrStdout(), helpText(c, width))
	})
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	pf := root.PersistentFlags()
	pf.BoolVar(&a.opts.noColor, "no-color", false, "never colour the output (NO_COLOR is honoured too)")
	addSourceFlags(pf, &a.opts.source)
	pf.StringVar(&a.opts.cpuProfile, "cpuprofile", "", "write a pprof CPU profile of this run to `FILE`")
	pf.StringVar(&a.opts.memProfile, "memprofile", "", "write a pprof heap profile to `FILE` when the command ends")
	pf.MarkHidden("cpuprofile")
	pf.MarkHidden("memprofile")
	return root
}

// HeapProfileWanted reports whether args ask for --memprofile: main turns
// the runtime's heap profiling off otherwise (cmd/ibdoctor). An argument
// after "--" is not a flag.
func HeapProfileWanted(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--memprofile" || strings.HasPrefix(a, "--memprofile=") {
			return true
		}
	}
	return false
}

// startProfile starts --cpuprofile into a temporary file beside it.
func (a *app) startProfile() error {
	for _, p := range []string{a.opts.cpuProfile, a.opts.memProfile} {
		if p != "" {
			if _, _, err := outfile.Resolve(p); err != nil {
				return err
			}
		}
	}
	if a.opts.cpuProfile == "" {
		return nil
	}
	f, err := os.CreateTemp(filepath.Dir(a.opts.cpuProfile), "."+filepath.Base(a.opts.cpuProfile)+".*")
	if err != nil {
		return fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("--cpuprofile: %w", err)
	}
	a.cpu = f
	return nil
}

// stopProfiles ends the CPU profile and writes the heap profile (after a
// collection, so in-use is what the run still held; alloc_space says
// where its allocation went). A profile that fails is said on stderr and
// does not change the exit status.
func (a *app) stopProfiles() {
	if a.cpu != nil {
		pprof.StopCPUProfile()
		err := a.cpu.Close()
		if err == nil {
			err = os.Rename(a.cpu.Name(), a.opts.cpuProfile)
		}
		if err != nil {
			os.Remove(a.cpu.Name())
			fmt.Fprintf(a.stderr, "ibdoctor: --cpuprofile: %v\n", err)
		}
		a.cpu = nil
	}
	if a.opts.memProfile != "" {
		runtime.GC()
		if err := outfile.WriteAtomicFunc(a.opts.memProfile, pprof.WriteHeapProfile); err != nil {
			fmt.Fprintf(a.stderr, "ibdoctor: --memprofile: %v\n", err)
		}
	}
}

// listItem is the head of a line of a two-column list ("  gate   Pre-job
// check ..."): continuation lines are indented under its second column.
var listItem = regexp.MustCompile(`^ +\S+ {2,}`)

// helpText is cobra's help (the long description, then the usage) with
// every line wider than width wrapped at words, under its own indent or,
// in a two-column list, under the second column. width 0: as written.
func helpText(c *cobra.Command, width int) string {
	text := strings.TrimRight(c.Long, " \n")
	if text == "" {
		text = c.Short
	}
	text += "\n\n" + c.UsageString()
	if width <= 0 {
		return text
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if report.VisibleWidth(line) <= width {
			b.WriteString(line + "\n")
			continue
		}
		head := listItem.FindString(line)
		if head == "" {
			head = line[:len(line)-len(strings.TrimLeft(line, " "))]
		}
		lines := report.Wrap(head, strings.TrimPrefix(line, head), width)
		b.WriteString(strings.Join(lines, "\n") + "\n")
	}
	return b.String()
}

// Command returns ibdoctor's command tree, for tools that document it
// (man pages, completion scripts); it runs nothing.
func Command(stdout, stderr io.Writer) *cobra.Command {
	return newRootCmd(&app{io: iostreams.New(nil, stdout, stderr), stdout: stdout, stderr: stderr})
}

// Main runs ibdoctor with args and returns the process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return mainWith(iostreams.New(stdin, stdout, stderr), args)
}

// mainWith runs ibdoctor on streams whose terminal-ness and width were
// decided (by Main on the real streams; by tests, as a terminal of a
// chosen width).
func mainWith(ios *iostreams.IOStreams, args []string) int {
	// The terminal is detected on the real stdout; commands write through
	// out, which remembers a write error.
	stdout, stderr := ios.Out, ios.ErrOut
	out := &errWriter{w: stdout}
	a := &app{io: ios, stdin: ios.In, stdout: out, stderr: stderr, args: args}
	a.io.Out = out
	root := newRootCmd(a)
	root.SetArgs(args)
	code := execute(root, stderr, ios.ErrWidth())
	a.stopProfiles()
	if out.err != nil && code != ExitUndecided {
		// Output that did not reach its reader (a full disk, a closed
		// pipe) is no answer: never 0, 1 or 3 on it.
		io.WriteString(stderr, report.WrapString("ibdoctor: ", fmt.Sprintf("%v: %v", errOutput, out.err), ios.ErrWidth()))
		return ExitUndecided
	}
	return code
}

// execute runs root and prints its error on stderr, wrapped at width (0:
// one line) under "ibdoctor: ".
func execute(root *cobra.Command, stderr io.Writer, width int) int {
	err := root.Execute()
	if err == nil {
		return ExitHealthy
	}
	if width > 0 && errors.Is(err, context.Canceled) {
		// Stopped by Ctrl-C: the terminal echoed ^C where the message
		// would start, and its wrapping counts from column 0.
		io.WriteString(stderr, "\n")
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			io.WriteString(stderr, report.WrapString("ibdoctor: ", ee.err.Error(), width))
		}
		return ee.code
	}
	io.WriteString(stderr, report.WrapString("ibdoctor: ", err.Error(), width))
	return ExitUndecided
}
