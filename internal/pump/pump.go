// Package pump runs the send loop the asynchronous walkers share
// (discovery, the counter sweep, the LFT reader): under their lock, take
// what the window allows; outside it, send; and since a completion may
// free room while a goroutine is sending, let one goroutine pump at a time
// and have the others leave it a note to go round again.
package pump

import "sync"

// Pump is the state of one walker's send loop. The zero value is ready.
// Its fields are guarded by the walker's lock.
type Pump[T any] struct {
	running bool
	again   bool
	batch   []T
}

// Run pumps: with mu held it calls fill, which appends to the batch what
// may be sent now; then, with mu released, it calls send for each item.
// It goes round again if another Run was called meanwhile, which returns
// at once. mu must not be held by the caller.
func (p *Pump[T]) Run(mu *sync.Mutex, fill func(batch []T) []T, send func(T)) {
	mu.Lock()
	if p.running {
		p.again = true
		mu.Unlock()
		return
	}
	p.running = true
	batch := p.batch[:0]
	for {
		p.again = false
		batch = fill(batch[:0])
		mu.Unlock()
		for _, v := range batch {
			send(v)
		}
		mu.Lock()
		if !p.again {
			break
		}
	}
	clear(batch)
	p.batch = batch[:0]
	p.running = false
	mu.Unlock()
}
