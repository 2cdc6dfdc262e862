package htmlpage

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/layout"
)

// TestHostBoxAggregationNodeNotAnHCA (trial C6): on the DGX SuperPOD page
// each leaf's hosts box read "18 hosts: 19 HCAs up (+1 other)": its SHARP
// Aggregation Node counted as an HCA and as "+1 other". The 31 leaf boxes
// hold the file's 542 HCAs and 31 Aggregation Nodes (the 9 spines' are
// drawn in their switch boxes); the boxes say so, by the checks' role
// judgement.
func TestHostBoxAggregationNodeNotAnHCA(t *testing.T) {
	_, here, _, _ := runtime.Caller(0)
	p := filepath.Join(filepath.Dir(here), "..", "..", "..", "shared", "external-fabrics", "dgx-ndr-2025.ibnetdiscover")
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("corpus file missing (CI=true): %v", err)
		}
		t.Skipf("corpus file not here (%v); it lives in ../shared/external-fabrics/", err)
	}
	f, _, err := fabric.ReadFile(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	d := layout.Build(f, layout.Options{})
	up := regexp.MustCompile(`^(\d+) HCAs up`)
	hcas, ans := 0, 0
	for _, b := range d.Boxes {
		if b.Kind != layout.Hosts {
			continue
		}
		s := hostState(b)
		if strings.Contains(s, "other") {
			t.Errorf("%s: %s: an Aggregation Node counted as other", b.Label, s)
		}
		m := up.FindStringSubmatch(s)
		if m == nil {
			t.Fatalf("%s: %q", b.Label, s)
		}
		n, _ := strconv.Atoi(m[1])
		hcas += n
		if strings.Contains(s, "(+1 Aggregation Node)") {
			ans++
		}
	}
	if hcas != 542 || ans != 31 {
		t.Errorf("hosts boxes: %d HCAs up and %d with '(+1 Aggregation Node)', want 542 and 31", hcas, ans)
	}
}
