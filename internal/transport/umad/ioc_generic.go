//go:build !(mips || mipsle || mips64 || mips64le || ppc || ppc64 || ppc64le || sparc64)

package umad

// Generic Linux _IOC encoding (x86, arm, arm64, riscv64, s390x, loong64):
// 2 direction bits at 30, 14 size bits at 16.
const (
	iocNone      = 0
	iocWrite     = 1
	iocRead      = 2
	iocDirShift  = 30
	iocSizeShift = 16
)
