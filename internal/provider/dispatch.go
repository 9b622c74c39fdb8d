package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// The outbox event kinds the Dispatcher acts on; Registry.Events says
// which of them its consumer needs.
var (
	invoiceEvents      = []string{store.EventInvoiceIssued, store.EventCreditNoteIssued}
	agreementEvents    = []string{store.EventPaymentAgreementCreated, store.EventPaymentAgreementDeleted}
	subscriptionEvents = []string{store.EventSubscriptionDeactivated}
)

// Dispatcher calls the hooks of an invoice's provider for the outbox events
// about it: InvoiceIssued → InvoiceIssued and Deliver (the invoice),
// CreditNoteIssued → InvoiceCredited and Deliver (the credit note); and the
// lifecycle hooks of an agreement's provider: PaymentAgreementCreated →
// AgreementCreated, PaymentAgreementDeleted → AgreementDeleted,
// SubscriptionDeactivated → SubscriptionEnded (the period's agreement's
// provider). It is
// meant to be driven by an outbox consumer after the event's transaction
// committed, never inside it: a bank or an access point must not hear of an
// invoice that was rolled back. Handle is idempotent as far as the hooks
// are, so a consumer may deliver an event again after a crash.
type Dispatcher struct {
	Registry *Registry
	Store    *store.Store
	// Now is the wall clock (default time.Now); a test tenant's hooks get
	// its own clock instead (Invoice.Now, Document.Now).
	Now func() time.Time
}

// tenantNow is tenant's time: its clock for a test tenant (as the API
// takes it), else the wall clock.
func (d Dispatcher) tenantNow(ctx context.Context, tenantID string) (time.Time, error) {
	wall := time.Now
	if d.Now != nil {
		wall = d.Now
	}
	t, err := d.Store.TenantByID(ctx, tenantID)
	if err != nil {
		return time.Time{}, err
	}
	return t.Now(wall()), nil
}

// Handle runs the hooks for event ev of tenant tenantID. Events of other
// types, and invoices without an agreement or whose provider registered no
// hook, are nothing to do. A hook's error is returned for the consumer to
// retry.
func (d Dispatcher) Handle(ctx context.Context, tenantID string, ev store.Event) error {
	var data struct {
		InvoiceID    string `json:"invoiceId"`
		CreditNoteID string `json:"creditNoteId"`
	}
	if slices.Contains(agreementEvents, ev.EventType) {
		return d.agreement(ctx, tenantID, ev)
	}
	if ev.EventType == store.EventSubscriptionDeactivated {
		return d.subscriptionEnded(ctx, tenantID, ev)
	}
	if !slices.Contains(invoiceEvents, ev.EventType) {
		return nil
	}
	if err := json.Unmarshal(ev.Data, &data); err != nil {
		return fmt.Errorf("provider: event %s: %w", ev.ID, err)
	}
	ctx = tenancy.With(ctx, tenantID)
	inv, err := d.Store.Invoice(ctx, data.InvoiceID)
	if err != nil {
		return fmt.Errorf("provider: event %s: invoice %s: %w", ev.ID, data.InvoiceID, err)
	}
	if inv.PaymentAgreementID == nil {
		return nil
	}
	a, err := d.Store.PaymentAgreement(ctx, *inv.PaymentAgreementID)
	if err != nil {
		return fmt.Errorf("provider: event %s: agreement %s: %w", ev.ID, *inv.PaymentAgreementID, err)
	}
	p, ok := d.Registry.Lookup(a.ProviderType)
	collect := p.InvoiceIssued
	if ev.EventType == store.EventCreditNoteIssued {
		collect = p.InvoiceCredited
	}
	if !ok || (collect == nil && p.Deliver == nil) {
		return nil // most invoices (Invoice agreements): no tenant read
	}
	now, err := d.tenantNow(ctx, tenantID)
	if err != nil {
		return fmt.Errorf("provider: event %s: tenant time: %w", ev.ID, err)
	}
	ref := Invoice{TenantID: tenantID, InvoiceID: inv.ID, AgreementID: a.ID, EventID: ev.ID, Now: now}
	doc := Document{TenantID: tenantID, Kind: DocumentInvoice, ID: inv.ID, InvoiceID: inv.ID, AgreementID: a.ID, EventID: ev.ID, Now: now}
	if ev.EventType == store.EventCreditNoteIssued {
		ref.CreditNoteID = data.CreditNoteID
		doc.Kind, doc.ID = DocumentCreditNote, data.CreditNoteID
	}
	if collect != nil {
		if err := collect(ctx, ref); err != nil {
			return fmt.Errorf("provider: %s: %s of invoice %s: %w", p.Type, ev.EventType, inv.ID, err)
		}
	}
	if p.Deliver != nil {
		if err := p.Deliver(ctx, doc); err != nil {
			return fmt.Errorf("provider: %s: deliver %s %s: %w", p.Type, doc.Kind, doc.ID, err)
		}
	}
	return nil
}

// agreement runs the lifecycle hook of the agreement's provider. The
// event names the provider type, so an agreement whose provider has no
// such hook (every type today but a provider with its own agreement)
// costs no read.
func (d Dispatcher) agreement(ctx context.Context, tenantID string, ev store.Event) error {
	var data struct {
		AgreementID  string `json:"paymentAgreementId"`
		SubscriberID string `json:"subscriberId"`
		ProviderType string `json:"providerType"`
	}
	if err := json.Unmarshal(ev.Data, &data); err != nil {
		return fmt.Errorf("provider: event %s: %w", ev.ID, err)
	}
	p, ok := d.Registry.Lookup(data.ProviderType)
	hook := p.AgreementCreated
	if ev.EventType == store.EventPaymentAgreementDeleted {
		hook = p.AgreementDeleted
	}
	if !ok || hook == nil {
		return nil
	}
	ctx = tenancy.With(ctx, tenantID)
	now, err := d.tenantNow(ctx, tenantID)
	if err != nil {
		return fmt.Errorf("provider: event %s: tenant time: %w", ev.ID, err)
	}
	ref := AgreementRef{TenantID: tenantID, AgreementID: data.AgreementID, SubscriberID: data.SubscriberID, EventID: ev.ID, Now: now}
	if err := hook(ctx, ref); err != nil {
		return fmt.Errorf("provider: %s: %s of agreement %s: %w", p.Type, ev.EventType, data.AgreementID, err)
	}
	return nil
}

// subscriptionEnded calls SubscriptionEnded of the provider of the
// deactivated period's agreement; a period without an agreement, or whose
// agreement is gone or of a type without the hook, is nothing to do.
func (d Dispatcher) subscriptionEnded(ctx context.Context, tenantID string, ev store.Event) error {
	var data struct {
		SubscriptionID string `json:"subscriptionId"`
	}
	if err := json.Unmarshal(ev.Data, &data); err != nil {
		return fmt.Errorf("provider: event %s: %w", ev.ID, err)
	}
	ctx = tenancy.With(ctx, tenantID)
	sub, err := d.Store.Subscription(ctx, data.SubscriptionID)
	if err != nil {
		return fmt.Errorf("provider: event %s: subscription %s: %w", ev.ID, data.SubscriptionID, err)
	}
	if sub.PaymentAgreementID == nil {
		return nil
	}
	a, err := d.Store.PaymentAgreement(ctx, *sub.PaymentAgreementID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // deleted meanwhile: its own hook ran
	}
	if err != nil {
		return fmt.Errorf("provider: event %s: agreement %s: %w", ev.ID, *sub.PaymentAgreementID, err)
	}
	p, ok := d.Registry.Lookup(a.ProviderType)
	if !ok || p.SubscriptionEnded == nil {
		return nil
	}
	now, err := d.tenantNow(ctx, tenantID)
	if err != nil {
		return fmt.Errorf("provider: event %s: tenant time: %w", ev.ID, err)
	}
	ref := AgreementRef{TenantID: tenantID, AgreementID: a.ID, SubscriberID: a.SubscriberID, EventID: ev.ID, Now: now}
	if err := p.SubscriptionEnded(ctx, ref); err != nil {
		return fmt.Errorf("provider: %s: %s of subscription %s: %w", p.Type, ev.EventType, sub.ID, err)
	}
	return nil
}
