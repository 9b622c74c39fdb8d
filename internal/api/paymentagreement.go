package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/swaggest/jsonschema-go"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/app"
	"github.com/kadens/kadens/internal/provider"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// maxImportRows bounds POST /paymentagreement/import: one transaction
// writes them all.
const maxImportRows = 1000

// AgreementParamsInput describes a payment agreement: the body of POST
// /paymentagreement without the subscriber, and what an order may carry
// instead of a paymentAgreementId.
type AgreementParamsInput struct {
	ProviderType               *string `json:"providerType" required:"true" enum:"Invoice,EHF,OIO,External,Autogiro,AvtaleGiro,Vipps" example:"EHF" description:"Case-insensitive. Autogiro and AvtaleGiro take the id of an active mandate as providerAgreementReference and the method DirectDebit. Vipps takes no reference (a new agreement is drafted; its vippsConfirmationUrl is at GET /vipps/agreement/{id}) or the id of an ACTIVE Vipps agreement to import, and the method Vipps."`
	ProviderAgreementReference *string `json:"providerAgreementReference" maxLength:"200" example:"923609016" description:"EHF: the recipient's Norwegian organization number (9 digits, MOD11). OIO: a Danish CVR number (8 digits) or a GLN (13 digits, GS1 check digit). External: the integrator's reference, unique among the tenant's live External agreements. Invoice: none. Spaces inside numbers are removed."`
	PaymentMethod              *string `json:"paymentMethod" example:"eInvoice" description:"EHF and OIO: eInvoice (the default). Invoice: BankTransfer (the default). External: the integrator's label (default External)."`
	ProviderAgreementID        *string `json:"providerAgreementId" format:"uuid" description:"INFO-Subscription's link to the provider-side agreement: for AvtaleGiro and Autogiro the mandate's id, which Kadens then keeps as providerAgreementReference (a providerAgreementReference given beside it must be that mandate's KID, payer number or id). Other provider types have no provider-side record: 400."`
}

// PaymentAgreementInput is the body of POST /paymentagreement and a row of
// POST /paymentagreement/import: exactly the contract's fields.
type PaymentAgreementInput struct {
	SubscriberID               *string `json:"subscriberId" required:"true" format:"uuid" description:"A subscriber of the tenant."`
	ProviderType               *string `json:"providerType" required:"true" enum:"Invoice,EHF,OIO,External,Autogiro,AvtaleGiro,Vipps" example:"EHF" description:"Case-insensitive. Autogiro and AvtaleGiro take the id of an active mandate as providerAgreementReference and the method DirectDebit. Vipps takes no reference (a new agreement is drafted; its vippsConfirmationUrl is at GET /vipps/agreement/{id}) or the id of an ACTIVE Vipps agreement to import, and the method Vipps."`
	ProviderAgreementReference *string `json:"providerAgreementReference" maxLength:"200" example:"923609016" description:"EHF: the recipient's Norwegian organization number (9 digits, MOD11). OIO: a Danish CVR number (8 digits) or a GLN (13 digits, GS1 check digit). External: the integrator's reference, unique among the tenant's live External agreements. Invoice: none. Spaces inside numbers are removed."`
	PaymentMethod              *string `json:"paymentMethod" example:"eInvoice" description:"EHF and OIO: eInvoice (the default). Invoice: BankTransfer (the default). External: the integrator's label (default External)."`
	ProviderAgreementID        *string `json:"providerAgreementId" format:"uuid" description:"INFO-Subscription's link to the provider-side agreement: for AvtaleGiro and Autogiro the mandate's id, which Kadens then keeps as providerAgreementReference (a providerAgreementReference given beside it must be that mandate's KID, payer number or id). Other provider types have no provider-side record: 400."`
}

func (in PaymentAgreementInput) params() AgreementParamsInput {
	return AgreementParamsInput{ProviderType: in.ProviderType, ProviderAgreementReference: in.ProviderAgreementReference,
		PaymentMethod: in.PaymentMethod, ProviderAgreementID: in.ProviderAgreementID}
}

// ChangePaymentAgreementInput is the body of POST
// /subscription/{id}/changePaymentAgreement.
type ChangePaymentAgreementInput struct {
	PaymentAgreementID *string `json:"paymentAgreementId" required:"true" format:"uuid" description:"A live payment agreement of the subscription's subscriber."`
}

type changeAgreementRequest struct {
	apikit.IDParam
	ChangePaymentAgreementInput
}

// ImportReport is the answer of POST /paymentagreement/import.
type ImportReport struct {
	Created  int               `json:"created"`
	Skipped  int               `json:"skipped"`
	Rejected int               `json:"rejected"`
	Rows     []ImportRowResult `json:"rows" description:"One per row, in the order sent."`
}

// ImportRowResult is what the import did with one row.
type ImportRowResult struct {
	Index  int     `json:"index" description:"The row's position in the request, from 0."`
	Status string  `json:"status" enum:"Created,Skipped,Rejected" description:"Skipped: a live agreement with the same providerType and providerAgreementReference (Invoice: the subscriber's Invoice agreement) already exists for the subscriber; id is that agreement."`
	ID     *string `json:"id" description:"The agreement created or found; null when rejected."`
	// Errors name the row's fields, as a 400 of POST /paymentagreement would.
	Errors []validation.FieldError `json:"errors"`
}

type agreementListParams struct {
	apikit.ListParams
	SubscriberID               string `query:"subscriberId" format:"uuid" description:"Only agreements of this subscriber."`
	ProviderType               string `query:"providerType" description:"Only agreements of this provider type (case-insensitive): Invoice, EHF, OIO, External, Autogiro, AvtaleGiro or Vipps. The provider types of INFO-Subscription Kadens does not offer (SwedbankPay, MobilePay, VippsMobilePay, eFaktura, BetalingsService, PayEx) match no agreement: 200 with []. Anything else is a 400."`
	ProviderAgreementReference string `query:"providerAgreementReference" description:"Only agreements with this reference (exact, after removing spaces)."`
	IncludeDeleted             bool   `query:"includeDeleted" description:"List deleted agreements too (default: only live ones)."`
}

func (s *Server) paymentAgreementRoutes() {
	const tag = "PaymentAgreement"
	s.add(route{
		method: http.MethodPost, path: "/paymentagreement", id: "createPaymentAgreement", tag: tag,
		summary: "Create a payment agreement",
		desc: "Checks the reference by provider type, reporting every problem at once (400 naming the field): EHF takes a " +
			"Norwegian organization number (9 digits, MOD11 check digit), OIO a Danish CVR number (8 digits, modulus 11) or a " +
			"GLN (13 digits, GS1 check digit), both with paymentMethod `eInvoice`; External any reference up to 200 characters " +
			"that no live External agreement of the tenant has; Invoice no reference. Autogiro and AvtaleGiro are not supported " +
			"yet. The subscriber must exist in the tenant. Records PaymentAgreementCreated. A subscriber has one live Invoice " +
			"agreement: asking for another answers 200 with the existing one's id (and Location) and creates nothing.",
		request: new(PaymentAgreementInput),
		responses: common(respCreated, response{status: http.StatusOK, body: "", desc: "Invoice agreement that already existed; the body is its id.",
			headers: map[string]string{"Location": "Address of the existing agreement."}}),
		handle: s.createPaymentAgreement,
	})
	s.add(route{
		method: http.MethodPost, path: "/paymentagreement/import", id: "importPaymentAgreements", tag: tag,
		summary: "Import payment agreements made outside Kadens",
		desc: fmt.Sprintf("A JSON array of up to %d agreements, each with the fields and checks of POST /paymentagreement. "+
			"Idempotent by (providerType, providerAgreementReference) within the tenant (an Invoice agreement by its subscriber): "+
			"a row whose agreement the subscriber already has is Skipped with that agreement's id, so an import can be sent again. "+
			"A reference another subscriber's live agreement holds, or an invalid row, is Rejected with errors naming the row's "+
			"fields. The created rows are written in one transaction, each with PaymentAgreementCreated. Answers 200 with the "+
			"per-row report; a body that is not an array, or holds more than %d rows, is a 400.", maxImportRows, maxImportRows),
		request:   new([]PaymentAgreementInput),
		responses: common(response{status: http.StatusOK, body: new(ImportReport)}),
		handle:    s.importPaymentAgreements,
	})
	s.add(route{
		method: http.MethodGet, path: "/paymentagreement", id: "listPaymentAgreements", tag: tag,
		summary: "List payment agreements", desc: "Oldest first; live agreements unless includeDeleted. Filters combine with AND.",
		request:   new(agreementListParams),
		responses: common(respList(new([]store.PaymentAgreement))),
		handle:    s.listPaymentAgreements,
	})
	s.add(route{
		method: http.MethodGet, path: "/paymentagreement/{id}", id: "getPaymentAgreement", tag: tag,
		summary: "Get a payment agreement", desc: "Deleted agreements stay readable (deletedAt set): invoices refer to them.",
		request:   new(apikit.IDParam),
		responses: common(response{status: http.StatusOK, body: new(store.PaymentAgreement)}, respNotFound),
		handle:    apikit.GetOne(s.app.PaymentAgreement),
	})
	s.add(route{
		method: http.MethodDelete, path: "/paymentagreement/{id}", id: "deletePaymentAgreement", tag: tag,
		summary: "Delete a payment agreement",
		desc: "Marks the agreement deleted and records PaymentAgreementDeleted, in one transaction. Every subscription period " +
			"using it that has not ended (the running one, one created ahead by a renewal, one not started yet) moves to the " +
			"subscriber's Invoice agreement, created if missing; later renewals inherit that. Invoices already issued keep the " +
			"agreement they were issued with. The Invoice agreement itself cannot be deleted while such a period uses it (400 " +
			"naming `id`). Deleting a deleted agreement changes nothing and answers 204 again.",
		request:   new(apikit.IDParam),
		responses: common(respNoContent, respNotFound),
		handle:    s.deletePaymentAgreement,
	})
	s.add(route{
		method: http.MethodPost, path: "/subscription/{id}/changePaymentAgreement", id: "changePaymentAgreement", tag: "Subscription",
		summary: "Assign a payment agreement to a subscription",
		desc: "The agreement must be a live agreement of the subscription's subscriber (else 400 naming `paymentAgreementId`). " +
			"This period, if it has not ended, and every later period of the subscription that has not ended (a period created " +
			"ahead by a renewal, the series a plan change began) take the agreement, and every later renewal inherits it, so " +
			"the next invoices carry it. An invoice already issued is a document and keeps its agreement, also when its period " +
			"(created ahead) now has the new one. A subscription whose periods have all ended or were cancelled is a 400 naming " +
			"`id`. Answers 204; GET /subscription/{id} shows the agreement as `paymentAgreementId`. Records no event.",
		request:   new(changeAgreementRequest),
		responses: common(respNoContent, respNotFound),
		handle:    s.changePaymentAgreement,
	})
}

// providerTypes are the provider types the API knows, in their canonical
// spelling: what a list may filter on.
var providerTypes = app.ProviderTypes

// canonicalProvider returns the canonical spelling of provider type v
// (matched ignoring case), or "".
func canonicalProvider(v string) string { return app.KnownProviderType(v) }

// agreementParams reads what the agreement parameters' syntax says,
// recording problems in errs with field names under prefix.
func agreementParams(errs *validation.Errors, prefix string, in AgreementParamsInput) app.AgreementParams {
	return app.AgreementParams{
		ProviderType:        apikit.Trimmed(in.ProviderType),
		Reference:           apikit.Text(errs, prefix+provider.FieldReference, in.ProviderAgreementReference, 200, false),
		PaymentMethod:       apikit.Text(errs, prefix+provider.FieldPaymentMethod, in.PaymentMethod, 100, false),
		ProviderAgreementID: normID(in.ProviderAgreementID),
	}
}

// newAgreement reads a POST /paymentagreement body (or an import row).
func newAgreement(in PaymentAgreementInput) app.NewAgreement {
	var errs validation.Errors
	sub := requiredID(&errs, "subscriberId", in.SubscriberID)
	params := agreementParams(&errs, "", in.params())
	return app.NewAgreement{SubscriberID: sub, Params: params, Invalid: errs}
}

func (s *Server) createPaymentAgreement(w http.ResponseWriter, r *http.Request) error {
	var in PaymentAgreementInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	out, created, err := s.app.CreatePaymentAgreement(r.Context(), newAgreement(in))
	if err != nil {
		return err
	}
	if !created {
		w.Header().Set("Location", s.baseURL+"/paymentagreement/"+out.ID)
		apikit.WriteJSON(w, http.StatusOK, out.ID)
		return nil
	}
	s.created(w, "/paymentagreement/"+out.ID, out.ID)
	return nil
}

func (s *Server) listPaymentAgreements(w http.ResponseWriter, r *http.Request) error {
	var errs validation.Errors
	p := apikit.Page(r, &errs)
	q := r.URL.Query()
	f := store.AgreementFilter{SubscriberID: strings.ToLower(strings.TrimSpace(queryFold(q, "subscriberId")))}
	none := false // a provider type Kadens does not offer: no agreement has it
	if f.SubscriberID != "" && !store.ValidID(f.SubscriberID) {
		errs.Add("subscriberId", "must be a uuid")
	}
	if v := strings.TrimSpace(queryFold(q, "providerType")); v != "" {
		if f.ProviderType = canonicalProvider(v); f.ProviderType == "" {
			if _, foreign := apikit.Canonical(v, foreignProviderTypes...); foreign {
				none = true
			} else {
				errs.Add("providerType", "%q is not a provider type: one of %s", v, strings.Join(providerTypes, ", "))
			}
		}
	}
	f.Reference = strings.ReplaceAll(strings.TrimSpace(queryFold(q, "providerAgreementReference")), " ", "")
	if b := apikit.QueryBool(q, "includeDeleted", &errs); b != nil {
		f.IncludeDeleted = *b
	}
	if err := errs.Err(); err != nil {
		return err
	}
	if none {
		s.writeList(w, r, []store.PaymentAgreement{}, "")
		return nil
	}
	list, next, err := s.app.PaymentAgreements(r.Context(), f, p)
	if err != nil {
		return err
	}
	if list == nil {
		list = []store.PaymentAgreement{}
	}
	s.writeList(w, r, list, next)
	return nil
}

func (s *Server) deletePaymentAgreement(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	if err := s.app.DeletePaymentAgreement(r.Context(), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) importPaymentAgreements(w http.ResponseWriter, r *http.Request) error {
	var raw []json.RawMessage
	if err := apikit.DecodeJSON(r, &raw); err != nil {
		return err
	}
	if len(raw) > maxImportRows {
		return validation.Field("body", "holds %d rows; import at most %d at a time", len(raw), maxImportRows)
	}
	rows := make([]app.AgreementRow, len(raw))
	for i, b := range raw {
		var in PaymentAgreementInput
		if err := apikit.DecodeBytes(b, &in, nil); err != nil {
			var errs validation.Errors
			if !errors.As(err, &errs) {
				errs.Add("body", "row %d is not a payment agreement object", i)
			}
			rows[i] = app.AgreementRow{NewAgreement: app.NewAgreement{Invalid: errs}, Unread: true}
			continue
		}
		rows[i].NewAgreement = newAgreement(in)
	}
	results, err := s.app.ImportPaymentAgreements(r.Context(), rows)
	if err != nil {
		return err
	}
	report := ImportReport{Rows: make([]ImportRowResult, len(raw))}
	for i, res := range results {
		row := ImportRowResult{Index: i, Status: res.Status, Errors: []validation.FieldError{}}
		if res.ID != "" {
			id := res.ID
			row.ID = &id
		}
		if len(res.Errors) > 0 {
			row.Errors = res.Errors
		}
		switch row.Status {
		case store.ImportCreated:
			report.Created++
		case store.ImportSkipped:
			report.Skipped++
		default:
			report.Rejected++
		}
		report.Rows[i] = row
	}
	apikit.WriteJSON(w, http.StatusOK, report)
	return nil
}

func (s *Server) changePaymentAgreement(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	var in ChangePaymentAgreementInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	var errs validation.Errors
	agreement := requiredID(&errs, "paymentAgreementId", in.PaymentAgreementID)
	if err := errs.Err(); err != nil {
		return err
	}
	if err := s.app.ChangePaymentAgreement(r.Context(), id, agreement); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// PrepareJSONSchema adds an example to the agreement body schema.
func (PaymentAgreementInput) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithExamples(json.RawMessage(`{"subscriberId": "0190a3c2-7a1e-7c3b-9d1e-2f3a4b5c6d71", "providerType": "EHF",
  "providerAgreementReference": "923609016", "paymentMethod": "eInvoice"}`))
	return nil
}
