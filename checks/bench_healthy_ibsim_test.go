package checks_test

import (
	"context"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/ibsimtest"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/internal/transport/ibsim"
)

// BenchmarkHealthyOpenSM8k runs every check over topology.FatTree8k
// (9,472 nodes: 8,192 HCAs, 1,280 32-port switches, 3 levels) on ibsim
// after OpenSM's min-hop engine routed it, and logs what routing.asymmetric
// measured and every finding at warning or above (the healthy fabric must
// have none). It takes minutes, so it runs only when named:
//
//	go test -run '^$' -bench HealthyOpenSM8k -benchtime 1x -timeout 30m ./checks/
func BenchmarkHealthyOpenSM8k(b *testing.B) {
	ibsimtest.RequireNamedBench(b, "8k", "-bench HealthyOpenSM8k -benchtime 1x -timeout 30m")
	ibsimtest.Require(b, "opensm")
	_, net, host := ibsimtest.NetFile(b, topology.FatTree8k())
	s := ibsimtest.Start(b, net)
	setup := time.Now()
	s.StartOpenSM(ibsimtest.OpenSMOptions{Host: host, Extra: []string{"-R", "minhop"}})
	b.Logf("OpenSM min-hop sweep: %v", time.Since(setup).Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	c, err := ibsim.Dial(ctx, ibsim.Options{SockName: s.SockName, Host: host})
	if err != nil {
		b.Fatal(err)
	}
	eng := transport.NewEngine(c, transport.Options{Timeout: 2 * time.Second})
	defer eng.Close()
	b.ResetTimer()
	for range b.N {
		sw, err := diagnose.Run(ctx, eng, diagnose.Options{Routes: true})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		res, err := checks.Run(sw.Snapshot(checks.Expectations{}, nil, nil))
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("%d nodes, complete %v; checks took %v", len(sw.Fabric.Nodes), sw.Complete, time.Since(start).Round(time.Millisecond))
		for _, f := range res.Findings {
			if f.Check == "routing.asymmetric" || f.Severity >= checks.Warning {
				b.Logf("%s %s: %s", f.Severity, f.Check, f.Title)
				for _, e := range f.Evidence {
					b.Logf("    %s", e)
				}
			}
			if f.Severity >= checks.Warning {
				b.Errorf("healthy fabric: %s %s", f.Severity, f.Check)
			}
		}
	}
}
