// Command ibdoctor diagnoses InfiniBand fabrics: it discovers the subnet
// with its own MADs, reads counters and forwarding tables, and ranks what
// is wrong. See the README for the commands.
package main

import (
	"os"

	"github.com/ibdoctor/ibdoctor/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
