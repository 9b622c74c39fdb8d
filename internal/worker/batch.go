package worker

import (
	"context"
	"log/slog"
	"time"
)

// Batches reads outcomes from ch until it is closed and hands write each
// run of them that is ready at once, at most max at a time: one
// transaction records many handler results.
func Batches[T any](ch <-chan T, max int, write func([]T)) {
	var batch []T
	for v := range ch {
		batch = append(batch[:0], v)
	more:
		for len(batch) < max {
			select {
			case v, ok := <-ch:
				if !ok {
					break more
				}
				batch = append(batch, v)
			default:
				break more
			}
		}
		write(batch)
	}
}

// Record runs write with a context of its own, so an outcome is not lost to
// a stopping process, retrying a database hiccup a few times with growing
// pauses. It reports whether write succeeded; when it did not, the claims
// lapse and the work runs again (at least once, never lost).
func Record(log *slog.Logger, what string, write func(context.Context) error) bool {
	for try := range 5 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := write(ctx)
		cancel()
		if err == nil {
			return true
		}
		log.Error(what, "err", err, "try", try+1)
		time.Sleep(time.Duration(try+1) * 200 * time.Millisecond)
	}
	return false
}
