package checks

import (
	"fmt"
	"runtime/debug"
	"sync"
)

// WorkerPanic is a panic of a check's worker goroutine, raised again on
// the goroutine that waited for the workers: a caller's recover (sweep
// turns a panic into exit 2 and ibdoctor_sweep_success 0) sees it there,
// where a panic left on a worker ends the process.
type WorkerPanic struct {
	Value any
	// Stack is the worker's stack when it panicked.
	Stack []byte
}

func (p *WorkerPanic) Error() string { return fmt.Sprint(p.Value) }

// carry keeps the first panic of a set of workers.
type carry struct {
	once sync.Once
	p    *WorkerPanic
}

// catch is deferred by each worker.
func (c *carry) catch() {
	if r := recover(); r != nil {
		c.once.Do(func() { c.p = &WorkerPanic{Value: r, Stack: debug.Stack()} })
	}
}

// rethrow runs after the workers are waited for.
func (c *carry) rethrow() {
	if c.p != nil {
		panic(c.p)
	}
}
