//go:build mips || mipsle || mips64 || mips64le || ppc || ppc64 || ppc64le || sparc64

package umad

// _IOC encoding of mips, powerpc and sparc: 3 direction bits at 29
// (none = 1, read = 2, write = 4), 13 size bits at 16. Not tested on
// hardware.
const (
	iocNone      = 1
	iocWrite     = 4
	iocRead      = 2
	iocDirShift  = 29
	iocSizeShift = 16
)
