package fabric

import (
	"strings"
	"testing"
)

// TestJSONFlagNames holds the two name lists a port's flags are read
// from (unreached, pkey_enforce) to the bits they give, repeats and
// order aside, and to the error naming the first unknown name.
func TestJSONFlagNames(t *testing.T) {
	doc := func(unreached, enforce string) string {
		return `{"schema":"ibdoctor.fabric/v1","recorded":["sm_info","pkeys"],"sms":[],"nodes":[{"type":"ca","guid":"0x1","system_image_guid":"0x1","description":"h","vendor_id":"0x0","device_id":"0x0","revision":"0x0","num_ports":1,"ports":[{"num":1,"guid":"0x1","lid":3,"state":"Active","phys_state":"LinkUp","master_sm_lid":3,"unreached":[` + unreached + `],"pkey_enforce":[` + enforce + `],"pkeys":["0xffff"]}]}],"links":[]}`
	}
	for _, c := range []struct {
		unreached, enforce string
		wantU              Unreached
		wantE              uint8
		err                string
	}{
		{``, ``, 0, 0, ""},
		{`"speed"`, `"in"`, UnreachedSpeed, PKeyEnforceIn, ""},
		{`"far_end","port_info","far_end"`, `"out","in","out"`, UnreachedPeer | UnreachedInfo, PKeyEnforceIn | PKeyEnforceOut, ""},
		{`"speed","far_end","port_info"`, `"out"`, UnreachedSpeed | UnreachedPeer | UnreachedInfo, PKeyEnforceOut, ""},
		{`"speed","bogus","nope"`, `"in"`, 0, 0, `unreached "bogus": want port_info, speed or far_end`},
		{`"Speed"`, `"in"`, 0, 0, `unreached "Speed": want port_info, speed or far_end`},
		{`"speed"`, `"in","inbound","x"`, 0, 0, `pkey_enforce "inbound": want in or out`},
		{`"speed"`, `""`, 0, 0, `pkey_enforce "": want in or out`},
	} {
		f, err := Unmarshal([]byte(doc(c.unreached, c.enforce)))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("unreached [%s] pkey_enforce [%s]: err = %v, want %q", c.unreached, c.enforce, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("unreached [%s] pkey_enforce [%s]: %v", c.unreached, c.enforce, err)
			continue
		}
		p := f.Nodes[0].Ports[1]
		if p.Unreached != c.wantU || p.PKeyEnforce != c.wantE {
			t.Errorf("unreached [%s] pkey_enforce [%s]: got %#x %#x, want %#x %#x", c.unreached, c.enforce, p.Unreached, p.PKeyEnforce, c.wantU, c.wantE)
		}
	}
}
