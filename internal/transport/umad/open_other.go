//go:build !linux

package umad

import (
	"context"
	"errors"

	"github.com/ibdoctor/ibdoctor/internal/transport"
)

// Options say which port to open and which agents to register.
type Options struct {
	SysfsRoot, DevRoot string
	CA                 string
	Port               int
	SMP, Perf          bool
	PerfServe          bool
}

// Conn exists on every OS so that callers compile; only Linux opens one.
type Conn struct{}

var errNotLinux = errors.New("umad: the kernel MAD device exists only on Linux; try `--sim` for the built-in sample fabric")

// Open fails: the umad device exists only on Linux.
func Open(Options) (*Conn, error) { return nil, errNotLinux }

func (*Conn) Send(context.Context, *transport.Packet) error   { return errNotLinux }
func (*Conn) Recv(context.Context) (*transport.Packet, error) { return nil, errNotLinux }
func (*Conn) Local() transport.LocalPort                      { return transport.LocalPort{} }
func (*Conn) Close() error                                    { return nil }
