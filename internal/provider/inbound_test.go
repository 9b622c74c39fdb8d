package provider_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/provider"
	"github.com/kadens/kadens/internal/provider/ehf"
	"github.com/kadens/kadens/internal/provider/external"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/validation"
)

// TestCallbackHandler sends notifications to a provider's callback through
// a real listener, on both engines: the provider gets the tenant (in the
// context too), the headers and the body as sent; its verdicts map to the
// statuses its doc promises, and what is no provider's (an unknown type, a
// type without a callback, a tenant that is not there) learns nothing but
// a 404.
func TestCallbackHandler(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tenant, err := st.CreateTenant(ctx, "callbacks", false, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		// The provider's next verdict, and what it got: requests are sent
		// one at a time, each answered before the next, so the handler's
		// writes happen before the test reads them.
		var (
			mu        sync.Mutex
			verdict   error
			got       provider.Callback
			ctxTenant string
		)
		setVerdict := func(err error) { mu.Lock(); verdict = err; mu.Unlock() }
		pushing := external.Provider
		pushing.Callback = func(ctx context.Context, c provider.Callback) error {
			mu.Lock()
			defer mu.Unlock()
			got = c
			ctxTenant, _ = tenancy.From(ctx)
			return verdict
		}
		reg := provider.NewRegistry(ehf.Provider, pushing)
		mux := http.NewServeMux()
		mux.Handle(provider.CallbackPattern, provider.CallbackHandler(reg, st, slog.New(slog.NewTextHandler(io.Discard, nil))))
		srv := httptest.NewServer(mux)
		defer srv.Close()
		post := func(path string, body []byte) (int, string) {
			t.Helper()
			req, _ := http.NewRequest(http.MethodPost, srv.URL+path, bytes.NewReader(body))
			req.Header.Set("X-Signature", "sig-1")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			return res.StatusCode, string(b)
		}
		path := "/provider/external/callback/" + tenant.ID // the type matches ignoring case

		setVerdict(nil)
		if status, body := post(path, []byte(`{"agreementId":"agr-1"}`)); status != http.StatusNoContent || body != "" {
			t.Fatalf("accepted: %d %q", status, body)
		}
		if got.TenantID != tenant.ID || ctxTenant != tenant.ID || string(got.Body) != `{"agreementId":"agr-1"}` ||
			got.Header.Get("X-Signature") != "sig-1" || got.Received.IsZero() {
			t.Errorf("the provider got %+v (context tenant %q)", got, ctxTenant)
		}

		for _, c := range []struct {
			name    string
			verdict error
			status  int
			field   string // in the 400's body
		}{
			{"refused signature", provider.ErrUnauthenticated, http.StatusUnauthorized, ""},
			{"wrapped refusal", errors.Join(errors.New("hmac"), provider.ErrUnauthenticated), http.StatusUnauthorized, ""},
			{"bad notification", validation.Field("eventType", "is not one Kadens knows"), http.StatusBadRequest, "eventType"},
			{"unknown agreement", store.ErrNotFound, http.StatusNotFound, ""},
			{"failure of ours", errors.New("database down"), http.StatusInternalServerError, ""},
		} {
			setVerdict(c.verdict)
			status, body := post(path, []byte(`{}`))
			if status != c.status {
				t.Errorf("%s: %d %s, want %d", c.name, status, body, c.status)
			}
			if c.field != "" && !strings.Contains(body, `"field":"`+c.field+`"`) {
				t.Errorf("%s: body %s does not name %s", c.name, body, c.field)
			}
			if c.status != http.StatusBadRequest && body != "" {
				t.Errorf("%s: body %q, want none", c.name, body)
			}
		}

		setVerdict(nil)
		mu.Lock()
		got = provider.Callback{}
		mu.Unlock()
		for _, c := range []struct {
			name, path string
			body       []byte
			status     int
		}{
			{"unknown type", "/provider/Vipps/callback/" + tenant.ID, nil, http.StatusNotFound},
			{"type without a callback", "/provider/EHF/callback/" + tenant.ID, nil, http.StatusNotFound},
			{"unknown tenant", "/provider/External/callback/" + store.NewID(), nil, http.StatusNotFound},
			{"tenant not a uuid", "/provider/External/callback/acme", nil, http.StatusBadRequest},
			{"body over the limit", path, bytes.Repeat([]byte("x"), provider.CallbackLimit+1), http.StatusRequestEntityTooLarge},
		} {
			status, body := post(c.path, c.body)
			if status != c.status {
				t.Errorf("%s: %d %s, want %d", c.name, status, body, c.status)
			}
			if status == http.StatusBadRequest || status == http.StatusRequestEntityTooLarge {
				var v struct{ Errors validation.Errors }
				if err := json.Unmarshal([]byte(body), &v); err != nil || len(v.Errors) != 1 {
					t.Errorf("%s: body %q is not one field error", c.name, body)
				}
			}
		}
		if got.TenantID != "" {
			t.Errorf("a refused request reached the provider: %+v", got)
		}
	})
}

// TestRunPolls: every registered poll runs at once and then on its
// interval, an error does not end it, and RunPolls returns once the
// context ends.
func TestRunPolls(t *testing.T) {
	var fast, failing atomic.Int32
	a := external.Provider
	a.Poll = &provider.Poll{Every: 5 * time.Millisecond, Run: func(context.Context) error { fast.Add(1); return nil }}
	b := ehf.Provider
	b.Poll = &provider.Poll{Every: 5 * time.Millisecond, Run: func(context.Context) error {
		failing.Add(1)
		return errors.New("bank closed")
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		provider.RunPolls(ctx, provider.NewRegistry(a, b), slog.New(slog.NewTextHandler(io.Discard, nil)))
		close(done)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for (fast.Load() < 3 || failing.Load() < 3) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if fast.Load() < 3 || failing.Load() < 3 {
		t.Fatalf("polls ran %d and %d times, want at least 3 each", fast.Load(), failing.Load())
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("RunPolls did not return after its context ended")
	}
}
