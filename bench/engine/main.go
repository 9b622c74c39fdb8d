// Command engine measures the subscription engine: it fills a fresh
// database with N active monthly subscriptions and advances the tenant by
// one month, so that every subscription renews once, and reports renewals
// per second and the process's peak resident memory during the advance.
//
// With billing (the default) the fill also issues each subscription's
// first invoice, as an order's completion does, so the advance meets a
// tenant with a month of invoices, accounts and ledger entries behind it;
// on PostgreSQL the fill ends with ANALYZE, as autovacuum would have run
// on a tenant in use (-analyze=false measures without statistics).
//
//	go run ./bench/engine -n 100000                      # SQLite in a temp dir
//	go run ./bench/engine -n 100000 -database-url postgres://...
//
// -chain-share puts that share of the subscriptions on a 3-step chain
// (each ordered as an order would, with its own chain instance) whose
// first step lasts one period, so each of their renewals is a step change.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"github.com/kadens/kadens/internal/ledger"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/gctune"
	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

func main() {
	n := flag.Int("n", 10000, "number of subscriptions")
	dbURL := flag.String("database-url", "", "postgres:// URL of an empty database (default: SQLite in a temp dir)")
	perSubscriber := flag.Int("per-subscriber", 100, "subscriptions per subscriber")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the advance to this file")
	withBilling := flag.Bool("billing", true, "issue payment demands and invoices with every renewal, as kadens serve does (false: the engine alone)")
	dunningDays := flag.Int("reminder-days", 0, "with billing, a default dunning process reminding this many days after the due date, so unpaid January invoices get reminders during the advance (0: no dunning)")
	batchSize := flag.Int("batch", 0, "subscriptions per engine transaction (0: the engine's default)")
	changes := flag.Float64("change-share", 0, "share of the subscriptions (0 to 1) with an OnRenewal plan change registered before the advance, to another monthly package")
	share := flag.Float64("chain-share", 0, "share of the subscriptions (0..1) on a 3-step chain instance whose first step lasts one period, so the advance moves them to step 2")
	withAnalyze := flag.Bool("analyze", true, "on PostgreSQL, ANALYZE after the fill as autovacuum would have on a tenant in use (false: advance with no planner statistics)")
	flag.Parse()
	billing, analyze, batchOverride, reminderDays, changeShare, chainShare = *withBilling, *withAnalyze, *batchSize, *dunningDays, *changes, *share
	gctune.Apply(os.Getenv) // as kadens serve does
	profile = *cpuProfile
	if err := run(*n, *perSubscriber, *dbURL); err != nil {
		fmt.Fprintln(os.Stderr, "bench/engine:", err)
		os.Exit(1)
	}
}

var (
	profile string
	billing bool
	analyze bool
	// batchOverride replaces the engine's batch size when positive.
	batchOverride int
	reminderDays  int
	// changeShare of the subscriptions get a registered OnRenewal change.
	changeShare float64
	// chainShare of the subscriptions are on a chain instance.
	chainShare float64
)

func run(n, perSubscriber int, dbURL string) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "kadens-engine-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	st, err := store.Open(ctx, store.Options{DatabaseURL: dbURL, DataDir: dir})
	if err != nil {
		return err
	}
	defer st.Close()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := st.Migrate(ctx, quiet); err != nil {
		return err
	}
	start := time.Date(2027, 1, 1, 0, 0, 0, 0, mustZone("Europe/Oslo"))
	ten, err := st.CreateTenant(ctx, fmt.Sprintf("bench-%d", time.Now().UnixNano()), true, start)
	if err != nil {
		return err
	}
	tctx := tenancy.With(ctx, ten.ID)
	pkg, org, err := catalogFixture(tctx, st, start)
	if err != nil {
		return err
	}
	quietEngine := engine.New(st, quiet, "bench-fill")
	var chained string // the chain's first template
	if chainShare > 0 {
		if chained, err = chainFixture(tctx, st, pkg.BillingPlan.BillingPlanID, start); err != nil {
			return err
		}
	}
	if reminderDays > 0 && billing {
		// Nobody pays in the bench: with a default dunning process every
		// January invoice whose reminder falls before the advance's end gets
		// one during it, besides the renewals.
		if _, err := invoicing.CreateDunningProcess(tctx, st, invoicing.DunningProcess{Name: "Bench", ReminderDays: []int{reminderDays},
			ReminderFee: "35", IsDefault: true}, start); err != nil {
			return err
		}
	}
	fmt.Printf("engine: %s, filling %d subscriptions (%d per subscriber)...\n", st.Engine(), n, perSubscriber)
	fill := time.Now()
	subscribers := make([]string, 0, n/perSubscriber+1)
	for i := 0; i < n; i += perSubscriber {
		s, err := st.CreateSubscriber(tctx, store.Subscriber{Name: fmt.Sprintf("Subscriber %d", i), Country: "NO", Contacts: []store.Contact{}}, start)
		if err != nil {
			return err
		}
		subscribers = append(subscribers, s.ID)
	}
	const batch = 1000
	var changed []string
	for i := 0; i < n; i += batch {
		err := st.InTx(tctx, func(tx *store.Tx) error {
			var first []store.NewPeriod
			for j := i; j < min(i+batch, n); j++ {
				subscriber := subscribers[j/perSubscriber]
				p := pkg
				// Every 1/chainShare-th subscription (spread evenly) is on
				// the chain, with its own instance as an order writes it;
				// plan changes go to others (the last changeShare of each
				// thousand), so both shares are measured whole.
				onChain := chainShare > 0 && int(float64(j+1)*chainShare) > int(float64(j)*chainShare)
				if onChain {
					var err error
					if p, err = quietEngine.InstancePackage(tctx, tx, chained, catalog.Choices{}, start); err != nil {
						return err
					}
				}
				// Starts spread over the days of January, so renewals are
				// spread over February as they would be in a real tenant.
				sub, err := engine.Begin(engine.NewSeries{SubscriberID: subscriber, OrganizationID: org, TimeZone: "Europe/Oslo",
					Package: p, Start: start.AddDate(0, 0, j%28)}, start)
				if err != nil {
					return err
				}
				if err := tx.InsertSubscription(tctx, sub); err != nil {
					return err
				}
				if changeShare > 0 && !onChain && float64(999-j%1000) < changeShare*1000 {
					changed = append(changed, sub.ID)
				}
				first = append(first, store.NewPeriod{Sub: sub, At: start})
			}
			if !billing {
				return nil
			}
			// As an order's completion does: the subscriber's account and
			// the first period's invoice, so the advance meets a tenant
			// with a month of billing behind it.
			return invoicing.IssuePeriods(tctx, tx, first)
		})
		if err != nil {
			return err
		}
		if (i/batch)%20 == 0 {
			fmt.Printf("  %d/%d\n", i, n)
		}
	}
	if err := registerChanges(tctx, st, start, changed); err != nil {
		return err
	}
	fmt.Printf("filled in %s\n", time.Since(fill).Round(time.Millisecond))
	if st.Engine() == store.Postgres && analyze {
		// A tenant that has run for a month has planner statistics: autovacuum
		// analyzes tables as they change, but not within the seconds between
		// this fill and the advance. Without them the planner cannot tell the
		// indexes that lead with tenant_id apart, and the foreign-key checks
		// of new subscriptions look their subscriber up by scanning all of
		// the tenant's subscribers (docs/PERFORMANCE.md, "Planner statistics").
		a := time.Now()
		if _, err := st.DB().ExecContext(ctx, `ANALYZE`); err != nil {
			return fmt.Errorf("analyze: %w", err)
		}
		fmt.Printf("analyzed in %s\n", time.Since(a).Round(time.Millisecond))
	}
	runtime.GC()
	resetPeakRSS()
	eng := engine.New(st, quiet, "bench")
	if batchOverride > 0 {
		eng.Batch = batchOverride
	}
	if billing {
		eng.Hooks.PeriodsCreated = invoicing.IssuePeriods // as kadens serve wires it
		// Dunning too (-reminder-days measures it): without both hooks
		// the engine looks for no due dunning.
		eng.Hooks.Dun = invoicing.DunCounts
		eng.Hooks.NextDun = invoicing.NextDunningAt
	}
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	began := time.Now()
	self0, busy0 := selfCPU(), machineBusy()
	stats, err := eng.Advance(ctx, ten.ID, start.AddDate(0, 1, 27))
	if err != nil {
		return err
	}
	d := time.Since(began)
	selfS, busyS := (selfCPU() - self0).Seconds(), (machineBusy() - busy0).Seconds()
	if stats.Renewals != n {
		return fmt.Errorf("advance renewed %d subscriptions, want %d", stats.Renewals, n)
	}
	if chainShare > 0 {
		// Each chained subscription moved to its instance's step 2.
		var moved int
		if err := st.DB().QueryRowContext(ctx, `SELECT count(*) FROM subscriptions WHERE chain_step = 2`).Scan(&moved); err != nil {
			return err
		}
		fmt.Printf("CHAIN %d subscriptions moved to step 2\n", moved)
	}
	if stats.Reminders > 0 {
		fmt.Printf("REMINDERS %d of the advance's work\n", stats.Reminders)
	}
	fmt.Printf("RESULT engine=%s billing=%v chain_share=%.2f subscriptions=%d renewals=%d seconds=%.2f renewals_per_s=%.0f us_per_renewal=%.1f peak_rss_mib=%.1f self_cpu_us_per_renewal=%.1f machine_cpu_us_per_renewal=%.1f\n",
		st.Engine(), billing, chainShare, n, stats.Renewals, d.Seconds(), float64(stats.Renewals)/d.Seconds(),
		float64(d.Microseconds())/float64(stats.Renewals), peakRSSMiB(),
		selfS*1e6/float64(stats.Renewals), busyS*1e6/float64(stats.Renewals))
	if !billing {
		return nil
	}
	// The ledger of two months of billing must be clean, and checking it is
	// an operator's command whose time matters too.
	began = time.Now()
	report, err := ledger.Check(ctx, st, ledger.Options{TenantID: ten.ID})
	if err != nil {
		return fmt.Errorf("ledger check: %w", err)
	}
	if !report.Clean() {
		return fmt.Errorf("ledger check found %d problems, first: %s", report.Found, report.Problems[0])
	}
	fmt.Printf("LEDGER engine=%s accounts=%d invoices=%d seconds=%.2f\n", st.Engine(), report.Accounts, report.Invoices,
		time.Since(began).Seconds())
	return nil
}

func mustZone(name string) *time.Location {
	loc, err := period.LoadZone(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// catalogFixture creates a product, a monthly plan, a template package and
// an organization, and returns the merged subscription package.
func catalogFixture(ctx context.Context, st *store.Store, now time.Time) (catalog.SubscriptionPackage, string, error) {
	nok, _ := money.LookupCurrency("NOK")
	org, err := st.CreateOrganization(ctx, store.Organization{Name: "Bench AS", Country: "NO", Currency: "NOK", TimeZone: "Europe/Oslo", PricesIncludeVAT: true}, now)
	if err != nil {
		return catalog.SubscriptionPackage{}, "", err
	}
	prod, err := catalogdb.CreateProduct(ctx, st, catalog.Product{Name: "Digital", Category: "digital", VATRate: catalog.PercentOf(0), Active: true}, now)
	if err != nil {
		return catalog.SubscriptionPackage{}, "", err
	}
	plan, err := catalogdb.CreateBillingPlan(ctx, st, catalog.BillingPlan{Name: "Monthly", IntervalUnit: period.Month, IntervalCount: 1, MinimumDueDays: 0, PaymentTermsDays: 14}, now)
	if err != nil {
		return catalog.SubscriptionPackage{}, "", err
	}
	tmpl, err := catalogdb.CreatePackage(ctx, st, catalog.TemplatePackage{Name: "Digital monthly", Currency: "NOK", Price: catalog.NewAmount(19900, nok), Units: 1,
		PermanentDiscount: catalog.PercentOf(0), Products: []catalog.PackageProduct{{ProductID: prod.ID}}, BillingPlans: []string{plan.ID},
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

// registerChanges registers an OnRenewal change of each of subs to a
// second monthly template, as clients changing plan would.
func registerChanges(ctx context.Context, st *store.Store, now time.Time, subs []string) error {
	if len(subs) == 0 {
		return nil
	}
	nok, _ := money.LookupCurrency("NOK")
	ps, _, err := catalogdb.ListPackages(ctx, st, catalogdb.PackageFilter{}, store.Page{Limit: 1})
	if err != nil || len(ps) == 0 {
		return fmt.Errorf("bench template: %v", err)
	}
	t := ps[0]
	t.ID, t.Name, t.Price = "", "Digital plus", catalog.NewAmount(24900, nok)
	plus, err := catalogdb.CreatePackage(ctx, st, t, now)
	if err != nil {
		return err
	}
	fmt.Printf("PLANCHANGES %d OnRenewal changes registered\n", len(subs))
	return st.InTx(ctx, func(tx *store.Tx) error {
		cs := make([]store.ScheduledChange, len(subs))
		for i, id := range subs {
			cs[i] = store.ScheduledChange{ID: store.NewID(), SubscriptionID: id, PendingOnID: id, ProcessingType: store.ChangeOnRenewal,
				TemplatePackageID: plus.ID, Status: store.ChangeRegistered, RegisteredAt: now}
		}
		return tx.InsertChanges(ctx, cs)
	})
}

// chainFixture creates the chain 99 → 149 (3 periods) → 199 on plan and
// returns its first template, linked to it.
func chainFixture(ctx context.Context, st *store.Store, plan string, now time.Time) (string, error) {
	nok, _ := money.LookupCurrency("NOK")
	prod, err := catalogdb.CreateProduct(ctx, st, catalog.Product{Name: "Digital intro", Category: "digital", VATRate: catalog.PercentOf(0), Active: true}, now)
	if err != nil {
		return "", err
	}
	var steps []catalog.ChainStep
	var first catalog.TemplatePackage
	for i, price := range []int64{9900, 14900, 19900} {
		t, err := catalogdb.CreatePackage(ctx, st, catalog.TemplatePackage{Name: fmt.Sprintf("Intro step %d", i+1), Currency: "NOK", Price: catalog.NewAmount(price, nok),
			Units: 1, PermanentDiscount: catalog.PercentOf(0), Products: []catalog.PackageProduct{{ProductID: prod.ID}}, BillingPlans: []string{plan},
			AllowedChoices: catalog.AllowedChoices{MinUnits: 1, MaxUnits: 1}}, now)
		if err != nil {
			return "", err
		}
		if i == 0 {
			first = t
		}
		steps = append(steps, catalog.ChainStep{Step: i + 1, NextPackageID: t.ID, Periods: []int{1, 3, 1}[i]})
	}
	chain, err := catalogdb.CreatePackageChain(ctx, st, catalog.Chain{Name: "Intro", PackageChain: catalog.ChainSteps{Steps: steps}}, now)
	if err != nil {
		return "", err
	}
	first.PackageChainID = &chain.ID
	if _, err := catalogdb.UpdatePackage(ctx, st, first, now); err != nil {
		return "", err
	}
	return first.ID, nil
}

// resetPeakRSS starts a new peak-RSS measurement (Linux: clear_refs 5).
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

func peakRSSMiB() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(rest), "%f", &kb)
			return kb / 1024
		}
	}
	return 0
}

// selfCPU is the user and system CPU time this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// machineBusy is the CPU time all processes of the machine have used
// (Linux /proc/stat: every state but idle and iowait), so that on
// PostgreSQL the database's share of a run can be told from this
// process's.
func machineBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 2 {
		return 0
	}
	var busy int64
	for i, v := range f[1:] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		busy += n
	}
	return time.Duration(busy) * time.Second / 100 // USER_HZ
}
