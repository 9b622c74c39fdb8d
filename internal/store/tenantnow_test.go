package store_test

import (
	"testing"
	"time"

	"github.com/kadens/kadens/internal/store"
)

// TestTenantNow: a tenant's time is the wall clock, a test tenant's its own
// clock once advanced and its creation time before; always in UTC.
func TestTenantNow(t *testing.T) {
	oslo, err := time.LoadLocation("Europe/Oslo")
	if err != nil {
		t.Fatal(err)
	}
	wall := time.Date(2027, 3, 31, 23, 30, 0, 0, oslo)
	created := time.Date(2026, 1, 10, 9, 0, 0, 0, time.UTC)
	clock := time.Date(2026, 2, 28, 23, 0, 0, 0, oslo)
	for _, c := range []struct {
		name string
		t    store.Tenant
		want time.Time
	}{
		{"live", store.Tenant{CreatedAt: created}, wall.UTC()},
		{"live with a stray clock", store.Tenant{Clock: &clock, CreatedAt: created}, wall.UTC()},
		{"test, never advanced", store.Tenant{Test: true, CreatedAt: created}, created},
		{"test, advanced", store.Tenant{Test: true, Clock: &clock, CreatedAt: created}, clock.UTC()},
	} {
		got := c.t.Now(wall)
		if !got.Equal(c.want) || got.Location() != time.UTC {
			t.Errorf("%s: %v, want %v in UTC", c.name, got, c.want)
		}
	}
}
