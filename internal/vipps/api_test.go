package vipps_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/vipps/vippstest"
)

// waitAgreement reads GET /vipps/agreement/{id} until its status is want:
// the draft runs from the outbox after the agreement's transaction, so the
// answer comes a moment after the 201.
func waitAgreement(t *testing.T, tn apitest.Tenant, id, want string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		r := tn.Do("GET", "/vipps/agreement/"+id, nil)
		var a map[string]any
		if r.Status == http.StatusOK {
			r.JSON(t, &a)
			if a["status"] == want {
				return a
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("agreement %s: %d %s, want status %s", id, r.Status, r.Body, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestVippsAPI: a merchant set through the API, a Vipps payment agreement
// through POST /paymentagreement drafted at the test server and shown with
// its confirmation URL, other tenants seeing none of it, and DELETE
// stopping the Vipps agreement.
func TestVippsAPI(t *testing.T) {
	apitest.EachWith(t, map[string]string{"KADENS_EGRESS_ALLOW_PRIVATE": "true"}, func(t *testing.T, e *apitest.Env) {
		srv := vippstest.New(t)
		tn := e.Tenant
		if r := tn.Do("GET", "/vipps/merchant", nil); r.Status != http.StatusNotFound {
			t.Fatalf("no merchant yet: %d", r.Status)
		}
		sub := tn.Do("POST", "/subscriber", map[string]any{"name": "Kari Nordmann", "email": "kari@example.no", "country": "NO"}).ID(t)
		if r := tn.Do("POST", "/paymentagreement", map[string]any{"subscriberId": sub, "providerType": "Vipps"}); r.Status != http.StatusBadRequest ||
			!strings.Contains(string(r.Body), "PUT /vipps/merchant") {
			t.Fatalf("Vipps without a merchant: %d %s", r.Status, r.Body)
		}
		bad := tn.Do("PUT", "/vipps/merchant", map[string]any{"clientId": "x", "mode": "sandbox"})
		if bad.Status != http.StatusBadRequest {
			t.Fatalf("bad merchant: %d %s", bad.Status, bad.Body)
		}
		for _, f := range []string{"clientSecret", "subscriptionKey", "merchantSerialNumber", "mode", "productName", "maxAmount"} {
			if !strings.Contains(string(bad.Body), `"`+f+`"`) {
				t.Errorf("the 400 does not name %s: %s", f, bad.Body)
			}
		}
		r := tn.Do("PUT", "/vipps/merchant", map[string]any{"clientId": srv.ClientID, "clientSecret": srv.ClientSecret,
			"subscriptionKey": srv.SubscriptionKey, "merchantSerialNumber": srv.MerchantSerialNumber, "mode": "test", "baseUrl": srv.URL,
			"productName": "Nordavis Digital", "merchantAgreementUrl": "https://nordavis.example/my/",
			"merchantRedirectUrl": "https://nordavis.example/vipps/back", "maxAmount": 50000})
		if r.Status != http.StatusOK || strings.Contains(string(r.Body), srv.ClientSecret) || strings.Contains(string(r.Body), srv.SubscriptionKey) {
			t.Fatalf("set merchant: %d %s", r.Status, r.Body)
		}
		id := tn.Do("POST", "/paymentagreement", map[string]any{"subscriberId": sub, "providerType": "vipps"}).ID(t)
		a := waitAgreement(t, tn, id, "PENDING")
		url, _ := a["vippsConfirmationUrl"].(string)
		vid, _ := a["vippsAgreementId"].(string)
		if !strings.HasPrefix(url, srv.URL) || vid == "" {
			t.Fatalf("drafted agreement %v", a)
		}
		other := e.NewTenant("tenant-b", true)
		if r := other.Do("GET", "/vipps/agreement/"+id, nil); r.Status != http.StatusNotFound {
			t.Fatalf("another tenant read the agreement: %d", r.Status)
		}
		if r := other.Do("GET", "/vipps/merchant", nil); r.Status != http.StatusNotFound {
			t.Fatalf("another tenant read the merchant: %d", r.Status)
		}
		if err := srv.Approve(vid, 0); err != nil {
			t.Fatal(err)
		}
		if r := tn.Do("DELETE", "/paymentagreement/"+id, nil); r.Status != http.StatusNoContent {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		waitAgreement(t, tn, id, "STOPPED")
		if va, _ := srv.Agreement(vid); va.Status != vippstest.AgreementStopped {
			t.Fatalf("at Vipps after DELETE: %s", va.Status)
		}
	})
}
