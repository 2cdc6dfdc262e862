//go:build !(mips || mipsle || mips64 || mips64le || ppc || ppc64 || ppc64le || sparc64)

package umad

import "testing"

// Values from gcc against the kernel headers (generic _IOC encoding).
func TestIoctlNumbers(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"IB_USER_MAD_REGISTER_AGENT", iocRegisterAgent, 0xc01c1b01},
		{"IB_USER_MAD_UNREGISTER_AGENT", iocUnregisterAgent, 0x40041b02},
		{"IB_USER_MAD_ENABLE_PKEY", iocEnablePKey, 0x00001b03},
		{"IB_USER_MAD_REGISTER_AGENT2", iocRegisterAgent2, 0xc0281b04},
	} {
		if c.got != c.want {
			t.Errorf("%s = %#x, want %#x", c.name, c.got, c.want)
		}
	}
}
