// Command listfill gives an existing tenant the data bench/api.sh's list
// targets read: an organization, a small catalog (three templates, one
// with two products and a choice of units), subscribers with addresses and
// an invoice contact, and N subscriptions, each with the first period's
// invoice as an order's completion issues it. It writes through the store
// (as bench/engine does), so a fill of thousands takes seconds; the rows
// are the ones the API would have written.
//
//	go run ./bench/listfill -data-dir DIR -tenant ID -n 1000
//	go run ./bench/listfill -database-url postgres://... -tenant ID -n 1000
//
// It prints the organization's id. On PostgreSQL it ends with ANALYZE, as
// autovacuum would have run on a tenant in use.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

func main() {
	dbURL := flag.String("database-url", "", "postgres:// URL of kadens's database (default: SQLite in -data-dir)")
	dataDir := flag.String("data-dir", "", "kadens's SQLite data directory")
	tenant := flag.String("tenant", "", "id of the tenant to fill (it must exist)")
	n := flag.Int("n", 1000, "number of subscriptions (each with one invoice)")
	perSubscriber := flag.Int("per-subscriber", 4, "subscriptions per subscriber")
	flag.Parse()
	if *tenant == "" || *n < 1 || *perSubscriber < 1 {
		fmt.Fprintln(os.Stderr, "listfill: -tenant is required, -n and -per-subscriber must be positive")
		os.Exit(2)
	}
	org, err := fill(context.Background(), store.Options{DatabaseURL: *dbURL, DataDir: *dataDir}, *tenant, *n, *perSubscriber)
	if err != nil {
		fmt.Fprintln(os.Stderr, "listfill:", err)
		os.Exit(1)
	}
	fmt.Println(org)
}

func fill(ctx context.Context, opts store.Options, tenant string, n, perSubscriber int) (string, error) {
	st, err := store.Open(ctx, opts)
	if err != nil {
		return "", err
	}
	defer st.Close()
	ctx = tenancy.With(ctx, tenant)
	now := time.Now().UTC()
	pkgs, templates, org, err := catalogFixture(ctx, st, now)
	if err != nil {
		return "", fmt.Errorf("catalog: %w", err)
	}
	subscribers := make([]string, 0, n/perSubscriber+1)
	for i := 0; i < n; i += perSubscriber {
		k := len(subscribers)
		s := store.Subscriber{Name: fmt.Sprintf("Subscriber %d", k), Email: fmt.Sprintf("subscriber%d@example.no", k), Country: "NO",
			Address:  store.Address{Line1: fmt.Sprintf("Storgata %d", k%200+1), PostalCode: "0150", City: "Oslo", Country: "NO"},
			Contacts: []store.Contact{}}
		if k%3 == 0 {
			s.Contacts = []store.Contact{{Role: store.ContactInvoice, Name: "Regnskap", Email: fmt.Sprintf("faktura%d@example.no", k),
				Address: store.Address{Line1: "Postboks 12", PostalCode: "0101", City: "Oslo", Country: "NO"}}}
		}
		created, err := st.CreateSubscriber(ctx, s, now)
		if err != nil {
			return "", fmt.Errorf("subscriber: %w", err)
		}
		subscribers = append(subscribers, created.ID)
	}
	const batch = 500
	for i := 0; i < n; i += batch {
		err := st.InTx(ctx, func(tx *store.Tx) error {
			var first []store.NewPeriod
			for j := i; j < min(i+batch, n); j++ {
				k := j % len(pkgs)
				// Starts spread over the last four weeks: a mix of running
				// periods, as a tenant in use has.
				start := now.AddDate(0, 0, -(j % 28))
				sub, err := engine.Begin(engine.NewSeries{SubscriberID: subscribers[j/perSubscriber], OrganizationID: org,
					TimeZone: "Europe/Oslo", Package: pkgs[k], TemplatePackageID: templates[k], Start: start}, start)
				if err != nil {
					return err
				}
				if err := tx.InsertSubscription(ctx, sub); err != nil {
					return err
				}
				first = append(first, store.NewPeriod{Sub: sub, At: start})
			}
			return invoicing.IssuePeriods(ctx, tx, first)
		})
		if err != nil {
			return "", fmt.Errorf("subscriptions %d-%d: %w", i, min(i+batch, n)-1, err)
		}
	}
	if st.Engine() == store.Postgres {
		if _, err := st.DB().ExecContext(ctx, `ANALYZE`); err != nil {
			return "", fmt.Errorf("analyze: %w", err)
		}
	}
	return org, nil
}

// catalogFixture creates an organization, two products, a monthly and a
// yearly plan and three templates, and returns the subscription packages
// orders of them get (the last one twice, with one and with two units).
func catalogFixture(ctx context.Context, st *store.Store, now time.Time) (pkgs []catalog.SubscriptionPackage, templates []string, org string, err error) {
	nok, _ := money.LookupCurrency("NOK")
	o, err := st.CreateOrganization(ctx, store.Organization{Name: "Bench Avis AS", OrganizationNumber: "923609016", Country: "NO",
		Currency: "NOK", TimeZone: "Europe/Oslo", PricesIncludeVAT: true}, now)
	if err != nil {
		return nil, nil, "", err
	}
	digital, err := catalogdb.CreateProduct(ctx, st, catalog.Product{Name: "Digital", Category: "digital", VATRate: catalog.PercentOf(0), Active: true}, now)
	if err != nil {
		return nil, nil, "", err
	}
	paper, err := catalogdb.CreateProduct(ctx, st, catalog.Product{Name: "Papiravis", Category: "paper", VATRate: catalog.PercentOf(0), Active: true}, now)
	if err != nil {
		return nil, nil, "", err
	}
	monthly, err := catalogdb.CreateBillingPlan(ctx, st, catalog.BillingPlan{Name: "Månedlig", IntervalUnit: period.Month, IntervalCount: 1, PaymentTermsDays: 14}, now)
	if err != nil {
		return nil, nil, "", err
	}
	yearly, err := catalogdb.CreateBillingPlan(ctx, st, catalog.BillingPlan{Name: "Årlig", IntervalUnit: period.Year, IntervalCount: 1, MinimumDueDays: 14, PaymentTermsDays: 14}, now)
	if err != nil {
		return nil, nil, "", err
	}
	type order struct {
		tmpl    catalog.TemplatePackage
		choices []catalog.Choices
	}
	two := 2
	orders := []order{
		{catalog.TemplatePackage{Name: "Digital – månedlig", Description: "Full digital tilgang, betales månedlig.", Currency: "NOK",
			Price: catalog.NewAmount(19900, nok), Units: 1, PermanentDiscount: catalog.PercentOf(0),
			Products: []catalog.PackageProduct{{ProductID: digital.ID}}, BillingPlans: []string{monthly.ID},
			AllowedChoices: catalog.AllowedChoices{MinUnits: 1, MaxUnits: 1}}, []catalog.Choices{{}}},
		{catalog.TemplatePackage{Name: "Digital – årlig", Description: "Full digital tilgang, betales årlig.", Currency: "NOK",
			Price: catalog.NewAmount(199000, nok), Units: 1, PermanentDiscount: catalog.PercentOf(0),
			Products: []catalog.PackageProduct{{ProductID: digital.ID}}, BillingPlans: []string{yearly.ID},
			AllowedChoices: catalog.AllowedChoices{MinUnits: 1, MaxUnits: 1}}, []catalog.Choices{{}}},
		{catalog.TemplatePackage{Name: "Papir + digital", Description: "Papiravisen hver dag og full digital tilgang.", Currency: "NOK",
			Price: catalog.NewAmount(54900, nok), Units: 1, PermanentDiscount: catalog.PercentOf(10),
			Products:     []catalog.PackageProduct{{ProductID: paper.ID}, {ProductID: digital.ID}},
			BillingPlans: []string{monthly.ID, yearly.ID}, AllowedChoices: catalog.AllowedChoices{MinUnits: 1, MaxUnits: 2}},
			[]catalog.Choices{{}, {Units: &two}}},
	}
	for _, o := range orders {
		t, err := catalogdb.CreatePackage(ctx, st, o.tmpl, now)
		if err != nil {
			return nil, nil, "", fmt.Errorf("template %s: %w", o.tmpl.Name, err)
		}
		in, err := catalogdb.PackageForMerge(ctx, st, t.ID)
		if err != nil {
			return nil, nil, "", err
		}
		for _, c := range o.choices {
			in.Choices = c
			p, err := catalog.Merge(in)
			if err != nil {
				return nil, nil, "", fmt.Errorf("merge %s: %w", o.tmpl.Name, err)
			}
			pkgs, templates = append(pkgs, p), append(templates, t.ID)
		}
	}
	return pkgs, templates, o.ID, nil
}
