package subscriberuser_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
)

// The fixtures of the identity records' tests, as the store's tests had
// them when the SQL lived there.

var t0 = time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC)

var catalogNow = time.Date(2026, 2, 1, 9, 30, 0, 123456000, time.UTC)

func newTenant(t *testing.T, s *store.Store, name string) context.Context {
	t.Helper()
	return seed.Tenant(t, s, name, t0)
}

// cpuTime is the CPU time (user and system) the process has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
