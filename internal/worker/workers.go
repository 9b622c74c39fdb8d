// Package worker is the base of the background workers that claim work
// from the database and record its outcomes: the outbox runner
// (internal/outbox) and the webhook dispatcher (internal/webhook). Neither
// imports the other; both start, stop and record the same way here.
package worker

import (
	"context"
	"sync"
)

// Workers is the start and stop the outbox runner and the webhook
// dispatcher share. Each runs loops that claim work, and calls (handler
// calls, delivery attempts) whose outcomes go to one channel that a single
// recorder writes in batches. Stopping is ordered so that nothing claimed
// and begun is lost: the loops stop claiming first; the calls in flight
// may finish until the caller's deadline and are cancelled after it (their
// outcome is a failed attempt, retried on schedule); the recorder writes
// every outcome sent before it returns. Work claimed and not begun keeps
// its claim until the claim lapses, and then runs again.
type Workers[R any] struct {
	results chan R
	stop    context.CancelFunc // ends the loops' context
	abort   context.CancelFunc // ends the calls' context
	loops   sync.WaitGroup
	calls   sync.WaitGroup
	flushed chan struct{}
	started bool
}

// Start begins: outcomes sent to Results are written by record, up to batch
// at a time, from a buffer of buffer. It returns the loops' context, ended
// by Stop first, and the calls' context, ended only when Stop's deadline
// passes.
func (w *Workers[R]) Start(buffer, batch int, record func([]R)) (loops, calls context.Context) {
	loops, w.stop = context.WithCancel(context.Background())
	calls, w.abort = context.WithCancel(context.Background())
	w.results = make(chan R, buffer)
	w.flushed = make(chan struct{})
	w.started = true
	go func() {
		defer close(w.flushed)
		Batches(w.results, batch, record)
	}()
	return loops, calls
}

// Started reports whether Start ran and Stop has not.
func (w *Workers[R]) Started() bool { return w.started }

// Loop runs f, a claiming loop that returns once the loops' context ends.
func (w *Workers[R]) Loop(f func()) {
	w.loops.Add(1)
	go func() {
		defer w.loops.Done()
		f()
	}()
}

// Call runs f, which makes calls and sends their outcomes to Results; Stop
// waits for it after the loops.
func (w *Workers[R]) Call(f func()) {
	w.calls.Add(1)
	go func() {
		defer w.calls.Done()
		f()
	}()
}

// Results is where calls send their outcomes.
func (w *Workers[R]) Results() chan<- R { return w.results }

// Stop ends the loops and waits for them; runs loopsDone (which tells the
// calls no more work comes: it closes their queues); waits for the calls
// until ctx ends, then cancels them and waits for them to return; and
// waits until every outcome is recorded. It returns ctx's error when the
// calls had to be cancelled.
func (w *Workers[R]) Stop(ctx context.Context, loopsDone func()) error {
	if !w.started {
		return nil
	}
	w.started = false
	w.stop()
	w.loops.Wait()
	if loopsDone != nil {
		loopsDone()
	}
	done := make(chan struct{})
	go func() {
		w.calls.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
		w.abort()
		<-done
	}
	w.abort()
	close(w.results)
	<-w.flushed
	return err
}
