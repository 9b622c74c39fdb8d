package engine_test

import (
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/substatus"
)

// undo asks to undo the cancellation of id and returns the status and,
// on 200, the view.
func (w *world) undo(id string) (int, bindingView, []string) {
	w.t.Helper()
	r := w.tn.Do("POST", "/subscription/"+id+"/cancel/undo", nil)
	var v bindingView
	var fields []string
	switch r.Status {
	case http.StatusOK:
		r.JSON(w.t, &v)
	case http.StatusBadRequest:
		fields = r.Fields(w.t)
	}
	return r.Status, v, fields
}

// TestUndoCancellation walks every kind of cancellation through an undo:
// those that settled nothing (at the period's end, waiting for an
// EndOfBinding binding's end, the last bound period a renewal created
// cancelled) are taken back and the series renews on as if never
// cancelled; those that settled money (an effect inside the period, a
// period ahead credited, a ChargeRemainder remainder charged) and those
// with nothing waiting are refused with a 400 naming id. Another tenant
// sees none of it.
func TestUndoCancellation(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		w := newWorld(t, e, e.Tenant)
		sd := w.tn.Seed(t)
		monthly, ahead14 := w.plan("Month", 0), w.plan("Month", 14)
		basic := w.pkg("Basic", "149", monthly, false)
		basicAhead := w.pkg("Basic ahead", "149", ahead14, false)
		bound := w.boundPkg("Bound", "100", monthly, 3, "EndOfBinding")
		boundAhead := w.boundPkg("Bound ahead", "100", ahead14, 3, "EndOfBinding")
		charged := w.boundPkg("Charged", "100", monthly, 3, "ChargeRemainder")
		start := local(2027, 1, 1)
		w.advance(start)
		subscribers := map[string]string{}
		firsts := map[string]store.Subscription{}
		for name, tpl := range map[string]string{"endOfPeriod": basic, "binding": bound, "bindingAhead": boundAhead,
			"inside": basic, "periodAhead": basicAhead, "charged": charged, "immediately": basic, "never": basic} {
			subscribers[name] = sd.Subscriber(seed.Subscriber{Name: "Undo " + name})
			firsts[name] = w.beginFor(subscribers[name], tpl, start)
		}
		w.advance(local(2027, 1, 15))
		for name, body := range map[string]map[string]any{
			"endOfPeriod":  {"mode": "EndOfPeriod", "reason": "price"},
			"binding":      {"mode": "EndOfPeriod"},
			"bindingAhead": {"mode": "Immediately"},
			"inside":       {"cancellationTime": local(2027, 1, 20).Format(time.RFC3339)},
			"charged":      {"mode": "EndOfPeriod"},
			"immediately":  {"mode": "Immediately"},
		} {
			if status, _ := w.cancel(firsts[name].ID, body); status != http.StatusOK {
				t.Fatalf("%s: cancel %d", name, status)
			}
		}
		w.advance(local(2027, 1, 16))
		refuse := func(name, id string) {
			t.Helper()
			if status, _, fields := w.undo(id); status != http.StatusBadRequest || !slices.Contains(fields, "id") {
				t.Fatalf("%s: undo %d %v, want 400 naming id", name, status, fields)
			}
		}
		for _, name := range []string{"endOfPeriod", "binding"} {
			status, v, _ := w.undo(firsts[name].ID)
			if status != http.StatusOK || v.CancelledAt != nil || v.CancelEffectiveAt != nil || v.ScheduledCancelEffectiveAt != nil || v.Status != substatus.Active || v.RenewAt == nil {
				t.Fatalf("%s: undo %d %+v, want an active period that renews", name, status, v)
			}
			refuse(name+" twice", firsts[name].ID)
		}
		for _, name := range []string{"inside", "charged", "immediately", "never"} {
			refuse(name, firsts[name].ID)
		}
		// The period created ahead on 18 January is cancelled and credited
		// with an end-of-period cancellation of the running one.
		w.advance(local(2027, 1, 20))
		if status, _ := w.cancel(firsts["periodAhead"].ID, map[string]any{"mode": "EndOfPeriod"}); status != http.StatusOK {
			t.Fatalf("periodAhead: cancel %d", status)
		}
		refuse("periodAhead", firsts["periodAhead"].ID)
		// bindingAhead: period 3 (1 March – 1 April) reaches the binding end
		// and was created cancelled on 15 February; named by the first
		// period's id, the undo finds it.
		w.advance(local(2027, 2, 20))
		if s := w.series(firsts["bindingAhead"].ID); len(s) != 3 || s[2].CancelledAt == nil {
			t.Fatalf("bindingAhead before undo: %d periods, want the third created cancelled", len(s))
		}
		if status, _, _ := w.undo(firsts["bindingAhead"].ID); status != http.StatusOK {
			t.Fatalf("bindingAhead: undo %d", status)
		}
		other := e.NewTenant("other", true)
		if r := other.Do("POST", "/subscription/"+firsts["never"].ID+"/cancel/undo", nil); r.Status != http.StatusNotFound {
			t.Fatalf("another tenant's undo: %d, want 404", r.Status)
		}
		w.advance(local(2027, 5, 15))
		for _, name := range []string{"endOfPeriod", "binding", "bindingAhead"} {
			s := w.series(firsts[name].ID)
			if len(s) != 5 {
				t.Errorf("%s: %d periods by 15 May, want 5 (renewing as if never cancelled)", name, len(s))
			}
			for _, p := range s {
				if p.CancelledAt != nil || p.ScheduledCancelAt != nil {
					t.Errorf("%s: period from %s still cancelled", name, p.PeriodStart.In(oslo))
				}
			}
			if n := len(w.invoices(subscribers[name])); n != len(s) {
				t.Errorf("%s: %d invoices for %d periods", name, n, len(s))
			}
		}
		for _, name := range []string{"inside", "charged", "immediately"} {
			if s := w.series(firsts[name].ID); len(s) != 1 {
				t.Errorf("%s: %d periods, want the refused undo to leave it ending", name, len(s))
			}
		}
		removed := map[string]int{}
		for _, ev := range w.events(store.EventSubscriptionCancellationRemoved) {
			removed[ev.Subject]++
		}
		if len(removed) != 3 || removed["/subscription/"+firsts["endOfPeriod"].ID] != 1 || removed["/subscription/"+firsts["binding"].ID] != 1 {
			t.Errorf("SubscriptionCancellationRemoved events %v, want one each for the three undone", removed)
		}
		checkLedger(t, e)
	})
}

// TestUndoCancellationOnceConcurrently fires one undo from 8 goroutines:
// one wins, the others are told nothing waits, one event is recorded.
func TestUndoCancellationOnceConcurrently(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		w := newWorld(t, e, e.Tenant)
		start := local(2027, 1, 1)
		w.advance(start)
		first := w.begin(w.pkg("Basic", "149", w.plan("Month", 0), false), start)
		w.advance(local(2027, 1, 10))
		if status, _ := w.cancel(first.ID, map[string]any{"mode": "EndOfPeriod"}); status != http.StatusOK {
			t.Fatalf("cancel %d", status)
		}
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			codes []int
		)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := w.tn.Do("POST", "/subscription/"+first.ID+"/cancel/undo", nil)
				mu.Lock()
				codes = append(codes, r.Status)
				mu.Unlock()
			}()
		}
		wg.Wait()
		ok := 0
		for _, c := range codes {
			switch c {
			case http.StatusOK:
				ok++
			case http.StatusBadRequest, http.StatusConflict:
			default:
				t.Errorf("undo answered %d", c)
			}
		}
		if ok != 1 {
			t.Fatalf("answers %v, want exactly one 200", codes)
		}
		if n := len(w.events(store.EventSubscriptionCancellationRemoved)); n != 1 {
			t.Fatalf("%d SubscriptionCancellationRemoved events, want 1", n)
		}
	})
}
