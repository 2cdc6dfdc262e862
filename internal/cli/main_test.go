package cli

import (
	"os"
	"testing"
)

// TestMain lets a test run ibdoctor in a child process (to signal it):
// with IBDOCTOR_CLI_CHILD=1 the test binary is ibdoctor.
func TestMain(m *testing.M) {
	if os.Getenv("IBDOCTOR_CLI_CHILD") == "1" {
		os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
