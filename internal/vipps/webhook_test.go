package vipps_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/vipps"
	"github.com/kadens/kadens/internal/vipps/vippstest"
)

// TestWebhook: Vipps' signed notifications at the callback route, on a
// real server: verified (a wrong or missing signature is a 401), the
// agreement they name read from Vipps and applied, a replay answered and
// changing nothing, an out-of-order one (activated after stopped) ending
// in the same state, one PaymentAgreementDeleted in all.
func TestWebhook(t *testing.T) {
	apitest.EachWith(t, loopback, func(t *testing.T, e *apitest.Env) {
		srv := vippstest.New(t)
		tn := e.Tenant
		const secret = "090a478d-37ff-4e77-970e-d457aeb26a3a"
		if r := tn.Do("PUT", "/vipps/merchant", map[string]any{"clientId": srv.ClientID, "clientSecret": srv.ClientSecret,
			"subscriptionKey": srv.SubscriptionKey, "merchantSerialNumber": srv.MerchantSerialNumber, "mode": "test", "baseUrl": srv.URL,
			"productName": "Nordavis Digital", "merchantAgreementUrl": "https://nordavis.example/my/",
			"merchantRedirectUrl": "https://nordavis.example/vipps/back", "maxAmount": 50000, "webhookSecret": secret}); r.Status != http.StatusOK {
			t.Fatalf("merchant: %d %s", r.Status, r.Body)
		}
		sub := tn.Do("POST", "/subscriber", map[string]any{"name": "Kari Nordmann", "country": "NO"}).ID(t)
		id := tn.Do("POST", "/paymentagreement", map[string]any{"subscriberId": sub, "providerType": "Vipps"}).ID(t)
		vid := waitAgreement(t, tn, id, "PENDING")["vippsAgreementId"].(string)

		u, _ := url.Parse(e.URL)
		target := "/provider/Vipps/callback/" + tn.ID
		send := func(tenant, key string, event string) int {
			t.Helper()
			body, _ := json.Marshal(map[string]any{"agreementId": vid, "eventType": event, "occurred": time.Now().UTC().Format(time.RFC3339),
				"actor": "USER"})
			date := time.Now().UTC().Format(time.RFC1123)
			path := "/provider/Vipps/callback/" + tenant
			auth, hash := vipps.Sign(key, "POST", path, u.Host, date, body)
			return e.Raw("POST", path, string(body), "Content-Type", "application/json", "X-Ms-Date", date,
				"X-Ms-Content-Sha256", hash, "Authorization", auth).Status
		}
		if st := send(tn.ID, "not-the-secret", "recurring.agreement-activated.v1"); st != http.StatusUnauthorized {
			t.Fatalf("wrong secret: %d", st)
		}
		if st := e.Raw("POST", target, `{"agreementId":"x"}`).Status; st != http.StatusUnauthorized {
			t.Fatalf("unsigned: %d", st)
		}
		other := e.NewTenant("no-merchant", true)
		if st := send(other.ID, secret, "recurring.agreement-activated.v1"); st != http.StatusUnauthorized {
			t.Fatalf("a tenant without a merchant: %d", st)
		}

		if err := srv.Approve(vid, 0); err != nil {
			t.Fatal(err)
		}
		if st := send(tn.ID, secret, "recurring.agreement-activated.v1"); st != http.StatusNoContent {
			t.Fatalf("activated: %d", st)
		}
		waitAgreement(t, tn, id, "ACTIVE")
		if err := srv.Stop(vid); err != nil {
			t.Fatal(err)
		}
		if st := send(tn.ID, secret, "recurring.agreement-stopped.v1"); st != http.StatusNoContent {
			t.Fatalf("stopped: %d", st)
		}
		// Late and replayed deliveries: the state stays what Vipps has.
		for range 2 {
			if st := send(tn.ID, secret, "recurring.agreement-activated.v1"); st != http.StatusNoContent {
				t.Fatalf("late activated: %d", st)
			}
		}
		waitAgreement(t, tn, id, "STOPPED")
		ctx := tenancy.With(context.Background(), tn.ID)
		evs, _, err := e.Store.ListEvents(ctx, store.EventFilter{EventType: store.EventPaymentAgreementDeleted,
			Subject: "/paymentagreement/" + id}, store.Page{Limit: 10})
		if err != nil || len(evs) != 1 {
			t.Fatalf("%d PaymentAgreementDeleted (%v), want 1", len(evs), err)
		}
	})
}
