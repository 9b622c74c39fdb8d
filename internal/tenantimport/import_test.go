package tenantimport_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/kadens/kadens/internal/ledger"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
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
	"github.com/kadens/kadens/internal/tenantimport"
)

// oslo is the organization's time zone; the tenant's clock starts at t0.
var (
	oslo, _ = time.LoadLocation("Europe/Oslo")
	t0      = time.Date(2027, 3, 10, 9, 0, 0, 0, oslo)
)

// tenant is a test tenant with a catalog like a source system's: a monthly
// plan (invoices 14 days ahead), a plain package of 199.00 a unit (1–3
// units), and a chain "3 months at 99.00, then 249.00 a month".
type tenant struct {
	ctx                       context.Context
	id                        string
	eng                       *engine.Engine
	plain, intro, standard    string
	plainPrice, intro3, after int64 // minor units
}

func newTenant(t *testing.T, s *store.Store, name ...string) tenant {
	t.Helper()
	ten, err := s.CreateTenant(context.Background(), strings.Join(append([]string{"moved"}, name...), "-"), true, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetTenantClock(context.Background(), ten.ID, t0.UTC()); err != nil {
		t.Fatal(err)
	}
	ctx := tenancy.With(context.Background(), ten.ID)
	w := seed.NewStore(t, s, ctx, t0)
	w.Organization(seed.Nordavis)
	prod := w.Product(seed.Product{Name: "Digital", Category: "digital", VATRate: "25"})
	plan := w.Plan(seed.Plan{Name: "Monthly", Unit: "Month"})
	plain := w.Package(seed.Package{Name: "Digital", Price: "199.00", Products: []string{prod.ID}, Plans: []string{plan.ID}, MinUnits: 1, MaxUnits: 3})
	intro := w.Package(seed.Package{Name: "Intro", Price: "99.00", Products: []string{prod.ID}, Plans: []string{plan.ID}})
	standard := w.Package(seed.Package{Name: "Standard", Price: "249.00", Products: []string{prod.ID}, Plans: []string{plan.ID}})
	chain, err := catalogdb.CreatePackageChain(ctx, s, catalog.Chain{Name: "Intro offer", PackageChain: catalog.ChainSteps{Steps: []catalog.ChainStep{
		{Step: 1, NextPackageID: intro.ID, Periods: 3}, {Step: 2, NextPackageID: standard.ID, Periods: 1}}}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range []catalog.TemplatePackage{intro, standard} {
		tp.PackageChainID = &chain.ID
		if _, err := catalogdb.UpdatePackage(ctx, s, tp, t0); err != nil {
			t.Fatal(err)
		}
	}
	eng := engine.New(s, slog.New(slog.NewTextHandler(io.Discard, nil)), "import-test")
	eng.Hooks.PeriodsCreated = invoicing.IssuePeriods
	eng.Hooks.Cancelled = invoicing.SettleCancellation
	return tenant{ctx: ctx, id: ten.ID, eng: eng, plain: plain.ID, intro: intro.ID, standard: standard.ID,
		plainPrice: 19900, intro3: 9900, after: 24900}
}

// monthStart is the local midnight of day d of the month m months after
// January 2026, the day clamped to the month's length: the source's
// calendar, computed here without Kadens' period package.
func monthStart(day, m int) time.Time {
	first := time.Date(2026, time.January+time.Month(m), 1, 0, 0, 0, 0, oslo)
	last := first.AddDate(0, 1, -1).Day()
	return time.Date(first.Year(), first.Month(), min(day, last), 0, 0, 0, 0, oslo)
}

// generate writes n subscribers, one running subscription each, as JSON
// Lines, and returns what each subscription's first renewal after the
// import must bill (minor units, by source id), from the catalog above.
func generate(tn tenant, n int) ([]byte, map[string]int64) {
	var buf bytes.Buffer
	want := map[string]int64{}
	enc := json.NewEncoder(&buf)
	for i := range n {
		day := 1 + i%31 // series begun on every day of the month, month ends included
		// The newest period the source has created: the one containing
		// the clock's date, or the next one when its renewal (14 days
		// before the end) has already run.
		k := 0
		for !monthStart(day, k+1).After(t0) {
			k++
		}
		if !monthStart(day, k+1).AddDate(0, 0, -14).After(t0) {
			k++
		}
		sub := map[string]any{"sourceId": fmt.Sprintf("SUB-%d", i), "seriesStart": monthStart(day, 0).Format(time.DateOnly),
			"periodStart": monthStart(day, k).Format(time.DateOnly), "periodEnd": monthStart(day, k+1).Format(time.DateOnly)}
		switch i % 3 {
		case 0: // plain, 1–3 units
			units := 1 + i%5%3
			sub["templatePackageId"], sub["units"] = tn.plain, units
			sub["price"] = fmt.Sprintf("%d.00", 199*units)
			want[sub["sourceId"].(string)] = tn.plainPrice * int64(units)
		case 1: // on the intro step, in its 1st, 2nd or 3rd month
			step := 1 + i%7%3
			sub["templatePackageId"], sub["chainStepPeriod"], sub["price"] = tn.intro, step, "99.00"
			if step < 3 {
				want[sub["sourceId"].(string)] = tn.intro3
			} else {
				want[sub["sourceId"].(string)] = tn.after
			}
		default: // on the last step
			sub["templatePackageId"], sub["chainStepPeriod"], sub["price"] = tn.standard, 1+i%4, "249.00"
			want[sub["sourceId"].(string)] = tn.after
		}
		row := map[string]any{"externalId": fmt.Sprintf("S-%d", i), "name": fmt.Sprintf("Subscriber %d", i),
			"email": fmt.Sprintf("s%d@example.no", i), "country": "NO",
			"address":       map[string]string{"line1": fmt.Sprintf("Storgata %d", i%200+1), "postalCode": "0150", "city": "Oslo", "country": "NO"},
			"subscriptions": []any{sub}}
		switch i % 4 {
		case 1:
			row["paymentAgreements"] = []any{map[string]string{"sourceId": fmt.Sprintf("PA-%d", i), "providerType": "EHF", "providerAgreementReference": "923609016"}}
			sub["paymentAgreementSourceId"] = fmt.Sprintf("PA-%d", i)
		case 2:
			row["paymentAgreements"] = []any{map[string]string{"sourceId": fmt.Sprintf("PA-%d", i), "providerType": "External",
				"providerAgreementReference": fmt.Sprintf("ext-%d", i), "paymentMethod": "Card"}}
			sub["paymentAgreementSourceId"] = fmt.Sprintf("PA-%d", i)
			row["contacts"] = []any{map[string]any{"role": "Invoice", "name": "Accounts", "email": fmt.Sprintf("ap%d@example.no", i)}}
		}
		_ = enc.Encode(row)
	}
	return buf.Bytes(), want
}

// importSize is how many subscribers TestImportTenant moves: 1,000 by
// default, 300 under the race detector (CI's run; ~10x slower there), and
// KADENS_IMPORT_SUBSCRIBERS for the issue's 10,000 (bench/import.sh).
func importSize(t *testing.T) int {
	if v := os.Getenv("KADENS_IMPORT_SUBSCRIBERS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if underRace {
		return 300
	}
	return 1000
}

// counts reads how many rows the tenant has of what an import writes.
func counts(t *testing.T, s *store.Store, ctx context.Context) [3]int {
	t.Helper()
	var out [3]int
	for i, q := range []string{`SELECT count(*) FROM subscribers WHERE tenant_id = $1`,
		`SELECT count(*) FROM subscriptions WHERE tenant_id = $1`, `SELECT count(*) FROM payment_agreements WHERE tenant_id = $1`} {
		id, _ := tenancy.From(ctx)
		if err := s.DB().QueryRowContext(ctx, q, id).Scan(&out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestImportTenant moves a tenant of n subscribers with running
// subscriptions: the dry run reports what it would do and changes
// nothing; the real run creates it all; a second run is a no-op; and the
// first renewal of every subscription after the import bills what the
// source's catalog says its next period costs (the chain's next step
// after the intro's third month), on the source's calendar.
func TestImportTenant(t *testing.T) {
	n := importSize(t)
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		tn := newTenant(t, s)
		file, want := generate(tn, n)
		run := func(phase string, dry bool) tenantimport.Report {
			t.Helper()
			began := time.Now()
			rep, err := tenantimport.Run(tn.ctx, s, tn.eng, bytes.NewReader(file), tenantimport.Options{File: "tenant.jsonl",
				Format: tenantimport.JSONLines, DryRun: dry, Now: t0.UTC(), Batch: 250})
			if err != nil {
				t.Fatalf("dry run %v: %v; %v", dry, err, rep.Problems)
			}
			t.Logf("%s: %s: %d subscribers in %s (%.0f/s)", s.Engine(), phase, n, time.Since(began).Round(time.Millisecond),
				float64(n)/time.Since(began).Seconds())
			return rep
		}
		before := counts(t, s, tn.ctx)
		dry := run("dry run", true)
		wantAgreements := 0
		for i := range n {
			if i%4 == 1 || i%4 == 2 {
				wantAgreements++
			}
		}
		if dry.Subscribers.Created != n || dry.Subscriptions.Created != n || dry.Agreements.Created != wantAgreements || !dry.DryRun {
			t.Fatalf("dry run report %+v", dry)
		}
		if after := counts(t, s, tn.ctx); after != before {
			t.Fatalf("dry run changed the tenant: %v → %v", before, after)
		}
		real := run("import", false)
		if real.Subscribers != dry.Subscribers || real.Subscriptions != dry.Subscriptions || real.Agreements != dry.Agreements {
			t.Fatalf("real run %+v differs from its dry run %+v", real, dry)
		}
		// Every subscriber without an agreement of its own got its Invoice one.
		if got := counts(t, s, tn.ctx); got != [3]int{n, n, n} {
			t.Fatalf("after the import: %v subscribers, subscriptions, agreements; want %d each", got, n)
		}
		// The subscriber and contact events say they came from the import.
		evs, _, err := s.ListEvents(tn.ctx, store.EventFilter{}, store.Page{Limit: 20})
		if err != nil {
			t.Fatal(err)
		}
		contacts := 0
		for _, e := range evs {
			if !strings.HasPrefix(e.EventType, "SubscriberContact") {
				continue
			}
			contacts++
			var d store.ContactEventData
			if err := json.Unmarshal(e.Data, &d); err != nil || d.Source != store.SourceImport {
				t.Fatalf("%s of an import: source %q (%v)", e.EventType, d.Source, err)
			}
		}
		if contacts == 0 {
			t.Fatal("the import recorded no contact events")
		}
		again := run("rerun", false)
		if len(real.Notes) != 0 {
			t.Fatalf("notes on the newest periods: %v", real.Notes[:1])
		}
		if again.Subscribers.Unchanged != n || again.Subscriptions.Unchanged != n || again.Agreements.Unchanged != wantAgreements ||
			again.Subscribers.Created+again.Subscriptions.Created+again.Agreements.Created+again.Subscribers.Updated != 0 {
			t.Fatalf("second run %+v", again)
		}
		if got := counts(t, s, tn.ctx); got != [3]int{n, n, n} {
			t.Fatalf("the second run wrote: %v", got)
		}
		// No invoice yet: the source billed the current periods.
		if invs, _, err := s.ListInvoices(tn.ctx, store.DocumentFilter{Now: t0}, store.Page{Limit: 1}); err != nil || len(invs) != 0 {
			t.Fatalf("%d invoices after the import (%v)", len(invs), err)
		}

		// Past every first renewal: each imported period renews after t0
		// (the source had run every earlier renewal) and at most 31 days
		// after it (14 days before an end at most 45 days away).
		to := t0.AddDate(0, 0, 32).UTC()
		began := time.Now()
		stats, err := tn.eng.AdvanceClock(tn.ctx, tn.id, to)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: advance: %+v in %s", s.Engine(), stats, time.Since(began).Round(time.Millisecond))
		// Every invoice of the tenant, by the period it bills.
		invoices := map[string][]int64{}
		for after := ""; ; {
			page, next, err := s.ListInvoices(tn.ctx, store.DocumentFilter{Now: to}, store.Page{Limit: 1000, After: after})
			if err != nil {
				t.Fatal(err)
			}
			for _, inv := range page {
				if inv.SubscriptionID != nil {
					invoices[*inv.SubscriptionID] = append(invoices[*inv.SubscriptionID], inv.Gross.Minor)
				}
			}
			if next == "" {
				break
			}
			after = next
		}
		checked := 0
		err = s.InTx(tn.ctx, func(tx *store.Tx) error {
			ids := make([]string, 0, n)
			for id := range want {
				ids = append(ids, id)
			}
			recs, err := tenantimport.ImportRecords(tn.ctx, tx, tenantimport.KindSubscription, ids)
			if err != nil {
				return err
			}
			for src, amount := range want {
				first, err := tx.Subscription(tn.ctx, recs[src].KadensID)
				if err != nil {
					return err
				}
				if first.NextID == nil {
					return fmt.Errorf("%s (%s, period %s–%s) did not renew by %s", src, first.ID, first.PeriodStart, first.PeriodEnd, to)
				}
				next, err := tx.Subscription(tn.ctx, *first.NextID)
				if err != nil {
					return err
				}
				if !next.PeriodStart.Equal(first.PeriodEnd) {
					return fmt.Errorf("%s: renewal starts %s, not where the imported period ended (%s)", src, next.PeriodStart, first.PeriodEnd)
				}
				if invs := invoices[next.ID]; len(invs) != 1 || invs[0] != amount {
					return fmt.Errorf("%s: renewal %s billed %v; want one invoice of %d", src, next.ID, invs, amount)
				}
				checked++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if checked != n {
			t.Fatalf("checked %d renewals of %d", checked, n)
		}
	})
}

// TestImportProblems: bad rows are reported with file, line and field,
// every one at once, and nothing is written — not even the good rows.
func TestImportProblems(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		tn := newTenant(t, s)
		csv := "subscriberExternalId,name,email,country,agreementSourceId,providerType,providerAgreementReference,subscriptionSourceId,templatePackageId,units,chainStepPeriod,seriesStart,periodStart,periodEnd,price\n" +
			"S-1,Kari Nordmann,kari@example.no,NO,,,,SUB-1," + tn.plain + ",1,,2026-01-31,2027-02-28,2027-03-31,199.00\n" + // good
			"S-2,Ola,ola@example.no,XX,,,,SUB-2," + tn.plain + ",1,,,2027-02-28,2027-03-31,199.00\n" + // country; periodEnd without seriesStart
			"S-3,Per,per@example.no,NO,PA-3,EHF,123,SUB-3," + tn.intro + ",,5,,2027-03-01,2027-04-01,99.00\n" + // org number; step period
			"S-4,Lise,lise@example.no,NO,,,,SUB-4," + tn.plain + ",2,,,2027-03-01,2027-04-01,199.00\n" + // price
			"S-1,Kari Nordmann,,,,,,SUB-1," + tn.plain + ",1,,,2027-03-01,2027-04-01,\n" + // duplicate subscription
			"S-5,Nils,nils@example.no,NO,,,,SUB-5,nope,,,,2027-03-01,yesterday,\n" +
			"S-6,Eva,,NO,,,,SUB-6," + tn.plain + ",3,,,2027-03-01,2027-04-01,,\n" // a field too many
		before := counts(t, s, tn.ctx)
		rep, err := tenantimport.Run(tn.ctx, s, tn.eng, strings.NewReader(csv), tenantimport.Options{File: "tenant.csv", Format: tenantimport.CSV, Now: t0.UTC()})
		if !errors.Is(err, tenantimport.ErrProblems) {
			t.Fatalf("err %v", err)
		}
		got := map[string]bool{}
		for _, p := range rep.Problems {
			got[fmt.Sprintf("%d %s", p.Line, p.Field)] = true
			if p.File != "tenant.csv" || p.Message == "" {
				t.Errorf("problem %+v", p)
			}
		}
		for _, w := range []string{"3 country", "3 periodEnd", "4 providerAgreementReference", "4 chainStepPeriod", "5 price",
			"6 subscriptionSourceId", "7 periodEnd", "8 "} {
			if !got[w] {
				t.Errorf("no problem %q among %v", w, rep.Problems)
			}
		}
		if got["2 periodEnd"] || got["2 price"] {
			t.Errorf("the good row has problems: %v", rep.Problems)
		}
		if after := counts(t, s, tn.ctx); after != before {
			t.Fatalf("a file with problems wrote: %v → %v", before, after)
		}
	})
}

// TestImportTenantIsolation: source ids are recorded per tenant, so the
// same file imported into a second tenant creates everything there too;
// and one tenant's template is no template of another's.
func TestImportTenantIsolation(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a, b := newTenant(t, s, "a"), newTenant(t, s, "b")
		file := func(template string) string {
			return "subscriberExternalId,name,subscriptionSourceId,templatePackageId,periodStart,periodEnd\n" +
				"S-1,Kari,SUB-1," + template + ",2027-03-01,2027-04-01\n"
		}
		run := func(tn tenant, template string) (tenantimport.Report, error) {
			return tenantimport.Run(tn.ctx, s, tn.eng, strings.NewReader(file(template)),
				tenantimport.Options{File: "t.csv", Format: tenantimport.CSV, Now: t0.UTC()})
		}
		if rep, err := run(a, a.plain); err != nil || rep.Subscriptions.Created != 1 {
			t.Fatalf("tenant a: %+v %v", rep, err)
		}
		rep, err := run(b, a.plain)
		if !errors.Is(err, tenantimport.ErrProblems) || len(rep.Problems) != 1 || rep.Problems[0].Field != "templatePackageId" {
			t.Fatalf("tenant b with a's template: %+v %v", rep.Problems, err)
		}
		if rep, err := run(b, b.plain); err != nil || rep.Subscriptions.Created != 1 || rep.Subscribers.Created != 1 {
			t.Fatalf("tenant b: %+v %v", rep, err)
		}
		if got := counts(t, s, a.ctx); got != [3]int{1, 1, 1} {
			t.Fatalf("tenant a after b's import: %v", got)
		}
	})
}

// TestImportRerunChanges: a rerun updates a subscriber whose fields
// changed, leaves an imported subscription that changed in the file as it
// is (skipped, with a note naming the line), and a period whose renewal
// is already due is imported with a note saying so.
func TestImportRerunChanges(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		tn := newTenant(t, s)
		head := "subscriberExternalId,name,email,subscriptionSourceId,templatePackageId,periodStart,periodEnd\n"
		run := func(rows string) tenantimport.Report {
			t.Helper()
			rep, err := tenantimport.Run(tn.ctx, s, tn.eng, strings.NewReader(head+rows),
				tenantimport.Options{File: "t.csv", Format: tenantimport.CSV, Now: t0.UTC()})
			if err != nil {
				t.Fatalf("%v: %v", err, rep.Problems)
			}
			return rep
		}
		rep := run("S-1,Kari,kari@example.no,SUB-1," + tn.plain + ",2027-03-01,2027-04-01\n" +
			"S-2,Ola,ola@example.no,SUB-2," + tn.plain + ",2027-02-20,2027-03-20\n")
		if rep.Subscriptions.Created != 2 || len(rep.Notes) != 1 || rep.Notes[0].Line != 3 || rep.Notes[0].Field != "periodEnd" {
			t.Fatalf("first run %+v", rep)
		}
		rep = run("S-1,Kari,kari@nordavis.no,SUB-1," + tn.plain + ",2027-03-01,2027-04-01\n" +
			"S-2,Ola,ola@example.no,SUB-2," + tn.plain + ",2027-03-20,2027-04-20\n")
		if rep.Subscribers != (tenantimport.Counts{Updated: 1, Unchanged: 1}) || rep.Subscriptions != (tenantimport.Counts{Unchanged: 1, Skipped: 1}) ||
			len(rep.Notes) != 1 || rep.Notes[0].Line != 3 || rep.Notes[0].Field != "subscriptionSourceId" {
			t.Fatalf("rerun %+v", rep)
		}
		subs, _, err := s.ListSubscribers(tn.ctx, store.SubscriberFilter{}, store.Page{Limit: 10})
		if err != nil || len(subs) != 2 {
			t.Fatalf("%v %v", subs, err)
		}
		for _, sub := range subs {
			if sub.ExternalID == "S-1" && sub.Email != "kari@nordavis.no" {
				t.Errorf("S-1 not updated: %+v", sub)
			}
		}
	})
}

// TestImportUnderConcurrency: the same file imported 16 times at once
// creates its subscribers and running subscriptions once (each import
// succeeds; the later ones find the rows and leave them unchanged), and
// the import moves no money: no invoice, and a clean ledger.
func TestImportUnderConcurrency(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		tn := newTenant(t, s)
		file := "subscriberExternalId,name,email,subscriptionSourceId,templatePackageId,periodStart,periodEnd\n" +
			"S-1,Kari,kari@example.no,SUB-1," + tn.plain + ",2027-03-01,2027-04-01\n" +
			"S-2,Ola,ola@example.no,SUB-2," + tn.plain + ",2027-03-05,2027-04-05\n"
		const n = 16
		reps := make([]tenantimport.Report, n)
		errs := make([]error, n)
		start := make(chan struct{})
		done := make(chan int)
		for i := range n {
			go func() {
				<-start
				reps[i], errs[i] = tenantimport.Run(tn.ctx, s, tn.eng, strings.NewReader(file),
					tenantimport.Options{File: "t.csv", Format: tenantimport.CSV, Now: t0.UTC()})
				done <- i
			}()
		}
		close(start)
		var created tenantimport.Counts
		for range n {
			i := <-done
			if errs[i] != nil {
				t.Errorf("import %d: %v %+v", i, errs[i], reps[i].Problems)
			}
			created.Created += reps[i].Subscribers.Created
			created.Unchanged += reps[i].Subscriptions.Created
		}
		if created.Created != 2 || created.Unchanged != 2 {
			t.Fatalf("%d subscribers and %d subscriptions created in all, want 2 and 2", created.Created, created.Unchanged)
		}
		subs, _, err := s.ListSubscribers(tn.ctx, store.SubscriberFilter{}, store.Page{Limit: 100})
		if err != nil || len(subs) != 2 {
			t.Fatalf("%d subscribers, %v", len(subs), err)
		}
		invs, _, err := s.ListInvoices(tn.ctx, store.DocumentFilter{}, store.Page{Limit: 10})
		if err != nil || len(invs) != 0 {
			t.Fatalf("%d invoices, %v", len(invs), err)
		}
		rep, err := ledger.Check(tn.ctx, s, ledger.Options{TenantID: tn.id})
		if err != nil || !rep.Clean() {
			t.Fatalf("ledger %+v %v", rep.Problems, err)
		}
	})
}

// TestImportSubscriberNumberBound: a subscriber number beyond
// store.MaxSubscriberNumber is a problem naming subscriberNumber (a number
// at the end of int64 used to stop the tenant's number series); one at
// the bound is imported, and the series still assigns the numbers after
// the import from its own start.
func TestImportSubscriberNumberBound(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		tn := newTenant(t, s)
		run := func(jsonl string) (tenantimport.Report, error) {
			return tenantimport.Run(tn.ctx, s, tn.eng, strings.NewReader(jsonl), tenantimport.Options{File: "s.jsonl", Format: tenantimport.JSONLines, Now: t0.UTC()})
		}
		rep, err := run(`{"externalId":"X-1","subscriberNumber":9223372036854775807,"name":"Far"}` + "\n")
		if !errors.Is(err, tenantimport.ErrProblems) || len(rep.Problems) != 1 || rep.Problems[0].Field != "subscriberNumber" {
			t.Fatalf("number at the end of int64: %v %+v", err, rep.Problems)
		}
		if _, err := run(fmt.Sprintf(`{"externalId":"X-2","subscriberNumber":%d,"name":"Top"}`+"\n", int64(store.MaxSubscriberNumber))); err != nil {
			t.Fatal(err)
		}
		sub, err := s.CreateSubscriber(tn.ctx, store.Subscriber{Name: "After"}, t0)
		if err != nil || sub.SubscriberNumber != 1 {
			t.Fatalf("after the import: number %d, %v; want 1", sub.SubscriberNumber, err)
		}
	})
}
