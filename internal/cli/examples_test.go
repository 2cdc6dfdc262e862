package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/cobra"
)

// example is one command line from a command's Examples.
type example struct {
	cmd  string // the command whose help shows it
	line string
}

// helpExamples returns every "ibdoctor ..." line of every command's
// Examples, continuation lines joined; comment lines and lines of other
// programs (a crontab entry) are not commands to run.
func helpExamples() []example {
	var out []example
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		var joined string
		for _, l := range strings.Split(c.Example, "\n") {
			l = strings.TrimSpace(l)
			if strings.HasSuffix(l, `\`) {
				joined += strings.TrimSuffix(l, `\`)
				continue
			}
			l, joined = joined+l, ""
			if strings.HasPrefix(l, "ibdoctor ") {
				out = append(out, example{cmd: c.CommandPath(), line: l})
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(Command(&bytes.Buffer{}, &bytes.Buffer{}))
	return out
}

// shellWords splits line as sh would for the simple commands examples
// hold (quotes, no expansions), up to a redirection, a pipe, a list
// operator or a comment: the words ibdoctor gets.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case !inWord && strings.ContainsRune("#>|&;<", r):
			return words
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		t.Fatalf("unbalanced quote in %q", line)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// TestHelpExamplesRun: every example in every command's --help is a
// command an operator can copy. Those on the simulator (--sim) are run as
// written, by sh in an empty directory with ibdoctor on PATH, and must
// give an answer (exit 0, or 1 for findings); the others need a device,
// so their flags and arguments are parsed as the command would.
// 'ibdoctor trace --sim gpu001 gpu012' failed here: gpu001 has eight
// HCAs, so the host name alone names no one port.
func TestHelpExamplesRun(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh to run the examples with")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(self, filepath.Join(bin, "ibdoctor")); err != nil {
		t.Fatal(err)
	}
	exs := helpExamples()
	ran := 0
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	defer wg.Wait() // a Fatal below leaves none running past the test
	for _, ex := range exs {
		args := shellWords(t, ex.line)[1:]
		if len(args) == 0 {
			t.Errorf("%s: example %q has no arguments", ex.cmd, ex.line)
			continue
		}
		usesSim := false
		for _, a := range args {
			usesSim = usesSim || a == "--sim" || strings.HasPrefix(a, "--sim=")
		}
		if !usesSim {
			// Parsed by a fresh tree, as Execute would, without running.
			root := Command(&bytes.Buffer{}, &bytes.Buffer{})
			c, rest, err := root.Find(args)
			if err == nil {
				err = c.ParseFlags(rest)
			}
			if err == nil {
				err = c.ValidateArgs(c.Flags().Args())
			}
			if err != nil {
				t.Errorf("%s: example %q does not parse: %v", ex.cmd, ex.line, err)
			}
			continue
		}
		ran++
		sh := exec.Command("sh", "-c", ex.line)
		sh.Dir = t.TempDir()
		sh.Env = append(os.Environ(), "IBDOCTOR_CLI_CHILD=1", "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		// GOMAXPROCS examples at a time, each a process in a directory
		// of its own: one at a time, their runs were all of the test.
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			var stdout, stderr bytes.Buffer
			sh.Stdout, sh.Stderr = &stdout, &stderr
			err := sh.Run()
			code := sh.ProcessState.ExitCode()
			if err != nil && code < 0 {
				t.Errorf("%s: example %q: %v", ex.cmd, ex.line, err)
				return
			}
			if code != ExitHealthy && code != ExitFindings {
				t.Errorf("%s: example %q exits %d; want an answer (0, or 1 for findings):\n%s", ex.cmd, ex.line, code, stderr.String())
				return
			}
			if stdout.Len() == 0 && !strings.Contains(ex.line, ">") {
				t.Errorf("%s: example %q printed nothing", ex.cmd, ex.line)
			}
		})
	}
	wg.Wait()
	if ran == 0 || len(exs) < 10 {
		t.Fatalf("ran %d of %d examples: the extraction found too few", ran, len(exs))
	}
}
