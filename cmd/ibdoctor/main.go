// Command ibdoctor diagnoses InfiniBand fabrics: it discovers the subnet
// with its own MADs, reads counters and forwarding tables, and ranks what
// is wrong. See the README for the commands.
package main

import (
	"os"
	"runtime"
	"runtime/debug"

	"github.com/ibdoctor/ibdoctor/internal/cli"
)

func main() {
	if _, set := os.LookupEnv("GOGC"); !set {
		// Every command starts with the discovery walk, whose garbage is
		// short-lived while its live heap only grows: collecting at 50%
		// growth instead of 100% keeps peak memory lower for a little more
		// CPU (docs/architecture.md has the figures). GOGC in the
		// environment wins. Decided here, for the process, not inside a
		// command.
		debug.SetGCPercent(50)
	}
	if !cli.HeapProfileWanted(os.Args[1:]) {
		// The heap profile samples allocations into a table of stacks the
		// process keeps resident to its end; only --memprofile writes it
		// (docs/architecture.md has the figures). Off before the first
		// command allocates.
		runtime.MemProfileRate = 0
	}
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
