//go:build linux

package umad

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ibdoctor/ibdoctor/mad"
)

// Options say which port to open and which agents to register.
type Options struct {
	SysfsRoot string // default "/sys"
	DevRoot   string // default "/dev"; the device is DevRoot/infiniband/umadN
	CA        string // device name ("mlx5_0"); empty: pick like infiniband-diags
	Port      int    // port number; 0: pick (a switch uses port 0)
	// SMP registers directed-route (0x81) and LID-routed (0x01) subnet
	// management agents on QP0.
	SMP bool
	// Perf registers a PerfMgt (0x04) agent on QP1.
	Perf bool
	// PerfServe makes the PerfMgt agent also receive unsolicited PerfMgt
	// Get and Set requests, i.e. act as a performance management agent.
	// Only tests need this; it implies Perf.
	PerfServe bool
	// Vendor registers an agent on QP1 for NVIDIA's vendor-specific class
	// 0x0A (GeneralInfo). The class is in vendor range 1 (0x09-0x0F),
	// which the kernel registers without an OUI (only range 2,
	// 0x30-0x4F, needs one). A refusal does not fail Open: the port's
	// Local().NoVendorMADs says why, and firmware is not read.
	Vendor bool
	// VendorServe makes the vendor agent receive unsolicited Gets (tests
	// answer GeneralInfo with it); it implies Vendor.
	VendorServe bool
}

// Open selects a local port from sysfs, opens its umad device and
// registers the agents the options ask for.
func Open(o Options) (*Conn, error) {
	if o.PerfServe {
		o.Perf = true
	}
	if o.VendorServe {
		o.Vendor = true
	}
	if !o.SMP && !o.Perf && !o.Vendor {
		return nil, errors.New("umad: nothing to open: ask for SMP, PerfMgt and/or vendor agents")
	}
	if o.SysfsRoot == "" {
		o.SysfsRoot = DefaultSysfsRoot
	}
	if o.DevRoot == "" {
		o.DevRoot = "/dev"
	}
	cas, err := Enumerate(o.SysfsRoot)
	if err != nil {
		return nil, err
	}
	ca, port, err := Select(cas, Selection{CA: o.CA, Port: o.Port, SMP: o.SMP, Perf: o.Perf || o.Vendor})
	if err != nil {
		return nil, err
	}
	if port.UMAD == "" {
		return nil, fmt.Errorf("umad: %s has no umad device in %s: load the ib_umad kernel module (modprobe ib_umad)",
			port.Name(), filepath.Join(o.SysfsRoot, "class", "infiniband_mad"))
	}
	path := filepath.Join(o.DevRoot, "infiniband", port.UMAD)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, openError(path, port, err)
	}
	raw, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("umad: %s: %w", path, err)
	}
	r := registrar{raw: raw}
	// ENABLE_PKEY first: it selects the 64-byte header. Kernels older
	// than 3.x answer ENOTTY/EINVAL and keep the 56-byte one.
	r.pkey = ioctl(raw, iocEnablePKey, nil) == nil

	type want struct {
		qpn     uint8
		class   mad.Class
		methods []uint8
	}
	var wants []want
	if o.SMP {
		wants = append(wants, want{0, mad.ClassSubnDR, nil}, want{0, mad.ClassSubnLID, nil})
	}
	if o.Perf {
		var m []uint8
		if o.PerfServe {
			m = []uint8{uint8(mad.MethodGet), uint8(mad.MethodSet)}
		}
		wants = append(wants, want{1, mad.ClassPerfMgt, m})
	}
	agents := make(map[mad.Class]uint32)
	for _, w := range wants {
		id, err := r.register(w.qpn, uint8(w.class), 1, w.methods)
		if err != nil {
			f.Close() // the kernel unregisters the agents of a closed fd
			return nil, registerError(path, port, w.class, err)
		}
		agents[w.class] = id
	}
	noVendor := "no agent for the vendor-specific class (0x0A) was registered on this port"
	if o.Vendor {
		var m []uint8
		if o.VendorServe {
			m = []uint8{uint8(mad.MethodGet)}
		}
		id, err := r.register(1, uint8(mad.ClassMlnxVendor), 1, m)
		if err != nil {
			noVendor = registerError(path, port, mad.ClassMlnxVendor, err).Error()
		} else {
			agents[mad.ClassMlnxVendor], noVendor = id, ""
		}
	}
	c := newConn(f, path, *port, ca.NodeGUID, r.hdrLen(), agents)
	c.local.NoVendorMADs = noVendor
	c.raw = raw
	return c, nil
}

// registrar registers agents, preferring REGISTER_AGENT2 and falling back
// to the old ioctl on kernels that do not know it.
type registrar struct {
	raw    syscall.RawConn
	pkey   bool // ENABLE_PKEY succeeded
	agent2 bool // REGISTER_AGENT2 worked
	old    bool // REGISTER_AGENT2 is unknown: use the old ioctl
}

// hdrLen is the header layout in force: 64 bytes once ENABLE_PKEY or
// REGISTER_AGENT2 has succeeded, else the old 56.
func (r *registrar) hdrLen() int {
	if r.pkey || r.agent2 {
		return hdrLen
	}
	return oldHdrLen
}

func (r *registrar) register(qpn, class, version uint8, methods []uint8) (uint32, error) {
	if !r.old {
		req := regReq2{QPN: uint32(qpn), MgmtClass: class, MgmtClassVersion: version, MethodMask: methodMask2(methods)}
		err := ioctl(r.raw, iocRegisterAgent2, unsafe.Pointer(&req))
		runtime.KeepAlive(&req)
		if err == nil {
			r.agent2 = true
			return req.ID, nil
		}
		if !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOTTY) || r.agent2 {
			return 0, err
		}
		r.old = true
	}
	req := regReq{QPN: qpn, MgmtClass: class, MgmtClassVersion: version}
	putMethodMask(req.MethodMask[:], methods)
	err := ioctl(r.raw, iocRegisterAgent, unsafe.Pointer(&req))
	runtime.KeepAlive(&req)
	if err != nil {
		return 0, err
	}
	return req.ID, nil
}

// unregisterAll removes every agent; UNREGISTER takes a pointer to the id.
func (c *Conn) unregisterAll() error {
	var errs []error
	for class, id := range c.agents {
		v := id
		err := ioctl(c.raw, iocUnregisterAgent, unsafe.Pointer(&v))
		runtime.KeepAlive(&v)
		if err != nil && errnoOf(err) != unix.EIO && errnoOf(err) != unix.ENODEV {
			errs = append(errs, fmt.Errorf("umad: unregister %v agent %d on %s: %w", class, id, c.path, err))
		}
	}
	return errors.Join(errs...)
}

// ioctl runs one ioctl on the fd, holding it against a concurrent Close.
func ioctl(raw syscall.RawConn, req uintptr, arg unsafe.Pointer) error {
	var errno unix.Errno
	err := raw.Control(func(fd uintptr) {
		_, _, errno = unix.Syscall(unix.SYS_IOCTL, fd, req, uintptr(arg))
	})
	if err != nil {
		return err
	}
	if errno != 0 {
		return errno
	}
	return nil
}

func openError(path string, p *Port, err error) error {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("umad: open %s (%s): permission denied: sending MADs needs root, or a udev rule that gives your group the umad devices, e.g. KERNEL==\"umad*\", GROUP=\"rdma\", MODE=\"0660\": %w",
			path, p.Name(), fs.ErrPermission)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("umad: %s (%s) is listed in sysfs but the device node does not exist: is devtmpfs mounted on /dev, or is this a container without /dev/infiniband? %w",
			path, p.Name(), fs.ErrNotExist)
	}
	switch errnoOf(err) {
	case unix.ENODEV, unix.ENXIO, unix.EIO:
		return fmt.Errorf("umad: open %s (%s): %w: %w", path, p.Name(), ErrDeviceGone, errnoOf(err))
	}
	return fmt.Errorf("umad: open %s (%s): %w", path, p.Name(), err)
}

func registerError(path string, p *Port, class mad.Class, err error) error {
	errno := errnoOf(err)
	switch {
	case errno == unix.EPROTONOSUPPORT && class.IsSMP():
		if !p.IsInfiniBand() {
			return fmt.Errorf("umad: SMP discovery needs an InfiniBand port; %s port %d is %s (RoCE): %w: %w", p.CA, p.Num, p.LinkLayer, ErrNoSMI, errno)
		}
		if p.CapMask&capIsSMDisabled != 0 {
			return fmt.Errorf("umad: %s port %d is a GSI-only plane (IsSMdisabled is set): send SMPs through the device of the SMI plane with the same port GUID: %w: %w", p.CA, p.Num, ErrNoSMI, errno)
		}
		return fmt.Errorf("umad: the kernel has no subnet management interface on %s port %d: %w: %w", p.CA, p.Num, ErrNoSMI, errno)
	case errno == unix.EPERM || errno == unix.EACCES:
		return fmt.Errorf("umad: registering a %v agent on %s (%s) was refused (security policy, e.g. SELinux ib_endport manage_subnet): %w", class, path, p.Name(), err)
	case errno == unix.ENOMEM:
		return fmt.Errorf("umad: registering a %v agent on %s: out of agent slots (32 per open device): %w", class, path, err)
	case errno == unix.EIO || errno == unix.EPIPE || errno == unix.ENODEV:
		return fmt.Errorf("umad: registering a %v agent on %s: %w: %w", class, path, ErrDeviceGone, errno)
	}
	return fmt.Errorf("umad: registering a %v agent on %s (%s): %w", class, path, p.Name(), err)
}
