package snapshot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/topology"
)

func testSnap(t *testing.T, at time.Time) *Snapshot {
	t.Helper()
	f, err := topology.FatTree2{Common: topology.Common{SwitchPorts: 8}, Leaves: 2, Spines: 2, HostsPerLeaf: 2}.Build()
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(f, nil, at, "sim:test", "test", true)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLockWaitsThenGivesUp: a second holder waits for the first and, past
// its wait, says who holds the lock; a released lock is taken at once.
func TestLockWaitsThenGivesUp(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "state")
	l, err := Acquire(context.Background(), dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = Acquire(context.Background(), dir, 100*time.Millisecond)
	if !errors.Is(err, ErrLocked) || time.Since(start) < 100*time.Millisecond ||
		!strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) || !strings.Contains(err.Error(), "--lock-wait") {
		t.Errorf("second Acquire after %v: %v", time.Since(start), err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := Acquire(ctx, dir, time.Hour); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled wait: %v", err)
	}
	go func() { time.Sleep(50 * time.Millisecond); l.Release() }()
	l2, err := Acquire(context.Background(), dir, 5*time.Second)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	l2.Release()
}

// TestLoadBesideSaves: readers load and decode while saves (taking turns
// on the lock) replace the snapshot and remove the fabric files they
// named: every read gets a whole snapshot.
func TestLoadBesideSaves(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	if _, err := testSnap(t, base).Save(dir); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				l, err := Acquire(context.Background(), dir, 10*time.Second)
				if err != nil {
					t.Error(err)
					return
				}
				_, err = testSnap(t, base.Add(time.Duration(2*i+w)*time.Second)).Save(dir)
				l.Release()
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for i := range 200 {
		s, err := Load(dir)
		if err == nil {
			_, err = s.FabricModel()
		}
		if err != nil {
			t.Errorf("read %d: %v", i, err)
			break
		}
	}
	close(stop)
	wg.Wait()
}

func TestFresh(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		taken time.Time
		want  string
	}{
		{now.Add(-10 * time.Minute), ""},
		{now.Add(30 * time.Second), ""}, // clocks differ a little
		{now.Add(-2 * time.Hour), "over --max-age"},
		{now.Add(24 * time.Hour), "in the future"},
	} {
		s := &Snapshot{TakenAt: c.taken}
		err := s.Fresh(now, time.Hour)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("taken %v: %v, want %q", c.taken, err, c.want)
		}
	}
}
