package checks_test

import (
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
)

// TestMissingLeafName (trial H4): the name a group's leaf of a rail has
// when the leaf names tie it, and no name where they do not.
func TestMissingLeafName(t *testing.T) {
	for _, c := range []struct {
		name      string
		own, rail []string
		want      string
	}{
		{"the DGX file's gap", []string{"A09-IBLEAF-01-01", "A09-IBLEAF-02-01", "A09-IBLEAF-04-01"}, []string{"A09-IBLEAF-03-02", "B09-IBLEAF-03-05", "B09-IBLEAF-03-08"}, "A09-IBLEAF-03-01"},
		{"rail first", []string{"rail0-su3", "rail1-su3"}, []string{"rail2-su1", "rail2-su2"}, "rail2-su3"},
		{"one own leaf: which run is the rail's is not seen", []string{"rail0-su3"}, []string{"rail2-su1", "rail2-su2"}, ""},
		{"a run both sides vary in", []string{"r0-s3-x1", "r1-s3-x2"}, []string{"r2-s1-x1", "r2-s2-x2"}, ""},
		{"names of other shapes", []string{"rail0-su3", "rail1-su3"}, []string{"rail2-su1", "leafB"}, ""},
		{"a run both agree on, differently", []string{"ra0-su3", "ra1-su3"}, []string{"rb2-su1", "rb2-su2"}, ""},
	} {
		got, _, _, ok := checks.MissingLeafName(c.own, c.rail)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("%s: %q %v, want %q", c.name, got, ok, c.want)
		}
	}
}
