package snapshot

import (
	"strings"
	"testing"
	"time"
)

// TestIndexResolveFQDN: the snapshot's host lookup treats "gpu001" and
// "gpu001.cluster.local" as one host, as fabric.NodesByHost does (trial
// B10: a gate's --nodes gpu001 missed the FQDN-named HCAs).
func TestIndexResolveFQDN(t *testing.T) {
	f := routedTree(t)
	var want []uint32
	for i, n := range f.Nodes {
		if strings.HasPrefix(n.Description, "gpu001 ") {
			if len(want) == 0 {
				n.Description = strings.Replace(n.Description, "gpu001", "gpu001.cluster.local", 1)
			}
			want = append(want, uint32(i))
		}
	}
	// A host whose name extends gpu001's with no dot is another host.
	data, err := EncodeIndex(f, nil, time.Now(), "sim:test", true)
	if err != nil {
		t.Fatal(err)
	}
	x, err := ParseIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"gpu001", "gpu001.cluster.local"} {
		if got := x.Resolve([]string{h}, nil); len(got) != len(want) {
			t.Errorf("Resolve(%q) = %v, want %v", h, got, want)
		}
	}
}
