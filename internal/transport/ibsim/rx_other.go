//go:build !linux

package ibsim

import (
	"os"
	"syscall"
)

// rxBatchMax is the most messages one recv takes: one, as there is no
// recvmmsg here.
const rxBatchMax = 1

// rxBatch receives one message per call into an rxSlot. A slot taken by
// the caller (set to nil) is replaced before the next call.
type rxBatch struct {
	slots [rxBatchMax]*rxSlot
	fn    func(fd uintptr) bool // b.try, made once
	n     int
	err   error
}

func newRxBatch() *rxBatch {
	b := &rxBatch{}
	b.fn = b.try
	return b
}

// recv waits for a message and returns 1.
func (b *rxBatch) recv(rc syscall.RawConn) (int, error) {
	if b.slots[0] == nil {
		b.slots[0] = new(rxSlot)
	}
	if err := rc.Read(b.fn); err != nil {
		return 0, err
	}
	if b.err != nil {
		return 0, os.NewSyscallError("read", b.err)
	}
	return 1, nil
}

func (b *rxBatch) try(fd uintptr) bool {
	for {
		n, err := syscall.Read(int(fd), b.slots[0].buf[:])
		switch err {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		b.n, b.err = max(n, 0), err
		return true
	}
}

// msg is the message of the last recv: a message longer than dataSize
// shows as dataSize+1 bytes.
func (b *rxBatch) msg(int) []byte { return b.slots[0].buf[:b.n] }
