package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/ledger"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
)

// euroFixture: an organization selling in EUR with prices including VAT,
// a product at 25 % VAT, a 30-day plan with a package of 90.00 and a
// 28-day plan with a package of 84.00 (the worked examples of the billing
// issue), and a subscriber.
type euroFixture struct {
	*billingFixture
	pkg30, pkg28 string
}

func newEuroFixture(t *testing.T, tn apitest.Tenant) *euroFixture {
	t.Helper()
	f := &euroFixture{billingFixture: &billingFixture{t: t, tn: tn}}
	sd := tn.Seed(t)
	f.org = sd.Organization(seed.Organization{Name: "Euro Media Oy", OrganizationNumber: "923609016", Country: "NO",
		Currency: "EUR", TimeZone: "Europe/Oslo", PricesIncludeVAT: seed.Bool(true)})
	product := sd.Product(seed.Product{Name: "News", Category: "digital", VATRate: "25"})
	pkg := func(days int, price string) string {
		plan := sd.Plan(seed.Plan{Name: fmt.Sprintf("%d days", days), Unit: "Day", Count: days, MinimumDueDays: seed.Days(0),
			PaymentTermsDays: seed.Days(20)})
		return sd.Package(seed.Package{Name: fmt.Sprintf("News %d", days), Currency: "EUR", Price: price, Products: []string{product},
			Plans: []string{plan}})
	}
	f.pkg30, f.pkg28 = pkg(30, "90.00"), pkg(28, "84.00")
	f.subscriber = sd.Subscriber(seed.Subscriber{Name: "Aino Virtanen", Email: "aino@example.fi", Country: "FI"})
	return f
}

// orderOf completes an order of package pkg starting now and returns the
// subscription and its invoice.
func (f *billingFixture) orderOf(pkg string) (string, store.Invoice) {
	f.t.Helper()
	saved := f.pkg
	f.pkg = pkg
	defer func() { f.pkg = saved }()
	sub := f.order(nil)
	invs := f.invoices("subscriptionId=" + sub)
	if len(invs) != 1 {
		f.t.Fatalf("subscription %s has %d invoices", sub, len(invs))
	}
	return sub, invs[0]
}

var paymentRef atomic.Int64 // tests run in parallel

// payInvoice reports a successful payment of amount for invoice id.
func (f *billingFixture) payInvoice(invoice store.Invoice, amount string) {
	f.t.Helper()
	ref := paymentRef.Add(1)
	r := f.tn.Do("POST", "/payment", map[string]any{"invoiceId": invoice.ID, "status": "Succeeded", "amount": json.Number(amount),
		"currency": invoice.Currency, "provider": "Manual", "providerReference": fmt.Sprintf("test-%d-%s", ref, invoice.ID)})
	if r.Status != http.StatusCreated {
		f.t.Fatalf("pay: %d %s", r.Status, r.Body)
	}
}

func (f *billingFixture) cancel(sub, mode string) {
	f.t.Helper()
	if r := f.tn.Do("POST", "/subscription/"+sub+"/cancel", map[string]any{"mode": mode, "reason": "test"}); r.Status != http.StatusOK {
		f.t.Fatalf("cancel: %d %s", r.Status, r.Body)
	}
}

func (f *billingFixture) creditNotes(query string) []store.CreditNote {
	f.t.Helper()
	r := f.tn.Do("GET", "/creditnote?"+query, nil)
	if r.Status != http.StatusOK {
		f.t.Fatalf("GET /creditnote?%s: %d %s", query, r.Status, r.Body)
	}
	var out []store.CreditNote
	r.JSON(f.t, &out)
	return out
}

// noProration makes a dunning process with a NoProration policy the
// tenant's default, so invoices issued from now on are not prorated.
func (f *billingFixture) noProration() {
	f.t.Helper()
	policy := create(f.t, f.tn, "/prorationpolicy", map[string]any{"name": "None", "paidProration": "noproration",
		"notPaidProration": "NoProration"})
	create(f.t, f.tn, "/dunningprocess", map[string]any{"name": "Default", "reminderDays": []int{30}, "prorationPolicyId": policy,
		"isDefault": true})
}

func TestProrationWorkedExamples(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		start := osloDay(2027, 3, 1) // a 30-day period across the DST change of 28 March
		t.Run("paid 90.00 for 30 days, cancelled after 14 days: allowance 48.00", func(t *testing.T) {
			f := newEuroFixture(t, e.NewTenant("proration-1", true))
			f.advance(start)
			sub, inv := f.orderOf(f.pkg30)
			if inv.Gross.String() != "90.00" || !inv.PeriodEnd.Equal(osloDay(2027, 3, 31)) {
				t.Fatalf("invoice %s for period to %s", inv.Gross, inv.PeriodEnd)
			}
			f.payInvoice(inv, "90.00")
			f.advance(osloDay(2027, 3, 15))
			f.cancel(sub, "Immediately")
			a := f.account(inv.SubscriberAccountID)
			if a.AvailableAllowance.String() != "48.00" || a.Balance.String() != "-48.00" {
				t.Fatalf("allowance %s balance %s, want 48.00 and -48.00", a.AvailableAllowance, a.Balance)
			}
			if cs := f.creditNotes("invoiceId=" + inv.ID); len(cs) != 0 {
				t.Fatalf("a paid period was credited: %+v", cs)
			}
			ledgerClean(t, e, f.tn)
		})
		t.Run("invoiced 84.00 for 28 days, 9 days used: invoice adjusted to 27.00", func(t *testing.T) {
			f := newEuroFixture(t, e.NewTenant("proration-2", true))
			f.advance(start)
			sub, inv := f.orderOf(f.pkg28)
			f.advance(osloDay(2027, 3, 10))
			f.cancel(sub, "Immediately")
			cs := f.creditNotes("invoiceId=" + inv.ID)
			if len(cs) != 1 || cs[0].Gross.String() != "57.00" || cs[0].Applied.String() != "57.00" || cs[0].Surplus.String() != "0.00" ||
				cs[0].CreditNoteNumber != 1 || cs[0].Reason != store.CreditReasonProration || cs[0].VAT.String() != "11.40" {
				t.Fatalf("credit notes: %+v", cs)
			}
			d := f.demand(inv.PaymentDemandID)
			if d.Amount.String() != "84.00" || d.CreditedAmount.String() != "57.00" || d.Status != billing.DemandOpen {
				t.Fatalf("demand: %+v", d)
			}
			if a := f.account(inv.SubscriberAccountID); a.Balance.String() != "27.00" {
				t.Fatalf("balance %s, want 27.00 left to pay", a.Balance)
			}
			// Paying the 27.00 settles it.
			f.payInvoice(inv, "27.00")
			if d := f.demand(inv.PaymentDemandID); d.Status != billing.DemandPaid {
				t.Fatalf("after paying the adjusted amount: %s", d.Status)
			}
			ledgerClean(t, e, f.tn)
		})
		t.Run("NoProration: a paid period gives no allowance", func(t *testing.T) {
			f := newEuroFixture(t, e.NewTenant("proration-3", true))
			f.advance(start)
			f.noProration()
			sub, inv := f.orderOf(f.pkg30)
			f.payInvoice(inv, "90.00")
			f.advance(osloDay(2027, 3, 15))
			f.cancel(sub, "Immediately")
			if a := f.account(inv.SubscriberAccountID); a.AvailableAllowance.String() != "0.00" || a.Balance.String() != "0.00" {
				t.Fatalf("allowance %s balance %s", a.AvailableAllowance, a.Balance)
			}
		})
		t.Run("NoProration: an unpaid invoice keeps its amount", func(t *testing.T) {
			f := newEuroFixture(t, e.NewTenant("proration-4", true))
			f.advance(start)
			f.noProration()
			sub, inv := f.orderOf(f.pkg28)
			f.advance(osloDay(2027, 3, 10))
			f.cancel(sub, "Immediately")
			if cs := f.creditNotes("invoiceId=" + inv.ID); len(cs) != 0 {
				t.Fatalf("credited: %+v", cs)
			}
			if a := f.account(inv.SubscriberAccountID); a.Balance.String() != "84.00" {
				t.Fatalf("balance %s", a.Balance)
			}
		})
	})
}

func TestPlanChangeProration(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		t.Run("Immediately: the allowance of the paid period reduces the new plan's first invoice", func(t *testing.T) {
			f := newEuroFixture(t, e.NewTenant("proration-5", true))
			f.advance(osloDay(2027, 3, 1))
			sub, inv := f.orderOf(f.pkg30)
			f.payInvoice(inv, "90.00")
			f.advance(osloDay(2027, 3, 15))
			r := f.tn.Do("POST", "/subscription/"+sub+"/scheduledchange", map[string]any{"processingType": "Immediately",
				"templatePackageId": f.pkg28})
			if r.Status != http.StatusCreated {
				t.Fatalf("change: %d %s", r.Status, r.Body)
			}
			invs := f.invoices("subscriberId=" + f.subscriber)
			if len(invs) != 2 {
				t.Fatalf("%d invoices", len(invs))
			}
			next := invs[1]
			last := next.Lines[len(next.Lines)-1]
			if last.Kind != billing.LineAllowance || last.Gross.String() != "-48.00" || next.Gross.String() != "36.00" {
				t.Fatalf("new plan's invoice: gross %s, lines %+v", next.Gross, next.Lines)
			}
		})
		t.Run("OnScheduledTime prorates at execution, not registration", func(t *testing.T) {
			f := newEuroFixture(t, e.NewTenant("proration-6", true))
			f.advance(osloDay(2027, 3, 1))
			sub, inv := f.orderOf(f.pkg28)
			r := f.tn.Do("POST", "/subscription/"+sub+"/scheduledchange", map[string]any{"processingType": "OnScheduledTime",
				"scheduledTime": osloDay(2027, 3, 10).Format(time.RFC3339), "templatePackageId": f.pkg30})
			if r.Status != http.StatusCreated {
				t.Fatalf("change: %d %s", r.Status, r.Body)
			}
			if cs := f.creditNotes("invoiceId=" + inv.ID); len(cs) != 0 {
				t.Fatalf("credited at registration: %+v", cs)
			}
			f.advance(osloDay(2027, 3, 12))
			cs := f.creditNotes("invoiceId=" + inv.ID)
			if len(cs) != 1 || cs[0].Gross.String() != "57.00" || !cs[0].IssuedAt.Equal(osloDay(2027, 3, 10)) {
				t.Fatalf("credit notes: %+v", cs)
			}
		})
		t.Run("OnRenewal never prorates", func(t *testing.T) {
			f := newEuroFixture(t, e.NewTenant("proration-7", true))
			f.advance(osloDay(2027, 3, 1))
			sub, inv := f.orderOf(f.pkg28)
			r := f.tn.Do("POST", "/subscription/"+sub+"/scheduledchange", map[string]any{"processingType": "OnRenewal", "templatePackageId": f.pkg30})
			if r.Status != http.StatusCreated {
				t.Fatalf("change: %d %s", r.Status, r.Body)
			}
			f.advance(osloDay(2027, 4, 2))
			if cs := f.creditNotes("subscriberId=" + f.subscriber); len(cs) != 0 {
				t.Fatalf("credited: %+v", cs)
			}
			if a := f.account(inv.SubscriberAccountID); a.AvailableAllowance.String() != "0.00" {
				t.Fatalf("allowance %s", a.AvailableAllowance)
			}
		})
	})
}

func TestCancellationCreditsFuturePeriods(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.Tenant)
		f.advance(osloDay(2027, 1, 10))
		start := osloDay(2027, 2, 1)
		sub := f.order(&start)
		// The renewal of 1 March is created and invoiced 14 days ahead.
		f.advance(osloDay(2027, 2, 16))
		invs := f.invoices("subscriberId=" + f.subscriber)
		if len(invs) != 2 {
			t.Fatalf("%d invoices", len(invs))
		}
		f.payInvoice(invs[1], "248.00") // paid ahead
		f.cancel(sub, "EndOfPeriod")
		// The running period is not prorated; the one that never starts is
		// credited whole, and as it was paid, the credit is an allowance.
		if cs := f.creditNotes("invoiceId=" + invs[0].ID); len(cs) != 0 {
			t.Fatalf("running period credited: %+v", cs)
		}
		cs := f.creditNotes("invoiceId=" + invs[1].ID)
		if len(cs) != 1 || cs[0].Gross.String() != "248.00" || cs[0].Applied.String() != "0.00" || cs[0].Surplus.String() != "248.00" ||
			cs[0].Reason != store.CreditReasonCancellation || cs[0].AllowanceItemID == nil {
			t.Fatalf("future period credit: %+v", cs)
		}
		if a := f.account(invs[1].SubscriberAccountID); a.AvailableAllowance.String() != "248.00" || a.Balance.String() != "0.00" {
			t.Fatalf("account: allowance %s balance %s", a.AvailableAllowance, a.Balance)
		}
		ledgerClean(t, e, f.tn)
	})
}

func TestCreditInvoice(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.Tenant)
		f.advance(osloDay(2027, 1, 10))
		start := osloDay(2027, 2, 1)
		f.order(&start)
		inv := f.invoices("subscriberId=" + f.subscriber)[0] // 199.00 (0 %) + 49.00 (25 % incl.)

		r := f.tn.Do("POST", "/invoice/"+inv.ID+"/credit", map[string]any{"reason": "Missed delivery",
			"lines": []map[string]any{{"lineNumber": 2, "amount": json.Number("12.50")}}})
		first := r.ID(t)
		if loc := r.Header.Get("Location"); loc != apitest.BaseURL+"/creditnote/"+first {
			t.Fatalf("Location %q", loc)
		}
		var c store.CreditNote
		r = f.tn.Do("GET", "/creditnote/"+first, nil)
		r.JSON(t, &c)
		if c.CreditNoteNumber != 1 || c.InvoiceNumber != inv.InvoiceNumber || c.Reason != "Missed delivery" || len(c.Lines) != 1 ||
			c.Lines[0].InvoiceLineNumber != 2 || c.Lines[0].Gross.String() != "12.50" || c.Lines[0].VAT.String() != "2.50" ||
			c.Net.String() != "10.00" || c.Applied.String() != "12.50" {
			t.Fatalf("credit note: %+v", c)
		}
		for _, tc := range []struct {
			name  string
			body  any
			field string
		}{
			{"more than is left", map[string]any{"lines": []map[string]any{{"lineNumber": 2, "amount": 36.51}}}, "lines[0].amount"},
			{"no such line", map[string]any{"lines": []map[string]any{{"lineNumber": 9}}}, "lines[0].lineNumber"},
			{"too many decimals", map[string]any{"lines": []map[string]any{{"lineNumber": 1, "amount": "1.001"}}}, "lines[0].amount"},
			{"line number missing", map[string]any{"lines": []map[string]any{{"amount": 1}}}, "lines[0].lineNumber"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := f.tn.Do("POST", "/invoice/"+inv.ID+"/credit", tc.body)
				if fields := r.Fields(t); len(fields) != 1 || fields[0] != tc.field {
					t.Fatalf("fields %v, want %s", fields, tc.field)
				}
			})
		}
		// The rest of the invoice: 248.00 − 12.50.
		second := f.tn.Do("POST", "/invoice/"+inv.ID+"/credit", map[string]any{}).ID(t)
		r = f.tn.Do("GET", "/creditnote/"+second, nil)
		r.JSON(t, &c)
		if c.CreditNoteNumber != 2 || c.Gross.String() != "235.50" || len(c.Lines) != 2 {
			t.Fatalf("second credit note: %+v", c)
		}
		got, err := f.tn.Do("GET", "/invoice/"+inv.ID, nil), error(nil)
		var after store.Invoice
		got.JSON(t, &after)
		if err != nil || after.Status != billing.InvoiceCredited || after.InvoiceNumber != 1 {
			t.Fatalf("invoice after full credit: %s", after.Status)
		}
		if r := f.tn.Do("POST", "/invoice/"+inv.ID+"/credit", map[string]any{}); r.Status != http.StatusBadRequest {
			t.Fatalf("crediting a credited invoice: %d", r.Status)
		}
		if a := f.account(inv.SubscriberAccountID); a.Balance.String() != "0.00" {
			t.Fatalf("balance %s", a.Balance)
		}
		ledgerClean(t, e, f.tn)
		events := f.tn.Do("GET", "/events?eventType=CreditNoteIssued", nil)
		var evs []store.Event
		events.JSON(t, &evs)
		if len(evs) != 2 || evs[0].Subject != "/creditnote/"+first {
			t.Fatalf("events: %+v", evs)
		}

		// Another tenant sees none of it.
		other := e.NewTenant("credit-other", false)
		if r := other.Do("GET", "/creditnote/"+first, nil); r.Status != http.StatusNotFound {
			t.Fatalf("other tenant GET a credit note: %d", r.Status)
		}
		wantEmpty(t, other.Do("GET", "/creditnote?invoiceId="+inv.ID, nil), "other tenant's credit notes of the invoice")
		if r := other.Do("POST", "/invoice/"+inv.ID+"/credit", map[string]any{}); r.Status != http.StatusNotFound {
			t.Fatalf("other tenant credit: %d %s", r.Status, r.Body)
		}
	})
}

// TestCreditAfterPaidCancellation: a paid period cancelled early gives its
// unused days back as an allowance (90.00 for 30 days, 14 used: 48.00);
// what a merchant may credit of the invoice afterwards is the rest, 42.00,
// not the whole 90.00 again. Asking for more of the line is a 400 naming
// what is left; a full credit credits the 42.00; then nothing is left. The
// subscriber is given back 90.00 in all, and the ledger check is clean.
func TestCreditAfterPaidCancellation(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newEuroFixture(t, e.NewTenant("credit-after-cancel", true))
		f.advance(osloDay(2027, 3, 1))
		sub, inv := f.orderOf(f.pkg30)
		f.payInvoice(inv, "90.00")
		f.advance(osloDay(2027, 3, 15))
		f.cancel(sub, "Immediately")
		if a := f.account(inv.SubscriberAccountID); a.AvailableAllowance.String() != "48.00" {
			t.Fatalf("allowance %s after the cancellation, want 48.00", a.AvailableAllowance)
		}
		line := inv.Lines[0].LineNumber

		r := f.tn.Do("POST", "/invoice/"+inv.ID+"/credit", map[string]any{"lines": []map[string]any{{"lineNumber": line, "amount": "90.00"}}})
		if fields := r.Fields(t); len(fields) != 1 || fields[0] != "lines[0].amount" || !strings.Contains(string(r.Body), "42.00 left") {
			t.Fatalf("crediting the whole line after the cancellation: %d %s, want a 400 on lines[0].amount naming 42.00 left", r.Status, r.Body)
		}
		note := f.tn.Do("POST", "/invoice/"+inv.ID+"/credit", map[string]any{"reason": "Goodwill"}).ID(t)
		var c store.CreditNote
		f.tn.Do("GET", "/creditnote/"+note, nil).JSON(t, &c)
		if c.Gross.String() != "42.00" || c.Applied.String() != "0.00" || c.Surplus.String() != "42.00" {
			t.Fatalf("full credit after the cancellation: %+v, want 42.00, all of it surplus", c)
		}
		r = f.tn.Do("POST", "/invoice/"+inv.ID+"/credit", map[string]any{})
		if fields := r.Fields(t); len(fields) != 1 || fields[0] != "lines" || !strings.Contains(string(r.Body), "nothing is left") {
			t.Fatalf("a second full credit: %d %s", r.Status, r.Body)
		}
		if a := f.account(inv.SubscriberAccountID); a.AvailableAllowance.String() != "90.00" || a.Balance.String() != "-90.00" {
			t.Fatalf("allowance %s balance %s, want the 90.00 paid given back once", a.AvailableAllowance, a.Balance)
		}
		ledgerClean(t, e, f.tn)
	})
}

// TestLedgerCheckFindsUnusedDaysGivenTwice: an invoice given back more than
// it can be across credit notes and unused-days allowances is an
// over-credit, although every balance adds up. The paid 90.00 invoice is
// given back exactly — 48.00 unused days, 42.00 credited — and the check
// is clean; a second unused-days allowance of 48.00 for it, inserted by
// hand with its entry, is named.
func TestLedgerCheckFindsUnusedDaysGivenTwice(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newEuroFixture(t, e.NewTenant("ledger-unused-days", true))
		f.advance(osloDay(2027, 3, 1))
		sub, inv := f.orderOf(f.pkg30)
		f.payInvoice(inv, "90.00")
		f.advance(osloDay(2027, 3, 15))
		f.cancel(sub, "Immediately")
		f.tn.Do("POST", "/invoice/"+inv.ID+"/credit", map[string]any{}).ID(t)
		ledgerClean(t, e, f.tn)

		db := e.Store.DB()
		item := store.NewID()
		if _, err := db.Exec(`INSERT INTO account_items (id, tenant_id, account_id, kind, description, amount, remaining, vat_rate,
			booked_at, created_at, source_kind, source_id) SELECT $1, tenant_id, account_id, kind, description, amount, amount, vat_rate,
			booked_at, created_at, source_kind, source_id FROM account_items WHERE source_kind = 'Proration' AND source_id = $2`,
			item, inv.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO account_entries (id, tenant_id, account_id, kind, amount, item_id, booked_at, created_at)
			SELECT $1, tenant_id, account_id, 'Allowance', -amount, id, booked_at, created_at FROM account_items WHERE id = $2`,
			store.NewID(), item); err != nil {
			t.Fatal(err)
		}
		rep, err := ledger.Check(tenantCtx(f.tn), e.Store, ledger.Options{TenantID: f.tn.ID})
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("invoice %s [over-credit]: invoice %d is given back 138.00 EUR but can be given back 90.00 EUR at most "+
			"(42.00 EUR by 1 credit notes and 96.00 EUR by 2 unused-days allowances of a cancellation)", inv.ID, inv.InvoiceNumber)
		if rep.Found != 1 || !strings.Contains(rep.Problems[0].String(), want) {
			t.Fatalf("ledger check found %d problems %v, want one: %s", rep.Found, rep.Problems, want)
		}
	})
}
