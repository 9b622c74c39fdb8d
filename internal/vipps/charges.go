package vipps

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/provider"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// Charge statuses Kadens records: Vipps' own, and CREATING for a charge
// recorded before Vipps answered its creation.
const (
	ChargeCreating          = "CREATING"
	ChargeDue               = "DUE"
	ChargePending           = "PENDING"
	ChargeCharged           = "CHARGED"
	ChargeFailed            = "FAILED"
	ChargeCancelled         = "CANCELLED"
	ChargeRefunded          = "REFUNDED"
	ChargePartiallyRefunded = "PARTIALLY_REFUNDED"
)

// Provider is the name payments settled from Vipps charges carry.
const Provider = "Vipps"

// Vipps' rules of a charge: at least 1 kr; retried this many days after
// its due date before it fails (Vipps recommends at least two).
const (
	minCharge = 100
	retryDays = 3
)

// LeadDays is how many days ahead of today a charge's due date must be:
// 2 in production, 1 in Vipps' test environment.
func LeadDays(mode string) int {
	if mode == ModeProduction {
		return 2
	}
	return 1
}

// compactID is a uuid without its dashes (32 characters): the ids Kadens
// derives for Vipps from its own, within Vipps' 40-character keys and
// alphanumeric order ids.
func compactID(id string) string { return strings.ReplaceAll(id, "-", "") }

// ChargeID is the order id (and so Vipps' charge id) of invoice id's
// charge: derived from the invoice, so the charge is unique per merchant.
func ChargeID(invoiceID string) string { return "kinv" + compactID(invoiceID) }

// VippsCharge is the record of an invoice's charge.
type VippsCharge struct {
	InvoiceID          string
	PaymentAgreementID string
	VippsAgreementID   string
	ChargeID           string
	Amount             int64
	Refunded           int64
	DueDate            string
	Status             string
}

// InvoiceIssued makes an issued invoice on an ACTIVE Vipps agreement one
// Vipps charge of what it still claims, due on its due date or the
// earliest date Vipps' lead time allows. The invoice's id gives both the
// Idempotency-Key and the order id, and the row (one per invoice) is
// written before Vipps is asked: a retry, a redelivered event or a
// concurrent run never makes a second charge. Nothing happens for another
// provider, an agreement not ACTIVE, an amount Vipps would refuse (below
// 1 kr, above the agreement's limit; docs/VIPPS.md) or a settled invoice:
// the invoice is then paid the usual way and dunning follows it.
func (w *Wing) InvoiceIssued(ctx context.Context, in provider.Invoice) error {
	ctx = tenancy.With(ctx, in.TenantID)
	inv, err := w.st.Invoice(ctx, in.InvoiceID)
	if err != nil {
		return fmt.Errorf("vipps: invoice %s: %w", in.InvoiceID, err)
	}
	if inv.PaymentAgreementID == nil || inv.Currency != "NOK" {
		return nil
	}
	rec, err := AgreementOf(ctx, w.st, in.TenantID, *inv.PaymentAgreementID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	existing, err := chargeOf(ctx, w.st, in.TenantID, inv.ID)
	switch {
	case err == nil && existing.Status != ChargeCreating:
		return nil // made already
	case err == nil:
		return w.createCharge(ctx, in.TenantID, existing, inv.InvoiceNumber)
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	if rec.Status != StatusActive {
		return nil
	}
	demand, err := w.st.PaymentDemand(ctx, inv.PaymentDemandID)
	if err != nil {
		return fmt.Errorf("vipps: invoice %s demand: %w", inv.ID, err)
	}
	owed := demand.Amount.Minor - demand.PaidAmount.Minor - demand.CreditedAmount.Minor
	if owed < minCharge || owed > rec.Amount {
		return nil
	}
	_, m, err := w.client(ctx, in.TenantID)
	if err != nil {
		return err
	}
	due, err := time.Parse(time.DateOnly, inv.DueDate)
	if err != nil {
		return fmt.Errorf("vipps: invoice %s due date: %w", inv.ID, err)
	}
	today := time.Date(in.Now.Year(), in.Now.Month(), in.Now.Day(), 0, 0, 0, 0, time.UTC)
	if earliest := today.AddDate(0, 0, LeadDays(m.Mode)); due.Before(earliest) {
		due = earliest
	}
	c := VippsCharge{InvoiceID: inv.ID, PaymentAgreementID: rec.PaymentAgreementID, VippsAgreementID: rec.VippsAgreementID,
		ChargeID: ChargeID(inv.ID), Amount: owed, DueDate: due.Format(time.DateOnly), Status: ChargeCreating}
	if err := insertCharge(ctx, w.st, in.TenantID, c, in.Now); err != nil {
		return err
	}
	// The row that won (this one or a concurrent run's) is the one sent.
	if c, err = chargeOf(ctx, w.st, in.TenantID, inv.ID); err != nil {
		return err
	}
	return w.createCharge(ctx, in.TenantID, c, inv.InvoiceNumber)
}

// createCharge asks Vipps for a recorded CREATING charge. The same
// Idempotency-Key and order id go every time; a 409 (the order id is
// used) is the charge made by an earlier attempt whose answer was lost.
func (w *Wing) createCharge(ctx context.Context, tenant string, c VippsCharge, invoiceNumber int64) error {
	cl, _, err := w.client(ctx, tenant)
	if err != nil {
		return err
	}
	_, err = cl.CreateCharge(ctx, c.VippsAgreementID, "c-"+compactID(c.InvoiceID), ChargeRequest{Amount: c.Amount,
		TransactionType: "DIRECT_CAPTURE", Description: fmt.Sprintf("Faktura %d", invoiceNumber), Due: c.DueDate,
		RetryDays: retryDays, OrderID: c.ChargeID})
	if err != nil && !IsStatus(err, http.StatusConflict) {
		if Permanent(err) {
			// Vipps refuses it (the agreement stopped meanwhile, …): the
			// invoice is left to be paid the usual way.
			return setChargeStatus(ctx, w.st, tenant, c.InvoiceID, ChargeCreating, ChargeCancelled, time.Now())
		}
		return fmt.Errorf("vipps: charge for invoice %s: %w", c.InvoiceID, err)
	}
	return setChargeStatus(ctx, w.st, tenant, c.InvoiceID, ChargeCreating, ChargeDue, time.Now())
}

// SyncCharge reads the invoice's charge at Vipps and settles it: CHARGED
// records the payment through invoicing.RecordPayment (provider Vipps, the
// charge id as reference: recorded once however often this runs), FAILED
// records a failed payment (the invoice stays open and dunning follows
// it), CANCELLED is recorded.
func (w *Wing) SyncCharge(ctx context.Context, tenant, invoiceID string, now time.Time) error {
	ctx = tenancy.With(ctx, tenant)
	c, err := chargeOf(ctx, w.st, tenant, invoiceID)
	if err != nil {
		return err
	}
	if c.Status == ChargeCreating {
		inv, err := w.st.Invoice(ctx, invoiceID)
		if err != nil {
			return err
		}
		return w.createCharge(ctx, tenant, c, inv.InvoiceNumber)
	}
	cl, _, err := w.client(ctx, tenant)
	if err != nil {
		return err
	}
	info, err := cl.Charge(ctx, c.VippsAgreementID, c.ChargeID)
	if err != nil {
		return fmt.Errorf("vipps: sync charge %s: %w", c.ChargeID, err)
	}
	if info.Status == c.Status {
		return nil
	}
	inv, err := w.st.Invoice(ctx, invoiceID)
	if err != nil {
		return err
	}
	pay := invoicing.NewPayment{PaymentDemandID: inv.PaymentDemandID, PaymentAgreementID: inv.PaymentAgreementID,
		Currency: inv.Currency, PaidAt: now, Provider: Provider, ProviderReference: c.ChargeID, Now: now}
	switch info.Status {
	case ChargeCharged, ChargeRefunded, ChargePartiallyRefunded:
		pay.Status, pay.Amount = store.PaymentSucceeded, info.Summary.Captured
	case ChargeFailed:
		reason := "Vipps: the charge failed after its retry days"
		pay.Status, pay.Amount, pay.FailureReason = store.PaymentFailed, c.Amount, &reason
	case ChargeCancelled:
		return setChargeStatus(ctx, w.st, tenant, invoiceID, c.Status, ChargeCancelled, now)
	default:
		return setChargeStatus(ctx, w.st, tenant, invoiceID, c.Status, info.Status, now)
	}
	if c.Status != ChargeCharged && c.Status != ChargeFailed {
		if _, _, err := invoicing.RecordPayment(ctx, w.st, pay); err != nil {
			return fmt.Errorf("vipps: settle charge %s: %w", c.ChargeID, err)
		}
	}
	return setChargeStatus(ctx, w.st, tenant, invoiceID, c.Status, info.Status, now)
}

// InvoiceCredited acts on a credit note of an invoice with a charge: not
// yet charged, the charge is cancelled (the invoice is then paid the
// usual way for whatever the credit left); charged, the credit note's
// amount (at most what is left of the charge) is refunded through Vipps
// under a key derived from the credit note, so it is refunded once.
// Vipps refunds no less than 1 kr: a smaller credit is not refunded
// through Vipps (docs/VIPPS.md).
func (w *Wing) InvoiceCredited(ctx context.Context, in provider.Invoice) error {
	ctx = tenancy.With(ctx, in.TenantID)
	c, err := chargeOf(ctx, w.st, in.TenantID, in.InvoiceID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	cl, _, err := w.client(ctx, in.TenantID)
	if err != nil {
		return err
	}
	info, err := cl.Charge(ctx, c.VippsAgreementID, c.ChargeID)
	if IsStatus(err, http.StatusNotFound) && c.Status == ChargeCreating {
		return setChargeStatus(ctx, w.st, in.TenantID, in.InvoiceID, ChargeCreating, ChargeCancelled, in.Now)
	}
	if err != nil {
		return fmt.Errorf("vipps: credit of invoice %s: %w", in.InvoiceID, err)
	}
	switch info.Status {
	case ChargePending, ChargeDue, "RESERVED":
		if err := cl.CancelCharge(ctx, c.VippsAgreementID, c.ChargeID, "x-"+compactID(in.InvoiceID)); err != nil {
			return fmt.Errorf("vipps: cancel charge %s: %w", c.ChargeID, err)
		}
		return setChargeStatus(ctx, w.st, in.TenantID, in.InvoiceID, c.Status, ChargeCancelled, in.Now)
	case ChargeCharged, ChargePartiallyRefunded:
		if in.CreditNoteID == "" {
			return nil
		}
		cn, err := w.st.CreditNote(ctx, in.CreditNoteID)
		if err != nil {
			return fmt.Errorf("vipps: credit note %s: %w", in.CreditNoteID, err)
		}
		amount := min(cn.Gross.Minor, info.Summary.Captured-info.Summary.Refunded)
		if amount < minCharge {
			return nil
		}
		err = cl.RefundCharge(ctx, c.VippsAgreementID, c.ChargeID, "r-"+compactID(in.CreditNoteID), amount,
			fmt.Sprintf("Kreditnota %d", cn.CreditNoteNumber))
		if err != nil {
			return fmt.Errorf("vipps: refund charge %s: %w", c.ChargeID, err)
		}
		after, err := cl.Charge(ctx, c.VippsAgreementID, c.ChargeID)
		if err != nil {
			return fmt.Errorf("vipps: refund charge %s: %w", c.ChargeID, err)
		}
		return setRefunded(ctx, w.st, in.TenantID, in.InvoiceID, after.Status, after.Summary.Refunded, in.Now)
	}
	return nil
}

// PollCharges settles every open charge of the tenant (what a webhook
// missed); one failing is collected and the rest go on.
func (w *Wing) PollCharges(ctx context.Context, tenant string, now time.Time) error {
	open, err := openCharges(ctx, w.st, tenant)
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range open {
		if err := w.SyncCharge(ctx, tenant, id, now); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
