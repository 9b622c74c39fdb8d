package seed

import (
	"github.com/shopspring/decimal"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// Fixtures that the store's tests and a wing's or the catalog's tests both
// need. When each wing's SQL moved out of the store, both packages kept a
// copy; one copy here keeps them alike. They are the store writer's only:
// the tests that use them cannot start a server.

// Catalog is a small catalog of one tenant: two print products, a digital
// one and a magazine at 25 % VAT, and three billing plans. The catalog's
// SQL tests use it, and the store's tests of records that name a package
// (orders).
type Catalog struct {
	Print, Digital, Magazine, Sunday catalog.Product
	Invoice, Avtale, Yearly          catalog.BillingPlan
}

// Catalog creates the catalog's products and plans, in that order.
func (w *Store) Catalog() Catalog {
	w.t.Helper()
	product := func(name, category, rate string) catalog.Product {
		w.t.Helper()
		return w.Product(Product{Name: name, Category: category, VATRate: rate})
	}
	plan := func(name, unit string) catalog.BillingPlan {
		w.t.Helper()
		return w.Plan(Plan{Name: name, Unit: unit, Count: 1, MinimumDueDays: Days(14), PaymentTermsDays: Days(14)})
	}
	return Catalog{
		Print:    product("Printed paper", "print", "0"),
		Digital:  product("Digital news", "digital", "0"),
		Magazine: product("Weekend magazine", "magazine", "25"),
		Sunday:   product("Sunday edition", "print", "0"),
		Invoice:  plan("Monthly invoice", "Month"),
		Avtale:   plan("Monthly AvtaleGiro", "Month"),
		Yearly:   plan("Yearly", "Year"),
	}
}

// Template is a print + digital bundle of c that sets every field of a
// template package, so a round trip through the store shows each one.
// It is not created; TemplatePackage creates it.
func (c Catalog) Template() catalog.TemplatePackage {
	editions := 26
	nok, _ := money.LookupCurrency("NOK")
	share := func(s string) *catalog.Percent {
		p := catalog.NewPercent(decimal.RequireFromString(s))
		return &p
	}
	return catalog.TemplatePackage{
		Name: "Print + digital", Description: "Paper and app", Currency: "NOK",
		Price: catalog.NewAmount(44900, nok), Units: 2, NumberOfEditions: &editions, AutomaticStop: true,
		PermanentDiscount: catalog.NewPercent(decimal.RequireFromString("12.5")),
		Products: []catalog.PackageProduct{
			{ProductID: c.Print.ID, Share: share("66.6667")},
			{ProductID: c.Digital.ID, Share: share("33.3333")},
		},
		AdditionalProducts: []catalog.AdditionalProduct{
			{ProductID: c.Magazine.ID, Price: catalog.NewAmount(4900, nok)},
			{ProductID: c.Sunday.ID, Price: catalog.NewAmount(2950, nok), SelectedByDefault: true},
		},
		BillingPlans:   []string{c.Avtale.ID, c.Invoice.ID},
		Contract:       &catalog.Contract{BindingPeriods: 12, Terms: "Bound for 12 months", EarlyCancellation: catalog.EndOfBinding},
		AllowedChoices: catalog.AllowedChoices{MinUnits: 1, MaxUnits: 5, PriceOverride: true, DiscountOverride: false},
	}
}

// TemplatePackage creates tp as it is given, for the packages that the
// Package options cannot describe (shares, a contract, editions).
func (w *Store) TemplatePackage(tp catalog.TemplatePackage) catalog.TemplatePackage {
	w.t.Helper()
	out, err := catalogdb.CreatePackage(w.ctx, w.s, tp, w.now)
	if err != nil {
		w.fail("package", err)
	}
	return out
}

// Parties is a seller whose prices exclude VAT and two subscribers of one
// tenant: what a payment agreement and a period name. The store's tests
// of agreements use it, and the subscriber users' tests of entitlements.
type Parties struct {
	Org       store.Organization
	Sub, Sub2 store.Subscriber // Kari Nordmann, Ola Nordmann
}

// Parties creates the seller and then the two subscribers.
func (w *Store) Parties() Parties {
	w.t.Helper()
	var p Parties
	p.Org = w.Organization(Organization{Name: "Nordavis AS", Country: "NO", Currency: "NOK", TimeZone: "Europe/Oslo",
		PricesIncludeVAT: Bool(false)})
	p.Sub = w.Subscriber(Subscriber{Name: "Kari Nordmann"})
	p.Sub2 = w.Subscriber(Subscriber{Name: "Ola Nordmann"})
	return p
}

// Agreement creates a payment agreement of subscriber sub with provider
// typ, reference ref and payment method. It fails when the store answers
// with an agreement that already existed, except for the invoice agreement:
// a subscriber has one at most, and asking again returns it.
func (w *Store) Agreement(sub, typ, ref, method string) store.PaymentAgreement {
	w.t.Helper()
	a, created, err := w.s.CreatePaymentAgreement(w.ctx, store.PaymentAgreement{SubscriberID: sub, ProviderType: typ,
		ProviderAgreementReference: ref, PaymentMethod: method}, w.now)
	if err != nil || (!created && typ != store.ProviderInvoice) {
		w.t.Fatalf("seed: create %s agreement: %v (created %t)", typ, err, created)
	}
	return a
}

// OpenDemand creates a seller (prices excluding VAT) and a subscriber, and
// writes an issued invoice and its open payment demand of amount minor
// units in NOK, issued and due at the writer's time with next_dunning_at
// set; it returns their ids. Unlike the other writers it writes the rows
// straight into the tables: the tests of settlement and of the tables'
// keys want one invoice and demand as the engine leaves them, without
// running the engine's issuing.
func (w *Store) OpenDemand(amount int64) (demand, invoice string) {
	w.t.Helper()
	org := w.Organization(Organization{Name: "Nordavis AS", Country: "NO", Currency: "NOK", TimeZone: "Europe/Oslo",
		PricesIncludeVAT: Bool(false)})
	sub := w.Subscriber(Subscriber{Name: "Kari Nordmann"})
	demand, invoice = store.NewID(), store.NewID()
	var account string
	if err := w.s.InTx(w.ctx, func(tx *store.Tx) error {
		var err error
		account, err = tx.EnsureAccount(w.ctx, sub.ID, "NOK", w.now)
		return err
	}); err != nil {
		w.fail("account", err)
	}
	tenant, err := tenancy.From(w.ctx)
	if err != nil {
		w.fail("invoice", err)
	}
	stamp, day := w.now.UTC().Format("2006-01-02T15:04:05.000000Z"), w.now.UTC().Format("2006-01-02")
	if _, err := w.s.DB().ExecContext(w.ctx, `INSERT INTO invoices (id, tenant_id, organization_id, invoice_number, payment_demand_id,
		account_id, subscriber_id, currency, prices_include_vat, status, issued_at, due_at, issue_date, due_date, seller, buyer,
		lines, vat_totals, net, vat, gross, kid, created_at)
		VALUES ($1, $2, $3, 1, $4, $5, $6, 'NOK', true, 'Issued', $7, $7, $9, $9, '{}', '{}', '[]', '[]',
		$8, 0, $8, '00000000018', $7)`, invoice, tenant, org.ID, demand, account, sub.ID, stamp, amount, day); err != nil {
		w.fail("invoice", err)
	}
	if _, err := w.s.DB().ExecContext(w.ctx, `INSERT INTO payment_demands (id, tenant_id, kind, invoice_id, account_id, subscriber_id,
		organization_id, currency, amount, status, issued_at, due_at, created_at, next_dunning_at)
		VALUES ($1, $2, 'Period', $3, $4, $5, $6, 'NOK', $7, 'Open', $8, $8, $8, $8)`,
		demand, tenant, invoice, account, sub.ID, org.ID, amount, stamp); err != nil {
		w.fail("payment demand", err)
	}
	return demand, invoice
}
