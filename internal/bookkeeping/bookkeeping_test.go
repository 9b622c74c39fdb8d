package bookkeeping_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/bookkeeping"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

var t0 = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// books is a tenant with a Norwegian organization on the example chart,
// a subscriber and a monthly package of 300.00 NOK excl. VAT (yearly
// 3000.00), split evenly between a newspaper product at 0 % and a podcast
// product at 25 %.
type books struct {
	ctx         context.Context
	org, subr   string
	paper, pod  string
	pkg         catalog.SubscriptionPackage
	yearly      catalog.SubscriptionPackage
	nok         money.Currency
	invoiceSubs []string
}

func oslo() *time.Location { l, _ := time.LoadLocation("Europe/Oslo"); return l }

func newBooks(t testing.TB, s *store.Store, name string) *books {
	t.Helper()
	ctx := seed.Tenant(t, s, name, t0)
	nok, _ := money.LookupCurrency("NOK")
	org, err := s.CreateOrganization(ctx, store.Organization{Name: "Nordavis AS", Country: "NO", Currency: "NOK",
		TimeZone: "Europe/Oslo", PricesIncludeVAT: false}, t0)
	if err != nil {
		t.Fatal(err)
	}
	paper, err := catalogdb.CreateProduct(ctx, s, catalog.Product{Name: "Avis", Category: "print", VATRate: catalog.PercentOf(0), Active: true}, t0)
	if err != nil {
		t.Fatal(err)
	}
	pod, err := catalogdb.CreateProduct(ctx, s, catalog.Product{Name: "Podkast", Category: "digital", VATRate: catalog.PercentOf(25), Active: true}, t0)
	if err != nil {
		t.Fatal(err)
	}
	mk := func(unit period.Unit, price int64) catalog.SubscriptionPackage {
		plan, err := catalogdb.CreateBillingPlan(ctx, s, catalog.BillingPlan{Name: string(unit), IntervalUnit: unit, IntervalCount: 1, PaymentTermsDays: 14}, t0)
		if err != nil {
			t.Fatal(err)
		}
		tmpl, err := catalogdb.CreatePackage(ctx, s, catalog.TemplatePackage{Name: "Avis+podkast " + string(unit), Currency: "NOK",
			Price: catalog.NewAmount(price, nok), Units: 1, PermanentDiscount: catalog.PercentOf(0),
			Products: []catalog.PackageProduct{{ProductID: paper.ID}, {ProductID: pod.ID}}, BillingPlans: []string{plan.ID},
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
		return pkg
	}
	b := &books{ctx: ctx, org: org.ID, paper: paper.ID, pod: pod.ID, nok: nok}
	b.pkg, b.yearly = mk(period.Month, 30000), mk(period.Year, 300000)
	sc, err := s.CreateSubscriber(ctx, store.Subscriber{Name: "Kari Nordmann", Country: "NO", Contacts: []store.Contact{}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	b.subr = sc.ID
	chart, _ := bookkeeping.Example("NO")
	if err := bookkeeping.SetChart(ctx, s, org.ID, chart, t0); err != nil {
		t.Fatal(err)
	}
	return b
}

// issue begins a series of pkg at each start, issuing its first period's
// invoice at issuedAt, and returns the invoice ids.
func (b *books) issue(t testing.TB, s *store.Store, pkg catalog.SubscriptionPackage, issuedAt time.Time, starts ...time.Time) []string {
	t.Helper()
	var ids []string
	err := s.InTx(b.ctx, func(tx *store.Tx) error {
		var first []store.NewPeriod
		for _, start := range starts {
			sub, err := engine.Begin(engine.NewSeries{SubscriberID: b.subr, OrganizationID: b.org, TimeZone: "Europe/Oslo",
				Package: pkg, Start: start}, issuedAt)
			if err != nil {
				return err
			}
			if err := tx.InsertSubscription(b.ctx, sub); err != nil {
				return err
			}
			first = append(first, store.NewPeriod{Sub: sub, At: issuedAt})
		}
		return invoicing.IssuePeriods(b.ctx, tx, first)
	})
	if err != nil {
		t.Fatal(err)
	}
	invs, _, err := s.ListInvoices(b.ctx, store.DocumentFilter{Now: issuedAt}, store.Page{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, id := range b.invoiceSubs {
		seen[id] = true
	}
	for _, inv := range invs {
		if !seen[inv.ID] {
			ids = append(ids, inv.ID)
			b.invoiceSubs = append(b.invoiceSubs, inv.ID)
		}
	}
	return ids
}

// postAll hands every billing event of the tenant to the consumer, as the
// outbox would, and returns how many it handed.
func postAll(t testing.TB, s *store.Store, ctx context.Context) int {
	t.Helper()
	n, cursor := 0, ""
	for {
		evs, next, err := s.ListEvents(ctx, store.EventFilter{}, store.Page{Limit: 500, After: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if err := bookkeeping.Post(ctx, s, e); err != nil {
				t.Fatalf("post %s %s: %v", e.EventType, e.ID, err)
			}
			n++
		}
		if next == "" {
			return n
		}
		cursor = next
	}
}

func local(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, oslo()) }

// checkBooks asserts every entry balances, numbers run 1..n without gaps
// in every journal, each document has one entry, and the ledger
// reconciles with the documents.
func checkBooks(t *testing.T, s *store.Store, b *books) []bookkeeping.Entry {
	t.Helper()
	entries, err := bookkeeping.Entries(b.ctx, s, b.org, "", "")
	if err != nil {
		t.Fatal(err)
	}
	last := map[string]int64{}
	sources := map[string]bool{}
	for _, e := range entries {
		var sum int64
		for _, l := range e.Lines {
			sum += l.Amount
		}
		if sum != 0 {
			t.Errorf("entry %s %d (%s) does not balance: %d", e.Journal, e.Number, e.Description, sum)
		}
		if e.Number != last[e.Journal]+1 {
			t.Errorf("journal %s: number %d after %d", e.Journal, e.Number, last[e.Journal])
		}
		last[e.Journal] = e.Number
		key := e.SourceKind + "/" + e.SourceID
		if sources[key] {
			t.Errorf("%s posted twice", key)
		}
		sources[key] = true
	}
	r, err := bookkeeping.Reconcile(b.ctx, s, b.org)
	if err != nil {
		t.Fatal(err)
	}
	if r.Differences() != 0 {
		t.Errorf("ledger − documents ≠ 0: %+v", r)
	}
	return entries
}

// TestPostingAndRecognition: an invoice for a future month posts the
// customer, unearned revenue and VAT; a payment posts the bank; a rerun
// of every event posts nothing; recognition moves the earned part pro
// rata by day (hand-computed) and is idempotent; a credit note reverses
// what is unearned; and the books reconcile with the documents.
func TestPostingAndRecognition(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		b := newBooks(t, s, "books")
		// Issued 15 December for January (31 days): 150.00 paper at 0 %,
		// 150.00 podcast + 37.50 VAT; gross 337.50.
		inv := b.issue(t, s, b.pkg, local(2026, 12, 15).Add(9*time.Hour), local(2027, 1, 1))[0]
		invoice, err := s.Invoice(b.ctx, inv)
		if err != nil || invoice.Gross.Minor != 33750 {
			t.Fatalf("invoice %+v %v", invoice.Gross, err)
		}
		if _, _, err := invoicing.RecordPayment(b.ctx, s, invoicing.NewPayment{PaymentDemandID: invoice.PaymentDemandID, Status: store.PaymentSucceeded,
			Amount: 33750, Currency: "NOK", PaidAt: local(2026, 12, 20).Add(10 * time.Hour), PaidAtGiven: true, Provider: "AvtaleGiro",
			ProviderReference: "ag-1", Now: local(2026, 12, 20).Add(10 * time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if n := postAll(t, s, b.ctx); n == 0 {
			t.Fatal("no events")
		}
		postAll(t, s, b.ctx) // a redelivery of everything posts nothing
		entries := checkBooks(t, s, b)
		if len(entries) != 2 {
			t.Fatalf("%d entries, want the invoice and the payment", len(entries))
		}
		byAccount := func(e bookkeeping.Entry) map[string]int64 {
			m := map[string]int64{}
			for _, l := range e.Lines {
				m[l.Account] += l.Amount
			}
			return m
		}
		for _, e := range entries {
			got := byAccount(e)
			switch e.SourceKind {
			case bookkeeping.SourceInvoice:
				want := map[string]int64{"1500": 33750, "2900": -30000, "2700": -3750}
				if fmt.Sprint(got) != fmt.Sprint(want) || e.Date != "2026-12-15" || e.Journal != "SALES" || e.SourceID != inv {
					t.Errorf("invoice entry %+v: %v", e, got)
				}
			case bookkeeping.SourcePayment:
				want := map[string]int64{"1921": 33750, "1500": -33750}
				if fmt.Sprint(got) != fmt.Sprint(want) || e.Date != "2026-12-20" {
					t.Errorf("payment entry %+v: %v", e, got)
				}
			}
		}
		deferred := func(at string) int64 {
			d, err := bookkeeping.DeferredBalance(b.ctx, s, b.org, at)
			if err != nil {
				t.Fatal(err)
			}
			return d["NOK"]
		}
		if d := deferred("2026-12-31"); d != 30000 {
			t.Errorf("deferred at year end %d, want 30000", d)
		}
		// Through 10 January: 10 of 31 days of each line, floored per
		// line: 15000·10/31 = 4838, twice.
		moved, err := bookkeeping.Recognize(b.ctx, s, b.org, "2027-01-10", t0)
		if err != nil || moved != 2*4838 {
			t.Fatalf("recognised %d (%v), want %d", moved, err, 2*4838)
		}
		if again, err := bookkeeping.Recognize(b.ctx, s, b.org, "2027-01-10", t0); err != nil || again != 0 {
			t.Fatalf("rerun recognised %d (%v)", again, err)
		}
		if d := deferred("2027-01-10"); d != 30000-9676 {
			t.Errorf("deferred at 10 January %d", d)
		}
		// Cancelled: credit the whole invoice on 11 January. The unearned
		// part (what recognition has not moved) leaves unearned revenue.
		if _, err := invoicing.CreditInvoice(b.ctx, s, inv, "Cancellation", local(2027, 1, 11).Add(8*time.Hour),
			func(inv store.Invoice, credited map[int]int64) ([]billing.CreditRequest, error) {
				var rs []billing.CreditRequest
				for _, l := range inv.Lines {
					rs = append(rs, billing.CreditRequest{Line: l.LineNumber, Gross: l.Gross.Minor - credited[l.LineNumber]})
				}
				return rs, nil
			}); err != nil {
			t.Fatal(err)
		}
		postAll(t, s, b.ctx)
		if d := deferred("2027-01-31"); d != 0 {
			t.Errorf("deferred after the credit %d, want 0", d)
		}
		if moved, err := bookkeeping.Recognize(b.ctx, s, b.org, "2027-01-31", t0); err != nil || moved != 0 {
			t.Errorf("recognised %d after a full credit (%v)", moved, err)
		}
		checkBooks(t, s, b)
		rev, err := bookkeeping.RevenueByMonth(b.ctx, s, b.org, "2027-01-01", "2027-01-31")
		if err != nil {
			t.Fatal(err)
		}
		// Earned 10 days, then credited what was earned and not yet
		// invoiced back: the revenue of January is what was recognised
		// minus the credit's revenue part (the credit took 30000 − 9676
		// from unearned, the rest from revenue), i.e. zero per product.
		for _, r := range rev {
			if r.Amount != 0 {
				t.Errorf("revenue %+v, want 0 after the full credit", r)
			}
		}
		var sb strings.Builder
		if err := bookkeeping.WriteCSV(b.ctx, s, b.org, "", "", &sb); err != nil {
			t.Fatal(err)
		}
		if lines := strings.Count(sb.String(), "\n"); lines < 10 {
			t.Errorf("csv has %d lines:\n%s", lines, sb.String())
		}

		// Another tenant sees none of it.
		other := seed.Tenant(t, s, "books-other", t0)
		if _, err := bookkeeping.GetChart(other, s, b.org); !errors.Is(err, bookkeeping.ErrNoChart) {
			t.Errorf("other tenant reads the chart: %v", err)
		}
		if es, err := bookkeeping.Entries(other, s, b.org, "", ""); err != nil || len(es) != 0 {
			t.Errorf("other tenant reads %d entries (%v)", len(es), err)
		}
	})
}

// TestRecognitionDayByDay: a yearly invoice recognised at every month end
// leaves exactly the unearned days' share (computed here) in unearned
// revenue, and all of it at the year's end.
func TestRecognitionDayByDay(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		b := newBooks(t, s, "books-year")
		b.issue(t, s, b.yearly, local(2027, 1, 1), local(2027, 1, 1))
		postAll(t, s, b.ctx)
		// Lines: 1500.00 paper, 1500.00 podcast; 365 days. Each run moves
		// floor(open · days / days left) per line, so the balance after a
		// month end is the sum over lines of what the same arithmetic leaves.
		lines := []int64{150000, 150000}
		recognized := []int64{0, 0}
		next := local(2027, 1, 1)
		end := local(2028, 1, 1)
		for m := time.January; m <= time.December; m++ {
			me := local(2027, m+1, 1).AddDate(0, 0, -1)
			upto := me.AddDate(0, 0, 1)
			left, step := int64(end.Sub(next).Hours()/24+0.5), int64(upto.Sub(next).Hours()/24+0.5)
			for i, a := range lines {
				if upto.Equal(end) {
					recognized[i] = a
				} else {
					recognized[i] += (a - recognized[i]) * step / left
				}
			}
			next = upto
			if _, err := bookkeeping.Recognize(b.ctx, s, b.org, me.Format(time.DateOnly), t0); err != nil {
				t.Fatal(err)
			}
			d, err := bookkeeping.DeferredBalance(b.ctx, s, b.org, me.Format(time.DateOnly))
			if err != nil {
				t.Fatal(err)
			}
			want := lines[0] + lines[1] - recognized[0] - recognized[1]
			if d["NOK"] != want {
				t.Errorf("deferred at %s: %d, want %d", me.Format(time.DateOnly), d["NOK"], want)
			}
			// Within a day of the exact share: 300000 · days left / 365.
			exact := 300000 * int64(end.Sub(upto).Hours()/24+0.5) / 365
			if diff := want - exact; diff < -2 || diff > 2+300000/365 {
				t.Errorf("deferred at %s %d is far from the pro-rata %d", me.Format(time.DateOnly), want, exact)
			}
		}
		checkBooks(t, s, b)
	})
}

// TestClosedPeriod: a document dated in a closed month posts on the first
// day of the first open month and says so; reopening lets the next post
// in the month again.
func TestClosedPeriod(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		b := newBooks(t, s, "books-closed")
		for _, m := range []string{"2027-01", "2027-02"} {
			if err := bookkeeping.ClosePeriod(b.ctx, s, b.org, m, false, t0); err != nil {
				t.Fatal(err)
			}
		}
		if err := bookkeeping.ClosePeriod(b.ctx, s, b.org, "2027-13", false, t0); err == nil {
			t.Error("month 13 closed")
		}
		b.issue(t, s, b.pkg, local(2027, 1, 20), local(2027, 2, 1))
		postAll(t, s, b.ctx)
		es := checkBooks(t, s, b)
		if len(es) != 1 || es[0].Date != "2027-03-01" || !strings.Contains(es[0].Note, "2027-01-20") {
			t.Fatalf("entries %+v", es)
		}
		if err := bookkeeping.ClosePeriod(b.ctx, s, b.org, "2027-01", true, t0); err != nil {
			t.Fatal(err)
		}
		b.issue(t, s, b.pkg, local(2027, 1, 21), local(2027, 2, 1))
		postAll(t, s, b.ctx)
		es = checkBooks(t, s, b)
		if len(es) != 2 || es[1].Date != "2027-01-21" || es[1].Note != "" || es[1].Number != 2 {
			t.Fatalf("after reopening %+v", es[1])
		}
	})
}

// TestConcurrentPosting: every document posted by many handlers at once
// (as redeliveries and several processes would) gets exactly one entry,
// and each journal's numbers run 1..n without a gap.
func TestConcurrentPosting(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		b := newBooks(t, s, "books-concurrent")
		starts := make([]time.Time, 40)
		for i := range starts {
			starts[i] = local(2027, 2, 1).Add(time.Duration(i) * time.Minute)
		}
		ids := b.issue(t, s, b.pkg, local(2027, 1, 15), starts...)
		evs, _, err := s.ListEvents(b.ctx, store.EventFilter{EventType: store.EventInvoiceIssued}, store.Page{Limit: 100})
		if err != nil || len(evs) != len(ids) {
			t.Fatalf("%d events for %d invoices (%v)", len(evs), len(ids), err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 3*len(evs))
		for round := 0; round < 3; round++ {
			for _, e := range evs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						err := bookkeeping.Post(b.ctx, s, e)
						if errors.Is(err, store.ErrConflict) {
							continue // a serialization loss: the outbox retries
						}
						if err != nil {
							errs <- err
						}
						return
					}
				}()
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		es := checkBooks(t, s, b)
		if len(es) != len(ids) {
			t.Fatalf("%d entries for %d invoices", len(es), len(ids))
		}
	})
}

// TestGeneratedMonth is the property: over a generated billing month
// (monthly and yearly invoices, charges and allowances billed on them,
// reminder-fee-like charges at 0 %, partial and whole credits, partial,
// full and over-payments) every document posts one balanced entry, the
// books reconcile with the documents, and recognition through the month's
// end keeps them reconciled.
func TestGeneratedMonth(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		for seedN := uint64(1); seedN <= 3; seedN++ {
			b := newBooks(t, s, fmt.Sprintf("books-gen-%d", seedN))
			rng := rand.New(rand.NewPCG(seedN, 34))
			day := local(2027, 3, 1)
			var invoices []string
			for d := 0; d < 28; d++ {
				at := day.AddDate(0, 0, d).Add(9 * time.Hour)
				if len(invoices) > 0 && rng.IntN(3) == 0 {
					inv, _ := s.Invoice(b.ctx, invoices[0])
					kind, rate := billing.ItemCharge, catalog.PercentOf(25)
					switch rng.IntN(3) {
					case 0:
						kind = billing.ItemAllowance
					case 1:
						rate = catalog.PercentOf(0) // a reminder fee, outside VAT
					}
					if _, err := invoicing.AddAccountItem(b.ctx, s, inv.SubscriberAccountID, kind, "Item", int64(1000+rng.IntN(5000)), rate, at); err != nil {
						t.Fatal(err)
					}
				}
				pkg := b.pkg
				if rng.IntN(4) == 0 {
					pkg = b.yearly
				}
				invoices = append(invoices, b.issue(t, s, pkg, at, at.AddDate(0, 0, rng.IntN(20)).Truncate(24*time.Hour))...)
			}
			for _, id := range invoices {
				inv, err := s.Invoice(b.ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				at := local(2027, 3, 28).Add(time.Duration(rng.IntN(48)) * time.Hour)
				switch rng.IntN(4) {
				case 0:
					if inv.Gross.Minor > 0 {
						_, err = invoicing.CreditInvoice(b.ctx, s, id, "Goodwill", at, func(inv store.Invoice, credited map[int]int64) ([]billing.CreditRequest, error) {
							l := inv.Lines[rng.IntN(len(inv.Lines))]
							if l.Gross.Minor <= 0 {
								return nil, nil
							}
							return []billing.CreditRequest{{Line: l.LineNumber, Gross: 1 + rng.Int64N(l.Gross.Minor)}}, nil
						})
					}
				case 1, 2:
					amount := inv.Gross.Minor + int64(rng.IntN(3)-1)*500
					if amount > 0 {
						_, _, err = invoicing.RecordPayment(b.ctx, s, invoicing.NewPayment{PaymentDemandID: inv.PaymentDemandID, Status: store.PaymentSucceeded,
							Amount: amount, Currency: "NOK", PaidAt: at, PaidAtGiven: true, Provider: "Invoice", ProviderReference: id, Now: at})
					}
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			postAll(t, s, b.ctx)
			entries := checkBooks(t, s, b)
			var docs int
			for _, k := range []string{store.EventInvoiceIssued, store.EventCreditNoteIssued, store.EventPaymentCompleted} {
				evs, _, err := s.ListEvents(b.ctx, store.EventFilter{EventType: k}, store.Page{Limit: 1000})
				if err != nil {
					t.Fatal(err)
				}
				docs += len(evs)
			}
			if len(entries) != docs {
				t.Errorf("seed %d: %d entries for %d documents", seedN, len(entries), docs)
			}
			if _, err := bookkeeping.Recognize(b.ctx, s, b.org, "2027-03-31", t0); err != nil {
				t.Fatal(err)
			}
			checkBooks(t, s, b)
			journals := map[string]bool{}
			for _, e := range entries {
				journals[e.Journal] = true
			}
			names := make([]string, 0, len(journals))
			for j := range journals {
				names = append(names, j)
			}
			sort.Strings(names)
			t.Logf("seed %d: %d documents, journals %v", seedN, docs, names)
		}
	})
}

// TestChartValidation: every rule of a chart is checked, each problem
// named by its field.
func TestChartValidation(t *testing.T) {
	for _, country := range []string{"NO", "SE"} {
		c, ok := bookkeeping.Example(country)
		if !ok {
			t.Fatalf("no example for %s", country)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("example %s: %v", country, err)
		}
	}
	base, _ := bookkeeping.Example("NO")
	cases := []struct {
		field string
		edit  func(c *bookkeeping.Chart)
	}{
		{"accounts[0].number", func(c *bookkeeping.Chart) { c.Accounts[0].Number = "15A" }},
		{"accounts[1].number", func(c *bookkeeping.Chart) { c.Accounts[1].Number = c.Accounts[0].Number }},
		{"accounts[0].type", func(c *bookkeeping.Chart) { c.Accounts[0].Type = "Cash" }},
		{"accounts[0].name", func(c *bookkeeping.Chart) { c.Accounts[0].Name = " " }},
		{"receivableAccount", func(c *bookkeeping.Chart) { c.ReceivableAccount = "9999" }},
		{"deferredAccount", func(c *bookkeeping.Chart) { c.DeferredAccount = "3000" }},
		{"vatCodes[1].rate", func(c *bookkeeping.Chart) { c.VATCodes[1].Rate = "25.0" }},
		{"vatCodes[0].taxCode", func(c *bookkeeping.Chart) { c.VATCodes[0].TaxCode = "x" }},
		{"rules[0].role", func(c *bookkeeping.Chart) { c.Rules[0].Role = "cost" }},
		{"rules", func(c *bookkeeping.Chart) { c.Rules = c.Rules[1:] }},
		{"rules[3].account", func(c *bookkeeping.Chart) { c.Rules[3].Account = "3000" }},
	}
	for _, tc := range cases {
		c := base
		c.Accounts = append([]bookkeeping.BooksAccount(nil), base.Accounts...)
		c.VATCodes = append([]bookkeeping.BooksVATCode(nil), base.VATCodes...)
		c.Rules = append([]bookkeeping.BooksRule(nil), base.Rules...)
		tc.edit(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.field+":") {
			t.Errorf("%s: %v", tc.field, err)
		}
	}
}
