package api

import (
	"context"
	"time"
)

// tenantNow is the current time of the request's tenant: the wall clock,
// or for a test tenant its own clock, which only moves when the tenant
// advances it (POST /testclock/advance). Everything a request does that
// depends on time (order dates, cancellations, plan changes, statuses)
// uses this time, so a test tenant can simulate months in seconds.
func (s *Server) tenantNow(ctx context.Context) (time.Time, error) { return s.app.Now(ctx) }

// TenantNow is the time of the request's tenant: its test clock for a
// test tenant, else the wall clock. The analytics API computes statuses
// with it, so they agree with the main API's.
func (s *Server) TenantNow(ctx context.Context) (time.Time, error) { return s.tenantNow(ctx) }
