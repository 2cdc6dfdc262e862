package ibsim_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"syscall"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/ibsimtest"
	"github.com/ibdoctor/ibdoctor/internal/transport/ibsim"
)

const holdEnv = "IBSIM_TEST_HOLD_SOCK"

// TestHelperHold is not a test: TestSignals runs the test binary with it
// as a process that holds a slot until it gets SIGTERM (or SIGKILL).
func TestHelperHold(t *testing.T) {
	sock := os.Getenv(holdEnv)
	if sock == "" {
		t.Skip("helper process for TestSignals")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	c, err := ibsim.Dial(context.Background(), ibsim.Options{SockName: sock, Host: "h0002", Lifetime: ctx})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("%d %d\n", c.Slot(), c.ClientID())
	<-ctx.Done()
	if err := c.Close(); err != nil { // waits for the Close that Lifetime started
		t.Fatal(err)
	}
}

// TestSignals checks that an interrupted process frees its slot through
// Options.Lifetime, and that a SIGKILLed one leaves a slot behind that the
// harness frees with the console's `X N`.
func TestSignals(t *testing.T) {
	s := ibsimtest.Start(t, ibsimtest.FatTree(2, 2, 1))
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHold$")
		cmd.Env = append(os.Environ(), holdEnv+"="+s.SockName)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if cmd.ProcessState == nil {
				cmd.Process.Kill()
				cmd.Wait()
			}
		})
		var slot, id int
		br := bufio.NewReader(out)
		line, _ := br.ReadString('\n')
		if _, err := fmt.Sscanf(line, "%d %d", &slot, &id); err != nil {
			t.Fatalf("helper said %q", line)
		}
		if id&(1<<22-1) != cmd.Process.Pid {
			t.Errorf("client ID %d does not carry the pid %d in its low 22 bits", id, cmd.Process.Pid)
		}
		cs, err := s.Attached()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(cs, ibsimtest.Client{Slot: slot, ID: id, Node: "h0002", LID: 0}) {
			t.Fatalf("Attached = %+v, want slot %d id %d on h0002", cs, slot, id)
		}
		cmd.Process.Signal(sig)
		rest, _ := io.ReadAll(br)
		cmd.Wait()
		cs, err = s.Attached()
		if err != nil {
			t.Fatal(err)
		}
		switch sig {
		case syscall.SIGTERM:
			if !cmd.ProcessState.Success() {
				t.Errorf("helper exited with %v after SIGTERM:\n%s%s", cmd.ProcessState, rest, stderr.Bytes())
			}
			if len(cs) != 0 {
				t.Errorf("after SIGTERM, Attached = %+v: the slot was not freed", cs)
			}
		case syscall.SIGKILL:
			if len(cs) != 1 || cs[0].Slot != slot {
				t.Fatalf("after SIGKILL, Attached = %+v, want slot %d still held", cs, slot)
			}
			freed, err := s.FreeStaleSlots()
			if err != nil || !slices.Equal(freed, []int{slot}) {
				t.Errorf("FreeStaleSlots = %v, %v; want [%d]", freed, err, slot)
			}
			if cs, _ := s.Attached(); len(cs) != 0 {
				t.Errorf("after FreeStaleSlots, Attached = %+v", cs)
			}
		}
	}
}
