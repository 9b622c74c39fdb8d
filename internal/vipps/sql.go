package vipps

import (
	"context"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/store"
)

// sealedKeys are a merchant's sealed secrets, read only to build a client.
type sealedKeys struct{ secret, key, hook string }

const merchantColumns = `client_id, merchant_serial_number, mode, base_url, product_name, merchant_agreement_url,
	merchant_redirect_url, max_amount, interval_unit, interval_count, created_at, updated_at, client_secret_sealed, subscription_key_sealed,
	webhook_secret_sealed`

func upsertMerchant(ctx context.Context, st *store.Store, tenant string, m VippsMerchant, k sealedKeys, now time.Time) (VippsMerchant, error) {
	_, err := st.Writer().Exec(ctx, `INSERT INTO vipps_merchants (tenant_id, client_id, client_secret_sealed, subscription_key_sealed,
		merchant_serial_number, mode, base_url, product_name, merchant_agreement_url, merchant_redirect_url, max_amount,
		interval_unit, interval_count, created_at, updated_at, webhook_secret_sealed)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14, $15)
		ON CONFLICT (tenant_id) DO UPDATE SET client_id = excluded.client_id, client_secret_sealed = excluded.client_secret_sealed,
		subscription_key_sealed = excluded.subscription_key_sealed, merchant_serial_number = excluded.merchant_serial_number,
		mode = excluded.mode, base_url = excluded.base_url, product_name = excluded.product_name,
		merchant_agreement_url = excluded.merchant_agreement_url, merchant_redirect_url = excluded.merchant_redirect_url,
		max_amount = excluded.max_amount, interval_unit = excluded.interval_unit, interval_count = excluded.interval_count,
		webhook_secret_sealed = excluded.webhook_secret_sealed, updated_at = excluded.updated_at`,
		tenant, m.ClientID, k.secret, k.key, m.MerchantSerialNumber, m.Mode, m.BaseURL, m.ProductName, m.MerchantAgreementURL,
		m.MerchantRedirectURL, m.MaxAmount, m.IntervalUnit, m.IntervalCount, store.TimeParam(now), k.hook)
	if err != nil {
		return VippsMerchant{}, fmt.Errorf("vipps: store merchant: %w", err)
	}
	out, _, err := merchant(ctx, st, tenant)
	return out, err
}

// merchant reads the tenant's merchant from the writer (a client built
// from a replica's stale row would hold old keys); none is
// store.ErrNotFound.
func merchant(ctx context.Context, st *store.Store, tenant string) (VippsMerchant, sealedKeys, error) {
	var m VippsMerchant
	var k sealedKeys
	err := st.Writer().QueryRow(ctx, `SELECT `+merchantColumns+` FROM vipps_merchants WHERE tenant_id = $1`, tenant).Scan(
		&m.ClientID, &m.MerchantSerialNumber, &m.Mode, &m.BaseURL, &m.ProductName, &m.MerchantAgreementURL,
		&m.MerchantRedirectURL, &m.MaxAmount, &m.IntervalUnit, &m.IntervalCount, &m.CreatedAt, &m.UpdatedAt, &k.secret, &k.key, &k.hook)
	if err != nil {
		return VippsMerchant{}, sealedKeys{}, fmt.Errorf("vipps: merchant: %w", store.NotFound(err))
	}
	m.CreatedAt, m.UpdatedAt = m.CreatedAt.UTC(), m.UpdatedAt.UTC()
	m.HasWebhookSecret = k.hook != ""
	return m, k, nil
}

// VippsAgreement is the Vipps side of a payment agreement.
type VippsAgreement struct {
	PaymentAgreementID string    `json:"paymentAgreementId"`
	Reference          string    `json:"reference"`
	VippsAgreementID   string    `json:"vippsAgreementId"`
	Status             string    `json:"status" enum:"NEW,PENDING,ACTIVE,STOPPED,EXPIRED"`
	ConfirmationURL    string    `json:"vippsConfirmationUrl"`
	PricingType        string    `json:"pricingType" enum:"LEGACY,VARIABLE"`
	Amount             int64     `json:"amount"`
	IntervalUnit       string    `json:"intervalUnit"`
	IntervalCount      int       `json:"intervalCount"`
	CreatedAt          time.Time `json:"createdAt"`
	UpdatedAt          time.Time `json:"updatedAt"`
}

const agreementColumns = `payment_agreement_id, reference, vipps_agreement_id, status, confirmation_url, pricing_type, amount,
	interval_unit, interval_count, created_at, updated_at`

func scanAgreement(r store.Scanner) (VippsAgreement, error) {
	var a VippsAgreement
	err := r.Scan(&a.PaymentAgreementID, &a.Reference, &a.VippsAgreementID, &a.Status, &a.ConfirmationURL, &a.PricingType,
		&a.Amount, &a.IntervalUnit, &a.IntervalCount, &a.CreatedAt, &a.UpdatedAt)
	a.CreatedAt, a.UpdatedAt = a.CreatedAt.UTC(), a.UpdatedAt.UTC()
	return a, err
}

// insertAgreement records a's Vipps side unless one is recorded (a hook
// delivered again); it reports whether it wrote.
func insertAgreement(ctx context.Context, st *store.Store, tenant string, a VippsAgreement, now time.Time) (bool, error) {
	res, err := st.Writer().Exec(ctx, `INSERT INTO vipps_agreements (tenant_id, payment_agreement_id, reference, vipps_agreement_id,
		status, confirmation_url, pricing_type, amount, interval_unit, interval_count, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11) ON CONFLICT DO NOTHING`,
		tenant, a.PaymentAgreementID, a.Reference, a.VippsAgreementID, a.Status, a.ConfirmationURL, a.PricingType, a.Amount,
		a.IntervalUnit, a.IntervalCount, store.TimeParam(now))
	if err != nil {
		return false, fmt.Errorf("vipps: record agreement %s: %w", a.PaymentAgreementID, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// AgreementOf returns the Vipps side of payment agreement id in the
// tenant; none is store.ErrNotFound.
func AgreementOf(ctx context.Context, st *store.Store, tenant, id string) (VippsAgreement, error) {
	a, err := scanAgreement(st.Writer().QueryRow(ctx, `SELECT `+agreementColumns+` FROM vipps_agreements
		WHERE tenant_id = $1 AND payment_agreement_id = $2`, tenant, id))
	if err != nil {
		return VippsAgreement{}, fmt.Errorf("vipps: agreement of %s: %w", id, store.NotFound(err))
	}
	return a, nil
}

// setDrafted records Vipps' answer to the draft, once (a NEW row only).
func setDrafted(ctx context.Context, st *store.Store, tenant, id, vippsID, url string, now time.Time) error {
	_, err := st.Writer().Exec(ctx, `UPDATE vipps_agreements SET vipps_agreement_id = $3, confirmation_url = $4, status = 'PENDING',
		updated_at = $5 WHERE tenant_id = $1 AND payment_agreement_id = $2 AND status = 'NEW'`,
		tenant, id, vippsID, url, store.TimeParam(now))
	if err != nil {
		return fmt.Errorf("vipps: record draft of %s: %w", id, err)
	}
	return nil
}

// openAgreements lists the tenant's agreements whose Vipps status can
// still change (NEW, PENDING, ACTIVE), for the poller.
func openAgreements(ctx context.Context, st *store.Store, tenant string) ([]VippsAgreement, error) {
	rows, err := st.Writer().Query(ctx, `SELECT `+agreementColumns+` FROM vipps_agreements
		WHERE tenant_id = $1 AND status IN ('NEW', 'PENDING', 'ACTIVE') ORDER BY payment_agreement_id`, tenant)
	if err != nil {
		return nil, fmt.Errorf("vipps: open agreements: %w", err)
	}
	defer rows.Close()
	var out []VippsAgreement
	for rows.Next() {
		a, err := scanAgreement(rows)
		if err != nil {
			return nil, fmt.Errorf("vipps: open agreements: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// merchantTenants lists the tenants with a merchant, for the poller.
func merchantTenants(ctx context.Context, st *store.Store) ([]string, error) {
	rows, err := st.Writer().Query(ctx, `SELECT tenant_id FROM vipps_merchants ORDER BY tenant_id`)
	if err != nil {
		return nil, fmt.Errorf("vipps: merchants: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// agreementByVippsID finds the Vipps side by Vipps' agreement id.
func agreementByVippsID(ctx context.Context, st *store.Store, tenant, vippsID string) (VippsAgreement, error) {
	a, err := scanAgreement(st.Writer().QueryRow(ctx, `SELECT `+agreementColumns+` FROM vipps_agreements
		WHERE tenant_id = $1 AND vipps_agreement_id = $2`, tenant, vippsID))
	if err != nil {
		return VippsAgreement{}, fmt.Errorf("vipps: agreement %s: %w", vippsID, store.NotFound(err))
	}
	return a, nil
}
