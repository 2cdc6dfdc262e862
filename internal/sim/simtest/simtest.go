// Package simtest brings up a fabric in the in-process simulator and
// discovers it through the request engine, for benchmarks of the read
// stages that run after discovery.
package simtest

import (
	"context"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/discover"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/transport"
)

// Discovered simulates f, attaches an engine (1 s timeout, 1 retry) and
// discovers the fabric through it. The engine is closed on tb.Cleanup.
func Discovered(tb testing.TB, f *fabric.Fabric) (*transport.Engine, *fabric.Fabric) {
	tb.Helper()
	s, err := sim.New(f, sim.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	c, err := s.Attach("", 0)
	if err != nil {
		tb.Fatal(err)
	}
	e := transport.NewEngine(c, transport.Options{Timeout: time.Second, Retries: 1})
	tb.Cleanup(func() { e.Close() })
	live, err := discover.Run(context.Background(), e, discover.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return e, live
}
