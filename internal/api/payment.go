package api

import (
	"net/http"
	"strings"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/app"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// PaymentInput is the body of POST /payment: a payment result reported by
// a provider (or entered by hand) for exactly one of an invoice, a payment
// demand or a KID.
type PaymentInput struct {
	InvoiceID       *string        `json:"invoiceId" format:"uuid" description:"The invoice paid. Give exactly one of invoiceId, paymentDemandId and kid."`
	PaymentDemandID *string        `json:"paymentDemandId" format:"uuid" description:"The payment demand paid."`
	KID             *string        `json:"kid" description:"The invoice's payment reference (KID) the payer used." example:"00000000018"`
	OrganizationID  *string        `json:"organizationId" format:"uuid" description:"The organization whose invoice the KID names; required when the KID matches invoices of several organizations."`
	Status          *string        `json:"status" required:"true" enum:"Succeeded,Failed" description:"The result (case-insensitive on input)."`
	Amount          *apikit.Number `json:"amount" required:"true" description:"Amount (> 0) in the payment demand's currency, with at most its minor-unit decimals." example:"248.00"`
	Currency        *string        `json:"currency" required:"true" description:"ISO 4217 code; must be the payment demand's currency." example:"NOK"`
	PaidAt          *string        `json:"paidAt" format:"date-time" description:"Value date and time. Default: now on the tenant's clock."`
	Provider        *string        `json:"provider" required:"true" maxLength:"100" description:"Who reports the payment, e.g. External, Bank, Manual." example:"External"`
	// ProviderReference with Provider identifies the payment: a repeated
	// report is answered with the first payment.
	ProviderReference  *string `json:"providerReference" required:"true" maxLength:"200" description:"The provider's id of the payment; reporting the same provider and reference again is idempotent." example:"pi_3NpQ2f"`
	FailureReason      *string `json:"failureReason" maxLength:"500" description:"Why the payment failed (only with status Failed)." example:"Insufficient funds"`
	PaymentAgreementID *string `json:"paymentAgreementId" format:"uuid" description:"The subscriber's payment agreement the payment was made under."`
	// MatchingType, SubscriberID and ExternalInvoiceIdentifier identify the
	// payment the ways INFO-Subscription's payment registration does
	// (docs/MIGRATION.md "Payment matching").
	MatchingType              *string `json:"matchingType" enum:"UseSubscriberAndInvoice,UseExternalIdentifier,UseSubscriberFromExternalIdentifier,NoInvoiceMatch,UseBillingAccount" description:"How the payment is identified. UseSubscriberAndInvoice: invoiceId and subscriberId, which must be the invoice's subscriber. UseExternalIdentifier: externalInvoiceIdentifier (the invoice number or KID the payer used). UseSubscriberFromExternalIdentifier: externalInvoiceIdentifier names only the subscriber; the payment settles that subscriber's one outstanding demand of exactly this amount, else 400. Left out: by invoiceId, paymentDemandId, kid or externalInvoiceIdentifier, whichever is given. NoInvoiceMatch and UseBillingAccount are refused (400): a Kadens payment always settles a named demand."`
	SubscriberID              *string `json:"subscriberId" format:"uuid" description:"The payer; when given it must be the subscriber of the invoice the payment is matched to (400 otherwise)."`
	ExternalInvoiceIdentifier *string `json:"externalInvoiceIdentifier" maxLength:"50" example:"10012347207834" description:"The invoice as the payer named it: its KID or its invoice number (with organizationId when numbers of several organizations match)."`
}

// Matching types of a payment report (INFO-Subscription's names).
const (
	matchSubscriberAndInvoice            = app.MatchSubscriberAndInvoice
	matchExternalIdentifier              = app.MatchExternalIdentifier
	matchSubscriberFromExternalIdentifer = app.MatchSubscriberFromExternalIdentifier
	matchNoInvoice                       = app.MatchNoInvoice
	matchBillingAccount                  = app.MatchBillingAccount
)

type paymentListParams struct {
	apikit.ListParams
	SubscriberID      string `query:"subscriberId" format:"uuid" description:"Only payments of this subscriber."`
	InvoiceID         string `query:"invoiceId" format:"uuid" description:"Only payments of this invoice."`
	PaymentDemandID   string `query:"paymentDemandId" format:"uuid" description:"Only payments of this payment demand."`
	Status            string `query:"status" enum:"Succeeded,Failed"`
	Provider          string `query:"provider"`
	ProviderReference string `query:"providerReference"`
}

func (s *Server) paymentRoutes() {
	const tag = "Payment"
	s.add(route{method: http.MethodPost, path: "/payment", id: "createPayment", tag: tag,
		summary: "Report a payment result",
		desc: "Records a payment result for an invoice, a payment demand or a KID. A success is matched to the demand: " +
			"in full the invoice becomes Paid, in part PartiallyPaid, and what exceeds the outstanding amount becomes an " +
			"allowance on the subscriber account that the next invoices apply. A failure is recorded (PaymentFailed) and " +
			"changes nothing else: dunning goes on. Reporting the same provider and providerReference again answers 200 " +
			"with the first payment's id and changes nothing; the same reference with another status, amount, currency, " +
			"target or paidAt is 409.",
		request: new(PaymentInput), responses: common(respCreated,
			response{status: http.StatusOK, body: "", desc: "Reported before: the body is the first payment's id.",
				headers: map[string]string{"Location": "Address of the payment."}},
			response{status: http.StatusConflict, desc: "The provider reference names a payment with other data."}),
		handle: s.createPayment})
	s.add(route{method: http.MethodGet, path: "/payment/{id}", id: "getPayment", tag: tag, summary: "Get a payment",
		request: new(apikit.IDParam), responses: common(respOK(new(store.Payment)), respNotFound), handle: apikit.GetOne(s.app.Payment)})
	s.add(route{method: http.MethodGet, path: "/payment", id: "listPayments", tag: tag, summary: "List payments",
		request: new(paymentListParams), responses: common(respOK(new([]store.Payment))), handle: s.listPayments})
}

func (s *Server) createPayment(w http.ResponseWriter, r *http.Request) error {
	var in PaymentInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	var errs validation.Errors
	invoiceID := apikit.UUIDField(&errs, "invoiceId", in.InvoiceID)
	demandID := apikit.UUIDField(&errs, "paymentDemandId", in.PaymentDemandID)
	orgID := apikit.UUIDField(&errs, "organizationId", in.OrganizationID)
	agreementID := apikit.UUIDField(&errs, "paymentAgreementId", in.PaymentAgreementID)
	kid := apikit.Trimmed(in.KID)
	if kid != "" && (len(kid) > 25 || strings.Trim(kid, "0123456789") != "") {
		errs.Add("kid", "must be 2 to 25 digits")
	}
	m := s.checkMatching(&errs, in)
	given := 0
	for _, p := range []*string{in.InvoiceID, in.PaymentDemandID, in.KID, in.ExternalInvoiceIdentifier} {
		if apikit.Trimmed(p) != "" {
			given++
		}
	}
	switch {
	case given == 0 && m.kind == "":
		errs.Add("invoiceId", "give one of invoiceId, paymentDemandId, kid and externalInvoiceIdentifier")
	case given > 1:
		for _, f := range []struct {
			name string
			p    *string
		}{{"invoiceId", in.InvoiceID}, {"paymentDemandId", in.PaymentDemandID}, {"kid", in.KID}, {"externalInvoiceIdentifier", in.ExternalInvoiceIdentifier}} {
			if apikit.Trimmed(f.p) != "" {
				errs.Add(f.name, "give only one of invoiceId, paymentDemandId, kid and externalInvoiceIdentifier")
			}
		}
	}
	if orgID != "" && kid == "" && m.external == "" {
		errs.Add("organizationId", "is only for a kid or an externalInvoiceIdentifier")
	}
	status := apikit.OneOf(&errs, "status", in.Status, "", store.PaymentSucceeded, store.PaymentFailed)
	if apikit.Trimmed(in.Status) == "" {
		errs.Add("status", "is required")
	}
	currency := strings.ToUpper(apikit.Trimmed(in.Currency))
	cur, curOK := money.LookupCurrency(currency)
	if currency == "" {
		errs.Add("currency", "is required")
	} else if !curOK {
		errs.Add("currency", "%q is not an ISO 4217 currency code", currency)
	}
	var amount catalog.Amount
	if in.Amount == nil {
		errs.Add("amount", "is required")
	} else if d, err := in.Amount.Decimal(); err != nil {
		errs.Add("amount", "%s", err)
	} else if d.Sign() <= 0 {
		errs.Add("amount", "must be more than 0")
	} else if curOK {
		if amount, err = catalog.ParseAmount(d, cur); err != nil {
			errs.Add("amount", "%s", err)
		}
	}
	paidAt := apikit.TimeField(&errs, "paidAt", in.PaidAt)
	provider := apikit.Text(&errs, "provider", in.Provider, 100, true)
	reference := apikit.Text(&errs, "providerReference", in.ProviderReference, 200, true)
	var reason *string
	if v := apikit.Text(&errs, "failureReason", in.FailureReason, 500, false); v != "" {
		if status == store.PaymentSucceeded {
			errs.Add("failureReason", "is only for a Failed payment")
		}
		reason = &v
	}
	if err := errs.Err(); err != nil {
		return err
	}

	np := app.NewPayment{InvoiceID: invoiceID, PaymentDemandID: demandID, KID: kid, OrganizationID: orgID,
		Matching: m.kind, ExternalInvoiceIdentifier: m.external, SubscriberID: m.subscriber,
		Status: status, Amount: amount.Minor, Currency: currency, PaidAt: paidAt,
		Provider: provider, ProviderReference: reference, FailureReason: reason, PaymentAgreementID: agreementID}
	p, created, err := s.app.RecordPayment(r.Context(), np)
	if err != nil {
		return err
	}
	if !created {
		w.Header().Set("Location", s.baseURL+"/payment/"+p.ID)
		apikit.WriteJSON(w, http.StatusOK, p.ID)
		return nil
	}
	s.created(w, "/payment/"+p.ID, p.ID)
	return nil
}

func (s *Server) listPayments(w http.ResponseWriter, r *http.Request) error {
	var errs validation.Errors
	p := apikit.Page(r, &errs)
	q := r.URL.Query()
	f := store.PaymentFilter{SubscriberID: apikit.QueryID(q, "subscriberId", &errs), InvoiceID: apikit.QueryID(q, "invoiceId", &errs),
		PaymentDemandID: apikit.QueryID(q, "paymentDemandId", &errs), Provider: q.Get("provider"), ProviderReference: q.Get("providerReference")}
	status := q.Get("status")
	f.Status = apikit.OneOf(&errs, "status", &status, "", store.PaymentSucceeded, store.PaymentFailed)
	if err := errs.Err(); err != nil {
		return err
	}
	ps, next, err := s.app.Payments(r.Context(), f, p)
	if err != nil {
		return err
	}
	s.writeList(w, r, ps, next)
	return nil
}
