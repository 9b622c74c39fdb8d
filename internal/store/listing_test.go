package store_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
)

// BenchmarkListPage reads one page of 100 subscriptions or invoices of a
// tenant with 1,000 of each, the whole records (ListSubscriptions,
// ListInvoices) against the list items (ListSubscriptionItems,
// ListInvoiceItems). On PostgreSQL too with KADENS_TEST_POSTGRES_URL.
//
//	go test ./internal/store -run '^$' -bench ListPage -count 5
func BenchmarkListPage(b *testing.B) {
	for _, eng := range storetest.Engines() {
		b.Run(string(eng), func(b *testing.B) {
			s := storetest.Open(b, eng)
			ctx := fillLists(b, s, 1000)
			page := store.Page{Limit: 100}
			run := func(name string, read func() (int, error)) {
				b.Run(name, func(b *testing.B) {
					cpu0 := cpuTime()
					for b.Loop() {
						if n, err := read(); err != nil || n != 100 {
							b.Fatalf("%d rows, %v", n, err)
						}
					}
					// The process's CPU time per page: unlike ns/op it does
					// not grow while other work on a busy machine holds the CPU.
					b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
				})
			}
			run("subscriptions/records", func() (int, error) {
				subs, _, err := s.ListSubscriptions(ctx, store.SubscriptionFilter{}, page)
				return len(subs), err
			})
			run("subscriptions/items", func() (int, error) {
				subs, _, err := s.ListSubscriptionItems(ctx, store.SubscriptionFilter{}, page, false)
				return len(subs), err
			})
			run("invoices/records", func() (int, error) {
				invs, _, err := s.ListInvoices(ctx, store.DocumentFilter{Now: time.Now()}, page)
				return len(invs), err
			})
			run("invoices/items", func() (int, error) {
				invs, _, err := s.ListInvoiceItems(ctx, store.DocumentFilter{Now: time.Now()}, page, store.InvoiceParts{})
				return len(invs), err
			})
		})
	}
}

// cpuTime is the CPU time (user and system) the process has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// fillLists gives a new tenant n subscriptions of one monthly package, four
// per subscriber, each with its first invoice, and returns its context.
func fillLists(tb testing.TB, s *store.Store, n int) context.Context {
	tb.Helper()
	now := time.Now().UTC()
	t, err := s.CreateTenant(context.Background(), fmt.Sprintf("lists-%d", now.UnixNano()), false, now)
	if err != nil {
		tb.Fatal(err)
	}
	ctx := tenancy.With(context.Background(), t.ID)
	nok, _ := money.LookupCurrency("NOK")
	org, err := s.CreateOrganization(ctx, store.Organization{Name: "Lists AS", Country: "NO", Currency: "NOK", TimeZone: "Europe/Oslo"}, now)
	if err != nil {
		tb.Fatal(err)
	}
	prod, err := s.CreateProduct(ctx, catalog.Product{Name: "Digital", Category: "digital", VATRate: catalog.PercentOf(25), Active: true}, now)
	if err != nil {
		tb.Fatal(err)
	}
	plan, err := s.CreateBillingPlan(ctx, catalog.BillingPlan{Name: "Monthly", IntervalUnit: period.Month, IntervalCount: 1, PaymentTermsDays: 14}, now)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl, err := s.CreatePackage(ctx, catalog.TemplatePackage{Name: "Digital", Currency: "NOK", Price: catalog.NewAmount(19900, nok), Units: 1,
		PermanentDiscount: catalog.PercentOf(0), Products: []catalog.PackageProduct{{ProductID: prod.ID}}, BillingPlans: []string{plan.ID},
		AllowedChoices: catalog.AllowedChoices{MinUnits: 1, MaxUnits: 1}}, now)
	if err != nil {
		tb.Fatal(err)
	}
	in, err := s.PackageForMerge(ctx, tmpl.ID)
	if err != nil {
		tb.Fatal(err)
	}
	pkg, err := catalog.Merge(in)
	if err != nil {
		tb.Fatal(err)
	}
	subscribers := make([]string, 0, n/4+1)
	for i := 0; i < n; i += 4 {
		sc, err := s.CreateSubscriber(ctx, store.Subscriber{Name: fmt.Sprintf("Subscriber %d", i), Country: "NO", Contacts: []store.Contact{}}, now)
		if err != nil {
			tb.Fatal(err)
		}
		subscribers = append(subscribers, sc.ID)
	}
	err = s.InTx(ctx, func(tx *store.Tx) error {
		var first []store.NewPeriod
		for i := range n {
			start := now.AddDate(0, 0, -(i % 28))
			sub, err := engine.Begin(engine.NewSeries{SubscriberID: subscribers[i/4], OrganizationID: org.ID, TimeZone: "Europe/Oslo",
				Package: pkg, Start: start}, start)
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
		tb.Fatal(err)
	}
	return ctx
}
