package invoicing_test

import (
	"context"
	"github.com/kadens/kadens/internal/ledger"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

// billed is a tenant with one organization, one subscriber and a monthly
// package of 199.00 NOK incl. 25 % VAT.
type billed struct {
	ctx       context.Context
	org, subr string
	pkg       catalog.SubscriptionPackage
	nok       money.Currency
}

func newBilled(t testing.TB, s *store.Store) billed {
	t.Helper()
	ctx := newTenant(t, s, "invoicing")
	nok, _ := money.LookupCurrency("NOK")
	org, err := s.CreateOrganization(ctx, store.Organization{Name: "Nordavis AS", Country: "NO", Currency: "NOK",
		TimeZone: "Europe/Oslo", PricesIncludeVAT: true}, t0)
	if err != nil {
		t.Fatal(err)
	}
	prod, err := catalogdb.CreateProduct(ctx, s, catalog.Product{Name: "Digital", Category: "digital", VATRate: catalog.PercentOf(25), Active: true}, t0)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := catalogdb.CreateBillingPlan(ctx, s, catalog.BillingPlan{Name: "Monthly", IntervalUnit: period.Month, IntervalCount: 1, PaymentTermsDays: 14}, t0)
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := catalogdb.CreatePackage(ctx, s, catalog.TemplatePackage{Name: "Digital", Currency: "NOK", Price: catalog.NewAmount(19900, nok), Units: 1,
		PermanentDiscount: catalog.PercentOf(0), Products: []catalog.PackageProduct{{ProductID: prod.ID}}, BillingPlans: []string{plan.ID},
		AllowedChoices: catalog.AllowedChoices{MinUnits: 1, MaxUnits: 1}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	in, err := catalogdb.PackageForMerge(ctx, s, tmpl.ID)
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := catalog.Merge(in)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := s.CreateSubscriber(ctx, store.Subscriber{Name: "Kari Nordmann", Country: "NO", Contacts: []store.Contact{}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	return billed{ctx: ctx, org: org.ID, subr: sc.ID, pkg: pkg, nok: nok}
}

// periods writes n series of the package starting at the given times and
// issues their first periods in one IssuePeriods call.
func (b *billed) issue(t *testing.T, s *store.Store, starts ...time.Time) {
	t.Helper()
	err := s.InTx(b.ctx, func(tx *store.Tx) error {
		var first []store.NewPeriod
		for _, start := range starts {
			sub, err := engine.Begin(engine.NewSeries{SubscriberID: b.subr, OrganizationID: b.org, TimeZone: "Europe/Oslo",
				Package: b.pkg, Start: start}, start)
			if err != nil {
				return err
			}
			if err := tx.InsertSubscription(b.ctx, sub); err != nil {
				return err
			}
			first = append(first, store.NewPeriod{Sub: sub, At: start})
		}
		return invoicing.IssuePeriods(b.ctx, tx, first)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestIssuePeriods: one call issues a batch of periods in order: numbers
// from the organization's series, the account created once, a charge
// billed on the first invoice issued after it was booked and an
// allowance applied up to what an invoice owes (the rest left for the
// next), a zero invoice settled at issue, and a clean ledger.
func TestIssuePeriods(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		b := newBilled(t, s)
		jan := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
		b.issue(t, s, jan)
		invs, _, err := s.ListInvoices(b.ctx, store.DocumentFilter{Now: jan}, store.Page{Limit: 10})
		if err != nil || len(invs) != 1 {
			t.Fatalf("%d invoices (%v)", len(invs), err)
		}
		first := invs[0]
		if first.InvoiceNumber != 1 || first.Gross.Minor != 19900 || first.Status != billing.InvoiceIssued ||
			first.KID != billing.KID(1, billing.KIDMod10) || first.Buyer.SubscriberID != b.subr || first.Seller.Name != "Nordavis AS" {
			t.Fatalf("first invoice %+v", first)
		}
		account := first.SubscriberAccountID
		// A charge of 50.00 and an allowance of 400.00, booked before the
		// next batch.
		if _, err := invoicing.AddAccountItem(b.ctx, s, account, billing.ItemCharge, "Setup", 5000, catalog.PercentOf(25), jan.AddDate(0, 0, 1)); err != nil {
			t.Fatal(err)
		}
		if _, err := invoicing.AddAccountItem(b.ctx, s, account, billing.ItemAllowance, "Goodwill", 40000, catalog.PercentOf(25), jan.AddDate(0, 0, 2)); err != nil {
			t.Fatal(err)
		}
		feb := time.Date(2027, 2, 1, 0, 0, 0, 0, time.UTC)
		b.issue(t, s, feb, feb.Add(time.Hour), feb.Add(2*time.Hour))
		invs, _, err = s.ListInvoices(b.ctx, store.DocumentFilter{IssuedFrom: &feb, Now: feb}, store.Page{Limit: 10})
		if err != nil || len(invs) != 3 {
			t.Fatalf("%d invoices (%v)", len(invs), err)
		}
		// 199 + 50 = 249 against an allowance of 400: 0 owed, 151 left;
		// then 199 − 151 = 48; then 199.
		for i, want := range []struct {
			number int64
			gross  int64
			status string
		}{{2, 0, billing.InvoicePaid}, {3, 4800, billing.InvoiceIssued}, {4, 19900, billing.InvoiceIssued}} {
			inv := invs[i]
			if inv.InvoiceNumber != want.number || inv.Gross.Minor != want.gross || inv.Status != want.status ||
				inv.SubscriberAccountID != account {
				t.Errorf("invoice %d: number %d gross %d status %s account %s, want %+v", i, inv.InvoiceNumber, inv.Gross.Minor,
					inv.Status, inv.SubscriberAccountID, want)
			}
		}
		a, err := s.SubscriberAccount(b.ctx, account)
		if err != nil {
			t.Fatal(err)
		}
		if a.OutstandingCharges.Minor != 0 || a.AvailableAllowance.Minor != 0 || a.Balance.Minor != 19900+0+4800+19900 {
			t.Fatalf("account: balance %s, charges %s, allowance %s", a.Balance, a.OutstandingCharges, a.AvailableAllowance)
		}
		report, err := ledger.Check(b.ctx, s, ledger.Options{TenantID: tenantIDOf(t, s, b.ctx)})
		if err != nil || !report.Clean() {
			t.Fatalf("ledger: %+v (%v)", report.Problems, err)
		}
	})
}

func tenantIDOf(t *testing.T, s *store.Store, ctx context.Context) string {
	t.Helper()
	var id string
	if err := s.InTx(ctx, func(tx *store.Tx) error { id = tx.TenantID(); return nil }); err != nil {
		t.Fatal(err)
	}
	return id
}
