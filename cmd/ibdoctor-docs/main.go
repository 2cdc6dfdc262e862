// Command ibdoctor-docs writes ibdoctor's man pages and shell completion
// scripts from its command tree (cobra's generators). It is a separate
// program so that the ibdoctor binary does not carry the man page
// renderer:
//
//	go run ./cmd/ibdoctor-docs man DIR          # DIR/ibdoctor.1, DIR/ibdoctor-check.1, ...
//	go run ./cmd/ibdoctor-docs completions DIR  # DIR/ibdoctor.bash, _ibdoctor (zsh), ibdoctor.fish
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/cli"
	"github.com/spf13/cobra/doc"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: ibdoctor-docs man|completions DIR")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "ibdoctor-docs:", err)
		os.Exit(1)
	}
}

func run(what, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root := cli.Command(io.Discard, io.Discard)
	root.DisableAutoGenTag = true
	switch what {
	case "man":
		// A fixed date keeps the pages the same from one build to the
		// next unless SOURCE_DATE_EPOCH says otherwise.
		date := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		if e := os.Getenv("SOURCE_DATE_EPOCH"); e != "" {
			var sec int64
			if _, err := fmt.Sscan(e, &sec); err != nil {
				return fmt.Errorf("SOURCE_DATE_EPOCH %q: want seconds since 1970", e)
			}
			date = time.Unix(sec, 0).UTC()
		}
		return doc.GenManTree(root, &doc.GenManHeader{Title: "IBDOCTOR", Section: "1", Source: "ibdoctor", Manual: "ibdoctor manual", Date: &date}, dir)
	case "completions":
		for name, gen := range map[string]func(string) error{
			"ibdoctor.bash": func(p string) error { return root.GenBashCompletionFileV2(p, true) },
			"_ibdoctor":     root.GenZshCompletionFile,
			"ibdoctor.fish": func(p string) error { return root.GenFishCompletionFile(p, true) },
		} {
			if err := gen(filepath.Join(dir, name)); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		return nil
	}
	return fmt.Errorf("%q: want man or completions", what)
}
