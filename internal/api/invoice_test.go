package api_test

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
)

var osloZone, _ = time.LoadLocation("Europe/Oslo")

func osloDay(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, osloZone) }

// billingFixture: an organization (prices incl. VAT), a monthly plan with
// minimumDueDays 14 and payment terms 10, a package of 199.00 (0 % VAT)
// with a 49.00 add-on (25 % VAT) and a subscriber.
type billingFixture struct {
	t          *testing.T
	tn         apitest.Tenant
	org, pkg   string
	subscriber string
}

func newBillingFixture(t *testing.T, e *apitest.Env, tn apitest.Tenant) *billingFixture {
	t.Helper()
	c := newAPICatalog(t, e, tn)
	f := &billingFixture{t: t, tn: tn}
	sd := tn.Seed(t)
	f.org = sd.Organization(seed.Nordavis)
	plan := sd.Plan(seed.Plan{Name: "Monthly 14", Unit: "Month", MinimumDueDays: seed.Days(14), PaymentTermsDays: seed.Days(10)})
	f.pkg = sd.Package(seed.Package{Name: "Digital", Price: "199.00", Products: []string{c.digital},
		Additional: []seed.Additional{{ProductID: c.magazine, Price: "49.00", SelectedByDefault: true}}, Plans: []string{plan}})
	f.subscriber = sd.Subscriber(seed.Kari)
	return f
}

func (f *billingFixture) advance(to time.Time) {
	f.t.Helper()
	if r := f.tn.Do("POST", "/testclock/advance", map[string]any{"to": to.UTC().Format(time.RFC3339)}); r.Status != http.StatusOK {
		f.t.Fatalf("advance: %d %s", r.Status, r.Body)
	}
}

// order creates and completes an order and returns its first subscription.
func (f *billingFixture) order(start *time.Time) string {
	f.t.Helper()
	body := map[string]any{"organizationId": f.org, "templatePackageId": f.pkg, "subscriberId": f.subscriber}
	if start != nil {
		body["requestedStart"] = start.Format(time.RFC3339)
	}
	id := create(f.t, f.tn, "/order", body)
	r := f.tn.Do("POST", "/order/"+id+"/complete", nil)
	if r.Status != http.StatusOK {
		f.t.Fatalf("complete: %d %s", r.Status, r.Body)
	}
	var o struct {
		SubscriptionID string `json:"subscriptionId"`
	}
	r.JSON(f.t, &o)
	return o.SubscriptionID
}

// invoices lists invoices with every part expanded, so the tests see them
// whole (TestListItemsExpand checks what a plain list leaves out).
func (f *billingFixture) invoices(query string) []store.Invoice {
	f.t.Helper()
	if query != "" {
		query += "&"
	}
	query += "expand=seller,buyer,lines,vatTotals"
	r := f.tn.Do("GET", "/invoice?"+query, nil)
	if r.Status != http.StatusOK {
		f.t.Fatalf("GET /invoice?%s: %d %s", query, r.Status, r.Body)
	}
	var out []store.Invoice
	r.JSON(f.t, &out)
	return out
}

func (f *billingFixture) account(id string) store.SubscriberAccount {
	f.t.Helper()
	r := f.tn.Do("GET", "/subscriberaccount/"+id, nil)
	if r.Status != http.StatusOK {
		f.t.Fatalf("GET account: %d %s", r.Status, r.Body)
	}
	var a store.SubscriberAccount
	r.JSON(f.t, &a)
	return a
}

func TestInvoicesOfOrderAndRenewals(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.Tenant)
		f.advance(osloDay(2027, 1, 10).Add(12 * time.Hour))
		start := osloDay(2027, 2, 1)
		first := f.order(&start)

		invs := f.invoices("subscriptionId=" + first)
		if len(invs) != 1 {
			t.Fatalf("first period has %d invoices", len(invs))
		}
		inv := invs[0]
		if inv.InvoiceNumber != 1 || inv.Status != billing.InvoiceIssued || !inv.DueAt.Equal(start) || inv.DueDate != "2027-02-01" ||
			!inv.IssuedAt.Equal(osloDay(2027, 1, 10).Add(12*time.Hour)) || inv.IssueDate != "2027-01-10" {
			t.Fatalf("first invoice: number %d status %s issued %s due %s (%s)", inv.InvoiceNumber, inv.Status, inv.IssuedAt, inv.DueAt, inv.DueDate)
		}
		// 199.00 at 0 % + 49.00 incl. 25 % (39.20 + 9.80).
		if inv.Gross.String() != "248.00" || inv.VAT.String() != "9.80" || inv.Net.String() != "238.20" || len(inv.Lines) != 2 ||
			inv.Currency != "NOK" || !inv.PricesIncludeVAT || len(inv.VATTotals) != 2 || inv.VATTotals[0].VATRate.String() != "25" {
			t.Fatalf("first invoice amounts: %+v", inv)
		}
		if inv.Seller.Name != "Nordavis AS" || inv.Seller.OrganizationNumber != "923609016" || inv.Buyer.SubscriberID != f.subscriber ||
			inv.Buyer.Name != "Kari Nordmann" || inv.SubscriberID != f.subscriber || inv.PaymentAgreementID == nil {
			t.Fatalf("parties: %+v %+v", inv.Seller, inv.Buyer)
		}
		if !billing.ValidKID(inv.KID, billing.KIDMod10) || inv.KID != billing.KID(1, billing.KIDMod10) {
			t.Fatalf("KID %s", inv.KID)
		}
		l := inv.Lines[0]
		if l.Description != "Nordavis Digital" || !l.PeriodStart.Equal(start) || !l.PeriodEnd.Equal(osloDay(2027, 3, 1)) || l.Quantity != 1 {
			t.Fatalf("line: %+v", l)
		}
		var d store.PaymentDemand
		r := f.tn.Do("GET", "/paymentdemand/"+inv.PaymentDemandID, nil)
		r.JSON(t, &d)
		if r.Status != 200 || d.InvoiceID != inv.ID || d.Amount.String() != "248.00" || d.Status != billing.DemandOpen || !d.DueAt.Equal(start) {
			t.Fatalf("demand: %d %+v", r.Status, d)
		}
		a := f.account(inv.SubscriberAccountID)
		if a.Balance.String() != "248.00" || a.Currency != "NOK" || a.SubscriberID != f.subscriber || len(a.Entries) != 1 ||
			a.Entries[0].Kind != store.EntryInvoice || *a.Entries[0].InvoiceID != inv.ID {
			t.Fatalf("account: %+v", a)
		}

		// Renewals: issued 14 days before each period, due at its start.
		f.advance(osloDay(2027, 4, 1))
		all := f.invoices("subscriberId=" + f.subscriber)
		if len(all) != 3 {
			t.Fatalf("%d invoices after two renewals", len(all))
		}
		for i, want := range []time.Time{osloDay(2027, 3, 1), osloDay(2027, 4, 1)} {
			inv := all[i+1]
			if inv.InvoiceNumber != int64(i+2) || !inv.DueAt.Equal(want) || !inv.IssuedAt.Equal(want.AddDate(0, 0, -14)) ||
				!inv.PeriodStart.Equal(want) {
				t.Fatalf("renewal invoice %d: number %d issued %s due %s period %s", i, inv.InvoiceNumber, inv.IssuedAt, inv.DueAt, inv.PeriodStart)
			}
		}
		// Statuses at 1 April: the February and March invoices are overdue,
		// April's falls due now.
		if n := len(f.invoices("status=Overdue")); n != 2 {
			t.Fatalf("%d overdue invoices, want 2", n)
		}
		if got := f.invoices("status=Issued"); len(got) != 1 || got[0].InvoiceNumber != 3 {
			t.Fatalf("issued invoices: %d", len(got))
		}
		if got := f.invoices("issuedFrom=2027-02-01T00:00:00Z&issuedTo=2027-03-01T00:00:00Z"); len(got) != 1 || got[0].InvoiceNumber != 2 {
			t.Fatalf("issued in February: %d", len(got))
		}
		var ds []store.PaymentDemand
		f.tn.Do("GET", "/paymentdemand?subscriberId="+f.subscriber+"&status=Overdue", nil).JSON(t, &ds)
		if len(ds) != 2 {
			t.Fatalf("%d overdue demands", len(ds))
		}

		// Advancing to the same time again issues nothing twice.
		f.advance(osloDay(2027, 4, 1))
		if n := len(f.invoices("")); n != 3 {
			t.Fatalf("%d invoices after advancing again", n)
		}
		var evs []store.Event
		evs, _, err := e.Store.ListEvents(tenantCtx(e.Tenant), store.EventFilter{EventType: store.EventInvoiceIssued}, store.Page{Limit: 100})
		if err != nil || len(evs) != 3 {
			t.Fatalf("%d InvoiceIssued events (%v)", len(evs), err)
		}
		if a := f.account(inv.SubscriberAccountID); a.Balance.String() != "744.00" || len(a.Entries) != 3 {
			t.Fatalf("account after renewals: %s, %d entries", a.Balance, len(a.Entries))
		}
	})
}

func TestFirstInvoiceOfStartedPeriod(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.Tenant)
		now := osloDay(2027, 1, 10).Add(15 * time.Hour)
		f.advance(now)
		sub := f.order(nil) // starts at the beginning of today: already begun
		inv := f.invoices("subscriptionId=" + sub)[0]
		if !inv.DueAt.Equal(now.AddDate(0, 0, 10)) || inv.DueDate != "2027-01-20" {
			t.Fatalf("due %s (%s), want issue + 10 days", inv.DueAt, inv.DueDate)
		}
	})
}

func TestConcurrentOrdersNumberInvoicesWithoutGaps(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.Tenant)
		const n = 100
		ids := make([]string, n)
		for i := range ids {
			ids[i] = create(t, f.tn, "/order", map[string]any{"organizationId": f.org, "templatePackageId": f.pkg, "subscriberId": f.subscriber})
		}
		// Ten in flight at a time race for the numbers as surely as a
		// hundred do, and none waits behind ninety-nine others for SQLite's
		// one writer past the client's timeout on a loaded machine.
		var wg sync.WaitGroup
		errs := make(chan string, n)
		inFlight := make(chan struct{}, 10)
		for _, id := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				inFlight <- struct{}{}
				defer func() { <-inFlight }()
				if r := f.tn.Do("POST", "/order/"+id+"/complete", nil); r.Status != http.StatusOK {
					errs <- fmt.Sprintf("%d %s", r.Status, r.Body)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for msg := range errs {
			t.Fatalf("complete: %s", msg)
		}
		invs := f.invoices("limit=1000")
		nums := make([]int, 0, len(invs))
		demands := map[string]bool{}
		for _, inv := range invs {
			nums = append(nums, int(inv.InvoiceNumber))
			demands[inv.PaymentDemandID] = true
		}
		sort.Ints(nums)
		for i, v := range nums {
			if v != i+1 {
				t.Fatalf("invoice numbers are not 1..%d: %v", n, nums)
			}
		}
		if len(nums) != n || len(demands) != n {
			t.Fatalf("%d invoices, %d demands", len(nums), len(demands))
		}
		// One account per subscriber and currency, however many raced.
		var accts []store.SubscriberAccount
		f.tn.Do("GET", "/subscriberaccount?subscriberId="+f.subscriber, nil).JSON(t, &accts)
		if len(accts) != 1 || accts[0].Balance.String() != "24800.00" {
			t.Fatalf("accounts: %+v", accts)
		}
	})
}

func TestChargesAndAllowancesOnNextInvoice(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.Tenant)
		f.advance(osloDay(2027, 1, 10))
		start := osloDay(2027, 2, 1)
		f.order(&start)
		account := f.invoices("")[0].SubscriberAccountID

		charge := create(t, f.tn, "/subscriberaccount/"+account+"/charge", map[string]any{"amount": 50, "description": "Replacement copy", "vatRate": 25})
		allowance := create(t, f.tn, "/subscriberaccount/"+account+"/allowance", map[string]any{"amount": 300, "description": "Goodwill", "vatRate": 0})
		if a := f.account(account); a.Balance.String() != "-2.00" || a.OutstandingCharges.String() != "50.00" || a.AvailableAllowance.String() != "300.00" {
			t.Fatalf("account before renewal: %+v", a)
		}
		f.advance(osloDay(2027, 2, 20)) // renewal issued on 15 February
		invs := f.invoices("")
		if len(invs) != 2 {
			t.Fatalf("%d invoices", len(invs))
		}
		inv := invs[1]
		// 248.00 + 50.00 charge = 298.00; the allowance takes it to 0.00 and
		// 2.00 of it carries forward.
		if len(inv.Lines) != 4 || inv.Gross.String() != "0.00" {
			t.Fatalf("renewal invoice: %s %+v", inv.Gross, inv.Lines)
		}
		ch, al := inv.Lines[2], inv.Lines[3]
		if ch.Kind != billing.LineCharge || *ch.AccountItemID != charge || ch.Gross.String() != "50.00" || ch.VAT.String() != "10.00" ||
			al.Kind != billing.LineAllowance || *al.AccountItemID != allowance || al.Gross.String() != "-298.00" {
			t.Fatalf("charge/allowance lines: %+v %+v", ch, al)
		}
		a := f.account(account)
		// Balance: invoices 248 + 0, nothing charged still to bill, 2.00
		// allowance left: 246.00.
		if a.Balance.String() != "246.00" || a.OutstandingCharges.String() != "0.00" || a.AvailableAllowance.String() != "2.00" {
			t.Fatalf("account after renewal: %+v", a)
		}
		kinds := []string{}
		for _, en := range a.Entries {
			kinds = append(kinds, en.Kind)
		}
		slices.Sort(kinds)
		if want := []string{"Allowance", "AllowanceApplied", "Charge", "ChargeInvoiced", "Invoice", "Invoice"}; !slices.Equal(kinds, want) {
			t.Fatalf("entries %v, want %v", kinds, want)
		}
		var es []store.AccountEntry
		f.tn.Do("GET", "/subscriberaccount/"+account+"/entries?limit=2", nil).JSON(t, &es)
		if len(es) != 2 || es[0].Kind != store.EntryInvoice {
			t.Fatalf("entries page: %+v", es)
		}
		// The rest of the allowance goes to the next invoice.
		f.advance(osloDay(2027, 3, 20))
		if inv := f.invoices("")[2]; inv.Gross.String() != "246.00" || len(inv.Lines) != 3 {
			t.Fatalf("third invoice: %s %+v", inv.Gross, inv.Lines)
		}
	})
}

func TestBillingCrossTenantAndBadInput(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.Tenant)
		f.order(nil)
		inv := f.invoices("")[0]
		other := e.NewTenant("other", true)
		for _, p := range []string{"/invoice/" + inv.ID, "/paymentdemand/" + inv.PaymentDemandID, "/subscriberaccount/" + inv.SubscriberAccountID,
			"/subscriberaccount/" + inv.SubscriberAccountID + "/entries"} {
			if r := other.Do("GET", p, nil); r.Status != http.StatusNotFound {
				t.Errorf("other tenant GET %s: %d", p, r.Status)
			}
		}
		// Lists filtered on this tenant's records find nothing there.
		for _, p := range []string{"/invoice?subscriberId=" + f.subscriber, "/invoice?subscriptionId=" + *inv.SubscriptionID,
			"/paymentdemand?subscriberId=" + f.subscriber, "/subscriberaccount?subscriberId=" + f.subscriber} {
			wantEmpty(t, other.Do("GET", p, nil), "other tenant GET "+p)
		}
		for _, kind := range []string{"charge", "allowance"} {
			if r := other.Do("POST", "/subscriberaccount/"+inv.SubscriberAccountID+"/"+kind, map[string]any{"amount": 10, "description": "x"}); r.Status != http.StatusNotFound {
				t.Errorf("other tenant POST %s: %d", kind, r.Status)
			}
		}
		if r := f.tn.Do("GET", "/invoice/"+store.NewID(), nil); r.Status != http.StatusNotFound {
			t.Errorf("missing invoice: %d", r.Status)
		}

		path := "/subscriberaccount/" + inv.SubscriberAccountID + "/charge"
		for _, tc := range []struct {
			body string
			want []string
		}{
			{`{}`, []string{"amount", "description", "vatRate"}},
			{`{"amount": -5, "description": "  ", "vatRate": 101}`, []string{"amount", "description", "vatRate"}},
			{`{"amount": 10.005, "description": "x", "vatRate": 25}`, []string{"amount"}},
			{`{"amount": 0, "description": "x", "vatRate": 25}`, []string{"amount"}},
			{`{"amount": true, "description": "x", "vatRate": 25}`, []string{"amount"}},
		} {
			if got := f.tn.Do("POST", path, tc.body).Fields(t); !slices.Equal(got, tc.want) {
				t.Errorf("POST %s: fields %v, want %v", tc.body, got, tc.want)
			}
		}
		if got := f.tn.Do("GET", "/invoice?status=Bogus&subscriberId=x&issuedFrom=yesterday", nil).Fields(t); len(got) != 3 {
			t.Errorf("invoice list fields: %v", got)
		}
		if got := f.tn.Do("GET", "/paymentdemand?status=Issued", nil).Fields(t); !slices.Equal(got, []string{"status"}) {
			t.Errorf("demand list fields: %v", got)
		}
		for _, p := range []string{"/invoice/x", "/paymentdemand/x", "/subscriberaccount/x"} {
			if got := f.tn.Do("GET", p, nil).Fields(t); !slices.Equal(got, []string{"id"}) {
				t.Errorf("GET %s: %v", p, got)
			}
		}
	})
}
