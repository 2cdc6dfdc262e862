package fanout

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
)

// TestEach: every item ends in one map, read at most workers at once.
func TestEach(t *testing.T) {
	items := make([]int, 100)
	for i := range items {
		items[i] = i
	}
	var running, most atomic.Int32
	got, unread := map[int]string{}, map[int]string{}
	Each(context.Background(), 4, items, got, unread, func(i int) (string, string) {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		if i%10 == 0 {
			return "", "no answer"
		}
		return fmt.Sprint(i * 2), ""
	})
	if len(got) != 90 || len(unread) != 10 {
		t.Fatalf("got %d, unread %d; want 90 and 10", len(got), len(unread))
	}
	if got[7] != "14" || unread[30] != "no answer" {
		t.Errorf("got[7] %q, unread[30] %q", got[7], unread[30])
	}
	if m := most.Load(); m > 4 {
		t.Errorf("%d reads at once, want at most 4", m)
	}
}

// TestEachCancelled: items not started when the context ends are unread
// with its error, none lost.
func TestEachCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	got, unread := map[int]bool{}, map[int]string{}
	Each(ctx, 1, []int{1, 2, 3, 4}, got, unread, func(i int) (bool, string) {
		if i == 2 {
			cancel()
		}
		return true, ""
	})
	if len(got)+len(unread) != 4 {
		t.Fatalf("got %v unread %v: an item was lost", got, unread)
	}
	if unread[4] != context.Canceled.Error() {
		t.Errorf("unread %v: item 4 should be unread with the context's error", unread)
	}
}
