package checks_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
)

// onePlural finds a count of one with a plural noun: "1 destinations".
var onePlural = regexp.MustCompile(`(^|[^0-9.,x/-])1 (destinations|ports|hosts|links|switches|nodes|paths|leaves|rails|pairs|LIDs|HCAs|routes|uplinks|cables|attempts|devices|spines|servers)\b`)

// TestWordingOneIsSingular: faults that leave one of something (one host
// that cannot reach one destination, one port on another M_Key policy,
// one destination routed off the equal-cost set, ...) are worded in the
// singular in every finding's title, evidence, impact, next step and
// every undecided reason, and in what was not read. Before: "1 hosts
// cannot reach gpu002", "1 of 12 ports run another M_Key policy" with
// "1 ports: protection bits 2", "after 1 attempts".
func TestWordingOneIsSingular(t *testing.T) {
	small := topology.FatTree2{Leaves: 2, Spines: 2, HostsPerLeaf: 4}
	two := topology.FatTree2{Leaves: 2, Spines: 1, HostsPerLeaf: 1}
	for _, c := range []struct {
		name, faults string
		tree         topology.FatTree2
		want         string // in a title
	}{
		{"blackhole one host", "blackhole leaf02 dlid=gpu005\n", small, ""},
		{"mkey one port", "mkey leaf01/1 protect=2 lease=60\n", small, "1 of 12 ports runs another M_Key policy"},
		{"one lft entry", "lft leaf01 dlid=gpu005 port=1\n", small, ""},
		{"one node not read", "dead gpu008\n", small, ""},
		{"one link polling", "polling gpu003/1\n", small, ""},
		{"one host cannot reach one", "blackhole leaf02 dlid=gpu002\n", two, "1 host cannot reach gpu002"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := c.tree.Build()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := topology.AssignLIDs(f); err != nil {
				t.Fatal(err)
			}
			if err := topology.Route(f); err != nil {
				t.Fatal(err)
			}
			s, err := sim.New(f, sim.Options{})
			if err != nil {
				t.Fatal(err)
			}
			fs, err := sim.ParseFaults(strings.NewReader(c.faults))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.ApplyFaults(fs); err != nil {
				t.Fatal(err)
			}
			conn, err := s.Attach("gpu001 mlx5_0", 1)
			if err != nil {
				t.Fatal(err)
			}
			e := transport.NewEngine(conn, transport.Options{Timeout: 100 * time.Millisecond, Retries: 0})
			t.Cleanup(func() { e.Close(); conn.Close() })
			sw, err := diagnose.Run(context.Background(), e, diagnose.Options{Routes: true, Counters: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range sw.Unreached {
				texts := u.Reason
				if m := onePlural.FindString(texts); m != "" {
					t.Errorf("not read: %q in %q", strings.TrimSpace(m), texts)
				}
			}
			res, err := checks.Run(sw.Snapshot(checks.Expectations{}, nil, nil))
			if err != nil {
				t.Fatal(err)
			}
			var texts []string
			for _, f := range res.Findings {
				texts = append(texts, f.Title, f.Action, f.Impact.Summary)
				for _, e := range f.Evidence {
					texts = append(texts, e.Text)
				}
			}
			for _, u := range res.Undecided {
				texts = append(texts, u.Reason)
			}
			for _, s := range texts {
				if m := onePlural.FindString(s); m != "" {
					t.Errorf("%q in %q", strings.TrimSpace(m), s)
				}
			}
			if c.want != "" && !strings.Contains(strings.Join(texts, "\n"), c.want) {
				t.Errorf("no %q in:\n%s", c.want, strings.Join(texts, "\n"))
			}
			if testing.Verbose() {
				for _, f := range res.Findings {
					t.Logf("%s: %s", f.Check, f.Title)
				}
			}
		})
	}
}
