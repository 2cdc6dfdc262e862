// Package ibsimtest runs the ibsim fabric simulator, OpenSM and the
// infiniband-diags tools from Go tests, so that ibdoctor's answers can be
// compared side by side with the real tools on the same simulated fabric.
//
// Every Sim gets its own IBSIM_SOCKNAME and temporary directory, its
// console on a pipe that stays open for its whole life, and is stopped by
// t.Cleanup together with everything started from it. Only processes this
// package started are ever signalled, by their pid.
//
// Tools are looked up on PATH. When one is missing the test is skipped
// with the Debian package to install, except when CI=true, where it fails.
package ibsimtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/transport/ibsim"
)

// UMAD2Sim is the LD_PRELOAD library that points libibumad at ibsim.
const UMAD2Sim = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"

// startTimeout bounds waiting for ibsim's sockets and OpenSM's first sweep.
const startTimeout = 60 * time.Second

var debPackage = map[string]string{
	"ibsim":         "ibsim-utils",
	"opensm":        "opensm",
	"ibnetdiscover": "infiniband-diags",
	"smpquery":      "infiniband-diags",
	"perfquery":     "infiniband-diags",
	"ibqueryerrors": "infiniband-diags",
	"dump_fts":      "infiniband-diags",
	"ibtracert":     "infiniband-diags",
	"iblinkinfo":    "infiniband-diags",
	"ibroute":       "infiniband-diags",
	"saquery":       "infiniband-diags",
}

// Require skips t unless ibsim, libumad2sim and the named tools are
// installed; with CI=true it fails instead.
func Require(t testing.TB, tools ...string) {
	t.Helper()
	var missing []string
	for _, tool := range append([]string{"ibsim"}, tools...) {
		if _, err := exec.LookPath(tool); err != nil {
			pkg := debPackage[tool]
			if pkg == "" {
				pkg = "infiniband-diags"
			}
			missing = append(missing, fmt.Sprintf("%s (Debian package %s)", tool, pkg))
		}
	}
	if _, err := os.Stat(UMAD2Sim); err != nil {
		missing = append(missing, UMAD2Sim+" (Debian package libumad2sim0)")
	}
	if len(missing) == 0 {
		return
	}
	msg := "ibsimtest: not installed: " + strings.Join(missing, ", ")
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + " (CI=true: failing instead of skipping)")
	}
	t.Skip(msg)
}

// Sim is one running ibsim.
type Sim struct {
	t        testing.TB
	SockName string // IBSIM_SOCKNAME
	Dir      string // private temporary directory
	NetFile  string // the net file ibsim was started with

	cmd    *exec.Cmd
	stdin  io.WriteCloser
	exited chan struct{}

	conMu  sync.Mutex // one console command at a time
	outMu  sync.Mutex
	out    bytes.Buffer // ibsim's stdout not yet consumed by Console
	outSig chan struct{}
	errBuf syncBuffer // ibsim's stderr

	scratch string // working directory of tools (libumad2sim writes sys-<pid>/ there)

	readyWait time.Duration // how long ibsim may take to parse its net file
}

// Start runs `ibsim -s` on netText under a fresh socket name, raising its
// node, switch, port and LFT limits to fit the fabric, and returns once its
// control socket accepts a client. Everything is stopped on t.Cleanup.
func Start(t testing.TB, netText string) *Sim {
	t.Helper()
	Require(t)
	dir := t.TempDir()
	s := &Sim{
		t:        t,
		SockName: fmt.Sprintf("ibdt%d_%08x", os.Getpid(), rand.Uint32()),
		Dir:      dir,
		NetFile:  filepath.Join(dir, "fabric.net"),
		exited:   make(chan struct{}),
		outSig:   make(chan struct{}, 1),
		scratch:  filepath.Join(dir, "scratch"),
	}
	if err := os.WriteFile(s.NetFile, []byte(netText), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(s.scratch, 0o755); err != nil {
		t.Fatal(err)
	}
	lim := countNet(netText)
	// ibsim parses its net file before it listens; at the LID limit that
	// takes minutes on a loaded 2-core machine, so the wait grows with it.
	s.readyWait = max(startTimeout, time.Duration(lim.nodes)*20*time.Millisecond)
	args := []string{"-s",
		"-N", strconv.Itoa(max(2048, lim.nodes+64)),
		"-S", strconv.Itoa(max(256, lim.switches+16)),
		"-P", strconv.Itoa(max(13312, lim.ports+lim.nodes+256)),
		"-L", strconv.Itoa(max(30720, min(49152, lim.nodes+lim.switches+1024))),
		s.NetFile,
	}
	s.cmd = exec.Command("ibsim", args...)
	s.cmd.Dir = dir
	s.cmd.Env = append(os.Environ(), ibsim.EnvSockName+"="+s.SockName)
	s.cmd.Stderr = &s.errBuf
	s.cmd.SysProcAttr = dieWithParent()
	var err error
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("ibsimtest: starting ibsim: %v", err)
	}
	go s.readOut(stdout)
	go func() { s.cmd.Wait(); close(s.exited) }()
	t.Cleanup(s.stop)
	if err := s.waitReady(); err != nil {
		t.Fatal(err)
	}
	// Drain the start-up banner and first prompt.
	if _, err := s.waitPrompt(s.readyWait); err != nil {
		t.Fatal(err)
	}
	return s
}

// StartFabric writes f as an ibsim net file with fabric.WriteNetFile (node
// ids from opt.NodeID, default fabric.DefaultNodeID: use those as hosts)
// and starts ibsim on it like Start.
func StartFabric(t testing.TB, f *fabric.Fabric, opt fabric.NetFileOptions) *Sim {
	t.Helper()
	var b strings.Builder
	if err := fabric.WriteNetFile(&b, f, opt); err != nil {
		t.Fatal(err)
	}
	return Start(t, b.String())
}

type netLimits struct{ nodes, switches, ports int }

var nodeLine = regexp.MustCompile(`^\s*(Switch|Hca|Rt)\s+(\d+)\s`)

func countNet(text string) netLimits {
	var l netLimits
	for _, line := range strings.Split(text, "\n") {
		m := nodeLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		l.nodes++
		l.ports += n + 1
		if m[1] == "Switch" {
			l.switches++
		}
	}
	return l
}

// waitReady polls ibsim's control socket with a real CONNECT/DISCONNECT
// until it answers, ibsim exits, or startTimeout passes.
func (s *Sim) waitReady() error {
	deadline := time.Now().Add(s.readyWait)
	backoff := time.Millisecond
	for {
		c, err := ibsim.Dial(context.Background(), ibsim.Options{SockName: s.SockName, Host: "", ControlTimeout: 5 * time.Second})
		if err == nil {
			return c.Close()
		}
		if !errors.Is(err, ibsim.ErrNotListening) {
			return fmt.Errorf("ibsimtest: ibsim up but not accepting clients: %w", err)
		}
		select {
		case <-s.exited:
			return fmt.Errorf("ibsimtest: ibsim exited during start-up: %v\nstderr:\n%s", s.cmd.ProcessState, s.errBuf.String())
		case <-time.After(backoff):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("ibsimtest: ibsim socket %q not ready after %v\nstderr:\n%s", s.SockName, s.readyWait, s.errBuf.String())
		}
		backoff = min(2*backoff, 50*time.Millisecond)
	}
}

func (s *Sim) readOut(r io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			s.outMu.Lock()
			s.out.Write(buf[:n])
			s.outMu.Unlock()
			select {
			case s.outSig <- struct{}{}:
			default:
			}
		}
		if err != nil {
			return
		}
	}
}

const prompt = "sim> "

// waitPrompt returns ibsim's output up to the next console prompt.
func (s *Sim) waitPrompt(timeout time.Duration) (string, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		s.outMu.Lock()
		b := s.out.Bytes()
		if i := bytes.Index(b, []byte(prompt)); i >= 0 {
			text := string(b[:i])
			s.out.Next(i + len(prompt))
			s.outMu.Unlock()
			return text, nil
		}
		s.outMu.Unlock()
		select {
		case <-s.outSig:
		case <-s.exited:
			return "", fmt.Errorf("ibsimtest: ibsim exited: %v\nstderr:\n%s", s.cmd.ProcessState, s.errBuf.String())
		case <-timer.C:
			return "", fmt.Errorf("ibsimtest: no ibsim prompt within %v", timeout)
		}
	}
}

// Console sends one console command (e.g. `Unlink "leaf01"[3]`,
// `PerformanceSet "leaf01"[3] PortCounters.SymbolErrorCounter=7`,
// `Error "leaf01"[0] 100`, `Attached`) and returns what ibsim printed for
// it. ibsim reads lines of at most 127 bytes.
func (s *Sim) Console(cmd string) (string, error) {
	if strings.ContainsAny(cmd, "\n\r") {
		return "", fmt.Errorf("ibsimtest: console command %q has a line break", cmd)
	}
	if len(cmd) > 126 {
		return "", fmt.Errorf("ibsimtest: console command is %d bytes; ibsim reads at most 126 plus the newline", len(cmd))
	}
	s.conMu.Lock()
	defer s.conMu.Unlock()
	if _, err := io.WriteString(s.stdin, cmd+"\n"); err != nil {
		return "", fmt.Errorf("ibsimtest: writing console command %q: %w", cmd, err)
	}
	return s.waitPrompt(30 * time.Second)
}

// MustConsole is Console failing the test on error.
func (s *Sim) MustConsole(cmd string) string {
	s.t.Helper()
	out, err := s.Console(cmd)
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

// Client is one line of the console's "Attached" list.
type Client struct {
	Slot int
	ID   int // the client ID (libumad2sim: the pid; ibsim.Conn: pid + n<<22)
	Node string
	LID  int
	SM   bool
}

var attachedLine = regexp.MustCompile(`^Client (\d+): pid (-?\d+) connected at "([^"]*)" port 0x[0-9a-f]+, lid (\d+), qp \d+ ?(SM)?`)

// Attached lists ibsim's connected clients.
func (s *Sim) Attached() ([]Client, error) {
	out, err := s.Console("Attached")
	if err != nil {
		return nil, err
	}
	var cs []Client
	for _, line := range strings.Split(out, "\n") {
		m := attachedLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		c := Client{Node: m[3], SM: m[5] == "SM"}
		c.Slot, _ = strconv.Atoi(m[1])
		c.ID, _ = strconv.Atoi(m[2])
		c.LID, _ = strconv.Atoi(m[4])
		cs = append(cs, c)
	}
	return cs, nil
}

// FreeStaleSlots disconnects (console `X N`) every client whose owning
// process is gone: clients killed with SIGKILL never send DISCONNECT. The
// owner's pid is the client ID's low 22 bits (libumad2sim uses the pid,
// ibsim.Conn pid + n<<22). It returns the slots freed.
func (s *Sim) FreeStaleSlots() ([]int, error) {
	cs, err := s.Attached()
	if err != nil {
		return nil, err
	}
	var freed []int
	for _, c := range cs {
		pid := c.ID & (1<<22 - 1)
		if pid > 0 && syscall.Kill(pid, 0) != syscall.ESRCH {
			continue
		}
		if out, err := s.Console(fmt.Sprintf("X %d", c.Slot)); err != nil {
			return freed, err
		} else if strings.Contains(out, "bad clientid") {
			continue
		}
		freed = append(freed, c.Slot)
	}
	return freed, nil
}

func (s *Sim) stop() {
	select {
	case <-s.exited:
	default:
		s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(5 * time.Second):
			s.cmd.Process.Kill()
			<-s.exited
		}
	}
	s.stdin.Close()
}

// CPU is ibsim's user and system time so far (/proc/PID/stat; 0 when
// it cannot be read), to tell its share of a run's CPU from the client's.
func (s *Sim) CPU() time.Duration { return procCPU(s.cmd.Process.Pid) }

// Waits is how many times ibsim blocked so far (voluntary context
// switches in /proc/PID/status; 0 when it cannot be read): each is a
// wake-up some client's MAD paid for.
func (s *Sim) Waits() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "voluntary_ctxt_switches:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// Stderr returns what ibsim wrote on stderr so far.
func (s *Sim) Stderr() string { return s.errBuf.String() }

// env returns the environment of a libumad2sim client attached at host.
func (s *Sim) env(host string) []string { return s.toolEnv(host, true) }

// toolEnv returns this process's environment for a client of s attached
// at host ("" for ibsim's default port), with LD_PRELOAD set to
// libumad2sim when preload is true and dropped otherwise.
func (s *Sim) toolEnv(host string, preload bool) []string {
	env := make([]string, 0, len(os.Environ())+3)
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "LD_PRELOAD=") || strings.HasPrefix(kv, ibsim.EnvHost+"=") || strings.HasPrefix(kv, ibsim.EnvSockName+"=") {
			continue
		}
		env = append(env, kv)
	}
	if preload {
		env = append(env, "LD_PRELOAD="+UMAD2Sim)
	}
	env = append(env, ibsim.EnvSockName+"="+s.SockName)
	if host != "" {
		env = append(env, ibsim.EnvHost+"="+host)
	}
	return env
}

// ToolError is a diagnostics tool that exited with an error.
type ToolError struct {
	Cmd    string
	Err    error
	Stdout string
	Stderr string
}

func (e *ToolError) Error() string {
	return fmt.Sprintf("ibsimtest: %s: %v\nstderr:\n%s", e.Cmd, e.Err, e.Stderr)
}

func (e *ToolError) Unwrap() error { return e.Err }

// Run runs an infiniband-diags tool (or any libibumad program) under
// libumad2sim, attached at host (an ibsim node id or NodeDescription; ""
// for ibsim's default port), in a scratch directory, and returns its
// standard output. A non-zero exit returns a *ToolError carrying both
// outputs (some tools print useful output and still exit non-zero).
func (s *Sim) Run(host, tool string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tool, args...)
	cmd.Dir = s.scratch
	cmd.Env = s.env(host)
	cmd.SysProcAttr = dieWithParent()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stdout.String(), &ToolError{Cmd: tool + " " + strings.Join(args, " "), Err: err, Stdout: stdout.String(), Stderr: stderr.String()}
	}
	return stdout.String(), nil
}

// MustRun is Run failing the test on error.
func (s *Sim) MustRun(host, tool string, args ...string) string {
	s.t.Helper()
	out, err := s.Run(host, tool, args...)
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

// OpenSMOptions configure StartOpenSM.
type OpenSMOptions struct {
	// Host is the node OpenSM attaches to ("" = ibsim's default port).
	Host string
	// LFTFile, if set, routes with the file engine from this dump_fts
	// output (opensm -R file -U LFTFile), e.g. an edited table.
	LFTFile string
	// Once sweeps once and exits (opensm -o): LIDs and LFTs stay
	// programmed but the SA is gone. Default: keep running.
	Once bool
	// Extra are additional opensm arguments.
	Extra []string
	// Config are extra opensm.conf lines ("qos_sl2vl 0,0,..."): options
	// OpenSM takes only from its configuration file.
	Config []string
	// Standby waits for "Entering STANDBY state" instead of SUBNET UP:
	// a second OpenSM that loses the election to a running master.
	Standby bool
	// Timeout bounds the wait for SUBNET UP (default one minute; a
	// 9,472-node fabric on a loaded host takes longer).
	Timeout time.Duration
}

// OpenSM is a running (or, with Once, finished) OpenSM.
type OpenSM struct {
	LogFile string
	cmd     *exec.Cmd
	exited  chan struct{}
	stdout  syncBuffer
}

// StartOpenSM runs OpenSM under libumad2sim with its cache, temp and log
// in the Sim's directory and force_log_flush on, and returns once its log
// says "SUBNET UP". It is stopped on t.Cleanup (before ibsim).
func (s *Sim) StartOpenSM(opt OpenSMOptions) *OpenSM {
	t := s.t
	t.Helper()
	Require(t, "opensm")
	dir, err := os.MkdirTemp(s.Dir, "opensm")
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "opensm.conf")
	confText := "force_log_flush TRUE\n"
	for _, l := range opt.Config {
		confText += l + "\n"
	}
	if err := os.WriteFile(conf, []byte(confText), 0o644); err != nil {
		t.Fatal(err)
	}
	o := &OpenSM{LogFile: filepath.Join(dir, "opensm.log"), exited: make(chan struct{})}
	args := []string{"-F", conf, "-f", o.LogFile}
	if opt.LFTFile != "" {
		args = append(args, "-R", "file", "-U", opt.LFTFile)
	}
	if opt.Once {
		args = append(args, "-o")
	}
	args = append(args, opt.Extra...)
	o.cmd = exec.Command("opensm", args...)
	o.cmd.Dir = dir
	o.cmd.Env = append(s.env(opt.Host), "OSM_CACHE_DIR="+dir, "OSM_TMP_DIR="+dir)
	o.cmd.Stdout, o.cmd.Stderr = &o.stdout, &o.stdout
	o.cmd.SysProcAttr = dieWithParent()
	if err := o.cmd.Start(); err != nil {
		t.Fatalf("ibsimtest: starting opensm: %v", err)
	}
	go func() { o.cmd.Wait(); close(o.exited) }()
	t.Cleanup(o.stop)
	want := "SUBNET UP"
	if opt.Standby {
		want = "Entering STANDBY state"
	}
	timeout := opt.Timeout
	if timeout <= 0 {
		timeout = startTimeout
	}
	if err := o.waitSubnetUp(want, opt.Once, timeout); err != nil {
		t.Fatal(err)
	}
	return o
}

func (o *OpenSM) waitSubnetUp(want string, once bool, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, _ := os.ReadFile(o.LogFile); bytes.Contains(b, []byte(want)) {
			if once {
				<-o.exited
			}
			return nil
		}
		select {
		case <-o.exited:
			b, _ := os.ReadFile(o.LogFile)
			if bytes.Contains(b, []byte(want)) {
				return nil
			}
			return fmt.Errorf("ibsimtest: opensm exited before %s: %v\noutput:\n%s\nlog tail:\n%s", want, o.cmd.ProcessState, o.stdout.String(), tail(string(b), 30))
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(o.LogFile)
			return fmt.Errorf("ibsimtest: no %s in opensm log after %v\nlog tail:\n%s", want, timeout, tail(string(b), 30))
		}
	}
}

func (o *OpenSM) stop() {
	select {
	case <-o.exited:
		return
	default:
	}
	o.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-o.exited:
	case <-time.After(5 * time.Second):
		o.cmd.Process.Kill()
		<-o.exited
	}
}

// Stop terminates OpenSM (SIGTERM, then SIGKILL after 5 s) and waits for
// it; LIDs and LFTs it programmed stay in ibsim.
func (o *OpenSM) Stop() { o.stop() }

// Pid is OpenSM's process id.
func (o *OpenSM) Pid() int { return o.cmd.Process.Pid }

// Kill sends SIGKILL to OpenSM and waits for it (to leave a stale slot).
func (o *OpenSM) Kill() {
	o.cmd.Process.Kill()
	<-o.exited
}

// dieWithParent makes the kernel SIGKILL a child when the test process
// dies (e.g. go test's timeout), so no ibsim is left spinning on a closed
// console and no OpenSM holds a slot. Go only ends an OS thread when a
// goroutine locked to it exits, which this package never does.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
