package ibsim

import (
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rxBatchMax is the most messages one recvmmsg takes: the Engine's
// default window, so that a full window of answers takes one call.
const rxBatchMax = 64

// rxBatch receives up to rxBatchMax messages with one recvmmsg, each into
// its own rxSlot. Slots taken by the caller (set to nil) are replaced
// before the next call; the others are reused.
type rxBatch struct {
	slots [rxBatchMax]*rxSlot
	iov   [rxBatchMax]unix.Iovec
	hdrs  [rxBatchMax]unix.Mmsghdr
	fn    func(fd uintptr) bool // b.try, made once
	n     int
	errno syscall.Errno
}

func newRxBatch() *rxBatch {
	b := &rxBatch{}
	b.fn = b.try
	for i := range b.hdrs {
		b.hdrs[i].Hdr.Iov = &b.iov[i]
		b.hdrs[i].Hdr.Iovlen = 1
	}
	return b
}

// recv waits for at least one message and returns how many it took.
func (b *rxBatch) recv(rc syscall.RawConn) (int, error) {
	for i, s := range b.slots {
		if s == nil {
			s = new(rxSlot)
			b.slots[i] = s
			b.iov[i].Base = &s.buf[0]
			b.iov[i].SetLen(len(s.buf))
		}
	}
	if err := rc.Read(b.fn); err != nil {
		return 0, err
	}
	if b.errno != 0 {
		return 0, os.NewSyscallError("recvmmsg", b.errno)
	}
	return b.n, nil
}

// try is the RawConn.Read callback: one non-blocking recvmmsg; false
// (wait for the socket to be readable) when nothing is queued.
func (b *rxBatch) try(fd uintptr) bool {
	for {
		r, _, e := unix.Syscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&b.hdrs[0])), rxBatchMax, unix.MSG_DONTWAIT, 0, 0)
		switch e {
		case 0:
			b.n, b.errno = int(r), 0
			return true
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		}
		b.n, b.errno = 0, e
		return true
	}
}

// msg is message i of the last recv: at most len(rxSlot.buf) bytes, so a
// message longer than dataSize shows as dataSize+1 bytes.
func (b *rxBatch) msg(i int) []byte {
	return b.slots[i].buf[:b.hdrs[i].Len]
}
