package vipps

import (
	"context"
	"net/http"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/tenancy"
)

// handlers serve the Vipps operations with what the API lends them.
type handlers struct {
	env  apikit.Env
	wing *Wing
}

// Routes are the Vipps operations of the main API, served and documented
// by package api: the tenant's merchant keys, and the Vipps side of a
// payment agreement (its confirmation URL for the subscriber).
func (w *Wing) Routes(env apikit.Env) []apikit.Route {
	s := handlers{env: env, wing: w}
	const tag = "Vipps"
	return []apikit.Route{
		{Method: http.MethodPut, Path: "/vipps/merchant", ID: "setVippsMerchant", Tag: tag,
			Summary: "Set the tenant's Vipps MobilePay merchant",
			Desc: "The merchant's API keys (client id and secret, subscription key, merchant serial number) and the test or " +
				"production environment. The secret and the subscription key are stored encrypted with the master key and " +
				"never shown again; setting the merchant again replaces them.",
			Request: new(VippsMerchantInput), Responses: []apikit.Response{apikit.OK(new(VippsMerchant))}, Handle: s.setMerchant},
		{Method: http.MethodGet, Path: "/vipps/merchant", ID: "getVippsMerchant", Tag: tag,
			Summary: "Get the tenant's Vipps MobilePay merchant", Desc: "Without its secrets. 404 when none is set.",
			Responses: []apikit.Response{apikit.OK(new(VippsMerchant)), apikit.NotFound}, Handle: s.getMerchant},
		{Method: http.MethodGet, Path: "/vipps/agreement/{id}", ID: "getVippsAgreement", Tag: tag,
			Summary: "Get the Vipps side of a payment agreement",
			Desc: "id is the payment agreement's. vippsConfirmationUrl is where the subscriber approves the agreement in the app; " +
				"it is set once Vipps answered the draft (status PENDING), which happens right after the agreement was " +
				"created (NEW until then).",
			Request: new(apikit.IDParam), Responses: []apikit.Response{apikit.OK(new(VippsAgreement)), apikit.NotFound},
			Handle: apikit.GetOne(func(ctx context.Context, id string) (VippsAgreement, error) {
				tenant, err := tenancy.From(ctx)
				if err != nil {
					return VippsAgreement{}, err
				}
				return AgreementOf(ctx, w.st, tenant, id)
			})},
	}
}

func (s handlers) setMerchant(w http.ResponseWriter, r *http.Request) error {
	var in VippsMerchantInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	m, err := s.wing.SetMerchant(r.Context(), in, s.env.Now())
	if err != nil {
		return err
	}
	apikit.WriteJSON(w, http.StatusOK, m)
	return nil
}

func (s handlers) getMerchant(w http.ResponseWriter, r *http.Request) error {
	m, err := s.wing.GetMerchant(r.Context())
	if err != nil {
		return err
	}
	apikit.WriteJSON(w, http.StatusOK, m)
	return nil
}
