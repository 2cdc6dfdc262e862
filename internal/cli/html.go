package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/htmlpage"
	"github.com/ibdoctor/ibdoctor/internal/outfile"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/spf13/pflag"
)

func htmlFlag(fs *pflag.FlagSet, path *string) {
	fs.StringVar(path, "html", "", "also write the report and a drawing of the fabric as one self-contained HTML page (atomically)")
}

// writeHTML renders the report and the snapshot it was judged on as a
// page and replaces path with it in one step.
func writeHTML(path string, doc *report.Document, snap *checks.Snapshot) error {
	var b bytes.Buffer
	if err := htmlpage.Render(&b, doc, snap, htmlpage.Options{}); err != nil {
		return withExit(ExitUndecided, fmt.Errorf("--html: %w", err))
	}
	if err := outfile.WriteAtomic(path, b.Bytes()); err != nil {
		return withExit(ExitUndecided, fmt.Errorf("--html: %w", err))
	}
	return nil
}

// stageHTML renders the page into a temporary file beside path, to be
// published (Commit) once the rest of the command's outputs are made.
func stageHTML(path string, doc *report.Document, snap *checks.Snapshot) (*outfile.Staged, error) {
	st, err := outfile.Stage(path, func(w io.Writer) error {
		return htmlpage.Render(w, doc, snap, htmlpage.Options{})
	})
	if err != nil {
		return nil, withExit(ExitUndecided, fmt.Errorf("--html: %w", err))
	}
	return st, nil
}

// checkHTMLPath refuses an --html path that cannot take the page (a FIFO,
// device or directory, a folder that cannot be written, or stdout) before
// the sweep, not after it. Without createDirs (an interactive check) a
// folder on the way that does not exist is refused too: it is more likely
// a typo than a wish, and making it would leave a stray tree behind.
func checkHTMLPath(path string, createDirs bool) error {
	if path == "" {
		return nil
	}
	if path == outfile.Stdout {
		return fmt.Errorf("--html -: give a file name (the page is a file to open or attach, e.g. fabric.html)")
	}
	if err := outfile.CheckWritable(path); err != nil {
		return fmt.Errorf("--html: %w", err)
	}
	if createDirs {
		return nil
	}
	final, _, err := outfile.Resolve(path)
	if err != nil {
		return fmt.Errorf("--html: %w", err)
	}
	missing := ""
	for dir := filepath.Dir(final); ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(dir); err == nil || filepath.Dir(dir) == dir {
			break
		}
		missing = dir
	}
	if missing != "" {
		return fmt.Errorf("--html %s: folder %s does not exist: check the path, or create it first (mkdir -p %s); check does not create folders", path, missing, filepath.Dir(final))
	}
	return nil
}
