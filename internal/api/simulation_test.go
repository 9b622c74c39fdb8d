package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
)

// TestBillingSimulation runs 24 months of randomized billing through the
// API on a test clock — orders (a package chain among them), payments
// (full, partial, over, failed), cancellations, plan changes of all three
// kinds and their revocation, template and chain edits, price changes
// (some revoked), credits, charges, allowances, reminders and payment
// stops — and checks that the ledger is clean at the end, that no series
// ends with a plan change still registered or has two, and that the same seed gives the same documents: the
// invoices and credit notes of two runs are byte-identical once ids are
// replaced by their order of first appearance (ids are random) and
// createdAt (wall clock) is left out.
func TestBillingSimulation(t *testing.T) {
	t.Parallel()
	const seed = 20261122
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		// The two runs, on two tenants of one server, run side by side.
		var first, second []byte
		t.Run("runs", func(t *testing.T) {
			for name, out := range map[string]*[]byte{"a": &first, "b": &second} {
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					e := e.For(t)
					*out = simulate(t, e, e.NewTenant("simulation-"+name, true), seed)
				})
			}
		})
		if t.Failed() {
			return
		}
		if !bytes.Equal(first, second) {
			a, b := bytes.Split(first, []byte("\n")), bytes.Split(second, []byte("\n"))
			for i := range min(len(a), len(b)) {
				if !bytes.Equal(a[i], b[i]) {
					t.Fatalf("runs differ at document %d:\n%s\n%s", i, a[i], b[i])
				}
			}
			t.Fatalf("runs differ in length: %d and %d documents", len(a), len(b))
		}
	})
}

type simulation struct {
	*billingFixture
	rng         *rand.Rand
	packages    []string
	subscribers []string
	now         time.Time
	stats       map[string]int
	refs        int
	chain       string
	steps       []string
	pending     [][2]string // plan changes registered: subscription, change
}

func simulate(t *testing.T, e *apitest.Env, tn apitest.Tenant, rngSeed uint64) []byte {
	t.Helper()
	s := &simulation{billingFixture: newBillingFixture(t, e, tn), rng: rand.New(rand.NewPCG(rngSeed, rngSeed^0x5eed)), stats: map[string]int{}}
	create(t, tn, "/dunningprocess", map[string]any{"name": "Standard", "reminderDays": []int{10, 20}, "reminderFee": 35,
		"paymentStopDays": 10, "isDefault": true})
	sd := tn.Seed(t)
	product := sd.Product(seed.Product{Name: "Papir", Category: "print", VATRate: "0"})
	extra := sd.Product(seed.Product{Name: "Podkast", Category: "digital", VATRate: "25"})
	plan := func(unit string, count, due int) string {
		return sd.Plan(seed.Plan{Name: fmt.Sprintf("%d %s", count, unit), Unit: unit, Count: count, MinimumDueDays: seed.Days(due),
			PaymentTermsDays: seed.Days(14)})
	}
	s.packages = []string{
		s.pkg, // monthly, 199.00 + 49.00 at 25 %
		sd.Package(seed.Package{Name: "Helg", Price: "129.50", Products: []string{product},
			Additional: []seed.Additional{{ProductID: extra, Price: "19.90", SelectedByDefault: true}}, Plans: []string{plan("Day", 28, 0)}}),
		sd.Package(seed.Package{Name: "Kvartal", Price: "549.00", PermanentDiscount: "12.5", Products: []string{product},
			Plans: []string{plan("Month", 3, 7)}}),
	}
	// An introductory offer as a chain: 1 month at 99, 2 months at 149, then 199.
	intro := func(name, price string) string {
		return sd.Package(seed.Package{Name: name, Price: price, Products: []string{product}, Plans: []string{plan("Month", 1, 5)}})
	}
	steps := []string{intro("Intro 1", "99.00"), intro("Intro 2", "149.00"), intro("Intro 3", "199.00")}
	s.chain = create(t, tn, "/packagechain", map[string]any{"name": "Intro", "packageChain": map[string]any{"steps": []map[string]any{
		{"step": 1, "nextPackageId": steps[0], "periods": 1}, {"step": 2, "nextPackageId": steps[1], "periods": 2}, {"step": 3, "nextPackageId": steps[2]}}}})
	for _, id := range steps {
		s.edit("/package/"+id, func(m map[string]any) { m["packageChainId"] = s.chain })
	}
	s.packages = append(s.packages, steps[0])
	s.steps = steps
	s.now = osloDay(2027, 1, 1).Add(9 * time.Hour)
	s.advance(s.now)
	for range 6 {
		s.newSubscriber()
	}
	end := s.now.AddDate(2, 0, 0)
	for s.now.Before(end) {
		for range 1 + s.rng.IntN(4) {
			s.act()
		}
		s.now = s.now.Add(time.Duration(1+s.rng.IntN(7*24)) * time.Hour)
		s.advance(s.now)
	}
	t.Logf("simulated to %s: %v", s.now.Format(time.DateOnly), s.stats)
	for _, kind := range []string{"order", "pay", "partial", "over", "fail", "cancel", "Immediately", "OnScheduledTime", "OnRenewal", "credit",
		"revoke", "templateEdit", "chainEdit", "priceChange", "priceChangeRevoked"} {
		if s.stats[kind] == 0 {
			t.Errorf("the simulation never did %s", kind)
		}
	}
	var evs []store.Event
	tn.Do("GET", "/events?eventType=ReminderIssued&limit=1", nil).JSON(t, &evs)
	if len(evs) == 0 {
		t.Error("the simulation issued no reminders")
	}
	tn.Do("GET", "/events?eventType=PriceChangeNotified&limit=1", nil).JSON(t, &evs)
	if len(evs) == 0 {
		t.Error("no price change of the simulation reached a subscription")
	}
	ledgerClean(t, e, tn)
	s.listsBySubscriber()
	s.changesSettled()
	return s.documents()
}

// listsBySubscriber checks that listing invoices and payment demands by
// subscriber (which goes through the subscriber's subscription periods,
// migration 00014) finds exactly the documents that name the subscriber,
// page by page.
func (s *simulation) listsBySubscriber() {
	for _, kind := range []string{"invoice", "paymentdemand"} {
		want := map[string][]string{}
		for _, d := range s.documentRefs("/" + kind + "?limit=1000") {
			want[d.SubscriberID] = append(want[d.SubscriberID], d.ID)
		}
		found := 0
		for _, sub := range s.subscribers {
			var got []string
			for _, d := range s.documentRefs("/" + kind + "?limit=7&subscriberId=" + sub) {
				if d.SubscriberID != sub {
					s.t.Fatalf("%s %s of subscriber %s listed for subscriber %s", kind, d.ID, d.SubscriberID, sub)
				}
				got = append(got, d.ID)
			}
			if !slices.Equal(got, want[sub]) { // both in id order
				s.t.Fatalf("%s list of subscriber %s: %d documents, want %d", kind, sub, len(got), len(want[sub]))
			}
			found += len(got)
		}
		if found == 0 {
			s.t.Fatalf("no %s listed by subscriber", kind)
		}
	}
}

type documentRef struct {
	ID           string `json:"id"`
	SubscriberID string `json:"subscriberId"`
}

// documentRefs follows the Link headers of a list from path.
func (s *simulation) documentRefs(path string) []documentRef {
	var out []documentRef
	for path != "" {
		r := s.tn.Do("GET", path, nil)
		if r.Status != http.StatusOK {
			s.t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
		}
		var page []documentRef
		r.JSON(s.t, &page)
		out = append(out, page...)
		path = ""
		if m := nextLink.FindStringSubmatch(r.Header.Get("Link")); m != nil {
			path = strings.TrimPrefix(m[1], apitest.BaseURL)
		}
	}
	return out
}

// act does one random thing.
func (s *simulation) act() {
	t := s.t
	t.Helper()
	switch n := s.rng.IntN(100); {
	case n < 15:
		if s.rng.IntN(3) == 0 {
			s.newSubscriber()
		}
		s.placeOrder(s.pick(s.subscribers))
	case n < 55:
		s.payment()
	case n < 65:
		if sub := s.activeSubscription(); sub != "" {
			mode := []string{"Immediately", "EndOfPeriod"}[s.rng.IntN(2)]
			if r := s.tn.Do("POST", "/subscription/"+sub+"/cancel", map[string]any{"mode": mode, "reason": "simulation"}); r.Status == http.StatusOK {
				s.stats["cancel"]++
			}
		}
	case n < 72:
		s.catalogEdit()
	case n < 80:
		if len(s.pending) > 0 && s.rng.IntN(3) == 0 {
			s.revokeChange()
		} else if sub := s.activeSubscription(); sub != "" {
			kind := []string{"Immediately", "OnScheduledTime", "OnRenewal"}[s.rng.IntN(3)]
			body := map[string]any{"processingType": kind, "templatePackageId": s.pick(s.packages)}
			if kind == "OnScheduledTime" {
				body["scheduledTime"] = s.now.Add(time.Duration(1+s.rng.IntN(20*24)) * time.Hour).Format(time.RFC3339)
			}
			if r := s.tn.Do("POST", "/subscription/"+sub+"/scheduledchange", body); r.Status == http.StatusCreated {
				s.stats[kind]++
				if kind != "Immediately" {
					s.pending = append(s.pending, [2]string{sub, r.ID(t)})
				}
			}
		}
	case n < 90:
		invs := s.invoicesWhere("lines", "Issued", "PartiallyPaid", "Paid", "Overdue")
		if len(invs) == 0 {
			return
		}
		inv := pickOf(s.rng, invs)
		body := map[string]any{"reason": "simulation"}
		if s.rng.IntN(2) == 0 {
			l := inv.Lines[s.rng.IntN(len(inv.Lines))]
			if l.Gross.Minor <= 0 {
				return
			}
			body["lines"] = []map[string]any{{"lineNumber": l.LineNumber, "amount": json.Number(fmt.Sprintf("%d.%02d", l.Gross.Minor/400, l.Gross.Minor/4%100))}}
		}
		if r := s.tn.Do("POST", "/invoice/"+inv.ID+"/credit", body); r.Status == http.StatusCreated {
			s.stats["credit"]++
		}
	default:
		sub := s.pick(s.subscribers)
		var accounts []store.SubscriberAccount
		s.tn.Do("GET", "/subscriberaccount?subscriberId="+sub, nil).JSON(t, &accounts)
		if len(accounts) == 0 {
			return
		}
		kind := []string{"charge", "allowance"}[s.rng.IntN(2)]
		amount := json.Number(fmt.Sprintf("%d.%02d", 1+s.rng.IntN(150), s.rng.IntN(100)))
		if r := s.tn.Do("POST", "/subscriberaccount/"+accounts[0].ID+"/"+kind, map[string]any{"amount": amount,
			"description": "simulation " + kind, "vatRate": []int{0, 25}[s.rng.IntN(2)]}); r.Status != http.StatusCreated {
			t.Fatalf("%s: %d %s", kind, r.Status, r.Body)
		}
		s.stats[kind]++
	}
}

func pickOf[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

// edit reads the resource at path, lets change modify it and writes it back.
func (s *simulation) edit(path string, change func(map[string]any)) {
	s.t.Helper()
	var m map[string]any
	s.tn.Do("GET", path, nil).JSON(s.t, &m)
	change(m)
	if r := s.tn.Do("PUT", path, m); r.Status/100 != 2 {
		s.t.Fatalf("PUT %s: %d %s", path, r.Status, r.Body)
	}
}

// catalogEdit changes the catalog under running subscriptions: a
// template's price, the chain's last step, or a price change of a
// template (sometimes revoked before it starts). Only price changes may
// reach running subscriptions.
func (s *simulation) catalogEdit() {
	switch s.rng.IntN(4) {
	case 0:
		price := json.Number(fmt.Sprintf("%d.00", 100+s.rng.IntN(300)))
		s.edit("/package/"+s.pick(s.packages[1:]), func(m map[string]any) { m["price"] = price })
		s.stats["templateEdit"]++
	case 1:
		last := s.pick(s.steps)
		s.edit("/packagechain/"+s.chain, func(m map[string]any) {
			m["packageChain"] = map[string]any{"steps": []map[string]any{
				{"step": 1, "nextPackageId": s.steps[0], "periods": 1}, {"step": 2, "nextPackageId": s.steps[1], "periods": 1 + s.rng.IntN(3)},
				{"step": 3, "nextPackageId": last}}}
		})
		s.stats["chainEdit"]++
	default:
		from, to := s.pick(s.packages), s.pick(s.packages)
		if from == to {
			return
		}
		effective := osloDay(s.now.Year(), s.now.Month(), s.now.Day()).AddDate(0, 0, 31+s.rng.IntN(40))
		r := s.tn.Do("POST", "/package/"+from+"/pricechange", map[string]any{"targetTemplatePackageId": to,
			"effectiveFrom": effective.Format(time.RFC3339), "noticeDays": 30})
		if r.Status != http.StatusCreated {
			s.t.Fatalf("price change: %d %s", r.Status, r.Body)
		}
		s.stats["priceChange"]++
		if s.rng.IntN(3) == 0 {
			if r := s.tn.Do("DELETE", "/package/"+from+"/pricechange/"+r.ID(s.t), nil); r.Status != http.StatusNoContent {
				s.t.Fatalf("revoke price change: %d %s", r.Status, r.Body)
			}
			s.stats["priceChangeRevoked"]++
		}
	}
}

// revokeChange tries to revoke one of the plan changes the simulation
// registered; it may have run, expired or been superseded meanwhile (400).
func (s *simulation) revokeChange() {
	i := s.rng.IntN(len(s.pending))
	p := s.pending[i]
	s.pending = slices.Delete(s.pending, i, i+1)
	switch r := s.tn.Do("DELETE", "/subscription/"+p[0]+"/scheduledchange/"+p[1], nil); r.Status {
	case http.StatusNoContent:
		s.stats["revoke"]++
	case http.StatusBadRequest:
	default:
		s.t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
}

// changesSettled checks the plan-change invariants at the end: at most one
// registered change waits on a series, and none on a series that was
// cancelled or has ended.
func (s *simulation) changesSettled() {
	var subs []store.Subscription
	s.tn.Do("GET", "/subscription?limit=1000", nil).JSON(s.t, &subs)
	for _, sub := range subs {
		if sub.NextID != nil {
			continue // not the last period of its series
		}
		var changes []store.ScheduledChange
		s.tn.Do("GET", "/subscription/"+sub.ID+"/scheduledchange", nil).JSON(s.t, &changes)
		registered := 0
		for _, c := range changes {
			if c.Status == store.ChangeRegistered {
				registered++
			}
		}
		ended := sub.CancelledAt != nil || sub.DeactivatedAt != nil
		if registered > 1 || (ended && registered > 0) {
			s.t.Fatalf("series ending in %s (cancelled %v, deactivated %v) has %d registered changes", sub.ID, sub.CancelledAt, sub.DeactivatedAt, registered)
		}
	}
}

func (s *simulation) pick(xs []string) string { return pickOf(s.rng, xs) }

func (s *simulation) newSubscriber() {
	n := len(s.subscribers) + 1
	s.subscribers = append(s.subscribers, create(s.t, s.tn, "/subscriber", map[string]any{"name": fmt.Sprintf("Abonnent %d", n),
		"email": fmt.Sprintf("a%d@example.no", n), "country": "NO"}))
}

func (s *simulation) placeOrder(subscriber string) {
	body := map[string]any{"organizationId": s.org, "templatePackageId": s.pick(s.packages), "subscriberId": subscriber}
	if s.rng.IntN(3) == 0 {
		body["requestedStart"] = osloDay(s.now.Year(), s.now.Month(), s.now.Day()).AddDate(0, 0, 1+s.rng.IntN(30)).Format(time.RFC3339)
	}
	id := create(s.t, s.tn, "/order", body)
	if r := s.tn.Do("POST", "/order/"+id+"/complete", nil); r.Status != http.StatusOK {
		s.t.Fatalf("complete: %d %s", r.Status, r.Body)
	}
	s.stats["order"]++
}

// invoicesWhere returns the tenant's invoices in the given statuses (all
// when none is given), by number, with the parts expand names. The server
// filters by status and expands only what the caller reads: the
// simulation picks from these lists before most of its steps, and
// fetching every invoice with every part each time made the test's cost
// grow with the square of its length.
func (s *simulation) invoicesWhere(expand string, statuses ...string) []store.Invoice {
	var out []store.Invoice
	paths := []string{"/invoice?limit=1000"}
	if len(statuses) > 0 {
		paths = paths[:0]
		for _, st := range statuses {
			paths = append(paths, "/invoice?limit=1000&status="+st)
		}
	}
	for _, path := range paths {
		if expand != "" {
			path += "&expand=" + expand
		}
		out = append(out, s.all(path, func(r *apitest.Response) []store.Invoice {
			var page []store.Invoice
			r.JSON(s.t, &page)
			return page
		})...)
	}
	slices.SortFunc(out, func(a, b store.Invoice) int { return int(a.InvoiceNumber - b.InvoiceNumber) })
	return out
}

// all follows the Link headers of a list from path and returns every item.
func (s *simulation) all(path string, decode func(*apitest.Response) []store.Invoice) []store.Invoice {
	var out []store.Invoice
	for path != "" {
		r := s.tn.Do("GET", path, nil)
		if r.Status != http.StatusOK {
			s.t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
		}
		out = append(out, decode(r)...)
		path = ""
		if m := nextLink.FindStringSubmatch(r.Header.Get("Link")); m != nil {
			path = strings.TrimPrefix(m[1], apitest.BaseURL)
		}
	}
	return out
}

var nextLink = regexp.MustCompile(`<([^>]+)>;\s*rel="next"`)

func (s *simulation) payment() {
	open := s.invoicesWhere("", "Issued", "Overdue", "PartiallyPaid")
	if len(open) == 0 {
		return
	}
	inv := pickOf(s.rng, open)
	d := s.demand(inv.PaymentDemandID)
	left := d.Amount.Minor - d.PaidAmount.Minor - d.CreditedAmount.Minor
	if left <= 0 {
		return
	}
	status, amount, kind := "Succeeded", left, "pay"
	switch n := s.rng.IntN(10); {
	case n == 0:
		status, kind = "Failed", "fail"
	case n < 3:
		amount, kind = 1+left/2, "partial"
	case n == 3:
		amount, kind = left+500, "over"
	}
	s.refs++
	r := s.tn.Do("POST", "/payment", map[string]any{"paymentDemandId": d.ID, "status": status, "currency": "NOK",
		"amount": json.Number(fmt.Sprintf("%d.%02d", amount/100, amount%100)), "provider": "Simulation",
		"providerReference": fmt.Sprintf("sim-%d", s.refs)})
	if r.Status != http.StatusCreated {
		s.t.Fatalf("payment: %d %s", r.Status, r.Body)
	}
	s.stats[kind]++
}

// activeSubscription picks an active subscription period, or "".
func (s *simulation) activeSubscription() string {
	var subs []struct {
		ID string `json:"id"`
	}
	s.tn.Do("GET", "/subscription?status=Active&limit=1000", nil).JSON(s.t, &subs)
	active := make([]string, len(subs))
	for i, v := range subs {
		active[i] = v.ID
	}
	if len(active) == 0 {
		return ""
	}
	slices.Sort(active) // ids are time-ordered and created in the same order in every run
	return s.pick(active)
}

var uuidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// documents renders every invoice and credit note, one JSON line each in
// number order, with ids replaced by their order of first appearance and
// without createdAt.
func (s *simulation) documents() []byte {
	var docs []any
	for _, inv := range s.invoicesWhere("seller,buyer,lines,vatTotals") {
		inv.CreatedAt = time.Time{}
		inv.Status = "" // derived from the clock at read time; the stored status is covered by the ledger check
		docs = append(docs, inv)
	}
	notes := s.creditNotes("limit=1000")
	slices.SortFunc(notes, func(a, b store.CreditNote) int { return int(a.CreditNoteNumber - b.CreditNoteNumber) })
	for _, c := range notes {
		c.CreatedAt = time.Time{}
		docs = append(docs, c)
	}
	if len(docs) < 50 {
		s.t.Fatalf("only %d documents", len(docs))
	}
	names := map[string]string{}
	var out bytes.Buffer
	for _, d := range docs {
		b, err := json.Marshal(d)
		if err != nil {
			s.t.Fatal(err)
		}
		b = uuidPattern.ReplaceAllFunc(b, func(id []byte) []byte {
			if _, ok := names[string(id)]; !ok {
				names[string(id)] = fmt.Sprintf("id-%d", len(names)+1)
			}
			return []byte(names[string(id)])
		})
		out.Write(b)
		out.WriteByte('\n')
	}
	return out.Bytes()
}
