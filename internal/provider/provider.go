// Package provider is the seam between Kadens and the ways subscribers pay:
// one registration per payment-agreement provider type (Invoice, EHF, OIO,
// External today; Autogiro and AvtaleGiro next), each a small package under
// internal/provider/ (or its own integration package) that fills a Provider
// with function values. The API checks agreements through the registry, and
// the outbox consumer of invoice events calls the collector and delivery
// hooks of the invoice's provider (Dispatcher). Adding a provider is one
// package plus one line in internal/server/providers.go
// (docs/ARCHITECTURE.md, "Where a new payment provider goes").
package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/checkdigit"
	"github.com/kadens/kadens/internal/validation"
)

// Field names a provider's checker uses in its validation errors; the API
// places them under the request's prefix ("" or "paymentAgreement.").
const (
	FieldReference     = "providerAgreementReference"
	FieldPaymentMethod = "paymentMethod"
)

// MethodEInvoice is the payment method of e-invoice agreements (EHF, OIO).
const MethodEInvoice = "eInvoice"

// Agreement is the part of a payment agreement its provider judges: the
// reference (trimmed, at most 200 characters of single-line text) and the
// payment method as given (trimmed; "" when left out).
type Agreement struct {
	Reference     string
	PaymentMethod string
}

// Invoice names the invoice a collector hook acts on (and, for
// InvoiceCredited, the credit note on it). A hook gets ids, not documents,
// and reads what it needs itself, so the same call can come from a direct
// call or from the outbox consumer after a restart: hooks must be
// idempotent for the same (TenantID, InvoiceID, CreditNoteID). EventID is
// the outbox event that caused the call ("" for a direct call), usable as
// an idempotency key towards a bank.
type Invoice struct {
	TenantID     string
	InvoiceID    string
	CreditNoteID string
	AgreementID  string
	EventID      string
	// Now is the tenant's time when the event is handled (a test tenant's
	// clock): the "today" of a collection's earliest date.
	Now time.Time
}

// Document kinds a delivery hook receives.
const (
	DocumentInvoice    = "Invoice"
	DocumentCreditNote = "CreditNote"
)

// Document names an issued document to deliver (an e-invoice to send over
// Peppol): its kind, its id and the invoice it belongs to (the same id for an
// invoice). Delivery hooks must be idempotent for the same (TenantID, Kind,
// ID), like collector hooks.
type Document struct {
	TenantID    string
	Kind        string
	ID          string
	InvoiceID   string
	AgreementID string
	EventID     string
	// Now is the tenant's time when the event is handled.
	Now time.Time
}

// Provider is one payment-agreement provider type: function values, each
// optional except Check. There is no interface: the providers share no
// state and differ only in which of these they fill.
type Provider struct {
	// Type is the canonical provider type ("EHF"), as stored and sent.
	Type string
	// Check checks an agreement of this type and puts it in canonical form
	// in place (reference without spaces, method defaulted). Bad input is a
	// validation.Errors naming FieldReference or FieldPaymentMethod, every
	// problem at once; any other error is a failure of the check itself.
	Check func(ctx context.Context, a *Agreement) error
	// UniqueReference: a live agreement's reference is unique among the
	// tenant's live agreements of this type (External). The API refuses a
	// taken one before writing; the schema must enforce it too (a partial
	// unique index, as migration 00009 has for External).
	UniqueReference bool
	// Mandate (optional) resolves INFO-Subscription's providerAgreementId
	// for this type: the provider-side agreement (a direct-debit mandate)
	// with id in the context's tenant, as the names a reference given
	// beside it may use, the id first. No such mandate is
	// store.ErrNotFound. A type without it has no provider-side record.
	Mandate func(ctx context.Context, id string) (names []string, err error)
	// InvoiceIssued (collector, optional) is called after an invoice whose
	// agreement is of this type was issued: direct debit submits its
	// collection here.
	InvoiceIssued func(ctx context.Context, inv Invoice) error
	// InvoiceCredited (collector, optional) is called after a credit note
	// on such an invoice was issued: direct debit cancels or reduces a
	// collection not yet made.
	InvoiceCredited func(ctx context.Context, inv Invoice) error
	// Deliver (optional) sends an issued invoice or credit note of such an
	// agreement to the recipient (Peppol for EHF and OIO).
	Deliver func(ctx context.Context, doc Document) error

	// The mandate lifecycle, Kadens to the provider. A provider that keeps
	// an agreement of its own at its side (a Vipps agreement) starts it when
	// Kadens' agreement is created and stops it when Kadens' agreement
	// ends; both run from the outbox after the agreement's transaction
	// committed (Dispatcher), at least once, so they must be idempotent for
	// the same (TenantID, AgreementID). The other direction, the provider
	// ending Kadens' agreements when its mandate ends (a bank's
	// cancellation, a stop in an app), is store.Tx.DeleteAgreementsOf: one
	// definition for every provider.

	// AgreementCreated (optional) is called after an agreement of this type
	// was created (POST /paymentagreement, an order's new agreement, an
	// import).
	AgreementCreated func(ctx context.Context, a AgreementRef) error
	// AgreementDeleted (optional) is called after an agreement of this type
	// was deleted (DELETE /paymentagreement, its mandate ended).
	AgreementDeleted func(ctx context.Context, a AgreementRef) error
	// SubscriptionEnded (optional) is called after a subscription period
	// paid through an agreement of this type was deactivated (a
	// cancellation took effect, a payment stop, an automatic stop): a
	// provider whose agreement is a subscription of its own at the
	// provider (Vipps) ends it when no live subscription uses it any more.
	SubscriptionEnded func(ctx context.Context, a AgreementRef) error

	// The inbound side, the provider to Kadens: what it sends on its own.

	// Callback (optional) receives the provider's HTTP notifications
	// (webhooks: an agreement approved or stopped, a charge made) at
	// POST /provider/{type}/callback/{tenantId} on the main listener
	// (CallbackHandler). The provider verifies the request itself (its
	// signature scheme); a request it refuses is a validation.Errors (400)
	// or ErrUnauthenticated (401). It should record the notification
	// and act on it from the outbox rather than in the request, so a slow
	// step never makes the provider resend.
	Callback func(ctx context.Context, c Callback) error
	// Poll (optional) asks the provider's side for what a callback or a
	// file may have missed (AvtaleGiro's bank-side interface; Vipps'
	// agreement and charge states), every Poll.Every, from the process's
	// background work (Pollers).
	Poll *Poll
}

// AgreementRef names the payment agreement a lifecycle hook acts on. Like
// the collector hooks', it carries ids, not the record: the hook reads
// what it needs (the agreement stays readable after its deletion).
type AgreementRef struct {
	TenantID     string
	AgreementID  string
	SubscriberID string
	// EventID is the outbox event that caused the call, usable as an
	// idempotency key towards the provider.
	EventID string
	// Now is the tenant's time when the event is handled.
	Now time.Time
}

// Callback is one inbound notification from a provider: the tenant it was
// addressed to (its URL names it, and the tenant is known), and the request
// as sent, its body read in full (at most CallbackLimit bytes).
type Callback struct {
	TenantID string
	Header   http.Header
	Body     []byte
	// Host and Target are the request's Host and its path with query as
	// sent (RequestURI), which signature schemes over the request line
	// cover (Vipps' HMAC signs both).
	Host   string
	Target string
	// Received is the wall-clock time the request arrived.
	Received time.Time
}

// ErrUnauthenticated is what a Callback returns for a request whose
// signature or credentials it does not accept: a 401 without a body, so
// nothing about the scheme is told to a caller who got it wrong.
var ErrUnauthenticated = errors.New("provider: callback not authenticated")

// Poll is a provider's periodic reconciliation: Run every Every (the
// first at once), each run's error logged and the next run kept.
type Poll struct {
	Every time.Duration
	Run   func(ctx context.Context) error
}

// Registry holds the registered providers by type.
type Registry struct {
	byType map[string]Provider
	order  []string
}

// NewRegistry registers providers in order (the order error messages list
// them in). A type registered twice or without a checker is a programming
// error: it panics, at start.
func NewRegistry(providers ...Provider) *Registry {
	r := &Registry{byType: map[string]Provider{}}
	for _, p := range providers {
		if p.Type == "" || p.Check == nil {
			panic(fmt.Sprintf("provider: %q registered without a type or a checker", p.Type))
		}
		if _, dup := r.byType[p.Type]; dup {
			panic(fmt.Sprintf("provider: %s registered twice", p.Type))
		}
		r.byType[p.Type] = p
		r.order = append(r.order, p.Type)
	}
	return r
}

// Lookup returns the provider of type typ, matched ignoring case (the
// contract's provider types are case-insensitive).
func (r *Registry) Lookup(typ string) (Provider, bool) {
	if p, ok := r.byType[typ]; ok {
		return p, true
	}
	for _, t := range r.order {
		if strings.EqualFold(t, typ) {
			return r.byType[t], true
		}
	}
	return Provider{}, false
}

// Events are the outbox event kinds the Dispatcher needs for the hooks
// registered: the invoice kinds when a provider has a collector or delivery
// hook, the agreement kinds when one has a lifecycle hook; nil when none
// has any (no consumer is worth registering then). Only kinds some hook
// acts on are queued, so Kadens without such a provider queues no work for
// every agreement it creates.
func (r *Registry) Events() []string {
	var invoices, agreements, subscriptions bool
	for _, p := range r.byType {
		invoices = invoices || p.InvoiceIssued != nil || p.InvoiceCredited != nil || p.Deliver != nil
		agreements = agreements || p.AgreementCreated != nil || p.AgreementDeleted != nil
		subscriptions = subscriptions || p.SubscriptionEnded != nil
	}
	var kinds []string
	if invoices {
		kinds = append(kinds, invoiceEvents...)
	}
	if agreements {
		kinds = append(kinds, agreementEvents...)
	}
	if subscriptions {
		kinds = append(kinds, subscriptionEvents...)
	}
	return kinds
}

// Polls are the registered providers' periodic reconciliations, by type,
// in registration order.
func (r *Registry) Polls() map[string]Poll {
	out := map[string]Poll{}
	for _, t := range r.order {
		if p := r.byType[t].Poll; p != nil && p.Run != nil && p.Every > 0 {
			out[t] = *p
		}
	}
	return out
}

// Types lists the registered types in registration order.
func (r *Registry) Types() []string { return append([]string(nil), r.order...) }

// FixedMethod is the payment method rule of a provider that has exactly one
// (want): a given method must be want (ignoring case); none means want.
func FixedMethod(errs *validation.Errors, a *Agreement, typ, want string) {
	if a.PaymentMethod != "" && !strings.EqualFold(a.PaymentMethod, want) {
		errs.Add(FieldPaymentMethod, "must be %s for %s agreements", want, typ)
	}
	a.PaymentMethod = want
}

// Identifier checks a required invoice-network identifier in a.Reference
// with check (a checkdigit function) and stores its canonical form. need
// says what is required; what names the kind in check digit errors.
func Identifier(errs *validation.Errors, a *Agreement, need, what string, check func(string) (string, error)) {
	ref := a.Reference
	if ref == "" {
		errs.Add(FieldReference, "is required: %s", need)
		return
	}
	got, err := check(ref)
	var fe *checkdigit.FormatError
	switch {
	case errors.As(err, &fe):
		errs.Add(FieldReference, "%q must be %s", ref, need)
	case errors.Is(err, checkdigit.ErrCheckDigit):
		errs.Add(FieldReference, "%q is not %s: the check digit does not match", ref, what)
	case err != nil:
		errs.Add(FieldReference, "%q is not %s: %v", ref, what, err)
	}
	a.Reference = got
}
