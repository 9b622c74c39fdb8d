package webhook

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// The webhook wing's SQL (docs/WEBHOOKS.md): registrations, their
// handshake state, and the tenant's view of their deliveries. It runs
// through the store's query kit (internal/store/kit.go), the tenant's
// condition first in every WHERE; queue.go holds the dispatcher's side
// (the relay's fan-out, claims and outcomes).

const webhookColumns = `id, url, event_types, format, status, disable_validation, validated_at, created_at, updated_at, secret,
	validation_failure, validation_issued_at`

func scanWebhook(row store.Scanner) (Webhook, error) {
	var (
		w         Webhook
		kinds     string
		validated sql.NullTime
		failure   sql.NullString
		issued    sql.NullTime
	)
	if err := row.Scan(&w.ID, &w.URL, &kinds, &w.Format, &w.Status, &w.DisableValidation, &validated,
		&w.CreatedAt, &w.UpdatedAt, &w.Secret, &failure, &issued); err != nil {
		return Webhook{}, err
	}
	if err := json.Unmarshal([]byte(kinds), &w.EventTypes); err != nil {
		return Webhook{}, fmt.Errorf("event types of webhook %s: %w", w.ID, err)
	}
	w.ValidatedAt = fromNullTime(validated)
	w.CreatedAt, w.UpdatedAt = w.CreatedAt.UTC(), w.UpdatedAt.UTC()
	if w.Status == WebhookPending {
		var expires *time.Time
		if issued.Valid {
			at := issued.Time.UTC().Add(WebhookValidationTTL)
			expires = &at
		}
		reason := PendingReason(failure.String, expires)
		w.StatusReason, w.ValidationURLExpiresAt = &reason, expires
	}
	return w, nil
}

// validationColumns are the values of status, validated_at,
// validation_token and validation_issued_at: Pending with v's token when a
// handshake is wanted, else Validated at now. Either way an earlier
// handshake's failure (validation_failure) no longer applies.
func validationColumns(v *WebhookValidation, now time.Time) []any {
	if v == nil {
		return []any{WebhookValidated, store.TimeParam(now), nil, nil}
	}
	return []any{WebhookPending, nil, v.TokenHash, store.TimeParam(v.IssuedAt)}
}

// Create stores a registration: Pending with the manual validation v,
// or Validated at once when v is nil (disableValidation).
func Create(ctx context.Context, st *store.Store, w Webhook, v *WebhookValidation, now time.Time) (Webhook, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return Webhook{}, err
	}
	kinds, err := json.Marshal(w.EventTypes)
	if err != nil {
		return Webhook{}, fmt.Errorf("webhook: encode event types: %w", err)
	}
	id := store.NewID()
	args := append([]any{id, tenant, w.URL, string(kinds), w.Format, w.Secret, w.DisableValidation},
		validationColumns(v, now)...)
	args = append(args, store.TimeParam(now))
	if _, err := st.Writer().Exec(ctx, `INSERT INTO webhooks (id, tenant_id, url, event_types, format, secret,
		disable_validation, status, validated_at, validation_token, validation_issued_at, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12)`, args...); err != nil {
		return Webhook{}, fmt.Errorf("webhook: create: %w", err)
	}
	return Registration(ctx, st, id)
}

// Registration returns one registration of the tenant.
func Registration(ctx context.Context, st *store.Store, id string) (Webhook, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return Webhook{}, err
	}
	w, err := scanWebhook(st.Writer().QueryRow(ctx, `SELECT `+webhookColumns+` FROM webhooks WHERE tenant_id = $1 AND id = $2`, tenant, id))
	if err != nil {
		return Webhook{}, fmt.Errorf("webhook %s: %w", id, store.NotFound(err))
	}
	return w, nil
}

// List returns one page of the tenant's registrations.
func List(ctx context.Context, st *store.Store, p store.Page) ([]Webhook, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	q := store.TenantFilter("", tenant)
	out, next, err := store.ListPage(ctx, st.Reader(), scanWebhook, `SELECT `+webhookColumns+` FROM webhooks`, q, "id", p,
		func(w Webhook) string { return w.ID })
	if err != nil {
		return nil, "", fmt.Errorf("webhook: list: %w", err)
	}
	return out, next, nil
}

// Update replaces a registration's url, event types, format and
// validation setting, and its secret when w.Secret is set. With v it goes
// back to Pending with a new handshake; without v it becomes Validated when
// validation is disabled and otherwise keeps its status.
func Update(ctx context.Context, st *store.Store, w Webhook, v *WebhookValidation, now time.Time) (Webhook, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return Webhook{}, err
	}
	kinds, err := json.Marshal(w.EventTypes)
	if err != nil {
		return Webhook{}, fmt.Errorf("webhook: encode event types: %w", err)
	}
	err = st.InTx(ctx, func(tx *store.Tx) error {
		var status string
		if err := tx.QueryRow(ctx, `SELECT status FROM webhooks WHERE tenant_id = $1 AND id = $2`, tenant, w.ID).Scan(&status); err != nil {
			return store.NotFound(err)
		}
		if _, err := tx.Exec(ctx, `UPDATE webhooks SET url = $3, event_types = $4, format = $5,
			disable_validation = $6, secret = COALESCE($7, secret), updated_at = $8 WHERE tenant_id = $1 AND id = $2`,
			tenant, w.ID, w.URL, string(kinds), w.Format, w.DisableValidation, orNull(w.Secret), store.TimeParam(now)); err != nil {
			return err
		}
		if v == nil && (!w.DisableValidation || status == WebhookValidated) {
			return nil
		}
		_, err := tx.Exec(ctx, `UPDATE webhooks SET status = $3, validated_at = $4, validation_token = $5,
			validation_issued_at = $6, validation_failure = NULL WHERE tenant_id = $1 AND id = $2`,
			append([]any{tenant, w.ID}, validationColumns(v, now)...)...)
		return err
	})
	if err != nil {
		return Webhook{}, fmt.Errorf("webhook: update %s: %w", w.ID, err)
	}
	return Registration(ctx, st, w.ID)
}

func orNull(v string) any {
	if v == "" {
		return nil
	}
	return v
}

// Delete removes a registration with its deliveries.
func Delete(ctx context.Context, st *store.Store, id string) error {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	res, err := st.Writer().Exec(ctx, `DELETE FROM webhooks WHERE tenant_id = $1 AND id = $2`, tenant, id)
	if err != nil {
		return fmt.Errorf("webhook: delete %s: %w", id, err)
	}
	if err := store.OneRow(res); err != nil {
		return err
	}
	return nil
}

// Validate marks a Pending registration Validated if its pending
// validation still has tokenHash (a later change of url replaces it).
func Validate(ctx context.Context, st *store.Store, id, tokenHash string, now time.Time) error {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	res, err := st.Writer().Exec(ctx, `UPDATE webhooks SET status = $4, validated_at = $5, validation_token = NULL,
		validation_issued_at = NULL, validation_failure = NULL, updated_at = $5
		WHERE tenant_id = $1 AND id = $2 AND validation_token = $3`,
		tenant, id, tokenHash, WebhookValidated, store.TimeParam(now))
	if err != nil {
		return fmt.Errorf("webhook: validate %s: %w", id, err)
	}
	if err := store.OneRow(res); err != nil {
		return err
	}
	return nil
}

// RecordValidationFailure records why the validation event of the
// pending validation tokenHash did not validate registration id; nothing
// when the registration has moved on (validated meanwhile, or a PUT sent
// another validation event).
func RecordValidationFailure(ctx context.Context, st *store.Store, id, tokenHash, failure string) error {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	if _, err := st.Writer().Exec(ctx, `UPDATE webhooks SET validation_failure = $4
		WHERE tenant_id = $1 AND id = $2 AND validation_token = $3 AND status = 'Pending'`, tenant, id, tokenHash, failure); err != nil {
		return fmt.Errorf("webhook: record validation failure of %s: %w", id, err)
	}
	return nil
}

// ByValidationToken finds the registration whose manual validation
// URL carries the token with SHA-256 tokenHash, in any tenant: the URL is
// opened without credentials, the unguessable token is the credential.
func ByValidationToken(ctx context.Context, st *store.Store, tokenHash string) (tenantID, id string, issuedAt time.Time, err error) {
	err = st.Reader().QueryRow(ctx, `SELECT tenant_id, id, validation_issued_at FROM webhooks WHERE validation_token = $1`,
		tokenHash).Scan(&tenantID, &id, &issuedAt)
	if err != nil {
		return "", "", time.Time{}, fmt.Errorf("webhook by validation token: %w", store.NotFound(err))
	}
	return tenantID, id, issuedAt.UTC(), nil
}

// ListDeliveries returns one page of a registration's deliveries,
// oldest first, each with its attempts; ErrNotFound when the registration
// is not the tenant's.
func ListDeliveries(ctx context.Context, st *store.Store, webhookID string, f DeliveryFilter, p store.Page) ([]WebhookDelivery, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	var out []WebhookDelivery
	err = st.InReadTx(ctx, func(q store.ReadTx) error {
		var one int
		if err := q.QueryRow(ctx, `SELECT 1 FROM webhooks WHERE tenant_id = $1 AND id = $2`, tenant, webhookID).Scan(&one); err != nil {
			return store.NotFound(err)
		}
		fl := store.TenantFilter("", tenant)
		fl.Add("webhook_id = ?", webhookID)
		if f.Status != "" {
			fl.Add("status = ?", f.Status)
		}
		tail := fl.Page("id", p)
		var err error
		out, err = store.QueryAll(ctx, q, func(row store.Scanner) (WebhookDelivery, error) {
			var (
				d               WebhookDelivery
				next, completed sql.NullTime
				events          string
			)
			err := row.Scan(&d.ID, &d.WebhookID, &events, &d.Status, &next, &d.CreatedAt, &completed)
			if err == nil {
				err = json.Unmarshal([]byte(events), &d.EventIDs)
			}
			d.NextAttemptAt, d.CompletedAt, d.CreatedAt = fromNullTime(next), fromNullTime(completed), d.CreatedAt.UTC()
			if d.Status != DeliveryPending {
				d.NextAttemptAt = nil
			}
			d.Attempts = []WebhookAttempt{}
			return d, err
		}, `SELECT id, webhook_id, event_ids, status, next_attempt_at, created_at, completed_at FROM webhook_deliveries`+fl.Where()+tail, fl.Args()...)
		if err != nil || len(out) == 0 {
			return err
		}
		byID := map[string]*WebhookDelivery{}
		ids := make([]string, len(out))
		for i := range out {
			byID[out[i].ID] = &out[i]
			ids[i] = out[i].ID
		}
		list, args := store.InList(ids, 1)
		rows, err := q.Query(ctx, `SELECT delivery_id, number, attempted_at, status_code, latency_ms, error
			FROM webhook_attempts WHERE delivery_id IN `+list+` ORDER BY delivery_id, number`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				id   string
				a    WebhookAttempt
				code sql.NullInt64
			)
			if err := rows.Scan(&id, &a.Number, &a.AttemptedAt, &code, &a.LatencyMs, &a.Error); err != nil {
				return err
			}
			a.AttemptedAt = a.AttemptedAt.UTC()
			if code.Valid {
				c := int(code.Int64)
				a.StatusCode = &c
			}
			if d := byID[id]; d != nil {
				d.Attempts = append(d.Attempts, a)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, "", fmt.Errorf("webhook: list deliveries of %s: %w", webhookID, err)
	}
	out, next := store.TrimPage(out, p, func(d WebhookDelivery) string { return d.ID })
	return out, next, nil
}

// Redeliver queues a delivery again, due at now, whatever its
// status; its retry schedule starts over. The webhook-id stays the same, so
// receivers that deduplicate by it see a replay.
func Redeliver(ctx context.Context, st *store.Store, webhookID, deliveryID string, now time.Time) error {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	res, err := st.Writer().Exec(ctx, `UPDATE webhook_deliveries SET status = $4, next_attempt_at = $5, retry_base = attempts,
		completed_at = NULL WHERE tenant_id = $1 AND webhook_id = $2 AND id = $3`,
		tenant, webhookID, deliveryID, DeliveryPending, store.TimeParam(now))
	if err != nil {
		return fmt.Errorf("webhook: redeliver %s: %w", deliveryID, err)
	}
	if err := store.OneRow(res); err != nil {
		return err
	}
	st.NotifyEvents()
	return nil
}

func fromNullTime(nt sql.NullTime) *time.Time {
	if !nt.Valid {
		return nil
	}
	t := nt.Time.UTC()
	return &t
}
