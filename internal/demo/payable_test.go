package demo_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/demo"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/invoicedoc"
	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
)

// TestDemoInvoicesArePayable: the demo's invoices print where to pay
// (account number and IBAN next to the KID) and the seller's address.
func TestDemoInvoicesArePayable(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		eng := engine.New(s, slog.New(slog.DiscardHandler), "demo-test")
		eng.Hooks.PeriodsCreated = invoicing.IssuePeriods // as kadens serve wires it
		now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		creds, _, err := demo.Ensure(context.Background(), s, eng, t.TempDir(), now)
		if err != nil {
			t.Fatal(err)
		}
		ctx := tenancy.With(context.Background(), creds.TenantID)
		invs, _, err := s.ListInvoices(ctx, store.DocumentFilter{}, store.Page{Limit: 1})
		if err != nil || len(invs) != 1 {
			t.Fatalf("demo invoices: %d, %v", len(invs), err)
		}
		var b bytes.Buffer
		if err := invoicedoc.HTML(&b, invs[0], invoicedoc.Options{Lang: invoicedoc.Norwegian}); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{invs[0].KID, "8601.11.17947", "NO93 8601 1117 947", "923609016 MVA", "Foretaksregisteret", "0155 Oslo"} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("demo invoice lacks %q", want)
			}
		}
	})
}
