package api

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/kadens/kadens/internal/store"
)

// conflictAttempts bounds how often a write that lost a race is tried.
const conflictAttempts = 8

// inTxRetrying runs fn in a write transaction like store.InTx, and runs it
// again, in a new transaction, when it fails with store.ErrConflict: a row
// it read (an account's open charges and allowances, a subscription's
// version) was changed by a concurrent request that committed first. The
// engine retries the same way; a valid request must not fail for another's
// timing. fn must do all its reading inside tx so that a retry sees the
// winner's commit. A conflict that outlasts every attempt is still 409.
func (s *Server) inTxRetrying(ctx context.Context, fn func(tx *store.Tx) error) error {
	var err error
	for attempt := range conflictAttempts {
		if attempt > 0 {
			// A short random pause so that racing retries spread out.
			pause := time.Duration(1+rand.IntN(5<<attempt)) * time.Millisecond
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(pause):
			}
		}
		err = s.store.InTx(ctx, fn)
		if !errors.Is(err, store.ErrConflict) {
			return err
		}
		logger(ctx).DebugContext(ctx, "write conflict, retrying", "attempt", attempt+1, "err", err.Error())
	}
	return err
}
