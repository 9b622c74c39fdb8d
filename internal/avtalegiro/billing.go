package avtalegiro

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/validation"
)

// Provider is the name payments settled from OCR giro files carry.
const Provider = "AvtaleGiro"

// The functions below are what billing calls; each is idempotent and
// takes the tenant explicitly, so a hook, a worker or a test can call it.

func withTenant(ctx context.Context, tenant string) context.Context {
	if t, err := tenancy.From(ctx); err == nil && t == tenant {
		return ctx
	}
	return tenancy.With(ctx, tenant)
}

// CheckReference checks the providerAgreementReference of an AvtaleGiro
// payment agreement: the id of an active mandate of the tenant. A bad one
// is a 400 naming providerAgreementReference.
func CheckReference(ctx context.Context, st *store.Store, tenant, reference string) error {
	ctx = withTenant(ctx, tenant)
	const field = "providerAgreementReference"
	if !store.ValidID(reference) {
		return validation.Field(field, "must be the id of an active AvtaleGiro mandate")
	}
	ok, err := ActiveMandate(ctx, st, reference)
	if err != nil {
		return fmt.Errorf("avtalegiro: check reference: %w", err)
	}
	if !ok {
		return validation.Field(field, "there is no active AvtaleGiro mandate %s", reference)
	}
	return nil
}

// InvoiceIssued creates the claim that collects invoice invoiceID when the
// invoice's payment agreement is AvtaleGiro: on the agreement's mandate,
// for what the invoice still claims, due on the invoice's due date, or the
// earliest date the bank's lead time allows when that is later. Nothing
// happens for other agreements, a mandate no longer active, an amount above
// the mandate's limit, or a settled invoice: the invoice is then paid the
// usual way and dunning follows it. Calling it again changes nothing.
func InvoiceIssued(ctx context.Context, st *store.Store, tenant, invoiceID string, now time.Time) error {
	ctx = withTenant(ctx, tenant)
	inv, err := st.Invoice(ctx, invoiceID)
	if err != nil {
		return fmt.Errorf("avtalegiro: invoice %s: %w", invoiceID, err)
	}
	if inv.PaymentAgreementID == nil || inv.Currency != "NOK" {
		return nil
	}
	agreement, err := st.PaymentAgreement(ctx, *inv.PaymentAgreementID)
	if err != nil {
		return fmt.Errorf("avtalegiro: invoice %s agreement: %w", invoiceID, err)
	}
	if agreement.ProviderType != store.ProviderAvtaleGiro {
		return nil
	}
	mandate, err := Mandate(ctx, st, agreement.ProviderAgreementReference)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("avtalegiro: invoice %s mandate: %w", invoiceID, err)
	}
	if mandate.DeletedAt != nil {
		return nil
	}
	demand, err := st.PaymentDemand(ctx, inv.PaymentDemandID)
	if err != nil {
		return fmt.Errorf("avtalegiro: invoice %s demand: %w", invoiceID, err)
	}
	owed := demand.Amount.Minor - demand.PaidAmount.Minor - demand.CreditedAmount.Minor
	if owed <= 0 {
		return nil
	}
	if limit := mandate.AmountLimitOre(); limit != nil && owed > *limit {
		return nil
	}
	account, err := Account(ctx, st, mandate.AccountID)
	if err != nil {
		return fmt.Errorf("avtalegiro: invoice %s account: %w", invoiceID, err)
	}
	due, err := time.Parse(time.DateOnly, inv.DueDate)
	if err != nil {
		return fmt.Errorf("avtalegiro: invoice %s due date: %w", invoiceID, err)
	}
	if earliest := EarliestDue(now, account.LeadDays); due.Before(earliest) {
		due = earliest
	}
	var notice []string
	if mandate.Notify {
		notice = []string{fmt.Sprintf("Faktura %d fra %s", inv.InvoiceNumber, inv.Seller.Name),
			fmt.Sprintf("Beløp kr %s, forfall %s", nok(owed), due.Format("02.01.2006"))}
	}
	_, _, err = CreateClaim(ctx, st, NewAvtaleGiroClaim{MandateID: mandate.ID, TransactionID: invoiceID,
		InvoiceID: &inv.ID, KID: mandate.KID, Amount: owed, DueDate: due.Format(time.DateOnly), ShortName: inv.Buyer.Name,
		ExternalReference: fmt.Sprintf("Faktura %d", inv.InvoiceNumber), NoticeLines: notice}, now)
	if err != nil {
		return fmt.Errorf("avtalegiro: claim for invoice %s: %w", invoiceID, err)
	}
	return nil
}

func nok(ore int64) string { return fmt.Sprintf("%d,%02d", ore/100, ore%100) }

// InvoiceCredited cancels the claim of a credited invoice if the bank has
// not processed it (a sent claim is cancelled in the account's next file).
// A processed or paid claim is left alone: the credit note's refund is
// another matter. Calling it again changes nothing.
func InvoiceCredited(ctx context.Context, st *store.Store, tenant, invoiceID string, now time.Time) error {
	ctx = withTenant(ctx, tenant)
	if _, err := CancelClaimsOfInvoice(ctx, st, invoiceID, Today(now).Format(time.DateOnly), now); err != nil {
		return fmt.Errorf("avtalegiro: cancel claims of invoice %s: %w", invoiceID, err)
	}
	return nil
}

// Settlement counts what SettlePayments did.
type Settlement struct {
	Settled  int // recorded as Kadens payments (or matched to a claim without invoice)
	Problems int // could not be matched; kept with the reason
}

// settleBatch is how many imported payments SettlePayments settles per
// transaction: one commit (an fsync on SQLite) per payment was most of
// the cost of importing an OCR file of 100,000 payments.
const settleBatch = 500

// SettlePayments settles the imported OCR giro payments of the tenant that
// are not settled yet, each through the payment recording POST /payment
// uses (invoicing.RecordPaymentTx, provider AvtaleGiro, the payment's file
// position as provider reference): matched to the sent claim with its KID
// and amount and so to the claim's invoice, else to the invoice whose own
// KID it carries. Payments are settled settleBatch to a transaction; one
// that cannot be recorded is rolled back to its savepoint and kept with
// the reason, and the batch goes on. A payment recorded before (a crash
// between the payment and its mark, or a concurrent settlement) is found
// by its reference after the batch and not recorded twice.
func SettlePayments(ctx context.Context, st *store.Store, tenant string, now time.Time) (Settlement, error) {
	ctx = withTenant(ctx, tenant)
	var out Settlement
	for {
		var (
			batch   Settlement
			repeats []AvtaleGiroPayment
			open    []AvtaleGiroPayment
		)
		err := st.InTx(ctx, func(tx *store.Tx) error {
			batch, repeats = Settlement{}, nil
			// Settlements of a tenant take turns, and the batch's payments
			// and claims are read after the turn is taken: read before it,
			// a concurrent settlement's payments and paid claims would look
			// open, and two payments would pay one claim.
			if err := LockSettlement(ctx, tx); err != nil {
				return err
			}
			var err error
			if open, err = OpenPayments(ctx, tx, settleBatch); err != nil || len(open) == 0 {
				if err != nil {
					return fmt.Errorf("avtalegiro: settle: %w", err)
				}
				return nil
			}
			record := func(in invoicing.NewPayment) (string, error) {
				var id string
				err := tx.Savepoint(ctx, func() error {
					pay, err := invoicing.RecordPaymentTx(ctx, tx, in)
					id = pay.ID
					return err
				})
				return id, err
			}
			// The claims and invoices the batch's payments may settle,
			// read in three statements for the batch.
			reads, err := NewSettlementBatch(ctx, tx, open)
			if err != nil {
				return fmt.Errorf("avtalegiro: settle: %w", err)
			}
			for _, p := range open {
				err := settle(ctx, reads, record, p, now, &batch)
				if errors.Is(err, invoicing.ErrPaymentRecorded) {
					repeats = append(repeats, p)
					continue
				}
				if err != nil {
					return err
				}
			}
			return reads.Flush(ctx)
		})
		if err != nil {
			return out, err
		}
		if len(open) == 0 {
			return out, nil
		}
		out.Settled += batch.Settled
		out.Problems += batch.Problems
		// Repeats go the one-payment way, which answers the first payment.
		for _, p := range repeats {
			record := func(in invoicing.NewPayment) (string, error) {
				pay, _, err := invoicing.RecordPayment(ctx, st, in)
				return pay.ID, err
			}
			if err := settle(ctx, storeSettler{st}, record, p, now, &out); err != nil {
				return out, err
			}
		}
	}
}

// settler is what settling one payment reads and writes: the store (a
// repeat, alone), or a batch's reads (AvtaleGiroSettlementBatch,
// which answers from statements read for the whole batch).
type settler interface {
	MatchAvtaleGiroClaim(ctx context.Context, p AvtaleGiroPayment) (AvtaleGiroClaim, bool, error)
	PaymentTarget(ctx context.Context, invoiceID, demandID, kid, organizationID string) (string, string, error)
	SettledAvtaleGiroPayment(ctx context.Context, rowID, paymentID, claimID, problem string, now time.Time) error
}

// storeSettler settles one payment on its own, each write its own
// transaction.
type storeSettler struct{ st *store.Store }

func (s storeSettler) MatchAvtaleGiroClaim(ctx context.Context, p AvtaleGiroPayment) (AvtaleGiroClaim, bool, error) {
	return MatchClaim(ctx, s.st, p)
}

func (s storeSettler) PaymentTarget(ctx context.Context, invoiceID, demandID, kid, organizationID string) (string, string, error) {
	return s.st.PaymentTarget(ctx, invoiceID, demandID, kid, organizationID)
}

func (s storeSettler) SettledAvtaleGiroPayment(ctx context.Context, rowID, paymentID, claimID, problem string, now time.Time) error {
	return SettledPayment(ctx, s.st, rowID, paymentID, claimID, problem, now)
}

func settle(ctx context.Context, st settler, record func(invoicing.NewPayment) (string, error), p AvtaleGiroPayment, now time.Time, out *Settlement) error {
	claim, found, err := st.MatchAvtaleGiroClaim(ctx, p)
	if err != nil {
		return fmt.Errorf("avtalegiro: settle %s: %w", p.Reference, err)
	}
	invoiceID, kid, claimID := "", "", ""
	switch {
	case found && claim.InvoiceID != nil:
		invoiceID, claimID = *claim.InvoiceID, claim.ID
	case found:
		out.Settled++
		return st.SettledAvtaleGiroPayment(ctx, p.ID, "", claim.ID, "", now)
	default:
		kid = p.KID
	}
	demand, currency, err := st.PaymentTarget(ctx, invoiceID, "", kid, "")
	var verrs validation.Errors
	if errors.As(err, &verrs) {
		out.Problems++
		return st.SettledAvtaleGiroPayment(ctx, p.ID, "", "", verrs.Error(), now)
	}
	if err != nil {
		return fmt.Errorf("avtalegiro: settle %s: %w", p.Reference, err)
	}
	paid, err := time.ParseInLocation(time.DateOnly, p.PaidOn, Zone)
	if err != nil {
		return fmt.Errorf("avtalegiro: settle %s: paid on %q: %w", p.Reference, p.PaidOn, err)
	}
	if p.Amount <= 0 {
		out.Problems++
		return st.SettledAvtaleGiroPayment(ctx, p.ID, "", "", "amount is zero", now)
	}
	payID, err := record(invoicing.NewPayment{PaymentDemandID: demand, Status: store.PaymentSucceeded, Amount: p.Amount,
		Currency: currency, PaidAt: paid.UTC(), PaidAtGiven: true, Provider: Provider, ProviderReference: p.Reference, Now: now})
	if errors.As(err, &verrs) {
		out.Problems++
		return st.SettledAvtaleGiroPayment(ctx, p.ID, "", "", verrs.Error(), now)
	}
	if err != nil {
		if errors.Is(err, invoicing.ErrPaymentRecorded) {
			return err
		}
		return fmt.Errorf("avtalegiro: settle %s: %w", p.Reference, err)
	}
	out.Settled++
	return st.SettledAvtaleGiroPayment(ctx, p.ID, payID, claimID, "", now)
}

// ImportResult says what Import did.
type ImportResult struct {
	Import AvtaleGiroImport
	Settlement
}

// Import imports a file from the bank as it is read (ImportFile:
// all or nothing, once) and then settles the tenant's unsettled OCR payments.
func Import(ctx context.Context, st *store.Store, file io.Reader, now time.Time) (ImportResult, error) {
	imp, err := ImportFile(ctx, st, file, now)
	if err != nil {
		return ImportResult{}, err
	}
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return ImportResult{}, err
	}
	settled, err := SettlePayments(ctx, st, tenant, now)
	return ImportResult{Import: imp, Settlement: settled}, err
}

// Export writes the account's next claim file: every scheduled claim due
// within the bank's 12 months and every pending cancellation. ok is false
// when there was nothing to send.
func Export(ctx context.Context, st *store.Store, accountID string, now time.Time) (AvtaleGiroFile, bool, error) {
	latest := Today(now).AddDate(0, MaxAhead, 0).Format(time.DateOnly)
	return ExportClaims(ctx, st, accountID, latest, now)
}
