package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Provider types of payment agreements.
const (
	ProviderInvoice    = "Invoice"
	ProviderEHF        = "EHF"
	ProviderOIO        = "OIO"
	ProviderAutogiro   = "Autogiro"
	ProviderAvtaleGiro = "AvtaleGiro"
	ProviderExternal   = "External"
)

// PaymentAgreement links a subscriber to a way of paying. Every subscriber
// who has ordered has at least the default Invoice agreement (bank
// transfer with a KID reference).
type PaymentAgreement struct {
	ID                         string     `json:"id"`
	SubscriberID               string     `json:"subscriberId"`
	ProviderType               string     `json:"providerType"`
	ProviderAgreementReference string     `json:"providerAgreementReference"`
	PaymentMethod              string     `json:"paymentMethod"`
	CreatedAt                  time.Time  `json:"createdAt"`
	DeletedAt                  *time.Time `json:"deletedAt,omitempty"`
}

// InsertPaymentAgreement stores a (ID set by the caller).
func (tx *Tx) InsertPaymentAgreement(ctx context.Context, a PaymentAgreement) error {
	_, err := tx.exec(ctx, `INSERT INTO payment_agreements
		(id, tenant_id, subscriber_id, provider_type, provider_agreement_reference, payment_method, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		a.ID, tx.tenant, a.SubscriberID, a.ProviderType, a.ProviderAgreementReference, a.PaymentMethod, ts(a.CreatedAt))
	if err != nil {
		return fmt.Errorf("store: insert payment agreement: %w", err)
	}
	return nil
}

// InvoiceAgreement returns the subscriber's live Invoice agreement,
// creating it at now if the subscriber has none.
func (tx *Tx) InvoiceAgreement(ctx context.Context, subscriberID string, now time.Time) (PaymentAgreement, error) {
	a := PaymentAgreement{SubscriberID: subscriberID, ProviderType: ProviderInvoice}
	var created time.Time
	err := tx.tx.QueryRowContext(ctx, `SELECT id, payment_method, created_at FROM payment_agreements
		WHERE tenant_id = $1 AND subscriber_id = $2 AND provider_type = 'Invoice' AND deleted_at IS NULL
		ORDER BY id LIMIT 1`, tx.tenant, subscriberID).Scan(&a.ID, &a.PaymentMethod, &created)
	switch {
	case err == nil:
		a.CreatedAt = created.UTC()
		return a, nil
	case !errors.Is(err, sql.ErrNoRows):
		return PaymentAgreement{}, fmt.Errorf("store: invoice agreement: %w", err)
	}
	a.ID, a.PaymentMethod, a.CreatedAt = NewID(), "BankTransfer", now.UTC()
	return a, tx.InsertPaymentAgreement(ctx, a)
}
