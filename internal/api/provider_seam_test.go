package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
)

// TestProviderSeamKeepsTheWords: the rules moved from a switch in the API
// to the registered providers (internal/provider) with every 400 worded as
// before, for agreements and for an order's paymentAgreement.
func TestProviderSeamKeepsTheWords(t *testing.T) {
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		tn := e.Tenant
		sub := create(t, tn, "/subscriber", map[string]any{"name": "Kari Nordmann"})
		for _, c := range []struct {
			body map[string]any
			want string // field: message|field: message
		}{
			{map[string]any{"providerType": "autogiro", "providerAgreementReference": "1234"},
				`providerAgreementReference: must be the id of an Autogiro mandate of this tenant; "1234" is none`},
			{map[string]any{"providerType": "AvtaleGiro", "providerAgreementReference": "1234", "paymentMethod": "Card"},
				"paymentMethod: must be DirectDebit for AvtaleGiro agreements"},
			{map[string]any{"providerType": "Vipps"},
				"providerType: Vipps needs the tenant's Vipps merchant first (PUT /vipps/merchant)"},
			{map[string]any{"providerType": "Klarna"},
				`providerType: "Klarna" is not a provider type: one of Invoice, EHF, OIO, External, Autogiro, AvtaleGiro, Vipps`},
			{map[string]any{"providerType": " "},
				"providerType: is required: one of Invoice, EHF, OIO, External, Autogiro, AvtaleGiro, Vipps"},
			{map[string]any{"providerType": "ehf", "providerAgreementReference": "923609017", "paymentMethod": "Card"},
				`providerAgreementReference: "923609017" is not a Norwegian organization number: the check digit does not match|` +
					"paymentMethod: must be eInvoice for EHF agreements"},
			{map[string]any{"providerType": "OIO", "providerAgreementReference": "12"},
				`providerAgreementReference: "12" must be a Danish CVR number (8 digits) or a GLN (13 digits)`},
			{map[string]any{"providerType": "Invoice", "providerAgreementReference": "1"},
				"providerAgreementReference: must be empty for Invoice agreements: the subscriber pays by bank transfer with the invoice's KID"},
		} {
			body := map[string]any{"subscriberId": sub}
			for k, v := range c.body {
				body[k] = v
			}
			if got := messages(t, tn.Do("POST", "/paymentagreement", body)); got != c.want {
				t.Errorf("%v:\n got %s\nwant %s", c.body, got, c.want)
			}
		}

		// The same checker names an order's fields under paymentAgreement.
		f := newOrderFixture(t, e, tn)
		order := f.order()
		order["paymentAgreement"] = map[string]any{"providerType": "External"}
		if got, want := messages(t, tn.Do("POST", "/order", order)),
			"paymentAgreement.providerAgreementReference: is required: the integrator's reference of the agreement"; got != want {
			t.Errorf("order:\n got %s\nwant %s", got, want)
		}
		// External references stay unique, named by the registered type.
		create(t, tn, "/paymentagreement", map[string]any{"subscriberId": sub, "providerType": "External", "providerAgreementReference": "psp-1"})
		order["paymentAgreement"] = map[string]any{"providerType": "external", "providerAgreementReference": "psp-1"}
		if got := messages(t, tn.Do("POST", "/order", order)); !strings.HasPrefix(got,
			`paymentAgreement.providerAgreementReference: "psp-1" is the reference of External agreement `) {
			t.Errorf("taken reference: %s", got)
		}
	})
}

func messages(t *testing.T, r *apitest.Response) string {
	t.Helper()
	if r.Status != http.StatusBadRequest {
		t.Fatalf("want 400, got %d: %s", r.Status, r.Body)
	}
	var v apitest.Validation
	r.JSON(t, &v)
	var out []string
	for _, e := range v.Errors {
		out = append(out, e.Field+": "+e.Message)
	}
	return strings.Join(out, "|")
}
