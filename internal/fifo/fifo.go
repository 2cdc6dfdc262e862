// Package fifo is a first-in first-out queue over a slice that reuses its
// storage: the MAD engine's and the walkers' queues of pending work.
package fifo

// Queue is a FIFO of T. The zero value is an empty queue. It is not safe
// for concurrent use.
type Queue[T comparable] struct {
	q    []T
	head int
}

// Len is the number of items queued.
func (f *Queue[T]) Len() int { return len(f.q) - f.head }

// Push appends v. When at least half the backing array is already
// popped, the live items slide to its front first: a queue that never
// empties (a round robin) would otherwise grow by every push it ever
// had. Each item is moved at most once per pop of another, so a push
// stays O(1) amortised.
func (f *Queue[T]) Push(v T) {
	if f.head > 0 && f.head >= len(f.q)/2 {
		n := copy(f.q, f.q[f.head:])
		clear(f.q[n:]) // let the garbage collector have what they held
		f.q, f.head = f.q[:n], 0
	}
	f.q = append(f.q, v)
}

// Peek returns the oldest item. The queue must not be empty.
func (f *Queue[T]) Peek() T { return f.q[f.head] }

// Pop removes and returns the oldest item. The queue must not be empty.
func (f *Queue[T]) Pop() T {
	var zero T
	v := f.q[f.head]
	f.q[f.head] = zero
	f.head++
	if f.head == len(f.q) {
		f.q, f.head = f.q[:0], 0
	}
	return v
}

// Remove takes the first occurrence of v out of the queue, keeping the
// order of the rest, and reports whether it was there. It is O(n): for
// rare removals such as cancellations.
func (f *Queue[T]) Remove(v T) bool {
	var zero T
	for i := f.head; i < len(f.q); i++ {
		if f.q[i] == v {
			copy(f.q[i:], f.q[i+1:])
			f.q[len(f.q)-1] = zero
			f.q = f.q[:len(f.q)-1]
			if f.head == len(f.q) {
				f.q, f.head = f.q[:0], 0
			}
			return true
		}
	}
	return false
}

// All calls yield for each queued item, oldest first, until it returns
// false.
func (f *Queue[T]) All(yield func(T) bool) {
	for _, v := range f.q[f.head:] {
		if !yield(v) {
			return
		}
	}
}
