package cli

import (
	"encoding/json"
	"testing"
)

// TestLFTsReadNotComputed (trial H8): 'check --json' said
// "switches_lft_read": 40 on the DGX dump, which has no forwarding tables,
// beside "routes_computed": true: a consumer graphing tables read saw every
// switch read. Only tables read count as read; computed ones are counted
// apart (switches_lft_computed). With --lfts the avakas dump has 1 of its
// 25 tables read and none computed.
func TestLFTsReadNotComputed(t *testing.T) {
	for _, c := range []struct {
		name               string
		args               []string
		read, computed     int
		wantRoutesComputed bool
	}{
		{"dgx", []string{"--sim=" + corpusPath(t, "dgx-ndr-2025.ibnetdiscover")}, 0, 40, true},
		{"avakas --lfts", []string{"--sim=" + corpusPath(t, "avakas-qlogic-qdr.ibnetdiscover-v-p"), "--lfts", corpusPath(t, "avakas-qlogic-qdr.ibroute-lid1")}, 1, 0, false},
	} {
		_, out, stderr := run(append([]string{"check", "--json"}, c.args...)...)
		var doc struct {
			RoutesComputed bool `json:"routes_computed"`
			Fabric         struct {
				Read     *int `json:"switches_lft_read"`
				Computed *int `json:"switches_lft_computed"`
			} `json:"fabric"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, stderr)
		}
		if doc.Fabric.Read == nil || *doc.Fabric.Read != c.read {
			t.Errorf("%s: switches_lft_read %v, want %d", c.name, lftCount(doc.Fabric.Read), c.read)
		}
		got := 0
		if doc.Fabric.Computed != nil {
			got = *doc.Fabric.Computed
		}
		if got != c.computed || doc.RoutesComputed != c.wantRoutesComputed {
			t.Errorf("%s: switches_lft_computed %d, routes_computed %v; want %d, %v", c.name, got, doc.RoutesComputed, c.computed, c.wantRoutesComputed)
		}
	}
}

func lftCount(p *int) any {
	if p == nil {
		return "absent"
	}
	return *p
}
