//go:build linux

package umad

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// kernelSide is the far end of a SOCK_SEQPACKET pair standing in for the
// umad device: one write there is one read on the Conn and vice versa,
// and the Conn's end is a pollable *os.File with real deadlines.
type kernelSide struct {
	t *testing.T
	f *os.File
}

func (k *kernelSide) deliver(b []byte) {
	k.t.Helper()
	if _, err := k.f.Write(b); err != nil {
		k.t.Fatal(err)
	}
}

func (k *kernelSide) sent() []byte {
	k.t.Helper()
	b := make([]byte, 4096)
	k.f.SetReadDeadline(time.Now().Add(2 * time.Second))
	n, err := k.f.Read(b)
	if err != nil {
		k.t.Fatal(err)
	}
	return b[:n]
}

func testPort(ll string) Port {
	return Port{CA: "mlx5_0", Num: 1, LID: 0x1a, SMLID: 1, State: mad.PortStateActive, PhysState: mad.PhysLinkUp,
		LinkLayer: ll, PortGUID: 0x0002c90300a1b2c3}
}

var testAgents = map[mad.Class]uint32{mad.ClassSubnDR: 0, mad.ClassSubnLID: 1, mad.ClassPerfMgt: 2}

// pairConn returns a Conn over a socket pair, wrapped by wrap if non-nil.
func pairConn(t *testing.T, p Port, hl int, wrap func(*os.File) devFile) (*Conn, *kernelSide) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "umad-test"), os.NewFile(uintptr(fds[1]), "kernel")
	var dev devFile = ours
	if wrap != nil {
		dev = wrap(ours)
	}
	c := newConn(dev, "/dev/infiniband/umad9", p, 0x0002c90300a1b2c2, hl, maps.Clone(testAgents))
	t.Cleanup(func() { c.Close(); theirs.Close() })
	return c, &kernelSide{t: t, f: theirs}
}

func drGetMAD(t *testing.T) []byte {
	s, err := mad.NewDRGet(mad.Path{0, 1}, mad.AttrNodeInfo, 0)
	if err != nil {
		t.Fatal(err)
	}
	s.TID = 0x1234
	return s.Marshal()
}

func perfGetMAD(t *testing.T, tid uint64) []byte {
	g, err := mad.NewPerfGet(mad.AttrClassPortInfo, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	g.TID = tid
	return g.Marshal()
}

func TestSendDirectedRoute(t *testing.T) {
	c, k := pairConn(t, testPort("InfiniBand"), hdrLen, nil)
	m := drGetMAD(t)
	err := c.Send(context.Background(), &transport.Packet{Addr: transport.DirectedRoute(), MAD: m, Timeout: 250 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	got := k.sent()
	if len(got) != hdrLen+mad.Size {
		t.Fatalf("wrote %d bytes, want %d", len(got), hdrLen+mad.Size)
	}
	want := madHdr{ID: 0, TimeoutMS: 250, QPN: 0, LID: 0xffff}
	if h := unmarshalHdr(got, hdrLen); h != want {
		t.Errorf("header %+v, want %+v", h, want)
	}
	if !bytes.Equal(got[hdrLen:], m) {
		t.Error("MAD bytes changed on the way")
	}
}

func TestSendPerfWithGRH(t *testing.T) {
	c, k := pairConn(t, testPort("Ethernet"), hdrLen, nil)
	gid := netip.MustParseAddr("fe80::ff:fe00:2")
	addr := transport.Addr{QP: 1, QKey: transport.GSIQKey, SL: 3, PKeyIndex: 2,
		GRH: &transport.GRH{DGID: gid, SGIDIndex: 1, HopLimit: 64, TrafficClass: 4, FlowLabel: 9}}
	if err := c.Send(context.Background(), &transport.Packet{Addr: addr, MAD: perfGetMAD(t, 7), Timeout: 1500 * time.Microsecond}); err != nil {
		t.Fatal(err)
	}
	h := unmarshalHdr(k.sent(), hdrLen)
	want := madHdr{ID: 2, TimeoutMS: 1, QPN: 1, QKey: 0x80010000, SL: 3, PKeyIndex: 2,
		GRHPresent: true, GID: gid, GIDIndex: 1, HopLimit: 64, TrafficClass: 4, FlowLabel: 9}
	if h != want {
		t.Errorf("header %+v, want %+v", h, want)
	}
}

func TestSendResponseIsUntracked(t *testing.T) {
	c, k := pairConn(t, testPort("InfiniBand"), hdrLen, nil)
	m := perfGetMAD(t, 7)
	m[3] = byte(mad.MethodGetResp)
	if err := c.Send(context.Background(), &transport.Packet{Addr: transport.PerfAt(5, 0, 0), MAD: m, Timeout: time.Second}); err != nil {
		t.Fatal(err)
	}
	if h := unmarshalHdr(k.sent(), hdrLen); h.TimeoutMS != 0 || h.LID != 5 || h.ID != 2 {
		t.Errorf("response header %+v: want timeout 0, lid 5, PerfMgt agent 2", h)
	}
}

func TestSendOldLayout(t *testing.T) {
	c, k := pairConn(t, testPort("InfiniBand"), oldHdrLen, nil)
	if err := c.Send(context.Background(), &transport.Packet{Addr: transport.DirectedRoute(), MAD: drGetMAD(t)}); err != nil {
		t.Fatal(err)
	}
	got := k.sent()
	if len(got) != oldHdrLen+mad.Size {
		t.Fatalf("wrote %d bytes with the old header, want %d", len(got), oldHdrLen+mad.Size)
	}
	if got[oldHdrLen] != mad.BaseVersion || mad.Class(got[oldHdrLen+1]) != mad.ClassSubnDR {
		t.Errorf("MAD does not start at byte 56")
	}
}

func TestSendRefusals(t *testing.T) {
	ctx := context.Background()
	t.Run("no agent for the class", func(t *testing.T) {
		c, _ := pairConn(t, testPort("InfiniBand"), hdrLen, nil)
		delete(c.agents, mad.ClassPerfMgt) // as if opened with SMP only
		err := c.Send(ctx, &transport.Packet{Addr: transport.PerfAt(5, 0, 0), MAD: perfGetMAD(t, 1)})
		if err == nil || !strings.Contains(err.Error(), "no PerfMgt agent") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("RoCE without GRH", func(t *testing.T) {
		c, _ := pairConn(t, testPort("Ethernet"), hdrLen, nil)
		err := c.Send(ctx, &transport.Packet{Addr: transport.PerfAt(5, 0, 0), MAD: perfGetMAD(t, 1)})
		if err == nil || !strings.Contains(err.Error(), "RoCE") || !strings.Contains(err.Error(), "GID") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("oversized MAD", func(t *testing.T) {
		c, _ := pairConn(t, testPort("InfiniBand"), hdrLen, nil)
		err := c.Send(ctx, &transport.Packet{Addr: transport.DirectedRoute(), MAD: make([]byte, 300)})
		if err == nil || !strings.Contains(err.Error(), "300 bytes") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("after close", func(t *testing.T) {
		c, _ := pairConn(t, testPort("InfiniBand"), hdrLen, nil)
		c.Close()
		if err := c.Send(ctx, &transport.Packet{Addr: transport.DirectedRoute(), MAD: drGetMAD(t)}); !errors.Is(err, transport.ErrClosed) {
			t.Fatalf("got %v", err)
		}
	})
}

// faultDev injects errno results into Read or Write.
type faultDev struct {
	*os.File
	readErr  func(b []byte) error
	writeErr error
}

func (d *faultDev) Read(b []byte) (int, error) {
	if d.readErr != nil {
		if err := d.readErr(b); err != nil {
			return 0, &fs.PathError{Op: "read", Path: "umad9", Err: err}
		}
	}
	return d.File.Read(b)
}

func (d *faultDev) Write(b []byte) (int, error) {
	if d.writeErr != nil {
		return 0, &fs.PathError{Op: "write", Path: "umad9", Err: d.writeErr}
	}
	return d.File.Write(b)
}

func TestSendErrors(t *testing.T) {
	for _, tt := range []struct {
		errno  unix.Errno
		is     []error
		substr string
	}{
		{unix.ETIMEDOUT, []error{transport.ErrTimeout, unix.ETIMEDOUT}, "address resolution timed out"},
		{unix.EIO, []error{ErrDeviceGone, unix.EIO}, "went away"},
		{unix.EPIPE, []error{ErrDeviceGone}, "went away"},
		{unix.EINVAL, []error{unix.EINVAL}, "invalid directed route"},
	} {
		t.Run(tt.errno.Error(), func(t *testing.T) {
			c, _ := pairConn(t, testPort("InfiniBand"), hdrLen, func(f *os.File) devFile { return &faultDev{File: f, writeErr: tt.errno} })
			err := c.Send(context.Background(), &transport.Packet{Addr: transport.DirectedRoute(), MAD: drGetMAD(t)})
			for _, target := range tt.is {
				if !errors.Is(err, target) {
					t.Errorf("%v: not errors.Is %v", err, target)
				}
			}
			if err == nil || !strings.Contains(err.Error(), tt.substr) || !strings.Contains(err.Error(), "umad9") {
				t.Errorf("%v: want %q and the device name", err, tt.substr)
			}
		})
	}
}

func TestRecvResponse(t *testing.T) {
	c, k := pairConn(t, testPort("Ethernet"), hdrLen, nil)
	peer := netip.MustParseAddr("fe80::ff:fe00:1")
	h := madHdr{ID: 2, Length: 320, QPN: 1, LID: 0, SL: 0, GRHPresent: true, GIDIndex: 0, HopLimit: 64, GID: peer, PKeyIndex: 0}
	m := perfGetMAD(t, 0x0000000400001000)
	m[3] = byte(mad.MethodGetResp)
	b := make([]byte, hdrLen+mad.Size)
	h.marshal(b, hdrLen)
	copy(b[hdrLen:], m)
	k.deliver(b)

	p, err := c.Recv(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != 0 || !bytes.Equal(p.MAD, m) {
		t.Errorf("status %d, MAD equal %v", p.Status, bytes.Equal(p.MAD, m))
	}
	wantAddr := transport.Addr{QP: 1, GRH: &transport.GRH{DGID: peer, HopLimit: 64}}
	if p.Addr.QP != wantAddr.QP || p.Addr.GRH == nil || *p.Addr.GRH != *wantAddr.GRH {
		t.Errorf("addr %+v grh %+v, want %+v %+v", p.Addr, p.Addr.GRH, wantAddr, wantAddr.GRH)
	}
}

func TestRecvTimeoutNotice(t *testing.T) {
	c, k := pairConn(t, testPort("InfiniBand"), hdrLen, nil)
	// The kernel's notice: header with status 110 plus the 24-byte MAD
	// header of the request (88 bytes).
	req := drGetMAD(t)
	b := make([]byte, hdrLen+mad.HeaderSize)
	(&madHdr{ID: 0, Status: 110, Length: 320, LID: 0xffff}).marshal(b, hdrLen)
	copy(b[hdrLen:], req[:mad.HeaderSize])
	k.deliver(b)
	p, err := c.Recv(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != transport.StatusTimedOut || len(p.MAD) != mad.HeaderSize {
		t.Fatalf("status %d, %d MAD bytes; want 110 and 24", p.Status, len(p.MAD))
	}
	h, err := mad.PeekHeader(p.MAD)
	if err != nil || mad.TIDLow(h.TID) != 0x1234 {
		t.Errorf("notice header %+v, %v", h, err)
	}
}

func TestRecvGrowsOnEINVAL(t *testing.T) {
	const big = hdrLen + 2048 // an RMPP-sized message the first buffer cannot hold
	var sizes []int
	c, k := pairConn(t, testPort("InfiniBand"), hdrLen, func(f *os.File) devFile {
		return &faultDev{File: f, readErr: func(b []byte) error {
			sizes = append(sizes, len(b))
			if len(b) < big {
				return unix.EINVAL
			}
			return nil
		}}
	})
	msg := bytes.Repeat([]byte{0xab}, big)
	(&madHdr{ID: 2}).marshal(msg, hdrLen)
	k.deliver(msg)
	p, err := c.Recv(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(p.MAD) != big-hdrLen || p.MAD[len(p.MAD)-1] != 0xab {
		t.Errorf("got %d MAD bytes", len(p.MAD))
	}
	if want := []int{320, 640, 1280, 2560}; len(sizes) != len(want) || sizes[0] != 320 || sizes[3] != 2560 {
		t.Errorf("read sizes %v, want %v", sizes, want)
	}
}

func TestRecvErrors(t *testing.T) {
	t.Run("device gone", func(t *testing.T) {
		c, _ := pairConn(t, testPort("InfiniBand"), hdrLen, func(f *os.File) devFile {
			return &faultDev{File: f, readErr: func([]byte) error { return unix.EIO }}
		})
		_, err := c.Recv(context.Background())
		if !errors.Is(err, ErrDeviceGone) || !strings.Contains(err.Error(), "umad9") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("EINVAL forever", func(t *testing.T) {
		c, _ := pairConn(t, testPort("InfiniBand"), hdrLen, func(f *os.File) devFile {
			return &faultDev{File: f, readErr: func([]byte) error { return unix.EINVAL }}
		})
		_, err := c.Recv(context.Background())
		if !errors.Is(err, unix.EINVAL) || !strings.Contains(err.Error(), "65536-byte buffer") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("short read", func(t *testing.T) {
		c, k := pairConn(t, testPort("InfiniBand"), hdrLen, nil)
		k.deliver(make([]byte, 40))
		if _, err := c.Recv(context.Background()); err == nil || !strings.Contains(err.Error(), "40 bytes") {
			t.Fatalf("got %v", err)
		}
	})
}

func TestRecvContext(t *testing.T) {
	c, _ := pairConn(t, testPort("InfiniBand"), hdrLen, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := c.Recv(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("deadline: got %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("deadline honoured after %v", d)
	}

	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(30*time.Millisecond, cancel)
	if _, err := c.Recv(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel: got %v", err)
	}
	// The Conn still works after an interrupted Recv.
	done := make(chan error, 1)
	go func() { _, err := c.Recv(context.Background()); done <- err }()
	time.Sleep(30 * time.Millisecond)
	c.Close()
	select {
	case err := <-done:
		if !errors.Is(err, transport.ErrClosed) {
			t.Fatalf("close: got %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Close did not unblock Recv")
	}
}

func TestLocal(t *testing.T) {
	c, _ := pairConn(t, testPort("InfiniBand"), hdrLen, nil)
	want := transport.LocalPort{Name: "mlx5_0/1", NodeGUID: 0x0002c90300a1b2c2, PortGUID: 0x0002c90300a1b2c3,
		PortNum: 1, LID: 0x1a, SMLID: 1, LinkLayer: "InfiniBand"}
	if got := c.Local(); got != want {
		t.Errorf("Local() = %+v, want %+v", got, want)
	}
}

// TestOpenErrors drives Open against fixture sysfs trees and device
// directories that cannot work, and checks each error says what to do.
func TestOpenErrors(t *testing.T) {
	fixture := func(name string) string { return filepath.Join("testdata", name) }
	t.Run("no device", func(t *testing.T) {
		_, err := Open(Options{SysfsRoot: t.TempDir(), SMP: true})
		if !errors.Is(err, ErrNoDevice) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("nothing asked", func(t *testing.T) {
		if _, err := Open(Options{SysfsRoot: fixture("ib2port")}); err == nil {
			t.Fatal("no error")
		}
	})
	t.Run("ib_umad not loaded", func(t *testing.T) {
		_, err := Open(Options{SysfsRoot: fixture("noumad"), SMP: true})
		if err == nil || !strings.Contains(err.Error(), "modprobe ib_umad") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("device node missing", func(t *testing.T) {
		dev := t.TempDir()
		_, err := Open(Options{SysfsRoot: fixture("ib2port"), DevRoot: dev, SMP: true})
		// Port 1 is ACTIVE and is umad1 (not umad0) in this fixture.
		want := filepath.Join(dev, "infiniband", "umad1")
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), want) {
			t.Fatalf("got %v, want it to name %s", err, want)
		}
	})
	t.Run("not a umad device", func(t *testing.T) {
		// /dev/null answers every umad ioctl with ENOTTY: ENABLE_PKEY,
		// then REGISTER_AGENT2, then the fallback REGISTER_AGENT.
		dev := t.TempDir()
		os.Mkdir(filepath.Join(dev, "infiniband"), 0o755)
		if err := os.Symlink("/dev/null", filepath.Join(dev, "infiniband", "umad1")); err != nil {
			t.Fatal(err)
		}
		_, err := Open(Options{SysfsRoot: fixture("ib2port"), DevRoot: dev, Perf: true})
		if !errors.Is(err, unix.ENOTTY) || !strings.Contains(err.Error(), "registering a PerfMgt agent") {
			t.Fatalf("got %v", err)
		}
	})
}

func TestErrorMessages(t *testing.T) {
	roce := testPort("Ethernet")
	roce.CA = "rxe0"
	err := registerError("/dev/infiniband/umad0", &roce, mad.ClassSubnDR, unix.EPROTONOSUPPORT)
	if !errors.Is(err, ErrNoSMI) || !strings.Contains(err.Error(), "SMP discovery needs an InfiniBand port; rxe0 port 1 is Ethernet (RoCE)") {
		t.Errorf("RoCE: %v", err)
	}
	plane := testPort("InfiniBand")
	plane.CapMask = capIsSMDisabled
	if err := registerError("/dev/infiniband/umad0", &plane, mad.ClassSubnDR, unix.EPROTONOSUPPORT); !strings.Contains(err.Error(), "GSI-only plane") {
		t.Errorf("XDR plane: %v", err)
	}
	ib := testPort("InfiniBand")
	perm := openError("/dev/infiniband/umad0", &ib, &fs.PathError{Op: "open", Path: "/dev/infiniband/umad0", Err: unix.EACCES})
	if !errors.Is(perm, fs.ErrPermission) || !strings.Contains(perm.Error(), "/dev/infiniband/umad0") ||
		!strings.Contains(perm.Error(), "root") || !strings.Contains(perm.Error(), "udev rule") {
		t.Errorf("permission: %v", perm)
	}
	gone := openError("/dev/infiniband/umad0", &ib, &fs.PathError{Op: "open", Path: "/dev/infiniband/umad0", Err: unix.ENODEV})
	if !errors.Is(gone, ErrDeviceGone) {
		t.Errorf("gone: %v", gone)
	}
}
