package store_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/seed"
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
	ctx := seed.Tenant(tb, s, fmt.Sprintf("lists-%d", now.UnixNano()), now)
	sd := seed.NewStore(tb, s, ctx, now)
	org := sd.Organization(seed.Organization{Name: "Lists AS", Country: "NO", Currency: "NOK", TimeZone: "Europe/Oslo",
		PricesIncludeVAT: seed.Bool(false)})
	prod := sd.Product(seed.Product{Name: "Digital", Category: "digital", VATRate: "25"})
	plan := sd.Plan(seed.Plan{Name: "Monthly", Unit: "Month", Count: 1, MinimumDueDays: seed.Days(0), PaymentTermsDays: seed.Days(14)})
	tmpl := sd.Package(seed.Package{Name: "Digital", Price: "199.00", Units: 1, PermanentDiscount: "0", Products: []string{prod.ID},
		Plans: []string{plan.ID}})
	in, err := catalogdb.PackageForMerge(ctx, s, tmpl.ID)
	if err != nil {
		tb.Fatal(err)
	}
	pkg, err := catalog.Merge(in)
	if err != nil {
		tb.Fatal(err)
	}
	subscribers := make([]string, 0, n/4+1)
	for i := 0; i < n; i += 4 {
		subscribers = append(subscribers, sd.Subscriber(seed.Subscriber{Name: fmt.Sprintf("Subscriber %d", i), Country: "NO"}).ID)
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

// TestListPagesFollowChanges: list pages take unchanged rows from the
// store's row cache (rowcache.go); a page read after a row changed must
// show the change, on both engines.
func TestListPagesFollowChanges(t *testing.T) {
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			s := storetest.Open(t, eng)
			ctx := fillLists(t, s, 40)
			page := store.Page{Limit: 100}
			now := time.Now()
			invoices := func() []store.Invoice {
				t.Helper()
				invs, _, err := s.ListInvoiceItems(ctx, store.DocumentFilter{Now: now}, page, store.InvoiceParts{})
				if err != nil || len(invs) != 40 {
					t.Fatalf("%d invoices, %v", len(invs), err)
				}
				return invs
			}
			subs := func() []store.ListedSubscription {
				t.Helper()
				subs, _, err := s.ListSubscriptionItems(ctx, store.SubscriptionFilter{}, page, false)
				if err != nil || len(subs) != 40 {
					t.Fatalf("%d subscriptions, %v", len(subs), err)
				}
				return subs
			}
			cold, warm := invoices(), invoices()
			if fmt.Sprint(cold) != fmt.Sprint(warm) {
				t.Fatal("a second read of the same invoices differs from the first")
			}
			coldSubs, warmSubs := subs(), subs()
			if fmt.Sprint(coldSubs) != fmt.Sprint(warmSubs) {
				t.Fatal("a second read of the same subscriptions differs from the first")
			}

			paid := warm[7]
			sub, err := s.Subscription(ctx, warmSubs[3].ID)
			if err != nil {
				t.Fatal(err)
			}
			err = s.InTx(ctx, func(tx *store.Tx) error {
				if err := tx.WriteSettlement(ctx, store.Settlement{DemandID: paid.PaymentDemandID, InvoiceID: paid.ID,
					Paid: paid.Gross.Minor, DemandStatus: "Paid", InvoiceStatus: "Paid", StopDunning: true}); err != nil {
					return err
				}
				at := now.UTC().Truncate(time.Second)
				sub.CancelledAt, sub.CancelReason = &at, "Moved abroad"
				return tx.UpdateSubscription(ctx, sub)
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, inv := range invoices() {
				want := warm[0].Status
				if inv.ID == paid.ID {
					want = "Paid"
				}
				if inv.Status != want {
					t.Errorf("invoice %s listed %s, want %s", inv.ID, inv.Status, want)
				}
			}
			for _, listed := range subs() {
				if got, want := listed.CancelReason != "", listed.ID == sub.ID; got != want {
					t.Errorf("subscription %s listed with cancel reason %q (changed: %v)", listed.ID, listed.CancelReason, want)
				}
			}
		})
	}
}

// TestInvoiceIndexPlans: the first query of an invoice list page reads
// ids and versions from an index alone, and finding invoices by KID (a
// payment's reference) searches an index instead of reading the tenant's
// invoices.
func TestInvoiceIndexPlans(t *testing.T) {
	t.Parallel()
	s := storetest.Open(t, store.SQLite)
	ctx := fillLists(t, s, 20)
	tenant, _ := tenancy.From(ctx)
	for _, c := range []struct{ query, want string }{
		{"SELECT id, version FROM invoices WHERE tenant_id = $1 ORDER BY id LIMIT 1001", "USING COVERING INDEX invoices_versions"},
		{"SELECT payment_demand_id, currency FROM invoices WHERE tenant_id = $1 AND kid = '0001'", "USING INDEX invoices_kid"},
	} {
		plan, err := s.QueryPlan(ctx, c.query, tenant)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(plan, "\n"); !strings.Contains(got, c.want) {
			t.Errorf("%s\nplan:\n%s\nwant a step %s", c.query, got, c.want)
		}
	}
}
