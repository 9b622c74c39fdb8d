package app

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kadens/kadens/internal/provider"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// AgreementParams describe a payment agreement as a surface read them:
// texts trimmed and within their lengths, the rest as given.
type AgreementParams struct {
	// ProviderType is matched ignoring case against the registered types.
	ProviderType  string
	Reference     string
	PaymentMethod string
	// ProviderAgreementID is INFO-Subscription's providerAgreementId (the
	// mandate of a direct-debit agreement), lower-cased; "" when not given.
	ProviderAgreementID string
}

// NewAgreement is a payment agreement to create (CreatePaymentAgreement)
// or a row of an import.
type NewAgreement struct {
	SubscriberID string
	Params       AgreementParams
	// Invalid is what the surface found wrong while reading the input
	// (field names as the surface calls them): the command adds what it
	// finds against the tenant's data after these, and answers them all.
	Invalid validation.Errors
}

// CheckAgreementParams checks p with the checker of its provider type and
// returns the agreement it describes in canonical form and its provider,
// recording every problem in errs with field names under prefix ("" or
// "paymentAgreement."). A failure of a check itself is the error. Creating
// an agreement, an import and an order's new agreement share it.
func (a *App) CheckAgreementParams(ctx context.Context, errs *validation.Errors, prefix string, p AgreementParams) (store.AgreementParams, provider.Provider, error) {
	typeField := prefix + "providerType"
	ag := provider.Agreement{Reference: p.Reference, PaymentMethod: p.PaymentMethod}
	if p.ProviderAgreementID != "" {
		ref, err := a.mandateReference(ctx, errs, prefix, p)
		if err != nil {
			return store.AgreementParams{}, provider.Provider{}, err
		}
		ag.Reference = ref
	}
	raw := p.ProviderType
	prov, ok := a.providers.Lookup(raw)
	switch {
	case ok:
	case raw == "":
		errs.Add(typeField, "is required: one of %s", strings.Join(a.providers.Types(), ", "))
	case KnownProviderType(raw) != "":
		// A type the contract names whose integration is not registered
		// (Autogiro, AvtaleGiro until theirs come): their mandates are
		// checked against the bank's files.
		typ := KnownProviderType(raw)
		errs.Add(typeField, "%s agreements are not supported yet: their mandates come with the %s integration", typ, typ)
	default:
		errs.Add(typeField, "%q is not a provider type: one of %s", raw, strings.Join(a.providers.Types(), ", "))
	}
	if !ok {
		return store.AgreementParams{ProviderType: KnownProviderType(raw)}, prov, nil
	}
	err := prov.Check(ctx, &ag)
	var verrs validation.Errors
	switch {
	case errors.As(err, &verrs):
		for _, fe := range verrs {
			*errs = append(*errs, validation.FieldError{Field: prefix + fe.Field, Message: fe.Message})
		}
	case err != nil:
		return store.AgreementParams{}, prov, fmt.Errorf("app: check %s agreement: %w", prov.Type, err)
	}
	return store.AgreementParams{ProviderType: prov.Type, ProviderAgreementReference: ag.Reference, PaymentMethod: ag.PaymentMethod}, prov, nil
}

// ProviderTypes are the provider types the contract names, in their
// canonical spelling: what a list may filter on. Creating an agreement
// also needs the type's provider to be registered (internal/provider).
var ProviderTypes = []string{store.ProviderInvoice, store.ProviderEHF, store.ProviderOIO, store.ProviderExternal,
	store.ProviderAutogiro, store.ProviderAvtaleGiro, store.ProviderVipps}

// KnownProviderType returns the canonical spelling of provider type v
// (matched ignoring case) among ProviderTypes, or "".
func KnownProviderType(v string) string {
	for _, t := range ProviderTypes {
		if strings.EqualFold(t, v) {
			return t
		}
	}
	return ""
}

// mandateReference resolves INFO-Subscription's providerAgreementId: the
// provider-side agreement, which in Kadens is a mandate of the provider
// (AvtaleGiro, Autogiro) whose id the agreement keeps as its reference. A
// reference given beside it must name the same mandate (one of the names
// the provider knows it by, as INFO-Subscription writes it). Problems are
// recorded in errs; the reference to check is returned.
func (a *App) mandateReference(ctx context.Context, errs *validation.Errors, prefix string, p AgreementParams) (string, error) {
	idField, refField := prefix+"providerAgreementId", prefix+"providerAgreementReference"
	id, ref := p.ProviderAgreementID, p.Reference
	if !store.ValidID(id) {
		errs.Add(idField, "must be a uuid")
		return ref, nil
	}
	prov, ok := a.providers.Lookup(p.ProviderType)
	switch {
	case !ok:
		return ref, nil // the type is reported
	case prov.Mandate == nil:
		errs.Add(idField, "%s agreements have no provider-side agreement in Kadens; leave providerAgreementId out (only AvtaleGiro and Autogiro mandates have one)", prov.Type)
		return ref, nil
	}
	names, err := prov.Mandate(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		errs.Add(idField, "no %s mandate %s in this tenant", prov.Type, id)
		return ref, nil
	} else if err != nil {
		return "", err
	}
	if ref != "" && !containsFold(names, strings.ReplaceAll(ref, " ", "")) {
		errs.Add(refField, "%q is not the reference of mandate %s (%s)", ref, id, strings.Join(names[1:], ", "))
	}
	return id, nil
}

func containsFold(list []string, v string) bool {
	for _, s := range list {
		if strings.EqualFold(s, v) {
			return true
		}
	}
	return false
}

func hasField(errs validation.Errors, field string) bool {
	for _, fe := range errs {
		if fe.Field == field {
			return true
		}
	}
	return false
}

// ReferenceTaken returns the id of the tenant's live agreement of type typ
// holding ref, or "": for providers whose references are unique.
func (a *App) ReferenceTaken(ctx context.Context, typ, ref string) (string, error) {
	list, _, err := a.store.ListPaymentAgreements(ctx, store.AgreementFilter{ProviderType: typ, Reference: ref}, store.Page{Limit: 1})
	if err != nil || len(list) == 0 {
		return "", err
	}
	return list[0].ID, nil
}

// ErrReferenceTaken is the field error of a reference that live agreement
// id (or, when "", another live agreement) of type typ holds.
func ErrReferenceTaken(field, typ, ref, id string) validation.Errors {
	if id == "" {
		return validation.Field(field, "%q is the reference of another live %s agreement of this tenant", ref, typ)
	}
	return validation.Field(field, "%q is the reference of %s agreement %s of this tenant already", ref, typ, id)
}

// checkedAgreement checks in without looking at the tenant's subscribers
// or other agreements: its errors follow in.Invalid.
func (a *App) checkedAgreement(ctx context.Context, in NewAgreement) (store.PaymentAgreement, provider.Provider, validation.Errors, error) {
	errs := append(validation.Errors(nil), in.Invalid...)
	p, prov, err := a.CheckAgreementParams(ctx, &errs, "", in.Params)
	return store.PaymentAgreement{SubscriberID: in.SubscriberID, ProviderType: p.ProviderType,
		ProviderAgreementReference: p.ProviderAgreementReference, PaymentMethod: p.PaymentMethod}, prov, errs, err
}

// CreatePaymentAgreement creates a payment agreement of a subscriber of
// the tenant and says whether it is new: a subscriber has one live Invoice
// agreement, and asking for another answers the existing one and false.
// Every problem is in one validation.Errors (in.Invalid first, then the
// provider's checks, a missing subscriber, a reference another live
// agreement holds).
func (a *App) CreatePaymentAgreement(ctx context.Context, in NewAgreement) (store.PaymentAgreement, bool, error) {
	ag, prov, errs, err := a.checkedAgreement(ctx, in)
	if err != nil {
		return store.PaymentAgreement{}, false, err
	}
	if ag.SubscriberID != "" {
		switch _, err := a.store.Subscriber(ctx, ag.SubscriberID); {
		case errors.Is(err, store.ErrNotFound):
			errs.Add("subscriberId", "no subscriber %s in this tenant", ag.SubscriberID)
		case err != nil:
			return store.PaymentAgreement{}, false, err
		}
	}
	if prov.UniqueReference && ag.ProviderAgreementReference != "" && !hasField(errs, "providerAgreementReference") {
		id, err := a.ReferenceTaken(ctx, prov.Type, ag.ProviderAgreementReference)
		if err != nil {
			return store.PaymentAgreement{}, false, err
		}
		if id != "" {
			errs = append(errs, ErrReferenceTaken("providerAgreementReference", prov.Type, ag.ProviderAgreementReference, id)...)
		}
	}
	if err := errs.Err(); err != nil {
		return store.PaymentAgreement{}, false, err
	}
	now, err := a.Now(ctx)
	if err != nil {
		return store.PaymentAgreement{}, false, err
	}
	out, created, err := a.store.CreatePaymentAgreement(ctx, ag, now)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return store.PaymentAgreement{}, false, validation.Field("subscriberId", "no subscriber %s in this tenant", ag.SubscriberID)
	case errors.Is(err, store.ErrAgreementReferenceTaken):
		return store.PaymentAgreement{}, false, ErrReferenceTaken("providerAgreementReference", ag.ProviderType, ag.ProviderAgreementReference, "")
	case err != nil:
		return store.PaymentAgreement{}, false, err
	}
	return out, created, nil
}

// AgreementRow is a row of an agreement import.
type AgreementRow struct {
	NewAgreement
	// Unread says the surface could not read the row at all: Invalid says
	// why, and the row is rejected without further checks.
	Unread bool
}

// ImportedAgreement is what an import did with a row: Status is one of
// store.ImportCreated, ImportSkipped and ImportRejected; ID the agreement
// created or found; Errors why the row was rejected.
type ImportedAgreement struct {
	Status string
	ID     string
	Errors validation.Errors
}

// ImportPaymentAgreements checks every row as CreatePaymentAgreement would
// and creates the agreements of the valid rows that do not exist yet, in
// one transaction (store.ImportPaymentAgreements); it answers one result
// per row, in order. Only a failure of the service is an error.
func (a *App) ImportPaymentAgreements(ctx context.Context, in []AgreementRow) ([]ImportedAgreement, error) {
	rows := make([]store.ImportRow, len(in))
	out := make([]ImportedAgreement, len(in))
	for i, row := range in {
		errs := row.Invalid
		if !row.Unread {
			var err error
			if rows[i].Agreement, _, errs, err = a.checkedAgreement(ctx, row.NewAgreement); err != nil {
				return nil, err
			}
		}
		if len(errs) > 0 {
			rows[i].Rejected = true
			out[i] = ImportedAgreement{Status: store.ImportRejected, Errors: errs}
		}
	}
	now, err := a.Now(ctx)
	if err != nil {
		return nil, err
	}
	outcomes, err := a.store.ImportPaymentAgreements(ctx, rows, now)
	if err != nil {
		return nil, err
	}
	for i, o := range outcomes {
		if rows[i].Rejected {
			continue
		}
		out[i] = ImportedAgreement{Status: o.Status, ID: o.ID}
		if o.Field != "" {
			out[i].Errors = validation.Field(o.Field, "%s", o.Reason)
		}
	}
	return out, nil
}

// PaymentAgreement returns a payment agreement of the tenant, deleted ones
// too, or store.ErrNotFound.
func (a *App) PaymentAgreement(ctx context.Context, id string) (store.PaymentAgreement, error) {
	return a.store.PaymentAgreement(ctx, id)
}

// PaymentAgreements lists the tenant's payment agreements that f selects,
// a page at a time.
func (a *App) PaymentAgreements(ctx context.Context, f store.AgreementFilter, p store.Page) ([]store.PaymentAgreement, string, error) {
	return a.store.ListPaymentAgreements(ctx, f, p)
}

// DeletePaymentAgreement marks an agreement deleted, moving the periods
// that use it to the subscriber's Invoice agreement. The Invoice agreement
// itself while periods use it is a validation.Errors naming id; an unknown
// agreement store.ErrNotFound.
func (a *App) DeletePaymentAgreement(ctx context.Context, id string) error {
	now, err := a.Now(ctx)
	if err != nil {
		return err
	}
	_, err = a.store.DeletePaymentAgreement(ctx, id, now)
	var inUse *store.InUseError
	if errors.As(err, &inUse) {
		return validation.Field("id", "%s is the subscriber's Invoice agreement, the fallback of every other agreement, and subscriptions "+
			"use it (%s); assign them another agreement first", id, strings.Join(inUse.IDs, ", "))
	}
	return err
}

// ChangePaymentAgreement assigns agreement agreementID to the periods of
// subscription subscriptionID that have not ended. An agreement that is
// not a live one of the subscription's subscriber is a validation.Errors
// naming paymentAgreementId, a subscription with no period left one naming
// id; an unknown subscription store.ErrNotFound.
func (a *App) ChangePaymentAgreement(ctx context.Context, subscriptionID, agreementID string) error {
	now, err := a.Now(ctx)
	if err != nil {
		return err
	}
	_, err = a.store.ChangePaymentAgreement(ctx, subscriptionID, agreementID, now)
	switch {
	case errors.Is(err, store.ErrAgreementNotUsable):
		return validation.Field("paymentAgreementId", "%s is not a live payment agreement of the subscription's subscriber", agreementID)
	case errors.Is(err, store.ErrSubscriptionEnded):
		return validation.Field("id", "subscription %s has ended or was cancelled: no period is left to pay for", subscriptionID)
	}
	return err
}
