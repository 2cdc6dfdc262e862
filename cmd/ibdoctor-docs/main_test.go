package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestMan writes the man pages: one per command, troff with the command's
// name and flags, the same bytes twice (a fixed date).
func TestMan(t *testing.T) {
	dir := t.TempDir()
	if err := run("man", dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ibdoctor.1", "ibdoctor-check.1", "ibdoctor-top.1", "ibdoctor-counters.1"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(b), ".nh\n.TH \"IBDOCTOR\" \"1\"") {
			t.Errorf("%s does not start as a man page: %.60q", name, b)
		}
	}
	top, _ := os.ReadFile(filepath.Join(dir, "ibdoctor-top.1"))
	if !strings.Contains(string(top), "budget") || !strings.Contains(string(top), "interval") {
		t.Errorf("ibdoctor-top.1 lacks its flags")
	}
	again := t.TempDir()
	if err := run("man", again); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(again, "ibdoctor-top.1"))
	if string(b) != string(top) {
		t.Error("two runs wrote different pages")
	}
}

// TestCompletions writes the three scripts; bash parses its own.
func TestCompletions(t *testing.T) {
	dir := t.TempDir()
	if err := run("completions", dir); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"ibdoctor.bash": "__start_ibdoctor", "_ibdoctor": "#compdef ibdoctor", "ibdoctor.fish": "complete -c ibdoctor"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %q", name, want)
		}
	}
	if bash, err := exec.LookPath("bash"); err == nil {
		if out, err := exec.Command(bash, "-n", filepath.Join(dir, "ibdoctor.bash")).CombinedOutput(); err != nil {
			t.Errorf("bash -n ibdoctor.bash: %v\n%s", err, out)
		}
	}
}

// TestBinaryHasNoManRenderer: the man page renderer stays out of the
// ibdoctor binary (it is this program's only).
func TestBinaryHasNoManRenderer(t *testing.T) {
	out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "list", "-deps", "github.com/ibdoctor/ibdoctor/cmd/ibdoctor").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range []string{"github.com/cpuguy83/go-md2man", "github.com/spf13/cobra/doc", "github.com/russross/blackfriday"} {
		if strings.Contains(string(out), dep) {
			t.Errorf("cmd/ibdoctor depends on %s", dep)
		}
	}
}
