package cli

import (
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
)

// TestPartialLFTsNotRead: --lfts with the ibroute dump of one avakas
// switch gives 1 of the 25 switches' tables. The other 24 answered an
// empty table (LinearFDBTop 0), so check reported 24 critical
// routing.unreachable "destination beyond LinearFDBTop" — tables the file
// does not have, presented as tables that route nothing. A table that is
// not in the file was not read: those switches are listed as not read,
// with the file as the reason, and no routing finding rests on them.
func TestPartialLFTsNotRead(t *testing.T) {
	topo := corpusPath(t, "avakas-qlogic-qdr.ibnetdiscover-v-p")
	lfts := corpusPath(t, "avakas-qlogic-qdr.ibroute-lid1")
	code, out, stderr := run("check", "--sim="+topo, "--lfts", lfts, "--json")
	d := chkParse(t, out)
	for _, f := range d.Findings {
		if strings.HasPrefix(f.Check, "routing.") {
			t.Errorf("%s %s: %s", f.Severity, f.Check, f.Title)
		}
	}
	notInFile := 0
	for _, u := range d.Unreached {
		if strings.Contains(u.What, "LinearForwardingTable") && strings.Contains(u.Reason, "not in") {
			notInFile++
		}
	}
	if notInFile != 24 {
		t.Errorf("%d switches' tables listed as not in the file, want 24: %+v", notInFile, d.Unreached)
	}
	// node008 at DDR is still found, whatever was not read: a warning,
	// since the file records no supported speeds (its HCA may be
	// DDR-only), so with 24 tables not read check cannot vouch: exit 2.
	slow := false
	for _, f := range d.Findings {
		slow = slow || (f.Check == "link.degraded-speed" && f.Severity == checks.Warning && strings.Contains(f.Title, "node008"))
	}
	if code != ExitUndecided || !slow {
		t.Errorf("exit %d, want 2 with node008's slow link a warning\n%s", code, stderr)
	}
	// routes prints the one table and lists the others as not read,
	// saying why (it gave the MAD status).
	code, _, stderr = run("routes", "--sim="+topo, "--lfts", lfts)
	if code != ExitPartial || strings.Count(stderr, "is not in avakas-qlogic-qdr.ibroute-lid1") != 24 || strings.Contains(stderr, "not supported") {
		t.Errorf("routes: exit %d, want 3 with 24 tables not in the file:\n%s", code, stderr)
	}
	// trace through L107, whose table is not in the file: could not
	// decide, saying why (it said "No route (0xFF) ... entry is 255",
	// then the MAD status).
	code, out, stderr = run("trace", "--sim="+topo, "--lfts", lfts, "node008", "node010")
	if code != ExitUndecided || !strings.Contains(stderr, "is not in avakas-qlogic-qdr.ibroute-lid1") || strings.Contains(out+stderr, "255") {
		t.Errorf("trace: exit %d, want 2 saying the table is not in the file:\n%s%s", code, out, stderr)
	}
}
