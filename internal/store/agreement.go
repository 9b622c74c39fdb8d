package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/tenancy"
)

// Provider types of payment agreements.
const (
	ProviderInvoice    = "Invoice"
	ProviderEHF        = "EHF"
	ProviderOIO        = "OIO"
	ProviderAutogiro   = "Autogiro"
	ProviderAvtaleGiro = "AvtaleGiro"
	ProviderExternal   = "External"
	// ProviderVipps is Vipps MobilePay Recurring (internal/vipps).
	ProviderVipps = "Vipps"
)

// Payment methods the store writes by default.
const (
	// MethodBankTransfer is the Invoice agreement's method: the subscriber
	// pays by bank transfer quoting the invoice's KID.
	MethodBankTransfer = "BankTransfer"
	// MethodEInvoice is the method of invoice-network agreements (EHF, OIO).
	MethodEInvoice = "eInvoice"
)

// Event kinds of payment agreements. Their data is light:
// paymentAgreementId, subscriberId and providerType.
const (
	EventPaymentAgreementCreated = "PaymentAgreementCreated"
	EventPaymentAgreementDeleted = "PaymentAgreementDeleted"
)

// Errors of payment agreement operations.
var (
	// ErrAgreementReferenceTaken: a live External agreement of the tenant
	// already has that reference.
	ErrAgreementReferenceTaken = errors.New("store: provider agreement reference already used")
	// ErrAgreementNotUsable: the agreement is deleted or belongs to another
	// subscriber than the subscription's.
	ErrAgreementNotUsable = errors.New("store: payment agreement not usable for this subscription")
	// ErrSubscriptionEnded: no period of the subscription is still to run.
	ErrSubscriptionEnded = errors.New("store: subscription has ended")
)

// PaymentAgreement links a subscriber to a way of paying. Every subscriber
// who has ordered has at least the default Invoice agreement (bank
// transfer with a KID reference).
type PaymentAgreement struct {
	ID                         string     `json:"id"`
	SubscriberID               string     `json:"subscriberId"`
	ProviderType               string     `json:"providerType" enum:"Invoice,EHF,OIO,Autogiro,AvtaleGiro,External,Vipps"`
	ProviderAgreementReference string     `json:"providerAgreementReference" description:"The recipient identifier (EHF: organization number; OIO: CVR or GLN), the integrator's reference (External), or empty (Invoice)."`
	PaymentMethod              string     `json:"paymentMethod" example:"eInvoice"`
	CreatedAt                  time.Time  `json:"createdAt"`
	DeletedAt                  *time.Time `json:"deletedAt,omitempty" description:"Set once deleted; deleted agreements stay readable because invoices refer to them."`
}

// AgreementParams are the parameters of an agreement to create: what an
// order may carry instead of an agreement id.
type AgreementParams struct {
	ProviderType               string `json:"providerType"`
	ProviderAgreementReference string `json:"providerAgreementReference"`
	PaymentMethod              string `json:"paymentMethod"`
}

const agreementColumns = `id, subscriber_id, provider_type, provider_agreement_reference, payment_method, created_at, deleted_at`

func scanAgreement(row scanner) (PaymentAgreement, error) {
	var (
		a       PaymentAgreement
		deleted sql.NullTime
	)
	if err := row.Scan(&a.ID, &a.SubscriberID, &a.ProviderType, &a.ProviderAgreementReference, &a.PaymentMethod,
		&a.CreatedAt, &deleted); err != nil {
		return PaymentAgreement{}, err
	}
	a.CreatedAt, a.DeletedAt = a.CreatedAt.UTC(), fromNullTime(deleted)
	return a, nil
}

// forShare is appended to a read of a live agreement inside a write
// transaction. On PostgreSQL it holds the row against a concurrent delete
// until the reading transaction (an order completion, a change of
// agreement) has written the subscription that uses it; the delete then
// sees that subscription and moves it to the fallback. SQLite has a single
// writer, so there is nothing to wait for.
func (tx *Tx) forShare() string {
	if tx.s.engine == Postgres {
		return ` FOR SHARE`
	}
	return ``
}

// insertAgreement stores a (ID set by the caller) unless a uniqueness rule
// (one live Invoice agreement per subscriber, unique live External
// references) already holds a row for it, and reports whether it did.
// ON CONFLICT DO NOTHING keeps the transaction usable on PostgreSQL, where
// a failed statement would abort it.
func (tx *Tx) insertAgreement(ctx context.Context, a PaymentAgreement) (bool, error) {
	res, err := tx.tx.ExecContext(ctx, `INSERT INTO payment_agreements
		(id, tenant_id, subscriber_id, provider_type, provider_agreement_reference, payment_method, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
		a.ID, tx.tenant, a.SubscriberID, a.ProviderType, a.ProviderAgreementReference, a.PaymentMethod, ts(a.CreatedAt))
	if err != nil {
		return false, fmt.Errorf("store: insert payment agreement: %w", refError(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: insert payment agreement: %w", err)
	}
	return n == 1, nil
}

func agreementEvent(kind string, a PaymentAgreement, at time.Time) NewEvent {
	return NewEvent{Type: kind, Subject: "/paymentagreement/" + a.ID, At: at,
		Data: map[string]string{"paymentAgreementId": a.ID, "subscriberId": a.SubscriberID, "providerType": a.ProviderType}}
}

// InsertPaymentAgreement stores a (ID set by the caller) and records
// PaymentAgreementCreated at a.CreatedAt. A live External agreement with
// the same reference is ErrAgreementReferenceTaken; a second live Invoice
// agreement of the subscriber is ErrConflict.
func (tx *Tx) InsertPaymentAgreement(ctx context.Context, a PaymentAgreement) error {
	ok, err := tx.insertAgreement(ctx, a)
	if err != nil {
		return err
	}
	if !ok {
		if a.ProviderType == ProviderExternal {
			return ErrAgreementReferenceTaken
		}
		return fmt.Errorf("store: insert payment agreement: %w", ErrConflict)
	}
	return tx.AddEvents(ctx, []NewEvent{agreementEvent(EventPaymentAgreementCreated, a, a.CreatedAt)})
}

// liveInvoiceAgreement returns the subscriber's live Invoice agreement, or
// sql.ErrNoRows.
func (tx *Tx) liveInvoiceAgreement(ctx context.Context, subscriberID string) (PaymentAgreement, error) {
	return scanAgreement(tx.tx.QueryRowContext(ctx, `SELECT `+agreementColumns+` FROM payment_agreements
		WHERE tenant_id = $1 AND subscriber_id = $2 AND provider_type = 'Invoice' AND deleted_at IS NULL
		ORDER BY id LIMIT 1`+tx.forShare(), tx.tenant, subscriberID))
}

// InvoiceAgreement returns the subscriber's live Invoice agreement,
// creating it at now (and recording PaymentAgreementCreated) if the
// subscriber has none.
func (tx *Tx) InvoiceAgreement(ctx context.Context, subscriberID string, now time.Time) (PaymentAgreement, error) {
	a, _, err := tx.invoiceAgreement(ctx, subscriberID, now)
	return a, err
}

// invoiceAgreement is InvoiceAgreement that also reports whether it
// created the agreement.
func (tx *Tx) invoiceAgreement(ctx context.Context, subscriberID string, now time.Time) (PaymentAgreement, bool, error) {
	a, err := tx.liveInvoiceAgreement(ctx, subscriberID)
	switch {
	case err == nil:
		return a, false, nil
	case !errors.Is(err, sql.ErrNoRows):
		return PaymentAgreement{}, false, fmt.Errorf("store: invoice agreement: %w", err)
	}
	a = PaymentAgreement{ID: NewID(), SubscriberID: subscriberID, ProviderType: ProviderInvoice,
		PaymentMethod: MethodBankTransfer, CreatedAt: now.UTC().Truncate(time.Microsecond)}
	created, err := tx.insertAgreement(ctx, a)
	if err != nil {
		return PaymentAgreement{}, false, err
	}
	if !created {
		// A concurrent transaction created it and has committed (the
		// unique index made this insert wait for it): use that one.
		if a, err = tx.liveInvoiceAgreement(ctx, subscriberID); err != nil {
			return PaymentAgreement{}, false, fmt.Errorf("store: invoice agreement: %w", err)
		}
		return a, false, nil
	}
	if err := tx.AddEvents(ctx, []NewEvent{agreementEvent(EventPaymentAgreementCreated, a, a.CreatedAt)}); err != nil {
		return PaymentAgreement{}, false, err
	}
	return a, true, nil
}

// CreateAgreement creates agreement a (its ID and CreatedAt assigned here,
// at now) for a.SubscriberID in the transaction and records
// PaymentAgreementCreated. An Invoice agreement is created only if the
// subscriber has no live one; otherwise the existing one is returned and
// created is false. A subscriber missing from the tenant is ErrNotFound; a
// taken External reference ErrAgreementReferenceTaken.
func (tx *Tx) CreateAgreement(ctx context.Context, a PaymentAgreement, now time.Time) (out PaymentAgreement, created bool, err error) {
	if !ValidID(a.SubscriberID) {
		return PaymentAgreement{}, false, ErrNotFound
	}
	var one int
	if err := tx.tx.QueryRowContext(ctx, `SELECT 1 FROM subscribers WHERE tenant_id = $1 AND id = $2`,
		tx.tenant, a.SubscriberID).Scan(&one); err != nil {
		return PaymentAgreement{}, false, fmt.Errorf("store: subscriber %s: %w", a.SubscriberID, notFound(err))
	}
	if a.ProviderType == ProviderInvoice {
		return tx.invoiceAgreement(ctx, a.SubscriberID, now)
	}
	a.ID, a.CreatedAt, a.DeletedAt = NewID(), now.UTC().Truncate(time.Microsecond), nil
	if err := tx.InsertPaymentAgreement(ctx, a); err != nil {
		return PaymentAgreement{}, false, err
	}
	return a, true, nil
}

// CreatePaymentAgreement is Tx.CreateAgreement in its own transaction.
func (s *Store) CreatePaymentAgreement(ctx context.Context, a PaymentAgreement, now time.Time) (PaymentAgreement, bool, error) {
	var (
		out     PaymentAgreement
		created bool
	)
	err := s.InTx(ctx, func(tx *Tx) error {
		var err error
		out, created, err = tx.CreateAgreement(ctx, a, now)
		return err
	})
	return out, created, err
}

// PaymentAgreement returns agreement id of the context's tenant, deleted
// or not, or ErrNotFound.
func (s *Store) PaymentAgreement(ctx context.Context, id string) (PaymentAgreement, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return PaymentAgreement{}, err
	}
	if !ValidID(id) {
		return PaymentAgreement{}, ErrNotFound
	}
	a, err := scanAgreement(s.r.QueryRowContext(ctx, `SELECT `+agreementColumns+` FROM payment_agreements
		WHERE tenant_id = $1 AND id = $2`, tenant, id))
	if err != nil {
		return PaymentAgreement{}, fmt.Errorf("store: payment agreement %s: %w", id, notFound(err))
	}
	return a, nil
}

// AgreementFilter narrows ListPaymentAgreements; zero fields do not
// filter.
type AgreementFilter struct {
	SubscriberID string
	ProviderType string
	Reference    string
	// IncludeDeleted lists deleted agreements too; by default only live
	// ones are listed.
	IncludeDeleted bool
}

// ListPaymentAgreements returns one page of the tenant's agreements,
// oldest first, and the cursor of the next page ("" on the last).
func (s *Store) ListPaymentAgreements(ctx context.Context, f AgreementFilter, p Page) ([]PaymentAgreement, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	if f.SubscriberID != "" && !ValidID(f.SubscriberID) {
		return nil, "", nil
	}
	q := tenantFilter(tenant)
	if f.SubscriberID != "" {
		q.add("subscriber_id = ?", f.SubscriberID)
	}
	if f.ProviderType != "" {
		q.add("provider_type = ?", f.ProviderType)
	}
	if f.Reference != "" {
		q.add("provider_agreement_reference = ?", f.Reference)
	}
	if !f.IncludeDeleted {
		q.conds = append(q.conds, "deleted_at IS NULL")
	}
	tail := q.page(p)
	out, err := queryAll(ctx, s.r, scanAgreement, `SELECT `+agreementColumns+` FROM payment_agreements`+q.where()+tail, q.args...)
	if err != nil {
		return nil, "", fmt.Errorf("store: list payment agreements: %w", err)
	}
	out, next := trimPage(out, p, func(a PaymentAgreement) string { return a.ID })
	return out, next, nil
}

// AgreementDeletion is what deleting an agreement did.
type AgreementDeletion struct {
	// Deleted is false when the agreement was already deleted (nothing
	// happened).
	Deleted bool
	// FallbackID is the Invoice agreement the agreement's subscriptions
	// moved to ("" when none moved or it was the Invoice agreement).
	FallbackID string
	// Moved are the subscription periods that moved to it.
	Moved []string
}

// DeletePaymentAgreement deletes agreement id softly at now, in one
// transaction with its PaymentAgreementDeleted event. Every period using
// it that has not ended (the running one, any created ahead, any not
// started yet) moves to the subscriber's Invoice agreement, which is
// created if missing. The Invoice agreement itself cannot be deleted while
// such a period uses it: *InUseError naming them. Deleting a deleted
// agreement does nothing.
func (s *Store) DeletePaymentAgreement(ctx context.Context, id string, now time.Time) (AgreementDeletion, error) {
	var out AgreementDeletion
	err := s.InTx(ctx, func(tx *Tx) error {
		var err error
		out, err = tx.deleteAgreement(ctx, id, now)
		return err
	})
	if err != nil {
		return AgreementDeletion{}, fmt.Errorf("store: delete payment agreement %s: %w", id, err)
	}
	return out, nil
}

// DeleteAgreementsOf deletes at now every live agreement of providerType
// whose reference is ref, each as DeletePaymentAgreement does (its
// subscriptions move to the Invoice agreement, PaymentAgreementDeleted is
// recorded), in tx. It is how a provider-side mandate's end reaches
// Kadens' agreements, the one definition every provider calls: a bank's
// cancellation or rejection (Autogiro, AvtaleGiro), a stop in an app.
// The agreements are deleted in id order, so two transactions ending the
// same mandate lock them in the same order.
func (tx *Tx) DeleteAgreementsOf(ctx context.Context, providerType, ref string, now time.Time) ([]AgreementDeletion, error) {
	ids, err := QueryAll(ctx, tx, func(r Scanner) (string, error) {
		var id string
		return id, r.Scan(&id)
	}, `SELECT id FROM payment_agreements WHERE tenant_id = $1 AND provider_type = $2
		AND provider_agreement_reference = $3 AND deleted_at IS NULL ORDER BY id`, tx.tenant, providerType, ref)
	if err != nil {
		return nil, fmt.Errorf("store: %s agreements of %s: %w", providerType, ref, err)
	}
	out := make([]AgreementDeletion, 0, len(ids))
	for _, id := range ids {
		d, err := tx.deleteAgreement(ctx, id, now)
		if err != nil {
			return nil, fmt.Errorf("store: delete payment agreement %s of %s %s: %w", id, providerType, ref, err)
		}
		out = append(out, d)
	}
	return out, nil
}

func (tx *Tx) deleteAgreement(ctx context.Context, id string, now time.Time) (AgreementDeletion, error) {
	if !ValidID(id) {
		return AgreementDeletion{}, ErrNotFound
	}
	// Marking it deleted first waits, on PostgreSQL, for transactions that
	// hold the agreement (forShare) to commit the subscriptions they were
	// writing; the statements below then see those subscriptions.
	a, err := scanAgreement(tx.tx.QueryRowContext(ctx, `UPDATE payment_agreements SET deleted_at = $3
		WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL RETURNING `+agreementColumns, tx.tenant, id, ts(now)))
	if errors.Is(err, sql.ErrNoRows) {
		if _, err := scanAgreement(tx.tx.QueryRowContext(ctx, `SELECT `+agreementColumns+` FROM payment_agreements
			WHERE tenant_id = $1 AND id = $2`, tx.tenant, id)); err != nil {
			return AgreementDeletion{}, notFound(err)
		}
		return AgreementDeletion{}, nil // deleted before
	}
	if err != nil {
		return AgreementDeletion{}, err
	}
	out := AgreementDeletion{Deleted: true}
	if a.ProviderType == ProviderInvoice {
		users, err := tx.agreementUsers(ctx, a, now)
		if err != nil {
			return AgreementDeletion{}, err
		}
		if len(users) > 0 {
			return AgreementDeletion{}, &InUseError{What: "payment agreement", ID: a.ID, By: "subscription", IDs: users}
		}
	} else {
		fallback, err := tx.InvoiceAgreement(ctx, a.SubscriberID, now)
		if err != nil {
			return AgreementDeletion{}, err
		}
		out.FallbackID = fallback.ID
		if out.Moved, err = tx.moveAgreementUsers(ctx, a, fallback.ID, now); err != nil {
			return AgreementDeletion{}, err
		}
	}
	if err := tx.AddEvents(ctx, []NewEvent{agreementEvent(EventPaymentAgreementDeleted, a, now)}); err != nil {
		return AgreementDeletion{}, err
	}
	return out, nil
}

// usingCond selects the periods of agreement $3 (of subscriber $2) that
// have not ended at $4: running, created ahead or not started, and not
// deactivated. Only the agreement's subscriber's subscriptions can use it,
// so the subscriber index finds them.
const usingCond = `tenant_id = $1 AND subscriber_id = $2 AND payment_agreement_id = $3 AND period_end > $4 AND deactivated_at IS NULL`

func (tx *Tx) agreementUsers(ctx context.Context, a PaymentAgreement, now time.Time) ([]string, error) {
	rows, err := tx.tx.QueryContext(ctx, `SELECT id FROM subscriptions WHERE `+usingCond+` ORDER BY id LIMIT 20`,
		tx.tenant, a.SubscriberID, a.ID, ts(now))
	if err != nil {
		return nil, err
	}
	return scanIDs(rows)
}

// moveAgreementUsers moves the unended periods of agreement a to agreement
// to, bumping their version so an engine worker holding an older copy
// fails its write and reads them again. The statement repeats until it
// finds nothing: on PostgreSQL a renewal committing meanwhile may have
// copied the old agreement into a period the previous statement could not
// see yet; the next statement sees it (and any later renewal reads the
// moved predecessor).
func (tx *Tx) moveAgreementUsers(ctx context.Context, a PaymentAgreement, to string, now time.Time) ([]string, error) {
	var moved []string
	for range 10 {
		rows, err := tx.tx.QueryContext(ctx, `UPDATE subscriptions SET payment_agreement_id = $5, version = version + 1
			WHERE `+usingCond+` RETURNING id`, tx.tenant, a.SubscriberID, a.ID, ts(now), to)
		if err != nil {
			return nil, fmt.Errorf("move subscriptions to agreement %s: %w", to, err)
		}
		ids, err := scanIDs(rows)
		if err != nil {
			return nil, fmt.Errorf("move subscriptions to agreement %s: %w", to, err)
		}
		if len(ids) == 0 {
			return moved, nil
		}
		moved = append(moved, ids...)
	}
	return nil, fmt.Errorf("move subscriptions to agreement %s: still changing: %w", to, ErrConflict)
}

func scanIDs(rows *sql.Rows) ([]string, error) {
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// ChangePaymentAgreement makes agreement agreementID the agreement of
// subscription subscriptionID from now on: that period, if it has not
// ended, and every later period of the subscription (linked by
// nextSubscriptionId: renewals, a period created ahead, the series a plan
// change began) that has not ended. Renewals copy the agreement of the
// period they follow, so later periods inherit it. Invoices already issued
// are documents and keep theirs. It returns the periods it changed.
//
// A missing subscription is ErrNotFound; an agreement that is not a live
// agreement of the subscription's subscriber is ErrAgreementNotUsable; a
// subscription without an unended period is ErrSubscriptionEnded.
func (s *Store) ChangePaymentAgreement(ctx context.Context, subscriptionID, agreementID string, now time.Time) ([]string, error) {
	var changed []string
	var err error
	// A period written by a concurrent engine batch fails the version
	// check; its renewal is then visible, so trying again sees it.
	for attempt := 0; attempt < 3; attempt++ {
		err = s.InTx(ctx, func(tx *Tx) error {
			var err error
			changed, err = tx.changeAgreement(ctx, subscriptionID, agreementID, now)
			return err
		})
		if !errors.Is(err, ErrConflict) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("store: change payment agreement of subscription %s: %w", subscriptionID, err)
	}
	return changed, nil
}

func (tx *Tx) changeAgreement(ctx context.Context, subscriptionID, agreementID string, now time.Time) ([]string, error) {
	sub, err := tx.Subscription(ctx, subscriptionID)
	if err != nil {
		return nil, err
	}
	if !ValidID(agreementID) {
		return nil, ErrAgreementNotUsable
	}
	if _, err := scanAgreement(tx.tx.QueryRowContext(ctx, `SELECT `+agreementColumns+` FROM payment_agreements
		WHERE tenant_id = $1 AND id = $2 AND subscriber_id = $3 AND deleted_at IS NULL`+tx.forShare(),
		tx.tenant, agreementID, sub.SubscriberID)); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, ErrAgreementNotUsable
		}
		return nil, err
	}
	var changed []string
	unended := false
	for cur := sub; ; {
		if cur.PeriodEnd.After(now) && cur.DeactivatedAt == nil {
			unended = true
			if cur.PaymentAgreementID == nil || *cur.PaymentAgreementID != agreementID {
				res, err := tx.tx.ExecContext(ctx, `UPDATE subscriptions SET payment_agreement_id = $3, version = version + 1
					WHERE tenant_id = $1 AND id = $2 AND version = $4`, tx.tenant, cur.ID, agreementID, cur.Version)
				if err != nil {
					return nil, fmt.Errorf("update subscription %s: %w", cur.ID, err)
				}
				if n, err := res.RowsAffected(); err != nil {
					return nil, fmt.Errorf("update subscription %s: %w", cur.ID, err)
				} else if n == 0 {
					return nil, fmt.Errorf("subscription %s changed concurrently: %w", cur.ID, ErrConflict)
				}
				changed = append(changed, cur.ID)
			}
		}
		if cur.NextID == nil {
			break
		}
		if cur, err = tx.Subscription(ctx, *cur.NextID); err != nil {
			return nil, err
		}
	}
	if !unended {
		return nil, ErrSubscriptionEnded
	}
	return changed, nil
}

// ImportRow is one agreement of an import, validated by the caller.
type ImportRow struct {
	Agreement PaymentAgreement
	// Rejected says the caller found the row invalid; the store leaves it.
	Rejected bool
}

// Import outcomes of a row.
const (
	ImportCreated  = "Created"
	ImportSkipped  = "Skipped"
	ImportRejected = "Rejected"
)

// ImportOutcome is what the import did with a row: Created or Skipped
// with the agreement's id, or Rejected with the field and reason.
type ImportOutcome struct {
	Status string
	ID     string
	// Field and Reason explain a rejection found here (a missing
	// subscriber, a reference another subscriber's agreement holds).
	Field, Reason string
}

// ImportPaymentAgreements creates, in one transaction at now, the
// agreements of rows that do not exist yet. An import is idempotent by
// (providerType, providerAgreementReference) within the tenant (an
// Invoice agreement, which has no reference, by its subscriber): a row
// whose key a live agreement of the same subscriber holds, or an earlier
// row of this import, is Skipped with that agreement's id; a key held by
// another subscriber's agreement is Rejected. So is a row naming a
// subscriber missing from the tenant. Rows marked Rejected by the caller
// are left alone (their outcome is the zero value).
func (s *Store) ImportPaymentAgreements(ctx context.Context, rows []ImportRow, now time.Time) ([]ImportOutcome, error) {
	out := make([]ImportOutcome, len(rows))
	err := s.InTx(ctx, func(tx *Tx) error {
		if tx.s.engine == Postgres {
			// Two imports of the same rows at once would each see the
			// other's rows missing; taking turns per tenant keeps the
			// import idempotent (EHF and OIO keys have no unique index).
			if _, err := tx.tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`,
				"paymentagreement-import:"+tx.tenant); err != nil {
				return err
			}
		}
		return tx.importAgreements(ctx, rows, out, now)
	})
	if err != nil {
		return nil, fmt.Errorf("store: import payment agreements: %w", err)
	}
	return out, nil
}

func (tx *Tx) importAgreements(ctx context.Context, rows []ImportRow, out []ImportOutcome, now time.Time) error {
	// Which subscribers exist, in one IN query per chunk.
	var subs []string
	seen := map[string]bool{}
	for _, r := range rows {
		if id := r.Agreement.SubscriberID; !r.Rejected && ValidID(id) && !seen[id] {
			seen[id] = true
			subs = append(subs, id)
		}
	}
	exists := map[string]bool{}
	for start := 0; start < len(subs); start += maxChunk {
		chunk := subs[start:min(start+maxChunk, len(subs))]
		args := []any{tx.tenant}
		marks := make([]string, len(chunk))
		for i, id := range chunk {
			args = append(args, id)
			marks[i] = fmt.Sprintf("$%d", i+2)
		}
		r, err := tx.tx.QueryContext(ctx, `SELECT id FROM subscribers WHERE tenant_id = $1 AND id IN (`+strings.Join(marks, ", ")+`)`, args...)
		if err != nil {
			return err
		}
		ids, err := scanIDs(r)
		if err != nil {
			return err
		}
		for _, id := range ids {
			exists[id] = true
		}
	}

	var events []NewEvent
	// done maps a key to the agreement this import created or found for it.
	done := map[string]PaymentAgreement{}
	for i, r := range rows {
		if r.Rejected {
			continue
		}
		a := r.Agreement
		if !exists[a.SubscriberID] {
			out[i] = ImportOutcome{Status: ImportRejected, Field: "subscriberId", Reason: fmt.Sprintf("no subscriber %s in this tenant", a.SubscriberID)}
			continue
		}
		key := a.ProviderType + "\x00" + a.ProviderAgreementReference
		if a.ProviderType == ProviderInvoice {
			key = a.ProviderType + "\x00" + a.SubscriberID
		}
		have, ok := done[key]
		if !ok {
			var err error
			have, ok, err = tx.liveByKey(ctx, a)
			if err != nil {
				return err
			}
		}
		if ok {
			done[key] = have
			if have.SubscriberID != a.SubscriberID {
				out[i] = ImportOutcome{Status: ImportRejected, Field: "providerAgreementReference",
					Reason: fmt.Sprintf("%s %q is already agreement %s of subscriber %s", a.ProviderType, a.ProviderAgreementReference, have.ID, have.SubscriberID)}
				continue
			}
			out[i] = ImportOutcome{Status: ImportSkipped, ID: have.ID}
			continue
		}
		a.ID, a.CreatedAt = NewID(), now.UTC().Truncate(time.Microsecond)
		ok, err := tx.insertAgreement(ctx, a)
		if err != nil {
			return err
		}
		if !ok {
			// Only a unique index can refuse it, and liveByKey found no
			// holder: a concurrent POST took the key meanwhile.
			return fmt.Errorf("agreement %s %q created concurrently: %w", a.ProviderType, a.ProviderAgreementReference, ErrConflict)
		}
		done[key] = a
		out[i] = ImportOutcome{Status: ImportCreated, ID: a.ID}
		events = append(events, agreementEvent(EventPaymentAgreementCreated, a, now))
	}
	return tx.AddEvents(ctx, events)
}

// liveByKey finds the live agreement holding a's import key.
func (tx *Tx) liveByKey(ctx context.Context, a PaymentAgreement) (PaymentAgreement, bool, error) {
	var (
		got PaymentAgreement
		err error
	)
	if a.ProviderType == ProviderInvoice {
		got, err = tx.liveInvoiceAgreement(ctx, a.SubscriberID)
	} else {
		got, err = scanAgreement(tx.tx.QueryRowContext(ctx, `SELECT `+agreementColumns+` FROM payment_agreements
			WHERE tenant_id = $1 AND provider_type = $2 AND provider_agreement_reference = $3 AND deleted_at IS NULL
			ORDER BY (subscriber_id = $4) DESC, id LIMIT 1`, tx.tenant, a.ProviderType, a.ProviderAgreementReference, a.SubscriberID))
	}
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return PaymentAgreement{}, false, nil
	case err != nil:
		return PaymentAgreement{}, false, err
	}
	return got, true, nil
}
