package cli

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/discover"
	"github.com/ibdoctor/ibdoctor/internal/iostreams"
	"github.com/ibdoctor/ibdoctor/internal/report"
)

// progress draws a one-line status on stderr while a sweep runs, only when
// stderr is a terminal (never in cron or a prolog's log).
type progress struct {
	w       io.Writer
	on      bool
	width   int // the terminal's: a longer line would wrap and \r not clear it
	mu      sync.Mutex
	stage   string
	last    time.Time
	started time.Time
}

func newProgress(w io.Writer) *progress {
	s := iostreams.New(nil, w, nil)
	return &progress{w: w, on: s.IsStdoutTTY(), width: s.TerminalWidth(), started: time.Now()}
}

// Stage starts a new stage ("discovery", "routes", "counters").
func (p *progress) Stage(name string) {
	if !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stage = name
	fmt.Fprintf(p.w, "\r\033[K%s", report.Truncate(name+"...", p.width-1))
}

// Discover shows discovery's progress, at most ten times a second.
func (p *progress) Discover(d discover.Progress) {
	if !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	line := fmt.Sprintf("discovery: %d nodes (%d switches), %d unreachable, %d MADs in flight, %d sent",
		d.Nodes, d.Switches, d.Unreachable, d.Outstanding, d.Sent)
	fmt.Fprintf(p.w, "\r\033[K%s", report.Truncate(line, p.width-1))
}

// Done clears the line.
func (p *progress) Done() {
	if !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprint(p.w, "\r\033[K")
}

// quietTerminal hides w from the progress display: sweep never draws one.
func quietTerminal(w io.Writer) io.Writer { return struct{ io.Writer }{w} }
