package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/privacy"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// TestDeletionRequests: a request is recorded once per subscriber while
// open (asking again answers the open one's id), listed and read, closed
// once as Completed or Rejected (with why), and opened anew after; bad
// input is a 400 naming the field; another tenant sees none of it; each
// step records its event.
func TestDeletionRequests(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		tn := e.Tenant
		sd := tn.Seed(t)
		kari := sd.Subscriber(seed.Kari)
		path := "/subscriber/" + kari + "/deletionrequest"
		r := tn.Do("POST", path, map[string]any{"message": "Slett alt om meg, takk."})
		if r.Status != http.StatusCreated {
			t.Fatalf("request: %d %s", r.Status, r.Body)
		}
		id := r.ID(t)
		if again := tn.Do("POST", path, nil); again.Status != http.StatusOK || bodyID(t, again) != id || again.Header.Get("Location") != "/deletionrequest/"+id {
			t.Fatalf("asking again: %d %s, want 200 with the open request %s", again.Status, again.Body, id)
		}
		var got privacy.Request
		tn.Do("GET", "/deletionrequest/"+id, nil).JSON(t, &got)
		if got.Status != privacy.StatusOpen || got.SubscriberID != kari || got.Message != "Slett alt om meg, takk." || !got.AnswerBy.Equal(got.RequestedAt.AddDate(0, 1, 0)) {
			t.Fatalf("the request: %+v", got)
		}
		var list []privacy.Request
		tn.Do("GET", "/deletionrequest?status=open&subscriberId="+kari, nil).JSON(t, &list)
		if len(list) != 1 || list[0].ID != id {
			t.Fatalf("open list: %+v", list)
		}
		for _, c := range []struct {
			method, path string
			body         any
			field        string
		}{
			{"POST", path, map[string]any{"message": strings.Repeat("x", privacy.MaxText+1)}, "message"},
			{"POST", path, map[string]any{"message": "a\x00b"}, "message"},
			{"GET", "/deletionrequest?status=Gone", nil, "status"},
			{"GET", "/deletionrequest?subscriberId=x", nil, "subscriberId"},
			{"POST", "/deletionrequest/" + id + "/resolve", map[string]any{}, "status"},
			{"POST", "/deletionrequest/" + id + "/resolve", map[string]any{"status": "Deleted"}, "status"},
			{"POST", "/deletionrequest/" + id + "/resolve", map[string]any{"status": "Rejected"}, "resolution"},
		} {
			r := tn.Do(c.method, c.path, c.body)
			if r.Status != http.StatusBadRequest || !slices.Contains(r.Fields(t), c.field) {
				t.Errorf("%s %s %v: %d %s, want 400 naming %s", c.method, c.path, c.body, r.Status, r.Body, c.field)
			}
		}
		other := e.NewTenant("other", true)
		for _, c := range []struct {
			method, path string
			body         any
		}{{"GET", "/deletionrequest/" + id, nil}, {"POST", path, nil}, {"POST", "/deletionrequest/" + id + "/resolve", map[string]any{"status": "Completed"}}} {
			if r := other.Do(c.method, c.path, c.body); r.Status != http.StatusNotFound {
				t.Errorf("another tenant's %s %s: %d, want 404", c.method, c.path, r.Status)
			}
		}
		var none []privacy.Request
		other.Do("GET", "/deletionrequest", nil).JSON(t, &none)
		if len(none) != 0 {
			t.Errorf("another tenant lists %+v", none)
		}
		var done privacy.Request
		if r := tn.Do("POST", "/deletionrequest/"+id+"/resolve", map[string]any{"status": "Completed", "resolution": "Kontaktdata slettet; fakturaer beholdes i fem år (bokføringsloven)."}); r.Status != http.StatusOK {
			t.Fatalf("resolve: %d %s", r.Status, r.Body)
		} else {
			r.JSON(t, &done)
		}
		if done.Status != privacy.StatusCompleted || done.ResolvedAt == nil || done.ResolvedBy == "" {
			t.Fatalf("resolved: %+v", done)
		}
		if r := tn.Do("POST", "/deletionrequest/"+id+"/resolve", map[string]any{"status": "Rejected", "resolution": "no"}); r.Status != http.StatusBadRequest || !slices.Contains(r.Fields(t), "id") {
			t.Errorf("resolving twice: %d %s, want 400 naming id", r.Status, r.Body)
		}
		if r := tn.Do("POST", path, nil); r.Status != http.StatusCreated || r.ID(t) == id {
			t.Errorf("a new request after the first was closed: %d", r.Status)
		}
		ctx := tenancy.With(context.Background(), tn.ID)
		count := func(kind string) int {
			evs, _, err := e.Store.ListEvents(ctx, store.EventFilter{EventType: kind, Subject: "/subscriber/" + kari}, store.Page{Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			return len(evs)
		}
		if n, m := count(store.EventSubscriberDeletionRequested), count(store.EventSubscriberDeletionResolved); n != 2 || m != 1 {
			t.Errorf("events: %d requested, %d resolved, want 2 and 1", n, m)
		}
	})
}

// bodyID is the id a 200 or 201 answer carries as a JSON string.
func bodyID(t *testing.T, r *apitest.Response) string {
	t.Helper()
	var id string
	if err := json.Unmarshal(r.Body, &id); err != nil {
		t.Fatalf("answer %s: %v", r.Body, err)
	}
	return id
}

// TestDeletionRequestOnceConcurrently: 8 asks at once for one subscriber
// make one request; every answer names it.
func TestDeletionRequestOnceConcurrently(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		kari := e.Tenant.Seed(t).Subscriber(seed.Kari)
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			ids   = map[string]int{}
			codes []int
		)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := e.Tenant.Do("POST", "/subscriber/"+kari+"/deletionrequest", nil)
				mu.Lock()
				defer mu.Unlock()
				codes = append(codes, r.Status)
				if r.Status == http.StatusCreated || r.Status == http.StatusOK {
					ids[bodyID(t, r)]++
				}
			}()
		}
		wg.Wait()
		created := 0
		for _, c := range codes {
			if c == http.StatusCreated {
				created++
			} else if c != http.StatusOK {
				t.Errorf("an ask answered %d", c)
			}
		}
		if created != 1 || len(ids) != 1 {
			t.Fatalf("answers %v naming %v, want one 201 and every answer the same id", codes, ids)
		}
	})
}
