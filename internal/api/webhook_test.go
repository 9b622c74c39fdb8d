package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/webhook"
)

// hookReceiver is a real endpoint: it answers the validation handshake
// when echo is set and records every other event it receives.
type hookReceiver struct {
	echo   atomic.Bool
	mu     sync.Mutex
	events []webhook.EventGridEvent
	valid  []webhook.ValidationData
	raw    []http.Header
	bodies [][]byte
	srv    *httptest.Server
}

func newHookReceiver(t *testing.T, echo bool) *hookReceiver {
	h := &hookReceiver{}
	h.echo.Store(echo)
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var evs []webhook.EventGridEvent
		if err := json.Unmarshal(body, &evs); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, e := range evs {
			if e.EventType == webhook.ValidationEventTypeEventGrid {
				var v webhook.ValidationData
				_ = json.Unmarshal(e.Data, &v)
				h.valid = append(h.valid, v)
				if h.echo.Load() {
					_ = json.NewEncoder(w).Encode(map[string]string{"validationResponse": v.ValidationCode})
				}
				return
			}
			h.events = append(h.events, e)
		}
		h.raw = append(h.raw, r.Header.Clone())
		h.bodies = append(h.bodies, body)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookReceiver) received() []webhook.EventGridEvent {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]webhook.EventGridEvent(nil), h.events...)
}

func (h *hookReceiver) validations() []webhook.ValidationData {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]webhook.ValidationData(nil), h.valid...)
}

// eachWebhookEnv runs fn per engine on a server that may deliver to
// loopback receivers.
func eachWebhookEnv(t *testing.T, fn func(t *testing.T, e *apitest.Env)) {
	t.Helper()
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			fn(t, apitest.Start(t, eng, map[string]string{"KADENS_EGRESS_ALLOW_PRIVATE": "true",
				"KADENS_WEBHOOK_RETRY_SCHEDULE": "50ms,100ms"}))
		})
	}
}

// emit records an event of kind for tenant tn, as any change would.
func emit(t *testing.T, e *apitest.Env, tn apitest.Tenant, kind, subject string) {
	t.Helper()
	ctx := tenancy.With(context.Background(), tn.ID)
	if err := e.Store.InTx(ctx, func(tx *store.Tx) error {
		return tx.AddEvent(ctx, kind, subject, map[string]string{"id": subject}, time.Now())
	}); err != nil {
		t.Fatal(err)
	}
}

// fannedOut waits until every recorded event has been fanned out into
// deliveries. Deliveries are made at fan-out for the Validated
// registrations only, so once it returns, a registration's delivery list
// says for good whether an event will reach it: what it asserts is not
// "nothing arrived yet" after a pause but "nothing was queued".
func fannedOut(t *testing.T, e *apitest.Env) {
	t.Helper()
	eventually(t, "the events' fan-out", func() bool {
		events, _, err := webhook.HasDispatchWork(context.Background(), e.Store, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return !events
	})
}

// deliveries lists a registration's deliveries.
func deliveries(t *testing.T, e *apitest.Env, id string) []webhook.WebhookDelivery {
	t.Helper()
	var ds []webhook.WebhookDelivery
	if r := e.Do("GET", "/webhook/"+id+"/deliveries", nil); r.Status != http.StatusOK {
		t.Fatalf("deliveries of %s: %d", id, r.Status)
	} else {
		r.JSON(t, &ds)
	}
	return ds
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestWebhookLifecycle(t *testing.T) {
	t.Parallel()
	eachWebhookEnv(t, func(t *testing.T, e *apitest.Env) {
		rcv := newHookReceiver(t, true)
		r := e.Do("POST", "/webhook", map[string]any{"URL": rcv.srv.URL, "eventTypes": []string{"invoiceissued", "OrderProcessed"}})
		id := r.ID(t)
		secret := r.Header.Get("Webhook-Secret")
		if _, err := webhook.SecretKey(secret); err != nil || len(secret) != len("whsec_")+44 {
			t.Fatalf("Webhook-Secret %q: %v", secret, err)
		}
		if r.Header.Get("Webhook-Status") != "Validated" || r.Header.Get("Location") != apitest.BaseURL+"/webhook/"+id {
			t.Fatalf("headers %v", r.Header)
		}
		if v := rcv.validations(); len(v) != 1 || v[0].ValidationCode == "" || !strings.HasPrefix(v[0].ValidationURL, apitest.BaseURL+"/webhook/validate?token=") {
			t.Fatalf("validation events %+v", v)
		}
		got := e.Do("GET", "/webhook/"+id, nil)
		var w map[string]any
		got.JSON(t, &w)
		if w["status"] != "Validated" || w["format"] != "EventGrid" || w["url"] != rcv.srv.URL || strings.Contains(string(got.Body), "whsec_") {
			t.Fatalf("GET: %s", got.Body)
		}
		if kinds := w["eventTypes"].([]any); len(kinds) != 2 || kinds[0] != "InvoiceIssued" {
			t.Fatalf("eventTypes %v", kinds)
		}

		emit(t, e, e.Tenant, "InvoiceIssued", "/invoice/1")
		emit(t, e, e.Tenant, "SubscriptionCreated", "/subscription/1") // not subscribed
		emit(t, e, e.Tenant, "OrderProcessed", "/order/1")
		eventually(t, "2 events", func() bool { return len(rcv.received()) == 2 })
		rcv.mu.Lock()
		for i, h := range rcv.raw {
			if err := webhook.Verify(secret, h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature"), rcv.bodies[i], time.Now(), time.Minute); err != nil {
				t.Errorf("signature: %v", err)
			}
			if h.Get("S4-TenantId") != e.Tenant.ID {
				t.Errorf("S4-TenantId %q", h.Get("S4-TenantId"))
			}
		}
		rcv.mu.Unlock()

		// The delivery log, and a redelivery with the same webhook-id.
		var ds []webhook.WebhookDelivery
		eventually(t, "log", func() bool {
			e.Do("GET", "/webhook/"+id+"/deliveries?status=delivered", nil).JSON(t, &ds)
			n := 0
			for _, d := range ds {
				n += len(d.EventIDs)
			}
			return n == 2
		})
		if a := ds[0].Attempts; len(a) != 1 || *a[0].StatusCode != 200 || len(ds[0].EventIDs) == 0 {
			t.Fatalf("delivery %+v", ds[0])
		}
		before := len(rcv.received())
		if r := e.Do("POST", "/webhook/"+id+"/deliveries/"+ds[0].ID+"/redeliver", nil); r.Status != http.StatusAccepted {
			t.Fatalf("redeliver: %d %s", r.Status, r.Body)
		}
		eventually(t, "redelivery", func() bool { return len(rcv.received()) == before+len(ds[0].EventIDs) })
		rcv.mu.Lock()
		if last := rcv.raw[len(rcv.raw)-1].Get("webhook-id"); last != ds[0].ID {
			t.Errorf("redelivery webhook-id %s, want %s", last, ds[0].ID)
		}
		rcv.mu.Unlock()
		if f := e.Do("GET", "/webhook/"+id+"/deliveries?status=Lost", nil).Fields(t); f[0] != "status" {
			t.Fatalf("bad status filter: %v", f)
		}

		// PUT with the same url keeps it Validated without a handshake.
		r = e.Do("PUT", "/webhook/"+id, map[string]any{"url": rcv.srv.URL, "eventTypes": []string{"InvoiceIssued"}, "format": "cloudevents"})
		if r.Status != http.StatusNoContent || r.Header.Get("Webhook-Status") != "Validated" || len(rcv.validations()) != 1 {
			t.Fatalf("PUT: %d %v, %d handshakes", r.Status, r.Header, len(rcv.validations()))
		}
		var list []webhook.Webhook
		e.Do("GET", "/webhook", nil).JSON(t, &list)
		if len(list) != 1 || list[0].Format != "CloudEvents" || len(list[0].EventTypes) != 1 {
			t.Fatalf("list %+v", list)
		}
		if r := e.Do("DELETE", "/webhook/"+id, nil); r.Status != http.StatusNoContent {
			t.Fatalf("DELETE: %d", r.Status)
		}
		if r := e.Do("GET", "/webhook/"+id, nil); r.Status != http.StatusNotFound {
			t.Fatalf("GET after DELETE: %d", r.Status)
		}
		if r := e.Do("GET", "/webhook/"+id+"/deliveries", nil); r.Status != http.StatusNotFound {
			t.Fatalf("deliveries after DELETE: %d", r.Status)
		}
	})
}

// An endpoint that does not echo the code stays Pending and never
// receives events; the manual URL validates it within 5 minutes.
func TestWebhookHandshakeAndManualValidation(t *testing.T) {
	t.Parallel()
	eachWebhookEnv(t, func(t *testing.T, e *apitest.Env) {
		rcv := newHookReceiver(t, false)
		r := e.Do("POST", "/webhook", map[string]any{"url": rcv.srv.URL, "eventTypes": []string{"InvoiceIssued"}})
		id := r.ID(t)
		if r.Header.Get("Webhook-Status") != "Pending" {
			t.Fatalf("status %q", r.Header.Get("Webhook-Status"))
		}
		emit(t, e, e.Tenant, "InvoiceIssued", "/invoice/1")
		fannedOut(t, e)
		if n, d := len(rcv.received()), len(deliveries(t, e, id)); n != 0 || d != 0 {
			t.Fatalf("a Pending endpoint received %d events and has %d deliveries", n, d)
		}
		v := rcv.validations()
		if len(v) != 1 {
			t.Fatalf("%d handshakes", len(v))
		}
		path := strings.TrimPrefix(v[0].ValidationURL, apitest.BaseURL)
		if r := e.Raw("GET", "/webhook/validate?token=wrong", nil); r.Status != http.StatusNotFound {
			t.Fatalf("wrong token: %d", r.Status)
		}
		advance(t, e, 4*time.Minute+59*time.Second)
		r = e.Raw("GET", path, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("manual validation within 5 minutes: %d %s", r.Status, r.Body)
		}
		if r := e.Raw("GET", path, nil); r.Status != http.StatusNotFound {
			t.Fatalf("a used token works again: %d", r.Status)
		}
		var w webhook.Webhook
		e.Do("GET", "/webhook/"+id, nil).JSON(t, &w)
		if w.Status != "Validated" {
			t.Fatalf("status after manual validation: %s", w.Status)
		}
		emit(t, e, e.Tenant, "InvoiceIssued", "/invoice/2")
		eventually(t, "the event after validation", func() bool { return len(rcv.received()) == 1 })
		if got := rcv.received()[0].Subject; got != "/invoice/2" {
			t.Fatalf("received %s", got)
		}

		// A new url that does not echo: Pending again, and nothing goes to it.
		other := newHookReceiver(t, false)
		r = e.Do("PUT", "/webhook/"+id, map[string]any{"url": other.srv.URL, "eventTypes": []string{"InvoiceIssued"}})
		if r.Status != http.StatusNoContent || r.Header.Get("Webhook-Status") != "Pending" || len(other.validations()) != 1 {
			t.Fatalf("PUT new url: %d %v", r.Status, r.Header)
		}
		emit(t, e, e.Tenant, "InvoiceIssued", "/invoice/3")
		fannedOut(t, e)
		if len(other.received()) != 0 || len(rcv.received()) != 1 || len(deliveries(t, e, id)) != 1 {
			t.Fatalf("events went to an unvalidated url")
		}
		// Its manual URL has expired 5 minutes later.
		advance(t, e, 5*time.Minute+time.Second)
		if r := e.Raw("GET", strings.TrimPrefix(other.validations()[0].ValidationURL, apitest.BaseURL), nil); r.Status != http.StatusNotFound {
			t.Fatalf("manual validation after 5 minutes: %d", r.Status)
		}
		e.Do("GET", "/webhook/"+id, nil).JSON(t, &w)
		if w.Status != "Pending" {
			t.Fatalf("status %s after an expired validation", w.Status)
		}
		// A PUT of a Pending registration retries the handshake.
		other.echo.Store(true)
		r = e.Do("PUT", "/webhook/"+id, map[string]any{"url": other.srv.URL, "eventTypes": []string{"InvoiceIssued"}})
		if r.Header.Get("Webhook-Status") != "Validated" {
			t.Fatalf("PUT retry: %v", r.Header)
		}
	})
}

// TestWebhookPendingSaysWhy: a registration whose endpoint does not
// complete the handshake says so — the create and update answers carry the
// warning Webhook-Status-Reason, and GET and the list show statusReason
// (what the validation event got back, and until when its validationUrl
// works) and validationUrlExpiresAt — for an answer without the echo, an
// error status and an endpoint that cannot be reached. Once validated,
// both are null.
func TestWebhookPendingSaysWhy(t *testing.T) {
	t.Parallel()
	eachWebhookEnv(t, func(t *testing.T, e *apitest.Env) {
		silent := newHookReceiver(t, false)
		refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotFound) }))
		t.Cleanup(refusing.Close)
		closed := httptest.NewServer(http.NotFoundHandler())
		closed.Close() // nothing listens there any more
		var clock struct{ Now time.Time }
		e.Do("GET", "/testclock", nil).JSON(t, &clock)
		expires := clock.Now.UTC().Add(5 * time.Minute)
		get := func(id string) webhook.Webhook {
			t.Helper()
			var w webhook.Webhook
			e.Do("GET", "/webhook/"+id, nil).JSON(t, &w)
			return w
		}
		ids := map[string]string{}
		for name, c := range map[string]struct{ url, want string }{
			"no echo":     {silent.srv.URL, "The endpoint answered the validation event with 200 but did not echo its validationCode"},
			"404":         {refusing.URL, "The endpoint answered the validation event with 404."},
			"unreachable": {closed.URL, "The validation event could not be delivered: "},
		} {
			r := e.Do("POST", "/webhook", map[string]any{"url": c.url, "eventTypes": []string{"InvoiceIssued"}})
			id := r.ID(t)
			ids[name] = id
			warning := r.Header.Get("Webhook-Status-Reason")
			if r.Header.Get("Webhook-Status") != "Pending" || !strings.HasPrefix(warning, c.want) ||
				!strings.Contains(warning, "open the validationUrl it was sent (until "+expires.Format(time.RFC3339)+")") {
				t.Errorf("%s: POST answered Webhook-Status %q, Webhook-Status-Reason %q", name, r.Header.Get("Webhook-Status"), warning)
			}
			w := get(id)
			if w.Status != "Pending" || w.StatusReason == nil || *w.StatusReason != warning ||
				w.ValidationURLExpiresAt == nil || !w.ValidationURLExpiresAt.Equal(expires) {
				t.Errorf("%s: GET %+v (reason %v, expires %v), want the POST's warning and %s", name, w, w.StatusReason, w.ValidationURLExpiresAt, expires)
			}
		}
		var list []webhook.Webhook
		e.Do("GET", "/webhook", nil).JSON(t, &list)
		for _, w := range list {
			if w.StatusReason == nil {
				t.Errorf("listed without statusReason: %+v", w)
			}
		}
		// Opening the validationUrl after the failed handshake validates and clears it.
		if r := e.Raw("GET", strings.TrimPrefix(silent.validations()[0].ValidationURL, apitest.BaseURL), nil); r.Status != http.StatusOK {
			t.Fatalf("validation URL: %d %s", r.Status, r.Body)
		}
		if w := get(ids["no echo"]); w.Status != "Validated" || w.StatusReason != nil || w.ValidationURLExpiresAt != nil {
			t.Errorf("validated: %+v", w)
		}
		// A PUT that stays Pending warns again; one that validates says nothing.
		r := e.Do("PUT", "/webhook/"+ids["404"], map[string]any{"url": refusing.URL, "eventTypes": []string{"PaymentFailed"}})
		if !strings.HasPrefix(r.Header.Get("Webhook-Status-Reason"), "The endpoint answered the validation event with 404.") {
			t.Errorf("PUT still Pending: %v", r.Header)
		}
		silent.echo.Store(true)
		r = e.Do("PUT", "/webhook/"+ids["404"], map[string]any{"url": silent.srv.URL, "eventTypes": []string{"InvoiceIssued"}})
		if r.Header.Get("Webhook-Status") != "Validated" || r.Header.Get("Webhook-Status-Reason") != "" {
			t.Errorf("PUT that validates: %v", r.Header)
		}
		r = e.Do("PUT", "/webhook/"+ids["unreachable"], map[string]any{"url": closed.URL, "eventTypes": []string{"InvoiceIssued"}, "disableValidation": true})
		if r.Header.Get("Webhook-Status") != "Validated" || r.Header.Get("Webhook-Status-Reason") != "" {
			t.Errorf("PUT disabling validation: %v", r.Header)
		}
		if w := get(ids["unreachable"]); w.StatusReason != nil {
			t.Errorf("validation disabled, still a reason: %v", *w.StatusReason)
		}
	})
}

// advance moves the default (test) tenant's clock forward by d.
func advance(t *testing.T, e *apitest.Env, d time.Duration) {
	t.Helper()
	var c struct{ Now time.Time }
	e.Do("GET", "/testclock", nil).JSON(t, &c)
	if r := e.Do("POST", "/testclock/advance", map[string]any{"to": c.Now.Add(d).Format(time.RFC3339Nano)}); r.Status != 200 {
		t.Fatalf("advance: %d %s", r.Status, r.Body)
	}
}

func TestWebhookValidation(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) { // private addresses not allowed
		cases := []struct {
			body  map[string]any
			field string
		}{
			{map[string]any{"eventTypes": []string{"InvoiceIssued"}}, "url"},
			{map[string]any{"url": "ftp://example.com/x", "eventTypes": []string{"InvoiceIssued"}}, "url"},
			{map[string]any{"url": "http://127.0.0.1:9/x", "eventTypes": []string{"InvoiceIssued"}}, "url"},
			{map[string]any{"url": "http://localhost/x", "eventTypes": []string{"InvoiceIssued"}}, "url"},
			{map[string]any{"url": "http://10.1.2.3/x", "eventTypes": []string{"InvoiceIssued"}}, "url"},
			{map[string]any{"url": "http://[::1]/x", "eventTypes": []string{"InvoiceIssued"}}, "url"},
			{map[string]any{"url": "http://169.254.169.254/latest", "eventTypes": []string{"InvoiceIssued"}}, "url"},
			{map[string]any{"url": "https://93.184.215.14/x"}, "eventTypes"},
			{map[string]any{"url": "https://93.184.215.14/x", "eventTypes": []string{"*"}}, "eventTypes[0]"},
			{map[string]any{"url": "https://93.184.215.14/x", "eventTypes": []string{"InvoiceIssued"}, "format": "xml"}, "format"},
			{map[string]any{"url": "https://93.184.215.14/x", "eventTypes": []string{"InvoiceIssued"}, "secret": "hunter2"}, "secret"},
			{map[string]any{"url": "https://93.184.215.14/x", "eventTypes": []string{"InvoiceIssued"}, "secret": "whsec_c2hvcnQ="}, "secret"},
		}
		for _, c := range cases {
			if f := e.Do("POST", "/webhook", c.body).Fields(t); len(f) != 1 || f[0] != c.field {
				t.Errorf("%v: fields %v, want %s", c.body, f, c.field)
			}
		}
		// A public address with a supplied secret and no handshake is accepted
		// (nothing is sent until an event happens); the secret is not echoed.
		secret := webhook.NewSecret()
		r := e.Do("POST", "/webhook", map[string]any{"url": "https://93.184.215.14/x", "eventTypes": []string{"InvoiceIssued"},
			"secret": secret, "disableValidation": true})
		r.ID(t)
		if r.Header.Get("Webhook-Secret") != "" || r.Header.Get("Webhook-Status") != "Validated" {
			t.Fatalf("headers %v", r.Header)
		}
	})
}

func TestWebhooksAreTenantScoped(t *testing.T) {
	t.Parallel()
	eachWebhookEnv(t, func(t *testing.T, e *apitest.Env) {
		rcv := newHookReceiver(t, true)
		id := e.Do("POST", "/webhook", map[string]any{"url": rcv.srv.URL, "eventTypes": []string{"InvoiceIssued"}}).ID(t)
		emit(t, e, e.Tenant, "InvoiceIssued", "/invoice/1")
		var ds []webhook.WebhookDelivery
		eventually(t, "a delivery", func() bool {
			e.Do("GET", "/webhook/"+id+"/deliveries", nil).JSON(t, &ds)
			return len(ds) == 1
		})
		b := e.NewTenant("tenant-b", true)
		// Tenant B's events do not reach tenant A's endpoint.
		emit(t, e, b, "InvoiceIssued", "/invoice/b")
		body := map[string]any{"url": rcv.srv.URL, "eventTypes": []string{"InvoiceIssued"}}
		for _, c := range []struct{ method, path string }{
			{"GET", "/webhook/" + id}, {"PUT", "/webhook/" + id}, {"DELETE", "/webhook/" + id},
			{"GET", "/webhook/" + id + "/deliveries"}, {"POST", "/webhook/" + id + "/deliveries/" + ds[0].ID + "/redeliver"},
		} {
			var in any
			if c.method == "PUT" {
				in = body
			}
			if r := b.Do(c.method, c.path, in); r.Status != http.StatusNotFound || len(r.Body) != 0 {
				t.Errorf("tenant B %s %s: %d %s", c.method, c.path, r.Status, r.Body)
			}
		}
		var list []webhook.Webhook
		b.Do("GET", "/webhook", nil).JSON(t, &list)
		if len(list) != 0 {
			t.Errorf("tenant B lists %d webhooks", len(list))
		}
		fannedOut(t, e)
		if d := deliveries(t, e, id); len(d) != 1 {
			t.Errorf("tenant A's endpoint has %d deliveries after tenant B's event, want its own 1", len(d))
		}
		for _, ev := range rcv.received() {
			if ev.Subject == "/invoice/b" {
				t.Errorf("tenant B's event reached tenant A's endpoint")
			}
		}
		if r := e.Do("GET", "/webhook/"+id, nil); r.Status != http.StatusOK {
			t.Errorf("tenant A lost its webhook: %d", r.Status)
		}
	})
}

// The 400 for a refused webhook address names the setting that would
// allow it: --egress-allow-private for private ranges, and, on a server
// that allows those, --egress-allow-link-local for link-local and cloud
// metadata addresses, which stay refused (TestEgressAtRegistration covers
// every field Kadens calls).
func TestWebhookAddressRefusalNamesSetting(t *testing.T) {
	t.Parallel()
	message := func(t *testing.T, e *apitest.Env, url string) string {
		t.Helper()
		r := e.Do("POST", "/webhook", map[string]any{"url": url, "eventTypes": []string{"InvoiceIssued"}})
		var v apitest.Validation
		if f := r.Fields(t); len(f) != 1 || f[0] != "url" {
			t.Fatalf("%s: fields %v", url, f)
		}
		r.JSON(t, &v)
		return v.Errors[0].Message
	}
	t.Run("private", func(t *testing.T) {
		apitest.Each(t, func(t *testing.T, e *apitest.Env) {
			if m := message(t, e, "http://10.1.2.3/x"); !strings.Contains(m, "--egress-allow-private") || !strings.Contains(m, "KADENS_EGRESS_ALLOW_PRIVATE") {
				t.Errorf("private address: %q", m)
			}
		})
	})
	t.Run("link-local with private allowed", func(t *testing.T) {
		eachWebhookEnv(t, func(t *testing.T, e *apitest.Env) {
			for _, u := range []string{"http://169.254.169.254/latest/meta-data/", "http://[fe80::1]/x", "http://100.100.100.200/x", "http://[fd00:ec2::254]/x"} {
				if m := message(t, e, u); !strings.Contains(m, "--egress-allow-link-local") {
					t.Errorf("%s with private addresses allowed: %q", u, m)
				}
			}
		})
	})
}

// TestWebhookChangedDuringFanOut changes and replaces registrations while
// events are fanned out to them: every change answers as it would alone,
// every event created meanwhile reaches the registration that stayed
// subscribed throughout, and (under -race) the fan-out reads the
// registrations without racing their changes.
func TestWebhookChangedDuringFanOut(t *testing.T) {
	t.Parallel()
	eachWebhookEnv(t, func(t *testing.T, e *apitest.Env) {
		steady, churn := newHookReceiver(t, true), newHookReceiver(t, true)
		e.Do("POST", "/webhook", map[string]any{"url": steady.srv.URL, "eventTypes": []string{"SubscriberCreated"}}).ID(t)
		changing := e.Do("POST", "/webhook", map[string]any{"url": churn.srv.URL, "eventTypes": []string{"SubscriberCreated"}}).ID(t)
		const n = 40
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := range n {
				kinds := []string{"SubscriberCreated"}
				if i%2 == 1 {
					kinds = []string{"InvoiceIssued", "SubscriberCreated"}
				}
				switch i % 4 {
				case 3:
					if r := e.Do("DELETE", "/webhook/"+changing, nil); r.Status != http.StatusNoContent {
						t.Errorf("DELETE: %d %s", r.Status, r.Body)
					}
					r := e.Do("POST", "/webhook", map[string]any{"url": churn.srv.URL, "eventTypes": kinds})
					if r.Status != http.StatusCreated {
						t.Errorf("POST: %d %s", r.Status, r.Body)
						return
					}
					r.JSON(t, &changing)
				default:
					if r := e.Do("PUT", "/webhook/"+changing, map[string]any{"url": churn.srv.URL, "eventTypes": kinds}); r.Status != http.StatusNoContent {
						t.Errorf("PUT: %d %s", r.Status, r.Body)
					}
				}
			}
		}()
		for range n {
			e.Do("POST", "/subscriber", map[string]any{"name": "Kari"}).ID(t)
		}
		<-done
		eventually(t, "every event at the steady registration", func() bool { return len(steady.received()) >= n })
		if got := len(steady.received()); got != n {
			t.Fatalf("steady registration received %d events, want %d", got, n)
		}
	})
}
