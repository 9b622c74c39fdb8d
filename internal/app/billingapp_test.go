package app_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/app"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/provider"
	"github.com/kadens/kadens/internal/provider/invoice"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// billingApp is an App over s with the engine billing as the server wires
// it (an invoice per period, credit notes on cancellation, reminders and
// payment stops by dunning) and a new test tenant named name whose clock
// starts at clock, in whose context it returns.
func billingApp(t *testing.T, s *store.Store, name string, clock time.Time) (*app.App, context.Context) {
	t.Helper()
	bg := context.Background()
	tn, err := s.CreateTenant(bg, name, true, clock)
	if err != nil {
		t.Fatal(err)
	}
	eng := engine.New(s, slog.New(slog.DiscardHandler), "test")
	eng.Hooks.PeriodsCreated = invoicing.IssuePeriods
	eng.Hooks.Cancelled = invoicing.SettleCancellation
	eng.Hooks.Dun = invoicing.DunCounts
	eng.Hooks.NextDun = invoicing.NextDunningAt
	return app.New(app.Options{Store: s, Engine: eng, Providers: provider.NewRegistry(invoice.Provider)}), tenancy.With(bg, tn.ID)
}
