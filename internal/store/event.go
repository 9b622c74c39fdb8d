package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/tenancy"
)

// Event records that something happened to a resource. Events are written
// in the transaction of the change they describe, so a rolled-back change
// leaves none and a committed one always has its events (the outbox that
// webhook delivery reads).
type Event struct {
	ID        string `json:"id"`
	EventType string `json:"eventType"`
	// Subject is the resource path, e.g. /subscription/{id}.
	Subject string          `json:"subject"`
	Data    json.RawMessage `json:"data"`
	// EventTime is business time: when it happened on the tenant's clock.
	EventTime time.Time `json:"eventTime"`
	CreatedAt time.Time `json:"createdAt"`
}

// AddEvent records an event of kind eventType about subject, carrying data
// (marshalled to JSON), at business time at.
func (tx *Tx) AddEvent(ctx context.Context, eventType, subject string, data any, at time.Time) error {
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("store: encode %s event: %w", eventType, err)
	}
	_, err = tx.exec(ctx,
		`INSERT INTO events (id, tenant_id, event_type, subject, data, event_time, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		NewID(), tx.tenant, eventType, subject, string(b), ts(at), ts(time.Now()))
	if err != nil {
		return fmt.Errorf("store: add %s event: %w", eventType, err)
	}
	tx.events = true
	return nil
}

// NewEvent is one event of AddEvents.
type NewEvent struct {
	Type    string
	Subject string
	Data    any
	At      time.Time
}

// AddEvents records events, in order, with multi-row inserts.
func (tx *Tx) AddEvents(ctx context.Context, events []NewEvent) error {
	if len(events) == 0 {
		return nil
	}
	created := ts(time.Now())
	rows := make([][]any, len(events))
	for i, e := range events {
		b, err := json.Marshal(e.Data)
		if err != nil {
			return fmt.Errorf("store: encode %s event: %w", e.Type, err)
		}
		rows[i] = []any{NewID(), tx.tenant, e.Type, e.Subject, string(b), ts(e.At), created}
	}
	if err := tx.insertRows(ctx, "events", `id, tenant_id, event_type, subject, data, event_time, created_at`, rows, ``); err != nil {
		return fmt.Errorf("store: add %s events: %w", events[0].Type, err)
	}
	tx.events = true
	return nil
}

// EventFilter narrows ListEvents; zero fields do not filter.
type EventFilter struct {
	EventType string
	Subject   string
}

// ListEvents returns one page of the tenant's events, oldest first.
func (s *Store) ListEvents(ctx context.Context, f EventFilter, p Page) ([]Event, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	q := tenantFilter(tenant)
	if f.EventType != "" {
		q.add("event_type = ?", f.EventType)
	}
	if f.Subject != "" {
		q.add("subject = ?", f.Subject)
	}
	tail := q.page(p)
	rows, err := s.r.QueryContext(ctx, `SELECT id, event_type, subject, data, event_time, created_at FROM events`+q.where()+tail, q.args...)
	if err != nil {
		return nil, "", fmt.Errorf("store: list events: %w", err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var (
			e    Event
			data string
		)
		if err := rows.Scan(&e.ID, &e.EventType, &e.Subject, &data, &e.EventTime, &e.CreatedAt); err != nil {
			return nil, "", fmt.Errorf("store: list events: %w", err)
		}
		e.Data = json.RawMessage(data)
		e.EventTime, e.CreatedAt = e.EventTime.UTC(), e.CreatedAt.UTC()
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("store: list events: %w", err)
	}
	out, next := trimPage(out, p, func(e Event) string { return e.ID })
	return out, next, nil
}

// Events about what a subscriber user may use (docs/WEBHOOKS.md), the
// counterparts of INFO-Subscription's UserAuthorizationGranted and
// UserAuthorizationRevoked. They are recorded by the identity wing
// (internal/subscriberuser, AddUserAuthorizationEvent)
// in the transaction of the change that gives or takes the access: an
// account source created or deleted, a user linked to or unlinked from a
// subscriber.
const (
	EventUserAuthorizationGranted = "UserAuthorizationGranted"
	EventUserAuthorizationRevoked = "UserAuthorizationRevoked"
)

// Events of Peppol deliveries (internal/peppol), written in the transaction
// of the change.
const (
	EventPeppolDeliveryPending   = "PeppolDeliveryPending"
	EventPeppolDeliverySent      = "PeppolDeliverySent"
	EventPeppolDeliveryDelivered = "PeppolDeliveryDelivered"
	EventPeppolDeliveryFailed    = "PeppolDeliveryFailed"
)
