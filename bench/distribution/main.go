// Command distribution is the harness behind the "Distribution list"
// section of docs/PERFORMANCE.md: it fills a fresh database with N print
// subscriptions of a Mon–Sat title, each with its own subscriber and an
// address in one of 2,000 routed postal codes, a share of them on a
// vacation stop and a share at a temporary address on the measured day,
// then writes the day's list, delta and counts (CSV, to a counting
// discard) through delivery.WriteDistribution, as GET /distribution/{date}
// and `kadens distribution export` do. It prints one RESULT line per view
// with the seconds, the lines, and the RSS before the view and its peak
// while the view was written, of a fresh process that only writes the
// views (as `kadens distribution export` runs), so the fill's memory is
// not counted.
//
//	go run ./bench/distribution -n 1000000
//	go run ./bench/distribution -n 1000000 -database-url postgres://postgres@127.0.0.1:5432/bench?sslmode=disable
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/delivery"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

func main() {
	n := flag.Int("n", 100000, "print subscriptions")
	dbURL := flag.String("database-url", "", "postgres:// URL of an empty database (default: SQLite in a temp dir)")
	stopShare := flag.Float64("stop-share", 0.05, "share of the subscriptions on a vacation stop on the day")
	addressShare := flag.Float64("address-share", 0.02, "share at a temporary delivery address on the day")
	measureTenant := flag.String("measure-tenant", "", "internal: only write the views of this filled tenant (the child process)")
	dataDir := flag.String("data-dir", "", "internal: the SQLite folder of -measure-tenant")
	flag.Parse()
	if *measureTenant != "" {
		if err := measure(*n, *dbURL, *dataDir, *measureTenant); err != nil {
			fmt.Fprintln(os.Stderr, "distribution bench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*n, *dbURL, *stopShare, *addressShare); err != nil {
		fmt.Fprintln(os.Stderr, "distribution bench:", err)
		os.Exit(1)
	}
}

// The measured day: a Friday, the 15th day of the periods that began on 1 January.
var day = delivery.Date{Year: 2027, Month: time.January, Day: 15}

func run(n int, dbURL string, stopShare, addressShare float64) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "kadens-distribution-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	st, err := store.Open(ctx, store.Options{DatabaseURL: dbURL, DataDir: dir})
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Migrate(ctx, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		return err
	}
	oslo, err := time.LoadLocation("Europe/Oslo")
	if err != nil {
		return err
	}
	start := time.Date(2027, 1, 1, 0, 0, 0, 0, oslo)
	ten, err := st.CreateTenant(ctx, fmt.Sprintf("bench-%d", time.Now().UnixNano()), false, start)
	if err != nil {
		return err
	}
	tctx := tenancy.With(ctx, ten.ID)
	pkg, org, err := printCatalog(tctx, st, start)
	if err != nil {
		return err
	}
	fmt.Printf("distribution: %s, filling %d print subscriptions...\n", st.Engine(), n)
	fill := time.Now()
	const codes = 2000
	err = st.InTx(tctx, func(tx *store.Tx) error {
		rows := make([][]any, codes)
		for i := range rows {
			rows[i] = []any{tx.TenantID(), "NO", fmt.Sprintf("%04d", i+1), []string{"Bring", "Helthjem", "Morgenlevering"}[i%3], fmt.Sprintf("R%03d", i/10), true, "",
				store.TimeParam(start), store.TimeParam(start)}
		}
		return tx.InsertRows(tctx, "delivery_postal_codes", "tenant_id, country, postal_code, carrier, route, deliverable, reason, created_at, updated_at", rows, "")
	})
	if err != nil {
		return fmt.Errorf("postal codes: %w", err)
	}
	stopEvery, addressEvery := every(stopShare), every(addressShare)
	const batch = 1000
	for i := 0; i < n; i += batch {
		err := st.InTx(tctx, func(tx *store.Tx) error {
			var subs []store.Subscription
			var stops, addresses [][]any
			for j := i; j < min(i+batch, n); j++ {
				sb, err := tx.InsertSubscriber(tctx, store.Subscriber{Name: fmt.Sprintf("Leser %d", j), Country: "NO", Contacts: []store.Contact{},
					Address: store.Address{Line1: fmt.Sprintf("Gate %d", j%997+1), PostalCode: fmt.Sprintf("%04d", j%codes+1), City: "Oslo", Country: "NO"}}, start)
				if err != nil {
					return err
				}
				order := store.NewID()
				sub, err := engine.Begin(engine.NewSeries{SubscriberID: sb.ID, OrganizationID: org, TimeZone: "Europe/Oslo", OrderID: &order,
					Package: pkg, Start: start}, start)
				if err != nil {
					return err
				}
				subs = append(subs, sub)
				now := store.TimeParam(start)
				if stopEvery > 0 && j%stopEvery == 0 {
					stops = append(stops, []any{tx.TenantID(), store.NewID(), sub.ID, sub.ID, day.AddDays(-3).String(), day.AddDays(5).String(), "", "", now, now, order})
				} else if addressEvery > 0 && j%addressEvery == 1 {
					addresses = append(addresses, []any{tx.TenantID(), store.NewID(), sub.ID, sub.ID, delivery.AddressTemporary, day.AddDays(-1).String(),
						day.AddDays(10).String(), "", "Hytteveien 1", "", fmt.Sprintf("%04d", (j*7)%codes+1), "Geilo", "NO", "", "", now, now, order})
				}
			}
			if err := tx.InsertSubscriptions(tctx, subs); err != nil {
				return err
			}
			if err := tx.InsertRows(tctx, "delivery_stops", "tenant_id, id, subscription_id, asked_on_id, first_date, last_date, missed, credited, created_at, updated_at, order_id", stops, ""); err != nil {
				return err
			}
			return tx.InsertRows(tctx, "delivery_addresses", "tenant_id, id, subscription_id, asked_on_id, kind, first_date, last_date, name, line1, line2, postal_code, city, country, carrier, route, created_at, updated_at, order_id", addresses, "")
		})
		if err != nil {
			return err
		}
		if (i/batch)%100 == 0 {
			fmt.Printf("  %d/%d\n", i, n)
		}
	}
	fmt.Printf("filled in %s\n", time.Since(fill).Round(time.Millisecond))
	if st.Engine() == store.Postgres {
		// As autovacuum would have on a tenant in use.
		if _, err := st.DB().ExecContext(ctx, `ANALYZE`); err != nil {
			return fmt.Errorf("analyze: %w", err)
		}
	}
	// The views are written by a fresh process, as `kadens distribution
	// export` is run: its RSS is the list's own, not the fill's page cache
	// and heap.
	if err := st.Close(); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	child := exec.CommandContext(ctx, self, "-n", fmt.Sprint(n), "-database-url", dbURL, "-data-dir", dir, "-measure-tenant", ten.ID)
	child.Stdout, child.Stderr = os.Stdout, os.Stderr
	return child.Run()
}

// measure writes the day's three views of the filled tenant, one RESULT
// line each.
func measure(n int, dbURL, dir, tenant string) error {
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{DatabaseURL: dbURL, DataDir: dir})
	if err != nil {
		return err
	}
	defer st.Close()
	tctx := tenancy.With(ctx, tenant)
	for _, view := range []string{delivery.ViewList, delivery.ViewDelta, delivery.ViewCounts} {
		runtime.GC()
		debug.FreeOSMemory()
		_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // reset the peak RSS
		base := rss("VmRSS:")
		var w countingWriter
		enc, err := delivery.NewEncoder(&w, delivery.FormatCSV)
		if err != nil {
			return err
		}
		t0 := time.Now()
		sum, err := delivery.WriteDistribution(tctx, st, delivery.DistributionRequest{Day: day, View: view}, enc)
		if err != nil {
			return err
		}
		secs := time.Since(t0).Seconds()
		fmt.Printf("RESULT engine=%s n=%d view=%s seconds=%.2f lines=%d copies=%d bytes=%d rss_before_mib=%.0f peak_rss_mib=%.0f\n",
			st.Engine(), n, view, secs, sum.Lines, sum.Copies, w.n, base, rss("VmHWM:"))
	}
	return nil
}

// every is the stride that picks share of the subscriptions (0: none).
func every(share float64) int {
	if share <= 0 {
		return 0
	}
	return max(int(1/share+0.5), 1)
}

type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

// rss is a resident set size of the process in MiB: field VmRSS (now) or
// VmHWM (the peak since the last reset) of /proc/self/status.
func rss(field string) float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	_, rest, ok := strings.Cut(string(b), field)
	if !ok {
		return 0
	}
	var kb float64
	fmt.Sscan(rest, &kb)
	return kb / 1024
}

// printCatalog is the title: a Mon–Sat print product in a monthly package.
func printCatalog(ctx context.Context, st *store.Store, now time.Time) (catalog.SubscriptionPackage, string, error) {
	nok, _ := money.LookupCurrency("NOK")
	org, err := st.CreateOrganization(ctx, store.Organization{Name: "Avis AS", Country: "NO", Currency: "NOK", TimeZone: "Europe/Oslo", PricesIncludeVAT: true}, now)
	if err != nil {
		return catalog.SubscriptionPackage{}, "", err
	}
	paper, err := catalogdb.CreateProduct(ctx, st, catalog.Product{Name: "Avisa papir", Category: "print", VATRate: catalog.PercentOf(0), Active: true}, now)
	if err != nil {
		return catalog.SubscriptionPackage{}, "", err
	}
	w, err := delivery.ParseWeekdays([]string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat"})
	if err != nil {
		return catalog.SubscriptionPackage{}, "", err
	}
	if err := delivery.SetSchedule(ctx, st, paper.ID, w, now); err != nil {
		return catalog.SubscriptionPackage{}, "", err
	}
	plan, err := catalogdb.CreateBillingPlan(ctx, st, catalog.BillingPlan{Name: "Månedlig", IntervalUnit: period.Month, IntervalCount: 1, PaymentTermsDays: 14}, now)
	if err != nil {
		return catalog.SubscriptionPackage{}, "", err
	}
	tmpl, err := catalogdb.CreatePackage(ctx, st, catalog.TemplatePackage{Name: "Papir Man–Lør", Currency: "NOK", Price: catalog.NewAmount(49900, nok), Units: 1,
		PermanentDiscount: catalog.PercentOf(0), Products: []catalog.PackageProduct{{ProductID: paper.ID}}, BillingPlans: []string{plan.ID},
		AllowedChoices: catalog.AllowedChoices{MinUnits: 1, MaxUnits: 1}}, now)
	if err != nil {
		return catalog.SubscriptionPackage{}, "", err
	}
	in, err := catalogdb.PackageForMerge(ctx, st, tmpl.ID)
	if err != nil {
		return catalog.SubscriptionPackage{}, "", err
	}
	pkg, err := catalog.Merge(in)
	return pkg, org.ID, err
}
