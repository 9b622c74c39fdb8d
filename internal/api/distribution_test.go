package api_test

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	deliverywing "github.com/kadens/kadens/internal/delivery"
	"github.com/kadens/kadens/internal/seed"
)

// distLine is a line of a distribution view read back from JSON Lines.
type distLine struct {
	Date   string
	Change string
	deliverywing.Copy
}

// distribution reads a view of day as JSON Lines (and checks that the CSV
// of the same view holds the same lines).
func (f *stopFixture) distribution(day, view string, carrier ...string) []distLine {
	f.t.Helper()
	q := "/distribution/" + day + "?view=" + view
	if len(carrier) > 0 {
		q += "&carrier=" + carrier[0]
	}
	r := f.tn.Do("GET", q+"&format=jsonl", nil)
	if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/jsonl") {
		f.t.Fatalf("GET %s: %d %s %s", q, r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	var out []distLine
	sc := bufio.NewScanner(bytes.NewReader(r.Body))
	for sc.Scan() {
		var l distLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			f.t.Fatalf("GET %s: line %q: %v", q, sc.Text(), err)
		}
		if l.Date != day {
			f.t.Errorf("GET %s: line of %s", q, l.Date)
		}
		out = append(out, l)
	}
	c := f.tn.Do("GET", q+"&format=csv", nil)
	if c.Status != http.StatusOK || !strings.HasPrefix(c.Header.Get("Content-Type"), "text/csv") {
		f.t.Fatalf("GET %s as CSV: %d %s", q, c.Status, c.Body)
	}
	rows, err := csv.NewReader(bytes.NewReader(c.Body)).ReadAll()
	if err != nil || len(rows) != len(out)+1 {
		f.t.Fatalf("GET %s as CSV: %d rows (%v), want a header and %d", q, len(rows), err, len(out))
	}
	if view != deliverywing.ViewCounts {
		col := slices.Index(rows[0], "copyId")
		for i, l := range out {
			if rows[i+1][col] != l.ID {
				f.t.Errorf("GET %s: CSV line %d is copy %s, JSON Lines %s", q, i+1, rows[i+1][col], l.ID)
			}
		}
	}
	return out
}

// copies are the lines' subscriptions (list) or change:subscription
// (delta), in the view's order.
func copiesOf(ls []distLine) []string {
	var out []string
	for _, l := range ls {
		s := l.SubscriptionID
		if l.Change != "" {
			s = l.Change + ":" + s
		}
		out = append(out, s)
	}
	return out
}

// The distribution list of a Tue/Thu/Sat title through a real server on
// both engines: a day's copies, a stop taking one out and putting it back
// (Stopped, Resumed), a closed day, a day the title is not delivered, a
// renewal that keeps the copy ids, a cancellation (Ended), both formats,
// bad input, and another tenant seeing none of it.
func TestDistributionList(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		tn := e.Tenant
		f := newStopFixture(t, tn)
		s1 := f.order(f.printPkg, f.subscriber)
		s2 := f.order(f.printPkg, f.other)
		web := f.order(f.digital, f.other)
		f.stop(s1, "2030-01-10", "2030-01-12")
		if r := tn.Do("PUT", "/deliverycalendar/2030-01-17", map[string]any{"name": "Ingen avis"}); r.Status != http.StatusNoContent {
			t.Fatalf("calendar: %d %s", r.Status, r.Body)
		}
		orderOf := func(sub string) string {
			var v struct{ OrderID string }
			tn.Do("GET", "/subscription/"+sub, nil).JSON(t, &v)
			return v.OrderID
		}
		both := []string{s1, s2}
		slices.SortFunc(both, func(a, b string) int { return strings.Compare(orderOf(a), orderOf(b)) })

		list := f.distribution("2030-01-01", "list")
		if got := copiesOf(list); !slices.Equal(got, both) {
			t.Errorf("list of Tue 1 January: %v, want %v (the digital %s not in it)", got, both, web)
		}
		for _, l := range list {
			if l.ID != deliverywing.CopyID(orderOf(l.SubscriptionID), f.print) || l.ProductID != f.print || l.Quantity != 1 ||
				l.AddressSource != deliverywing.AddressSubscriber || l.OrderID != orderOf(l.SubscriptionID) {
				t.Errorf("copy %+v", l)
			}
		}
		if l := list[slices.IndexFunc(list, func(l distLine) bool { return l.SubscriptionID == s1 })]; l.Address.Name != "Kari Nordmann" || l.SubscriberID != f.subscriber {
			t.Errorf("Kari's copy: %+v", l)
		}
		// The first delivery has no earlier day: every copy is New.
		if got := copiesOf(f.distribution("2030-01-01", "delta")); !slices.Equal(got, []string{"New:" + both[0], "New:" + both[1]}) {
			t.Errorf("delta of 1 January: %v", got)
		}
		cases := []struct {
			day         string
			list, delta []string
		}{
			{"2030-01-03", both, nil},                               // Thu: nothing changed since Tue
			{"2030-01-07", nil, nil},                                // Mon: not delivered
			{"2030-01-10", []string{s2}, []string{"Stopped:" + s1}}, // the stop begins
			{"2030-01-12", []string{s2}, nil},                       // Sat: still stopped
			{"2030-01-15", both, []string{"Resumed:" + s1}},         // Tue after the stop
			{"2030-01-17", nil, nil},                                // Thu without paper
			{"2030-01-19", both, nil},                               // Sat: against Tue, the closed Thursday skipped
		}
		for _, c := range cases {
			if got := copiesOf(f.distribution(c.day, "list")); !slices.Equal(got, c.list) {
				t.Errorf("list of %s: %v, want %v", c.day, got, c.list)
			}
			if got := copiesOf(f.distribution(c.day, "delta")); !slices.Equal(got, c.delta) {
				t.Errorf("delta of %s: %v, want %v", c.day, got, c.delta)
			}
		}
		counts := f.distribution("2030-01-10", "counts")
		var n distCount
		if len(counts) != 1 {
			t.Fatalf("counts of 10 January: %+v", counts)
		}
		r := tn.Do("GET", "/distribution/2030-01-10?view=counts&format=jsonl", nil)
		if err := json.Unmarshal(bytes.TrimSpace(r.Body), &n); err != nil || n.Copies != 1 || n.ProductID != f.print || n.Carrier != "" {
			t.Errorf("counts of 10 January: %s (%v)", r.Body, err)
		}
		// Only carrier "" exists: another carrier's list is empty.
		if got := f.distribution("2030-01-15", "list", "Bring"); len(got) != 0 {
			t.Errorf("Bring's list: %v", copiesOf(got))
		}
		if got := f.distribution("2030-01-15", "list", ""); len(got) != 2 {
			t.Errorf("the unrouted copies' list: %v", copiesOf(got))
		}

		// The renewal into February keeps each copy's id; the copy is the new
		// period's.
		s2cancel := "2030-02-08T00:00:00+01:00"
		f.advance(time.Date(2030, 2, 1, 12, 0, 0, 0, osloZone))
		feb := f.distribution("2030-02-02", "list")
		if len(feb) != 2 || feb[0].ID != list[0].ID || feb[1].ID != list[1].ID || feb[0].SubscriptionID == list[0].SubscriptionID {
			t.Errorf("list of 2 February: %+v, want January's copies on the new periods", feb)
		}
		if got := f.distribution("2030-02-02", "delta"); len(got) != 0 {
			t.Errorf("delta across the renewal: %v", copiesOf(got))
		}
		// Ola's subscription cancelled from Friday 8 February: his copy ends
		// with Thursday's paper; Saturday's delta says Ended.
		if r := tn.Do("POST", "/subscription/"+f.next(s2)+"/cancel", map[string]any{"cancellationTime": s2cancel}); r.Status != http.StatusOK {
			t.Fatalf("cancel: %d %s", r.Status, r.Body)
		}
		if got := copiesOf(f.distribution("2030-02-07", "list")); len(got) != 2 {
			t.Errorf("list of Thu 7 February: %v", got)
		}
		d := f.distribution("2030-02-09", "delta")
		if len(d) != 1 || d[0].Change != deliverywing.ChangeEnded || d[0].SubscriberID != f.other {
			t.Errorf("delta of Sat 9 February: %+v, want Ola's copy Ended", d)
		}

		for _, q := range []struct{ path, field string }{
			{"/distribution/2030-02-30", "date"},
			{"/distribution/tomorrow", "date"},
			{"/distribution/2030-02-09?view=all", "view"},
			{"/distribution/2030-02-09?format=xml", "format"},
			{"/distribution/2030-02-09?carrier=" + strings.Repeat("x", 101), "carrier"},
		} {
			if r := tn.Do("GET", q.path, nil); r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), q.field) {
				t.Errorf("GET %s: %d %s, want a 400 naming %s", q.path, r.Status, r.Body, q.field)
			}
		}
		// Publishing a day: revision 1, then a higher one each time, also
		// when published from 8 goroutines at once; the copies per carrier.
		var pub struct {
			Date     string
			Revision int
			Copies   int
			Carriers []struct {
				Carrier string
				Copies  int
			}
		}
		if r := tn.Do("POST", "/distribution/2030-02-07/publish", nil); r.Status != http.StatusOK {
			t.Fatalf("publish: %d %s", r.Status, r.Body)
		} else if r.JSON(t, &pub); pub.Date != "2030-02-07" || pub.Revision != 1 || pub.Copies != 2 || len(pub.Carriers) != 1 || pub.Carriers[0].Copies != 2 {
			t.Errorf("publication: %+v", pub)
		}
		revisions := make(chan int, 8)
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var p struct{ Revision int }
				if r := tn.Do("POST", "/distribution/2030-02-07/publish", nil); r.Status == http.StatusOK {
					r.JSON(t, &p)
				}
				revisions <- p.Revision
			}()
		}
		wg.Wait()
		close(revisions)
		var revs []int
		for r := range revisions {
			revs = append(revs, r)
		}
		slices.Sort(revs)
		if !slices.Equal(revs, []int{2, 3, 4, 5, 6, 7, 8, 9}) {
			t.Errorf("concurrent publications: revisions %v", revs)
		}
		if r := tn.Do("POST", "/distribution/2030-13-01/publish", nil); r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "date") {
			t.Errorf("publish a bad date: %d %s", r.Status, r.Body)
		}
		other := e.NewTenant("Other", true)
		if r := other.Do("POST", "/distribution/2030-02-07/publish", nil); r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"revision":1`) {
			t.Errorf("another tenant's publication: %d %s", r.Status, r.Body)
		}
		if r := other.Do("GET", "/distribution/2030-02-07?format=jsonl", nil); r.Status != http.StatusOK || len(r.Body) != 0 {
			t.Errorf("another tenant's list: %d %q", r.Status, r.Body)
		}
	})
}

type distCount struct {
	Date string
	deliverywing.RouteCount
}

// The delta of each day applied to the list of each product's previous
// delivery day gives the day's list (what a carrier's system relies on),
// over January 2030 of two titles (Tue/Thu/Sat and Fri/Sat), with random
// stops, a closed day and a cancellation, on both engines.
func TestDistributionDeltaProperty(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		tn := e.Tenant
		f := newStopFixture(t, tn)
		sd := tn.Seed(t)
		helg := sd.Product(seed.Product{Name: "Avisa helg", Category: "print", VATRate: "0"})
		plan := sd.Plan(seed.Plan{Name: "Monthly helg", Unit: "Month", MinimumDueDays: seed.Days(14), PaymentTermsDays: seed.Days(10)})
		helgPkg := sd.Package(seed.Package{Name: "Helg", Price: "199.00", Products: []string{helg, f.web}, Plans: []string{plan}})
		if r := tn.Do("PUT", "/product/"+helg+"/deliveryschedule", map[string]any{"weekdays": []string{"Fri", "Sat"}}); r.Status != http.StatusNoContent {
			t.Fatalf("schedule: %d %s", r.Status, r.Body)
		}
		if r := tn.Do("PUT", "/deliverycalendar/2030-01-24", map[string]any{"name": "Ingen avis"}); r.Status != http.StatusNoContent {
			t.Fatalf("calendar: %d %s", r.Status, r.Body)
		}
		weekdays := map[string][]time.Weekday{f.print: {time.Tuesday, time.Thursday, time.Saturday}, helg: {time.Friday, time.Saturday}}
		closed := map[string]bool{"2030-01-24": true}
		delivers := func(p string, d time.Time) bool {
			return slices.Contains(weekdays[p], d.Weekday()) && !closed[d.Format(time.DateOnly)]
		}
		rng := rand.New(rand.NewPCG(31, 2030))
		var subs []string
		stops := 0
		for i := range 8 {
			s := sd.Subscriber(seed.Subscriber{Name: fmt.Sprintf("Leser %d", i), Email: fmt.Sprintf("leser%d@example.no", i), Country: "NO"})
			pkg, product := f.printPkg, f.print
			if i%3 == 2 {
				pkg, product = helgPkg, helg
			}
			sub := f.order(pkg, s)
			subs = append(subs, sub)
			// A stop from and to delivery days of the title, 3 to 12 days long.
			if rng.IntN(4) == 0 {
				continue
			}
			first := time.Date(2030, 1, 2+rng.IntN(20), 0, 0, 0, 0, time.UTC)
			for !delivers(product, first) {
				first = first.AddDate(0, 0, 1)
			}
			last := first.AddDate(0, 0, 2+rng.IntN(10))
			for !slices.Contains(weekdays[product], last.Weekday()) {
				last = last.AddDate(0, 0, 1)
			}
			if r := tn.Do("POST", "/subscription/"+sub+"/deliverystop", map[string]any{
				"firstDate": first.Format(time.DateOnly), "lastDate": last.Format(time.DateOnly)}); r.Status == http.StatusCreated {
				stops++
			} else {
				t.Logf("stop %s–%s refused: %s", first.Format(time.DateOnly), last.Format(time.DateOnly), r.Body)
			}
		}
		if stops < 3 {
			t.Fatalf("only %d stops made", stops)
		}
		if r := tn.Do("POST", "/subscription/"+subs[0]+"/cancel", map[string]any{"cancellationTime": "2030-01-16T00:00:00+01:00"}); r.Status != http.StatusOK {
			t.Fatalf("cancel: %d %s", r.Status, r.Body)
		}
		byProduct := func(ls []distLine, p string) []distLine {
			var out []distLine
			for _, l := range ls {
				if l.ProductID == p {
					l.Date, l.Change = "", ""
					out = append(out, l)
				}
			}
			slices.SortFunc(out, func(a, b distLine) int { return strings.Compare(a.ID, b.ID) })
			return out
		}
		lists := map[string][]distLine{}
		checked, changes := 0, 0
		for d := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC); d.Month() == time.January; d = d.AddDate(0, 0, 1) {
			day := d.Format(time.DateOnly)
			lists[day] = f.distribution(day, "list")
			delta := f.distribution(day, "delta")
			changes += len(delta)
			for p := range weekdays {
				if !delivers(p, d) {
					if got := byProduct(lists[day], p); len(got) != 0 {
						t.Errorf("%s: %d copies of a product not delivered", day, len(got))
					}
					continue
				}
				prev := d.AddDate(0, 0, -1)
				for !delivers(p, prev) {
					prev = prev.AddDate(0, 0, -1)
				}
				var then []deliverywing.Copy
				for _, l := range byProduct(lists[prev.Format(time.DateOnly)], p) {
					then = append(then, l.Copy)
				}
				var ch []deliverywing.Change
				for _, l := range delta {
					if l.ProductID == p {
						ch = append(ch, deliverywing.Change{Change: l.Change, Copy: l.Copy})
					}
				}
				got := deliverywing.Apply(then, ch)
				slices.SortFunc(got, func(a, b deliverywing.Copy) int { return strings.Compare(a.ID, b.ID) })
				var want []deliverywing.Copy
				for _, l := range byProduct(lists[day], p) {
					want = append(want, l.Copy)
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s, product %s: the delta applied to %s's list gives\n%v\nthe list is\n%v", day, p, prev.Format(time.DateOnly), got, want)
				}
				checked++
			}
		}
		if checked < 15 || changes < 2*stops {
			t.Errorf("%d days × products checked, %d changes for %d stops", checked, changes, stops)
		}
	})
}
