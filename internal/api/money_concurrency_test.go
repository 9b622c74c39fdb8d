package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
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
