package gctune

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestApply(t *testing.T) {
	restore := func(percent int, limit int64) {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	}
	defer restore(debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64))

	for _, tc := range []struct {
		name    string
		env     map[string]string
		applied bool
		percent int
		limit   int64
	}{
		{"defaults", nil, true, Percent, Limit},
		{"operator GOGC", map[string]string{"GOGC": "50"}, false, 100, math.MaxInt64},
		{"operator GOMEMLIMIT", map[string]string{"GOMEMLIMIT": "1GiB"}, false, 100, math.MaxInt64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			restore(100, math.MaxInt64)
			if got := Apply(func(k string) string { return tc.env[k] }); got != tc.applied {
				t.Fatalf("Apply = %v, want %v", got, tc.applied)
			}
			// SetGCPercent and SetMemoryLimit return the previous setting.
			if got := debug.SetGCPercent(100); got != tc.percent {
				t.Errorf("GC percent %d, want %d", got, tc.percent)
			}
			if got := debug.SetMemoryLimit(math.MaxInt64); got != tc.limit {
				t.Errorf("memory limit %d, want %d", got, tc.limit)
			}
		})
	}
}
