package fifo

import (
	"slices"
	"testing"
)

func items(f *Queue[int]) []int {
	var out []int
	f.All(func(v int) bool { out = append(out, v); return true })
	return out
}

func TestOrderAndReuse(t *testing.T) {
	var f Queue[int]
	for round := range 3 {
		for i := range 5 {
			f.Push(round*10 + i)
		}
		if got := f.Peek(); got != round*10 {
			t.Fatalf("Peek = %d, want %d", got, round*10)
		}
		for i := range 5 {
			if got := f.Pop(); got != round*10+i {
				t.Fatalf("round %d: Pop = %d, want %d", round, got, round*10+i)
			}
		}
		if f.Len() != 0 {
			t.Fatalf("Len = %d after draining", f.Len())
		}
	}
	if cap(f.q) > 8 {
		t.Errorf("storage grew to %d for 5 items at a time: not reused", cap(f.q))
	}
}

func TestInterleaved(t *testing.T) {
	var f Queue[int]
	var want []int
	next := 0
	for i := range 100 {
		f.Push(i)
		want = append(want, i)
		if i%3 == 0 {
			if got := f.Pop(); got != want[next] {
				t.Fatalf("Pop = %d, want %d", got, want[next])
			}
			next++
		}
	}
	if got := items(&f); !slices.Equal(got, want[next:]) {
		t.Errorf("left %v, want %v", got, want[next:])
	}
}

func TestRemove(t *testing.T) {
	var f Queue[int]
	for i := range 6 {
		f.Push(i)
	}
	f.Pop() // 0
	if !f.Remove(3) || f.Remove(3) || f.Remove(0) {
		t.Fatal("Remove reported wrongly")
	}
	if got := items(&f); !slices.Equal(got, []int{1, 2, 4, 5}) {
		t.Errorf("after Remove(3): %v", got)
	}
	for _, v := range []int{1, 2, 4, 5} {
		if !f.Remove(v) {
			t.Fatalf("Remove(%d) = false", v)
		}
	}
	if f.Len() != 0 {
		t.Errorf("Len = %d, want 0", f.Len())
	}
	f.Push(9)
	if f.Pop() != 9 {
		t.Error("queue unusable after removing everything")
	}
}

// TestRoundRobinStaysSmall: a queue that never empties (ReadLFTs puts a
// switch back after each block it sends, millions of times at 49k nodes)
// keeps a backing array the size of what it holds, not of everything
// ever pushed, and still gives the items in order.
func TestRoundRobinStaysSmall(t *testing.T) {
	var f Queue[int]
	for i := range 100 {
		f.Push(i)
	}
	for i := range 1_000_000 {
		v := f.Pop()
		if v != i {
			t.Fatalf("pop %d: got %d", i, v)
		}
		f.Push(i + 100)
	}
	if f.Len() != 100 || cap(f.q) > 1024 {
		t.Fatalf("%d items in a backing array of %d", f.Len(), cap(f.q))
	}
	if got := slices.Collect(f.All); len(got) != 100 || got[0] != 1_000_000 || got[99] != 1_000_099 {
		t.Fatalf("items %v...", got[:3])
	}
}
