package autogiro

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/validation"
)

// The hooks billing calls for Autogiro payment agreements. Each is
// idempotent: calling it again for the same invoice or mandate changes
// nothing, so a hook may be retried freely.

// Provider is the name payments recorded from Autogiro reports carry; the
// provider reference is the transaction id.
const Provider = "Autogiro"

// CheckReference checks the providerAgreementReference of an Autogiro
// payment agreement: the id of an active mandate of the tenant. Debits are
// only sent on active mandates, so an agreement on a mandate Bankgirot has
// not confirmed would leave invoices unpaid without saying why.
func CheckReference(ctx context.Context, st *store.Store, tenant, reference string) error {
	ctx = tenancy.With(ctx, tenant)
	m, err := Mandate(ctx, st, reference)
	if errors.Is(err, store.ErrNotFound) {
		return validation.Field("providerAgreementReference", "must be the id of an Autogiro mandate of this tenant; %q is none", reference)
	}
	if err != nil {
		return err
	}
	if m.Status != AutogiroActive {
		return validation.Field("providerAgreementReference", "Autogiro mandate %s is %s: an agreement needs an active mandate (one Bankgirot has confirmed)", m.ID, m.Status)
	}
	return nil
}

// mandateOf returns the mandate of an invoice's Autogiro agreement, or
// false when the invoice is not paid by Autogiro.
func mandateOf(ctx context.Context, st *store.Store, inv store.Invoice) (AutogiroMandate, bool, error) {
	if inv.PaymentAgreementID == nil {
		return AutogiroMandate{}, false, nil
	}
	a, err := st.PaymentAgreement(ctx, *inv.PaymentAgreementID)
	if err != nil {
		return AutogiroMandate{}, false, fmt.Errorf("autogiro: agreement of invoice %s: %w", inv.ID, err)
	}
	if a.ProviderType != store.ProviderAutogiro {
		return AutogiroMandate{}, false, nil
	}
	m, err := Mandate(ctx, st, a.ProviderAgreementReference)
	if err != nil {
		return AutogiroMandate{}, false, fmt.Errorf("autogiro: mandate %q of agreement %s: %w", a.ProviderAgreementReference, a.ID, err)
	}
	return m, true, nil
}

// InvoiceIssued creates the debit of an invoice paid by Autogiro: the
// invoice's gross amount, on its due date moved to a banking day and to at
// least LeadDays banking days after today, referenced by its KID (or
// number). An invoice not on an Autogiro agreement, in another currency
// than SEK, on a mandate that has ended, or debited already, gets nothing.
func InvoiceIssued(ctx context.Context, st *store.Store, tenant, invoiceID string, now time.Time) error {
	ctx = tenancy.With(ctx, tenant)
	inv, err := st.Invoice(ctx, invoiceID)
	if err != nil {
		return fmt.Errorf("autogiro: invoice %s: %w", invoiceID, err)
	}
	m, ok, err := mandateOf(ctx, st, inv)
	if err != nil || !ok {
		return err
	}
	if m.Status == AutogiroCancelled || m.Status == AutogiroRejected {
		return nil // the agreement is being released; the invoice is paid by bank transfer
	}
	if inv.Currency != "SEK" {
		return fmt.Errorf("autogiro: invoice %s is in %s: Autogiro collects SEK only", inv.ID, inv.Currency)
	}
	if inv.Gross.Minor <= 0 {
		return nil
	}
	due, err := time.Parse(time.DateOnly, inv.DueDate)
	if err != nil {
		return fmt.Errorf("autogiro: due date of invoice %s: %w", inv.ID, err)
	}
	ref := inv.KID
	if ref == "" || len(ref) > 16 {
		ref = strconv.FormatInt(inv.InvoiceNumber, 10)
	}
	_, err = CreateTransaction(ctx, st, AutogiroTransaction{MandateID: m.ID, Kind: AutogiroDebit,
		AmountMinor: inv.Gross.Minor, PaymentDate: PaymentDate(due, Today(now)).Format(time.DateOnly), Reference: ref,
		InvoiceID: &inv.ID}, now)
	if errors.Is(err, ErrAutogiroInvoiceDebited) {
		return nil
	}
	return err
}

// InvoiceCredited cancels the debit of a credited invoice: an unsent one
// never goes out, a sent one is cancelled by a TK25 in the next export. A
// debit completed already stays: the credit note's allowance holds what
// was paid.
func InvoiceCredited(ctx context.Context, st *store.Store, tenant, invoiceID string, now time.Time) error {
	ctx = tenancy.With(ctx, tenant)
	t, err := InvoiceDebit(ctx, st, invoiceID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if t.Status != AutogiroCreated && t.Status != AutogiroSent {
		return nil
	}
	return CancelTransaction(ctx, st, t.ID, now)
}

// MandateEnded releases the Autogiro payment agreements of a mandate that
// was cancelled or rejected, and marks the mandate released, in one
// transaction: each agreement is deleted as DELETE /paymentagreement
// does (store.Tx.DeleteAgreementsOf: its subscriptions move to the
// subscriber's Invoice agreement and PaymentAgreementDeleted is recorded).
func MandateEnded(ctx context.Context, st *store.Store, tenant, mandateID string, now time.Time) error {
	ctx = tenancy.With(ctx, tenant)
	err := st.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.DeleteAgreementsOf(ctx, store.ProviderAutogiro, mandateID, now); err != nil {
			return err
		}
		return markMandateReleased(ctx, tx, mandateID)
	})
	if err != nil {
		return fmt.Errorf("autogiro: release the agreements of mandate %s: %w", mandateID, err)
	}
	return nil
}

// Release runs MandateEnded for every ended mandate of the context's
// tenant whose agreements were not released yet (after an import, a
// DELETE, or a crash between the two).
func Release(ctx context.Context, st *store.Store, now time.Time) error {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	ids, err := MandatesToRelease(ctx, st)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := MandateEnded(ctx, st, tenant, id, now); err != nil {
			return err
		}
	}
	return nil
}

// Settle turns report results into Kadens payments through the payment
// recording of POST /payment: a completed debit of an invoice is a
// Succeeded payment that settles it, a failed one a Failed payment (which
// dunning sees). The provider reference is the transaction id, so a
// payment is recorded once however often Settle runs.
func Settle(ctx context.Context, st *store.Store, now time.Time) error {
	for {
		ts, err := ToSettle(ctx, st, 500)
		if err != nil || len(ts) == 0 {
			return err
		}
		for _, t := range ts {
			var paymentID *string
			if t.Kind == AutogiroDebit && t.InvoiceID != nil {
				p, err := settleOne(ctx, st, t, now)
				if err != nil {
					return err
				}
				paymentID = &p
			}
			if err := MarkSettled(ctx, st, t.ID, paymentID); err != nil {
				return err
			}
		}
	}
}

func settleOne(ctx context.Context, st *store.Store, t AutogiroTransaction, now time.Time) (string, error) {
	inv, err := st.Invoice(ctx, *t.InvoiceID)
	if err != nil {
		return "", fmt.Errorf("autogiro: settle transaction %s: %w", t.ID, err)
	}
	paidAt, err := time.ParseInLocation(time.DateOnly, t.PaymentDate, Stockholm)
	if err != nil {
		return "", fmt.Errorf("autogiro: settle transaction %s: %w", t.ID, err)
	}
	in := invoicing.NewPayment{PaymentDemandID: inv.PaymentDemandID, PaymentAgreementID: inv.PaymentAgreementID,
		Status: store.PaymentSucceeded, Amount: t.AmountMinor, Currency: inv.Currency, PaidAt: paidAt, PaidAtGiven: true,
		Provider: Provider, ProviderReference: t.ID, Now: now}
	if t.Status == AutogiroFailed {
		in.Status = store.PaymentFailed
		reason := "Autogiro: " + failureText(t.StatusCode)
		in.FailureReason = &reason
	}
	p, _, err := invoicing.RecordPayment(ctx, st, in)
	if err != nil {
		return "", fmt.Errorf("autogiro: settle transaction %s: %w", t.ID, err)
	}
	return p.ID, nil
}

// failureText says what Bankgirot's code of a failed payment means.
func failureText(code string) string {
	switch code {
	case "1":
		return "insufficient funds"
	case "2":
		return "no Autogiro connection (account closed) or other reason"
	case "rejected 01":
		return "rejected: mandate missing"
	case "rejected 02":
		return "rejected: account not approved or closed"
	case "rejected 13":
		return "rejected: payment date has passed"
	case "rejected 24":
		return "rejected: amount above the mandate's maximum"
	}
	return "failed (code " + code + ")"
}

// errRefundBooked rolls back a refund charge another run booked first.
var errRefundBooked = errors.New("autogiro: refund charge booked already")

// BookRefunds charges every paid-back debit of an invoice (TK77) to the
// subscriber's account: the payer has the money back, so the amount is
// owed again and the next invoice bills it (a merchant who lets it go
// credits it with an allowance). The charge and the mark that it was
// booked are one transaction, so a crash or a second run books it once.
// The charge carries no VAT: it is the invoice's own gross, whose VAT was
// accounted for on the invoice, owed again — not a new sale.
func BookRefunds(ctx context.Context, st *store.Store, now time.Time) error {
	for {
		ts, err := RefundsToBook(ctx, st, 500)
		if err != nil || len(ts) == 0 {
			return err
		}
		for _, t := range ts {
			if err := bookRefund(ctx, st, t, now); err != nil && !errors.Is(err, errRefundBooked) {
				return err
			}
		}
	}
}

func bookRefund(ctx context.Context, st *store.Store, t AutogiroTransaction, now time.Time) error {
	inv, err := st.Invoice(ctx, *t.InvoiceID)
	if err != nil {
		return fmt.Errorf("autogiro: refund of transaction %s: %w", t.ID, err)
	}
	desc := fmt.Sprintf("Autogiro: the payer's bank paid back the debit of invoice %d (%s)", inv.InvoiceNumber, refundText(t.PayerRefundCode))
	return st.InTx(ctx, func(tx *store.Tx) error {
		it, err := invoicing.BookItem(ctx, tx, inv.SubscriberAccountID, billing.ItemCharge, desc, t.AmountMinor, catalog.PercentOf(0), now,
			store.ItemSource{Kind: ItemSourceRefund, ID: t.ID})
		if err != nil {
			return fmt.Errorf("autogiro: refund charge of transaction %s: %w", t.ID, err)
		}
		ok, err := MarkRefundBooked(ctx, tx, t.ID, it.ID)
		if err != nil {
			return err
		}
		if !ok {
			return errRefundBooked
		}
		return nil
	})
}

// refundText says what Bankgirot's refund code of a TK77 means.
func refundText(code string) string {
	switch code {
	case "01":
		return "refund code 01: no mandate was given"
	case "02":
		return "refund code 02: the mandate was revoked"
	case "03":
		return "refund code 03: more than the payer could expect"
	}
	return "refund code " + code
}
