package sim

import (
	"encoding/binary"
	"time"

	"golang.org/x/sys/unix"
)

// eventfdWaker sleeps in ppoll(2) on an eventfd, which wake writes to.
// Unlike a Go timer, ppoll's timeout has nanosecond resolution, but on a
// VM the kernel still wakes the thread 50-150µs late (measured on a
// 2-core KVM guest with the default 50µs timer slack), so the delivery
// goroutine spins for the last 250µs.
type eventfdWaker struct{ fd int }

func newWaker() waker {
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return newChanWaker()
	}
	return &eventfdWaker{fd: fd}
}

func (w *eventfdWaker) sleep(d time.Duration) {
	ts := unix.NsecToTimespec(d.Nanoseconds())
	fds := [1]unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}}
	// EINTR (the runtime's preemption signal) just ends the sleep early:
	// the caller replans from the clock.
	if n, _ := unix.Ppoll(fds[:], &ts, nil); n > 0 {
		var buf [8]byte
		_, _ = unix.Read(w.fd, buf[:]) // reset the counter
	}
}

func (w *eventfdWaker) wake() {
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	_, _ = unix.Write(w.fd, one[:])
}

func (w *eventfdWaker) close()       { _ = unix.Close(w.fd) }
func (w *eventfdWaker) slack() int64 { return (250 * time.Microsecond).Nanoseconds() }
