// Package fanout reads a set of subjects a bounded number at a time, each
// once, keeping what was read apart from why the rest was not: the read
// stages after discovery (firmware, adaptive routing, SL2VL tables) share
// it.
package fanout

import (
	"context"
	"sync"
)

// Each calls read for every item, at most workers at once. An item whose
// read gives a reason goes to unread with it, the others to got. Items
// not yet started when ctx ends are unread with ctx's error, so every item
// ends in one of the two maps.
func Each[K comparable, V any](ctx context.Context, workers int, items []K, got map[K]V, unread map[K]string, read func(K) (V, string)) {
	var mu sync.Mutex
	next := make(chan K)
	var wg sync.WaitGroup
	for range min(workers, len(items)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				v, why := read(k)
				mu.Lock()
				if why != "" {
					unread[k] = why
				} else {
					got[k] = v
				}
				mu.Unlock()
			}
		}()
	}
	for _, k := range items {
		if err := ctx.Err(); err != nil {
			mu.Lock()
			unread[k] = err.Error()
			mu.Unlock()
			continue
		}
		next <- k
	}
	close(next)
	wg.Wait()
}
