package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/autogiro"
	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/store"
)

// The tests of this file fire requests that move money at once — 16
// identical and 16 overlapping ones — and check that exactly one effect
// happened (or what the serial order allows), the losers got the answers
// docs/BILLING.md ("Concurrency") documents, and the ledger check is clean.
// On PostgreSQL (READ COMMITTED) a read made before the lock of the owning
// row sees stale data, so these are the tests that find a read-before-lock;
// SQLite's one writer serialises everything.

// burst is how many requests each scenario fires at once.
const burst = 16

// fire sends n requests at once — every goroutine waits for one start
// signal — and returns the answers by request index.
func fire(n int, req func(i int) *apitest.Response) []*apitest.Response {
	out := make([]*apitest.Response, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i] = req(i)
		}()
	}
	close(start)
	wg.Wait()
	return out
}

// statuses counts the answers by status code.
func statuses(rs []*apitest.Response) map[int]int {
	out := map[int]int{}
	for _, r := range rs {
		out[r.Status]++
	}
	return out
}

// wantStatuses fails unless the answers are exactly want (status → count).
func wantStatuses(t *testing.T, rs []*apitest.Response, want map[int]int) {
	t.Helper()
	got := statuses(rs)
	ok := len(got) == len(want)
	for s, n := range want {
		ok = ok && got[s] == n
	}
	if !ok {
		for _, r := range rs {
			if want[r.Status] == 0 {
				t.Logf("unexpected answer %d: %s", r.Status, r.Body)
				break
			}
		}
		t.Fatalf("answers %v, want %v", got, want)
	}
}

// moneyScenario runs fn on each engine in a tenant of its own, the
// scenarios of one engine in parallel on one server.
type moneyScenario struct {
	name string
	run  func(t *testing.T, e *apitest.Env, tn apitest.Tenant)
}

func runMoneyScenarios(t *testing.T, scenarios []moneyScenario) {
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		for i, sc := range scenarios {
			t.Run(sc.name, func(t *testing.T) {
				t.Parallel()
				ee := e.For(t)
				tn := ee.NewTenant(fmt.Sprintf("money-%d", i), true)
				sc.run(t, ee, tn)
				ledgerClean(t, ee, tn)
			})
		}
	})
}

// creditedPerLine sums the credit notes of invoice id by invoice line and
// in all, failing if any line is credited beyond its gross.
func (f *billingFixture) creditedPerLine(inv store.Invoice) (map[int]int64, int64) {
	f.t.Helper()
	per, total := map[int]int64{}, int64(0)
	for _, c := range f.creditNotes("invoiceId=" + inv.ID) {
		for _, l := range c.Lines {
			per[l.InvoiceLineNumber] += l.Gross.Minor
		}
		total += c.Gross.Minor
	}
	for _, l := range inv.Lines {
		if per[l.LineNumber] > l.Gross.Minor {
			f.t.Fatalf("line %d of invoice %d (gross %s) credited %d minor units", l.LineNumber, inv.InvoiceNumber, l.Gross, per[l.LineNumber])
		}
	}
	return per, total
}

// allowancesOf lists the amounts (minor units) of the allowances booked
// on account id, from its Allowance ledger entries.
func allowancesOf(t *testing.T, e *apitest.Env, tn apitest.Tenant, account string) []int64 {
	t.Helper()
	entries, _, err := e.Store.AccountEntries(tenantCtx(tn), account, store.Page{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, en := range entries {
		if en.Kind == store.EntryAllowance {
			out = append(out, -en.Amount.Minor)
		}
	}
	return out
}

func credit(tn apitest.Tenant, invoice string, body map[string]any) func(int) *apitest.Response {
	return func(int) *apitest.Response { return tn.Do("POST", "/invoice/"+invoice+"/credit", body) }
}

// TestCreditsUnderConcurrency: 16 concurrent full credits of one invoice
// issue one credit note (the others: 400, nothing is left to credit), on
// an unpaid and on a paid invoice (where the note's surplus is one
// allowance, not sixteen); credits of one line and mixes of line and full
// credits never credit a line beyond its gross.
func TestCreditsUnderConcurrency(t *testing.T) {
	t.Parallel()
	full := map[string]any{}
	runMoneyScenarios(t, []moneyScenario{
		{"identical full credits of an unpaid invoice", func(t *testing.T, e *apitest.Env, tn apitest.Tenant) {
			f := newBillingFixture(t, e, tn)
			f.order(nil)
			inv := f.invoices("")[0]
			wantStatuses(t, fire(burst, credit(tn, inv.ID, full)), map[int]int{http.StatusCreated: 1, http.StatusBadRequest: burst - 1})
			if _, total := f.creditedPerLine(inv); total != inv.Gross.Minor {
				t.Fatalf("credited %d of %s", total, inv.Gross)
			}
			if d := f.demand(inv.PaymentDemandID); d.Status != billing.DemandCredited || d.CreditedAmount.Minor != inv.Gross.Minor {
				t.Fatalf("demand %s credited %s", d.Status, d.CreditedAmount)
			}
			if a := allowancesOf(t, e, tn, inv.SubscriberAccountID); len(a) != 0 {
				t.Fatalf("%d allowances booked", len(a))
			}
		}},
		{"identical full credits of a paid invoice", func(t *testing.T, e *apitest.Env, tn apitest.Tenant) {
			f := newBillingFixture(t, e, tn)
			f.order(nil)
			inv := f.invoices("")[0]
			f.payInvoice(inv, inv.Gross.String())
			wantStatuses(t, fire(burst, credit(tn, inv.ID, full)), map[int]int{http.StatusCreated: 1, http.StatusBadRequest: burst - 1})
			notes := f.creditNotes("invoiceId=" + inv.ID)
			if len(notes) != 1 || notes[0].Surplus.Minor != inv.Gross.Minor {
				t.Fatalf("%d credit notes", len(notes))
			}
			if a := allowancesOf(t, e, tn, inv.SubscriberAccountID); len(a) != 1 || a[0] != inv.Gross.Minor {
				t.Fatalf("allowances %+v, want one of %s", a, inv.Gross)
			}
			if a := f.account(inv.SubscriberAccountID); a.Balance.Minor != -inv.Gross.Minor {
				t.Fatalf("balance %s, want -%s", a.Balance, inv.Gross)
			}
		}},
		{"identical partial credits of one line", func(t *testing.T, e *apitest.Env, tn apitest.Tenant) {
			f := newBillingFixture(t, e, tn)
			f.order(nil)
			inv := f.invoices("")[0] // line 1: 199.00
			body := map[string]any{"lines": []map[string]any{{"lineNumber": 1, "amount": json.Number("100.00")}}}
			wantStatuses(t, fire(burst, credit(tn, inv.ID, body)), map[int]int{http.StatusCreated: 1, http.StatusBadRequest: burst - 1})
			if per, _ := f.creditedPerLine(inv); per[1] != 10000 || per[2] != 0 {
				t.Fatalf("credited per line %v", per)
			}
		}},
		{"overlapping line and full credits", func(t *testing.T, e *apitest.Env, tn apitest.Tenant) {
			f := newBillingFixture(t, e, tn)
			f.order(nil)
			inv := f.invoices("")[0]
			bodies := []map[string]any{full,
				{"lines": []map[string]any{{"lineNumber": 1, "amount": json.Number("120.00")}}},
				{"lines": []map[string]any{{"lineNumber": 2}}},
				{"lines": []map[string]any{{"lineNumber": 1, "amount": json.Number("50.00")}, {"lineNumber": 2, "amount": json.Number("10.00")}}},
			}
			rs := fire(burst, func(i int) *apitest.Response { return credit(tn, inv.ID, bodies[i%len(bodies)])(i) })
			// Whatever the order, a full credit or the partial ones bring
			// the invoice to exactly its gross; every other answer is 400.
			got := statuses(rs)
			if got[http.StatusCreated] < 1 || got[http.StatusCreated]+got[http.StatusBadRequest] != burst {
				t.Fatalf("answers %v", got)
			}
			per, total := f.creditedPerLine(inv)
			if total != inv.Gross.Minor || per[1] != 19900 || per[2] != 4900 {
				t.Fatalf("credited %d (per line %v) of %s", total, per, inv.Gross)
			}
			if n := len(f.creditNotes("invoiceId=" + inv.ID)); n != got[http.StatusCreated] {
				t.Fatalf("%d credit notes for %d created answers", n, got[http.StatusCreated])
			}
			if a := allowancesOf(t, e, tn, inv.SubscriberAccountID); len(a) != 0 {
				t.Fatalf("%d allowances booked", len(a))
			}
		}},
	})
}

// entryKinds lists the kinds of account id's ledger entries, oldest first
// (ids are time-ordered, and a transaction takes its ids after the lock
// it waited for, so this is the order the writers were serialised in).
func entryKinds(t *testing.T, e *apitest.Env, tn apitest.Tenant, account string) []store.AccountEntry {
	t.Helper()
	entries, _, err := e.Store.AccountEntries(tenantCtx(tn), account, store.Page{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

func cancelNow(tn apitest.Tenant, sub string) func(int) *apitest.Response {
	return func(int) *apitest.Response {
		return tn.Do("POST", "/subscription/"+sub+"/cancel", map[string]any{"mode": "Immediately", "reason": "test"})
	}
}

// TestCancellationsUnderConcurrency: 16 concurrent cancellations of a
// running period cancel it once (the others: 400, already cancelled) and
// prorate it once; cancellations racing full credits never give back the
// unused days of a period the merchant has already credited in full.
func TestCancellationsUnderConcurrency(t *testing.T) {
	t.Parallel()
	// started orders a subscription, pays its invoice when paid, and moves
	// the clock ten days into the period, so a cancellation ends it early.
	started := func(t *testing.T, e *apitest.Env, tn apitest.Tenant, paid bool) (*billingFixture, string, store.Invoice) {
		f := newBillingFixture(t, e, tn)
		sub := f.order(nil)
		inv := f.invoices("")[0]
		if paid {
			f.payInvoice(inv, inv.Gross.String())
		}
		f.advance(tenantClock(t, e, tn).AddDate(0, 0, 10))
		return f, sub, inv
	}
	half := func(rs []*apitest.Response, want int) map[int]int { return statuses(rs[want : want+burst/2]) }
	runMoneyScenarios(t, []moneyScenario{
		{"identical cancellations of a paid period", func(t *testing.T, e *apitest.Env, tn apitest.Tenant) {
			f, sub, inv := started(t, e, tn, true)
			wantStatuses(t, fire(burst, cancelNow(tn, sub)), map[int]int{http.StatusOK: 1, http.StatusBadRequest: burst - 1})
			// One allowance per VAT rate of the period lines (two here).
			a := allowancesOf(t, e, tn, inv.SubscriberAccountID)
			var sum int64
			for _, x := range a {
				sum += x
			}
			if len(a) != len(inv.VATTotals) || sum <= 0 || sum >= inv.Gross.Minor {
				t.Fatalf("allowances %v, want one per VAT rate for the unused days", a)
			}
			if n := len(f.creditNotes("invoiceId=" + inv.ID)); n != 0 {
				t.Fatalf("%d credit notes", n)
			}
		}},
		{"identical cancellations of an unpaid period", func(t *testing.T, e *apitest.Env, tn apitest.Tenant) {
			f, sub, inv := started(t, e, tn, false)
			wantStatuses(t, fire(burst, cancelNow(tn, sub)), map[int]int{http.StatusOK: 1, http.StatusBadRequest: burst - 1})
			if cs := f.creditNotes("invoiceId=" + inv.ID); len(cs) != 1 || cs[0].Reason != store.CreditReasonProration {
				t.Fatalf("credit notes %+v, want one proration", cs)
			}
		}},
		{"cancellations and full credits of a paid period", func(t *testing.T, e *apitest.Env, tn apitest.Tenant) {
			f, sub, inv := started(t, e, tn, true)
			rs := fire(burst, func(i int) *apitest.Response {
				if i < burst/2 {
					return cancelNow(tn, sub)(i)
				}
				return credit(tn, inv.ID, map[string]any{})(i)
			})
			if c, n := half(rs, 0), half(rs, burst/2); c[http.StatusOK] != 1 || c[http.StatusBadRequest] != burst/2-1 ||
				n[http.StatusCreated] != 1 || n[http.StatusBadRequest] != burst/2-1 {
				t.Fatalf("cancellations %v, credits %v", c, n)
			}
			// Whichever came first, the paid invoice is given back once: a
			// credit first credits it whole (its surplus an allowance of the
			// gross) and the cancellation then gives no unused days; a
			// cancellation first gives the unused days as an allowance and
			// the credit credits only the rest.
			var given int64
			for _, en := range entryKinds(t, e, tn, inv.SubscriberAccountID) {
				if en.Kind == store.EntryAllowance {
					given -= en.Amount.Minor
				}
			}
			if given != inv.Gross.Minor {
				t.Fatalf("allowances of %d minor units for a paid invoice of %s", given, inv.Gross)
			}
			if _, total := f.creditedPerLine(inv); total <= 0 || total > inv.Gross.Minor {
				t.Fatalf("credited %d of %s", total, inv.Gross)
			}
		}},
		{"cancellations and full credits of an unpaid period", func(t *testing.T, e *apitest.Env, tn apitest.Tenant) {
			f, sub, inv := started(t, e, tn, false)
			rs := fire(burst, func(i int) *apitest.Response {
				if i < burst/2 {
					return cancelNow(tn, sub)(i)
				}
				return credit(tn, inv.ID, map[string]any{})(i)
			})
			if c, n := half(rs, 0), half(rs, burst/2); c[http.StatusOK] != 1 || c[http.StatusBadRequest] != burst/2-1 ||
				n[http.StatusCreated] != 1 || n[http.StatusBadRequest] != burst/2-1 {
				t.Fatalf("cancellations %v, credits %v", c, n)
			}
			if _, total := f.creditedPerLine(inv); total != inv.Gross.Minor {
				t.Fatalf("credited %d of %s", total, inv.Gross)
			}
			if a := allowancesOf(t, e, tn, inv.SubscriberAccountID); len(a) != 0 {
				t.Fatalf("allowances %v", a)
			}
		}},
	})
}

func payBody(inv store.Invoice, ref string, amount string, by string) map[string]any {
	b := map[string]any{"status": "Succeeded", "amount": json.Number(amount), "currency": inv.Currency, "provider": "Bank",
		"providerReference": ref}
	switch by {
	case "invoiceId":
		b["invoiceId"] = inv.ID
	case "kid":
		b["kid"] = inv.KID
	case "externalIdentifier":
		b["matchingType"], b["externalInvoiceIdentifier"] = "UseExternalIdentifier", inv.KID
	case "subscriber":
		b["matchingType"], b["externalInvoiceIdentifier"] = "UseSubscriberFromExternalIdentifier", inv.KID
	}
	return b
}

// paymentsOf lists the payments of invoice id.
func (f *billingFixture) paymentsOf(inv store.Invoice) []store.Payment {
	f.t.Helper()
	var ps []store.Payment
	f.tn.Do("GET", "/payment?invoiceId="+inv.ID, nil).JSON(f.t, &ps)
	return ps
}

// TestPaymentsUnderConcurrency: a payment reported 16 times at once, by
// invoice, KID or external identifier, is recorded once (one 201, the
// repeats 200 with its id); one reference with 16 different amounts is
// one payment and 15 × 409; 16 different payments of the whole amount pay
// the invoice once and leave 15 overpayments as allowances; a payment
// matched only by its subscriber is matched again under the demand's lock,
// so only one of 16 such payments settles the one outstanding demand.
func TestPaymentsUnderConcurrency(t *testing.T) {
	t.Parallel()
	unpaid := func(t *testing.T, e *apitest.Env, tn apitest.Tenant) (*billingFixture, store.Invoice) {
		f := newBillingFixture(t, e, tn)
		f.order(nil)
		return f, f.invoices("")[0]
	}
	paidOnce := func(t *testing.T, e *apitest.Env, tn apitest.Tenant, f *billingFixture, inv store.Invoice) []store.Payment {
		t.Helper()
		if d := f.demand(inv.PaymentDemandID); d.Status != billing.DemandPaid || d.PaidAmount.Minor != inv.Gross.Minor {
			t.Fatalf("demand %s paid %s", d.Status, d.PaidAmount)
		}
		if n := len(eventsOf(t, e, tn, store.EventInvoicePaid)); n != 1 {
			t.Fatalf("%d InvoicePaid events", n)
		}
		return f.paymentsOf(inv)
	}
	var scenarios []moneyScenario
	for _, by := range []string{"invoiceId", "kid", "externalIdentifier", "subscriber"} {
		scenarios = append(scenarios, moneyScenario{"identical payments by " + by, func(t *testing.T, e *apitest.Env, tn apitest.Tenant) {
			f, inv := unpaid(t, e, tn)
			body := payBody(inv, "same", inv.Gross.String(), by)
			rs := fire(burst, func(int) *apitest.Response { return tn.Do("POST", "/payment", body) })
			wantStatuses(t, rs, map[int]int{http.StatusCreated: 1, http.StatusOK: burst - 1})
			ps := paidOnce(t, e, tn, f, inv)
			if len(ps) != 1 {
				t.Fatalf("%d payments", len(ps))
			}
			for _, r := range rs {
				if r.Status == http.StatusOK {
					var id string
					r.JSON(t, &id)
					if id != ps[0].ID {
						t.Fatalf("a repeat answered %s, want %s", id, ps[0].ID)
					}
				}
			}
		}})
	}
	scenarios = append(scenarios,
		moneyScenario{"one reference with different amounts", func(t *testing.T, e *apitest.Env, tn apitest.Tenant) {
			f, inv := unpaid(t, e, tn)
			rs := fire(burst, func(i int) *apitest.Response {
				return tn.Do("POST", "/payment", payBody(inv, "same", fmt.Sprintf("%d.00", 100+i), "invoiceId"))
			})
			wantStatuses(t, rs, map[int]int{http.StatusCreated: 1, http.StatusConflict: burst - 1})
			if ps := f.paymentsOf(inv); len(ps) != 1 {
				t.Fatalf("%d payments", len(ps))
			}
		}},
		moneyScenario{"different payments of the whole amount", func(t *testing.T, e *apitest.Env, tn apitest.Tenant) {
			f, inv := unpaid(t, e, tn)
			rs := fire(burst, func(i int) *apitest.Response {
				return tn.Do("POST", "/payment", payBody(inv, fmt.Sprintf("p-%d", i), inv.Gross.String(), "kid"))
			})
			wantStatuses(t, rs, map[int]int{http.StatusCreated: burst})
			var applied int64
			for _, p := range paidOnce(t, e, tn, f, inv) {
				applied += p.Applied.Minor
			}
			if applied != inv.Gross.Minor {
				t.Fatalf("payments applied %d of %s", applied, inv.Gross)
			}
			if a := allowancesOf(t, e, tn, inv.SubscriberAccountID); len(a) != burst-1 {
				t.Fatalf("%d overpayment allowances, want %d", len(a), burst-1)
			}
		}},
		moneyScenario{"different payments matched by subscriber", func(t *testing.T, e *apitest.Env, tn apitest.Tenant) {
			f, inv := unpaid(t, e, tn)
			rs := fire(burst, func(i int) *apitest.Response {
				return tn.Do("POST", "/payment", payBody(inv, fmt.Sprintf("s-%d", i), inv.Gross.String(), "subscriber"))
			})
			wantStatuses(t, rs, map[int]int{http.StatusCreated: 1, http.StatusBadRequest: burst - 1})
			if ps := paidOnce(t, e, tn, f, inv); len(ps) != 1 || ps[0].Surplus.Minor != 0 {
				t.Fatalf("payments %+v", ps)
			}
		}},
	)
	runMoneyScenarios(t, scenarios)
}

// TestAccountItemsUnderConcurrency: an allowance posted 16 times at once
// with one Idempotency-Key is booked once (the others replay its answer or
// are told it is in progress, 409); 16 different charges and allowances
// booked while the renewal invoice that bills them is issued are each
// billed or applied exactly once.
func TestAccountItemsUnderConcurrency(t *testing.T) {
	t.Parallel()
	item := func(tn apitest.Tenant, account, kind, amount string, key string) *apitest.Response {
		return tn.Do("POST", "/subscriberaccount/"+account+"/"+kind, map[string]any{"amount": json.Number(amount),
			"description": "test " + kind, "vatRate": json.Number("0")}, "Idempotency-Key", key)
	}
	runMoneyScenarios(t, []moneyScenario{
		{"identical allowances with one idempotency key", func(t *testing.T, e *apitest.Env, tn apitest.Tenant) {
			f := newBillingFixture(t, e, tn)
			f.order(nil)
			inv := f.invoices("")[0]
			rs := fire(burst, func(int) *apitest.Response { return item(tn, inv.SubscriberAccountID, "allowance", "10.00", "k") })
			first := 0
			for _, r := range rs {
				switch {
				case r.Status == http.StatusCreated && r.Header.Get("Idempotent-Replayed") == "":
					first++
				case r.Status == http.StatusCreated, r.Status == http.StatusConflict:
				default:
					t.Fatalf("answer %d %s", r.Status, r.Body)
				}
			}
			if a := allowancesOf(t, e, tn, inv.SubscriberAccountID); first != 1 || len(a) != 1 {
				t.Fatalf("%d first answers, %d allowances", first, len(a))
			}
		}},
		{"charges and allowances booked while an invoice bills them", func(t *testing.T, e *apitest.Env, tn apitest.Tenant) {
			f := newBillingFixture(t, e, tn)
			f.order(nil)
			inv := f.invoices("")[0]
			f.payInvoice(inv, inv.Gross.String())
			renewal := inv.PeriodEnd.AddDate(0, 0, -14)
			rs := fire(burst, func(i int) *apitest.Response {
				switch {
				case i == 0:
					return tn.Do("POST", "/testclock/advance", map[string]any{"to": renewal.UTC().Format(time.RFC3339)})
				case i%2 == 0:
					return item(tn, inv.SubscriberAccountID, "charge", "3.00", fmt.Sprintf("c-%d", i))
				default:
					return item(tn, inv.SubscriberAccountID, "allowance", "2.00", fmt.Sprintf("a-%d", i))
				}
			})
			wantStatuses(t, rs, map[int]int{http.StatusOK: 1, http.StatusCreated: burst - 1})
			// Whatever the renewal invoice took, the ledger check (run after
			// every scenario) proves each item billed or applied once; here
			// the account's balance must be what was booked.
			// The renewal bills the package (the first invoice's 248.00) plus
			// whatever items it found, so the balance is that plus all that was
			// booked, whichever items the invoice took.
			if n := len(f.invoices("")); n != 2 {
				t.Fatalf("%d invoices, want the first and its renewal", n)
			}
			a := f.account(inv.SubscriberAccountID)
			if want := inv.Gross.Minor + 7*300 - 8*200; a.Balance.Minor != want {
				t.Fatalf("balance %s, want %d minor units", a.Balance, want)
			}
		}},
	})
}

// autogiroDebitSent makes tenant tn bill a subscription by Autogiro up to
// the debit of its first invoice sent to Bankgirot (the steps of
// TestAutogiroBilling), and returns the invoice, the export file and
// today's date as reports write it.
func autogiroDebitSent(t *testing.T, e *apitest.Env, tn apitest.Tenant) (store.Invoice, []byte, string) {
	t.Helper()
	inv, file, today, _ := autogiroDebitSentOn(t, e, tn)
	return inv, file, today
}

// autogiroSetup is what autogiroDebitSentOn made besides the invoice.
type autogiroSetup struct{ org, mandate string }

// autogiroDebitSentOn is autogiroDebitSent that also returns the
// organization and the mandate.
func autogiroDebitSentOn(t *testing.T, e *apitest.Env, tn apitest.Tenant) (store.Invoice, []byte, string, autogiroSetup) {
	t.Helper()
	c := newAPICatalog(t, e, tn)
	org := create(t, tn, "/organization", map[string]any{"name": "Nordavis AB", "country": "SE", "currency": "SEK", "timeZone": "Europe/Stockholm"})
	pkg := create(t, tn, "/package", fmt.Sprintf(`{"Name": "Digital", "Currency": "SEK", "Price": 149.00,
		"products": [{"productId": %q}], "BillingPlans": [%q]}`, c.digital, c.monthly))
	account := create(t, tn, "/autogiro/account", map[string]any{"organizationId": org, "bankgiroCustomerNumber": "543210", "bankgiroNumber": "5432-1096"})
	sub := create(t, tn, "/subscriber", map[string]any{"name": "Åsa Öberg"})
	mandate := create(t, tn, "/autogiro/mandate", map[string]any{"accountId": account, "subscriberId": sub,
		"clearingNumber": "3300", "bankAccountNumber": "121212-1212", "payerId": "19121212-1212"})
	var mv struct{ PayerNumber string }
	tn.Do("GET", "/autogiro/mandate/"+mandate, nil).JSON(t, &mv)
	if r := tn.Do("POST", "/autogiro/export/mandate/"+org, nil); r.Status != http.StatusOK {
		t.Fatalf("export mandate: %d %s", r.Status, r.Body)
	}
	today := tenantClock(t, e, tn).In(autogiro.Stockholm).Format("20060102")
	if r := tn.Do("POST", "/autogiro/import", agAdvice(today, mv.PayerNumber, "04", "32")); r.Status != http.StatusOK {
		t.Fatalf("import advice: %d %s", r.Status, r.Body)
	}
	agreement := create(t, tn, "/paymentagreement", map[string]any{"subscriberId": sub, "providerType": "autogiro", "providerAgreementReference": mandate})
	order := create(t, tn, "/order", map[string]any{"organizationId": org, "templatePackageId": pkg, "subscriberId": sub, "paymentAgreementId": agreement})
	completeOrder(t, tn, order)
	var invs []store.Invoice
	tn.Do("GET", "/invoice?subscriberId="+sub, nil).JSON(t, &invs)
	if len(invs) != 1 {
		t.Fatalf("%d invoices", len(invs))
	}
	eventually(t, "the debit of the issued invoice", func() bool {
		var txs []struct{ ID string }
		tn.Do("GET", "/autogiro/transaction?MandateId="+mandate, nil).JSON(t, &txs)
		return len(txs) > 0
	})
	var fv struct{ ID string }
	r := tn.Do("POST", "/autogiro/export/mandate/"+org, nil)
	r.JSON(t, &fv)
	if r.Status != http.StatusOK {
		t.Fatalf("export debits: %d %s", r.Status, r.Body)
	}
	return invs[0], tn.Do("GET", "/autogiro/export/file/"+fv.ID, nil).Body, today, autogiroSetup{org: org, mandate: mandate}
}

// TestAutogiroImportsUnderConcurrency: a payment specification imported 16
// times at once, or 16 reports that each speak of the same debit, pay the
// invoice once; the same for a debit the payer's bank paid back (TK77):
// one charge, however many imports race; and 16 reports that each pay back
// one of 16 debits alike (payer, amount, reference, date) pay back each
// debit once.
func TestAutogiroImportsUnderConcurrency(t *testing.T) {
	t.Parallel()
	// serial gives the i-th report its own header serial, so that it is
	// another file (imports are idempotent by the file's SHA-256).
	serial := func(report string, i int) string {
		return strings.Replace(report, "120000000001", fmt.Sprintf("%012d", 130000000000+i), 1)
	}
	imports := func(tn apitest.Tenant, report func(i int) string) []*apitest.Response {
		return fire(burst, func(i int) *apitest.Response { return tn.Do("POST", "/autogiro/import", report(i)) })
	}
	paidOnce := func(t *testing.T, e *apitest.Env, tn apitest.Tenant, inv store.Invoice) {
		t.Helper()
		var ps []store.Payment
		tn.Do("GET", "/payment?invoiceId="+inv.ID, nil).JSON(t, &ps)
		if len(ps) != 1 || ps[0].Applied.Minor != inv.Gross.Minor {
			t.Fatalf("payments %+v", ps)
		}
		if n := len(eventsOf(t, e, tn, store.EventInvoicePaid)); n != 1 {
			t.Fatalf("%d InvoicePaid events", n)
		}
	}
	chargedOnce := func(t *testing.T, e *apitest.Env, tn apitest.Tenant, inv store.Invoice) {
		t.Helper()
		var charges int
		for _, en := range entryKinds(t, e, tn, inv.SubscriberAccountID) {
			if en.Kind == store.EntryCharge {
				charges++
			}
		}
		var acc store.SubscriberAccount
		tn.Do("GET", "/subscriberaccount/"+inv.SubscriberAccountID, nil).JSON(t, &acc)
		if charges != 1 || acc.OutstandingCharges.Minor != inv.Gross.Minor || acc.Balance.Minor != inv.Gross.Minor {
			t.Fatalf("%d refund charges, account %+v", charges, acc)
		}
	}
	runMoneyScenarios(t, []moneyScenario{
		{"identical payment specifications", func(t *testing.T, e *apitest.Env, tn apitest.Tenant) {
			inv, file, today := autogiroDebitSent(t, e, tn)
			spec := agPaymentSpec(today, records(file, "82"), []byte{'0'})
			wantStatuses(t, imports(tn, func(int) string { return spec }), map[int]int{http.StatusOK: burst})
			paidOnce(t, e, tn, inv)
		}},
		{"payment specifications of one debit", func(t *testing.T, e *apitest.Env, tn apitest.Tenant) {
			inv, file, today := autogiroDebitSent(t, e, tn)
			spec := agPaymentSpec(today, records(file, "82"), []byte{'0'})
			wantStatuses(t, imports(tn, func(i int) string { return serial(spec, i) }), map[int]int{http.StatusOK: burst})
			paidOnce(t, e, tn, inv)
		}},
		{"identical refund reports", func(t *testing.T, e *apitest.Env, tn apitest.Tenant) {
			inv, file, today := autogiroDebitSent(t, e, tn)
			if r := tn.Do("POST", "/autogiro/import", agPaymentSpec(today, records(file, "82"), []byte{'0'})); r.Status != http.StatusOK {
				t.Fatalf("import payment: %d %s", r.Status, r.Body)
			}
			refund := agRefundSpec(today, "20261201", records(file, "82")[0], "02")
			wantStatuses(t, imports(tn, func(int) string { return refund }), map[int]int{http.StatusOK: burst})
			chargedOnce(t, e, tn, inv)
		}},
		{"refund reports of one debit", func(t *testing.T, e *apitest.Env, tn apitest.Tenant) {
			inv, file, today := autogiroDebitSent(t, e, tn)
			if r := tn.Do("POST", "/autogiro/import", agPaymentSpec(today, records(file, "82"), []byte{'0'})); r.Status != http.StatusOK {
				t.Fatalf("import payment: %d %s", r.Status, r.Body)
			}
			refund := agRefundSpec(today, "20261201", records(file, "82")[0], "02")
			wantStatuses(t, imports(tn, func(i int) string { return serial(refund, i) }), map[int]int{http.StatusOK: burst})
			chargedOnce(t, e, tn, inv)
		}},
		{"refund reports of different debits", func(t *testing.T, e *apitest.Env, tn apitest.Tenant) {
			// 16 completed debits of one payer alike in amount, reference
			// and date (a fee debited by hand), and 16 reports, each that
			// the payer's bank paid one of them back (each on its own day):
			// every report must find a debit no other one took, as they
			// would one after the other.
			_, _, today, ag := autogiroDebitSentOn(t, e, tn)
			day := tenantClock(t, e, tn).In(autogiro.Stockholm).AddDate(0, 0, 14).Format(time.DateOnly)
			for range burst {
				create(t, tn, "/autogiro/transaction", map[string]any{"mandateId": ag.mandate, "amount": "75.00",
					"paymentDate": day, "reference": "MEMBERSHIP"})
			}
			var fv struct{ ID string }
			if r := tn.Do("POST", "/autogiro/export/mandate/"+ag.org, nil); r.Status != http.StatusOK {
				t.Fatalf("export the fees: %d %s", r.Status, r.Body)
			} else {
				r.JSON(t, &fv)
			}
			fees := records(tn.Do("GET", "/autogiro/export/file/"+fv.ID, nil).Body, "82")
			if len(fees) != burst {
				t.Fatalf("%d debits exported, want %d", len(fees), burst)
			}
			if r := tn.Do("POST", "/autogiro/import", agPaymentSpec(today, fees, []byte(strings.Repeat("0", burst)))); r.Status != http.StatusOK {
				t.Fatalf("import the payments: %d %s", r.Status, r.Body)
			}
			refundDay := func(i int) string { return fmt.Sprintf("202612%02d", i+1) }
			rs := imports(tn, func(i int) string { return serial(agRefundSpec(today, refundDay(i), fees[i], "02"), i) })
			wantStatuses(t, rs, map[int]int{http.StatusOK: burst})
			refunds := 0
			for _, r := range rs {
				var res autogiro.ImportResult
				r.JSON(t, &res)
				refunds += res.RefundsByPayerBank
			}
			var txs []struct {
				Kind, Reference, Status string
				PayerRefundDate         *string
			}
			tn.Do("GET", "/autogiro/transaction?MandateId="+ag.mandate+"&limit=100", nil).JSON(t, &txs)
			paidBack := map[string]int{}
			for _, tx := range txs {
				if tx.Reference == "MEMBERSHIP" && tx.PayerRefundDate != nil {
					paidBack[*tx.PayerRefundDate]++
				}
			}
			for i := range burst {
				d := refundDay(i)
				if paidBack[d[:4]+"-"+d[4:6]+"-"+d[6:]] != 1 {
					t.Fatalf("%d reports counted %d refunds; debits paid back by day: %v, want each of the %d days once", burst, refunds, paidBack, burst)
				}
			}
			if refunds != burst {
				t.Fatalf("the reports counted %d refunds, want %d", refunds, burst)
			}
		}},
	})
}
