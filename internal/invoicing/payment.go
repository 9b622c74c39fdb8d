package invoicing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// NewPayment is a payment result to record (RecordPayment).
type NewPayment struct {
	PaymentDemandID    string
	PaymentAgreementID *string
	Status             string
	Amount             int64
	Currency           string
	PaidAt             time.Time
	// PaidAtGiven says PaidAt came from the report (not defaulted): only
	// then does a repeated report have to carry the same value.
	PaidAtGiven       bool
	Provider          string
	ProviderReference string
	FailureReason     *string
	// Now is the tenant's time: entries, the allowance and events are
	// booked at it.
	Now time.Time
	// Outstanding, when set, is what the demand must still claim once its
	// lock is taken: a payment matched to a demand by what the demand
	// claimed (MatchBySubscriber) was matched on a read made before the
	// lock, which a concurrent payment may have made stale. If the demand
	// claims anything else by then, RecordPayment changes nothing and
	// fails with ErrMatchChanged, and the caller matches again.
	Outstanding *int64
}

// ErrMatchChanged: the demand a payment was matched to by its outstanding
// amount (NewPayment.Outstanding) no longer claims that amount.
var ErrMatchChanged = errors.New("invoicing: the matched payment demand changed")

// errDuplicatePayment rolls back a report whose provider reference is
// recorded already.
var errDuplicatePayment = errors.New("invoicing: payment reported already")

// RecordPayment records a payment result in one transaction of its own. A
// success is matched to its demand with Settle (the demand row is locked,
// so concurrent payments queue): the applied part is a Payment ledger
// entry, a surplus becomes an allowance, and PaymentCompleted (plus
// InvoicePaid when the invoice becomes Paid) is recorded. A failure is
// recorded with PaymentFailed and changes no balance.
//
// A (provider, providerReference) is recorded once. Reporting it again
// returns the first payment and created false, changing nothing, when the
// report agrees with it (status, amount, currency, demand, and paidAt when
// given); otherwise ErrConflict.
func RecordPayment(ctx context.Context, st *store.Store, in NewPayment) (store.Payment, bool, error) {
	var p store.Payment
	err := st.InTx(ctx, func(tx *store.Tx) error {
		var err error
		p, err = RecordPaymentTx(ctx, tx, in)
		return err
	})
	if errors.Is(err, ErrPaymentRecorded) {
		return repeatedPayment(ctx, st, in)
	}
	if err != nil {
		return store.Payment{}, false, err
	}
	return p, true, nil
}

// ErrPaymentRecorded: RecordPaymentTx found the provider reference
// recorded already; the caller rolls back what it wrote (the transaction,
// or a savepoint of a batch) and treats the report as a repeat.
var ErrPaymentRecorded = errDuplicatePayment

// RecordPaymentTx is RecordPayment inside the caller's transaction, for
// settling a batch of payments in one transaction. A repeated provider
// reference is ErrPaymentRecorded; a payment that cannot be recorded is a
// validation error — after either, the caller must roll back what this
// call wrote (tx.Savepoint does).
func RecordPaymentTx(ctx context.Context, tx *store.Tx, in NewPayment) (store.Payment, error) {
	if !store.ValidID(in.PaymentDemandID) {
		return store.Payment{}, store.ErrNotFound
	}
	if in.Status != store.PaymentSucceeded && in.Status != store.PaymentFailed {
		return store.Payment{}, fmt.Errorf("invoicing: payment status %q", in.Status)
	}
	if in.Amount <= 0 {
		return store.Payment{}, fmt.Errorf("invoicing: payment amount %d: must be more than 0", in.Amount)
	}
	now := in.Now.UTC().Truncate(time.Microsecond)
	p := store.Payment{ID: store.NewID(), PaymentDemandID: in.PaymentDemandID, PaymentAgreementID: in.PaymentAgreementID, Status: in.Status,
		Currency: in.Currency, PaidAt: in.PaidAt.UTC().Truncate(time.Microsecond), Provider: in.Provider,
		ProviderReference: in.ProviderReference, FailureReason: in.FailureReason,
		CreatedAt: time.Now().UTC().Truncate(time.Microsecond)}
	err := func() error {
		// A repeated report is found before anything is locked or written.
		// Two first reports racing meet in the unique key below instead.
		if seen, err := tx.PaymentRecorded(ctx, in.Provider, in.ProviderReference); err != nil {
			return err
		} else if seen {
			return errDuplicatePayment
		}
		var applied, surplus int64
		if in.Outstanding != nil {
			d, err := tx.LockDemand(ctx, in.PaymentDemandID)
			if err != nil {
				return err
			}
			if d.Status == billing.DemandPaid || d.Status == billing.DemandCredited || d.Amount-d.Paid-d.Credited != *in.Outstanding {
				return fmt.Errorf("%w: demand %s claims %d, the payment was matched to %d", ErrMatchChanged,
					in.PaymentDemandID, d.Amount-d.Paid-d.Credited, *in.Outstanding)
			}
		}
		if in.Status == store.PaymentSucceeded {
			c, err := Settle(ctx, tx, in.PaymentDemandID, in.Amount, 0, now)
			if err != nil {
				return err
			}
			if c.Currency != in.Currency {
				return validation.Field("currency", "must be %s, the payment demand's currency", c.Currency)
			}
			p.InvoiceID, p.SubscriberID, p.SubscriberAccountID = c.InvoiceID, c.SubscriberID, c.AccountID
			applied, surplus = c.PaidApplied, c.Surplus
		} else {
			d, err := tx.Demand(ctx, in.PaymentDemandID)
			if err != nil {
				return err
			}
			if d.Currency != in.Currency {
				return validation.Field("currency", "must be %s, the payment demand's currency", d.Currency)
			}
			p.InvoiceID, p.SubscriberID, p.SubscriberAccountID = d.InvoiceID, d.SubscriberID, d.AccountID
		}
		if in.PaymentAgreementID != nil {
			owner, err := tx.AgreementOwner(ctx, *in.PaymentAgreementID)
			if errors.Is(err, store.ErrNotFound) || (err == nil && owner != p.SubscriberID) {
				return validation.Field("paymentAgreementId", "there is no payment agreement %s of the invoice's subscriber", *in.PaymentAgreementID)
			}
			if err != nil {
				return err
			}
		}
		if surplus > 0 {
			number, err := tx.InvoiceNumber(ctx, p.InvoiceID)
			if err != nil {
				return err
			}
			item, err := bookAllowance(ctx, tx, p.SubscriberAccountID, fmt.Sprintf("Overpayment of invoice %d", number), surplus, now,
				store.ItemSource{Kind: store.ItemSourcePayment, ID: p.ID})
			if err != nil {
				return err
			}
			p.AllowanceItemID = &item
		}
		// The currency is the demand's, checked above.
		cur, err := currency(p.Currency)
		if err != nil {
			return err
		}
		p.Amount, p.Applied, p.Surplus = catalog.NewAmount(in.Amount, cur), catalog.NewAmount(applied, cur), catalog.NewAmount(surplus, cur)
		if inserted, err := tx.InsertPayment(ctx, p); err != nil {
			return err
		} else if !inserted {
			return errDuplicatePayment // a concurrent first report won
		}
		if applied > 0 {
			if err := tx.AddEntries(ctx, []store.NewEntry{{AccountID: p.SubscriberAccountID, Kind: store.EntryPayment,
				Amount: -applied, InvoiceID: p.InvoiceID, PaymentID: p.ID, BookedAt: now}}); err != nil {
				return err
			}
		}
		event := store.EventPaymentCompleted
		if p.Status == store.PaymentFailed {
			event = store.EventPaymentFailed
		}
		return tx.AddEvent(ctx, event, "/payment/"+p.ID, map[string]string{"paymentId": p.ID,
			"paymentDemandId": p.PaymentDemandID, "invoiceId": p.InvoiceID, "subscriberId": p.SubscriberID}, now)
	}()
	if err != nil {
		return store.Payment{}, err
	}
	return p, nil
}

// repeatedPayment answers a report of a provider reference recorded
// already: the first payment when the report agrees with it, else
// ErrConflict.
func repeatedPayment(ctx context.Context, st *store.Store, in NewPayment) (store.Payment, bool, error) {
	p, err := st.PaymentByReference(ctx, in.Provider, in.ProviderReference)
	if err != nil {
		return store.Payment{}, false, err
	}
	same := p.Status == in.Status && p.Amount.Minor == in.Amount && p.Currency == in.Currency &&
		p.PaymentDemandID == in.PaymentDemandID && (!in.PaidAtGiven || p.PaidAt.Equal(in.PaidAt.UTC().Truncate(time.Microsecond)))
	if !same {
		return store.Payment{}, false, fmt.Errorf("invoicing: provider reference %s/%s names another payment (%s): %w",
			in.Provider, in.ProviderReference, p.ID, store.ErrConflict)
	}
	return p, false, nil
}

// MatchBySubscriber finds the demand a payment identified only by its
// subscriber settles, by the rule of INFO-Subscription's billing
// (docs/MIGRATION.md): the subscriber must have exactly one outstanding
// demand (not paid, not credited) in the payment's currency, and the
// payment must be exactly what it still claims. ok is false when no
// demand, or more than one, fits; outstanding is how many demands are
// outstanding in that currency, for the caller's explanation.
func MatchBySubscriber(ctx context.Context, st *store.Store, subscriberID, currency string, amount int64) (demandID string, outstanding int, ok bool, err error) {
	var fits []string
	cursor := ""
	for {
		page, next, err := st.ListPaymentDemands(ctx, store.DocumentFilter{SubscriberID: subscriberID}, store.Page{Limit: 1000, After: cursor})
		if err != nil {
			return "", 0, false, fmt.Errorf("invoicing: match payment of subscriber %s: %w", subscriberID, err)
		}
		for _, d := range page {
			if d.Currency != currency || d.Status == billing.DemandPaid || d.Status == billing.DemandCredited {
				continue
			}
			outstanding++
			if d.Amount.Minor-d.PaidAmount.Minor-d.CreditedAmount.Minor == amount {
				fits = append(fits, d.ID)
			}
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if outstanding != 1 || len(fits) != 1 {
		return "", outstanding, false, nil
	}
	return fits[0], outstanding, true, nil
}
