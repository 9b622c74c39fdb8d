package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/tenancy"
)

// Webhook is a tenant's registration of an HTTP endpoint for events of
// some kinds. Only a Validated registration receives events; it becomes
// Validated when its endpoint answers the validation handshake or its
// manual validation URL is opened (docs/WEBHOOKS.md).
type Webhook struct {
	ID         string   `json:"id"`
	URL        string   `json:"url"`
	EventTypes []string `json:"eventTypes"`
	Format     string   `json:"format" enum:"EventGrid,CloudEvents"`
	Status     string   `json:"status" enum:"Pending,Validated" description:"Pending until the endpoint proved ownership; only Validated registrations receive events."`
	// StatusReason says why a Pending registration receives nothing yet.
	StatusReason *string `json:"statusReason" example:"The endpoint answered the validation event with 404. It receives no events until it proves ownership: open the validationUrl it was sent (until 2027-01-04T09:05:00Z), or PUT the registration to send a new validation event." description:"Pending: why, and what proves ownership (what the last validation event got back, and until when its validationUrl works). null when Validated."`
	// ValidationURLExpiresAt is when the validationUrl of the last
	// validation event stops working (on the tenant's clock).
	ValidationURLExpiresAt *time.Time `json:"validationUrlExpiresAt" description:"Pending: when the validationUrl of the last validation event stops working (5 minutes after it was sent, on the tenant's clock); after it, a PUT sends a new one. null when Validated."`
	DisableValidation      bool       `json:"disableValidation"`
	ValidatedAt            *time.Time `json:"validatedAt"`
	CreatedAt              time.Time  `json:"createdAt"`
	UpdatedAt              time.Time  `json:"updatedAt"`
	// Secret signs deliveries; it is shown once, when created.
	Secret string `json:"-"`
}

// Webhook statuses.
const (
	WebhookPending   = "Pending"
	WebhookValidated = "Validated"
)

// WebhookValidationTTL is how long the validationUrl of a validation event
// works, on the tenant's clock.
const WebhookValidationTTL = 5 * time.Minute

// WebhookValidation is a pending manual validation: the SHA-256 (hex) of the
// validation URL's token and when it was issued, on the tenant's clock.
type WebhookValidation struct {
	TokenHash string
	IssuedAt  time.Time
}

const webhookColumns = `id, url, event_types, format, status, disable_validation, validated_at, created_at, updated_at, secret,
	validation_failure, validation_issued_at`

func scanWebhook(row scanner) (Webhook, error) {
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

// PendingReason is the statusReason of a Pending registration: failure,
// what the last validation event got back ("" when nothing failed yet: the
// handshake is under way, or the registration changed during it), and what
// still proves ownership, with expires, when the validationUrl of that
// event stops working.
func PendingReason(failure string, expires *time.Time) string {
	var b strings.Builder
	if failure != "" {
		b.WriteString(failure)
		b.WriteString(". ")
	}
	b.WriteString("It receives no events until it proves ownership: ")
	if expires != nil {
		b.WriteString("open the validationUrl it was sent (until " + expires.UTC().Format(time.RFC3339) + "), or ")
	}
	b.WriteString("PUT the registration to send a new validation event.")
	return b.String()
}

// validationColumns are the values of status, validated_at,
// validation_token and validation_issued_at: Pending with v's token when a
// handshake is wanted, else Validated at now. Either way an earlier
// handshake's failure (validation_failure) no longer applies.
func validationColumns(v *WebhookValidation, now time.Time) []any {
	if v == nil {
		return []any{WebhookValidated, ts(now), nil, nil}
	}
	return []any{WebhookPending, nil, v.TokenHash, ts(v.IssuedAt)}
}

// CreateWebhook stores a registration: Pending with the manual validation v,
// or Validated at once when v is nil (disableValidation).
func (s *Store) CreateWebhook(ctx context.Context, w Webhook, v *WebhookValidation, now time.Time) (Webhook, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return Webhook{}, err
	}
	kinds, err := json.Marshal(w.EventTypes)
	if err != nil {
		return Webhook{}, fmt.Errorf("store: encode webhook event types: %w", err)
	}
	id := NewID()
	args := append([]any{id, tenant, w.URL, string(kinds), w.Format, w.Secret, w.DisableValidation},
		validationColumns(v, now)...)
	args = append(args, ts(now))
	if _, err := s.w.ExecContext(ctx, `INSERT INTO webhooks (id, tenant_id, url, event_types, format, secret,
		disable_validation, status, validated_at, validation_token, validation_issued_at, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12)`, args...); err != nil {
		return Webhook{}, fmt.Errorf("store: create webhook: %w", err)
	}
	return s.Webhook(ctx, id)
}

// Webhook returns one registration of the tenant.
func (s *Store) Webhook(ctx context.Context, id string) (Webhook, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return Webhook{}, err
	}
	w, err := scanWebhook(s.w.QueryRowContext(ctx, `SELECT `+webhookColumns+` FROM webhooks WHERE tenant_id = $1 AND id = $2`, tenant, id))
	if err != nil {
		return Webhook{}, fmt.Errorf("store: webhook %s: %w", id, notFound(err))
	}
	return w, nil
}

// ListWebhooks returns one page of the tenant's registrations.
func (s *Store) ListWebhooks(ctx context.Context, p Page) ([]Webhook, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	q := tenantFilter(tenant)
	tail := q.page(p)
	out, err := queryAll(ctx, s.r, scanWebhook, `SELECT `+webhookColumns+` FROM webhooks`+q.where()+tail, q.args...)
	if err != nil {
		return nil, "", fmt.Errorf("store: list webhooks: %w", err)
	}
	out, next := trimPage(out, p, func(w Webhook) string { return w.ID })
	return out, next, nil
}

// UpdateWebhook replaces a registration's url, event types, format and
// validation setting, and its secret when w.Secret is set. With v it goes
// back to Pending with a new handshake; without v it becomes Validated when
// validation is disabled and otherwise keeps its status.
func (s *Store) UpdateWebhook(ctx context.Context, w Webhook, v *WebhookValidation, now time.Time) (Webhook, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return Webhook{}, err
	}
	kinds, err := json.Marshal(w.EventTypes)
	if err != nil {
		return Webhook{}, fmt.Errorf("store: encode webhook event types: %w", err)
	}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		var status string
		if err := tx.QueryRowContext(ctx, `SELECT status FROM webhooks WHERE tenant_id = $1 AND id = $2`, tenant, w.ID).Scan(&status); err != nil {
			return notFound(err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE webhooks SET url = $3, event_types = $4, format = $5,
			disable_validation = $6, secret = COALESCE($7, secret), updated_at = $8 WHERE tenant_id = $1 AND id = $2`,
			tenant, w.ID, w.URL, string(kinds), w.Format, w.DisableValidation, orNull(w.Secret), ts(now)); err != nil {
			return err
		}
		if v == nil && (!w.DisableValidation || status == WebhookValidated) {
			return nil
		}
		_, err := tx.ExecContext(ctx, `UPDATE webhooks SET status = $3, validated_at = $4, validation_token = $5,
			validation_issued_at = $6, validation_failure = NULL WHERE tenant_id = $1 AND id = $2`,
			append([]any{tenant, w.ID}, validationColumns(v, now)...)...)
		return err
	})
	if err != nil {
		return Webhook{}, fmt.Errorf("store: update webhook %s: %w", w.ID, err)
	}
	return s.Webhook(ctx, w.ID)
}

func orNull(v string) any {
	if v == "" {
		return nil
	}
	return v
}

// DeleteWebhook removes a registration with its deliveries.
func (s *Store) DeleteWebhook(ctx context.Context, id string) error {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	res, err := s.w.ExecContext(ctx, `DELETE FROM webhooks WHERE tenant_id = $1 AND id = $2`, tenant, id)
	if err != nil {
		return fmt.Errorf("store: delete webhook %s: %w", id, err)
	}
	if err := oneRow(res); err != nil {
		return err
	}
	return nil
}

// ValidateWebhook marks a Pending registration Validated if its pending
// validation still has tokenHash (a later change of url replaces it).
func (s *Store) ValidateWebhook(ctx context.Context, id, tokenHash string, now time.Time) error {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	res, err := s.w.ExecContext(ctx, `UPDATE webhooks SET status = $4, validated_at = $5, validation_token = NULL,
		validation_issued_at = NULL, validation_failure = NULL, updated_at = $5
		WHERE tenant_id = $1 AND id = $2 AND validation_token = $3`,
		tenant, id, tokenHash, WebhookValidated, ts(now))
	if err != nil {
		return fmt.Errorf("store: validate webhook %s: %w", id, err)
	}
	if err := oneRow(res); err != nil {
		return err
	}
	return nil
}

// RecordWebhookValidationFailure records why the validation event of the
// pending validation tokenHash did not validate registration id; nothing
// when the registration has moved on (validated meanwhile, or a PUT sent
// another validation event).
func (s *Store) RecordWebhookValidationFailure(ctx context.Context, id, tokenHash, failure string) error {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	if _, err := s.w.ExecContext(ctx, `UPDATE webhooks SET validation_failure = $4
		WHERE tenant_id = $1 AND id = $2 AND validation_token = $3 AND status = 'Pending'`, tenant, id, tokenHash, failure); err != nil {
		return fmt.Errorf("store: record webhook %s validation failure: %w", id, err)
	}
	return nil
}

// WebhookByValidationToken finds the registration whose manual validation
// URL carries the token with SHA-256 tokenHash, in any tenant: the URL is
// opened without credentials, the unguessable token is the credential.
func (s *Store) WebhookByValidationToken(ctx context.Context, tokenHash string) (tenantID, id string, issuedAt time.Time, err error) {
	err = s.r.QueryRowContext(ctx, `SELECT tenant_id, id, validation_issued_at FROM webhooks WHERE validation_token = $1`,
		tokenHash).Scan(&tenantID, &id, &issuedAt)
	if err != nil {
		return "", "", time.Time{}, fmt.Errorf("store: webhook by validation token: %w", notFound(err))
	}
	return tenantID, id, issuedAt.UTC(), nil
}

// Delivery statuses.
const (
	DeliveryPending   = "Pending"
	DeliveryDelivered = "Delivered"
	DeliveryFailed    = "Failed"
)

// WebhookDelivery is one message sent (or to be sent) to one
// registration: one event, or (EventGrid format) a batch of events that
// were fanned out together. Its id is the webhook-id header of every
// attempt.
type WebhookDelivery struct {
	ID        string   `json:"id"`
	WebhookID string   `json:"webhookId"`
	EventIDs  []string `json:"eventIds" description:"The events the message carries, in order."`
	Status    string   `json:"status" enum:"Pending,Delivered,Failed" description:"Pending until an attempt succeeds (Delivered) or the retry schedule is exhausted (Failed)."`
	// NextAttemptAt is when a Pending delivery is tried next.
	NextAttemptAt *time.Time       `json:"nextAttemptAt"`
	CreatedAt     time.Time        `json:"createdAt"`
	CompletedAt   *time.Time       `json:"completedAt"`
	Attempts      []WebhookAttempt `json:"attempts"`
}

// WebhookAttempt is one HTTP request of a delivery.
type WebhookAttempt struct {
	Number      int       `json:"number"`
	AttemptedAt time.Time `json:"attemptedAt"`
	// StatusCode is the endpoint's answer; null when none came (timeout,
	// refused connection).
	StatusCode *int   `json:"statusCode"`
	LatencyMs  int64  `json:"latencyMs"`
	Error      string `json:"error"`
}

// DeliveryFilter narrows ListWebhookDeliveries; zero fields do not filter.
type DeliveryFilter struct {
	Status string
}

// ListWebhookDeliveries returns one page of a registration's deliveries,
// oldest first, each with its attempts; ErrNotFound when the registration
// is not the tenant's.
func (s *Store) ListWebhookDeliveries(ctx context.Context, webhookID string, f DeliveryFilter, p Page) ([]WebhookDelivery, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	var out []WebhookDelivery
	err = s.readTx(ctx, func(q queryer) error {
		var one int
		if err := q.QueryRowContext(ctx, `SELECT 1 FROM webhooks WHERE tenant_id = $1 AND id = $2`, tenant, webhookID).Scan(&one); err != nil {
			return notFound(err)
		}
		fl := tenantFilter(tenant)
		fl.add("webhook_id = ?", webhookID)
		if f.Status != "" {
			fl.add("status = ?", f.Status)
		}
		tail := fl.page(p)
		var err error
		out, err = queryAll(ctx, q, func(row scanner) (WebhookDelivery, error) {
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
		}, `SELECT id, webhook_id, event_ids, status, next_attempt_at, created_at, completed_at FROM webhook_deliveries`+fl.where()+tail, fl.args...)
		if err != nil || len(out) == 0 {
			return err
		}
		byID := map[string]*WebhookDelivery{}
		ids := make([]string, len(out))
		for i := range out {
			byID[out[i].ID] = &out[i]
			ids[i] = out[i].ID
		}
		list, args := inList(ids, 1)
		rows, err := q.QueryContext(ctx, `SELECT delivery_id, number, attempted_at, status_code, latency_ms, error
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
		return nil, "", fmt.Errorf("store: list deliveries of webhook %s: %w", webhookID, err)
	}
	out, next := trimPage(out, p, func(d WebhookDelivery) string { return d.ID })
	return out, next, nil
}

// RedeliverWebhookDelivery queues a delivery again, due at now, whatever its
// status; its retry schedule starts over. The webhook-id stays the same, so
// receivers that deduplicate by it see a replay.
func (s *Store) RedeliverWebhookDelivery(ctx context.Context, webhookID, deliveryID string, now time.Time) error {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	res, err := s.w.ExecContext(ctx, `UPDATE webhook_deliveries SET status = $4, next_attempt_at = $5, retry_base = attempts,
		completed_at = NULL WHERE tenant_id = $1 AND webhook_id = $2 AND id = $3`,
		tenant, webhookID, deliveryID, DeliveryPending, ts(now))
	if err != nil {
		return fmt.Errorf("store: redeliver %s: %w", deliveryID, err)
	}
	if err := oneRow(res); err != nil {
		return err
	}
	s.notifyEvents()
	return nil
}

// OnEvents sets fn to be called after every transaction that recorded
// events commits, and after a redelivery is queued, so the webhook
// dispatcher of this process wakes at once instead of at its next poll. fn
// must not block.
func (s *Store) OnEvents(fn func()) {
	if fn == nil {
		s.onEvents.Store(nil)
		return
	}
	s.onEvents.Store(&fn)
}

func (s *Store) notifyEvents() {
	if hook := s.onEvents.Load(); hook != nil {
		(*hook)()
	}
}

// The dispatcher's side. These methods work across tenants: the dispatcher
// serves every tenant, and each row carries its tenant.

// DeliveryJob is a claimed attempt of a delivery, with what sending it
// needs.
type DeliveryJob struct {
	ID        string
	TenantID  string
	WebhookID string
	// Attempt is the number of this attempt (1 for the first), RetryBase
	// the attempts made before the last redelivery.
	Attempt, RetryBase int
	URL                string
	Format             string
	Secret             string
	// Events are the events of the message, in order.
	Events []Event
}

// DeliveryResult is the outcome of a DeliveryJob.
type DeliveryResult struct {
	ID      string
	Attempt int
	At      time.Time
	// StatusCode is 0 when no answer came.
	StatusCode int
	Latency    time.Duration
	Error      string
	Delivered  bool
	// NextAt is when to try again after a failure; nil makes the delivery
	// Failed.
	NextAt *time.Time
}

// forUpdate makes a claiming SELECT skip rows other processes are claiming
// (PostgreSQL); SQLite has a single writer, so there is nothing to skip.
func (s *Store) forUpdate(of string) string {
	if s.engine != Postgres {
		return ""
	}
	if of != "" {
		return " FOR UPDATE OF " + of + " SKIP LOCKED"
	}
	return " FOR UPDATE SKIP LOCKED"
}

// inList is "($first, $first+1, …)" for ids, padded to a power of two by
// repeating the last id (which changes no result) so that a few statement
// texts serve every list length.
func inList(ids []string, first int) (string, []any) {
	size := 1
	for size < len(ids) {
		size *= 2
	}
	var b strings.Builder
	args := make([]any, size)
	b.WriteByte('(')
	for i := range size {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(first + i))
		args[i] = ids[min(i, len(ids)-1)]
	}
	b.WriteByte(')')
	return b.String(), args
}

// DispatchEvents relays up to limit undispatched events (any tenant) from
// the outbox to their consumers, and clears their outbox mark, in one
// transaction: deliveries for every Validated webhook registration of their
// tenant that subscribes to their kind, and a job for every registered
// outbox consumer that takes their kind (relayToConsumers). A
// registration in the EventGrid format gets the events in deliveries of up
// to batch events each, one message each; CloudEvents
// registrations get one delivery per event. Up to claim of the new
// deliveries are claimed for this process at once (first attempt, leased
// until leaseUntil) and returned as jobs; the rest are due now for any
// process. It reports how many events it took.
func (s *Store) DispatchEvents(ctx context.Context, now, leaseUntil time.Time, limit, claim, batch int) (int, []DeliveryJob, error) {
	var (
		events       []Event
		tenant       []string
		jobs         []DeliveryJob
		consumerJobs bool
		unclaimed    bool
	)
	err := s.inTx(ctx, func(t *sql.Tx) error {
		tx := &Tx{tx: t, s: s}
		events, tenant = events[:0], tenant[:0]
		consumerJobs, unclaimed = false, false
		err := tx.queryEach(ctx, `SELECT id, tenant_id, event_type, subject, data, event_time, created_at FROM events
			WHERE dispatch_pending IS NOT NULL ORDER BY id LIMIT $1`+s.forUpdate(""), []any{limit}, func(rows *sql.Rows) error {
			var (
				e    Event
				ten  string
				data string
			)
			if err := rows.Scan(&e.ID, &ten, &e.EventType, &e.Subject, &data, &e.EventTime, &e.CreatedAt); err != nil {
				return err
			}
			e.Data = json.RawMessage(data)
			e.EventTime, e.CreatedAt = e.EventTime.UTC(), e.CreatedAt.UTC()
			events = append(events, e)
			tenant = append(tenant, ten)
			return nil
		})
		if err != nil || len(events) == 0 {
			return err
		}
		hooks, err := validatedWebhooks(ctx, tx, tenant)
		if err != nil {
			return err
		}
		n, err := relayToConsumers(ctx, tx, events, tenant, now)
		if err != nil {
			return err
		}
		consumerJobs = n > 0
		ids := make([]string, len(events))
		// The events of each registration, in id order.
		type target struct {
			h      hookTarget
			tenant string
			events []Event
		}
		var targets []*target
		byHook := map[string]*target{}
		for i, e := range events {
			ids[i] = e.ID
			for _, h := range hooks[tenant[i]] {
				if !h.kinds[e.EventType] {
					continue
				}
				tg := byHook[h.id]
				if tg == nil {
					tg = &target{h: h, tenant: tenant[i]}
					byHook[h.id] = tg
					targets = append(targets, tg)
				}
				tg.events = append(tg.events, e)
			}
		}
		var rows [][]any
		jobs = jobs[:0]
		for _, tg := range targets {
			size := max(1, batch)
			if tg.h.format != "EventGrid" {
				size = 1
			}
			for evs := range slices.Chunk(tg.events, size) {
				eventIDs := make([]string, len(evs))
				for i, e := range evs {
					eventIDs[i] = e.ID
				}
				list, err := json.Marshal(eventIDs)
				if err != nil {
					return err
				}
				id := NewID()
				if len(jobs) < claim {
					rows = append(rows, []any{id, tg.tenant, tg.h.id, string(list), DeliveryPending, 1, ts(leaseUntil), ts(now)})
					jobs = append(jobs, DeliveryJob{ID: id, TenantID: tg.tenant, WebhookID: tg.h.id, Attempt: 1,
						URL: tg.h.url, Format: tg.h.format, Secret: tg.h.secret, Events: evs})
				} else {
					rows = append(rows, []any{id, tg.tenant, tg.h.id, string(list), DeliveryPending, 0, ts(now), ts(now)})
					unclaimed = true
				}
			}
		}
		if len(rows) > 0 {
			if err := tx.insertRows(ctx, "webhook_deliveries", `id, tenant_id, webhook_id, event_ids, status,
				attempts, next_attempt_at, created_at`, rows, ``); err != nil {
				return err
			}
		}
		for len(ids) > 0 {
			n := min(len(ids), maxChunk)
			list, args := inList(ids[:n], 1)
			if _, err := tx.exec(ctx, `UPDATE events SET dispatch_pending = NULL WHERE id IN `+list, args...); err != nil {
				return err
			}
			ids = ids[n:]
		}
		return nil
	})
	if err != nil {
		return 0, nil, fmt.Errorf("store: dispatch events: %w", err)
	}
	// Wake whoever has new work in this process: the other consumers'
	// runner, and the webhook dispatcher when the caller claimed none of the
	// deliveries it made (the consumers' runner relayed; a dispatcher that
	// was out of slots looks again by itself).
	if consumerJobs {
		s.notifyJobs()
	}
	if unclaimed && claim == 0 {
		s.notifyEvents()
	}
	return len(events), jobs, nil
}

type hookTarget struct {
	id, url, format, secret string
	kinds                   map[string]bool
}

// validatedWebhooks returns the Validated registrations of the tenants, by
// tenant.
func validatedWebhooks(ctx context.Context, tx *Tx, tenants []string) (map[string][]hookTarget, error) {
	seen := map[string]bool{}
	var distinct []string
	for _, t := range tenants {
		if !seen[t] {
			seen[t] = true
			distinct = append(distinct, t)
		}
	}
	// The registrations are locked against deletion until the fan-out
	// commits (PostgreSQL; SQLite's write transaction excludes every other
	// writer): read unlocked, one deleted meanwhile failed the whole
	// fan-out on its deliveries' foreign key, again for as long as
	// deletions kept racing it. A deletion waits for the fan-out and
	// takes the deliveries it made along; one that committed first is
	// not read.
	lock := ""
	if tx.s.engine == Postgres {
		lock = " FOR KEY SHARE"
	}
	out := map[string][]hookTarget{}
	for len(distinct) > 0 {
		n := min(len(distinct), maxChunk)
		list, args := inList(distinct[:n], 2)
		err := tx.queryEach(ctx, `SELECT tenant_id, id, url, format, secret, event_types FROM webhooks
			WHERE status = $1 AND tenant_id IN `+list+lock, append([]any{WebhookValidated}, args...), func(rows *sql.Rows) error {
			var (
				ten, kinds string
				h          hookTarget
				list       []string
			)
			if err := rows.Scan(&ten, &h.id, &h.url, &h.format, &h.secret, &kinds); err != nil {
				return err
			}
			if err := json.Unmarshal([]byte(kinds), &list); err != nil {
				return fmt.Errorf("event types of webhook %s: %w", h.id, err)
			}
			h.kinds = map[string]bool{}
			for _, k := range list {
				h.kinds[k] = true
			}
			out[ten] = append(out[ten], h)
			return nil
		})
		if err != nil {
			return nil, err
		}
		distinct = distinct[n:]
	}
	return out, nil
}

// ClaimDeliveries claims up to limit due Pending deliveries of Validated
// registrations (retries, redeliveries, and first attempts no process
// claimed at fan-out) for this process until leaseUntil, counting the
// attempt. On PostgreSQL concurrent claimers skip each other's rows, so
// each attempt is made by one process; a process that dies holding a claim
// only delays the delivery until the lease ends.
func (s *Store) ClaimDeliveries(ctx context.Context, now, leaseUntil time.Time, limit int) ([]DeliveryJob, error) {
	var jobs []DeliveryJob
	err := s.inTx(ctx, func(t *sql.Tx) error {
		tx := &Tx{tx: t, s: s}
		jobs = jobs[:0]
		var ids []string
		// 'Pending' is a literal so that the planners can use the partial
		// index of due deliveries.
		err := tx.queryEach(ctx, `UPDATE webhook_deliveries SET attempts = attempts + 1, next_attempt_at = $1
			WHERE id IN (SELECT d.id FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
				WHERE d.status = 'Pending' AND d.next_attempt_at <= $2 AND w.status = 'Validated'
				ORDER BY d.next_attempt_at LIMIT $3`+s.forUpdate("d")+`)
			RETURNING id`, []any{ts(leaseUntil), ts(now), limit}, func(rows *sql.Rows) error {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			ids = append(ids, id)
			return nil
		})
		if err != nil || len(ids) == 0 {
			return err
		}
		list, args := inList(ids, 1)
		var eventIDs [][]string
		err = tx.queryEach(ctx, `SELECT d.id, d.tenant_id, d.webhook_id, d.attempts, d.retry_base, w.url, w.format, w.secret, d.event_ids
			FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE d.id IN `+list, args, func(rows *sql.Rows) error {
			var (
				j      DeliveryJob
				events string
				list   []string
			)
			if err := rows.Scan(&j.ID, &j.TenantID, &j.WebhookID, &j.Attempt, &j.RetryBase, &j.URL, &j.Format, &j.Secret, &events); err != nil {
				return err
			}
			if err := json.Unmarshal([]byte(events), &list); err != nil {
				return fmt.Errorf("events of delivery %s: %w", j.ID, err)
			}
			jobs = append(jobs, j)
			eventIDs = append(eventIDs, list)
			return nil
		})
		if err != nil {
			return err
		}
		var all []string
		for _, l := range eventIDs {
			all = append(all, l...)
		}
		byID, err := tx.eventsByID(ctx, all)
		if err != nil {
			return err
		}
		for i := range jobs {
			for _, id := range eventIDs[i] {
				if e, ok := byID[id]; ok {
					jobs[i].Events = append(jobs[i].Events, e)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: claim deliveries: %w", err)
	}
	return jobs, nil
}

// CompleteDeliveries records the outcomes of attempts: every attempt in the
// log; a success makes its delivery Delivered; a failure schedules the next
// attempt or makes it Failed, unless the delivery moved on meanwhile (its
// claim lapsed and a later attempt exists, or it was delivered).
func (s *Store) CompleteDeliveries(ctx context.Context, results []DeliveryResult) error {
	if len(results) == 0 {
		return nil
	}
	err := s.inTx(ctx, func(t *sql.Tx) error {
		tx := &Tx{tx: t, s: s}
		// A delivery whose registration was deleted while its attempt was
		// in flight went with it: its outcome has nothing to be recorded
		// on, and recording it would fail the whole batch on the attempts'
		// foreign key (the other deliveries' outcomes lost, each sent again
		// when its lease lapsed). Only outcomes of deliveries that exist
		// are recorded; the rows are locked (PostgreSQL) so that a delete
		// cannot take them between this check and the writes.
		live, err := existingDeliveries(ctx, tx, results)
		if err != nil {
			return err
		}
		attempts := make([][]any, 0, len(results))
		var delivered []string
		var deliveredAt time.Time
		for _, r := range results {
			if !live[r.ID] {
				continue
			}
			var code any
			if r.StatusCode != 0 {
				code = r.StatusCode
			}
			attempts = append(attempts, []any{r.ID, r.Attempt, ts(r.At), code, r.Latency.Milliseconds(), r.Error})
			if r.Delivered {
				delivered = append(delivered, r.ID)
				deliveredAt = later(deliveredAt, r.At.Add(r.Latency))
				continue
			}
			status, next, completed := DeliveryPending, any(nil), any(nil)
			if r.NextAt != nil {
				next = ts(*r.NextAt)
			} else {
				status, completed = DeliveryFailed, ts(r.At.Add(r.Latency))
			}
			if _, err := tx.exec(ctx, `UPDATE webhook_deliveries SET status = $3, next_attempt_at = $4, completed_at = $5
				WHERE id = $1 AND attempts = $2 AND status = 'Pending'`,
				r.ID, r.Attempt, status, next, completed); err != nil {
				return err
			}
		}
		if len(attempts) == 0 {
			return nil
		}
		if err := tx.insertRows(ctx, "webhook_attempts", `delivery_id, number, attempted_at, status_code,
			latency_ms, error`, attempts, `ON CONFLICT DO NOTHING`); err != nil {
			return err
		}
		for len(delivered) > 0 {
			n := min(len(delivered), maxChunk)
			list, args := inList(delivered[:n], 3)
			if _, err := tx.exec(ctx, `UPDATE webhook_deliveries SET status = $1, next_attempt_at = NULL, completed_at = $2
				WHERE id IN `+list, append([]any{DeliveryDelivered, ts(deliveredAt)}, args...)...); err != nil {
				return err
			}
			delivered = delivered[n:]
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: complete deliveries: %w", err)
	}
	return nil
}

// existingDeliveries returns which of the results' deliveries still
// exist, locking them against deletion until tx ends on PostgreSQL (on
// SQLite the write transaction excludes every other writer).
func existingDeliveries(ctx context.Context, tx *Tx, results []DeliveryResult) (map[string]bool, error) {
	seen := map[string]bool{}
	var ids []string
	for _, r := range results {
		if !seen[r.ID] {
			seen[r.ID] = true
			ids = append(ids, r.ID)
		}
	}
	lock := ""
	if tx.s.engine == Postgres {
		lock = " FOR KEY SHARE"
	}
	live := map[string]bool{}
	for len(ids) > 0 {
		n := min(len(ids), maxChunk)
		list, args := inList(ids[:n], 1)
		err := tx.queryEach(ctx, `SELECT id FROM webhook_deliveries WHERE id IN `+list+lock, args, func(rows *sql.Rows) error {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			live[id] = true
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("deliveries still there: %w", err)
		}
		ids = ids[n:]
	}
	return live, nil
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// HasDispatchWork reports, from the read pool, whether events wait to be
// fanned out and whether deliveries are due: an idle dispatcher checks this
// instead of opening a write transaction (on SQLite, the one writer).
func (s *Store) HasDispatchWork(ctx context.Context, now time.Time) (events, due bool, err error) {
	var one int
	err = s.readRow(ctx, `SELECT 1 FROM events WHERE dispatch_pending IS NOT NULL LIMIT 1`).Scan(&one)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return false, false, fmt.Errorf("store: look for events to dispatch: %w", err)
	}
	events = err == nil
	// 'Pending' is a literal so that the planners can use the partial index.
	err = s.readRow(ctx, `SELECT 1 FROM webhook_deliveries WHERE status = 'Pending' AND next_attempt_at <= $1 LIMIT 1`,
		ts(now)).Scan(&one)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return false, false, fmt.Errorf("store: look for due deliveries: %w", err)
	}
	return events, err == nil, nil
}
