package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/app"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/validation"
)

// TestClockView is a test tenant's clock.
type TestClockView struct {
	Now time.Time `json:"now" description:"The tenant's current time."`
}

// AdvanceInput is the body of POST /testclock/advance.
type AdvanceInput struct {
	To *string `json:"to" required:"true" format:"date-time" description:"The time to move the clock to (RFC 3339). Everything due up to it happens, in time order, before the answer."`
}

// AdvanceResult reports what an advance did.
type AdvanceResult struct {
	Now   time.Time    `json:"now"`
	Stats engine.Stats `json:"performed"`
}

func (s *Server) testClockRoutes() {
	const tag = "TestClock"
	s.add(route{method: http.MethodGet, path: "/testclock", id: "getTestClock", tag: tag,
		summary: "Show a test tenant's clock", desc: "400 for a tenant that is not a test tenant.",
		responses: common(response{status: http.StatusOK, body: new(TestClockView)}), handle: s.getTestClock})
	s.add(route{method: http.MethodPost, path: "/testclock/advance", id: "advanceTestClock", tag: tag,
		summary: "Advance a test tenant's clock",
		desc: "Runs every renewal, chain step, plan change and deactivation due up to `to`, in time order, then moves the clock. " +
			"Advancing to the current time again changes nothing. 400 for a tenant that is not a test tenant, a time before the clock, " +
			"or a time from 3000-01-01T00:00:00Z on.",
		request: new(AdvanceInput), responses: common(response{status: http.StatusOK, body: new(AdvanceResult)}), handle: s.advanceTestClock})
}

// testClockError names the tenant header when the tenant has no clock of
// its own.
func testClockError(err error) error {
	if errors.Is(err, app.ErrNotTestTenant) {
		return validation.Field(TenantHeader, "test clocks exist only for test tenants; this tenant runs on real time")
	}
	return err
}

func (s *Server) getTestClock(w http.ResponseWriter, r *http.Request) error {
	now, err := s.app.TestClock(r.Context())
	if err != nil {
		return testClockError(err)
	}
	apikit.WriteJSON(w, http.StatusOK, TestClockView{Now: now})
	return nil
}

func (s *Server) advanceTestClock(w http.ResponseWriter, r *http.Request) error {
	// A tenant on real time hears so before anything about its body.
	if _, err := s.app.TestClock(r.Context()); err != nil {
		return testClockError(err)
	}
	var in AdvanceInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	var errs validation.Errors
	toPtr := apikit.TimeField(&errs, "to", in.To)
	if err := errs.Err(); err != nil {
		return err
	}
	if toPtr == nil {
		return validation.Field("to", "is required")
	}
	to := *toPtr
	// Years of renewals of a large test tenant can outlast the server's
	// write timeout (60 s), which would cut the answer off while the
	// advance goes on and commits. The advance is bounded by its work and
	// by the client, whose going away cancels it (the request's context),
	// so it lifts the deadline for itself.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	stats, err := s.app.AdvanceTestClock(r.Context(), to)
	if errors.Is(err, engine.ErrBusy) {
		return &statusError{http.StatusConflict, "another worker is advancing this tenant"}
	}
	if err != nil {
		return testClockError(err)
	}
	apikit.WriteJSON(w, http.StatusOK, AdvanceResult{Now: to, Stats: stats})
	return nil
}
