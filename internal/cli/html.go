package cli

import (
	"bytes"
	"fmt"

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

// checkHTMLPath refuses an --html path that cannot take the page (a FIFO,
// device or directory, or stdout) before the sweep, not after it.
func checkHTMLPath(path string) error {
	if path == "" {
		return nil
	}
	if path == outfile.Stdout {
		return fmt.Errorf("--html -: give a file name (the page is a file to open or attach, e.g. fabric.html)")
	}
	if _, _, err := outfile.Resolve(path); err != nil {
		return fmt.Errorf("--html: %w", err)
	}
	return nil
}
